#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Instructions per element per in-set hop, a figure a loaded host does
# not change (valgrind's callgrind counts them): the graphs of run.sh's
# run_flow_hop (generate, N x map "$0", write_lines; folded into one
# set) run by `dfg run`, against flow_loop's hand-written loop and its
# chain of bare map instances (-m comp), for N = 0 1 2 5 10 20. A hop
# costs (Ir(N) - Ir(0)) / (N x elements). dfg run needs the module, so
# run it in the test VM:
#
#   tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh [ELEMENTS]
#
# Prints a CSV: hops, then per hop dfg's, the loop's and the bare maps'
# instructions, and dfg's over the loop's.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
loop=$BUILD/bin/flow_loop
n=${1:-20000}
hops="0 1 2 5 10 20"
command -v valgrind >/dev/null || { echo "flow_hop_ir: no valgrind" >&2; exit 1; }
# shellcheck source=tools/bench/light_dot.sh
. "$top/tools/bench/light_dot.sh"
work=$(mktemp -d /tmp/dfg-flow-ir.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# ir CMD...: the instructions CMD and its threads and children ran.
ir() {
	rm -f cg.out.*
	valgrind -q --tool=callgrind --trace-children=yes \
		--callgrind-out-file=cg.out.%p "$@" >/dev/null 2>cg.log ||
		{ cat cg.log >&2; return 1; }
	cat cg.out.* | awk '/^summary:/ { s += $2 } END { print s }'
}

for h in $hops; do
	hop_dot "$h" "$n" hop.dfg.out >"hop$h.dot"
	d[h]=$(ir "$dfg" run "hop$h.dot") || exit 1
	l[h]=$(ir "$loop" -r 1 -n "$h" -c "$n" -o hop.loop.out) || exit 1
	c[h]=$(ir "$loop" -r 1 -n "$h" -c "$n" -m comp -o hop.comp.out) || exit 1
	cmp -s hop.dfg.out hop.loop.out && cmp -s hop.dfg.out hop.comp.out ||
		{ echo "flow_hop_ir: hop$h: outputs differ" >&2; exit 1; }
done
echo "hops,elements,dfg_ir_per_hop,loop_ir_per_hop,comp_ir_per_hop,ratio"
for h in $hops; do
	[ "$h" = 0 ] && continue
	awk -v h="$h" -v n="$n" -v d0="${d[0]}" -v d="${d[h]}" -v l0="${l[0]}" \
		-v l="${l[h]}" -v c0="${c[0]}" -v c="${c[h]}" 'BEGIN {
		dh = (d - d0) / (h * n); lh = (l - l0) / (h * n); ch = (c - c0) / (h * n)
		printf "%d,%d,%.1f,%.1f,%.1f,%.1f\n", h, n, dh, lh, ch, dh / lh }'
done
