#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# host.sh: the host side of every benchmark; `make bench` runs it.
#
#   tools/bench/host.sh                 every benchmark: tools/bench/run.sh
#                                       (DFG_BENCH_ONLY picks some)
#   tools/bench/host.sh CMD [ARG...]    only CMD, e.g.
#                                       tools/bench/chan_wait_path.sh 5
#
# Runs the command in the test VM (tools/vm/dfg-vm) with DFG_BENCH_OUT set
# to a staging directory ($BUILD/bench-stage, emptied first), where the
# benchmark writes its CSVs, plots and .cmd files. Meanwhile it samples,
# once a second, the host's CPU time (/proc/stat) and the qemu process's
# own (/proc/PID/stat); inside the guest, host.sh --guest wraps the
# command so that the guest's CPU time and steal over the run land in the
# stage too (guest.stat). Then it appends the contention record to every .cmd file
# staged and publishes the staged files to bench/results, or refuses to.
#
# The rule: results are published only if, over the VM's run, the host's
# other processes (all CPU time but qemu's) used at most
# DFG_BENCH_MAX_OTHER_CPU percent of one core (default 10: on this 2-core
# host the VM's 2 vCPUs want both cores, so any other runnable process
# takes its time from a vCPU), and the guest saw at most DFG_BENCH_MAX_STEAL
# percent steal (default 2). Otherwise it says why, leaves the results in
# the stage and exits 1. A failed command publishes nothing either.
#
# Publishing: for every staged NAME.cmd, bench/results/NAME.* and
# bench/results/NAME_* go first (no stale file of an earlier run stays
# beside the new ones), then every staged file is copied.
#
# DFG_BENCH_ONLY=hub and/or net boot the two-node rig instead (below).
#
# Passes every DFG_BENCH_* variable set into the guest (dfg-vm passes
# only some; DFG_BENCH_ONLY, _QUICK, _REPS, _FLOW_JOBS, _COLL_ENV,
# _RULES_SCENARIOS, _NET_*, _HUB_* are the benchmarks' knobs), but for
# this side's own: DFG_BENCH_PUBLISH, _MAX_OTHER_CPU, _MAX_STEAL,
# _VM_TIMEOUT, and DFG_BENCH_OUT, which is the stage.
# DFG_BENCH_PUBLISH: where to publish (default bench/results).
# DFG_BENCH_VM_TIMEOUT: dfg-vm's limit in seconds (default 10800: the full
# collective run takes 30-45 min on a quiet host, over an hour on a loaded
# one).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=${DFG_BENCH_PUBLISH:-$top/bench/results}
stage=$BUILD/bench-stage
max_other=${DFG_BENCH_MAX_OTHER_CPU:-10}
max_steal=${DFG_BENCH_MAX_STEAL:-2}
hz=$(getconf CLK_TCK)

# host.sh --guest CMD...: the guest side, run in the VM by the host side
# below: CMD between two reads of the guest's /proc/stat, whose busy and
# steal shares over the run go to $DFG_BENCH_OUT/guest.stat.
if [ "${1:-}" = --guest ]; then
	shift
	gstat() {
		awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i;
			print t - $5 - $6, $9, t }' /proc/stat
	}
	mkdir -p "$DFG_BENCH_OUT" || exit 1
	s0=$(gstat)
	"$@"
	rc=$?
	s1=$(gstat)
	read -r b0 st0 t0 <<<"$s0"
	read -r b1 st1 t1 <<<"$s1"
	{
		awk -v b=$((b1 - b0)) -v s=$((st1 - st0)) -v t=$((t1 - t0)) 'BEGIN {
			printf "guest_busy_pct: %.2f\nguest_steal_pct: %.2f\n",
				t ? 100 * b / t : 0, t ? 100 * s / t : 0 }'
		echo "guest_loadavg_after: $(cut -d' ' -f1-3 /proc/loadavg)"
	} >"$DFG_BENCH_OUT/guest.stat"
	exit "$rc"
fi

# Benchmarks that need the two-node rig (tools/vm/dfg-vm --nodes 2), each
# tools/bench/NAME.sh run on node0: hub (patent 004's prefetch), net
# (collectives across the nodes against Open MPI). DFG_BENCH_ONLY naming
# only such benchmarks boots the rig and runs them one after the other
# (run_rig below); they cannot share a run with the one-VM benchmarks of
# run.sh. The contention rule then counts every node's qemu as the run's
# own CPU time. DFG_BENCH_RIG_CPUS: vCPUs per rig node (dfg-vm --cpus;
# default 1, dfg-vm's for --nodes).
rig_benches=(hub net)
nodes=1
vm_args=()
if [ $# -eq 0 ]; then
	set -- "$here/run.sh"
	if [ -n "${DFG_BENCH_ONLY:-}" ]; then
		rig=() one=()
		IFS=, read -r -a only <<<"$DFG_BENCH_ONLY"
		for b in "${only[@]}"; do
			if [[ " ${rig_benches[*]} " == *" $b "* ]]; then
				rig+=("$here/$b.sh")
			else
				one+=("$b")
			fi
		done
		if [ "${#rig[@]}" -gt 0 ] && [ "${#one[@]}" -gt 0 ]; then
			echo "bench: ${rig_benches[*]} run in the two-node rig, ${one[*]} in one VM: not in one DFG_BENCH_ONLY" >&2
			exit 2
		fi
		if [ "${#rig[@]}" -gt 0 ]; then
			nodes=2
			vm_args=(--nodes "$nodes"
				 ${DFG_BENCH_RIG_CPUS:+--cpus "$DFG_BENCH_RIG_CPUS"})
			set -- "$here/host.sh" --rig "${rig[@]}"
		fi
	fi
fi

# host.sh --rig SCRIPT...: in the rig's node0, each SCRIPT in turn; fails
# if any did.
if [ "${1:-}" = --rig ]; then
	shift
	rc=0
	for s in "$@"; do
		"$s" || rc=1
	done
	exit "$rc"
fi

# "busy total" jiffies of the host, all CPUs.
host_stat() {
	awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i;
		print t - $5 - $6, t }' /proc/stat
}

# The qemu processes under process $1 (dfg-vm runs each node's through
# setpriv and timeout), one pid a line, or nothing.
find_qemu() {
	ps -e -o pid=,ppid=,comm= | awk -v root="$1" '
		{ parent[$1] = $2; comm[$1] = $3 }
		END { for (p in comm) if (comm[p] ~ /^qemu-system/) {
			for (q = p; q in parent && q != root && q > 1; q = parent[q]) ;
			if (q == root) print p
		} }'
}

# utime + stime of process $1 in jiffies (threads included), or nothing.
proc_cpu() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null
}

rm -rf "$stage" && mkdir -p "$stage" || exit 1
env_args=(env "DFG_BENCH_OUT=$stage")
# a knob named in no list here reaches the guest all the same
for v in $(compgen -e DFG_BENCH_); do
	case $v in
	DFG_BENCH_OUT | DFG_BENCH_PUBLISH | DFG_BENCH_MAX_OTHER_CPU | \
	DFG_BENCH_MAX_STEAL | DFG_BENCH_VM_TIMEOUT) continue ;;
	esac
	[ -n "${!v:-}" ] && env_args+=("$v=${!v}")
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s.%N)
"$top/tools/vm/dfg-vm" "${vm_args[@]}" \
	--timeout "${DFG_BENCH_VM_TIMEOUT:-10800}" -- \
	"${env_args[@]}" "$here/host.sh" --guest "$@" &
vm=$!
# Every node's qemu is the run's own: their CPU time, summed, is taken out
# of the host's. A node's last sample stands once its qemu has exited.
declare -A qstart qlast
qemu= h0= q0= h1= q1= t1=
while kill -0 "$vm" 2>/dev/null; do
	if [ -z "$qemu" ]; then
		mapfile -t pids < <(find_qemu "$vm")
		if [ "${#pids[@]}" -ge "$nodes" ]; then
			qemu=${pids[*]}
			for p in "${pids[@]}"; do
				qstart[$p]=$(proc_cpu "$p")
				qlast[$p]=${qstart[$p]}
			done
			h0=$(host_stat)
			t0=$(date +%s.%N)
		fi
	else
		alive=0
		for p in $qemu; do
			c=$(proc_cpu "$p") && [ -n "$c" ] || continue
			qlast[$p]=$c
			alive=1
		done
		if [ "$alive" = 1 ]; then
			# the last sample while a qemu lives closes the interval
			q0=0 q1=0
			for p in $qemu; do
				q0=$((q0 + ${qstart[$p]:-0}))
				q1=$((q1 + ${qlast[$p]:-0}))
			done
			h1=$(host_stat)
			t1=$(date +%s.%N)
		fi
	fi
	sleep 1
done
wait "$vm"
rc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)

mapfile -t cmds < <(find "$stage" -name '*.cmd' | sort)
if [ "${#cmds[@]}" = 0 ]; then
	echo "bench: the run staged no .cmd file in ${stage#"$top"/}: nothing to publish" >&2
	[ "$rc" = 0 ] && exit 1
	exit "$rc"
fi
if [ -z "$q0" ] || [ -z "$q1" ]; then
	verdict="refused: no samples of the qemu process: cannot judge the host's load"
else
	read -r hb0 ht0 <<<"$h0"
	read -r hb1 ht1 <<<"$h1"
	steal=$(sed -n 's/^guest_steal_pct: //p' "$stage/guest.stat" 2>/dev/null)
	verdict=$(awk -v hb=$((hb1 - hb0)) -v q=$((q1 - q0)) -v hz="$hz" \
		-v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		-v mo="$max_other" -v ms="$max_steal" -v steal="${steal:-}" 'BEGIN {
		other = (hb - q) / hz; if (other < 0) other = 0
		printf "host_window_s: %.1f (from qemu seen to its last sample)\n", wall
		printf "host_qemu_cpu_s: %.1f (%.0f%% of one core)\n", q / hz, 100 * q / hz / wall
		printf "host_other_cpu_s: %.1f (%.1f%% of one core)\n", other, 100 * other / wall
		if (100 * other / wall > mo)
			printf "refused: other host processes used %.1f%% of one core (limit %s%%, DFG_BENCH_MAX_OTHER_CPU)\n", 100 * other / wall, mo
		else if (steal == "")
			print "refused: the guest recorded no steal figure (guest.stat)"
		else if (steal + 0 > ms)
			printf "refused: guest steal %.2f%% (limit %s%%, DFG_BENCH_MAX_STEAL)\n", steal, ms
		else
			print "accepted"
	}')
fi
[ "$rc" != 0 ] && verdict=$(printf '%s\nrefused: the VM run failed (%s)' \
	"$(echo "$verdict" | grep -v '^refused\|^accepted')" "$rc")
record=$(
	echo "# host contention over the run (tools/bench/host.sh):"
	echo "host_command: tools/bench/host.sh $(printf '%q ' "${@#"$top"/}")"
	echo "$verdict" | grep -v '^refused\|^accepted'
	grep -h . "$stage/guest.stat" 2>/dev/null
	echo "host_loadavg: before $load0, after $load1"
	echo "rule: publish only if other host processes used <= $max_other% of one core (DFG_BENCH_MAX_OTHER_CPU${DFG_BENCH_MAX_OTHER_CPU:+, set in the environment}) and guest steal <= $max_steal% (DFG_BENCH_MAX_STEAL${DFG_BENCH_MAX_STEAL:+, set in the environment})"
	echo "verdict: $(echo "$verdict" | tail -n 1)"
)
for f in "${cmds[@]}"; do
	echo "$record" >>"$f"
done
echo "$record"
case "$verdict" in
*refused:*)
	echo "bench: $(echo "$verdict" | tail -n 1); results left in ${stage#"$top"/}, ${out#"$top"/} untouched" >&2
	exit 1 ;;
esac
mkdir -p "$out" || exit 1
for f in "${cmds[@]}"; do
	rel=${f#"$stage"/}
	name=${rel%.cmd}
	rm -rf "$out/$name".* "$out/$name"_*
done
(cd "$stage" && find . -type f ! -name guest.stat -print0 |
	xargs -0 cp --parents -t "$out") || exit 1
echo "bench: $(cd "$stage" && find . -name '*.cmd' | sed 's|^\./||; s|\.cmd$||' | xargs) -> ${out#"$top"/}"
