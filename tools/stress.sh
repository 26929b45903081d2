#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress: the net of issue 17, in one boot of the test VM with
# slub_debug=FZPU page_poison=1, in at most DFG_STRESS_VM_SECONDS:
#
#   1. selftests/fuzz: the random-command fuzzer over the whole command
#      table (ioctl, uring inline and indirect, from io-wq; forks, kill -9
#      of forked children and of whole workers, ring teardowns with
#      commands parked, module-parameter writes) for DFG_STRESS_FUZZ_SECONDS,
#      then DFG_FUZZ_MESSAGES messages from each of three producers while
#      victims are killed at random points (nothing lost, doubled or
#      reordered);
#   2. everything back to zero: pages, resident pages, pinned pages,
#      clients, parked commands, graphs;
#   3. selftests/limits: every per-user limit and the privileged reserve
#      exhausted by unprivileged users, root filling max_total_mb without
#      an OOM kill, then a forced OOM whose first victim must be the arena
#      holder (dfg-vm --expect-oom: its report's call trace is expected);
#      back to zero again, then rmmod dfg, which needs every reference
#      gone (with slub_debug, a cache with objects left would report);
#   4. the kernel log: no report of slub_debug or page poisoning (dfg-vm
#      checks BUG, WARNING, oops, lockdep, hung tasks and the rest).
#
# Any failure, hang (timeouts) or report fails the run. Not part of
# make check; bounded so CI can run it.
#
#   DFG_STRESS_FUZZ_SECONDS  fuzzer time budget (default 150)
#   DFG_FUZZ_MESSAGES        messages per producer (default 50000)
#   DFG_FUZZ_SEED            fuzzer seed (default: time)
#   DFG_STRESS_VM_SECONDS    the whole boot (default 600)
#
# With DFG_STRESS_TEST (fixture.variant.test as TAP names it), runs that
# one test DFG_STRESS_COUNT times (default 200) instead, stopping at the
# first failure; DFG_STRESS_PROG is the harness binary under build/ that
# holds it (default selftests/sched/sched_test).
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fuzz_s=${DFG_STRESS_FUZZ_SECONDS:-150}
msgs=${DFG_FUZZ_MESSAGES:-50000}
seed=${DFG_FUZZ_SEED:-}
vm_s=${DFG_STRESS_VM_SECONDS:-600}
test=${DFG_STRESS_TEST:-}
prog=${DFG_STRESS_PROG:-selftests/sched/sched_test}
count=${DFG_STRESS_COUNT:-200}

# On the host: boot the VM once and come back in it (dfg-vm passes
# arguments, not the environment).
if [ "${1:-}" != --guest ]; then
	exec "$top/tools/vm/dfg-vm" --timeout "$vm_s" --expect-oom \
		--append "slub_debug=FZPU page_poison=1" -- \
		"$0" --guest "$fuzz_s" "$msgs" "${seed:--}" "${test:--}" \
		"$prog" "$count"
fi
fuzz_s=$2 msgs=$3 seed=$4 test=$5 prog=$top/build/$6 count=$7
log=$(mktemp "${TMPDIR:-/tmp}/dfg-stress.XXXXXX")
trap 'rm -f "$log"' EXIT
sys=/sys/kernel/dfg

fail() {
	echo "stress: $*"
	exit 1
}

for opt in slub_debug=FZPU page_poison=1; do
	grep -qw "$opt" /proc/cmdline || fail "kernel booted without $opt"
done

if [ "$test" != - ]; then
	for ((i = 1; i <= count; i++)); do
		DFG_TEST_ONLY=$test "$prog" >"$log" 2>&1
		if ! grep -qE "^ok [0-9]+ $test\$" "$log"; then
			cat "$log"
			fail "$test failed in run $i of $count"
		fi
		((i % 20)) || echo "stress: $test passed $i of $count"
	done
	echo "stress: $test passed $count runs"
	exit 0
fi

# suite SECONDS TOTALS WHAT PROG: run harness binary PROG (under build/)
# with a timeout of SECONDS around its own; fail unless it exits 0 and its
# totals match TOTALS (an extended regex after "# Totals: pass:N ").
suite() {
	local tmo=$1 totals=$2 what=$3 prog=$4 start=$SECONDS st

	timeout -k 10 "$tmo" "$top/build/$prog" </dev/null >"$log" 2>&1
	st=$?
	cat "$log"
	[ $st -eq 0 ] || fail "${prog##*/} exited with $st"
	grep -qE "^# Totals: pass:[1-9][0-9]* $totals" "$log" ||
		fail "${prog##*/} did not pass ($what)"
	echo "stress: $what passed in $((SECONDS - start)) s"
}

# 1. The fuzzer and the message streams. The harness gives each test its
# own timeout; the one around it catches a hang outside them.
[ "$seed" = - ] || export DFG_FUZZ_SEED=$seed
DFG_FUZZ_SECONDS=$fuzz_s DFG_FUZZ_MESSAGES=$msgs \
	suite $((fuzz_s + 400)) 'fail:0 ' "fuzzer and messages" \
	selftests/fuzz/fuzz_test

# 2. Leaks: everything made is gone once its descriptors are.
zero() {
	local f v left t

	for f in pages resident pinned clients parked; do
		v=$(cat "$sys/$f")
		[ "$v" = 0 ] || fail "$f is $v after $1, not 0"
	done
	left=$(ls "$sys/graphs" | wc -l)
	[ "$left" = 0 ] || fail "$left graphs left after $1"
	# A user's entry goes in work queued when its last charge does.
	for ((t = 0; t < 50; t++)); do
		left=$(ls "$sys/users" 2>/dev/null | wc -l)
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	[ "$left" = 0 ] || fail "$left users still charged 5 s after $1"
}
zero "the fuzzer"

# 3. Resource exhaustion, the forced OOM last: every test must run.
DFG_TEST_OOM=1 suite 900 'fail:0 xfail:0 xpass:0 skip:0 ' \
	"limits and the forced OOM" selftests/limits/limits_test
zero "the limits"
rmmod dfg || fail "rmmod dfg: the module is still referenced"

# 4. Reports of slub_debug and page poisoning (dfg-vm checks the rest).
if dmesg | grep -E 'Poison overwritten|Redzone|Object padding|Padding overwritten|Freepointer corrupt|memory corruption|still has objects|Objects remaining'; then
	fail "slab or page poisoning report in the kernel log"
fi
echo "stress: passed (seed ${DFG_FUZZ_SEED:-from the clock}, $((SECONDS)) s in the guest)"
