#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The loaded module reports VERSION everywhere: MODULE_VERSION
# (/sys/module/dfg/version), /sys/kernel/dfg/version, GET_INFO and the
# netlink GET_INFO (through dfgctl), and dfgctl itself. The host side
# (modinfo, libdfg, .pc, man pages, dkms) is tools/pkg-test.sh's.
# Prints kselftest TAP with one "# Totals:" line.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dfgctl=${BUILD:-$top/build}/bin/dfgctl
want=$(cat "$top/VERSION")
n=0 pass=0 fail=0

check() {
	n=$((n + 1))
	if [ "$2" = "$want" ]; then
		pass=$((pass + 1))
		echo "ok $n version.$1"
	else
		fail=$((fail + 1))
		echo "not ok $n version.$1"
		echo "# want '$want', got '$2'"
	fi
}

echo "TAP version 13"
echo "1..6"
check module_version "$(cat /sys/module/dfg/version 2>&1)"
check sysfs "$(cat /sys/kernel/dfg/version 2>&1)"
check get_info "$("$dfgctl" info 2>&1 | sed -n 's/^version: //p')"
check get_info_uring "$("$dfgctl" info --uring 2>&1 | sed -n 's/^version: //p')"
check netlink "$("$dfgctl" info --netlink 2>&1 | sed -n 's/^version: //p')"
check dfgctl "$("$dfgctl" --version | cut -d' ' -f2)"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
