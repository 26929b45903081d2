#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The hub benchmark (patent 004's ablation), run on node0 of the two-node
# rig: DFG_BENCH_ONLY=hub make bench boots the rig (tools/bench/host.sh)
# and runs this there. A R-MAT graph (scale DFG_BENCH_HUB_SCALE, default
# 18; 14 with DFG_BENCH_QUICK) partitioned K=2; node1 serves partition 1,
# node0 partition 0 and samples 2-hop mini-batches (fan-outs 10,5) in
# the four configurations: no replication (every remote node read from
# its owner on demand), hub replication, + machine-local prefetch
# (R1, R2, R4), + R3 (ungated: the traffic monitor is not written).
# Rounds interleave the configurations, the order rotating each round;
# before each run node0's modules are reloaded, so that every run starts
# with an empty cache. Writes hub.csv (one row per batch: round, config,
# batch, latency_us, remote reads), hub_summary.csv (per configuration:
# median and p99 latency, remote reads per batch, the median over rounds
# of each round's latency ratio to no replication) and hub.cmd.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=${DFG_BENCH_OUT:-$BUILD/bench-stage}
dfg=$BUILD/bin/dfg
peer=node1
PF_PEER=169.254.0.11
ctl=/run/hub-bench-ssh
quick=${DFG_BENCH_QUICK:-}
[ "$quick" = 0 ] && quick=
scale=${DFG_BENCH_HUB_SCALE:-$([ -n "$quick" ] && echo 14 || echo 18)}
rounds=${DFG_BENCH_REPS:-$([ -n "$quick" ] && echo 2 || echo 5)}
batches=$([ -n "$quick" ] && echo 8 || echo 32)
dir=$BUILD/hub-bench
ko=${DFG_KO:-$top/dfg.ko}
rdma_ko=${ko%/*}/dfg_rdma.ko
configs=(norep rep local r3)

peer_sh() {
	ssh -o ControlMaster=auto -o ControlPath=$ctl -o ControlPersist=600 \
		"$peer" "$@"
}

# serve CONFIG: node0's modules fresh, its partition as CONFIG wants.
serve() {
	rmmod dfg_rdma 2>/dev/null
	rmmod dfg || return 1
	insmod "$ko" && insmod "$rdma_ko" || return 1
	"$dfg" graph serve $([ "$1" = norep ] && echo --no-replica) \
		--peer "$PF_PEER" "$dir/g.0.dfgg" >/dev/null
}

rules_of() {
	case $1 in
	norep|rep) echo none ;;
	local) echo r1,r2,r4 ;;
	r3) echo all ;;
	esac
}

mkdir -p "$out" "$dir" || exit 1
echo "# bench: hub (R-MAT scale $scale, K=2, $rounds rounds of $batches batches)"
if [ ! -e "$dir/g.$scale.done" ]; then
	rm -f "$dir"/g.*
	"$dfg" graph gen --scale "$scale" --seed 1 -q -o "$dir/g.dfgg" &&
		"$dfg" graph partition -k 2 -q -o "$dir/g" "$dir/g.dfgg" >/dev/null &&
		touch "$dir/g.$scale.done" || exit 1
fi
"$dfg" graph info "$dir/g.0.dfgg" | sed 's/^/# /'
peer_sh "$dfg graph serve $dir/g.1.dfgg" >/dev/null || exit 1

csv=$out/hub.csv
echo "round,config,batch,latency_us,remote" >"$csv"
for ((r = 0; r < rounds; r++)); do
	for ((i = 0; i < ${#configs[@]}; i++)); do
		c=${configs[$(((i + r) % ${#configs[@]}))]}
		serve "$c" || { echo "bench: hub: serving for $c failed" >&2; exit 1; }
		"$dfg" graph sample --fanout 10,5 --batch 64 --batches "$batches" \
			--seed 1 --rules "$(rules_of "$c")" --verbose \
			"$dir/g.0.dfgg" >"$dir/run.out" ||
			{ echo "bench: hub: sampling ($c) failed" >&2; exit 1; }
		awk -v r="$r" -v c="$c" '$1 == "batch" {
			print r "," c "," $2 "," $10 "," $12 }' "$dir/run.out" >>"$csv"
		sed -n 's/^digest /# '"$r $c"' digest /p' "$dir/run.out"
	done
done

# Per configuration: median and p99 of every batch, remote reads per
# batch, and the median of the per-round ratios of median latency to no
# replication's in the same round.
awk -F, 'NR > 1 { n[$2]++; lat[$2, n[$2]] = $4; rem[$2] += $5;
		rl[$1, $2, ++rn[$1, $2]] = $4; rounds[$1] = 1 }
	function sort(a, k,   i, j, t) { for (i = 2; i <= k; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
	function med(r, c,   k, a, i) { k = rn[r, c];
		for (i = 1; i <= k; i++) a[i] = rl[r, c, i];
		sort(a, k); return a[int((k + 1) / 2)] }
	END {
		print "config,median_us,p99_us,remote_per_batch,ratio_to_norep_median"
		split("norep rep local r3", cs, " ")
		for (x = 1; x <= 4; x++) { c = cs[x]; k = n[c]
			for (i = 1; i <= k; i++) a[i] = lat[c, i]
			sort(a, k)
			m = 0; delete q
			for (r in rounds) q[++m] = med(r, c) / med(r, "norep")
			sort(q, m)
			p = int(k * 0.99)
			if (p < 1)
				p = 1
			printf "%s,%s,%s,%.2f,%.3f\n", c, a[int((k + 1) / 2)],
				a[p], rem[c] / k, q[int((m + 1) / 2)]
			delete a
		} }' "$csv" >"$out/hub_summary.csv" || exit 1
column -s, -t "$out/hub_summary.csv" | sed 's/^/# /'
{
	echo "# Reproduce on the host, from the repository root:"
	echo "#   DFG_BENCH_ONLY=hub make bench$([ -n "$quick" ] && echo '   (with DFG_BENCH_QUICK=1)')"
	echo "# which runs tools/bench/host.sh, which boots the two-node rig and runs tools/bench/hub.sh on node0"
	echo "graph: dfg graph gen --scale $scale --seed 1; dfg graph partition -k 2"
	echo "command: dfg graph sample --fanout 10,5 --batch 64 --batches $batches --seed 1 --rules {none,none,r1,r2,r4,all} --verbose (configs norep, rep, local, r3; norep served with --no-replica)"
	echo "rounds: $rounds, configuration order rotating; node0's dfg.ko and dfg_rdma.ko reloaded before each run (empty cache)"
	echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	echo "kernel: $(uname -srvm)"
	echo "cpus: $(nproc)"
} >"$out/hub.cmd"
rm -f "$dir/run.out"
echo "# bench: hub -> ${out#"$top"/}/hub.csv, hub_summary.csv, hub.cmd"
