#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where the folded light job's time goes: perf record (cpu-clock, the
# only event a TCG guest has) of `dfg run` on run.sh's light job
# (generate, 4 x filter "1" + map "$0", write_lines; folded into one set),
# then the top symbols. Run it in the test VM:
#
#   tools/vm/dfg-vm -- tools/bench/flow_profile.sh [ELEMENTS]
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
n=${1:-400000}
# shellcheck source=tools/bench/light_dot.sh
. "$top/tools/bench/light_dot.sh"
command -v perf >/dev/null || { echo "flow_profile: no perf (linux-perf)" >&2; exit 1; }
work=$(mktemp -d /tmp/dfg-flow-profile.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
light_dot "$n" >light.dot
perf record -q -e cpu-clock -F 2000 -o perf.data -- "$dfg" run light.dot \
	>run.log 2>&1 || { cat run.log; exit 1; }
[ "$(wc -l <light.out)" = "$n" ] || { echo "flow_profile: wrong output" >&2; exit 1; }
perf report -i perf.data --stdio --no-children --sort dso,symbol 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -n 20
