#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Instructions per element per in-set hop, a figure a loaded host does
# not change (valgrind's callgrind counts them): the graphs of run.sh's
# run_flow_hop (generate, N x map "$0", write_lines; folded into one
# set) run by `dfg run`, against flow_loop's hand-written loop and its
# chain of bare map instances (-m comp), for N = 0 1 2 5 10 20. A hop
# costs (Ir(N) - Ir(0)) / (N x elements). For dfg run, Ir(N) also holds
# what each member costs once (creating it, compiling its expression, its
# node in the DOT file, its name in the module's set), which divided by
# the elements would be charged to the hop: dfg run is measured at
# ELEMENTS and at twice as many, and a hop costs the difference of the two
# (Ir(N, 2E) - Ir(N, E) - Ir(0, 2E) + Ir(0, E)) / (N x E), the fixed cost
# left out; that cost per member, (Ir(N, E) - Ir(0, E)) / N less E hops,
# is a column of its own. The loop and the bare maps have no such cost
# worth the name and are measured once. dfg run needs the module, so run
# it in the test VM:
#
#   tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh [ELEMENTS]
#
# Prints a CSV: hops, elements, then per hop dfg's, the loop's and the
# bare maps' instructions, dfg's over the loop's, and dfg's set-up per
# member.
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
	hop_dot "$h" $((2 * n)) hop.dfg.out >"hop$h.dot"
	d2[h]=$(ir "$dfg" run "hop$h.dot") || exit 1
	hop_dot "$h" "$n" hop.dfg.out >"hop$h.dot"
	d[h]=$(ir "$dfg" run "hop$h.dot") || exit 1
	l[h]=$(ir "$loop" -r 1 -n "$h" -c "$n" -o hop.loop.out) || exit 1
	c[h]=$(ir "$loop" -r 1 -n "$h" -c "$n" -m comp -o hop.comp.out) || exit 1
	cmp -s hop.dfg.out hop.loop.out && cmp -s hop.dfg.out hop.comp.out ||
		{ echo "flow_hop_ir: hop$h: outputs differ" >&2; exit 1; }
done
echo "hops,elements,dfg_ir_per_hop,loop_ir_per_hop,comp_ir_per_hop,ratio,dfg_setup_ir_per_member"
for h in $hops; do
	[ "$h" = 0 ] && continue
	awk -v h="$h" -v n="$n" -v d0="${d[0]}" -v d="${d[h]}" \
		-v e0="${d2[0]}" -v e="${d2[h]}" -v l0="${l[0]}" \
		-v l="${l[h]}" -v c0="${c[0]}" -v c="${c[h]}" 'BEGIN {
		dh = ((e - d) - (e0 - d0)) / (h * n)
		lh = (l - l0) / (h * n); ch = (c - c0) / (h * n)
		setup = (d - d0) / h - n * dh
		printf "%d,%d,%.1f,%.1f,%.1f,%.2f,%.0f\n", h, n, dh, lh, ch, \
			dh / lh, setup }'
done
