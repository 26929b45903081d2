#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The hub benchmark (patent 004's ablation), run on node0 of the two-node
# rig: DFG_BENCH_ONLY=hub make bench boots the rig (tools/bench/host.sh)
# and runs this there.
#
# Graphs, each partitioned K=2 (node0 samples from partition 0, node1
# serves partition 1):
#   rmat	R-MAT scale DFG_BENCH_HUB_SCALE (default 18; 14 with
#		DFG_BENCH_QUICK), Graph500 parameters, seed 1
#   apt		the package dependency graph of this machine's apt lists
#		(dfg graph import --format apt, undirected), from
#		/var/lib/apt/lists/*_Packages* (decompressed by apt-helper),
#		or /var/lib/dpkg/status when there are none (the .cmd says
#		which)
# DFG_BENCH_HUB_GRAPHS picks some ("rmat", "apt"; default both).
# DFG_BENCH_HUB_BUDGET (bytes, or a share such as 50%: dfg graph
# partition --replica-budget) replicates only part of the hubs; the run
# prints, per graph, the replicated share of a 1-hop halo beside the
# median batch of each replicated configuration (also in hub_graphs.csv
# and hub_summary.csv).
# Each graph runs a second time as G-hP (rmat-h25, apt-h25), partitioned
# again with a replica budget of P% of node0's 1-hop halo bytes
# (--replica-budget BYTES, P = DFG_BENCH_HUB_HALO_PCT, default 25; 0 or
# empty: no such run): the same graph and node IDs, a replica well under
# the halo, so that remote reads remain for the prefetch rules to win
# back. Its rows are a graph of their own in every file; hub_graphs.csv
# gives its replicated share of the halo.
#
# Configurations, 2-hop mini-batches (fan-outs 10,5, 64 roots):
#   norep	no replication: every remote node read from its owner on
#		demand (dfg graph serve --no-replica)
#   rep		hub replication
#   local	+ machine-local prefetch (R1, R2, R4)
#   r3		+ speculative remote prefetch (R3), gated by the module's
#		link traffic monitor (kmod/pf_traffic.c): with the module's
#		default threshold, or DFG_BENCH_HUB_THRESHOLD (bytes/s) written
#		to /sys/kernel/dfg/prefetch/traffic_threshold on both nodes
#		before each r3 run (the .cmd says which)
#   kv		the baseline: a plain user-space TCP request/response store as
#		DistDGL runs one (dfg graph kv-serve on node1, dfg graph
#		sample --kv on node0; no replication, no cache, one request
#		per owner per hop, TCP_NODELAY)
# The four module configurations run over each transport module whose .ko
# is beside dfg.ko: dfg_rdma.ko (Soft-RoCE on the rig) and dfg_tcp.ko
# (kernel TCP), named norep/rdma, norep/tcp, ...; a missing one is skipped
# with a note.
#
# Method (DESIGN.md, "Performance method"): rounds interleave every
# configuration of a graph, the order rotating each round; before each
# module run node0's modules are reloaded, so that every run starts with
# an empty cache (node1's are reloaded when the transport changes). Every
# batch's digest must be the same in every configuration of a round, or
# the benchmark fails. Ratios are taken per round (median latency of the
# configuration / median of norep over the same transport, and / kv's)
# and summarized as median and range over the rounds.
#
# DFG_BENCH_HUB_PROF=1 runs every module configuration with
# DFG_HUB_PROF=1 and appends its per-stage profile (dfg graph sample's
# stderr: DESIGN.md, "Where the prefetch configurations lose time") to
# hub_prof.txt, one block per run; for trials, the timers cost time.
#
# The kv client waits up to 30 s for a reply (a TCG guest under load is
# slow). A partitioning is reused while the graph file and the budget are
# the same ($BUILD/hub-bench/G.part.key); the R-MAT graph while the scale
# is (G.S.done).
#
# Writes hub.csv (one row per batch: its demand reads from peers, remote,
# and R3's speculative ones meanwhile, spec), hub_summary.csv (per graph
# and configuration: median and p99 latency, remote reads per batch,
# ratios to norep and to kv with their range, the reduction against norep
# beside the patent's, R3's reads per batch, and the replica served: its
# share of a 1-hop halo's nodes and bytes, 0 for norep and kv),
# hub_graphs.csv (per graph: nodes, arcs, cut arcs, hubs, the replica of
# node0 against a 1-hop halo), hub.png and hub.cmd.
#
# K = 4 is not run: the module serves one partition per machine, so K = 4
# needs four nodes (dfg-vm --nodes 4: four single-vCPU TCG guests on this
# 2-core host, oversubscribed), which host.sh does not boot.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tools/bench/machine.sh
. "$here/machine.sh"
BUILD=${BUILD:-$top/build}
out=${DFG_BENCH_OUT:-$BUILD/bench-stage}
dfg=$BUILD/bin/dfg
peer=node1
PF_PEER=169.254.0.11
KV_PORT=7469
ctl=/run/hub-bench-ssh
quick=${DFG_BENCH_QUICK:-}
[ "$quick" = 0 ] && quick=
scale=${DFG_BENCH_HUB_SCALE:-$([ -n "$quick" ] && echo 14 || echo 18)}
# Rounds and batches: a batch costs what its sampled nodes do (tens of ms
# under TCG, more where norep reads remote nodes on demand), so a module
# run's time is mostly the reload and the serve around it; 5 rounds of 32
# batches take about 15 min on a quiet host (the quick run a few).
rounds=${DFG_BENCH_REPS:-$([ -n "$quick" ] && echo 2 || echo 5)}
batches=$([ -n "$quick" ] && echo 8 || echo 32)
apt_batches=${DFG_BENCH_HUB_APT_BATCHES:-$batches}
graphs=${DFG_BENCH_HUB_GRAPHS:-rmat apt}
budget=${DFG_BENCH_HUB_BUDGET:-}
halo_pct=${DFG_BENCH_HUB_HALO_PCT-25}
[ "$halo_pct" = 0 ] && halo_pct=
case $halo_pct in
''|[0-9]|[0-9][0-9]|100) ;;
*) echo "bench: hub: DFG_BENCH_HUB_HALO_PCT=$halo_pct: a percentage, 0-100" >&2; exit 1 ;;
esac
threshold=${DFG_BENCH_HUB_THRESHOLD:-}
prof=${DFG_BENCH_HUB_PROF:-}
[ "$prof" = 0 ] && prof=
thr_file=/sys/kernel/dfg/prefetch/traffic_threshold
dir=$BUILD/hub-bench
ko=${DFG_KO:-$top/dfg.ko}
configs=(norep rep local r3)
t_start=$(date +%s)

transports=()
notes=()
for t in rdma tcp; do
	if [ -e "${ko%/*}/dfg_$t.ko" ]; then
		transports+=("$t")
	else
		notes+=("transport $t skipped: ${ko%/*}/dfg_$t.ko does not exist")
	fi
done
[ "${#transports[@]}" -gt 0 ] || { echo "bench: hub: no transport module beside $ko" >&2; exit 1; }
# Every configuration of a graph, in the order of round 0.
entries=()
for t in "${transports[@]}"; do
	for c in "${configs[@]}"; do
		entries+=("$c/$t")
	done
done
entries+=(kv)

peer_sh() {
	ssh -o ControlMaster=auto -o ControlPath=$ctl -o ControlPersist=600 \
		"$peer" "$@"
}

# fail_report G E: what a failed run of configuration E on graph G leaves
# to tell why: node1's kv-serve log, and on both nodes the modules' last
# messages (a transport's "connection to a peer lost (ERRNO)", "dropped
# a client: stalled", the peer marked down) and the transports' counters.
fail_report() {
	local n
	echo "bench: hub: $1 $2 failed" >&2
	peer_sh "cat $dir/kv-serve.log" >&2
	for n in node0 node1; do
		echo "# $n: the modules' last messages, the transports' counters" >&2
		if [ "$n" = node0 ]; then
			dmesg | grep -E 'dfg(_tcp|_rdma)?:' | tail -n 20
			grep -r . /sys/module/dfg_tcp/stats /sys/module/dfg_rdma/stats 2>/dev/null
		else
			peer_sh "dmesg | grep -E 'dfg(_tcp|_rdma)?:' | tail -n 20
				grep -r . /sys/module/dfg_tcp/stats /sys/module/dfg_rdma/stats 2>/dev/null"
		fi | sed 's/^/#   /' >&2
	done
}

# reload_mods T: this machine's dfg.ko and transport T's module, fresh.
reload_mods() {
	local t
	for t in rdma tcp; do
		rmmod "dfg_$t" 2>/dev/null
	done
	rmmod dfg 2>/dev/null
	insmod "$ko" && insmod "${ko%/*}/dfg_$1.ko"
}

# node1 G T: node1 serves graph G's partition 1 over transport T.
node1_state=
node1() {
	[ "$node1_state" = "$1/$2" ] && return 0
	peer_sh "for t in rdma tcp; do rmmod dfg_\$t 2>/dev/null; done
		rmmod dfg 2>/dev/null
		modprobe rdma_cm 2>/dev/null
		insmod $ko && insmod ${ko%/*}/dfg_$2.ko &&
		$dfg graph serve $dir/$1.1.dfgg" >/dev/null || return 1
	node1_state=$1/$2
}

# set_threshold: the R3 traffic gate's threshold on both nodes, if any.
set_threshold() {
	[ -n "$threshold" ] || return 0
	echo "$threshold" >"$thr_file" &&
		peer_sh "echo $threshold > $thr_file"
}

rules_of() {
	case $1 in
	norep|rep) echo none ;;
	local) echo r1,r2,r4 ;;
	r3) echo all ;;
	esac
}

# run_entry G E: one run of configuration E on graph G into $dir/run.out.
run_entry() {
	local g=$1 e=$2 c t nb=$batches
	[ "${g%%-*}" = apt ] && nb=$apt_batches
	local args=(--fanout 10,5 --batch 64 --batches "$nb" --seed 1
		    --verbose)
	if [ "$e" = kv ]; then
		"$dfg" graph sample "${args[@]}" --kv "$PF_PEER:$KV_PORT" \
			--timeout 30000 --no-replica "$dir/$g.0.dfgg" >"$dir/run.out"
		return
	fi
	c=${e%/*}
	t=${e#*/}
	node1 "$g" "$t" || { echo "bench: hub: node1 cannot serve $g over $t" >&2; return 1; }
	reload_mods "$t" || return 1
	"$dfg" graph serve $([ "$c" = norep ] && echo --no-replica) \
		--peer "$PF_PEER" "$dir/$g.0.dfgg" >/dev/null || return 1
	[ "$c" = r3 ] && { set_threshold || return 1; }
	if [ -z "$prof" ]; then
		"$dfg" graph sample "${args[@]}" --rules "$(rules_of "$c")" \
			"$dir/$g.0.dfgg" >"$dir/run.out"
		return
	fi
	DFG_HUB_PROF=1 "$dfg" graph sample "${args[@]}" \
		--rules "$(rules_of "$c")" "$dir/$g.0.dfgg" >"$dir/run.out" \
		2>"$dir/run.err"
	local rc=$?
	{ echo "== $g $e"; cat "$dir/run.err"; } >>"$out/hub_prof.txt"
	cat "$dir/run.err" >&2
	return $rc
}

# make_budgeted G V: graph G's partitions again as $dir/V.*, under a
# replica budget of $halo_pct% of the 1-hop halo bytes of partition 0 in
# G's report; the report in $dir/V.part, the budget in $dir/V.budget.
make_budgeted() {
	local g=$1 v=$2 hb bytes key
	hb=$(awk '$1 == "0" && NF >= 11 { print $8 }' "$dir/$g.part")
	[ -n "$hb" ] || { echo "bench: hub: no halo bytes for $g" >&2; return 1; }
	bytes=$((hb * halo_pct / 100))
	[ "$bytes" -gt 0 ] || bytes=1
	echo "$bytes bytes, $halo_pct% of partition 0's 1-hop halo ($hb bytes)" >"$dir/$v.budget"
	echo "$(cat "$dir/$g.src") (replica budget $(cat "$dir/$v.budget"))" >"$dir/$v.src"
	ln -sf "$g.dfgg" "$dir/$v.dfgg"
	key="$(cksum <"$dir/$g.dfgg") budget=$bytes"
	[ -e "$dir/$v.part" ] && [ "$(cat "$dir/$v.part.key" 2>/dev/null)" = "$key" ] &&
		[ -e "$dir/$v.1.dfgg" ] && return 0
	"$dfg" graph partition -k 2 --replica-budget "$bytes" \
		-o "$dir/$v" "$dir/$g.dfgg" >"$dir/$v.part" || return 1
	echo "$key" >"$dir/$v.part.key"
}

# make_graph G: $dir/G.dfgg and its partitions; the partitioning's report
# in $dir/G.part. G-hP: G's, then make_budgeted.
make_graph() {
	local g=$1
	local -a src
	if [ "${g%-h*}" != "$g" ]; then
		make_graph "${g%-h*}" && make_budgeted "${g%-h*}" "$g"
		return
	fi
	case $g in
	rmat)
		if [ ! -e "$dir/rmat.$scale.done" ]; then
			rm -f "$dir"/rmat.*
			"$dfg" graph gen --scale "$scale" --seed 1 -q \
				-o "$dir/rmat.dfgg" || return 1
			touch "$dir/rmat.$scale.done"
		fi
		echo "rmat: dfg graph gen --scale $scale --seed 1" >"$dir/rmat.src"
		;;
	apt)
		# (no process substitution: the rig's guests have no /dev/fd)
		local f
		src=()
		for f in /var/lib/apt/lists/*_Packages*; do
			[ -f "$f" ] && src+=("$f")
		done
		if [ "${#src[@]}" -gt 0 ]; then
			/usr/lib/apt/apt-helper cat-file "${src[@]}" |
				"$dfg" graph import --format apt --undirected - \
					-o "$dir/apt.dfgg" >"$dir/apt.import" ||
				return 1
			echo "apt: $(basename -a "${src[@]}" | xargs) (apt lists, $(du -cb "${src[@]}" | tail -n 1 | cut -f1) bytes compressed as stored)" >"$dir/apt.src"
		elif [ -e /var/lib/dpkg/status ]; then
			"$dfg" graph import --format apt --undirected \
				/var/lib/dpkg/status -o "$dir/apt.dfgg" \
				>"$dir/apt.import" || return 1
			echo "apt: /var/lib/dpkg/status (no apt lists: run apt-get update for the full archive; this is the installed packages only)" >"$dir/apt.src"
		else
			echo "bench: hub: no apt lists and no dpkg status" >&2
			return 1
		fi
		sed 's/^/# /' "$dir/apt.import"
		;;
	esac
	# The partitioning is kept while the graph and the budget are the same
	# (METIS on R-MAT 18 takes minutes under TCG).
	local key
	key="$(cksum <"$dir/$g.dfgg") budget=$budget"
	[ -e "$dir/$g.part" ] && [ "$(cat "$dir/$g.part.key" 2>/dev/null)" = "$key" ] &&
		[ -e "$dir/$g.1.dfgg" ] && return 0
	"$dfg" graph partition -k 2 ${budget:+--replica-budget "$budget"} \
		-o "$dir/$g" "$dir/$g.dfgg" >"$dir/$g.part" || return 1
	echo "$key" >"$dir/$g.part.key"
}

mkdir -p "$out" "$dir" || exit 1
[ -n "$prof" ] && : >"$out/hub_prof.txt"
# Each graph, then its budgeted run.
runs=
for g in $graphs; do
	runs="$runs $g${halo_pct:+ $g-h$halo_pct}"
done
csv=$out/hub.csv
gcsv=$out/hub_graphs.csv
echo "graph,round,config,batch,latency_us,remote,hash,spec" >"$csv"
echo "graph,nodes,arcs,cut_arcs,hubs,rep_nodes,rep_bytes,halo_nodes,halo_bytes,rep_nodes_pct_halo,rep_bytes_pct_halo,source" >"$gcsv"
echo "# bench: hub (${runs# }; K=2; ${#entries[@]} configurations: ${entries[*]}; $rounds rounds of $batches batches, $apt_batches on apt)"
for n in "${notes[@]}"; do
	echo "# note: $n"
done
kv_pid=
fail=0
for g in $runs; do
	make_graph "$g" || { echo "bench: hub: making graph $g failed" >&2; exit 1; }
	sed 's/^/# /' "$dir/$g.part"
	# node0's replica (partition 0's row) against a 1-hop halo
	awk -v g="$g" -v src="$(cat "$dir/$g.src")" '
		/cut arcs/ { for (i = 1; i <= NF; i++) {
			if ($(i + 1) == "cut") cut = $i
			if ($(i + 1) == "hub") hubs = $i
			if ($(i + 1) == "nodes," && !nodes) nodes = $i
			if ($(i + 1) == "arcs" && !arcs) arcs = $i } }
		$1 == "0" && NF >= 11 { split($5, rc, "/"); rn = rc[1]; rb = $6
			hn = $7; hb = $8 }
		END {
			printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%.1f,%.1f,\"%s\"\n", g,
				nodes, arcs, cut, hubs, rn, rb, hn, hb,
				hn ? 100 * rn / hn : 0, hb ? 100 * rb / hb : 0,
				src }' "$dir/$g.part" >>"$gcsv"
	node1_state=
	node1 "$g" "${transports[0]}" || { echo "bench: hub: node1 cannot serve $g" >&2; exit 1; }
	[ -n "$kv_pid" ] && peer_sh "kill $kv_pid" 2>/dev/null
	kv_pid=$(peer_sh "setsid $dfg graph kv-serve --port $KV_PORT $dir/$g.1.dfgg >$dir/kv-serve.log 2>&1 </dev/null & echo \$!") ||
		{ echo "bench: hub: kv-serve on node1 failed" >&2; exit 1; }
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < ${#entries[@]}; i++)); do
			e=${entries[$(((i + r) % ${#entries[@]}))]}
			run_entry "$g" "$e" ||
				{ fail_report "$g" "$e"; fail=1; break 3; }
			awk -v g="$g" -v r="$r" -v c="$e" '$1 == "batch" {
				print g "," r "," c "," $2 "," $10 "," $12 "," $8 "," $14 }' \
				"$dir/run.out" >>"$csv"
			sed -n 's|^digest |# '"$g $r $e"' digest |p' "$dir/run.out"
		done
	done
done
[ -n "$kv_pid" ] && peer_sh "kill $kv_pid" 2>/dev/null
[ "$fail" = 0 ] || exit 1
for g in $runs; do
	grep -q "^$g," "$csv" || { echo "bench: hub: no batches of graph $g" >&2; exit 1; }
done

# Every batch the same in every configuration of its graph and round.
awk -F, 'NR > 1 { k = $1 SUBSEP $2 SUBSEP $4
		if (!(k in h)) h[k] = $7
		else if (h[k] != $7) { bad++; if (bad < 5)
			printf "bench: hub: %s round %s batch %s: %s differs\n", $1, $2, $4, $3 > "/dev/stderr" } }
	END { exit bad > 0 }' "$csv" ||
	{ echo "bench: hub: mini-batches differ between configurations" >&2; exit 1; }
echo "# every batch identical across the ${#entries[@]} configurations (hash per batch checked)"

# Per graph and configuration: median and p99 of every batch, remote
# reads per batch; per round the ratio of its median latency to the same
# transport's norep and to kv's, summarized as median, min, max.
awk -F, -v entries="${entries[*]}" -v first="${transports[0]}" '
	function sort(a, k,   i, j, t) { for (i = 2; i <= k; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
	function mid(a, k) { return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
	function med(g, r, c,   k, a, i) { k = rn[g, r, c]
		for (i = 1; i <= k; i++) a[i] = rl[g, r, c, i]
		sort(a, k); return mid(a, k) }
	FNR == 1 { f++; next }
	f == 1 { share[$1] = $10 "," $11; next }
	{ g = $1; c = $3; graphs[g] = 1; rounds[$2] = 1
		n[g, c]++; lat[g, c, n[g, c]] = $5; rem[g, c] += $6
		spec[g, c] += $8
		rl[g, $2, c, ++rn[g, $2, c]] = $5 }
	END {
		print "graph,transport,config,median_us,p99_us,remote_per_batch,ratio_norep,ratio_norep_min,ratio_norep_max,reduction_pct,patent_pct,ratio_kv,ratio_kv_min,ratio_kv_max,spec_per_batch,rep_nodes_pct_halo,rep_bytes_pct_halo"
		pat["rep"] = -47.6; pat["local"] = -49.5; pat["r3"] = -74.8
		ne = split(entries, es, " ")
		for (g in graphs) for (x = 1; x <= ne; x++) { e = es[x]
			if (!((g, e) in n)) continue
			split(e, ct, "/"); c = ct[1]
			t = (c == "kv") ? "user-tcp" : ct[2]
			base = "norep/" (c == "kv" ? first : t)
			k = n[g, e]
			for (i = 1; i <= k; i++) a[i] = lat[g, e, i]
			sort(a, k)
			p = int(k * 0.99); if (p < 1) p = 1
			m = 0; delete q; mk = 0; delete qk
			for (r in rounds) {
				q[++m] = med(g, r, e) / med(g, r, base)
				qk[++mk] = med(g, r, e) / med(g, r, "kv") }
			sort(q, m); sort(qk, mk)
			printf "%s,%s,%s,%.0f,%s,%.2f,%.3f,%.3f,%.3f,%.1f,%s,%.3f,%.3f,%.3f,%.2f,%s\n",
				g, t, c, mid(a, k), a[p], rem[g, e] / k,
				mid(q, m), q[1], q[m], 100 * (mid(q, m) - 1),
				(c in pat) ? pat[c] : "",
				mid(qk, mk), qk[1], qk[mk], spec[g, e] / k,
				(c == "norep" || c == "kv") ? "0.0,0.0" : share[g]
			delete a
		} }' "$gcsv" "$csv" >"$out/hub_summary.csv" || exit 1
column -s, -t "$out/hub_summary.csv" | sed 's/^/# /'
column -s, -t "$gcsv" | sed 's/^/# /'
# The replica against the batch: per graph, the replicated share of a
# 1-hop halo (nodes, bytes; under DFG_BENCH_HUB_BUDGET's budget, or all
# of the hubs) beside the median batch of each configuration with it.
for g in $runs; do
	b=${budget:-none (every hub)}
	[ -e "$dir/$g.budget" ] && b=$(cat "$dir/$g.budget")
	echo "$g,$b"
done >"$dir/budgets"
awk -F, '
	FNR == 1 { f++ }
	f == 1 { budget[$1] = $2; next }
	FNR == 1 { next }
	f == 2 { share[$1] = sprintf("%.1f%% of a 1-hop halo'"'"'s nodes, %.1f%% of its bytes", $10, $11) }
	f == 3 && $3 != "norep" && $3 != "kv" { t[$1] = t[$1] sprintf(" %s/%s %.1f ms", $3, $2, $4 / 1000) }
	END { for (g in share) printf "# %s: replica budget %s: replicated %s; batch median%s\n", g, budget[g], share[g], t[g] }' \
	"$dir/budgets" "$gcsv" "$out/hub_summary.csv"

# The largest R-MAT scale the rig holds (an estimate): node0 builds and
# partitions the whole graph (the file, METIS's copy and the partitions:
# about 4x the whole file in memory), and the module takes a partition
# image of at most pf_max_part_mb.
fits=
if [ -e "$dir/rmat.dfgg" ]; then
	gb=$(stat -c %s "$dir/rmat.dfgg")
	pb=$(stat -c %s "$dir/rmat.0.dfgg")
	mem=$(awk '$1 == "MemTotal:" { print $2 * 1024 }' /proc/meminfo)
	maxp=$(( $(cat /sys/module/dfg/parameters/pf_max_part_mb 2>/dev/null || echo 1024) << 20 ))
	fits=$(awk -v s="$scale" -v gb="$gb" -v pb="$pb" -v mem="$mem" -v maxp="$maxp" 'BEGIN {
		while (4 * gb * 2 < mem && pb * 2 <= maxp) { s++; gb *= 2; pb *= 2 }
		while (s > 1 && (4 * gb > mem || pb > maxp)) { s--; gb /= 2; pb /= 2 }
		print s }')
	echo "# largest R-MAT scale that fits the rig (estimate from scale $scale's files, $((mem >> 20)) MiB, pf_max_part_mb $((maxp >> 20))): $fits"
fi

if command -v gnuplot >/dev/null; then
	gterm=png
	gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && gterm=pngcairo
	gnuplot -e "csv='$out/hub_summary.csv'; png='$out/hub.png'; term='$gterm'; subtitle='$(uname -r), $(nproc) CPUs$([ -n "$quick" ] && echo ', quick run')'" \
		"$here/hub.gp" || echo "bench: hub: gnuplot failed" >&2
fi

t_end=$(date +%s)
{
	echo "# Reproduce on the host, from the repository root:"
	echo "#   DFG_BENCH_ONLY=hub make bench$([ -n "$quick" ] && echo '   (with DFG_BENCH_QUICK=1)')"
	echo "# which runs tools/bench/host.sh, which boots the two-node rig and runs tools/bench/hub.sh on node0"
	for g in $runs; do
		if [ -e "$dir/$g.budget" ]; then
			echo "graph $g: $(cat "$dir/$g.src"); dfg graph partition -k 2 --replica-budget $(cut -d' ' -f1 "$dir/$g.budget")"
		else
			echo "graph $g: $(cat "$dir/$g.src"); dfg graph partition -k 2${budget:+ --replica-budget $budget}"
		fi
	done
	echo "command: dfg graph sample --fanout 10,5 --batch 64 --batches $batches (apt: $apt_batches) --seed 1 --verbose, with --rules none (norep, rep), r1,r2,r4 (local), all (r3); norep served with --no-replica; kv: dfg graph kv-serve on node1, dfg graph sample --kv $PF_PEER:$KV_PORT --timeout 30000 --no-replica on node0"
	echo "configurations: ${entries[*]}"
	for n in "${notes[@]}"; do
		echo "note: $n"
	done
	if [ -z "$threshold" ]; then
		echo "r3 gate: the module's default, $thr_file = $(cat "$thr_file" 2>/dev/null) bytes/s"
	else
		echo "r3 gate: $thr_file = $threshold bytes/s on both nodes (DFG_BENCH_HUB_THRESHOLD)"
	fi
	echo "rounds: $rounds, configuration order rotating; node0's dfg.ko and transport module reloaded before each module run (empty cache); every batch's hash checked equal across configurations"
	echo "K: 2 (K=4 needs 4 nodes: not booted by host.sh)"
	[ -n "$prof" ] && echo "prof: DFG_HUB_PROF=1 in every module run (DFG_BENCH_HUB_PROF; hub_prof.txt): the stage timers cost time, a trial's figures"
	[ -n "$fits" ] && echo "largest R-MAT scale fitting the rig (estimate): $fits"
	echo "duration_s: $((t_end - t_start))"
	describe_machine
} >"$out/hub.cmd"
rm -f "$dir/run.out"
echo "# bench: hub ($((t_end - t_start)) s) -> ${out#"$top"/}/hub.csv, hub_summary.csv, hub_graphs.csv, hub.png, hub.cmd"
