# SPDX-License-Identifier: GPL-2.0
# The traffic gate of claim 10 (kmod/pf_traffic.c), sourced by hub.sh and
# run at its end (gate_checks) with its helpers (check, peer_sh, fresh,
# digest) and variables (dfg, dir, opts, want, ko; xp, the transport of
# its last pass: dfg_$xp.ko): the module's monitor
# of the link to node1 (eth0) against a known transfer, its sysfs, the
# speculative R3 of `dfg graph sample --rules all` issued on a quiet link
# and gated under the threshold 0 and under real load (a ping flood), the
# batches equal to the files' in every case, a sampler killed with R3 in
# flight, the events and the tracepoint, and a peer whose link device is
# deleted (node1 is reached through a VLAN on eth0 for this).
pf=/sys/kernel/dfg/prefetch

# tfield N: field N of peer 0's line of prefetch/traffic (2 ifindex,
# 3 ifname, 4 bytes/s, 5 bytes, 6 state, 7 spec_issued, 8 spec_gated).
tfield() {
	awk -v n="$1" '$1 == 0 { print $n }' "$pf/traffic"
}

# sfield NAME OUT: the number after NAME in dfg graph sample's OUT.
sfield() {
	grep -o "\<$1 [0-9]*" <<<"$2" | head -n 1 | cut -d' ' -f2
}

# within SECS CMD...: CMD succeeds within SECS seconds (a condition
# polled, whatever TCG does to the loop's pace).
within() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

# is_state STATE, is_dev NAME: peer 0's link state, device name.
is_state() {
	[ "$(tfield 6)" = "$1" ]
}
is_dev() {
	[ "$(tfield 3)" = "$1" ]
}

# wait_state STATE: peer 0's link in STATE within 20 s.
wait_state() {
	within 20 is_state "$1" || {
		echo "state $(tfield 6), want $1"
		return 1
	}
}

# gate_trace: the monitor's tracepoint fires for peer 0's samples.
gate_trace() {
	local t=/sys/kernel/tracing e=events/dfg/dfg_pf_traffic
	[ -d $t/events ] || mount -t tracefs tracefs $t || return 1
	echo >$t/trace
	echo 1 >$t/$e/enable || return 1
	sleep 0.5
	echo 0 >$t/$e/enable
	grep "dfg_pf_traffic: peer=0 ifindex=$(tfield 2) " $t/trace | head -n 2
	grep -q "dfg_pf_traffic: peer=0 ifindex=$(tfield 2) " $t/trace
}

# idle: nothing in flight, nothing parked.
idle() {
	[ "$(cat $pf/inflight)" = 0 ] &&
		[ "$(cat /sys/kernel/dfg/parked)" = 0 ]
}

# gate_sample NAME [OPT...]: a sample run with every rule (OPTs after
# hub.sh's), its output in $out, checked against the files' batches.
gate_sample() {
	local name=$1 want_d=$want
	shift
	[ $# = 0 ] || want_d=$(digest "$dfg" graph sample --files \
		"${opts[@]}" "$@" "$dir/p.0.dfgg" "$dir/p.1.dfgg")
	out=$("$dfg" graph sample "${opts[@]}" "$@" --rules all \
		"$dir/p.0.dfgg")
	echo "$out" | sed 's/^/# /'
	check "gate: $name: the files' batches" \
		test "$(sed -n 's/^digest //p' <<<"$out")" = "$want_d"
}

# A known transfer over the link: 20 pings of 60000 bytes, flooded (not
# ssh: its ciphers crawl under TCG); echo and reply both cross it.
gate_transfer() {
	local b0 b1 t1 t2 sp tx rx n st
	b0=$(tfield 5)
	(while :; do tfield 4; sleep 0.1; done >"$dir/rates") &
	sp=$!
	t1=$(date +%s.%N)
	st=$(ping -q -f -c 20 -s 60000 -w 60 $vpeer | sed -n \
		's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1 \2/p')
	t2=$(date +%s.%N)
	# Two samples at least after the end (100 ms each, late under TCG).
	sleep 1
	kill $sp
	wait $sp 2>/dev/null
	b1=$(tfield 5)
	read -r tx rx <<<"$st"
	n=$(((${tx:-0} + ${rx:-0}) * 60008))
	# The ICMP payloads, plus the IP and Ethernet headers of their
	# fragments (41 a datagram) and whatever else crossed meanwhile.
	check "gate: link bytes of $tx + $rx pings of 60000 bytes ($((b1 - b0)), payload $n)" \
		test "$n" -gt 0 -a $((b1 - b0)) -ge "$n" -a \
		$((b1 - b0)) -le $((n * 5 / 4 + 262144))
	# The smoothed rate's peak against the transfer: at least a 16th of
	# its mean (the EWMA's weight 1/4, a shell sampler late by two
	# periods), at most what all its bytes in 0.3 s would give (a rate
	# comes from >= 100 ms, and weighs 1/4): units, not timing.
	check "gate: bytes/s of the transfer" awk -v n=$((b1 - b0)) \
		-v t1="$t1" -v t2="$t2" -v f="$dir/rates" 'BEGIN {
		while ((getline r < f) > 0) if (r + 0 > p) p = r + 0
		m = n / (t2 - t1)
		printf "# peak %d B/s, mean %d B/s\n", p, m
		exit !(p >= m / 16 && p <= n / 0.3) }'
}

# bad_values: every malformed setting refused, the settings unchanged
# (the defaults: 64 MiB/s, 100 ms).
bad_values() {
	local v
	for v in abc -1 1.5 '' 18446744073709551616; do
		echo "$v" >"$pf/traffic_threshold" 2>/dev/null &&
			{ echo "threshold '$v' taken"; return 1; }
	done
	for v in 0 9 10001 x; do
		echo "$v" >"$pf/traffic_interval_ms" 2>/dev/null &&
			{ echo "interval '$v' taken"; return 1; }
	done
	[ "$(cat $pf/traffic_threshold) $(cat $pf/traffic_interval_ms)" = \
		"67108864 100" ]
}

# VLAN 7 on eth0 with 10.77.7.X/24: no other route covers it, so the
# peer's link is gone while the device is.
vlan_up() {
	modprobe 8021q && ip link add link eth0 name eth0.7 type vlan id 7 &&
		ip link set eth0.7 up && ip addr add 10.77.7.$1/24 dev eth0.7
}

# node1 (its transport unloaded by hub.sh) serves again, both nodes on
# the VLAN.
gate_serve1() {
	vlan_up 10 &&
		peer_sh "$(declare -f vlan_up); vlan_up 11 &&
			insmod ${ko%/*}/dfg_$xp.ko &&
			$dfg graph serve $dir/p.1.dfgg" &&
		ping -c 1 -w 30 $vpeer
}

# node0's modules reloaded (an empty cache), serving partition 0 with
# node1 through the VLAN.
gate_serve0() {
	rmmod dfg_$xp && rmmod dfg && insmod "$ko" &&
		insmod "${ko%/*}/dfg_$xp.ko" &&
		"$dfg" graph serve --peer $vpeer "$dir/p.0.dfgg"
}

gate_checks() {
	local t0=$SECONDS i0 g0 mp lp vpeer=10.77.7.11

	# node0 reaches node1 through a VLAN, whose device can go.
	check "gate: node1 serves partition 1 again, VLAN on both nodes" \
		gate_serve1
	check "gate: node0 serves partition 0, peer through the VLAN" \
		gate_serve0
	check "gate: only root writes the threshold (0644)" \
		test "$(stat -c %a $pf/traffic_threshold)" = 644
	check "gate: bad threshold and interval refused" bad_values
	check "gate: node1's link is eth0.7, quiet" \
		test "$(tfield 3) $(tfield 6)" = "eth0.7 quiet"
	check "gate: tracepoint dfg_pf_traffic" gate_trace
	gate_transfer

	# A quiet link: R3 issued (its batches: the rules loop above).
	"$dfg" graph sample --fanout 10,5 --batch 32 --batches 2 --seed 7 \
		--rules all "$dir/p.0.dfgg" >/dev/null
	check "gate: quiet link: R3 issued, nothing gated" test \
		"$(tfield 7)" -gt 0 -a "$(tfield 8)" = 0 -a \
		"$(cat $pf/spec_issued)" = "$(tfield 7)"
	# A sampler killed with R3 requests in flight leaves none behind.
	"$dfg" graph sample --fanout 10,5 --batch 32 --batches 100000 \
		--seed 11 --rules all "$dir/p.0.dfgg" >/dev/null &
	sleep 1.5
	kill -9 $!
	wait $! 2>/dev/null
	check "gate: sampler killed: no read in flight, nothing parked" \
		within 20 idle
	# The killed sampler's batches (as many as 1.5 s allow) brought
	# most of the graph into the cache, where the gated runs below would
	# find their nodes (hits are never gated): an empty cache again.
	check "gate: node0 serves again, empty cache" gate_serve0
	check "gate: node1's link quiet again" wait_state quiet

	# Threshold 0: no traffic is under it, every speculative read gated.
	"$BUILD/bin/dfgctl" monitor --timeout 120 >"$dir/ev" \
		2>"$dir/ev.err" &
	mp=$!
	check "gate: monitor listening" \
		within 20 grep -q listening "$dir/ev.err"
	echo 0 >"$pf/traffic_threshold"
	check "gate: threshold 0: busy at once" test "$(tfield 6)" = busy
	i0=$(tfield 7)
	g0=$(tfield 8)
	gate_sample "threshold 0"
	check "gate: threshold 0: R3 gated, none issued" test \
		"$(tfield 7)" = "$i0" -a "$(tfield 8)" -gt "$g0" -a \
		"$(cat $pf/spec_gated)" = "$(tfield 8)" -a \
		"$(sfield r3_gated "$out")" = $(($(tfield 8) - g0)) -a \
		"$(sfield r3_nodes "$out")" = 0
	echo 18446744073709551615 >"$pf/traffic_threshold"
	check "gate: no limit: quiet at once" test "$(tfield 6)" = quiet
	# The monitor writes each event as it comes (fflush).
	kill $mp
	wait $mp 2>/dev/null
	grep pf_link "$dir/ev" | sed 's/^/# /'
	check "gate: events: pf_link_busy then pf_link_quiet" test \
		"$(grep -o 'event=pf_link_[a-z]*' "$dir/ev" | tr '\n' ' ')" \
		= "event=pf_link_busy event=pf_link_quiet "

	# Real load on the link (20 pings of 8000 bytes a second: 320 kB/s,
	# light on the guest's CPU), a threshold it exceeds.
	echo 65536 >"$pf/traffic_threshold"
	ping -q -i 0.05 -s 8000 -w 300 $vpeer >/dev/null &
	lp=$!
	check "gate: load: the link turns busy" wait_state busy
	i0=$(tfield 7)
	g0=$(tfield 8)
	gate_sample "under load" --batches 2 --seed 9
	check "gate: under load: still busy after sampling" \
		test "$(tfield 6)" = busy
	check "gate: under load: R3 gated, none issued" test \
		"$(tfield 7)" = "$i0" -a "$(tfield 8)" -gt "$g0" -a \
		"$(sfield r3_gated "$out")" -gt 0
	kill $lp
	wait $lp 2>/dev/null
	check "gate: load gone: quiet again" wait_state quiet

	# The link's device goes: no route is left to node1's address.
	ip link del eth0.7
	check "gate: VLAN deleted: the link is gone, no device, no rate" \
		within 20 eval 'is_state gone && is_dev - && [ "$(tfield 4)" = 0 ]'
	check "gate: VLAN back" vlan_up 10
	check "gate: the link is eth0.7 again" \
		within 20 eval 'is_dev eth0.7 && is_state quiet'
	check "gate: rmmod with the peer's link gone and back" sh -c \
		"rmmod dfg_$xp && rmmod dfg"
	echo "# gate checks: $((SECONDS - t0)) s"
}
