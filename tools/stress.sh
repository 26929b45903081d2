#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress: run one selftest many times in one boot of the test VM, to
# catch a test that fails now and then. Stops at the first failure.
#
#   DFG_STRESS_TEST   fixture.variant.test as TAP names it
#                     (default sched.ioctl.pipeline_two_workers)
#   DFG_STRESS_PROG   harness binary under build/ that holds it
#                     (default selftests/sched/sched_test)
#   DFG_STRESS_COUNT  runs (default 200)
#
# The binary runs with DFG_TEST_ONLY set to the test; one that ignores it
# runs all its tests, and only the named one's result counts.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
test=${DFG_STRESS_TEST:-sched.ioctl.pipeline_two_workers}
prog=${DFG_STRESS_PROG:-selftests/sched/sched_test}
count=${DFG_STRESS_COUNT:-200}

# On the host: boot the VM once and come back in it (dfg-vm passes
# arguments, not the environment).
if [ "${1:-}" != --guest ]; then
	exec "$top/tools/vm/dfg-vm" -- "$0" --guest "$test" "$prog" "$count"
fi
test=$2 prog=$top/build/$3 count=$4
log=$(mktemp "${TMPDIR:-/tmp}/dfg-stress.XXXXXX")
trap 'rm -f "$log"' EXIT

for ((i = 1; i <= count; i++)); do
	DFG_TEST_ONLY=$test "$prog" >"$log" 2>&1
	if ! grep -qE "^ok [0-9]+ $test\$" "$log"; then
		cat "$log"
		echo "stress: $test failed in run $i of $count"
		exit 1
	fi
	((i % 20)) || echo "stress: $test passed $i of $count"
done
echo "stress: $test passed $count runs"
