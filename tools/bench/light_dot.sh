# SPDX-License-Identifier: GPL-2.0
# Sourced by tools/bench/run.sh and flow_profile.sh: light_dot N prints
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
