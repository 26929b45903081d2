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
n=0 pass=0 fail=0 skip=0

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
	-- "$dfg" plan --any-types "$bad"
check graph_errors_count 1 "3 errors, nothing planned" \
	-- "$dfg" plan --any-types "$bad"
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

# Parameters checked at plan time, on this host without the module: each
# of these passed the plan and failed only at run.
g=$tmp/p.dot
# plan_err NAME GRAPH_BODY_LINE EXPECTED_MESSAGE: the graph is a generator
# into a writer, with NAME's line in between (line 3 of the file)
plan_err() {
	name=$1 body=$2 want=$3
	printf '%s\n' 'digraph p {' '  a [type=generate, count=5];' "$body" \
		'  o [type=write_lines, file="x"];' "  a -> m -> o;" '}' >"$g"
	check "$name" 1 "p.dot:3: node 'm': $want" -- "$dfg" plan "$g"
}
plan_err count_ten '  m [type=generate, count=ten];' \
	"attribute 'count': 'ten' is not an integer"
plan_err count_negative '  m [type=generate, count=-5];' \
	"attribute 'count': -5 is not in [0, 9007199254740992]"
plan_err filter_without_expr '  m [type=filter];' \
	"attribute 'expr': missing: type 'filter' requires it"
plan_err write_lines_without_file '  m [type=write_lines];' \
	"attribute 'file': missing: type 'write_lines' requires it"
plan_err expr_incomplete '  m [type=filter, expr="$0 +"];' \
	"attribute 'expr': col 5: unexpected end of expression"
plan_err expr_unbalanced '  m [type=map, expr="($1 == 2"];' \
	"attribute 'expr': col 9: expected ')'"
deep=$(printf '%*s' 40000 '' | tr ' ' '(')1$(printf '%*s' 40000 '' | tr ' ' ')')
plan_err expr_40000_deep "  m [type=map, expr=\"$deep\"];" \
	"attribute 'expr': col 4097: expression too long"
deep=$(printf '%*s' 2000 '' | tr ' ' '(')1$(printf '%*s' 2000 '' | tr ' ' ')')
plan_err expr_2000_deep "  m [type=map, expr=\"$deep\"];" \
	"attribute 'expr': col 65: expression nested too deeply"
printf '%s\n' 'digraph p {' '  a [type=generate, count=5];' \
	'  o [type=write_lines, file="x"];' '  a -> o [to_port=1];' '}' >"$g"
check port_not_there 1 "p.dot:4: flow 'a' -> 'o': attribute 'to_port': port 1: type 'write_lines' has input ports 0..0" \
	-- "$dfg" plan "$g"
printf '%s\n' 'digraph p {' '  a [type=generate, count=5, degree=1024];' \
	'  o [type=write_lines, file="x"];' '  a -> o [flow=gather];' '}' >"$g"
check fan_in_bound 1 "attribute 'flow': a gather flow inside a phase comes from at most 64 instances, not 1024" \
	-- "$dfg" plan "$g"
printf '%s\n' 'digraph p {' '  a [type=generate, count=5, degree=1024];' \
	'  m [type=map, expr="$0", degree=1024];' \
	'  o [type=write_lines, file="x.{}", degree=1024];' '  a -> m -> o;' '}' >"$g"
check degree_1024_plans 0 "s0: degree 1024: a (root) m o" -- "$dfg" plan "$g"

# Validation needs no module: plan never opens /dev/dfg.
n=$((n + 1))
if ! command -v strace >/dev/null; then
	skip=$((skip + 1))
	echo "ok $n dfg.plan_without_module # SKIP no strace"
elif strace -f -e trace=open,openat -o "$tmp/strace" "$dfg" plan "$g" \
	>/dev/null 2>&1 && grep -q 'openat.*p\.dot' "$tmp/strace" &&
	! grep -q /dev/dfg "$tmp/strace"; then
	pass=$((pass + 1))
	echo "ok $n dfg.plan_without_module"
else
	fail=$((fail + 1))
	echo "not ok $n dfg.plan_without_module"
fi

# Bytes from the file are escaped in messages.
printf 'digraph p {\n  "a\033[2J" [type=generate, count=x];\n}\n' >"$g"
check escaped_name 1 "p.dot:2: node 'a\x1b[2J': attribute 'count'" \
	-- "$dfg" plan "$g"
n=$((n + 1))
if "$dfg" plan "$g" 2>&1 | grep -q "$(printf '\033')"; then
	fail=$((fail + 1))
	echo "not ok $n dfg.escaped_no_raw_bytes"
else
	pass=$((pass + 1))
	echo "ok $n dfg.escaped_no_raw_bytes"
fi

# A 1 MiB node name: fed to the lexer byte by byte, 100 KB took a
# minute. (CPU time is asserted in libdfg/tests/flow_params.c; here the
# wall clock, with room for a loaded host.)
big=$(head -c 1048576 /dev/zero | tr '\0' a)
printf 'digraph p {\n  %s [type=generate, count=1];\n  o [type=write_lines, file="x"];\n  o -> z;\n}\n' \
	"$big" >"$g"
start=$(date +%s%N)
check long_token_lines 1 "p.dot:4: flow 'o' -> 'z': attribute 'from_port'" \
	-- "$dfg" plan "$g"
ms=$((($(date +%s%N) - start) / 1000000))
echo "# dfg plan with a 1 MiB node name: $ms ms"
n=$((n + 1))
if [ "$ms" -lt 60000 ]; then
	pass=$((pass + 1))
	echo "ok $n dfg.long_token_time"
else
	fail=$((fail + 1))
	echo "not ok $n dfg.long_token_time # $ms ms"
fi

# Numeric options: digits only, in range, checked before anything runs.
printf '%s\n' 'digraph p {' '  a [type=generate, count=5];' \
	'  o [type=write_lines, file="x"];' '  a -> o;' '}' >"$g"
for v in -1 10x '' ' 5' +5 0 18446744073709551616; do
	check "checkpoint_every_'$v'" 2 "--checkpoint-every: " \
		-- "$dfg" run --checkpoint-every "$v" "$g"
done
for v in 0 -1 -3 abc 2x '' 1025; do
	check "workers_'$v'" 2 "--workers: " \
		-- "$dfg" run --workers "$v" "$g"
done
check workers_zero_says_range 2 "--workers: '0' is out of range (1 to 1024)" \
	-- "$dfg" run --workers 0 "$g"
check workers_negative_says_digits 2 "--workers: not a number: '-1' (digits only, 1 to 1024)" \
	-- "$dfg" run --workers -1 "$g"
check workers_with_isolate 2 "run: --workers sizes the pool, which --isolate does not use" \
	-- "$dfg" run --workers 2 --isolate "$g"
check run_help_says_mode 0 "--isolate runs every set instance in a process of" \
	-- "$dfg" run --help

# A plugin without declarations loads, with a warning; the example
# plugin declares its parameters, checked like the built-ins'.
if cc -shared -fPIC -I"$top/libdfg/include" -o "$tmp/legacy.so" \
	"$top/libdfg/tests/plugins/legacy_abi.c"; then
	printf '%s\n' 'digraph p {' '  a [type=generate, count=5];' \
		'  l [type=test_legacy, level=x];' \
		'  o [type=write_lines, file="x"];' '  a -> l -> o;' '}' >"$g"
	check plugin_undeclared_warns 0 "warning: type 'test_legacy' declares no parameters" \
		-- "$dfg" plan --plugin "$tmp/legacy.so" "$g"
else
	check plugin_undeclared_warns 0 "" -- false
fi
printf '%s\n' 'digraph p {' '  a [type=generate, count=5];' \
	'  u [type=uniq, count=2];' \
	'  o [type=write_lines, file="x"];' '  a -> u -> o;' '}' >"$g"
check plugin_declared 1 "p.dot:3: node 'u': attribute 'count': 2 is not in [0, 1]" \
	-- "$dfg" plan --plugin "$top/build/lib/dfg/plugins/uniq.so" "$g"

# dfg graph: gen is deterministic; partition and info agree; every file
# and command-line error a user can reach says what is wrong.
gs=$tmp/gs
mkdir -p "$gs"
check graph_gen 0 "256 nodes" \
	-- "$dfg" graph gen --scale 8 --seed 3 --progress -o "$gs/g.dfgg"
"$dfg" graph gen --scale 8 --seed 3 -q -o "$gs/same.dfgg"
"$dfg" graph gen --scale 8 --seed 4 -q -o "$gs/h.dfgg"
file_check graph_gen_deterministic cmp "$gs/g.dfgg" "$gs/same.dfgg"
n=$((n + 1))
if cmp -s "$gs/g.dfgg" "$gs/h.dfgg"; then
	fail=$((fail + 1))
	echo "not ok $n dfg.graph_gen_seed_matters"
else
	pass=$((pass + 1))
	echo "ok $n dfg.graph_gen_seed_matters"
fi
check graph_info_whole 0 "whole graph" -- "$dfg" graph info "$gs/g.dfgg"
check graph_partition 0 "replicated: " \
	-- "$dfg" graph partition -k 2 --progress "$gs/g.dfgg"
check graph_info_parts 0 "partition 1 of 2" \
	-- "$dfg" graph info "$gs/g.0.dfgg" "$gs/g.1.dfgg"
check graph_partition_budget 0 "" \
	-- "$dfg" graph partition -k 2 --replica-budget 5% -o "$gs/b" "$gs/g.dfgg"
"$dfg" graph partition -k 2 --replica-budget 5% --replica-order density -q \
	-o "$gs/d" "$gs/g.dfgg"
check graph_info_budget_density 0 "(budget)" -- "$dfg" graph info "$gs/d.1.dfgg"
check graph_replica_order_bad 2 "--replica-order: 'size': score or density" \
	-- "$dfg" graph partition -k 2 --replica-order size "$gs/g.dfgg"
check graph_info_budget 0 "(budget)" -- "$dfg" graph info "$gs/b.0.dfgg"
check graph_partition_budget_bytes 0 "" \
	-- "$dfg" graph partition -k 3 --replica-budget 4K -q -o "$gs/c" "$gs/g.dfgg"
"$dfg" graph partition -k 2 -q "$gs/h.dfgg"
check graph_info_other_graph 1 "different graphs" \
	-- "$dfg" graph info "$gs/g.0.dfgg" "$gs/h.1.dfgg"
# dfg graph sample --files: the same digest in the four configurations
# of patent 004's ablation (and with a budget-cut replica); bad input
for cfg in "--no-replica --rules none" "--rules none" "--rules r1,r2,r4" \
	   "--rules all"; do
	# shellcheck disable=SC2086
	"$dfg" graph sample --files $cfg --batches 4 --batch 16 \
		"$gs/g.0.dfgg" "$gs/g.1.dfgg" | grep '^digest'
done >"$tmp/digests"
"$dfg" graph sample --files --rules all --batches 4 --batch 16 \
	"$gs/b.0.dfgg" "$gs/b.1.dfgg" | grep '^digest' >>"$tmp/digests"
n=$((n + 1))
if [ "$(wc -l <"$tmp/digests")" = 5 ] && [ "$(sort -u "$tmp/digests" | wc -l)" = 1 ]; then
	pass=$((pass + 1))
	echo "ok $n dfg.graph_sample_same_batches"
else
	fail=$((fail + 1))
	echo "not ok $n dfg.graph_sample_same_batches"
	sed 's/^/# /' "$tmp/digests"
fi
check graph_sample_other_graph 1 "different graphs" \
	-- "$dfg" graph sample --files "$gs/g.0.dfgg" "$gs/h.1.dfgg"
# The TCP key-value baseline: kv-serve on an ephemeral loopback port,
# sample --kv gives the digest of --files; it fails cleanly once the
# server is gone.
"$dfg" graph kv-serve --addr 127.0.0.1 --port 0 "$gs/g.1.dfgg" >"$tmp/kv.out" 2>&1 &
kvpid=$!
for _ in $(seq 50); do
	grep -q 'port' "$tmp/kv.out" && break
	sleep 0.1
done
kvport=$(sed -n 's/.*: port \([0-9]*\)$/\1/p' "$tmp/kv.out")
"$dfg" graph sample --kv "127.0.0.1:$kvport" --no-replica --rules none \
	--batches 4 --batch 16 "$gs/g.0.dfgg" >"$tmp/kvs.out" 2>&1
n=$((n + 1))
if grep -qxF "$(head -n 1 "$tmp/digests")" "$tmp/kvs.out" &&
   grep -q '^kv requests [1-9]' "$tmp/kvs.out"; then
	pass=$((pass + 1))
	echo "ok $n dfg.graph_sample_kv_same_batches"
else
	fail=$((fail + 1))
	echo "not ok $n dfg.graph_sample_kv_same_batches"
	sed 's/^/# /' "$tmp/kv.out" "$tmp/kvs.out"
fi
check graph_sample_kv_other_graph 1 "another graph or partitioning" \
	-- "$dfg" graph sample --kv "127.0.0.1:$kvport" "$gs/h.0.dfgg"
check graph_sample_kv_with_files 2 "give one" \
	-- "$dfg" graph sample --files --kv "127.0.0.1:$kvport" "$gs/g.0.dfgg" "$gs/g.1.dfgg"
kill "$kvpid"
wait "$kvpid"
check graph_kv_serve_sigterm 0 "" -- test "$?" = 0
check graph_sample_kv_refused 1 "Connection refused" \
	-- "$dfg" graph sample --kv "127.0.0.1:$kvport" "$gs/g.0.dfgg"
check graph_kv_serve_no_file 1 "No such file" \
	-- "$dfg" graph kv-serve --port 0 "$gs/none.dfgg"
# The apt importer on a small package list with a malformed stanza.
printf 'Package: b\nDepends: a (>= 1) | c\nSection: libs\n\nPackage: a\nSection: contrib/libs\nInstalled-Size: 3\n\nno colon\nPackage: x\n\nPackage: c\nRecommends: b, zz\n' \
	>"$gs/Packages"
check graph_import_apt 0 "3 packages (0 duplicate and 1 malformed stanzas skipped), 2 dependencies (1 naming no package)" \
	-- "$dfg" graph import --format apt "$gs/Packages" -o "$gs/apt.dfgg"
check graph_import_apt_info 0 "16 x f32, labels: 2 classes" \
	-- "$dfg" graph info "$gs/apt.dfgg"
check graph_import_apt_empty 1 "no package stanza" \
	-- "$dfg" graph import --format apt /dev/null -o "$gs/none.dfgg"
check graph_sample_rules_bad 2 "--rules wants" \
	-- "$dfg" graph sample --files --rules r5 "$gs/g.0.dfgg" "$gs/g.1.dfgg"
check graph_sample_fanout_bad 2 "--fanout wants" \
	-- "$dfg" graph sample --files --fanout 1,2,3,4,5 "$gs/g.0.dfgg" "$gs/g.1.dfgg"
check graph_serve_no_file 1 "No such file" \
	-- "$dfg" graph serve "$gs/none.dfgg"
check graph_info_other_partitioning 1 "different partitionings" \
	-- "$dfg" graph info "$gs/g.0.dfgg" "$gs/c.1.dfgg"
check graph_info_twice 1 "partition 0 given twice" \
	-- "$dfg" graph info "$gs/g.0.dfgg" "$gs/g.0.dfgg"
head -c 1000 "$gs/g.0.dfgg" >"$gs/trunc.dfgg"
check graph_info_truncated 1 "truncated: 1000 bytes" \
	-- "$dfg" graph info "$gs/trunc.dfgg"
head -c 600 /dev/zero >"$gs/zero.dfgg"
check graph_info_bad_magic 1 "bad magic" -- "$dfg" graph info "$gs/zero.dfgg"
check graph_info_missing 1 "No such file" -- "$dfg" graph info "$gs/none"
check graph_partition_a_partition 1 "not a whole graph" \
	-- "$dfg" graph partition -k 2 -o "$gs/x" "$gs/g.0.dfgg"
"$dfg" graph gen --scale 1 --edge-factor 1 -q -o "$gs/tiny.dfgg"
check graph_partition_k_too_big 1 "more partitions than the 2 nodes" \
	-- "$dfg" graph partition -k 3 "$gs/tiny.dfgg"

printf '# Directed graph: example\n# FromNodeId\tToNodeId\n7\t9\n9 70\n\n70 7\n' \
	>"$gs/in.txt"
check graph_import_snap 0 "3 nodes, 3 arcs" \
	-- "$dfg" graph import "$gs/in.txt" -o "$gs/s.dfgg"
check graph_import_snap_undirected 0 "3 nodes, 6 arcs (undirected)" \
	-- "$dfg" graph import --undirected --feat-dim 4 --classes 2 "$gs/in.txt" \
	-o "$gs/s.dfgg"
check graph_import_snap_info 0 "4 x f32, labels: 2 classes" \
	-- "$dfg" graph info "$gs/s.dfgg"
printf '1 2\nx 3\n' >"$gs/bad.txt"
check graph_import_snap_bad 1 "bad.txt:2: expected two node ids" \
	-- "$dfg" graph import "$gs/bad.txt" -o "$gs/s.dfgg"
# binary CSR, u64: 2 nodes, 1 arc 0 -> 1
z7='\0\0\0\0\0\0\0'
printf "\\002$z7\\001$z7\\000$z7\\001$z7\\001$z7\\001$z7" >"$gs/c64.bin"
check graph_import_csr64 0 "2 nodes, 1 arcs" \
	-- "$dfg" graph import --format csr64 "$gs/c64.bin" -o "$gs/c.dfgg"
head -c 44 "$gs/c64.bin" >"$gs/c64t.bin"
check graph_import_csr_truncated 1 "truncated: 2 nodes and 1 arcs need 48 bytes, the file has 44" \
	-- "$dfg" graph import --format csr64 "$gs/c64t.bin" -o "$gs/c.dfgg"
printf "\377\377\0\0\0\0\0\0\001$z7" >"$gs/big.bin"
check graph_import_csr_header_lies 1 "65535 nodes and 1 arcs need 524312 bytes, the file has 16" \
	-- "$dfg" graph import --format csr64 "$gs/big.bin" -o "$gs/c.dfgg"
check graph_import_missing 1 "No such file" \
	-- "$dfg" graph import "$gs/none.txt" -o "$gs/c.dfgg"

check graph_no_command 2 "graph needs a command" -- "$dfg" graph
check graph_unknown_command 2 "unknown command 'frob'" -- "$dfg" graph frob
check graph_gen_no_output 2 "gen needs --scale S and -o FILE" \
	-- "$dfg" graph gen --scale 4
check graph_gen_scale_range 2 "--scale: '31' is out of range" \
	-- "$dfg" graph gen --scale 31 -o "$gs/x"
check graph_gen_feat_type 2 "--feat-type: 'f64'" \
	-- "$dfg" graph gen --scale 4 --feat-type f64 -o "$gs/x"
check graph_import_format 2 "--format: 'xml'" \
	-- "$dfg" graph import --format xml "$gs/in.txt" -o "$gs/x"
check graph_import_no_input 2 "import needs one INPUT and -o FILE" \
	-- "$dfg" graph import -o "$gs/x"
check graph_partition_k1 2 "-k: '1' is out of range" \
	-- "$dfg" graph partition -k 1 "$gs/g.dfgg"
check graph_partition_no_k 2 "partition needs -k K and one FILE" \
	-- "$dfg" graph partition "$gs/g.dfgg"
for v in 5x % '' 10%% -1; do
	check "graph_budget_'$v'" 2 "--replica-budget" \
		-- "$dfg" graph partition -k 2 --replica-budget "$v" "$gs/g.dfgg"
done
check graph_help 0 "dfg graph partition -k K" -- "$dfg" graph --help
check graph_info_no_file 2 "info needs FILE" -- "$dfg" graph info
# dfg run --rules: the rule files are read before anything runs
printf '%s\n' '# skew' 'rule r when comp ?c key_skew >> 2' 'do degree ?c 4 end' \
	>"$tmp/bad.rules"
check rules_syntax_error 1 "bad.rules:2:31: expected a value (number, string, name, ?variable, \$variable or '('), found '>'" \
	-- "$dfg" run --rules "$tmp/bad.rules" "$graphs/fig2.dot"
check rules_missing_file 1 "--rules $tmp/none.rules: No such file or directory" \
	-- "$dfg" run --rules "$tmp/none.rules" "$graphs/fig2.dot"
check rules_explain_alone 2 "--explain explains --rules" \
	-- "$dfg" run --explain "$graphs/fig2.dot"
check rules_replan_every 2 "--replan-every" \
	-- "$dfg" run --rules default --replan-every 0 "$graphs/fig2.dot"

# dfg plans: the plan store of a state directory. A store made here with
# sqlite3 as libdfg makes it (rules/store.c: its schema, application_id
# "DFGP", user_version 1): two decisions.
ps=$tmp/plans.state
check plans_no_command 2 "which: list, show ID or forget ID|--all" \
	-- "$dfg" plans --state-dir "$ps"
check plans_unknown_command 2 "unknown command 'drop'" \
	-- "$dfg" plans drop --state-dir "$ps"
check plans_no_state_dir 2 "needs --state-dir DIR or a GRAPH.dot" \
	-- "$dfg" plans list
check plans_both_dirs 2 "one of them" \
	-- "$dfg" plans list --state-dir "$ps" "$tmp/g.dot"
check plans_no_store 1 "$ps: no plan store" \
	-- "$dfg" plans list --state-dir "$ps"
check plans_no_store_graph 1 "$tmp/g.dot.state: no plan store" \
	-- "$dfg" plans show 1a --json "$tmp/g.dot"
check plans_help 0 "dfg plans forget ID|--all" -- "$dfg" plans --help
check plans_in_dfg_help 0 "dfg plans show ID" -- "$dfg" --help
if command -v sqlite3 >/dev/null; then
	mkdir -p "$ps"
	sqlite3 "$ps/plans.db" "
CREATE TABLE plan (sig INTEGER PRIMARY KEY, graph TEXT NOT NULL,
conditions TEXT NOT NULL, created INTEGER NOT NULL, used INTEGER NOT NULL,
hits INTEGER NOT NULL);
CREATE TABLE edit (sig INTEGER NOT NULL, seq INTEGER NOT NULL,
op INTEGER NOT NULL, comp TEXT NOT NULL, degree INTEGER NOT NULL, type TEXT,
key TEXT, value TEXT, PRIMARY KEY (sig, seq)) WITHOUT ROWID;
PRAGMA application_id = 1145456464; PRAGMA user_version = 1;
INSERT INTO plan VALUES (171, 'job', 'skew_scale_out|comp:part',
1764298800, 1764298860, 3);
INSERT INTO edit VALUES (171, 0, 1, 'part', 4, NULL, NULL, NULL);
INSERT INTO plan VALUES (-2, 'job', 'low_memory|system',
1764298900, 1764298900, 0);
INSERT INTO edit VALUES (-2, 0, 4, 'sort', 0, 'extsort', NULL, NULL);
INSERT INTO edit VALUES (-2, 1, 5, 'sort', 0, NULL, 'mem', '64M');"
	check plans_list 0 "00000000000000ab  job               3  2025-11-28T03:01:00Z  degree part 4" \
		-- "$dfg" plans list --state-dir "$ps"
	check plans_list_two 0 "fffffffffffffffe  job               0  2025-11-28T03:01:40Z  substitute sort extsort; param sort mem=64M" \
		-- "$dfg" plans list --state-dir "$ps"
	check plans_list_json 0 "true" -- sh -c "'$dfg' plans list --json --state-dir '$ps' |
		jq -e 'length == 2 and .[0].id == \"00000000000000ab\" and
		       .[0].edits[0].op == \"degree\" and .[0].edits[0].degree == 4 and
		       .[1].edits[1].key == \"mem\" and .[1].hits == 0'"
	check plans_show 0 "conditions: skew_scale_out|comp:part" \
		-- "$dfg" plans show ab --state-dir "$ps"
	check plans_show_change 0 "change      param sort mem=64M" \
		-- "$dfg" plans show FFFFFFFFFFFFFFFE --state-dir "$ps"
	check plans_show_json 0 "true" -- sh -c "'$dfg' plans show ab --json --state-dir '$ps' |
		jq -e '.graph == \"job\" and .created == \"2025-11-28T03:00:00Z\"'"
	check plans_show_unknown 1 "plans show: no plan 00000000000000ac in $ps" \
		-- "$dfg" plans show ac --state-dir "$ps"
	for id in xyz 0 12345678901234567 1g ''; do
		check "plans_show_bad_id_'$id'" 2 "'$id' is no plan id" \
			-- "$dfg" plans show "$id" --state-dir "$ps"
	done
	check plans_show_no_id 2 "plans show: needs a plan ID" \
		-- "$dfg" plans show --state-dir "$ps"
	check plans_forget_no_id 2 "plans forget: needs a plan ID or --all" \
		-- "$dfg" plans forget --state-dir "$ps"
	check plans_forget_json 2 "--json is for list and show" \
		-- "$dfg" plans forget ab --json --state-dir "$ps"
	check plans_list_all 2 "--all is for forget" \
		-- "$dfg" plans list --all --state-dir "$ps"
	check plans_forget_unknown 1 "plans forget: no plan 00000000000000ac" \
		-- "$dfg" plans forget ac --state-dir "$ps"
	check plans_forget 0 "forgot plan 00000000000000ab" \
		-- "$dfg" plans forget ab --state-dir "$ps"
	check plans_forgotten 1 "no plan 00000000000000ab" \
		-- "$dfg" plans show ab --state-dir "$ps"
	check plans_forget_all 0 "forgot every plan" \
		-- "$dfg" plans forget --all --state-dir "$ps"
	check plans_list_empty 0 "no plans stored in $ps" \
		-- "$dfg" plans list --state-dir "$ps"
	check plans_list_empty_json 0 "[]" \
		-- "$dfg" plans list --json --state-dir "$ps"
	# another program's database, left as it is
	rm -f "$ps"/plans.db*
	sqlite3 "$ps/plans.db" "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
	check plans_foreign 1 "an SQLite database of another program" \
		-- "$dfg" plans list --state-dir "$ps"
	check plans_foreign_forget 1 "an SQLite database of another program" \
		-- "$dfg" plans forget --all --state-dir "$ps"
	file_check plans_foreign_untouched \
		test "$(sqlite3 "$ps/plans.db" 'SELECT x FROM t')" = 1
else
	echo "ok $((n + 1)) dfg.plans_store # SKIP no sqlite3"
	n=$((n + 1)) skip=$((skip + 1))
fi
# not a database at all, a damaged one
rm -f "$ps"/plans.db*
mkdir -p "$ps"
echo "plans, by hand" >"$ps/plans.db"
check plans_not_a_database 1 "plans.db is not a plan store: damaged, or not an SQLite database" \
	-- "$dfg" plans list --state-dir "$ps"
check plans_not_a_database_show 1 "is not a plan store" \
	-- "$dfg" plans show ab --json --state-dir "$ps"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" = 0 ]
