#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The access engine (libdfg/hub/, dfg graph serve | sample) on node0 of a
# two-node rig (selftests/prefetch/rig.sh): a small R-MAT graph
# partitioned K=2, partition 1 served by node1, partition 0 by node0,
# which samples mini-batches through its module (PREFETCH over the
# transport module for node1's nodes). The batches' digest must be the one
# the engine computes over the two files without the module, in the four
# configurations of patent 004's ablation: no replication, replication,
# +R1/R2/R4, +R3; then under a replica budget, R3 run a batch ahead (the
# default) and within each batch (--no-ahead). Then bad input: a partition
# of another graph (as a peer,
# and to sample with), a root out of range; then node1 stops serving.
# Once per transport of DFG_PF_XPORTS (default rdma; rig.sh asks for
# "rdma tcp"), in one boot: the tcp pass checks no replication and +R3
# against the same digest (TCP brings the bytes RDMA brings), a peer of
# another graph, and node1's death. Then the traffic gate (gate.sh), over
# the last transport. One TAP line per check.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
peer=node1
PF_PEER=169.254.0.11
ctl=/run/hub-test-ssh
# Under the repository, which both nodes mount at the same path.
dir=$BUILD/hub-rig
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

# fails NAME PATTERN CMD...: CMD exits 1 and says PATTERN.
fails() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && grep -qF -- "$pat" <<<"$out"; then
		echo "ok - $name"
	else
		echo "$out" | sed 's/^/# /'
		echo "# exit $rc, want 1 and '$pat'"
		echo "not ok - $name"
	fi
}

opts=(--fanout 10,5 --batch 32 --batches 6 --seed 7)
ko=${DFG_KO:-$top/dfg.ko}

# reload: node0's modules reloaded with transport $xp: no partition, no
# peer, an empty cache.
reload() {
	local m
	for m in dfg_rdma dfg_tcp; do
		if [ -d "/sys/module/$m" ]; then rmmod "$m" || return; fi
	done
	rmmod dfg && insmod "$ko" && insmod "${ko%/*}/dfg_$xp.ko"
}
# fresh [--no-replica]: reloaded (so that every configuration reads from
# node1), its partition served with a peer.
fresh() {
	reload && "$dfg" graph serve "$@" --peer "$PF_PEER" "$dir/p.0.dfgg"
}
# fresh_budget: as fresh, serving partition 0 under the replica budget
# (node1 serves p.1: the same partitioning, so the same set).
fresh_budget() {
	reload && "$dfg" graph serve --peer "$PF_PEER" "$dir/b.0.dfgg"
}
# field NAME OUT: the number after NAME in a sample run's counters.
field() {
	awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$2" | head -n 1
}
# digest CMD...: the digest line of a sample run (empty on failure).
digest() {
	"$@" | sed -n 's/^digest //p'
}

rm -rf "$dir"
mkdir -p "$dir"
check "graphs made and partitioned" sh -c "
	'$dfg' graph gen --scale 10 --seed 5 -q -o '$dir/g.dfgg' &&
	'$dfg' graph partition -k 2 -q -o '$dir/p' '$dir/g.dfgg' &&
	'$dfg' graph partition -k 2 -q --replica-budget 5% -o '$dir/b' '$dir/g.dfgg' &&
	'$dfg' graph gen --scale 9 --seed 6 -q -o '$dir/h.dfgg' &&
	'$dfg' graph partition -k 2 -q -o '$dir/h' '$dir/h.dfgg'"
want=$(digest "$dfg" graph sample --files "${opts[@]}" "$dir/p.0.dfgg" \
	"$dir/p.1.dfgg")
echo "# digest over the files: $want"
# pass XP FIRST: the checks over dfg_XP.ko; FIRST (1) also runs the
# configurations and checks that do not depend on the transport.
pass() {
	local xp=$1 first=$2 rules=all out got fw fg t0 other ra rn ha

	other=$([ "$xp" = rdma ] && echo tcp || echo rdma)
	[ "$first" = 1 ] && rules="none r1,r2,r4 all"
	echo "# transport $xp"
	check "node1 serves partition 1 over dfg_$xp.ko" peer_sh "
		{ ! test -d /sys/module/dfg_$other || rmmod dfg_$other; } &&
		{ test -d /sys/module/dfg_$xp ||
		  insmod '${ko%/*}/dfg_$xp.ko'; } &&
		$dfg graph serve $dir/p.1.dfgg"

	# A partition of another graph as this machine's: the module refuses
	# node1 as a peer (its image's part_set differs) before connecting it.
	check "node0 on dfg_$xp.ko, nothing served" reload
	fails "peer serving another graph's partition refused" \
		"serves a partition of another graph or partitioning" \
		"$dfg" graph serve --peer "$PF_PEER" "$dir/h.0.dfgg"

	check "node0 serves partition 0 without its replica, empty cache" \
		fresh --no-replica
	got=$(digest "$dfg" graph sample "${opts[@]}" --rules none "$dir/p.0.dfgg")
	check "no replication: the files' batches ($got)" test "$got" = "$want"

	for r in $rules; do
		check "node0 serves partition 0 with its replica, empty cache" fresh
		out=$("$dfg" graph sample "${opts[@]}" --rules $r "$dir/p.0.dfgg")
		echo "$out" | sed 's/^/# /'
		got=$(sed -n 's/^digest //p' <<<"$out")
		check "replication, rules $r: the files' batches" \
			test "$got" = "$want"
		check "replication, rules $r: read from node1" \
			grep -Eq '^local .* remote [1-9]|r3_nodes [1-9]' <<<"$out"
	done
	check "remote reads went through the cache" \
		test "$(cat /sys/kernel/dfg/prefetch/reads)" -gt 0

	# Under a replica budget remote reads remain. R3 a batch ahead
	# (dfg_hub_ahead(), the default) and within each batch (--no-ahead):
	# the files' batches both ways; ahead, the batches after the first
	# take their remote nodes from what was read for them.
	check "node0 serves partition 0 under a replica budget, empty cache" \
		fresh_budget
	out=$("$dfg" graph sample "${opts[@]}" --rules all "$dir/b.0.dfgg")
	echo "$out" | sed 's/^/# ahead: /'
	got=$(sed -n 's/^digest //p' <<<"$out")
	ra=$(field remote "$out")
	ha=$(field r3_hits "$out")
	check "budget, R3 ahead: the files' batches" test "$got" = "$want"
	check "budget, R3 within each batch: node0 reloaded" fresh_budget
	out=$("$dfg" graph sample "${opts[@]}" --rules all --no-ahead \
		"$dir/b.0.dfgg")
	echo "$out" | sed 's/^/# within: /'
	got=$(sed -n 's/^digest //p' <<<"$out")
	rn=$(field remote "$out")
	check "budget, R3 within each batch: the files' batches" \
		test "$got" = "$want"
	check "R3 ahead: fewer reads on demand ($ra) than within ($rn)" \
		test "${ra:-x}" -lt "${rn:-0}"
	check "R3 ahead: its entries served the batches (r3_hits $ha)" \
		test "${ha:-0}" -gt 0
	# The checks below sample partition 0 with its full replica; the
	# batches sampled now are what the cache holds once node1 is gone
	# (the reload emptied it; the tcp pass samples nothing else first).
	check "node0 serves partition 0 with its replica again" fresh
	got=$(digest "$dfg" graph sample "${opts[@]}" --rules none "$dir/p.0.dfgg")
	check "the files' batches with the replica again" test "$got" = "$want"

	if [ "$first" = 1 ]; then
		# Each rule fired as often as over the files: firings depend
		# on the graph and the samples, not on where bytes came from
		# (r3_nodes and r3_hits do).
		fw=$(firings "$dfg" graph sample --files "${opts[@]}" \
			--rules all "$dir/p.0.dfgg" "$dir/p.1.dfgg")
		fg=$(firings "$dfg" graph sample "${opts[@]}" --rules all \
			"$dir/p.0.dfgg")
		echo "# r1 r2 r3 r4 over the files: $fw; served: $fg"
		check "rules fire as over the files" test -n "$fw" -a "$fw" = "$fg"

		fails "sampling with another graph's partition file refused" \
			"the module serves nodes" \
			"$dfg" graph sample "${opts[@]}" "$dir/h.0.dfgg"
		fails "a root out of range" "a node ID outside the graph" \
			"$dfg" graph sample --roots 1,2,100000 "$dir/p.0.dfgg"
	fi

	# node1 goes away (its transport unloaded: the connection ends):
	# nodes only it holds fail at once and clearly, what the cache holds
	# stays.
	check "node1 stops serving" peer_sh rmmod "dfg_$xp"
	t0=$SECONDS
	fails "a dead owner's nodes fail" "unreachable" \
		"$dfg" graph sample --fanout 10,5 --batch 32 --batches 6 \
		--seed 99 "$dir/p.0.dfgg"
	check "within 10 s ($((SECONDS - t0)) s)" test $((SECONDS - t0)) -le 10
	got=$(digest "$dfg" graph sample "${opts[@]}" --rules none "$dir/p.0.dfgg")
	check "cached batches still served after the owner died" \
		test "$got" = "$want"
}

# Each rule's firings in a sample run's output.
firings() {
	"$@" | sed -n 's/^r1 \([0-9]*\) r2 \([0-9]*\) r3 \([0-9]*\) .* r4 \([0-9]*\)$/\1 \2 \3 \4/p'
}

first=1
for xp in ${DFG_PF_XPORTS:-rdma}; do
	t_pass=$SECONDS
	pass "$xp" "$first"
	echo "# transport $xp: $((SECONDS - t_pass)) s"
	first=0
done

# The traffic gate of claim 10 (selftests/prefetch/gate.sh), over the
# last pass's transport ($xp).
. "$top/selftests/prefetch/gate.sh"
gate_checks
rm -rf "$dir"
echo "# hub checks done"
