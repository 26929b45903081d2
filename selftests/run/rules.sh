#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dfg run --rules end to end, in the test VM (TAP output):
#   tools/vm/dfg-vm -- selftests/run/rules.sh
# The rule interpreter (libdfg/rules) deciding, the executor re-planning
# the running graph (libdfg/run/replan.c), with the module's feedback:
#   - CPU 1 taken offline while a keyed count runs at degree 2: the
#     default rules refold it onto the CPU left (degree 1), and back to 2
#     when the CPU returns; the counts are those of coreutils;
#   - skewed keys: the default rules re-partition 2 -> 4 in one step (the
#     region the change affects: the count's set, and its neighbours); a
#     second run on the same plan store is answered from it (one step,
#     the evaluation timed), `dfg plans list` counts the hit;
#   - a rule that adds a rule and revokes itself: one change, once;
#   - invalid actions (a degree of 0; a source's degree, which the
#     executor refuses): warned, the run goes on on its plan, output right;
#   - a sort substituted by sort_external mid-run (a rule of its own, and
#     the default rules when memory is short): its records carried over,
#     output right.
# DFG_REPLAN_LOG=1 gives the decision and new-plan lines checked here.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here
while [ "$top" != / ] && [ ! -f "$top/Kbuild" ]; do top=$(dirname "$top"); done
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
work=$(mktemp -d /tmp/dfg-rules.XXXXXX) || exit 1
cpu1=/sys/devices/system/cpu/cpu1/online
# CPU 1 comes back whatever happens
trap '[ -n "${DFG_VM:-}" ] && [ -w $cpu1 ] && echo 1 >$cpu1 2>/dev/null; rm -rf "$work"' EXIT
export LC_ALL=C

n=0
fails=0
skips=0
check() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else
		fails=$((fails + 1)); echo "not ok $n - $1"; fi
}
skip() {
	n=$((n + 1)); skips=$((skips + 1)); echo "ok $n - $1 # SKIP $2"
}

# Wait (up to $2 s) until file $1 has a line matching regex $3.
wait_line() {
	local i
	for i in $(seq $(($2 * 10))); do
		grep -q -- "$3" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The degree of set "count" in the plan printed after generation $2 in
# log $1 (0: the first plan).
degree_at() {
	awk -v g="$2" '/^re-plan: generation/ { cur = $3 }
		/^  set .*: .*count/ && cur + 0 == g { sub(/.*degree /, ""); sub(/,.*/, ""); print; exit }' "$1"
}

# The degrees of set "count" in log $1, plan after plan: "2 1 2".
degrees() {
	awk '/^  set .*: .*count/ { sub(/.*degree /, ""); sub(/,.*/, ""); printf "%s%s", s, $0; s = " " }' "$1"
}

cd "$work" || exit 1
echo "TAP version 13"
echo "1..22"

# job NAME COUNT KEYEXPR: generate -> key -> hash -> count (2) -> sort ->
# write; the reference from awk.
job() {
	cat >"$1.dot" <<G
digraph $1 {
	gen  [type=generate, count=$2];
	key  [type=map, expr="$3"];
	count [type=count, degree=2];
	sort [type=sort, key="\$1", sep=tab];
	out  [type=write_lines, file="$1.out"];
	gen -> key;
	key -> count [flow=hash, key="\$0"];
	count -> sort [flow=gather];
	sort -> out;
}
G
}
# ref COUNT AWKKEY: the sorted "key<TAB>count" lines
ref() {
	awk -v n="$1" "BEGIN { for (NR = 1; NR <= n; NR++) { k = $2; c[k]++ }
		for (k in c) printf \"%s\\t%d\\n\", k, c[k] }" | sort -t"$(printf '\t')" -k1,1 >"$3"
}

# The default rules with hot_unfold off: the decisions checked here are
# the ones the test provokes (unfolding a CPU-heavy map is right, but
# would come at a time of its own).
echo 'var unfold_cpu_share = 2' >quiet.rules

# --- 1. CPU hotplug --------------------------------------------------------
N=1500000
job hot $N '$0 % 1000'
ref $N '(NR - 1) % 1000' hot.ref
# only in the test VM: never the CPUs of the machine running it
if [ -z "${DFG_VM:-}" ] || [ "$(nproc)" -lt 2 ] || [ ! -w $cpu1 ]; then
	for t in "exit 0" "refolded to degree 1" "back to degree 2" "output = reference" "two changes, none refused"; do
		skip "cpu hotplug: $t" "not in the test VM, or no hotpluggable CPU 1"
	done
else
	DFG_REPLAN_LOG=1 "$dfg" run -v --rules default --rules quiet.rules \
		--explain --checkpoint-every 20000 --replan-every 100 \
		--state-dir hot.state hot.dot >hot.log 2>&1 &
	pid=$!
	# running: past the plan, then CPU 1 out until the rules refolded
	# the count (the explained change, then the re-plan after it)
	wait_line hot.log 120 '^plan:' && sleep 2
	echo 0 >$cpu1
	echo "# CPU 1 offline at $(date +%T.%N)"
	wait_line hot.log 120 '^  change degree count 1' &&
		wait_line hot.log 120 '^re-plan: generation 1 '
	echo 1 >$cpu1
	echo "# CPU 1 online at $(date +%T.%N)"
	wait $pid
	rc=$?
	grep -E '^(re-plan|  set|summary|replan-log|dfg|rules|rule|  change)' hot.log | sed 's/^/# /'
	check "cpu hotplug: exit 0 ($rc)" "[ $rc = 0 ]"
	check "cpu hotplug: refolded to degree 1 ($(degrees hot.log))" \
		"[ \"\$(degrees hot.log)\" = '2 1 2' ] || [ \"\$(degrees hot.log)\" = '2 1' ]"
	check "cpu hotplug: back to degree 2 ($(degrees hot.log))" \
		"[ \"\$(degrees hot.log)\" = '2 1 2' ]"
	check "cpu hotplug: output = reference" "cmp -s hot.out hot.ref"
	check "cpu hotplug: two changes, none refused" \
		"grep -q '^summary: 2 re-plans (generation 2), 0 refused' hot.log"
fi

# --- 2. skew, and the plan store on the second run ---------------------------
N=600000
# a third uniform over 1000 keys, then 80 % on key 7
skewkey='$0 < 200000 ? $0 % 1000 : ($0 % 10 < 8 ? 7 : $0 % 1000)'
job skew $N "$skewkey"
ref $N '(NR - 1 < 200000 ? (NR - 1) % 1000 : ((NR - 1) % 10 < 8 ? 7 : (NR - 1) % 1000))' skew.ref
rm -rf skew.state
for run in 1 2; do
	DFG_REPLAN_LOG=1 "$dfg" run -v --rules default --rules quiet.rules \
		--checkpoint-every 20000 --replan-every 100 \
		--state-dir skew.state skew.dot >skew$run.log 2>&1
	rc=$?
	grep -E '^(re-plan: gen|summary: .*re-plan|replan-log|dfg|rules)' skew$run.log | sed "s/^/# run $run: /"
	check "skew run $run: exit 0, output = reference" \
		"[ $rc = 0 ] && cmp -s skew.out skew.ref"
done
check "skew run 1: one step, 2 -> 4 ($(degree_at skew1.log 0) -> $(degree_at skew1.log 1), $(grep -c '^replan-log: run' skew1.log) changes)" \
	"[ \"\$(degree_at skew1.log 0)\" = 2 ] && [ \"\$(degree_at skew1.log 1)\" = 4 ] && [ \$(grep -c '^replan-log: run' skew1.log) = 1 ]"
check "skew run 1: decided by the rules, not the store" \
	"grep -q '^replan-log: rules gen=0 .* store=0' skew1.log"
# the change's region: the count's set anew (4 instances), the sets on
# either side of it joined by its two flows, none untouched
check "skew run 1: region: the count's set new, its neighbours at the boundary" \
	"grep -q '^replan-log: region gen=1 new_sets=1 new_inst=4 rewired_sets=2 rewired_inst=2 kept_sets=0 kept_inst=0 stopped_inst=2 boundary_flows=2 closed_inst=6\$' skew1.log && grep -q '^re-plan: region: affected: s[0-9]*; at the boundary: s[0-9]* s[0-9]*; stopped (old plan): s[0-9]*\$' skew1.log"
ms=$(awk '/^replan-log: rules gen=0 / { for (i = 3; i <= NF; i++) if ($i ~ /^eval_ns=/) { sub(/eval_ns=/, "", $i); printf "%.3f", $i / 1e6 } }' skew2.log)
echo "# run 2: the store answered in ${ms:-?} ms"
check "skew run 2: one step from the plan store (${ms:-?} ms)" \
	"grep -q '^replan-log: rules gen=0 .* store=1' skew2.log && [ \$(grep -c '^replan-log: run' skew2.log) = 1 ] && [ \"\$(degree_at skew2.log 1)\" = 4 ]"
"$dfg" plans list --state-dir skew.state >plans.txt 2>&1
sed 's/^/# /' plans.txt
check "dfg plans list: the decision, hit once" \
	"awk '/degree count 4/ && \$3 == 1 { f = 1 } END { exit !f }' plans.txt"

# --- 3. a rule that adds a rule and revokes itself -------------------------
N=300000
job addrev $N '$0 % 100'
ref $N '(NR - 1) % 100' addrev.ref
cat >addrev.rules <<'R'
rule arm when comp ?c type == count, in_elems > 1000
do add rule widen when comp ?d type == count, degree < 3
        do degree ?d 3 end;
   revoke arm
end
R
DFG_REPLAN_LOG=1 "$dfg" run -v --rules addrev.rules --explain --checkpoint-every 20000 \
	--state-dir addrev.state addrev.dot >addrev.log 2>&1
rc=$?
grep -E '^(re-plan: gen|replan-log|fired|dfg)' addrev.log | sed 's/^/# /'
check "rules adding and revoking rules: exit 0, output = reference" \
	"[ $rc = 0 ] && cmp -s addrev.out addrev.ref"
check "rules adding and revoking rules: one change, to degree 3" \
	"[ \$(grep -c '^replan-log: run' addrev.log) = 1 ] && [ \"\$(degree_at addrev.log 1)\" = 3 ]"

# --- 4. invalid actions: refused, the run goes on ------------------------
# one decision each: a decision with one bad edit is refused whole
cat >bad1.rules <<'R'
rule zero when comp ?c type == count, in_elems > 1000 do degree ?c 0 end
R
cat >bad2.rules <<'R'
rule src when comp ?c type == generate, out_elems > 1000 do degree ?c 2 end
R
for b in 1 2; do
	DFG_REPLAN_LOG=1 "$dfg" run -v --rules bad$b.rules --checkpoint-every 20000 \
		--state-dir bad.state addrev.dot >bad$b.log 2>&1
	rc=$?
	grep -E '^(re-plan|summary: .*re-plan|dfg|rules)' bad$b.log | sort | uniq -c | sed 's/^/# /'
	check "invalid action $b: exit 0, output = reference, no change" \
		"[ $rc = 0 ] && cmp -s addrev.out addrev.ref && ! grep -q '^re-plan: generation' bad$b.log"
done
check "invalid action 1: degree 0 refused by the rules, with a warning" \
	"grep -q 'rules: .*refused: degree count' bad1.log"
check "invalid action 2: the executor refuses the change (a source's degree)" \
	"grep -q 'the executor refused the plan change (generation 0 stays)' bad2.log"

# --- 5. short of memory: the sort becomes an external sort, mid-run -------
# The sort holds every record until the end, so the substitution carries
# what it has sorted so far into sort_external (its checkpoint is the
# same record store), which then spills runs past its 64 KiB budget.
N=200000
cat >ext.dot <<G
digraph ext {
	gen [type=generate, count=$N];
	key [type=map, expr="(\$0 * 7919) % 100003"];
	s   [type=sort, numeric=1];
	out [type=write_lines, file="ext.out"];
	gen -> key -> s -> out;
}
G
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) print (i * 7919) % 100003 }' |
	sort -n >ext.ref
cat >ext.rules <<'R'
rule spill when comp ?c type == sort, in_elems > 20000
do substitute ?c "sort_external"; param ?c memory 65536
end
R
DFG_REPLAN_LOG=1 "$dfg" run -v --rules ext.rules --explain \
	--checkpoint-every 20000 --state-dir ext.state ext.dot >ext.log 2>&1
rc=$?
grep -E '^(re-plan|  set|replan-log|dfg|rules|  change)' ext.log | sed 's/^/# /'
check "sort to sort_external mid-run: exit 0, output = reference ($rc)" \
	"[ $rc = 0 ] && cmp -s ext.out ext.ref"
check "sort to sort_external mid-run: one change, made with records held" \
	"[ \$(grep -c '^replan-log: run' ext.log) = 1 ] && grep -q '^  change substitute s sort_external' ext.log"
# the summary counts the instances of every generation (the pool ran
# them all: none in a process of its own)
check "summary after a re-plan: $(grep -o '[0-9]* set instances in processes of their own' ext.log)" \
	"grep -q ' 0 set instances in processes of their own' ext.log"
# the default rules do it when memory is short: here $low_memory above
# any machine's memory
echo 'var low_memory = 1000000000000000' >lowmem.rules
DFG_REPLAN_LOG=1 "$dfg" run -v --rules default --rules quiet.rules \
	--rules lowmem.rules --explain --checkpoint-every 20000 \
	--state-dir lowmem.state ext.dot >lowmem.log 2>&1
rc=$?
grep -E '^(re-plan: gen|replan-log: run|dfg|rules:)' lowmem.log | sed 's/^/# /'
check "default rules short of memory: sort_external, output = reference ($rc)" \
	"[ $rc = 0 ] && cmp -s ext.out ext.ref && grep -q 'low_memory_sort fired' lowmem.log && grep -q '^  change substitute s sort_external' lowmem.log"

echo "# Totals: pass:$((n - fails - skips)) fail:$fails xfail:0 xpass:0 skip:$skips error:0"
[ "$fails" = 0 ]
