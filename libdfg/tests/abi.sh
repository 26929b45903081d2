#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR MIT)
# ABI check of the shared library: it exports exactly the symbols of the
# version map, each with the version node the map puts it under (symbols
# never move between nodes), and has the expected soname.
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

# "symbol@@NODE" for every symbol of the map, from its enclosing node.
want=$(awk '/^[A-Z_0-9.]+[[:space:]]*\{/ { node = $1 }
	    /^[[:space:]]*dfg_[a-z0-9_]*;/ { s = $1; sub(/;.*/, "", s);
					     print s "@@" node }' "$map" | sort)
got=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' | sort)
exports=$(echo "$got" | sed 's/@.*//' | sort)
want_names=$(echo "$want" | sed 's/@.*//' | sort)
if [ "$exports" = "$want_names" ]; then
	check exports_match_map ok
else
	check exports_match_map fail "$(printf 'map: %s\nso:  %s' "$(echo $want_names)" "$(echo $exports)")"
fi

if [ "$got" = "$want" ]; then
	check versioned_as_map ok
else
	check versioned_as_map fail "$(printf 'map: %s\nso:  %s' "$(echo $want)" "$(echo $got)")"
fi

soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" = "libdfg.so.0" ]; then
	check soname ok
else
	check soname fail "soname '$soname'"
fi

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
