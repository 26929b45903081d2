#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dfg run, end to end, in the test VM (TAP output):
#   tools/vm/dfg-vm -- build/selftests/run/run_test.sh
# The graphs run in the default mode (a worker pool per phase, whose
# threads ask the kernel set scheduler for the next set) and again with
# --isolate (a process per set instance) and with a pool of 1 and of 2
# workers; a 40-set graph runs with 1 and 2 workers (sets outnumbering
# workers); killing the pool process, or a set process, stops the graph
# cleanly and --resume goes on from the last checkpoint.
# DFG_RUN_SHORT=N sets how many short graphs the leak test runs (300: one
# takes 0.25-0.55 s under TCG, nearly all of it starting the dfg process
# (dynamic loading, parsing; `dfg plan` alone is two thirds of it), and
# 1000 would not fit the ~3 minutes CI gives this test).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# Run from the source tree (selftests/run.sh) or from the build tree.
top=$here
while [ "$top" != / ] && [ ! -f "$top/Kbuild" ]; do top=$(dirname "$top"); done
BUILD=${BUILD:-$top/build}
dfg=$BUILD/bin/dfg
work=$BUILD/selftests/run/work
short=${DFG_RUN_SHORT:-300}
export LC_ALL=C

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }

# Nothing of ours left: no graph in sysfs, no process of a run.
no_leftovers() {
	local g
	g=$(ls /sys/kernel/dfg/graphs 2>/dev/null | grep -c '^graph' || true)
	[ "$g" = 0 ] && ! pgrep -x dfg >/dev/null
}

# Wait (up to 60 s) until directory $1 holds a file named $2.
wait_file() {
	local i
	for i in $(seq 600); do
		[ -e "$1/$2" ] && return 0
		sleep 0.1
	done
	return 1
}

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
echo "TAP version 13"
echo "1..53"

# A corpus: the fortunes text, cut down to keep TCG runs short.
cat $(ls /usr/share/games/fortunes/* | grep -v '\.dat$\|\.u8$') |
	head -n 20000 >corpus.txt

cat >wf.dot <<'G'
digraph wf {
	read     [type=read_lines, file="corpus.txt"];
	words    [type=split_words, lower=1];
	count    [type=count, degree=3];
	by_word  [type=sort, key="$1", sep=tab];
	by_count [type=sort, key="$2", sep=tab, numeric=1, order=desc];
	write    [type=write_lines, file="wf.out"];
	read -> words;
	words -> count [flow=hash, key="$0"];
	count -> by_word [flow=gather];
	by_word -> by_count;
	by_count -> write;
}
G
"$top/examples/wordfreq/reference.sh" <corpus.txt >wf.ref

"$dfg" run -q wf.dot
check "word frequency, folded: exit 0" "[ $? = 0 ]"
check "word frequency, folded: output = coreutils" "cmp -s wf.out wf.ref"
mv wf.out wf.folded
"$dfg" run -q --no-fold wf.dot
check "word frequency, unfolded: exit 0" "[ $? = 0 ]"
check "folded and unfolded give the same output" "cmp -s wf.out wf.folded"
# the same in every mode: a process per set, pools of 1 and 2 workers
for mode in --isolate "--workers 1" "--workers 2"; do
	for fold in "" --no-fold; do
		rm -f wf.out
		"$dfg" run -q $mode $fold wf.dot
		rc=$?
		check "word frequency, $mode ${fold:-folded}: exit $rc, output = coreutils" \
			"[ $rc = 0 ] && cmp -s wf.out wf.ref"
	done
done

# 10 light components, round robin into 2 ways and back.
cat >light.dot <<'G'
digraph light {
	gen  [type=generate, count=50000, pattern="item {}"];
	f1   [type=filter, expr="1"];
	m1   [type=map, expr="$0"];
	f2   [type=filter, expr="1"];
	m2   [type=map, expr="$0"];
	f3   [type=filter, expr="1"];
	m3   [type=map, expr="$0"];
	f4   [type=filter, expr="1"];
	m4   [type=map, expr="$0"];
	out  [type=write_lines, file="light.out"];
	gen -> f1 -> m1 -> f2 -> m2 -> f3 -> m3 -> f4 -> m4 -> out;
}
G
"$dfg" run -q --no-fold light.dot && seq 0 49999 | sed 's/^/item /' >light.ref
check "10-component pipeline, unfolded: output = seq" "cmp -s light.out light.ref"
rm -f light.out
"$dfg" run -q light.dot
check "10-component pipeline, folded: output = seq" "cmp -s light.out light.ref"
for mode in --isolate "--workers 1" "--workers 2"; do
	rm -f light.out
	"$dfg" run -q --no-fold $mode light.dot
	check "10-component pipeline, unfolded, $mode: output = seq" \
		"cmp -s light.out light.ref"
done

# Per-component counts (dfg run -v): a filter that drops, a map that
# changes the elements' length, then a filter and a map that pass them on
# unchanged into two writers; members with a step have their port's
# counts made per quantum from what they received and dropped (set.c),
# which must give what the elements show, folded or not.
cat >counts.dot <<'G'
digraph counts {
	gen  [type=generate, count=3000, pattern="item {}"];
	f    [type=filter, expr="$2 % 3 != 0"];
	m    [type=map, expr="$2"];
	k    [type=filter, expr="1"];
	i    [type=map, expr="$0"];
	out  [type=write_lines, file="counts.out"];
	out2 [type=write_lines, file="counts2.out"];
	gen -> f -> m -> k -> i -> out;
	i -> out2;
}
G
counts_ref=$(seq 0 2999 | awk '{ a += 5 + length($1) } $1 % 3 { b += 5 + length($1); c += length($1) }
	END { printf "gen 0 3000 0 f 3000 2000 %d m 2000 2000 %d k 2000 2000 %d i 2000 2000 %d out 2000 0 %d out2 2000 0 %d", a, b, c, c, c, c }')
for fold in "" --no-fold; do
	rm -f counts.out counts2.out
	"$dfg" run -v $fold counts.dot 2>counts.log
	rc=$?
	got=$(awk '/^  .* cpu%$/ { t = 1; next } t && /^  / && NF == 7 { printf "%s%s %s %s %s", s, $2, $4, $5, $6; s = " " }' counts.log)
	[ "$got" = "$counts_ref" ] || { echo "# got:  $got"; echo "# want: $counts_ref"; }
	check "per-component counts, ${fold:-folded}: exit $rc, in, out and in bytes as the elements show" \
		"[ $rc = 0 ] && [ \"$got\" = \"$counts_ref\" ] && [ \$(wc -l <counts.out) = 2000 ] && cmp -s counts.out counts2.out"
done

# One element to several consumers: a port feeding three flows and a
# broadcast to two instances. The set may forward the buffer it received
# only on its last use; forwarded earlier, a consumer could free it
# before the later flows copied it (a corrupt or extra line, now and
# then, in the later files).
cat >fanout.dot <<'G'
digraph fanout {
	gen [type=generate, count=200000, pattern="line {} of the fan-out test"];
	i   [type=map, expr="$0"];
	b   [type=map, expr="$0", degree=2];
	o1  [type=write_lines, file="fanout1.out"];
	o2  [type=write_lines, file="fanout2.out"];
	o3  [type=write_lines, file="fanout3.out"];
	o4  [type=write_lines, file="fanout4.out"];
	gen -> i;
	i -> o1;
	i -> o2;
	i -> o3;
	i -> b [flow=broadcast];
	b -> o4 [flow=gather];
}
G
seq 0 199999 | sed 's/.*/line & of the fan-out test/' >fanout.ref
sort fanout.ref fanout.ref >fanout4.ref
for fold in "" --no-fold; do
	rm -f fanout?.out
	"$dfg" run -q $fold --workers 2 fanout.dot
	rc=$?
	check "one port to three flows and a broadcast, ${fold:-folded}: exit $rc, every file intact" \
		"[ $rc = 0 ] && cmp -s fanout1.out fanout.ref && cmp -s fanout2.out fanout.ref && cmp -s fanout3.out fanout.ref && sort fanout4.out | cmp -s - fanout4.ref"
done

# 40 sets (unfolded: one per component), more than the workers: each
# worker asks the module for the next runnable set.
{
	echo 'digraph g40 {'
	echo '	g [type=generate, count=20000, pattern="x {}"];'
	prev=g
	for i in $(seq 1 38); do
		echo "	m$i [type=map, expr=\"\$0\"];"
		echo "	$prev -> m$i;"
		prev=m$i
	done
	echo '	o [type=write_lines, file="g40.out"];'
	echo "	$prev -> o;"
	echo '}'
} >g40.dot
seq 0 19999 | sed 's/^/x /' >g40.ref
for w in 1 2; do
	rm -f g40.out
	"$dfg" run -v --no-fold --workers $w g40.dot 2>g40.log
	rc=$?
	check "40 sets on $w worker(s): exit $rc, output = seq, one process" \
		"[ $rc = 0 ] && cmp -s g40.out g40.ref && grep -q '^summary: 1 processes for 40 sets' g40.log && grep -q '^summary: worker pool: $w workers ran 40 set instances' g40.log"
done

# A sort's shutdown sends 50000 elements in one compute() call, far
# more than its channel and queue hold: on a single worker, the worker
# blocks in the channel and lends its place to a spare, which runs the
# writer.
cat >bigsort.dot <<'G'
digraph bigsort {
	gen  [type=generate, count=50000, pattern="k{}"];
	s    [type=sort];
	out  [type=write_lines, file="bigsort.out"];
	gen -> s -> out;
}
G
seq 0 49999 | sed 's/^/k/' | sort >bigsort.ref
timeout 600 "$dfg" run -q --no-fold --workers 1 bigsort.dot
rc=$?
check "sort of 50000 unfolded on 1 worker (a spare stands in): exit $rc, output = sort" \
	"[ $rc = 0 ] && cmp -s bigsort.out bigsort.ref"

# Two phases: phase 1 starts once phase 0 has ended, the flows between
# them are spooled (far more than a channel holds), straight and
# round-robin into 2 instances.
cat >phases.dot <<'G'
digraph phases {
	gen  [type=generate, count=60000, pattern="item {}"];
	m0   [type=map, expr="$0"];
	w1   [type=write_lines, file="ph.a.out", phase=1];
	f1   [type=filter, expr="1", degree=2, phase=1];
	w2   [type=write_lines, file="ph.b.out", phase=1];
	gen -> m0;
	m0 -> w1;
	m0 -> f1 [flow=roundrobin];
	f1 -> w2 [flow=gather];
}
G
seq 0 59999 | sed 's/^/item /' >ph.ref
sort ph.ref >ph.sorted
TMPDIR=$work "$dfg" run -v phases.dot 2>ph.log
rc=$?
check "two phases: exit 0, 60000 elements spooled across ($rc)" \
	"[ $rc = 0 ] && cmp -s ph.a.out ph.ref && sort ph.b.out | cmp -s - ph.sorted"
check "two phases: a pool per phase, spool files removed" \
	"grep -q '^summary: 2 processes' ph.log && ! ls -d dfg-spool-* 2>/dev/null"
rm -f ph.a.out ph.b.out
TMPDIR=$work "$dfg" run -v --isolate phases.dot 2>ph.log
rc=$?
check "two phases, --isolate: exit $rc, same output, 5 processes" \
	"[ $rc = 0 ] && cmp -s ph.a.out ph.ref && sort ph.b.out | cmp -s - ph.sorted && grep -q '^summary: 5 processes' ph.log"
rm -f ph.a.out ph.b.out
"$dfg" run -q --checkpoint-every 7000 --state-dir ph.state phases.dot
rc=$?
check "two phases, checkpoints: same output, state removed ($rc)" \
	"[ $rc = 0 ] && cmp -s ph.a.out ph.ref && sort ph.b.out | cmp -s - ph.sorted && [ ! -e ph.state ]"

# A plugin's component (examples/plugins/uniq.c: rot13) in a folded set.
cat >plug.dot <<'EOF2'
digraph plug {
	gen [type=generate, count=1000, pattern="abc {}"];
	r   [type=rot13];
	out [type=write_lines, file="plug.out"];
	gen -> r -> out;
}
EOF2
"$dfg" run -q --plugin "$BUILD/lib/dfg/plugins/uniq.so" plug.dot
rc=$?
seq 0 999 | sed 's/^/nop /' >plug.ref
check "plugin component: exit $rc, output = rot13 reference" \
	"[ $rc = 0 ] && cmp -s plug.out plug.ref"
# a mix: the plugin's set in processes of its own, the others in the pool
cat >plug2.dot <<'EOF2'
digraph plug2 {
	gen [type=generate, count=1000, pattern="abc {}"];
	m   [type=map, expr="$0"];
	r   [type=rot13, degree=2];
	out [type=write_lines, file="plug2.out"];
	gen -> m;
	m -> r [flow=roundrobin];
	r -> out [flow=gather];
}
EOF2
"$dfg" run -v --plugin "$BUILD/lib/dfg/plugins/uniq.so" plug2.dot 2>plug2.log
rc=$?
sort plug.ref >plug.sorted
check "plugin sets in their own processes beside the pool: exit $rc, same lines" \
	"[ $rc = 0 ] && sort plug2.out | cmp -s - plug.sorted && grep -q '^summary: 3 processes' plug2.log && grep -q 'ran 2 set instances, 2 set instances in processes of their own' plug2.log"
# an exec component (it forks): its set has a process of its own too
cat >ex.dot <<'G'
digraph ex {
	gen [type=generate, count=3000, pattern="item {}"];
	cat [type=exec, cmd="cat"];
	out [type=write_lines, file="ex.out"];
	gen -> cat -> out;
}
G
"$dfg" run -v ex.dot 2>ex.log
rc=$?
seq 0 2999 | sed 's/^/item /' >ex.ref
check "exec component: exit $rc, output = seq, its set in a process of its own" \
	"[ $rc = 0 ] && cmp -s ex.out ex.ref && grep -q 'own process' ex.log"

# A component that emits the element it received again (emit_again.c):
# the first emission may forward the received buffer to the next set
# without a copy; a later one must still find it intact and is copied.
# Its two instances sit between channels (roundrobin in, gather out), so
# the folded run forwards too. One that emits an element kept from an
# earlier call is refused, with its name.
cat >again.dot <<'G'
digraph again {
	gen [type=generate, count=300, pattern="line {}"];
	ea  [type=emit_again, mode=MODE, degree=2];
	out [type=write_lines, file="again.out"];
	gen -> ea [flow=roundrobin];
	ea -> out [flow=gather];
}
G
awk 'BEGIN { for (i = 0; i < 300; i++) print "line " i "\nline " i }' |
	sort >again.twice
awk 'BEGIN { for (i = 0; i < 300; i++) { print "line " i "\nline " i
	for (j = 0; j < 70; j++) print "fill" } }' | sort >again.after
for mode in twice after; do
	sed "s/MODE/$mode/" again.dot >again.$mode.dot
	for fold in "" --no-fold; do
		rm -f again.out
		"$dfg" run -q $fold --plugin "$BUILD/selftests/run/emit_again.so" \
			again.$mode.dot 2>again.log
		rc=$?
		check "component emitting its input again ($mode${fold:+, $fold}): exit $rc, every copy intact" \
			"[ $rc = 0 ] && sort again.out | cmp -s - again.$mode"
	done
done
sed "s/MODE/stale/" again.dot >again.stale.dot
for fold in "" --no-fold; do
	err=$("$dfg" run -q $fold --plugin "$BUILD/selftests/run/emit_again.so" again.stale.dot 2>&1)
	rc=$?
	check "component emitting an element of an earlier call${fold:+, $fold}: refused ($err)" \
		"[ $rc = 1 ] && echo \"\$err\" | grep -q 'ea: emitted an element received in an earlier call'"
done

# A component error: a numeric sort of words.
cat >bad.dot <<'G'
digraph bad {
	read  [type=read_lines, file="corpus.txt"];
	words [type=split_words];
	num   [type=sort, numeric=1];
	write [type=write_lines, file="bad.out"];
	read -> words -> num -> write;
}
G
err=$("$dfg" run -q bad.dot 2>&1)
rc=$?
check "component error: nonzero exit" "[ $rc = 1 ]"
check "component error: names the component ($err)" \
	"echo \"\$err\" | grep -q 'num: .*not an integer'"
err=$("$dfg" run -q --isolate bad.dot 2>&1)
rc=$?
check "component error, --isolate: names the component ($err)" \
	"[ $rc = 1 ] && echo \"\$err\" | grep -q 'num: .*not an integer'"
err=$("$dfg" run -q --no-fold --workers 1 bad.dot 2>&1)
rc=$?
check "component error, unfolded on 1 worker: names the component ($err)" \
	"[ $rc = 1 ] && echo \"\$err\" | grep -q 'num: .*not an integer'"

# A malformed graph: rejected before anything runs.
printf 'digraph m {\n a [type=generate, count=10, bogus=1];\n b [type=write_lines, file="m.out"];\n a -> b;\n}\n' >m.dot
err=$("$dfg" run -q m.dot 2>&1)
rc=$?
check "malformed graph: rejected, nothing ran ($err)" \
	"[ $rc = 1 ] && [ ! -e m.out ] && echo \"\$err\" | grep -q 'm.dot:2'"

# A killed worker process (the pool; with --isolate a set's) fails the
# graph, the others exit.
cat >long.dot <<'G'
digraph long {
	gen [type=generate, count=100000000];
	f   [type=filter, expr="1"];
	out [type=write_lines, file="/dev/null"];
	gen -> f;
	f -> out [flow=roundrobin];
}
G
for mode in "--workers 2" --isolate; do
	"$dfg" run -q --no-fold $mode long.dot 2>kill.err &
	pid=$!
	# A loaded host may take seconds to fork the sets: wait for them.
	for _ in $(seq 300); do
		[ -n "$(pgrep -P $pid)" ] && break
		sleep 0.1
	done
	sleep 1
	victim=$(pgrep -P $pid | tail -n 1)
	[ -n "$victim" ] && kill -9 "$victim"
	# Not ended 30 s after the kill: a failure, and no test left waiting.
	timeout 30 tail --pid=$pid -f /dev/null || kill -9 $pid
	wait $pid
	rc=$?
	check "killed worker, $mode: the run fails ($(cat kill.err))" \
		"[ $rc = 1 ] && grep -q 'killed by signal 9' kill.err"
	sleep 0.5
	check "killed worker, $mode: nothing left behind" no_leftovers
done

# Checkpoints: kill the whole run mid-way, resume, same output.
"$dfg" run -q --checkpoint-every 3000 --state-dir ck.state wf.dot
cp wf.out wf.ck-ref
check "checkpointing run: output = coreutils" "cmp -s wf.ck-ref wf.ref"
"$dfg" run -q --checkpoint-every 3000 --state-dir ck.state wf.dot &
pid=$!
wait_file ck.state 's0.0.2.ckpt'
kill -9 $pid
wait $pid 2>/dev/null
sleep 0.5
ls ck.state >ck.files 2>&1
"$dfg" run -q --resume --checkpoint-every 3000 --state-dir ck.state wf.dot
rc=$?
check "resume after kill: exit 0, same output ($(grep -c ckpt ck.files) checkpoint files)" \
	"[ $rc = 0 ] && grep -q ckpt ck.files && cmp -s wf.out wf.ck-ref"
# The pool process alone killed mid-run: the run stops, resume goes on.
rm -rf ck.state
"$dfg" run -q --no-fold --workers 1 --checkpoint-every 3000 --state-dir ck.state wf.dot 2>kill.err &
pid=$!
wait_file ck.state 's0.0.2.ckpt'
kill -9 $(pgrep -P $pid)
timeout 30 tail --pid=$pid -f /dev/null
wait $pid
rc=$?
check "pool killed in a checkpointing run: the run fails ($(cat kill.err))" \
	"[ $rc = 1 ] && grep -q 'worker pool of .* killed by signal 9' kill.err"
sleep 0.5
check "pool killed: nothing left behind" no_leftovers
ls ck.state >ck.files 2>&1
"$dfg" run -q --no-fold --workers 2 --resume --checkpoint-every 3000 --state-dir ck.state wf.dot
rc=$?
check "resume after the pool's death: exit 0, same output ($(grep -c ckpt ck.files) checkpoint files)" \
	"[ $rc = 0 ] && grep -q ckpt ck.files && cmp -s wf.out wf.ck-ref"

# The same across phases: killed while phase 1 reads the spools.
rm -f ph.a.out ph.b.out
"$dfg" run -q --checkpoint-every 7000 --state-dir ph.state phases.dot &
pid=$!
wait_file ph.state 's2.1.2.ckpt'
kill -9 $pid
wait $pid 2>/dev/null
sleep 0.5
ls ph.state >ph.files 2>&1
"$dfg" run -q --resume --checkpoint-every 7000 --state-dir ph.state phases.dot
rc=$?
check "two phases, resume after kill in phase 1: same output ($(grep -c ckpt ph.files) checkpoint files)" \
	"[ $rc = 0 ] && grep -q 's2.1.*ckpt' ph.files && cmp -s ph.a.out ph.ref && sort ph.b.out | cmp -s - ph.sorted"

# Members with a step (map, filter without rejects) one after another
# in a folded set are called in turn from one frame: values computed,
# elements dropped, and a failure in the middle of the run names its
# component and element, as when each is called from the one before.
cat >steps.dot <<'G'
digraph steps {
	gen  [type=generate, count=30000, pattern="{} x"];
	even [type=filter, expr="$1 % 2 == 0"];
	half [type=map, expr="$1 / 2"];
	big  [type=filter, expr="$0 >= 100"];
	id   [type=map, expr="$0"];
	out  [type=write_lines, file="steps.out"];
	gen -> even -> half -> big -> id -> out;
}
G
seq 100 14999 >steps.ref
for fold in "" --no-fold; do
	rm -f steps.out
	"$dfg" run -q $fold steps.dot
	rc=$?
	check "map and filter steps, ${fold:-folded}: exit $rc, output = seq" \
		"[ $rc = 0 ] && cmp -s steps.out steps.ref"
done
sed -e 's|expr="\$1 / 2"|expr="$1 / ($1 - 14)"|' steps.dot >steps-bad.dot
"$dfg" run -q steps-bad.dot 2>steps-bad.log
rc=$?
check "a step that fails mid-run: exit $rc, its name, element and column" \
	"[ $rc != 0 ] && grep -q 'half: element 8: col 4: division by zero' steps-bad.log && no_leftovers"

# Many short graphs in a row: nothing leaks.
cat >short.dot <<'G'
digraph short {
	gen [type=generate, count=100];
	f   [type=filter, expr="1"];
	out [type=write_lines, file="short.out"];
	gen -> f;
	f -> out [flow=roundrobin];
}
G
bad=0
t0=$(date +%s%N)
for i in $(seq 1 "$short"); do
	"$dfg" run -q short.dot || { bad=$i; break; }
done
ms=$((($(date +%s%N) - t0) / 1000000))
check "$short short graphs in a row, $((ms / short)) ms each (first failure: $bad)" "[ $bad = 0 ]"
check "after $short graphs: no graph in sysfs, no process" no_leftovers

# The line selftests/run.sh (and make check) sums.
echo "# Totals: pass:$((n - fails)) fail:$fails xfail:0 xpass:0 skip:0 error:0"
[ $fails = 0 ]
