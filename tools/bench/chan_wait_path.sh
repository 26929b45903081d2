#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The parked channel round trip over the thread's io_uring
# (DFG_WAIT_URING=1: libdfg's default for a thread whose ring the
# application shares) against ioctl (DFG_NO_URING=1; what a lone wait
# takes by default), run inside the test VM by
# tools/bench/host.sh, which records the host's contention and publishes
# to bench/results only from a quiet host:
#
#   tools/bench/host.sh tools/bench/chan_wait_path.sh [ROUNDS]
#
# Each round runs chan_bench's latency benchmark once per path, the order
# alternating round by round (ring first in odd rounds); each run measures
# its own pipe baseline. Writes chan_wait_path.csv to $DFG_BENCH_OUT
# (host.sh's stage; default build/bench-stage): per round and case, both
# paths' dfg_park round trip and their ratio ring / ioctl (> 1: the ring is
# slower); prints the median and range per case, also into
# chan_wait_path.cmd.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
rounds=${1:-5}
dir=${DFG_BENCH_OUT:-$top/build/bench-stage}
out=$dir/chan_wait_path.csv
mkdir -p "$dir"
tmp=$(mktemp -d "$top/build/chan_wait_path.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

run() {	# run PATH ROUND
	mkdir -p "$tmp/$1$2"
	if [ "$1" = ioctl ]; then
		DFG_NO_URING=1 build/bin/chan_bench -d "$tmp/$1$2" -b latency -r 3
	else
		env -u DFG_NO_URING DFG_WAIT_URING=1 \
			build/bin/chan_bench -d "$tmp/$1$2" -b latency -r 3
	fi >/dev/null
}
for r in $(seq 1 "$rounds"); do
	if [ $((r % 2)) = 1 ]; then run ring "$r"; run ioctl "$r"
	else run ioctl "$r"; run ring "$r"; fi
done

echo "round,size,mode,ring_ns,ioctl_ns,ring_over_ioctl,ring_pipe_ns,ioctl_pipe_ns" >"$out"
for r in $(seq 1 "$rounds"); do
	awk -F, -v r="$r" '
	FNR == 1 { f++ }
	$1 == "dfg_park" { d[f, $2 "," $3] = $4; k[$2 "," $3] = 1 }
	$1 == "pipe" { p[f, $2 "," $3] = $4 }
	END { for (c in k) printf "%s,%s,%.1f,%.1f,%.4f,%.1f,%.1f\n", r, c,
		d[1, c], d[2, c], d[1, c] / d[2, c], p[1, c], p[2, c] }' \
		"$tmp/ring$r/chan_latency.csv" "$tmp/ioctl$r/chan_latency.csv" |
		sort -t, -k2,2n -k3,3
done >>"$out"
{
echo "# Reproduce on the host, from the repository root:"
echo "#   tools/bench/host.sh tools/bench/chan_wait_path.sh $rounds"
echo "# (chan_bench's latency benchmark once over the thread's io_uring (DFG_WAIT_URING=1) and once"
echo "# with DFG_NO_URING=1 per round, order alternating, each with its own pipe"
echo "# baseline; ring_over_ioctl is taken within the round)"
echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
echo "git: $(git -c safe.directory='*' rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "kernel: $(uname -srvm)"
echo "cpus: $(nproc)"
# median [min..max] of ring/ioctl per case (mawk: no asort, so sort first)
tail -n +2 "$out" | sort -t, -k2,2n -k3,3 -k6,6g |
	awk -F, '{ k = $2 " B " $3; if (k != prev) { if (n) show(); n = 0 }
		prev = k; v[++n] = $6 }
	function show() { printf "%-12s ring/ioctl median %.2f [%.2f..%.2f]\n",
		prev, v[int((n + 1) / 2)], v[1], v[n] }
	END { if (n) show() }'
} | tee "$dir/chan_wait_path.cmd" | grep -v "^#\|^[a-z]*: "
