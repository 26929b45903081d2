#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Test of the hub-node prefetch across machines, run on the host (make
# check): boots two nodes with tools/vm/dfg-vm --nodes 2 (dfg.ko and
# dfg_rdma.ko on each), runs node0.sh on node0, and adds one test for the
# kernel logs of both guests. Prints the TAP lines and one "# Totals:"
# line; exit status 0 only if every test passed.
top=$(cd "$(dirname "$0")/../.." && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/dfg-pf-test.XXXXXX")
trap 'rm -f "$log"' EXIT

"$top/tools/vm/dfg-vm" --nodes 2 --timeout "${DFG_RIG_TIMEOUT:-900}" -- \
	"$top/selftests/prefetch/node0.sh" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
pass=$(grep -c '^ok ' "$log")
fail=$(grep -c '^not ok ' "$log")
if grep -q 'kernel log has a report' "$log"; then
	echo "not ok - kernel logs of both nodes clean"
	fail=$((fail + 1))
elif ! grep -q '^# prefetch checks done$' "$log"; then
	echo "not ok - prefetch checks did not run to the end (dfg-vm exited $rc)"
	fail=$((fail + 1))
else
	echo "ok - kernel logs of both nodes clean"
	pass=$((pass + 1))
fi
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
	echo "not ok - dfg-vm --nodes 2 exited $rc"
	fail=1
fi
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
