# SPDX-License-Identifier: GPL-2.0
# The traffic gate of claim 10 (kmod/pf_traffic.c), sourced by hub.sh and
# run at its end (gate_checks) with its helpers (check, peer_sh, fresh,
# digest) and variables (dfg, dir, opts, want, ko): the module's monitor
# of the link to node1 (eth0) against a known transfer, its sysfs, the
# speculative R3 of `dfg graph sample --rules all` issued on a quiet link
# and gated under the threshold 0 and under real load, the batches equal
# to the files' in every case, a sampler killed with R3 in flight, the
# events, and a peer whose link device is deleted (a VLAN on eth0).
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

# wait_state STATE: peer 0's link in STATE within 30 s.
wait_state() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(tfield 6)" = "$1" ] && return 0
		sleep 0.1
	done
	echo "state $(tfield 6), want $1"
	return 1
}

# gate_sample: a sample run with every rule; its output in $out, checked
# against the files' batches.
gate_sample() {
	out=$("$dfg" graph sample "${opts[@]}" --rules all "$dir/p.0.dfgg")
	echo "$out" | sed 's/^/# /'
	check "gate: $1: the files' batches" \
		test "$(sed -n 's/^digest //p' <<<"$out")" = "$want"
}

# A known transfer over the link: node0 pushes 4 MiB to node1 over ssh.
gate_transfer() {
	local b0 b1 t1 t2 sp n=4194304
	b0=$(tfield 5)
	(while :; do tfield 4; sleep 0.1; done >"$dir/rates") &
	sp=$!
	t1=$(date +%s.%N)
	head -c $n /dev/zero | peer_sh "cat >/dev/null"
	t2=$(date +%s.%N)
	# Two samples at least after the end (100 ms each, late under TCG).
	sleep 1
	kill $sp
	wait $sp 2>/dev/null
	b1=$(tfield 5)
	# Payload plus TCP/IP, ssh framing and the acks coming back.
	check "gate: link bytes of a 4 MiB transfer ($((b1 - b0)))" \
		test $((b1 - b0)) -ge $n -a $((b1 - b0)) -le $((n * 3 / 2))
	# The smoothed rate's peak against the transfer's mean: the same
	# order (1/4 .. 10x): units, not timing, are what this checks.
	check "gate: bytes/s of the transfer" awk -v n=$n -v t1="$t1" \
		-v t2="$t2" -v f="$dir/rates" 'BEGIN {
		while ((getline r < f) > 0) if (r + 0 > p) p = r + 0
		m = n / (t2 - t1)
		printf "# peak %d B/s, mean %d B/s\n", p, m
		exit !(p >= m / 4 && p <= m * 10) }'
}

gate_checks() {
	local t0=$SECONDS out i0 g0 mp lp

	check "gate: node1 serves partition 1 again" peer_sh \
		"insmod ${ko%/*}/dfg_rdma.ko && $dfg graph serve $dir/p.1.dfgg"

	# A quiet link: the default threshold, R3 issued.
	check "gate: node0 serves partition 0, empty cache" fresh
	check "gate: threshold 64 MiB/s by default, root writes it" sh -c \
		"test \$(cat $pf/traffic_threshold) = 67108864 &&
		 test \$(stat -c %a $pf/traffic_threshold) = 644"
	for v in abc -1 1.5 '' 18446744073709551616; do
		check "gate: threshold '$v' refused" \
			sh -c "! echo '$v' >$pf/traffic_threshold"
	done
	for v in 0 9 10001 x; do
		check "gate: interval '$v' refused" \
			sh -c "! echo '$v' >$pf/traffic_interval_ms"
	done
	check "gate: threshold and interval unchanged" test \
		"$(cat $pf/traffic_threshold) $(cat $pf/traffic_interval_ms)" \
		= "67108864 100"
	check "gate: node1 through eth0, quiet" \
		test "$(tfield 3) $(tfield 6)" = "eth0 quiet"
	gate_transfer
	gate_sample "quiet link"
	check "gate: quiet link: R3 issued, nothing gated" test \
		"$(tfield 7)" -gt 0 -a "$(tfield 8)" = 0 -a \
		"$(cat $pf/spec_issued)" = "$(tfield 7)" -a \
		"$(sfield r3_nodes "$out")" -gt 0 -a \
		"$(sfield r3_gated "$out")" = 0
	# A sampler killed with R3 requests in flight leaves none behind.
	"$dfg" graph sample --fanout 10,5 --batch 32 --batches 100000 \
		--seed 11 --rules all "$dir/p.0.dfgg" >/dev/null &
	sleep 2
	kill -9 $!
	wait $! 2>/dev/null
	check "gate: sampler killed: no read in flight, nothing parked" sh -c \
		"for i in \$(seq 100); do
			test \$(cat $pf/inflight) = 0 &&
			test \$(cat /sys/kernel/dfg/parked) = 0 && exit 0
			sleep 0.1
		done; exit 1"

	# Threshold 0: no traffic is under it, every speculative read gated.
	check "gate: node0 serves partition 0, empty cache" fresh
	"$BUILD/bin/dfgctl" monitor --timeout 120 >"$dir/ev" \
		2>"$dir/ev.err" &
	mp=$!
	check "gate: monitor listening" sh -c \
		"for i in \$(seq 100); do
			grep -q listening '$dir/ev.err' && exit 0; sleep 0.1
		done; exit 1"
	echo 0 >"$pf/traffic_threshold"
	check "gate: threshold 0: busy at once" test "$(tfield 6)" = busy
	gate_sample "threshold 0"
	check "gate: threshold 0: R3 gated, none issued" test \
		"$(tfield 7)" = 0 -a "$(tfield 8)" -gt 0 -a \
		"$(cat $pf/spec_gated)" = "$(tfield 8)" -a \
		"$(sfield r3_gated "$out")" = "$(tfield 8)" -a \
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

	# Real load on the link, a threshold it exceeds: R3 gated.
	check "gate: node0 serves partition 0, empty cache" fresh
	echo 65536 >"$pf/traffic_threshold"
	# In a session of its own, ended as a whole (its process group).
	setsid sh -c "cat /dev/zero | ssh -o ControlPath=$ctl node1 \
		'cat >/dev/null'" &
	lp=$!
	check "gate: load: the link turns busy" wait_state busy
	i0=$(tfield 7)
	g0=$(tfield 8)
	gate_sample "under load"
	check "gate: under load: still busy after sampling" \
		test "$(tfield 6)" = busy
	check "gate: under load: R3 gated, none issued" test \
		"$(tfield 7)" = "$i0" -a "$(tfield 8)" -gt "$g0" -a \
		"$(sfield r3_gated "$out")" -gt 0
	kill -- -$lp
	wait $lp 2>/dev/null
	check "gate: load gone: quiet again" wait_state quiet

	# The peer's link device goes (a VLAN on eth0), and comes back.
	vlan="ip link add link eth0 name eth0.7 type vlan id 7 &&
		ip link set eth0.7 up"
	check "gate: VLAN 169.254.7.0/24 on both nodes" sh -c "
		$vlan && ip addr add 169.254.7.10/24 dev eth0.7 &&
		ssh -o ControlPath=$ctl node1 '$vlan &&
			ip addr add 169.254.7.11/24 dev eth0.7' &&
		ping -c 1 -w 30 169.254.7.11"
	check "gate: node1 added through the VLAN" sh -c \
		"rmmod dfg_rdma && rmmod dfg && insmod '$ko' &&
		 insmod '${ko%/*}/dfg_rdma.ko' &&
		 '$dfg' graph serve --peer 169.254.7.11 '$dir/p.0.dfgg'"
	check "gate: its link is eth0.7" test "$(tfield 3)" = eth0.7
	ip link del eth0.7
	check "gate: VLAN deleted: the link is gone" wait_state gone
	check "gate: gone: no device, no rate" \
		test "$(tfield 3) $(tfield 4)" = "- 0"
	check "gate: VLAN back: measured again" sh -c \
		"$vlan && ip addr add 169.254.7.10/24 dev eth0.7"
	check "gate: the link is back, eth0.7" sh -c \
		"for i in \$(seq 300); do
			test \"\$(awk '\$1 == 0 { print \$3 }' $pf/traffic)\" = \
				eth0.7 && exit 0
			sleep 0.1
		done; exit 1"
	check "gate: rmmod with the peer over the VLAN" sh -c \
		"rmmod dfg_rdma && rmmod dfg"
	echo "# gate checks: $((SECONDS - t0)) s"
}
