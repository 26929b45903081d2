#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a folded job's time goes: perf record (cpu-clock, the only event
# a TCG guest has) of `dfg run`, then the top symbols and the share of
# each library. Jobs: run.sh's light job (generate, 4 x filter "1" +
# map "$0", write_lines; folded into one set) over ELEMENTS, or the
# word-frequency job (examples/wordfreq/wordfreq.dot) on the fortunes
# corpus, as run.sh's run_flow runs them. For the word-frequency job it
# also prints the wall time of the whole process beside the summary's
# (which starts after exec and dynamic loading and ends before the
# teardown) and the same for a 20-line corpus (fixed costs alone). Run it
# in the test VM:
#
#   tools/vm/dfg-vm -- tools/bench/flow_profile.sh [ELEMENTS | wordfreq]
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
job=${1:-400000}
# shellcheck source=tools/bench/light_dot.sh
. "$top/tools/bench/light_dot.sh"
command -v perf >/dev/null || { echo "flow_profile: no perf (linux-perf)" >&2; exit 1; }
work=$(mktemp -d /tmp/dfg-flow-profile.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# wall_vs_summary DOT: the process's wall time and the summary's, in ms
wall_vs_summary() {
	local s e
	s=$(date +%s%N)
	"$dfg" run "$1" 2>wall.log || { cat wall.log; return 1; }
	e=$(date +%s%N)
	echo "$1: wall $(((e - s) / 1000000)) ms, summary $(awk '/^summary: [0-9]+ elements/ { print $7 * 1000 }' wall.log) ms"
}

if [ "$job" = wordfreq ]; then
	cat $(ls /usr/share/games/fortunes/* | grep -v '\.dat$\|\.u8$') >freq.txt
	head -n 20 freq.txt >tiny.txt
	for f in freq tiny; do
		sed -e "s|build/wordfreq/corpus.txt|$f.txt|" \
		    -e "s|build/wordfreq/wordfreq.out|$f.out|" \
			"$top/examples/wordfreq/wordfreq.dot" >$f.dot
	done
	"$top/examples/wordfreq/reference.sh" <freq.txt >freq.ref
	wall_vs_summary freq.dot || exit 1
	wall_vs_summary tiny.dot || exit 1
	perf record -q -e cpu-clock -F 2000 -o perf.data -- "$dfg" run freq.dot \
		>run.log 2>&1 || { cat run.log; exit 1; }
	cmp -s freq.out freq.ref || { echo "flow_profile: wrong output" >&2; exit 1; }
else
	light_dot "$job" >light.dot
	perf record -q -e cpu-clock -F 2000 -o perf.data -- "$dfg" run light.dot \
		>run.log 2>&1 || { cat run.log; exit 1; }
	[ "$(wc -l <light.out)" = "$job" ] || { echo "flow_profile: wrong output" >&2; exit 1; }
fi
perf report -i perf.data --stdio --no-children --sort dso,symbol 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -n 30
perf report -i perf.data --stdio --no-children --sort dso 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -n 8
