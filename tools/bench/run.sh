#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the dfg benchmarks inside the test VM; the host side is `make bench`
# (tools/vm/dfg-vm -- tools/bench/run.sh). For each benchmark it writes,
# under bench/results/ (or $DFG_BENCH_OUT):
#   <name>.csv   the figures
#   <name>.cmd   the command that reproduces them, kernel and CPU
#   <name>.png   the plot (gnuplot)
# DFG_BENCH_QUICK=1 asks for short runs (smoke test, not figures).
# DFG_BENCH_ONLY=LIST (comma-separated: roundtrip, chan, flow) runs only
# those.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=${DFG_BENCH_OUT:-$top/bench/results}
quick=
[ -n "${DFG_BENCH_QUICK:-}" ] && [ "$DFG_BENCH_QUICK" != 0 ] && quick=-q

mkdir -p "$out" || exit 1

# Best png terminal gnuplot has (gnuplot-nox may lack cairo).
gp_term() {
	if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
		echo pngcairo
	else
		echo png
	fi
}

# Kernel, CPU and module facts for the .cmd file.
describe_machine() {
	local rev
	rev=$(git -C "$top" -c safe.directory='*' rev-parse --short HEAD 2>/dev/null)
	if [ -n "$rev" ] &&
	   [ -n "$(git -C "$top" -c safe.directory='*' status --porcelain \
		-- kmod uapi tools/bench 2>/dev/null)" ]; then
		rev="$rev (kmod/uapi/tools/bench modified)"
	fi
	echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	echo "git: ${rev:-unknown}"
	echo "kernel: $(uname -srvm)"
	echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "cpus: $(nproc)"
	echo "virt: $(if grep -qw hypervisor /proc/cpuinfo; then
		echo "guest${DFG_VM:+ (tools/vm/dfg-vm)}"; else echo none; fi)"
	echo "dfg module: $(cat /sys/kernel/dfg/version 2>/dev/null || echo '?')"
	echo "mitigations: $(tr '\0' ' ' </proc/cmdline | grep -o 'mitigations=[^ ]*' || echo default)"
}

# run_bench NAME ARGS...: runs $BUILD/bin/NAME -o out/NAME.csv ARGS.
run_bench() {
	local name=$1 bin=$BUILD/bin/$1 rc
	shift
	if [ ! -x "$bin" ]; then
		echo "bench: no $bin (make tools)" >&2
		return 1
	fi
	echo "# bench: $name"
	"$bin" -o "$out/$name.csv" "$@"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "bench: $name failed ($rc)" >&2
		return "$rc"
	fi
	{
		echo "# Reproduce on the host, from the repository root:"
		echo "#   make bench$([ -n "$quick" ] && echo '   (with DFG_BENCH_QUICK=1)')"
		echo "# which runs, inside the test VM (tools/vm/dfg-vm):"
		echo "#   tools/bench/run.sh"
		echo "# which ran:"
		echo "command: ${bin#"$top"/} -o ${out#"$top"/}/$name.csv $*"
		describe_machine
	} >"$out/$name.cmd"
	if [ -f "$here/$name.gp" ]; then
		gnuplot -e "csv='$out/$name.csv'; png='$out/$name.png'; term='$(gp_term)'; subtitle='$(uname -r), $(nproc) CPUs$([ -n "$quick" ] && echo ', quick run')'" \
			"$here/$name.gp" || { echo "bench: plot of $name failed" >&2; return 1; }
	fi
	echo "# bench: $name -> ${out#"$top"/}/$name.{csv,cmd,png}"
}

# run_chan ARGS...: runs $BUILD/bin/chan_bench -d out ARGS, which writes
# chan_latency.csv, chan_throughput.csv and chan_pipeline.csv; a .cmd and
# a plot for each.
run_chan() {
	local bin=$BUILD/bin/chan_bench name rc fail=0
	if [ ! -x "$bin" ]; then
		echo "bench: no $bin (make tools)" >&2
		return 1
	fi
	echo "# bench: chan_bench"
	"$bin" -d "$out" "$@"
	rc=$?
	[ "$rc" != 0 ] && echo "bench: chan_bench failed ($rc)" >&2
	for name in chan_latency chan_throughput chan_pipeline; do
		[ -f "$out/$name.csv" ] || { fail=1; continue; }
		{
			echo "# Reproduce on the host, from the repository root:"
			echo "#   make bench$([ -n "$quick" ] && echo '   (with DFG_BENCH_QUICK=1)')"
			echo "# which runs, inside the test VM (tools/vm/dfg-vm):"
			echo "#   tools/bench/run.sh"
			echo "# which ran (writes chan_latency, chan_throughput, chan_pipeline):"
			echo "command: ${bin#"$top"/} -d ${out#"$top"/} $*"
			echo "pinning: latency (block, busy) and throughput pin the two processes to CPUs 0 and 1, latency block1 pins both to CPU 0; pipeline processes are not pinned"
			describe_machine
		} >"$out/$name.cmd"
		gnuplot -e "csv='$out/$name.csv'; png='$out/$name.png'; term='$(gp_term)'; subtitle='$(uname -r), $(nproc) CPUs$([ -n "$quick" ] && echo ', quick run')'" \
			"$here/$name.gp" || { echo "bench: plot of $name failed" >&2; fail=1; }
		echo "# bench: chan_bench -> ${out#"$top"/}/$name.{csv,cmd,png}"
	done
	[ "$rc" = 0 ] && return "$fail"
	return "$rc"
}

# run_flow: dfg run, folded vs --no-fold, on a 10-component pipeline of
# light components and on the word-frequency job, plus the equivalent
# shell pipelines. Figures from dfg run's summary (elements, time,
# context switches of all its processes from getrusage, processes,
# start-up) and, for the shell, from GNU time.
run_flow() {
	local name=run_flow dfg=$BUILD/bin/dfg work csv n=400000 job mode rep
	local reps=${DFG_BENCH_REPS:-3}
	work=$BUILD/bench-run-flow
	csv=$out/$name.csv
	[ -n "$quick" ] && n=40000 && reps=1
	[ -x "$dfg" ] || { echo "bench: no $dfg (make tools)" >&2; return 1; }
	rm -rf "$work" && mkdir -p "$work" || return 1
	cat $(ls /usr/share/games/fortunes/* | grep -v '\.dat$\|\.u8$') \
		>"$work/corpus.txt"
	{
		echo "digraph light {"
		echo "  gen [type=generate, count=$n, pattern=\"item {}\"];"
		for i in 1 2 3 4; do
			echo "  f$i [type=filter, expr=\"1\"]; m$i [type=map, expr=\"\$0\"];"
		done
		echo "  out [type=write_lines, file=\"light.out\"];"
		echo "  gen -> f1 -> m1 -> f2 -> m2 -> f3 -> m3 -> f4 -> m4 -> out;"
		echo "}"
	} >"$work/light.dot"
	sed -e 's|build/wordfreq/corpus.txt|corpus.txt|' \
	    -e 's|build/wordfreq/wordfreq.out|wordfreq.out|' \
		"$top/examples/wordfreq/wordfreq.dot" >"$work/wordfreq.dot"
	echo "# bench: $name"
	echo "job,mode,elements,seconds,elem_per_s,ctxsw_per_elem,processes,startup_s" >"$csv"
	# each figure is the best (shortest) of $reps runs, the modes taking
	# turns, so that a busy moment of the host does not pick the winner
	for job in light wordfreq; do
		rm -f "$work/$job".*.rows
		for rep in $(seq "$reps"); do
			for mode in folded unfolded; do
				(cd "$work" && "$dfg" run $([ $mode = unfolded ] && echo --no-fold) \
					"$job.dot" 2>"$job.$mode.log") ||
					{ echo "bench: $job $mode failed" >&2; cat "$work/$job.$mode.log" >&2; return 1; }
				# same components, same data: the same output
				mv "$work/$job.out" "$work/$job.$mode.out" || return 1
				awk -v job=$job -v mode=$mode '
					/^summary: [0-9]+ elements/ { el = $2; t = $7 }
					/^summary: [0-9]+ processes/ { p = $2; su = $8; cs = $(NF - 2) }
					END { printf "%s,%s,%d,%.4f,%.0f,%.6f,%d,%.4f\n", job, mode, el, t, el / t, cs / el, p, su }' \
					"$work/$job.$mode.log" >>"$work/$job.$mode.rows"
			done
			cmp -s "$work/$job.folded.out" "$work/$job.unfolded.out" ||
				{ echo "bench: $job: folded and unfolded outputs differ" >&2; return 1; }
		done
		for mode in folded unfolded; do
			sort -t, -k4,4g "$work/$job.$mode.rows" | head -n 1 >>"$csv"
		done
	done
	# the same jobs as shell pipelines (elements: those of the folded run)
	local el t cs best
	for job in light wordfreq; do
		el=$(awk -F, -v j=$job '$1 == j && $2 == "folded" { print $3 }' "$csv")
		best=
		for rep in $(seq "$reps"); do
			if [ $job = light ]; then
				/usr/bin/time -f '%e %w %c' -o "$work/sh.time" sh -c \
					"seq 0 $((n - 1)) | sed 's/^/item /' | cat | cat | cat | cat | cat | cat | cat | cat >'$work/light.sh.out'"
			else
				/usr/bin/time -f '%e %w %c' -o "$work/sh.time" sh -c \
					"'$top/examples/wordfreq/reference.sh' <'$work/corpus.txt' >'$work/wordfreq.sh.out'"
			fi
			read -r t w c <"$work/sh.time"
			if [ -z "$best" ] || awk -v a="$t" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
				best="$t $((w + c))"
			fi
		done
		read -r t cs <<<"$best"
		awk -v job=$job -v el=$el -v t=$t -v cs=$cs -v p=10 \
			'BEGIN { printf "%s,shell,%d,%.4f,%.0f,%.6f,%d,0\n", job, el, t, el / t, cs / el, p }' >>"$csv"
	done
	{
		echo "# Reproduce on the host, from the repository root:"
		echo "#   make bench   (tools/bench/run.sh, function run_flow)"
		echo "command: tools/bench/run.sh: dfg run [--no-fold] light.dot|wordfreq.dot (n=$n, best of $reps)"
		describe_machine
	} >"$out/$name.cmd"
	gnuplot -e "csv='$csv'; png='$out/$name.png'; term='$(gp_term)'; subtitle='$(uname -r), $(nproc) CPUs$([ -n "$quick" ] && echo ', quick run')'" \
		"$here/$name.gp" || { echo "bench: plot of $name failed" >&2; return 1; }
	cat "$csv"
	echo "# bench: $name -> ${out#"$top"/}/$name.{csv,cmd,png}"
}

# run_coll: dfg's collectives against Open MPI's, N = 2, 4, 8, into
# coll_raw.csv (every row of both), coll_ratio.csv (dfg over MPI, per
# collective, N and size) and coll_algos.csv (the patent algorithms over
# dfg's own ring/direct ones), with plots. Quick runs stop at 64 KiB.
# N = 8 stops at 4 MiB: 8 ranks on the VM's 2 CPUs make Open MPI's
# polling take seconds per call above that (8 s for a 16 MiB allreduce),
# which alone would take the run past half an hour.
run_coll() {
	local dfg=$BUILD/bin/coll_bench mpi=$BUILD/bin/coll_mpi
	local max=$((64 << 20)) max8=$((4 << 20)) t=0.2 n m tmp rc=0
	local raw=$out/coll_raw.csv
	if [ ! -x "$dfg" ] || [ ! -x "$mpi" ] || ! command -v mpirun >/dev/null; then
		echo "bench: no coll_bench, coll_mpi or mpirun (make tools, make deps)" >&2
		return 1
	fi
	[ -n "$quick" ] && { max=65536; max8=65536; t=0.02; }
	tmp=$(mktemp -d) || return 1
	echo "# bench: coll (dfg vs Open MPI)"
	for n in 2 4 8; do
		m=$max
		[ "$n" = 8 ] && m=$max8
		OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --allow-run-as-root \
			--oversubscribe -np "$n" "$mpi" -M "$m" -t "$t" \
			-o "$tmp/mpi$n.csv" || rc=1
		"$dfg" -n "$n" -M "$m" -t "$t" -o "$tmp/dfg$n.csv" || rc=1
		DFG_COLL_ALGO=allreduce=ring,reduce_scatter=ring,alltoall=direct \
			"$dfg" -n "$n" -M "$m" -t "$t" -o "$tmp/alt$n.csv" || rc=1
		DFG_COLL_ALGO=allreduce=rhalving,reduce_scatter=rhalving,alltoall=tiles \
			"$dfg" -n "$n" -M "$m" -t "$t" -o "$tmp/pat$n.csv" || rc=1
	done
	{
		head -n 1 "$tmp/mpi2.csv"
		for f in "$tmp"/mpi*.csv "$tmp"/dfg*.csv "$tmp"/alt*.csv "$tmp"/pat*.csv; do
			[ -f "$f" ] && tail -n +2 "$f" | sed "s/^dfg,/$(basename "$f" .csv | tr -d 0-9),/"
		done
	} >"$raw"
	"$here/coll_ratio.awk" "$raw" "$out/coll_ratio.csv" "$out/coll_algos.csv" || rc=1
	rm -rf "$tmp"
	{
		echo "# Reproduce on the host, from the repository root:"
		echo "#   make bench$([ -n "$quick" ] && echo '   (with DFG_BENCH_QUICK=1)')"
		echo "# which runs, inside the test VM (tools/vm/dfg-vm):"
		echo "#   tools/bench/run.sh"
		echo "# which ran, for N in 2 4 8 with MAX = $max for N = 2, 4 and $max8 for N = 8 (Open MPI's polling with 8 ranks on 2 CPUs takes seconds per call above it) (rows of coll_raw.csv: impl mpi, dfg = default table, alt = ring/direct forced, pat = patent algorithms forced):"
		echo "command: mpirun --allow-run-as-root --oversubscribe -np N ${mpi#"$top"/} -M MAX -t $t"
		echo "command: ${dfg#"$top"/} -n N -M MAX -t $t"
		echo "command: DFG_COLL_ALGO=allreduce=ring,reduce_scatter=ring,alltoall=direct ${dfg#"$top"/} -n N -M MAX -t $t"
		echo "command: DFG_COLL_ALGO=allreduce=rhalving,reduce_scatter=rhalving,alltoall=tiles ${dfg#"$top"/} -n N -M MAX -t $t"
		echo "ratios: tools/bench/coll_ratio.awk coll_raw.csv coll_ratio.csv coll_algos.csv"
		echo "openmpi: $(mpirun --version 2>/dev/null | head -n 1)"
		describe_machine
	} | tee "$out/coll_raw.cmd" >"$out/coll_ratio.cmd"
	cp "$out/coll_raw.cmd" "$out/coll_algos.cmd"
	# One script plots both: the algorithms' figure is column 9.
	gnuplot -e "csv='$out/coll_ratio.csv'; png='$out/coll_ratio.png'; term='$(gp_term)'; subtitle='$(uname -r), $(nproc) CPUs$([ -n "$quick" ] && echo ', quick run')'" \
		"$here/coll_ratio.gp" || { echo "bench: plot of coll_ratio failed" >&2; rc=1; }
	gnuplot -e "csv='$out/coll_algos.csv'; png='$out/coll_algos.png'; term='$(gp_term)'; ycol=9; what='dfg patent algorithms vs its ring/direct: speedup (alt latency / patent latency)'; subtitle='$(uname -r), $(nproc) CPUs$([ -n "$quick" ] && echo ', quick run')'" \
		"$here/coll_ratio.gp" || { echo "bench: plot of coll_algos failed" >&2; rc=1; }
	echo "# bench: coll -> ${out#"$top"/}/coll_{raw,ratio,algos}.{csv,cmd,png}"
	return "$rc"
}

# Is benchmark $1 selected (DFG_BENCH_ONLY)?
want() {
	[ -z "${DFG_BENCH_ONLY:-}" ] || [[ ",$DFG_BENCH_ONLY," == *",$1,"* ]]
}

fail=0
if want roundtrip; then run_bench cmd_roundtrip $quick || fail=1; fi
if want chan; then run_chan $quick || fail=1; fi
if want flow; then run_flow || fail=1; fi
if want coll; then run_coll || fail=1; fi
exit "$fail"
