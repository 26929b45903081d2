#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# host.sh: the host side of `make bench`. Runs tools/bench/run.sh in the
# test VM (tools/vm/dfg-vm) while sampling, once a second, the host's CPU
# time (/proc/stat) and the qemu process's own (/proc/PID/stat), then
# publishes the collective benchmark's results (staged by run.sh in
# build/bench-coll) to bench/results, or refuses to.
#
# The rule: results are written only if, over the VM's run, the host's
# other processes (all CPU time but qemu's) used at most
# DFG_BENCH_MAX_OTHER_CPU percent of one core (default 10: on this 2-core
# host the VM's 2 vCPUs want both cores, so any other runnable process
# takes its time from a vCPU), and the guest saw at most DFG_BENCH_MAX_STEAL
# percent steal (default 2). Otherwise it says why, leaves the results in
# build/bench-coll and exits 1. The figures, the limits and where they
# came from go into coll.cmd.
#
# Passes DFG_BENCH_ONLY, DFG_BENCH_QUICK, DFG_BENCH_REPS to run.sh (dfg-vm
# passes only some variables into the guest). DFG_BENCH_OUT: where to
# publish (default bench/results). DFG_BENCH_VM_TIMEOUT: dfg-vm's limit in
# seconds (default 10800: the full collective run takes 30-45 min on a
# quiet host, over an hour on a loaded one).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=${DFG_BENCH_OUT:-$top/bench/results}
stage=$BUILD/bench-coll
max_other=${DFG_BENCH_MAX_OTHER_CPU:-10}
max_steal=${DFG_BENCH_MAX_STEAL:-2}
hz=$(getconf CLK_TCK)

# "busy total" jiffies of the host, all CPUs.
host_stat() {
	awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i;
		print t - $5 - $6, t }' /proc/stat
}

# The qemu process under process $1 (dfg-vm runs it through setpriv and
# timeout), or nothing.
find_qemu() {
	ps -e -o pid=,ppid=,comm= | awk -v root="$1" '
		{ parent[$1] = $2; comm[$1] = $3 }
		END { for (p in comm) if (comm[p] ~ /^qemu-system/) {
			for (q = p; q in parent && q != root && q > 1; q = parent[q]) ;
			if (q == root) { print p; exit }
		} }'
}

# utime + stime of process $1 in jiffies (threads included), or nothing.
proc_cpu() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null
}

rm -rf "$stage"
env_args=(env)
for v in DFG_BENCH_ONLY DFG_BENCH_QUICK DFG_BENCH_REPS DFG_BENCH_OUT; do
	[ -n "${!v:-}" ] && env_args+=("$v=${!v}")
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s.%N)
"$top/tools/vm/dfg-vm" --timeout "${DFG_BENCH_VM_TIMEOUT:-10800}" -- \
	"${env_args[@]}" "$here/run.sh" &
vm=$!
qemu= h0= q0= h1= q1= t1=
while kill -0 "$vm" 2>/dev/null; do
	if [ -z "$qemu" ]; then
		qemu=$(find_qemu "$vm")
		if [ -n "$qemu" ]; then
			q0=$(proc_cpu "$qemu")
			h0=$(host_stat)
			t0=$(date +%s.%N)
		fi
	elif c=$(proc_cpu "$qemu") && [ -n "$c" ]; then
		# the last sample while qemu lives closes the interval
		q1=$c
		h1=$(host_stat)
		t1=$(date +%s.%N)
	fi
	sleep 1
done
wait "$vm"
rc=$?
load1=$(cut -d' ' -f1-3 /proc/loadavg)

[ -f "$stage/coll.cmd" ] || exit "$rc"	# coll did not run
if [ -z "$q0" ] || [ -z "$q1" ]; then
	echo "bench: no samples of the qemu process: cannot judge the host's load" >&2
	exit 1
fi
read -r hb0 ht0 <<<"$h0"
read -r hb1 ht1 <<<"$h1"
steal=$(sed -n 's/^guest_steal_pct: //p' "$stage/coll.cmd")
verdict=$(awk -v hb=$((hb1 - hb0)) -v q=$((q1 - q0)) -v hz="$hz" \
	-v wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
	-v mo="$max_other" -v ms="$max_steal" -v steal="${steal:-0}" 'BEGIN {
	other = (hb - q) / hz; if (other < 0) other = 0
	printf "host_window_s: %.1f (from qemu seen to its last sample)\n", wall
	printf "host_qemu_cpu_s: %.1f (%.0f%% of one core)\n", q / hz, 100 * q / hz / wall
	printf "host_other_cpu_s: %.1f (%.1f%% of one core)\n", other, 100 * other / wall
	if (100 * other / wall > mo)
		printf "refused: other host processes used %.1f%% of one core (limit %s%%, DFG_BENCH_MAX_OTHER_CPU)\n", 100 * other / wall, mo
	else if (steal + 0 > ms)
		printf "refused: guest steal %.2f%% (limit %s%%, DFG_BENCH_MAX_STEAL)\n", steal, ms
	else
		print "accepted"
}')
{
	echo "$verdict" | grep -v '^refused\|^accepted'
	echo "host_loadavg: before $load0, after $load1"
	echo "rule: publish only if other host processes used <= $max_other% of one core (DFG_BENCH_MAX_OTHER_CPU${DFG_BENCH_MAX_OTHER_CPU:+, set in the environment}) and guest steal <= $max_steal% (DFG_BENCH_MAX_STEAL${DFG_BENCH_MAX_STEAL:+, set in the environment})"
	echo "verdict: $(echo "$verdict" | tail -n 1)"
} >>"$stage/coll.cmd"
tail -n 7 "$stage/coll.cmd"
if [ "$rc" != 0 ]; then
	echo "bench: the VM run failed ($rc); nothing published, see ${stage#"$top"/}" >&2
	exit "$rc"
fi
case "$verdict" in
*refused:*)
	echo "bench: $(echo "$verdict" | tail -n 1); results left in ${stage#"$top"/}, ${out#"$top"/} untouched" >&2
	exit 1 ;;
esac
mkdir -p "$out" || exit 1
rm -f "$out"/coll_* "$out"/coll.cmd
cp "$stage"/coll_* "$stage"/coll.cmd "$out"/ || exit 1
echo "bench: coll -> ${out#"$top"/}/coll_*"
