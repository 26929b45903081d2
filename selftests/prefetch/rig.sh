#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Test of the hub-node prefetch across machines, run on the host (make
# check): boots two nodes with tools/vm/dfg-vm --nodes 2 (dfg.ko and
# dfg_rdma.ko on each) once per script: node0.sh (the module's commands,
# failures, unloading) and hub.sh (the access engine, dfg graph serve |
# sample), each on node0, and adds one test per boot for the kernel logs
# of both guests. Each script runs once per transport of DFG_PF_XPORTS
# (default "rdma tcp": dfg_rdma.ko, then dfg_tcp.ko in the same boot).
# Prints the TAP lines and one "# Totals:" line; exit status 0 only if
# every test passed.
top=$(cd "$(dirname "$0")/../.." && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/dfg-pf-test.XXXXXX")
trap 'rm -f "$log"' EXIT
pass=0
fail=0
xports=${DFG_PF_XPORTS:-rdma tcp}

# boot SCRIPT DONE_LINE: one rig boot running SCRIPT on node0.
boot() {
	local rc

	"$top/tools/vm/dfg-vm" --nodes 2 --timeout "${DFG_RIG_TIMEOUT:-900}" -- \
		env DFG_PF_XPORTS="$xports" "$top/selftests/prefetch/$1" 2>&1 |
		tee "$log"
	rc=${PIPESTATUS[0]}
	pass=$((pass + $(grep -c '^ok ' "$log")))
	fail=$((fail + $(grep -c '^not ok ' "$log")))
	if grep -q 'kernel log has a report' "$log"; then
		echo "not ok - $1: kernel logs of both nodes clean"
		fail=$((fail + 1))
	elif ! grep -q "^# $2\$" "$log"; then
		echo "not ok - $1: checks did not run to the end (dfg-vm exited $rc)"
		fail=$((fail + 1))
	elif [ "$rc" != 0 ]; then
		echo "not ok - $1: dfg-vm --nodes 2 exited $rc"
		fail=$((fail + 1))
	else
		echo "ok - $1: kernel logs of both nodes clean"
		pass=$((pass + 1))
	fi
}

boot node0.sh "prefetch checks done"
boot hub.sh "hub checks done"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
