#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
# ABI check of the shared library: it exports exactly the symbols of the
# version map, each versioned LIBDFG_0.1, and has the expected soname.
# Output in kselftest's format so its Totals line sums with the others.
#
# usage: abi.sh <libdfg.so.X.Y.Z> <libdfg.map>
so=$1
map=$2
pass=0
fail=0
n=0

check() {
	n=$((n + 1))
	if [ "$2" = ok ]; then
		pass=$((pass + 1))
		echo "ok $n abi.$1"
	else
		fail=$((fail + 1))
		echo "not ok $n abi.$1"
		[ -n "$3" ] && echo "# $3"
	fi
}

echo "TAP version 13"
echo "1..3"

want=$(sed -n 's/^[[:space:]]*\(dfg_[a-z0-9_]*\);.*/\1/p' "$map" | sort)
got=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' | sort)
exports=$(echo "$got" | sed 's/@.*//' | sort)
if [ "$exports" = "$want" ]; then
	check exports_match_map ok
else
	check exports_match_map fail "$(printf 'map: %s\nso:  %s' "$(echo $want)" "$(echo $exports)")"
fi

bad=$(echo "$got" | grep -v '@@LIBDFG_0\.1$' || true)
if [ -z "$bad" ]; then
	check versioned_LIBDFG_0_1 ok
else
	check versioned_LIBDFG_0_1 fail "unversioned: $(echo $bad)"
fi

soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" = "libdfg.so.0" ]; then
	check soname ok
else
	check soname fail "soname '$soname'"
fi

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
