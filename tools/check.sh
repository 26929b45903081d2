#!/bin/bash
# make check: static checks of the module, host tests of libdfg, the dfg
# command's and the packaging tests (tools/pkg-test.sh), every selftest
# inside the test VM, then the two-node rig's test
# (selftests/net/rig.sh). Sums the kselftest "# Totals:" lines and the steps
# that are not harness programs; the last line printed is
# "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
logs=$top/build/check
mkdir -p "$logs"
pass=0 fail=0 skip=0

# step NAME CMD...: a check that is not a harness program counts as one test.
step() {
	local name=$1
	shift
	if "$@" >"$logs/$name.log" 2>&1; then
		echo "ok - $name"
		pass=$((pass + 1))
	else
		echo "not ok - $name (log: build/check/$name.log)"
		tail -n 30 "$logs/$name.log"
		fail=$((fail + 1))
	fi
}

# Adds the "# Totals:" lines of a log; a nonzero status without a counted
# failure (crash, timeout, kernel log report) counts as one failure.
tally() {
	local log=$1 rc=$2 p f s before=$fail
	while read -r p f s; do
		pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	done < <(sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\) xfail:[0-9]* xpass:[0-9]* skip:\([0-9]*\).*/\1 \2 \3/p' "$log")
	if [ "$rc" != 0 ] && [ "$fail" = "$before" ]; then
		echo "not ok - $(basename "$log" .log) exited $rc"
		fail=$((fail + 1))
	fi
}

kernel_clean() {
	# W=1 and sparse (C=2) over every module file: no diagnostics at all.
	touch Kbuild
	make -s sparse 2>&1 | grep -E 'warning|error' && return 1
	return 0
}
step checkpatch make -s checkpatch
step module-w1-sparse kernel_clean

make -s -C libdfg test 2>&1 | tee "$logs/host.log"
tally "$logs/host.log" "${PIPESTATUS[0]}"

tools/dfg/test.sh build/bin/dfg 2>&1 | tee "$logs/dfg.log"
tally "$logs/dfg.log" "${PIPESTATUS[0]}"

# Packaging: pkg-config, versions, messages, man pages, staged install, dkms.
tools/pkg-test.sh 2>&1 | tee "$logs/pkg.log"
tally "$logs/pkg.log" "${PIPESTATUS[0]}"

tools/vm/dfg-vm -- selftests/run.sh 2>&1 | tee "$logs/vm.log"
tally "$logs/vm.log" "${PIPESTATUS[0]}"

# The multi-node rig: two guests, Soft-RoCE and Open MPI between them.
selftests/net/rig.sh 2>&1 | tee "$logs/rig.log"
tally "$logs/rig.log" "${PIPESTATUS[0]}"

# The hub-node prefetch across the rig's two nodes (dfg_rdma.ko).
selftests/prefetch/rig.sh 2>&1 | tee "$logs/prefetch.log"
tally "$logs/prefetch.log" "${PIPESTATUS[0]}"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
