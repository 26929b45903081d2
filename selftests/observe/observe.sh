#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What monitoring reads, in the test VM (root, dfg.ko loaded; TAP output):
#  - dfgctl <subcommand> --json prints valid JSON for every subcommand
#    (monitor and top: one object per line), checked with jq;
#  - dfgctl monitor names every event it gets and prints its attributes;
#  - who hears what: an unprivileged listener (setpriv to uid 65534) gets
#    the events of root's graph without NAME and PID, cannot join
#    "events_full", and gets them with public_event_details=1; root's
#    listener gets everything;
#  - dfg run --stats-json writes the run summary.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
ctl=$BUILD/bin/dfgctl
hold=$BUILD/selftests/examples/hold_objects
param=/sys/module/dfg/parameters/public_event_details
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
export LC_ALL=C

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"
	[ $# -gt 1 ] && [ -s "$2" ] && sed 's/^/# /' "$2"
}
# check NAME CMD [FILE]: CMD (a string for eval) succeeds; FILE is shown
# when it does not.
check() { if eval "$2"; then ok "$1"; else not_ok "$1" "${3:-}"; fi; }

work=$(mktemp -d /tmp/observe.XXXXXX)
chmod 755 "$work"
mons=
cleanup() {
	local p
	for p in $mons; do kill "$p" 2>/dev/null; done
	echo 0 >"$param" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# Every line of $1 is a JSON object (jq -e fails on a line that is not).
json_lines() { [ -s "$1" ] && jq -e -s 'all(type == "object")' "$1" >/dev/null; }

# mon NAME [PREFIX...] -- ARGS: dfgctl monitor ARGS in the background
# (run under PREFIX, e.g. setpriv), output in $work/NAME.out, stderr in
# $work/NAME.err, its pid in $pid_NAME; returns once it is listening.
mon() {
	local name=$1 i
	shift
	local pre=()
	while [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	: >"$work/$name.out"
	: >"$work/$name.err"
	"${pre[@]}" "$ctl" monitor "$@" >"$work/$name.out" \
		2>"$work/$name.err" &
	mons="$mons $!"
	eval "pid_$name=$!"
	for i in $(seq 300); do
		grep -q '^listening' "$work/$name.err" && return 0
		kill -0 "$!" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_event NAME EVENT: $work/NAME.out gets an event EVENT (60 s at most).
wait_event() {
	local i
	for i in $(seq 600); do
		grep -Eq "(\"event\":\"|^event=)$2\b" "$work/$1.out" &&
			return 0
		sleep 0.1
	done
	return 1
}

# stop NAME...: waits for graph_destroy and client_close (the last events
# of a hold_objects run, in either order) in each, then ends them.
stop() {
	local m p
	for m in "$@"; do
		eval "p=\${pid_$m:-0}"
		kill -0 "$p" 2>/dev/null || continue
		wait_event "$m" graph_destroy
		wait_event "$m" client_close
	done
	for m in "$@"; do
		eval "p=\${pid_$m:-0}"
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
}

echo "TAP version 13"
echo "1..26"

# --- --json of every subcommand -----------------------------------------
for args in "info" "info --uring" "info --netlink" "nop 7" "stats" "version"; do
	$ctl $args --json >"$work/j.out" 2>&1
	check "dfgctl $args --json: one JSON object" \
		"jq -e 'type == \"object\"' '$work/j.out' >/dev/null" "$work/j.out"
done
check "dfgctl nop 7 --json echoes 7" \
	"[ \"\$($ctl nop 7 --json | jq .echo)\" = 7 ]"
check "dfgctl info --json: api_version as the text says" \
	"[ \"\$($ctl info --json | jq .api_version)\" = \
	   \"\$($ctl info | sed -n 's/^api_version: //p')\" ]"

$hold sh -c "$ctl graphs --json >'$work/g.out'; \
	     $ctl objects --json >'$work/o.out'; \
	     $ctl chans --json >'$work/c.out'" >/dev/null 2>&1
check "dfgctl graphs --json: the live graph, name and 3 objects" \
	"jq -e 'type == \"array\" and any(.[]; (.name | startswith(\"exobj-\")) and .objects == 3)' '$work/g.out' >/dev/null" \
	"$work/g.out"
check "dfgctl objects --json: arena 1 of 8192 bytes, region 2 read-only, team 3 exteam" \
	"jq -e 'any(.[]; .kind == \"arena\" and .id == 1 and .counters.size == 8192) and any(.[]; .kind == \"region\" and .id == 2 and .counters.writable == 0) and any(.[]; .kind == \"team\" and .id == 3 and .counters.team == \"exteam\" and .counters.joined == 1 and .counters.state == \"active\")' '$work/o.out' >/dev/null" \
	"$work/o.out"
check "dfgctl chans --json: an array (no channel here)" \
	"jq -e 'type == \"array\" and length == 0' '$work/c.out' >/dev/null" \
	"$work/c.out"
$ctl top --json --count 2 --interval 100 >"$work/t.out" 2>&1
check "dfgctl top --json --count 2: two objects with a sets array" \
	"json_lines '$work/t.out' && [ \$(jq -s 'map(select(.sets | type == \"array\")) | length' '$work/t.out') = 2 ]" \
	"$work/t.out"

# --- monitor: names, attributes, who hears what ---------------------------
echo 0 >"$param"
mon root -- --json &&
	mon pub $nobody -- --json &&
	mon root_pub -- --json --public
r=$?
check "monitors listening (root full, nobody public, root --public)" \
	"[ $r = 0 ] && grep -q 'listening (events_full)' '$work/root.err' && grep -q 'listening (events)' '$work/pub.err' && grep -q 'listening (events)' '$work/root_pub.err'" \
	"$work/pub.err"
$hold true >/dev/null 2>&1
stop root pub root_pub
check "monitor --json: one object per line" \
	"json_lines '$work/root.out' && json_lines '$work/pub.out'" "$work/root.out"
check "monitor: no event without a name" \
	"! grep -q unknown_ '$work/root.out' '$work/pub.out'" "$work/root.out"
check "root: graph_create with graph, name exobj-<pid> and that pid" \
	"jq -e -s 'any(.[]; .event == \"graph_create\" and .graph > 0 and (.name | test(\"^exobj-[0-9]+$\")) and .name == \"exobj-\\(.pid)\")' '$work/root.out' >/dev/null" \
	"$work/root.out"
check "root: arena_create, region_export, arena_destroy with graph and object" \
	"jq -e -s '[.[] | select(.graph > 0 and .object > 0) | .event] | (index(\"arena_create\") != null) and (index(\"region_export\") != null) and (index(\"arena_destroy\") != null)' '$work/root.out' >/dev/null" \
	"$work/root.out"
check "nobody: the same events, none with a name or a pid" \
	"jq -e -s 'any(.[]; .event == \"graph_create\" and .graph > 0) and all(.[]; has(\"name\") or has(\"pid\") | not)' '$work/pub.out' >/dev/null" \
	"$work/pub.out"
check "root --public: as nobody" \
	"jq -e -s 'any(.[]; .event == \"graph_create\") and all(.[]; has(\"name\") or has(\"pid\") | not)' '$work/root_pub.out' >/dev/null" \
	"$work/root_pub.out"
check "nobody: the same number of events as root" \
	"[ \$(wc -l <'$work/pub.out') = \$(wc -l <'$work/root.out') ]"
$nobody "$ctl" monitor --full --timeout 1 >"$work/full.out" 2>&1
check "nobody: monitor --full fails with EPERM" \
	"[ \$? = 1 ] && grep -q 'Operation not permitted' '$work/full.out'" \
	"$work/full.out"

# With public_event_details=1, nobody hears names and pids too. The
# text form: every attribute, the name quoted.
echo 1 >"$param"
mon pub1 $nobody -- --json &&
	mon text --
r=$?
$hold true >/dev/null 2>&1
stop pub1 text
echo 0 >"$param"
check "monitors listening (nobody --json, root text)" "[ $r = 0 ]" \
	"$work/text.err"
check "public_event_details=1: nobody gets root's graph name and pid" \
	"jq -e -s 'any(.[]; .event == \"graph_create\" and (.name | startswith(\"exobj-\")) and .pid > 0)' '$work/pub1.out' >/dev/null" \
	"$work/pub1.out"
check "monitor text: event=graph_create graph=N pid=P name=\"exobj-P\"" \
	"grep -Eq '^event=graph_create graph=[0-9]+ pid=([0-9]+) name=\"exobj-\\1\"$' '$work/text.out'" \
	"$work/text.out"

# --- dfg run --stats-json -------------------------------------------------
printf 'a\nb\nc\n' >"$work/in.txt"
cat >"$work/copy.dot" <<G
digraph copy {
	read  [type=read_lines, file="$work/in.txt"];
	write [type=write_lines, file="$work/out.txt"];
	read -> write;
}
G
"$BUILD/bin/dfg" run -q --stats-json "$work/stats.json" "$work/copy.dot" \
	>"$work/run.out" 2>&1
check "dfg run --stats-json: the summary (3 elements, 2 components)" \
	"jq -e '.elements == 3 and .components == 2 and .processes >= 1 and .workers == 1 and .pooled == 1 and .wall_ns > 0 and (.graph | endswith(\"copy.dot\"))' '$work/stats.json' >/dev/null" \
	"$work/run.out"
check "dfg run --stats-json: no temporary file left" \
	"[ ! -e '$work/stats.json.tmp' ]"

echo "# Totals: pass:$((n - fails)) fail:$fails xfail:0 xpass:0 skip:0 error:0"
[ "$fails" = 0 ]
