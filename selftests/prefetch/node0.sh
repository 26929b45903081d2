#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The prefetch checks on node0 of a two-node rig (selftests/prefetch/rig.sh),
# once per transport of DFG_PF_XPORTS (default rdma; rig.sh asks for "rdma
# tcp"), in one boot:
# both nodes load a partition of pf_test's graph, node0 connects to node1
# over the transport module (dfg_rdma.ko is loaded by dfg-vm; between
# passes both nodes unload one and load the next) and prefetches node1's
# nodes; then node0's link goes down (bounded failure), comes back (the
# peer is added again), and both modules are unloaded with a live cache
# and live connections. The rdma pass also plays bad peers against
# node1's dfg_rdma.ko with user-space verbs (pf_rdma_peer: bad lists, a
# connection flood, a peer that never takes an answer while node1's
# module is unloaded) and takes node1's link down for 40 s; the tcp pass
# instead plays bad clients against node1's dfg_tcp.ko and a peer that
# dies in the middle of an answer. One TAP line per check.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
pf=$BUILD/selftests/prefetch/pf_test
rpeer=$BUILD/selftests/prefetch/pf_rdma_peer
peer=node1
export PF_PEER=169.254.0.11
ctl=/run/pf-test-ssh
kodir=${DFG_KO%/*}
peer_sh() {
	ssh -o ControlMaster=auto -o ControlPath=$ctl -o ControlPersist=600 \
		"$peer" "$@"
}

# check NAME CMD...: CMD exits 0.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "ok - $name"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok - $name"
	fi
}

# Once a ping goes unanswered, node1 is silent (at most 30 pings).
silent() {
	local i
	for ((i = 0; i < 30; i++)); do
		ping -c 1 -W 1 "$PF_PEER" >/dev/null || return 0
	done
	return 1
}
# node1 answers pings again (at most 90 s).
answers() {
	local i
	for ((i = 0; i < 90; i++)); do
		ping -c 1 -W 1 "$PF_PEER" >/dev/null && return 0
		sleep 1
	done
	return 1
}

# mod_stat XP NAME: node1's dfg_XP.ko counter NAME.
mod_stat() {
	peer_sh cat "/sys/module/dfg_$1/stats/$2"
}
tcp_stat() {
	mod_stat tcp "$1"
}
rdma_stat() {
	mod_stat rdma "$1"
}

# conns_back N [XP]: node1's dfg_XP.ko (tcp) serves N connections again
# (within 20 s).
conns_back() {
	local i
	for ((i = 0; i < 20; i++)); do
		[ "$(mod_stat "${2:-tcp}" conns)" = "$1" ] && return 0
		sleep 1
	done
	return 1
}

# hostile: bad clients against node1's server, which drops and counts them
# and goes on serving node0's module.
hostile() {
	local d0 r0 max d1 r1
	d0=$(tcp_stat dropped) r0=$(tcp_stat refused)
	max=$(peer_sh cat /sys/module/dfg_tcp/parameters/max_conns)
	check "node1: stall_ms 2000 for the test" \
		peer_sh "echo 2000 > /sys/module/dfg_tcp/parameters/stall_ms"
	"$pf" run hostile "$max" 2000
	d1=$(tcp_stat dropped) r1=$(tcp_stat refused)
	check "node1 counted 11 dropped clients ($d0 -> $d1)" \
		test "$((d1 - d0))" -ge 11
	check "node1 counted refused connections ($r0 -> $r1)" \
		test "$((r1 - r0))" -gt 16
	check "node1 serves node0's connection alone again" conns_back 1
	peer_sh "echo 10000 > /sys/module/dfg_tcp/parameters/stall_ms"
}

# rdma_hostile: bad peers against node1's dfg_rdma.ko, which drops and
# counts them (or refuses them past max_conns) and goes on serving
# node0's module.
rdma_hostile() {
	local d0 d1 r0 r1 c0
	d0=$(rdma_stat dropped) r0=$(rdma_stat refused) c0=$(rdma_stat conns)
	"$rpeer" "$PF_PEER" 18515 lists
	d1=$(rdma_stat dropped)
	check "node1 counted 13 dropped peers ($d0 -> $d1)" \
		test "$((d1 - d0))" = 13
	check "node1: max_conns 4 for the test" \
		peer_sh "echo 4 > /sys/module/dfg_rdma/parameters/max_conns"
	"$rpeer" "$PF_PEER" 18515 flood 4
	r1=$(rdma_stat refused)
	check "node1 counted refused connections ($r0 -> $r1)" \
		test "$((r1 - r0))" -ge 1
	peer_sh "echo 64 > /sys/module/dfg_rdma/parameters/max_conns"
	check "node1 serves node0's connections alone again ($c0)" \
		conns_back "$c0" rdma
}

# pass XP: the checks over dfg_XP.ko.
pass() {
	local xp=$1 other
	other=$([ "$xp" = rdma ] && echo tcp || echo rdma)

	echo "# transport $xp"
	# One transport at a time: the other goes first (both nodes).
	if [ -d "/sys/module/dfg_$other" ]; then rmmod "dfg_$other"; fi
	if [ ! -d "/sys/module/dfg_$xp" ]; then insmod "$kodir/dfg_$xp.ko"; fi
	check "dfg_$xp.ko loaded on node0" test -d "/sys/module/dfg_$xp"
	check "dfg_$other.ko refused beside it" \
		sh -c "! insmod '$kodir/dfg_$other.ko' 2>/dev/null"
	check "node1: dfg_$xp.ko loaded, partition 1 loads" \
		peer_sh "{ ! test -d /sys/module/dfg_$other ||
			rmmod dfg_$other; } &&
			{ test -d /sys/module/dfg_$xp ||
			insmod '$kodir/dfg_$xp.ko'; } && $pf load 1"
	check "prefetch transport is $xp" \
		grep -qx "$xp" /sys/kernel/dfg/prefetch/transport
	"$pf" run setup
	# Bad peers first: node0's fetch then shows node1 still serves it.
	[ "$xp" = rdma ] && rdma_hostile
	"$pf" run fetch
	if [ "$xp" = tcp ]; then
		check "node0's dfg_tcp.ko says hello on IPv6 (::1)" bash -c \
			'exec 3<>/dev/tcp/::1/18515 && head -c 4 <&3 | grep -qx DFGT'
		hostile
	fi

	# The link goes down under node0's connection to node1.
	ip link set eth0 down
	"$pf" run dead 2100
	[ "$xp" = tcp ] && "$pf" run midread 2200
	ip link set eth0 up
	# The link is usable again once node1 answers (a condition, not a
	# retry).
	check "link back up" ping -c 1 -w 60 "$PF_PEER"
	"$pf" run back 2100

	if [ "$xp" = rdma ]; then
		# Bad lists (dfg_rdma.fault_list): node1 checks what it is
		# asked for against its image, drops us and counts it; our
		# batch in flight fails, and the peer can be added again.
		# Nodes 2600-2709 and 2800-2909: no other step reads them
		# (pf_test's gate reads 2501 and 2502).
		for f in 1 2; do
			d0=$(peer_sh cat /sys/module/dfg_rdma/stats/dropped)
			echo "$f" >/sys/module/dfg_rdma/parameters/fault_list
			"$pf" run dead $((2400 + 200 * f))
			d1=$(peer_sh cat /sys/module/dfg_rdma/stats/dropped)
			check "node1 dropped us for bad list $f ($d0 -> $d1)" \
				test "$((d1 - d0))" = 1
			"$pf" run back $((2400 + 200 * f))
		done
		# node1's link goes down for 40 s (it brings it back by
		# itself): node0 sees nothing of it, its reads fail when RC's
		# retries run out.
		check "node1's link down for 40 s" peer_sh "setsid -f sh -c \
			'sleep 1; ip link set eth0 down; sleep 40; ip link set eth0 up' \
			</dev/null >/dev/null 2>&1"
		check "node1 no longer answers" silent
		# Every read an RDMA READ (chains) from here to the next
		# connection's reads.
		echo 0 >/sys/module/dfg_rdma/parameters/pack_max
		"$pf" run dead 2300
		# node1 brings its link back 40 s after it took it down.
		check "node1 answers again" answers
		"$pf" run back 2300
		echo 16384 >/sys/module/dfg_rdma/parameters/pack_max
	fi

	if [ "$xp" = rdma ]; then
		# A peer of node1 that sent lists and takes no answer: node1's
		# answers wait (RNR) until its module goes, which must not wait
		# for them.
		local sp so
		so=$(mktemp)
		setsid "$rpeer" "$PF_PEER" 18515 stall 300 >"$so" 2>&1 &
		sp=$!
		check "a stalled peer sent its lists" bash -c \
			"for i in \$(seq 60); do grep -q '^ok - stall' '$so' && exit 0; sleep 1; done; cat '$so'; exit 1"
	fi
	t0=$SECONDS
	check "rmmod dfg_$xp with a live connection and cache" rmmod "dfg_$xp"
	echo "# $((SECONDS - t0)) s"
	check "transport gone from sysfs" \
		test -z "$(cat /sys/kernel/dfg/prefetch/transport)"
	"$pf" run nodev
	check "rmmod dfg with a loaded partition and a live cache" rmmod dfg
	check "insmod dfg again: empty cache" sh -c \
		"insmod '$DFG_KO' && test \"\$(cat /sys/kernel/dfg/prefetch/hits)\" = 0"
	t0=$SECONDS
	check "node1: rmmod dfg_$xp while serving" peer_sh rmmod "dfg_$xp"
	if [ "$xp" = rdma ]; then
		check "... with a stalled peer, within 30 s ($((SECONDS - t0)) s)" \
			test $((SECONDS - t0)) -le 30
		kill "$sp" 2>/dev/null
		wait "$sp" 2>/dev/null
		rm -f "$so"
	fi
	if [ "$xp" = tcp ]; then
		# PEER_ADD's connection errors, node0's module serving nothing.
		check "insmod dfg_tcp, no partition" insmod "$kodir/dfg_tcp.ko"
		"$pf" run refused
		check "rmmod dfg_tcp" rmmod dfg_tcp
	fi
}

for xp in ${DFG_PF_XPORTS:-rdma}; do
	t_pass=$SECONDS
	pass "$xp"
	echo "# transport $xp: $((SECONDS - t_pass)) s"
done
echo "# prefetch checks done"
