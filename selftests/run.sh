#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the dfg selftests inside the test VM (dfg.ko loaded, root):
#
#   tools/vm/dfg-vm -- selftests/run.sh [target...]
#
# For each target (TARGETS of selftests/Makefile, or the ones given), runs
# every harness binary in $BUILD/selftests/<target>/, then every *.sh in
# selftests/<target>/, in name order, printing their TAP output to stdout.
# DFG_TEST_FILTER, if set, is an extended regex on "<target>/<name>".
# Every program contributes exactly one "# Totals:" line; one that dies
# without printing it gets a "fail:1" line here. Exit status: 0 if every
# program passed (or skipped), 1 otherwise.

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$top/build}
tmo=${DFG_TEST_TIMEOUT:-900}

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(sed -n 's/^TARGETS[[:space:]]*:*=[[:space:]]*//p' \
		"$here/Makefile")
fi

log=$(mktemp "${TMPDIR:-/tmp}/dfg-selftest.XXXXXX")
trap 'rm -f "$log"' EXIT

nprog=0
nfail=0
failed=

run_one() {
	local name=$1
	shift
	local rc pid t0

	if [ -n "${DFG_TEST_FILTER:-}" ] &&
	   ! [[ $name =~ $DFG_TEST_FILTER ]]; then
		return
	fi
	nprog=$((nprog + 1))
	echo "# selftests: $name"
	# Output through a file, followed while the program lives: a child
	# it left stuck in the kernel must not hold the run open (as a pipe
	# to tee would).
	: >"$log"
	t0=$SECONDS
	timeout -k 10 "$tmo" "$@" >"$log" 2>&1 </dev/null &
	pid=$!
	tail -n +1 -s 0.2 -f --pid="$pid" "$log"
	wait "$pid"
	rc=$?
	if ! grep -q '^# Totals:' "$log"; then
		echo "# selftests: $name exited $rc without a Totals line"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
		[ "$rc" = 0 ] && rc=1
	fi
	# The time per program shows where make check's minutes go.
	echo "# selftests: $name: $((SECONDS - t0)) s"
	case $rc in
	0) echo "# selftests: $name: ok" ;;
	4) echo "# selftests: $name: ok # SKIP" ;;
	124) echo "# selftests: $name: not ok (timeout ${tmo}s)"
	     nfail=$((nfail + 1)); failed="$failed $name" ;;
	*) echo "# selftests: $name: not ok (exit $rc)"
	   nfail=$((nfail + 1)); failed="$failed $name" ;;
	esac
}

echo "# dfg selftests on $(uname -r), build $BUILD"
for t in $targets; do
	if [ ! -d "$here/$t" ]; then
		echo "# selftests: no target $t"
		nfail=$((nfail + 1))
		continue
	fi
	progs=$(sed -n 's/^TEST_GEN_PROGS[[:space:]]*:*=[[:space:]]*//p' \
		"$here/$t/Makefile")
	for p in $progs; do
		if [ ! -x "$BUILD/selftests/$t/$p" ]; then
			echo "# selftests: $t/$p not built (make selftests)"
			echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
			nprog=$((nprog + 1))
			nfail=$((nfail + 1))
			failed="$failed $t/$p"
			continue
		fi
		run_one "$t/$p" "$BUILD/selftests/$t/$p"
	done
	for s in "$here/$t"/*.sh; do
		[ -f "$s" ] || continue
		run_one "$t/$(basename "$s")" "$s"
	done
done

echo "# selftests: $nprog programs, $nfail failed${failed:+:$failed}"
[ "$nfail" = 0 ]
