#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Feedback seen by an operator, and unload while listeners wait (test VM,
# root, dfg.ko loaded; needs DFG_KO as set by tools/vm/dfg-vm):
#  - dfgctl monitor prints cpu_offline/cpu_online with cpu=1 when CPU 1
#    goes offline and back (skipped without a CPU 1 to take offline);
#  - rmmod succeeds while a full and a public listener are subscribed,
#    the listeners survive it, and insmod brings the module back usable.
# Leaves the module loaded. Prints TAP with one "# Totals:" line.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
ctl=$BUILD/bin/dfgctl
cpu1=/sys/devices/system/cpu/cpu1/online

n=0
fails=0
skips=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); skips=$((skips + 1)); echo "ok $n - $1 # SKIP $2"; }
not_ok() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"
	[ $# -gt 1 ] && [ -s "$2" ] && sed 's/^/# /' "$2"
}
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }
totals() {
	echo "1..$n"
	echo "# Totals: pass:$((n - fails - skips)) fail:$fails xfail:0 xpass:0 skip:$skips error:0"
}

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ -z "${DFG_KO:-}" ] || [ ! -f "$DFG_KO" ]; then
	skip unload_listening "needs root and DFG_KO"
	totals
	exit 4
fi

work=$(mktemp -d /tmp/fbunload.XXXXXX)
pids=
cleanup() {
	local p
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -e "$cpu1" ] && echo 1 >"$cpu1" 2>/dev/null
	[ -e /sys/module/dfg ] || insmod "$DFG_KO" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# listen NAME ARGS: dfgctl monitor in the background, once it listens.
listen() {
	local name=$1 i
	shift
	"$ctl" monitor "$@" >"$work/$name.out" 2>"$work/$name.err" &
	pids="$pids $!"
	eval "pid_$name=$!"
	for i in $(seq 500); do
		grep -q listening "$work/$name.err" && return 0
		sleep 0.01
	done
	return 1
}

# waitfor FILE REGEX: up to 5 s for a line of FILE to match.
waitfor() {
	local i
	for i in $(seq 500); do
		grep -Eq "$2" "$1" && return 0
		sleep 0.01
	done
	return 1
}

check "full listener subscribes" "listen full --full" "$work/full.err"
check "public listener subscribes" "listen pub --public" "$work/pub.err"

if [ -w "$cpu1" ]; then
	echo 0 >"$cpu1"
	check "cpu_offline cpu=1 printed" \
		"waitfor $work/full.out '^event=cpu_offline cpu=1\$'" \
		"$work/full.out"
	echo 1 >"$cpu1"
	check "cpu_online cpu=1 printed" \
		"waitfor $work/full.out '^event=cpu_online cpu=1\$'" \
		"$work/full.out"
	check "public group gets CPU events too" \
		"waitfor $work/pub.out '^event=cpu_online cpu=1\$'" \
		"$work/pub.out"
else
	skip "cpu hotplug" "no writable $cpu1"
fi

check "rmmod with listeners subscribed" "rmmod dfg" 
check "module gone" "[ ! -e /sys/module/dfg ]"
check "listeners survive the unload" \
	"kill -0 $pid_full 2>/dev/null && kill -0 $pid_pub 2>/dev/null"
check "insmod again" "insmod $DFG_KO"
check "usable after reload" "[ -r /sys/kernel/dfg/feedback/cpu_online ]"
check "counters start from zero" \
	"[ \"\$(cat /sys/kernel/dfg/feedback/cpu_online)\" = 0 ]"

totals
[ "$fails" = 0 ]
