#!/bin/bash
# make demo: boots the test VM, loads dfg.ko, shows what the module says
# about itself through each interface, and runs the command-path benchmark.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${DFG_VM:-}" ]; then
	exec "$top/tools/vm/dfg-vm" -- "$top/tools/demo.sh"
fi
bin=$top/build/bin
echo "== dfgctl info (ioctl)"
"$bin/dfgctl" info
echo "== dfgctl info --uring"
"$bin/dfgctl" info --uring
echo "== dfgctl info --netlink"
"$bin/dfgctl" info --netlink
echo "== arena shared by two processes (examples/arena_demo.c)"
"$bin/arena_demo"
echo "== zero-copy pipeline over channels (examples/pipeline_demo.c)"
"$bin/pipeline_demo" 20000
echo "== a team of 4 processes: allreduce and alltoall, checked (examples/coll_demo.c)"
"$bin/coll_demo" 4 4
echo "== benchmarks, quick: command round trip, channels vs pipe/socket/CMA"
# Quick runs into build/: the figures in bench/results/ come from make bench.
DFG_BENCH_ONLY=roundtrip,chan DFG_BENCH_QUICK=1 DFG_BENCH_OUT=$top/build/demo-bench \
	"$top/tools/bench/run.sh"
echo "== dfgctl stats"
"$bin/dfgctl" stats
echo "== dfg run: word frequency over the fortunes corpus (examples/wordfreq)"
wf=$top/build/wordfreq
mkdir -p "$wf"
cat $(ls /usr/share/games/fortunes/* | grep -v '\.dat$\|\.u8$') >"$wf/corpus.txt"
(cd "$top" && "$bin/dfg" plan examples/wordfreq/wordfreq.dot &&
	"$bin/dfg" run -v examples/wordfreq/wordfreq.dot)
echo "-- top words"
head -n 15 "$wf/wordfreq.out"
"$top/examples/wordfreq/reference.sh" <"$wf/corpus.txt" >"$wf/reference.out"
if cmp -s "$wf/wordfreq.out" "$wf/reference.out"; then
	echo "-- output matches the coreutils reference" \
		"($(wc -l <"$wf/reference.out") words)"
else
	echo "-- output DIFFERS from the coreutils reference" >&2
	exit 1
fi
