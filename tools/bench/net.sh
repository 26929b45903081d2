#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The network benchmark (issue 12), run on node0 of the two-node rig:
# DFG_BENCH_ONLY=net make bench boots the rig (tools/bench/host.sh) and
# runs this there.
#
# dfg's collectives against Open MPI's across the two guests, with the
# method of the collectives benchmark (tools/bench/mpi/coll_vs_mpi: one
# MPI job, the same ranks call dfg and MPI_* on the same buffers, order
# alternating round by round, every result checked, the ratio MPI time /
# dfg time per round, median and range; algbw and busbw like nccl-tests):
#   allreduce 8 B-64 MiB, alltoall blocks of 8 B-64 KiB (coll_vs_mpi's
#   alltoall size is a rank's send buffer: 2 or 4 blocks).
# Jobs (net_jobs below):
#   1 rank per node (N = 2), the headline: one rank per 1-vCPU guest.
#   2 ranks per node (N = 4), oversubscribed (2 ranks on each 1-vCPU
#   guest): reported apart, with Open MPI's default (mpirun sees 2 slots
#   per host, so it does not yield) and with mpi_yield_when_idle = 1 (its
#   advice for oversubscription). dfg's table picks the hierarchy (hier)
#   for allreduce there; the default job also runs allreduce flat
#   (coll_vs_mpi -a rhalving) in the same rounds: net_alt_*.csv, the
#   hier/flat crossover.
#
# Open MPI's transport: before the jobs, a short probe times Open MPI
# alone (coll_vs_mpi -P: allreduce and alltoall, a few sizes) once with
# pml ucx over rxe0 (tools/vm/rig.env) and once with pml ob1 and the tcp
# BTL over eth0; the one whose times are lower (geometric mean of the
# per-point ratios) runs the benchmark, and net.cmd says which, with the
# probe's figures (net_mpi_probe.csv). DFG_BENCH_NET_MPI=ucx or ob1 skips
# the probe. dfg itself always runs over UCX as rig.env sets it (rc_verbs
# over rxe0). (dfg is left out of the probe: in the one quick run that
# had it, a job with Open MPI on ob1 stopped in dfg's alltoall of 64 B,
# then the tiles, both guests spinning, for 14 min until killed; the
# all-to-all across machines is now the put algorithm: DESIGN.md,
# "Across machines".)
#
# DFG_BENCH_QUICK: fewer sizes (step 4, allreduce to 1 MiB, alltoall
# blocks to 4 KiB), 3 rounds, shorter loops, no yield job: a check that
# everything works end to end, not figures.
#
# Writes net_summary.csv, net_rounds.csv (coll_vs_mpi's columns; nprocs 2:
# 1 rank per node, 4: 2 per node), net_alt_summary.csv, net_alt_rounds.csv,
# net_mpi_probe.csv, net_overlap_trace.txt, net_table.md, net_busbw.png
# (1 rank per node),
# net_busbw_2pn.png (2 per node), net_hier.png and net.cmd into
# $DFG_BENCH_OUT.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=${DFG_BENCH_OUT:-$BUILD/bench-stage}
bin=$BUILD/bin/coll_vs_mpi
peer=node1
quick=${DFG_BENCH_QUICK:-}
[ "$quick" = 0 ] && quick=
t_start=$(date +%s)
job_timeout=${DFG_BENCH_NET_JOB_TIMEOUT:-$([ -n "$quick" ] && echo 420 || echo 3600)}

# One job a line: ranks per node, MPI mode, rounds, loop seconds, sizes
# step, coll_vs_mpi -c list, extra coll_vs_mpi arguments. Sizes, meant to
# keep the full run near 45 min on a quiet host (TCG + Soft-RoCE: a 64 MiB
# allreduce takes seconds; at b7a2d56 the first job took about 18 min,
# the second's allreduce to 8 MiB 15 min, an 8 MiB call 2 s for either
# library at 2 ranks per node): 1 rank per node allreduce 8 B-64 MiB in
# powers of 2; 2 ranks per node in powers of 4, allreduce to 8 MiB,
# alltoall blocks to 64 KiB.
net_jobs() {
	if [ -n "$quick" ]; then
		echo "1 default 3 0.02 4 allreduce:8:$((1 << 20)),alltoall:16:$((8 << 10)) -O"
		echo "2 default 3 0.02 4 allreduce:8:$((1 << 20)),alltoall:32:$((16 << 10)) -a rhalving"
	else
		echo "1 default 5 0.05 2 allreduce:8:$((64 << 20)),alltoall:16:$((128 << 10)) -O"
		echo "2 default 5 0.05 4 allreduce:8:$((8 << 20)),alltoall:32:$((256 << 10)) -a rhalving"
		echo "2 yield 5 0.05 4 allreduce:8:$((8 << 20)),alltoall:32:$((256 << 10))"
	fi
}

# mpirun's arguments for Open MPI's transport $1 (ucx: rig.env's).
mpi_transport() {
	case $1 in
	ucx) ;;
	ob1) echo "-x OMPI_MCA_pml=ob1 -x OMPI_MCA_btl=tcp,vader,self -x OMPI_MCA_btl_tcp_if_include=eth0" ;;
	esac
}

# hosts PPN: mpirun's --host and -np for PPN ranks on each node.
hosts() {
	if [ "$1" = 1 ]; then
		echo "--host node0,$peer -np 2"
	else
		echo "--host node0:$1,$peer:$1 -np $((2 * $1))"
	fi
}

# run_job PREFIX PPN MODE TRANSPORT ARGS...: one coll_vs_mpi job; appends
# its command line to cmds. Under TCG a job's 64 MiB points take minutes:
# the limit (DFG_BENCH_NET_JOB_TIMEOUT seconds; 3600, quick 420) is
# generous, but a hung job still ends (dfg's alltoall across the nodes
# has hung: see below).
cmds=()
mpirun_extra=()
run_job() {
	local prefix=$1 ppn=$2 mode=$3 tr=$4 start=$SECONDS rc
	local -a a
	shift 4
	read -r -a a <<<"$(hosts "$ppn") $(mpi_transport "$tr")"
	[ "$mode" = yield ] && a+=(--mca mpi_yield_when_idle 1)
	a+=("${mpirun_extra[@]}")
	cmds+=("mpirun ${a[*]} ${bin#"$top"/} $* -l $mode -o JOBS/${prefix##*/}")
	timeout "$job_timeout" mpirun "${a[@]}" "$bin" "$@" -l "$mode" -o "$prefix" \
		</dev/null
	rc=$?
	cmds[-1]+="   ($((SECONDS - start)) s, exit $rc)"
	return "$rc"
}

if [ ! -x "$bin" ] || ! command -v mpirun >/dev/null; then
	echo "bench: net: no $bin or mpirun (make tools, tools/deps.sh)" >&2
	exit 1
fi
if ! ssh -o BatchMode=yes "$peer" true; then
	echo "bench: net: cannot ssh to $peer (run in the rig: dfg-vm --nodes 2)" >&2
	exit 1
fi
jobs=$BUILD/net-bench
rm -rf "$jobs" "$out"/net_* "$out/net.cmd" && mkdir -p "$jobs" "$out" || exit 1
rc=0

# Open MPI's transport: the probe, unless DFG_BENCH_NET_MPI says.
mpi=${DFG_BENCH_NET_MPI:-}
why=
case $mpi in
ucx|ob1) why="DFG_BENCH_NET_MPI=$mpi (no probe)" ;;
"")
	echo "# bench: net: Open MPI's transport, pml ucx (rxe0) against ob1 + tcp (eth0)"
	for tr in ucx ob1; do
		run_job "$jobs/probe-$tr" 1 default "$tr" -P -r 3 -t 0.02 -s 4 \
			-c allreduce:8:$((512 << 10)),alltoall:16:$((4 << 10)) ||
			{ echo "bench: net: probe $tr failed" >&2; rc=1; }
	done
	if [ "$rc" = 0 ]; then
		{
			echo "transport,coll,bytes,mpi_us"
			for tr in ucx ob1; do
				awk -F, -v tr="$tr" 'NR > 1 { print tr "," $1 "," $5 "," $10 }' \
					"$jobs/probe-${tr}_summary.csv"
			done
		} >"$out/net_mpi_probe.csv"
		# geometric mean over the points of ob1's time / ucx's
		g=$(awk -F, 'NR > 1 { t[$1, $2 " " $3] = $4; if ($1 == "ucx") k[$2 " " $3] }
			END { for (p in k) if (t["ob1", p] > 0 && t["ucx", p] > 0) {
				s += log(t["ob1", p] / t["ucx", p]); n++ }
			      printf "%.3f", n ? exp(s / n) : 1 }' "$out/net_mpi_probe.csv")
		if awk -v g="$g" 'BEGIN { exit !(g >= 1) }'; then
			mpi=ucx
		else
			mpi=ob1
		fi
		why="probe (net_mpi_probe.csv: allreduce 8 B-512 KiB, alltoall 16 B-4 KiB (sizes x4), 3 rounds): ob1+tcp time / ucx time, geometric mean over the points = $g, so $mpi"
	fi
	;;
*) echo "bench: net: DFG_BENCH_NET_MPI is ucx or ob1, not $mpi" >&2; exit 1 ;;
esac
echo "# bench: net: Open MPI over $mpi: $why"

[ "$rc" = 0 ] || exit 1
# A failed or hung job fails the run (host.sh then publishes nothing),
# but the others still run and what every job measured is staged, with
# the failure in net.cmd.
prefixes=()
while read -r ppn mode rounds t step list extra; do
	echo "# bench: net: $ppn rank(s) per node, MPI $mode"
	prefixes+=("$jobs/p$ppn-$mode")
	# shellcheck disable=SC2086 # extra: coll_vs_mpi's options
	run_job "$jobs/p$ppn-$mode" "$ppn" "$mode" "$mpi" -r "$rounds" \
		-t "$t" -s "$step" -c "$list" $extra ||
		{ echo "bench: net: $ppn per node, $mode failed" >&2; rc=1; }
done <<<"$(net_jobs)"

# Patent 002's overlap, traced: a few allreduce calls at 1 rank per node
# with DFG_COLL_TRACE=1 (rhalving.c: a line per reduced segment, with the
# next segment's transfer in flight or not as its reduction began and
# ended); the time it saves is the -O loop of the first job
# (net_alt_*.csv, alt_algo rhalving/nooverlap).
tsize=$([ -n "$quick" ] && echo $((1 << 20)) || echo $((4 << 20)))
echo "# bench: net: the overlap traced, allreduce $tsize B"
mpirun_extra=(-x DFG_COLL_TRACE=1)
run_job "$jobs/trace" 1 default "$mpi" -r 1 -t 0.0001 \
	-c "allreduce:$tsize:$tsize" 2>"$jobs/trace.err" ||
	{ grep -v '^dfg-trace ' "$jobs/trace.err" >&2; echo "bench: net: traced job failed" >&2; rc=1; }
mpirun_extra=()
grep '^dfg-trace rh ' "$jobs/trace.err" >"$out/net_overlap_trace.txt"
overlap=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^next_in_flight=/) {
		split(substr($i, 16), f, ","); n++
		if (f[1] >= 0) { p++; a += f[1] == 1; b += f[2] == 1 } } }
	END { printf "%d segments reduced, %d with a next transfer posted: in flight as the reduction began %d, still when it ended %d", n, p, a, b }' \
	"$out/net_overlap_trace.txt")
echo "# bench: net: overlap: $overlap"

for f in summary rounds alt_summary alt_rounds; do
	set --
	for p in "${prefixes[@]}"; do
		[ -e "${p}_$f.csv" ] && set -- "$@" "${p}_$f.csv"
	done
	[ $# -gt 0 ] || continue
	awk 'FNR > 1 || NR == 1' "$@" >"$out/net_$f.csv" || exit 1
done
"$here/coll_table.awk" "$out/net_summary.csv" >"$out/net_table.md" || rc=1
gterm=png
gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo && gterm=pngcairo
sub="2 TCG guests x 1 vCPU, Soft-RoCE (rxe0), Open MPI pml $mpi, $(uname -r)$([ -n "$quick" ] && echo ', quick run')"
for ppn in $(net_jobs | cut -d' ' -f1 | uniq); do
	modes=$(net_jobs | awk -v p="$ppn" '$1 == p { print $2 }' | xargs)
	png=$out/net_busbw$([ "$ppn" -gt 1 ] && echo "_${ppn}pn").png
	gnuplot -e "csv='$out/net_summary.csv'; png='$png'; term='$gterm'; n=$((2 * ppn)); modes='$modes'; colls='allreduce alltoall'; what='2 nodes x $ppn rank(s)'; subtitle='$sub$([ "$ppn" -gt 1 ] && echo ', oversubscribed')'" \
		"$here/coll_busbw.gp" || rc=1
done
if [ -s "$out/net_alt_summary.csv" ]; then
	gnuplot -e "csv='$out/net_alt_summary.csv'; png='$out/net_hier.png'; term='$gterm'; subtitle='$sub'" \
		"$here/net_hier.gp" || rc=1
fi
rm -rf "$jobs"

t_end=$(date +%s)
{
	echo "# Reproduce on the host, from the repository root:"
	echo "#   DFG_BENCH_ONLY=net make bench$([ -n "$quick" ] && echo '   (with DFG_BENCH_QUICK=1)')"
	echo "# which runs tools/bench/host.sh, which boots the two-node rig (tools/vm/dfg-vm --nodes 2, environment tools/vm/rig.env) and runs tools/bench/net.sh on node0"
	echo "# which ran (JOBS: a scratch directory; rows concatenated into net_*.csv; (N s): the job's duration):"
	for c in "${cmds[@]}"; do echo "command: $c"; done
	echo "openmpi: $(mpirun --version 2>/dev/null | head -n 1)"
	echo "openmpi_transport: $mpi: $why"
	echo "openmpi_transports: ucx = pml ucx over rxe0 (tools/vm/rig.env: UCX_TLS=$UCX_TLS, UCX_NET_DEVICES=$UCX_NET_DEVICES, UCX_IB_GID_INDEX=$UCX_IB_GID_INDEX); ob1 = $(mpi_transport ob1)"
	echo "dfg_transport: UCX (coll/xport_ucx.c) with the same UCX_* environment, whatever Open MPI's transport"
	echo "ucx: $(ucx_info -v 2>/dev/null | sed -n 's/^# *//p' | head -n 1)"
	echo "nprocs: 2 = 1 rank per node (headline, no oversubscription); 4 = 2 ranks per node on 1-vCPU guests (oversubscribed, reported apart)"
	echo "mpi_mode: default = mpirun's defaults (with --host node:2 Open MPI sees 2 slots per node and does not yield); yield = --mca mpi_yield_when_idle 1; the CSV's mpi_yield column is the value the job ran with (MPI_T)"
	echo "alt: net_alt_*.csv: dfg's table choice (hier at 2 ranks per node) against -a rhalving (flat recursive halving over all 4 ranks) in the same rounds; alt_over_dfg > 1: the table's choice faster"
	echo "overlap: net_overlap_trace.txt (DFG_COLL_TRACE=1, allreduce $tsize B, 1 rank per node; times in us since the call began): $overlap"
	echo "overlap_saved: net_alt_*.csv rows with alt_algo rhalving/nooverlap (coll_vs_mpi -O: DFG_COLL_OVERLAP=0 in the same rounds); alt_over_dfg > 1: the overlap saves time"
	echo "table: tools/bench/coll_table.awk net_summary.csv > net_table.md"
	echo "distortion: TCG emulates both CPUs and Soft-RoCE runs RDMA in the guest kernels over a virtual Ethernet carried by UNIX sockets on one host: round trips are milliseconds and bandwidth tens of MB/s, and every byte is copied by emulated CPUs; only ratios measured in the same run mean anything"
	echo "duration_s: $((t_end - t_start))"
	echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	echo "git: $(git -C "$top" -c safe.directory='*' rev-parse --short HEAD 2>/dev/null || echo unknown)"
	echo "kernel: $(uname -srvm)"
	echo "cpus: $(nproc) per node, 2 nodes"
} >"$out/net.cmd"
cat "$out/net_table.md"
echo "# bench: net ($((t_end - t_start)) s) -> ${out#"$top"/}/net_*.csv, net_table.md, net_*.png, net.cmd"
exit "$rc"
