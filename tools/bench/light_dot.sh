# SPDX-License-Identifier: GPL-2.0
# Sourced by tools/bench/run.sh, flow_profile.sh and flow_hop_ir.sh: the
# flow benchmarks' graphs. light_dot N prints
# the light job, the 10-component chain of light components (generate,
# 4 x filter "1" + map "$0", write_lines to light.out) over N elements.
light_dot() {
	local i
	echo "digraph light {"
	echo "  gen [type=generate, count=$1, pattern=\"item {}\"];"
	for i in 1 2 3 4; do
		echo "  f$i [type=filter, expr=\"1\"]; m$i [type=map, expr=\"\$0\"];"
	done
	echo "  out [type=write_lines, file=\"light.out\"];"
	echo "  gen -> f1 -> m1 -> f2 -> m2 -> f3 -> m3 -> f4 -> m4 -> out;"
	echo "}"
}

# hop_dot H N OUT prints the in-set hop graph: generate N elements, H x
# map "$0", write_lines to OUT (run.sh's run_flow_hop, flow_hop_ir.sh).
hop_dot() {
	local i
	echo "digraph hop$1 {"
	echo "  gen [type=generate, count=$2, pattern=\"item {}\"];"
	echo "  out [type=write_lines, file=\"$3\"];"
	for i in $(seq "$1"); do
		echo "  m$i [type=map, expr=\"\$0\"];"
	done
	echo "  gen -> $(for i in $(seq "$1"); do echo -n "m$i -> "; done)out;"
	echo "}"
}
