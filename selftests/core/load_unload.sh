#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unloads and reloads dfg.ko $DFG_LOAD_LOOPS times (20: a cycle costs 1-2 s
# under TCG, so make check keeps it short; set 100 or more by hand): each
# rmmod must remove /dev/dfg and /sys/kernel/dfg, each insmod must bring
# them back.
# Leaves the module loaded. Needs root and DFG_KO (set by tools/vm/dfg-vm).
# Prints kselftest TAP with one "# Totals:" line.

loops=${DFG_LOAD_LOOPS:-20}
name=load_unload

echo "TAP version 13"
echo "1..1"

totals() {
	echo "# Totals: pass:$1 fail:$2 xfail:0 xpass:0 skip:$3 error:0"
}
skip() {
	echo "ok 1 $name # SKIP $*"
	totals 0 0 1
	exit 4
}
fail() {
	echo "# $name: $*"
	# Leave the module loaded whatever happened.
	[ -e /sys/module/dfg ] || insmod "$DFG_KO" 2>/dev/null
	echo "not ok 1 $name"
	totals 0 1 0
	exit 1
}

# Waits up to 2 s for path $1 to exist (want=1) or be gone (want=0).
wait_path() {
	local i
	for i in $(seq 200); do
		if [ "$2" = 1 ]; then [ -e "$1" ] && return 0
		else [ -e "$1" ] || return 0
		fi
		sleep 0.01
	done
	return 1
}

[ "$(id -u)" = 0 ] || skip "not root"
[ -n "${DFG_KO:-}" ] && [ -f "$DFG_KO" ] || skip "DFG_KO not set to dfg.ko"
[ -e /sys/module/dfg ] || insmod "$DFG_KO" || fail "initial insmod failed"

start=$(date +%s.%N)
for i in $(seq "$loops"); do
	rmmod dfg || fail "rmmod failed at iteration $i (is /dev/dfg open?)"
	[ -e /sys/module/dfg ] && fail "iteration $i: /sys/module/dfg after rmmod"
	wait_path /dev/dfg 0 || fail "iteration $i: /dev/dfg still there after rmmod"
	[ -e /sys/kernel/dfg ] && fail "iteration $i: /sys/kernel/dfg after rmmod"
	insmod "$DFG_KO" || fail "insmod failed at iteration $i"
	wait_path /dev/dfg 1 || fail "iteration $i: no /dev/dfg after insmod"
	[ -c /dev/dfg ] || fail "iteration $i: /dev/dfg is not a char device"
	[ -r /sys/kernel/dfg/api_version ] ||
		fail "iteration $i: no /sys/kernel/dfg/api_version after insmod"
	# The new instance starts from zero.
	c=$(cat /sys/kernel/dfg/clients)
	[ "$c" = 0 ] || fail "iteration $i: clients is $c after insmod"
done
end=$(date +%s.%N)
echo "# $loops unload/load cycles in $(awk "BEGIN { printf \"%.1f\", $end - $start }") s"

# Still usable: open it once.
exec 3<>/dev/dfg || fail "cannot open /dev/dfg after the last insmod"
exec 3>&-

echo "ok 1 $name"
totals 1 0 0
exit 0
