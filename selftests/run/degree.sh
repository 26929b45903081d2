#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dfg run at the highest degree dfg plan accepts (DFG_FLOW_MAX_DEGREE,
# 1024), in the test VM (TAP output):
#   tools/vm/dfg-vm -- selftests/run/degree.sh
# 1024 instances of a folded pipeline write one file each. With --isolate
# the coordinator watches 1024 processes, which with its own descriptors
# is past a RLIMIT_NOFILE of 1024: once the soft limit (which dfg raises),
# once also the hard limit (processes without a pidfd). In the default
# mode one worker pool runs the 1024 set instances (its descriptors: the
# 1024 files, past the soft limit, which dfg raises).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here
while [ "$top" != / ] && [ ! -f "$top/Kbuild" ]; do top=$(dirname "$top"); done
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
# The guest's /tmp is a tmpfs (the tree is on 9p, far slower to create
# 1024 files in).
work=$(mktemp -d /tmp/dfg-degree.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
export LC_ALL=C

n=0
fails=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else
		fails=$((fails + 1)); echo "not ok $n - $1"; fi
}

cd "$work" || exit 1
echo "TAP version 13"
echo "1..9"

cat >deg.dot <<'G'
digraph deg {
	gen [type=generate, count=20000, pattern="n {}", degree=1024];
	m   [type=map, expr="$0", degree=1024];
	out [type=write_lines, file="d{}/deg.out", degree=1024];
	gen -> m -> out;
}
G
seq 0 19999 | sed 's/^/n /' | sort >deg.ref
# A directory per instance: 1024 files created at once in one directory
# queue on its lock, past the guest's hung-task timeout under TCG.
mkdir $(seq -f "d%g" 0 1023)
echo "# RLIMIT_NOFILE here: soft $(ulimit -S -n), hard $(ulimit -H -n)"
# run NAME PROCESSES MODE ULIMIT_ARGS: dfg run MODE deg.dot under
# "ulimit ULIMIT_ARGS"
run() {
	local name=$1 procs=$2 mode=$3 start end rc
	shift 3
	rm -f d*/deg.out
	start=$(date +%s%N)
	(ulimit "$@" && exec "$dfg" run -v $mode deg.dot) >deg.log 2>&1
	rc=$?
	end=$(date +%s%N)
	echo "# $name took $(((end - start) / 1000000)) ms"
	check "$name: exit 0 ($rc: $(grep -v '^\[' deg.log | tail -n 2 | tr '\n' ' '))" \
		"[ $rc = 0 ]"
	check "$name: $procs processes" "grep -q '^summary: $procs processes' deg.log"
	check "$name: output = seq" \
		"[ -f d1023/deg.out ] && cat d*/deg.out | sort | cmp -s - deg.ref"
}
# dfg raises the soft limit to the hard one
run "degree 1024, soft limit 1024" 1024 --isolate -S -n 1024
# the hard limit too: processes past it are watched without a pidfd
run "degree 1024, hard limit 1024" 1024 --isolate -n 1024
# one pool for the 1024 instances, 2 workers
run "degree 1024 in a pool of 2 workers, soft limit 1024" 1 "--workers 2" \
	-S -n 1024
echo "# Totals: pass:$((n - fails)) fail:$fails xfail:0 xpass:0 skip:0 error:0"
[ "$fails" = 0 ]
