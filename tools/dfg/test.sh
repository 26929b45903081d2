#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Tests of the dfg command (plan), in kselftest's TAP format so that its
# Totals line sums with the others.
#
# usage: test.sh <dfg binary>
dfg=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
graphs=$top/examples/graphs
bad=$top/libdfg/tests/graphs/lines.dot
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dfg-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0

# check NAME EXPECTED_STATUS GREP_PATTERN_ON_OUTPUT_OR_EMPTY -- CMD...
check() {
	name=$1 want=$2 pattern=$3
	shift 4
	n=$((n + 1))
	"$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] &&
	   { [ -z "$pattern" ] || grep -qF -- "$pattern" "$tmp/out"; }; then
		pass=$((pass + 1))
		echo "ok $n dfg.$name"
	else
		fail=$((fail + 1))
		echo "not ok $n dfg.$name"
		echo "# exit $rc (want $want), output:"
		sed 's/^/# /' "$tmp/out"
	fi
}

# file_check NAME CMD...: a check on files already written
file_check() {
	name=$1
	shift
	n=$((n + 1))
	if "$@" >/dev/null 2>&1; then
		pass=$((pass + 1))
		echo "ok $n dfg.$name"
	else
		fail=$((fail + 1))
		echo "not ok $n dfg.$name"
	fi
}

is_png() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}

echo "TAP version 13"
echo "1..16"
check plan_fig2b 0 "s0: degree 1: 204A (root) 204B 204E 204F 204G 204C 204D" \
	-- "$dfg" plan --any-types "$graphs/fig2.dot" -o "$tmp/plan.dot" --png "$tmp/plan.png"
check plan_fig2b_sets 0 "folded (procedure 400): 3 sets, 3 instances" \
	-- "$dfg" plan --any-types "$graphs/fig2.dot"
file_check plan_dot_written grep -q cluster_2 "$tmp/plan.dot"
file_check plan_dot_valid dot -Tcanon -o /dev/null "$tmp/plan.dot"
file_check plan_png_written is_png "$tmp/plan.png"
check plan_fig3 0 "s0: degree 4: 304A (root) 304B 304C" \
	-- "$dfg" plan --any-types "$graphs/fig3.dot"
check no_fold 0 "not folded: 10 sets, 10 instances" \
	-- "$dfg" plan --any-types --no-fold "$graphs/fig2.dot"
check graph_errors 1 "lines.dot:5: node 'b': attribute 'degree': not a number: 'two'" \
	-- "$dfg" plan "$bad"
check graph_errors_count 1 "3 errors, nothing planned" -- "$dfg" plan "$bad"
check missing_file 1 "No such file or directory" \
	-- "$dfg" plan "$tmp/missing.dot"
check bad_output 1 "" -- "$dfg" plan --any-types "$graphs/fig2.dot" -o "$tmp/no/plan.dot"
check bad_png 1 "failed" \
	-- "$dfg" plan --any-types "$graphs/fig2.dot" --png "$tmp/no/plan.png"
# Plugins: a type the registry gets from a shared object; the registry
# also knows exec is not foldable.
plugdot=$tmp/plugin.dot
printf '%s\n' 'digraph p {' \
	'  gen [type=generate, count=3]; r [type=rot13];' \
	'  sh [type=exec, cmd="cat"]; out [type=write_lines, file="x"];' \
	'  gen -> r -> sh -> out; }' >"$plugdot"
check plugin_unknown_type 1 "unknown component type 'rot13'" \
	-- "$dfg" plan "$plugdot"
check plugin_loaded 0 "s1: degree 1, not foldable: sh (root)" \
	-- "$dfg" plan --plugin "$top/build/lib/dfg/plugins/uniq.so" "$plugdot"
check plugin_missing 1 "--plugin $tmp/none.so:" \
	-- "$dfg" plan --plugin "$tmp/none.so" "$plugdot"
check no_args 2 "usage" -- "$dfg"
check unknown_command 2 "unknown command 'frobnicate'" -- "$dfg" frobnicate
check two_graphs 2 "one graph file expected" \
	-- "$dfg" plan "$graphs/fig2.dot" "$graphs/fig3.dot"
check bad_option 2 "" -- "$dfg" plan --frobnicate "$graphs/fig2.dot"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
