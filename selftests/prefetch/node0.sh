#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The prefetch checks on node0 of a two-node rig (selftests/prefetch/rig.sh):
# both nodes load a partition of pf_test's graph, node0 connects to node1
# over dfg_rdma.ko (loaded by dfg-vm) and prefetches node1's nodes; then
# node0's link goes down (bounded failure), comes back (the peer is added
# again), and both modules are unloaded with a live cache and live
# connections. One TAP line per check.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
pf=$BUILD/selftests/prefetch/pf_test
peer=node1
export PF_PEER=169.254.0.11
ctl=/run/pf-test-ssh
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

check "dfg_rdma.ko loaded on node0" test -d /sys/module/dfg_rdma
check "node1: dfg_rdma.ko loaded, partition 1 loads" \
	peer_sh "test -d /sys/module/dfg_rdma && $pf load 1"
check "prefetch transport is rdma" \
	grep -qx rdma /sys/kernel/dfg/prefetch/transport
"$pf" run setup
"$pf" run fetch

# The link goes down under node0's connection to node1.
ip link set eth0 down
"$pf" run dead 2100
ip link set eth0 up
# The link is usable again once node1 answers (a condition, not a retry).
check "link back up" ping -c 1 -w 60 "$PF_PEER"
"$pf" run back 2100

# node1's link goes down for 40 s (it brings it back by itself): node0
# sees nothing of it, its reads fail when RC's retries run out.
check "node1's link down for 40 s" peer_sh "setsid -f sh -c \
	'sleep 1; ip link set eth0 down; sleep 40; ip link set eth0 up' \
	</dev/null >/dev/null 2>&1"
# Once a ping goes unanswered, node1 is silent (at most 30 pings).
silent() {
	local i
	for ((i = 0; i < 30; i++)); do
		ping -c 1 -W 1 "$PF_PEER" >/dev/null || return 0
	done
	return 1
}
check "node1 no longer answers" silent
"$pf" run dead 2300
# node1 brings its link back 40 s after it took it down.
answers() {
	local i
	for ((i = 0; i < 90; i++)); do
		ping -c 1 -W 1 "$PF_PEER" >/dev/null && return 0
		sleep 1
	done
	return 1
}
check "node1 answers again" answers
"$pf" run back 2300

t0=$SECONDS
check "rmmod dfg_rdma with a live connection and cache" rmmod dfg_rdma
echo "# $((SECONDS - t0)) s"
check "transport gone from sysfs" \
	test -z "$(cat /sys/kernel/dfg/prefetch/transport)"
"$pf" run nodev
check "rmmod dfg with a loaded partition and a live cache" rmmod dfg
check "insmod dfg again: empty cache" sh -c \
	"insmod '$DFG_KO' && test \"\$(cat /sys/kernel/dfg/prefetch/hits)\" = 0"
check "node1: rmmod dfg_rdma while serving" peer_sh rmmod dfg_rdma
echo "# prefetch checks done"
