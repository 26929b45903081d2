# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The rule interpreter's benchmark (DFG_BENCH_ONLY=rules), sourced by
# tools/bench/run.sh (its describe_machine, repro, $out, $quick, $BUILD):
# scenarios whose conditions shift while dfg run runs, each run with the
# default rule set (--rules default), as the same job on its fixed
# default plan, and on every fixed plan of a few degrees (the best of
# them, in hindsight, is marked per scenario). Per run and phase the
# throughput; per plan change the reaction time and the pause; per shift
# the plan changes; a second run on the same plan store.
#
# The job: read -hash($3)-> work (map, degree 2) -gather-> out. Input
# lines "P IIIIIIIII KKKK payload" (phase, index, key, lowercase
# letters); work checks the payload for 16 pairs of letters, so its
# cost grows with the payload, and writes a fixed-width line per input
# (34 bytes), so the output's size says how far the run is.
#
#   skew    keys uniform over 1000, then Zipf(1.5) over 64 hot keys, then
#           the hot set moved by 500 keys (one third each)
#   heavy   payload 32 bytes, then 512 (half each)
#   cpu     CPU 1 offline at 1/3 of the fixed run's time, back at 2/3
#           (phases by time; needs a hotpluggable CPU 1, else skipped)
#   kill    a work instance killed (SIGKILL) at 1/3 of the time: the run
#           fails; --resume (same rules) finishes it from the last
#           checkpoint: the time of both is the figure
#   memory  the job with a sorted copy of its output beside it (work
#           -gather-> sort -> sorted.txt; the sort holds every record
#           until the end): at 1/3 of the fixed run's time mem_short.c
#           raises the kernel's free page reserve (vm.min_free_kbytes)
#           by 768 MiB in one write, MemAvailable dropping by more than
#           that at once, holds it for 1/3 of that time and puts it back
#           in one write (a hog touching 512 MiB took seconds under TCG,
#           the rules seeing the shortage at a moment nobody knew). The
#           phases are its: 2 from the reserve raised to its lowering, 3
#           from it back (CLOCK_MONOTONIC; the writes, ms, in
#           no phase), the same for every config. The default rules,
#           with $low_memory moved to 512 MiB under the MemAvailable at
#           the start (a rules file), substitute sort_external for the
#           sort, its records carried over; the fixed plans keep the
#           sort, fixed_external runs sort_external all along (in the
#           test VM only). A run fails unless MemAvailable was under
#           $low_memory with the reserve raised and over it once back,
#           and a rules run unless the substitution (--explain names
#           it) was decided once, in phase 2 (from the raising write's
#           start: the rules cannot see the shortage before it); other
#           changes of the default rules are counted. Moved, not reached: a shortage down to
#           the default 64 MiB of a guest without swap would bring the
#           OOM killer into the run
#   pieces  the skew scenario's job beside a second one, joined to it by
#           no flow, on uniform keys: a change of the first stops its
#           piece of the graph alone (DFG_REPLAN_LOG path=partial); per
#           change the second job's output rate while the first paused
#           and over the run (running_rate_in_pause, running_rate_run)
#           and, as in every scenario, the processes the change stopped
#           at its checkpoint on their stop marks and those it had to
#           kill (stopped_clean, stopped_killed: "replan-log: stop")
#   store   the skew scenario again on the plan store the first rules run
#           filled: the steps, and how long a store-served step took
#           (eval_ms: the whole evaluation, turning the view and the
#           module's events into facts included; lookup_ms: the
#           signature and the SQLite lookup alone)
#
# DFG_BENCH_RULES_SCENARIOS: the scenarios to run (all by default; store
# follows skew).
#
# Times come from tools/bench/rules_watch.c ($BUILD/bin/rules_watch) (the output's size over
# CLOCK_MONOTONIC) and from dfg's DFG_REPLAN_LOG lines (libdfg/rules,
# libdfg/run/replan.c): "rules gen=G view_ns=T eval_ns=E lookup_ns=L edits=N store=S"
# when an evaluation decides, "run gen=G stop_ns= first_ns= last_ns=
# resumed_ns= ..." when the new plan's sets all ran. The metric crossed its threshold
# between the evaluation before the deciding one and the deciding one:
# reaction_ub_ms is from the one before (view_ns - period), reaction_lb
# from the deciding one, both to the first element on the new plan (the
# first new set's first quantum); pause_ms from the sets stopping to the
# last new set back in service (its state restored, ready for input; a
# set with no input yet runs later without being paused). Per change
# also the region it affected ("region gen=G new_inst= rewired_inst=
# kept_inst= ..."): the instances of new sets, of unchanged sets joined
# to them by a flow and of untouched sets, and the pause of the new sets
# and of the others that restarted (all on a full switch; on a partial
# one, path=partial, the pieces of the graph without a new set run on,
# running_inst instances, and do not pause).
#
# Files: rules_runs.csv (per run, with what the evaluations cost: their
# count, CPU ms median and p99, and their CPU over the run's time, from
# the "replan-log: eval" lines), rules_phases.csv (per run and phase),
# rules_changes.csv (per plan change), rules_summary.csv (per scenario
# and config: medians, p99), rules.cmd.

# Elements per scenario run. 100000: about 1.5 h for the whole suite in
# the TCG guest at 3 rounds (53 runs). DFG_BENCH_QUICK's 30000 checks the
# script only: its phases are too short for dfg_run()'s key skew windows
# (4096 elements per instance, two of them), so skew goes unseen.
rules_n() {
	if [ -n "$quick" ]; then echo 30000; else echo 100000; fi
}

# rules_input KIND N FILE: the input of a scenario (awk, seeded).
rules_input() {
	awk -v kind="$1" -v n="$2" 'BEGIN {
		srand(14)
		for (j = 0; j < 4096; j++) pool = pool sprintf("%c", 97 + int(rand() * 26))
		# Zipf(1.5) over 64 ranks: the CDF
		for (k = 1; k <= 64; k++) { z += 1 / k ^ 1.5; cdf[k] = z }
		for (k = 1; k <= 64; k++) cdf[k] /= z
		for (i = 0; i < n; i++) {
			len = 128
			if (kind == "skew") {
				ph = 1 + int(3 * i / n)
				if (ph == 1) key = int(rand() * 1000)
				else {
					u = rand(); lo = 1; hi = 64
					while (lo < hi) { m = int((lo + hi) / 2); if (cdf[m] < u) lo = m + 1; else hi = m }
					key = (lo - 1 + (ph == 3 ? 500 : 0)) % 1000
				}
			} else if (kind == "heavy") {
				ph = 1 + int(2 * i / n); key = int(rand() * 1000)
				len = ph == 1 ? 32 : 512
			} else {
				ph = 1; key = int(rand() * 1000)
			}
			s = substr(pool, 1 + int(rand() * (4096 - len)), len)
			printf "%d %09d %04d %s\n", ph, i, key, s
		}
	}' >"$3"
}

# rules_job FILE DEGREE [pieces|memory]: the job, work at DEGREE; with
# pieces a second job beside it, joined to it by no flow (read2 -> work2
# at degree 2 -> out2, on in2.txt), which a change of work leaves
# running; with memory a sort of work's output by index beside out (s, of
# type $rules_sort, sort by default -> sorted.txt).
rules_job() {
	local e='$1 . " " . $2 . " " . $3 . " "' p
	for p in ab cd ef gh ij kl mn op qr st uv wx yz ba dc fe; do
		e="$e . (contains(\$4, \"$p\") ? \"1\" : \"0\")"
	done
	e=${e//\"/\\\"}
	cat >"$1" <<G
digraph rules_bench {
	read [type=read_lines, file="in.txt"];
	work [type=map, degree=$2, expr="$e"];
	out  [type=write_lines, file="out.txt"];
	read -> work [flow=hash, key="\$3"];
	work -> out [flow=gather];
G
	[ "${3:-}" = pieces ] && cat >>"$1" <<G
	read2 [type=read_lines, file="in2.txt"];
	work2 [type=map, degree=2, expr="$e"];
	out2  [type=write_lines, file="out2.txt"];
	read2 -> work2 [flow=hash, key="\$3"];
	work2 -> out2 [flow=gather];
G
	[ "${3:-}" = memory ] && cat >>"$1" <<G
	s      [type=${rules_sort:-sort}, key="\$2"];
	sorted [type=write_lines, file="sorted.txt"];
	work -> s [flow=gather];
	s -> sorted;
G
	echo "}" >>"$1"
}

# rules_short: what mem_short said ($rw/short.out) as the memory
# scenario's phase bounds in $rules_b (phase 1's end, 2's start and end,
# 3's start: CLOCK_MONOTONIC ns) and, in $acts, the two writes (ms) and
# MemAvailable (kB) after each; 1 unless both were made, MemAvailable
# under $rules_low after the first and over it after the second.
rules_short() {
	local up0="" up1="" down0="" down1="" a1="" a2=""
	# (no process substitution: the guest has no /dev/fd)
	read -r up0 up1 a1 <<<"$(sed -n 's/^ready //p' "$rw/short.out")"
	read -r down0 down1 a2 <<<"$(sed -n 's/^gone //p' "$rw/short.out")"
	if [ -z "$up1" ] || [ -z "$down1" ]; then
		acts="mem_short failed: $(tr '\n' ' ' <"$rw/short.out")"
		return 1
	fi
	rules_b="$up0 $up1 $down0 $down1"
	acts=$(awk -v u0="$up0" -v u1="$up1" -v d0="$down0" -v d1="$down1" \
		-v a1="$a1" -v a2="$a2" 'BEGIN {
		printf "short: raised in %.3f ms avail %d kB held %.2f s back in %.3f ms avail %d kB",
			(u1 - u0) / 1e6, a1, (d0 - u1) / 1e9, (d1 - d0) / 1e6, a2 }')
	if [ "$((a1 * 1024))" -ge "$rules_low" ] || [ "$((a2 * 1024))" -le "$rules_low" ]; then
		acts="$acts: not across low_memory $rules_low"
		return 1
	fi
}

# rules_one SCEN CONFIG DEGREE REP [ARGS...]: one run of the job in
# $rw; appends to the raw files. CONFIG: rules (with ARGS), fixed, or
# fixed_external (memory: sort_external all along). The cpu, kill and
# memory scenarios act at $rules_t1 and $rules_t2 (seconds; memory: the
# reserve is raised at t1 and held for t2 - t1).
rules_one() {
	local scen=$1 cfg=$2 deg=$3 rep=$4 pid wpid wpid2= rc t0 acts=
	local rules_sort=sort spid="" rules_b="" cond=1
	shift 4
	[ "$cfg" = fixed_external ] && rules_sort=sort_external
	rules_job "$rw/job.dot" "$deg" "$scen"
	rm -f "$rw/out.txt" "$rw/out2.txt" "$rw/watch2.log" "$rw/sorted.txt"
	# the rules' plan store stays for the store scenario only
	local sd=state_fixed
	[ "$cfg" = rules ] && sd=state_rules
	[ "$scen" = store ] || rm -rf "${rw:?}/$sd"
	(cd "$rw" && DFG_REPLAN_LOG=1 exec "$dfg" run -v --state-dir "$sd" \
		--checkpoint-every "$rules_every" "$@" job.dot) \
		>"$rw/run.log" 2>&1 &
	pid=$!
	"$rw/rules_watch" "$rw/out.txt" 20 "$pid" >"$rw/watch.log" &
	wpid=$!
	if [ "$scen" = pieces ]; then
		"$rw/rules_watch" "$rw/out2.txt" 20 "$pid" >"$rw/watch2.log" &
		wpid2=$!
	fi
	if { [ "$scen" = cpu ] || [ "$scen" = kill ] || [ "$scen" = memory ]; } &&
	   [ "$cfg" != probe ]; then
		sleep "$rules_t1"
		if [ "$scen" = cpu ]; then
			echo 0 >/sys/devices/system/cpu/cpu1/online && acts="offline"
			sleep "$(awk -v a="$rules_t2" -v b="$rules_t1" 'BEGIN { print a - b }')"
			echo 1 >/sys/devices/system/cpu/cpu1/online && acts="$acts online"
		elif [ "$scen" = memory ]; then
			"$rw/mem_short" "$((rules_short_mb * 1024))" \
				"$(awk -v a="$rules_t2" -v b="$rules_t1" 'BEGIN { print a - b }')" \
				>"$rw/short.out" 2>&1 &
			spid=$!
		else
			local victim
			victim=$(pgrep -P "$pid" | head -n 1)
			[ -n "$victim" ] && kill -9 "$victim" && acts="killed"
		fi
	fi
	wait "$pid"
	rc=$?
	wait "$wpid"
	[ -n "$wpid2" ] && wait "$wpid2"
	if [ -n "$spid" ]; then
		# a run over before the hold: the memory back now (the next
		# run starts without the shortage)
		kill -TERM "$spid" 2>/dev/null
		wait "$spid"
		rules_short || cond=0
	fi
	if [ "$scen" = kill ] && [ "$rc" != 0 ]; then
		# the run failed on the dead worker: resume it
		cp "$rw/run.log" "$rw/run1.log"
		(cd "$rw" && DFG_REPLAN_LOG=1 exec "$dfg" run -v --state-dir "$sd" \
			--checkpoint-every "$rules_every" --resume "$@" job.dot) \
			>"$rw/run.log" 2>&1 &
		pid=$!
		"$rw/rules_watch" "$rw/out.txt" 20 "$pid" >>"$rw/watch.log" &
		wpid=$!
		wait "$pid"
		rc=$?
		wait "$wpid"
		cat "$rw/run1.log" "$rw/run.log" >"$rw/run2.log"
		mv "$rw/run2.log" "$rw/run.log"
		acts="$acts resumed"
	fi
	t0=$(awk 'NR == 1 { print $1 }' "$rw/watch.log")
	# what the evaluations cost: count, CPU ms median and p99, CPU ns in all
	local evs
	evs=$(sed -n 's/^replan-log: eval .*cpu_ns=\([0-9]*\).*/\1/p' "$rw/run.log" |
		sort -n | awk '{ v[NR] = $1; s += $1 }
		END { if (!NR) { print "0,,,0"; exit }
			p = int(0.99 * NR + 0.999999)
			printf "%d,%.3f,%.3f,%d", NR, v[int((NR + 1) / 2)] / 1e6, v[p] / 1e6, s }')
	local ok=0
	if [ "$rc" = 0 ] && sort "$rw/out.txt" | cmp -s - "$rw/ref.txt"; then ok=1; fi
	if [ "$scen" = pieces ] && ! sort "$rw/out2.txt" | cmp -s - "$rw/ref2.txt"; then ok=0; fi
	# the sorted copy: the reference itself (sorted by phase and index)
	if [ "$scen" = memory ] && ! cmp -s "$rw/sorted.txt" "$rw/ref.txt"; then ok=0; fi
	# per phase: the first sample where the output passed the phase's
	# first line; the last sample ends the last phase
	awk -v scen="$scen" -v cfg="$cfg" -v deg="$deg" -v rep="$rep" \
	    -v n="$rules_nelem" -v np="$rules_np" -v t1="$rules_t1" -v t2="$rules_t2" \
	    -v hb="$rules_b" -v ok="$ok" -v rc="$rc" -v acts="$acts" -v evs="$evs" \
	    -v runs="$rw/raw_runs.csv" -v phases="$rw/raw_phases.csv" '
		{ t[++k] = $1; s[k] = $2 }
		END {
			start = t[1]; end = t[k]
			for (p = 1; p <= np; p++) {
				if (scen == "cpu" || scen == "kill" || scen == "memory") {
					a = start + (p == 1 ? 0 : (p == 2 ? t1 : t2)) * 1e9
					b = p == np ? end : start + (p == 1 ? t1 : t2) * 1e9
					# memory: the bounds mem_short gave (its
					# writes between phases)
					if (scen == "memory" && split(hb, h, " ") == 4) {
						a = p == 1 ? start : h[2 * p - 2]
						b = p == np ? end : h[2 * p - 1]
					}
					if (b > end) b = end
					if (a > b) a = b	# the run was over
					ea = -1; eb = -1
					for (j = 1; j <= k; j++) {
						if (ea < 0 && t[j] >= a) ea = s[j] / 34
						if (eb < 0 && t[j] >= b) eb = s[j] / 34
					}
					if (ea < 0) ea = s[k] / 34
					if (eb < 0) eb = s[k] / 34
					el = eb - ea
				} else {
					lo = int(n * (p - 1) / np) * 34; hi = int(n * p / np) * 34
					a = -1; b = -1
					for (j = 1; j <= k; j++) {
						if (a < 0 && s[j] > lo) a = t[j - 1 > 0 ? j - 1 : 1]
						if (b < 0 && s[j] >= hi) b = t[j]
					}
					if (b < 0) b = end
					el = (hi - lo) / 34
				}
				rate = b > a ? el / ((b - a) / 1e9) : 0
				printf "%s,%s,%d,%d,%d,%.0f,%.3f,%.0f\n", scen, cfg, deg, rep, p, el,
					(b - a) / 1e9, rate >>phases
			}
			# evals,eval_cpu_ms_median,eval_cpu_ms_p99 and the
			# CPU of the evaluations over the time of the run
			split(evs, e, ",")
			printf "%s,%s,%d,%d,%d,%d,%.3f,%s,%s,%s,%s,%s\n", scen, cfg, deg, rep, rc, ok,
				(end - start) / 1e9, e[1], e[2], e[3],
				(end > start ? sprintf("%.4f", e[4] / (end - start)) : ""), acts >>runs
		}' "$rw/watch.log"
	# plan changes: the deciding evaluation, then the new plan running
	awk -v scen="$scen" -v cfg="$cfg" -v rep="$rep" -v per="$rules_period" \
	    -v t0="$t0" -v n="$rules_nelem" -v np="$rules_np" \
	    -v t1="$rules_t1" -v t2="$rules_t2" -v hb="$rules_b" -v w2="$rw/watch2.log" '
		# the output of the job a change leaves running (pieces):
		# its size at time x (the last sample before), its lines per s
		function size2(x,   j, v) { v = 0; for (j = 1; j <= k2; j++) { if (u[j] > x) break; v = z[j] }; return v }
		function rate2(a, b) { return b > a ? (size2(b) - size2(a)) / 34 / ((b - a) / 1e9) : 0 }
		BEGIN { while ((getline l < w2) > 0) { split(l, f, " "); u[++k2] = f[1]; z[k2] = f[2] } }
		FNR == NR { t[++k] = $1; s[k] = $2; next }
		!pts { pts = 1	# when the output passed the first line of each phase
			for (q = 1; q < np; q++) { hi = int(n * q / np) * 34; pt[q] = 1e30
				for (j = 1; j <= k; j++) if (s[j] > hi) { pt[q] = t[j] - t0; break } } }
		/^replan-log: rules / { for (i = 3; i <= NF; i++) { split($i, kv, "="); d[kv[1]] = kv[2] }
			view = d["view_ns"]; ev = d["eval_ns"]; lk = d["lookup_ns"]; st = d["store"]; ne = d["edits"]; next }
		/^replan-log: region / { for (i = 3; i <= NF; i++) { split($i, kv, "="); d[kv[1]] = kv[2] }
			next }
		# the processes the change stopped: at K on their marks, or killed
		/^replan-log: stop / { for (i = 4; i <= NF; i++) { split($i, kv, "="); d[kv[1]] = kv[2] }
			next }
		/^replan-log: run / { for (i = 3; i <= NF; i++) { split($i, kv, "="); d[kv[1]] = kv[2] }
			c++
			# the phase the deciding evaluation fell in
			dt = view - t0; ph = 3
			if (scen == "memory" && split(hb, h, " ") == 4) {
				# from the raising write on: the rules cannot see the
				# shortage before it; until the memory is back
				ph = view + 0 < h[1] + 0 ? 1 : view + 0 < h[4] + 0 ? 2 : 3
			} else if (scen == "cpu" || scen == "kill" || scen == "memory") { if (dt < t2 * 1e9) ph = 2; if (dt < t1 * 1e9) ph = 1 }
			else { ph = np; for (q = np - 1; q >= 1; q--) if (dt < pt[q]) ph = q }
			ap = d["affected_resumed_ns"] ? sprintf("%.1f", (d["affected_resumed_ns"] - d["stop_ns"]) / 1e6) : ""
			op = d["others_resumed_ns"] > d["stop_ns"] ? sprintf("%.1f", (d["others_resumed_ns"] - d["stop_ns"]) / 1e6) : ""
			# the job a change leaves running: its lines per second
			# while the stopped sets paused, and over the whole run
			rd = k2 > 1 ? sprintf("%.0f", rate2(d["stop_ns"], d["resumed_ns"])) : ""
			rr = k2 > 1 ? sprintf("%.0f", rate2(u[1], u[k2])) : ""
			printf "%s,%s,%d,%d,%d,%.1f,%.1f,%.1f,%.3f,%.3f,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", scen, cfg, rep, c, d["gen"],
				(d["first_ns"] - view + per * 1e6) / 1e6, (d["first_ns"] - view) / 1e6,
				(d["resumed_ns"] - d["stop_ns"]) / 1e6, ev / 1e6, lk / 1e6, st, ne, ph,
				d["new_inst"], d["rewired_inst"], d["kept_inst"], ap, op,
				d["path"], d["running_inst"], rd, rr, d["clean"], d["killed"]
			delete d
		}
		/^re-plan: generation/ { gen = $3 }
		/^  set .*work/ && gen { sub(/.*degree /, ""); sub(/,.*/, ""); degs = degs " " $0; gen = 0 }
		END { if (degs != "") print scen "," cfg "," rep ",degrees:" degs >"/dev/stderr" }' \
		"$rw/watch.log" "$rw/run.log" >>"$rw/raw_changes.csv" 2>>"$rw/degrees.txt"
	if [ "$scen" = memory ] && [ "$cfg" = rules ]; then
		# the rules' answer to the shortage (--explain names it): the
		# substitution, once, decided in its phase; other changes
		# (the default rules' other answers) are counted
		local nc subs
		nc=$(awk -F, -v r="$rep" '$1 == "memory" && $2 == "rules" && $3 == r' "$rw/raw_changes.csv" | wc -l)
		subs=$(awk -v hb="$rules_b" '
			/^  change substitute s sort_external/ { sub_ = 1; next }
			/^replan-log: rules / && sub_ { sub_ = 0; split(hb, h, " ")
				for (i = 3; i <= NF; i++) if ($i ~ /^view_ns=/) v = substr($i, 9) + 0
				printf " %s", v < h[1] + 0 ? 1 : v < h[4] + 0 ? 2 : 3 }' "$rw/run.log")
		acts="$acts; changes $nc, sort_external decided in phase${subs:- (none)}"
		[ "$subs" = " 2" ] || cond=0
	fi
	echo "# rules: $scen $cfg degree $deg rep $rep: exit $rc, output $([ $ok = 1 ] && echo ok || echo WRONG) $acts$([ $cond = 1 ] || echo ' (NOT AS PLANNED)')"
	[ "$ok" = 1 ] && [ "$cond" = 1 ]
}

run_rules() {
	local dfg=$BUILD/bin/dfg rw reps scen d r fail=0
	local rules_nelem rules_np rules_every rules_period=100 rules_t1=0 rules_t2=0
	local rules_short_mb=768 rules_avail0="" rules_low="" rules_acted="" more
	# the guest's /tmp is a tmpfs: the inputs (up to 80 MB) stay off 9p
	rw=${TMPDIR:-/tmp}/dfg-bench-rules
	reps=${DFG_BENCH_REPS:-3}
	[ -n "$quick" ] && reps=1
	if [ ! -x "$BUILD/bin/rules_watch" ] || [ ! -x "$BUILD/bin/mem_short" ] ||
	   [ ! -x "$dfg" ]; then
		echo "bench: rules: no $BUILD/bin/rules_watch, mem_short or dfg (make tools)" >&2
		return 1
	fi
	rm -rf "$rw" && mkdir -p "$rw" || return 1
	cp "$BUILD/bin/rules_watch" "$BUILD/bin/mem_short" "$rw/" || return 1
	rules_nelem=$(rules_n)
	rules_every=$((rules_nelem / 100))
	echo "scenario,config,degree,rep,exit,output_ok,seconds,evals,eval_cpu_ms_median,eval_cpu_ms_p99,eval_cpu_share,actions" >"$rw/raw_runs.csv"
	echo "scenario,config,degree,rep,phase,elements,seconds,elements_per_s" >"$rw/raw_phases.csv"
	echo "scenario,config,rep,change,generation,reaction_ub_ms,reaction_lb_ms,pause_ms,eval_ms,lookup_ms,from_store,edits,phase,new_inst,boundary_inst,untouched_inst,pause_new_ms,pause_others_ms,path,running_inst,running_rate_in_pause,running_rate_run,stopped_clean,stopped_killed" >"$rw/raw_changes.csv"
	: >"$rw/degrees.txt"
	for scen in ${DFG_BENCH_RULES_SCENARIOS:-skew heavy cpu kill memory pieces}; do
		more=()
		case $scen in
		skew) rules_np=3; rules_input skew "$rules_nelem" "$rw/in.txt" ;;
		pieces)
			# skew's job, and beside it one on uniform keys
			rules_np=3
			rules_input skew "$rules_nelem" "$rw/in.txt"
			rules_input uniform "$rules_nelem" "$rw/in2.txt" ;;
		heavy) rules_np=2; rules_input heavy "$rules_nelem" "$rw/in.txt" ;;
		cpu | kill)
			rules_np=3
			# CPU hotplug only in the test VM (never the host's CPUs)
			if [ "$scen" = cpu ] && { [ -z "${DFG_VM:-}" ] ||
			   ! [ -w /sys/devices/system/cpu/cpu1/online ]; }; then
				echo "# rules: cpu: not in the test VM, or no hotpluggable CPU 1: skipped"
				continue
			fi
			rules_input uniform "$rules_nelem" "$rw/in.txt" ;;
		memory)
			rules_np=3
			# a shortage only in the test VM (never the host's),
			# and only where it leaves the guest a good margin
			rules_avail0=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
			if [ -z "${DFG_VM:-}" ] || [ "${rules_avail0:-0}" -lt 1048576 ] ||
			   ! [ -w /proc/sys/vm/min_free_kbytes ]; then
				echo "# rules: memory: not in the test VM, or under 1 GiB available: skipped"
				continue
			fi
			# two thirds of the raise under it: the run's own memory
			# (its arenas, two while a change waits) has 512 MiB
			rules_low=$((rules_avail0 * 1024 - rules_short_mb * 1048576 * 2 / 3))
			echo "var low_memory = $rules_low" >"$rw/lowmem.rules"
			more=(--rules lowmem.rules --explain)
			rules_input uniform "$rules_nelem" "$rw/in.txt" ;;
		esac
		# the reference: what work writes, sorted
		awk '{ l = $1 " " $2 " " $3 " "
			n = split("ab cd ef gh ij kl mn op qr st uv wx yz ba dc fe", p, " ")
			for (i = 1; i <= n; i++) l = l (index($4, p[i]) ? "1" : "0")
			print l }' "$rw/in.txt" | LC_ALL=C sort >"$rw/ref.txt"
		[ "$scen" = pieces ] && awk '{ l = $1 " " $2 " " $3 " "
			n = split("ab cd ef gh ij kl mn op qr st uv wx yz ba dc fe", p, " ")
			for (i = 1; i <= n; i++) l = l (index($4, p[i]) ? "1" : "0")
			print l }' "$rw/in2.txt" | LC_ALL=C sort >"$rw/ref2.txt"
		if [ "$scen" = cpu ] || [ "$scen" = kill ] || [ "$scen" = memory ]; then
			# act at 1/3 and 2/3 of a fixed run's time
			rules_t1=0 rules_t2=0
			rules_one "$scen" probe 2 0 || fail=1
			rules_t1=$(awk -F, -v s="$scen" '$1 == s && $2 == "probe" { printf "%.2f", $7 / 3 }' "$rw/raw_runs.csv")
			rules_t2=$(awk -F, -v s="$scen" '$1 == s && $2 == "probe" { printf "%.2f", 2 * $7 / 3 }' "$rw/raw_runs.csv")
			rules_acted="$rules_acted $scen $rules_t1 s and $rules_t2 s;"
		fi
		for r in $(seq "$reps"); do
			# interleaved: rules, then the fixed plans, turning
			rules_one "$scen" rules 2 "$r" --rules default "${more[@]}" \
				--replan-every "$rules_period" || fail=1
			for d in 1 2 4; do
				rules_one "$scen" fixed "$d" "$r" || fail=1
			done
			if [ "$scen" = memory ]; then
				rules_one "$scen" fixed_external 2 "$r" || fail=1
			fi
		done
		if [ "$scen" = skew ]; then
			# the plan store: the same again on the store the last
			# rules run filled (its state directory)
			for r in $(seq "$reps"); do
				rules_one store rules 2 "$r" --rules default \
					--replan-every "$rules_period" || fail=1
			done
		fi
	done
	{ head -n 1 "$rw/raw_runs.csv"; tail -n +2 "$rw/raw_runs.csv" |
		LC_ALL=C sort -t, -k1,1 -k2,2 -k3,3n -k4,4n; } >"$out/rules_runs.csv"
	cp "$rw/raw_phases.csv" "$out/rules_phases.csv"
	cp "$rw/raw_changes.csv" "$out/rules_changes.csv"
	# per scenario and config: median seconds; the best fixed degree;
	# reaction and pause median and p99; changes per run
	awk -F, '
		function med(a, k,   m) { m = int((k + 1) / 2); return k % 2 ? a[m] : (a[m] + a[m + 1]) / 2 }
		function pct(a, k, q,   i) { i = int(q * k + 0.999999); if (i < 1) i = 1; if (i > k) i = k; return a[i] }
		function srt(a, k,   i, j, t) { for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
		FILENAME ~ /runs/ && FNR > 1 && $2 != "probe" { id = $1 SUBSEP $2 SUBSEP $3; if (!(id in nr)) ids[++ni] = id
			nr[id]++; tm[id, nr[id]] = $7; bad[id] += !$6; runs[$1 SUBSEP $2]++
			if ($8 > 0) { ne[id]++; em[id, ne[id]] = $9; es[id, ne[id]] = $11 } }
		FILENAME ~ /changes/ && FNR > 1 { key = $1 SUBSEP $2; nc[key]++; rx[key, nc[key]] = $6; rl[key, nc[key]] = $7
			pz[key, nc[key]] = $8; if ($11) { ns[key]++; se[key, ns[key]] = $9; sl[key, ns[key]] = $10 } }
		END {
			print "scenario,config,degree,runs,wrong_outputs,seconds_median,vs_default_fixed,vs_best_fixed,best_fixed_degree,changes_per_run,reaction_ub_ms_median,reaction_ub_ms_p99,reaction_lb_ms_median,pause_ms_median,pause_ms_p99,store_steps,store_eval_ms_max,store_lookup_ms_max,eval_cpu_ms_median,eval_cpu_share_median"
			for (i = 1; i <= ni; i++) { split(ids[i], f, SUBSEP); k = nr[ids[i]]
				for (j = 1; j <= k; j++) a[j] = tm[ids[i], j]; srt(a, k); m[ids[i]] = med(a, k) }
			# the best fixed plan: a degree, "/external" for sort_external
			for (i = 1; i <= ni; i++) { split(ids[i], f, SUBSEP)
				if (f[2] ~ /^fixed/ && (!(f[1] in best) || m[ids[i]] < best[f[1]])) {
					best[f[1]] = m[ids[i]]; bd[f[1]] = f[3] (f[2] == "fixed" ? "" : "/" substr(f[2], 7)) } }
			for (i = 1; i <= ni; i++) { split(ids[i], f, SUBSEP); s = f[1] == "store" ? "skew" : f[1]
				key = f[1] SUBSEP f[2]; k = nc[key] + 0
				for (j = 1; j <= k; j++) { a[j] = rx[key, j]; b[j] = pz[key, j]; c[j] = rl[key, j] }
				srt(a, k); srt(b, k); srt(c, k); sm = 0
				sl0 = 0
				for (j = 1; j <= ns[key]; j++) { if (se[key, j] > sm) sm = se[key, j]; if (sl[key, j] > sl0) sl0 = sl[key, j] }
				dk = s SUBSEP "fixed" SUBSEP 2; mi = m[ids[i]]
				vd = ((dk in m) && mi > 0) ? sprintf("%.2f", m[dk] / mi) : ""
				vb = ((s in best) && mi > 0) ? sprintf("%.2f", best[s] / mi) : ""
				cr = f[2] == "rules" ? sprintf("%.1f", k / nr[ids[i]]) : ""
				r1 = k ? sprintf("%.1f", med(a, k)) : ""; r2 = k ? sprintf("%.1f", pct(a, k, 0.99)) : ""
				r3 = k ? sprintf("%.1f", med(c, k)) : ""
				p1 = k ? sprintf("%.1f", med(b, k)) : ""; p2 = k ? sprintf("%.1f", pct(b, k, 0.99)) : ""
				sx = ns[key] ? sprintf("%.3f,%.3f", sm, sl0) : ","
				k = ne[ids[i]] + 0
				for (j = 1; j <= k; j++) { a[j] = em[ids[i], j]; b[j] = es[ids[i], j] }
				srt(a, k); srt(b, k)
				ex = k ? sprintf("%.3f,%.4f", med(a, k), med(b, k)) : ","
				printf "%s,%s,%s,%d,%d,%.3f,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%s\n", f[1], f[2], f[3], nr[ids[i]], bad[ids[i]], mi,
					vd, vb, bd[s], cr, r1, r2, r3, p1, p2, ns[key], sx, ex }
		}' "$out/rules_runs.csv" "$out/rules_changes.csv" >"$out/rules_summary.csv" || fail=1
	{
		repro rules run_rules
		echo "# which ran:"
		echo "command: tools/bench/run.sh (tools/bench/rules.sh): dfg run -v --checkpoint-every $rules_every --state-dir DIR job.dot [--rules default --replan-every $rules_period], work at degree 2 (rules, default fixed plan) and 1, 2, 4 (fixed plans; the best in hindsight per scenario), $reps rounds interleaved, $rules_nelem elements per run, DFG_REPLAN_LOG=1"
		echo "scenarios: skew (uniform over 1000 keys, then Zipf 1.5 over 64 hot keys, then the hot keys moved), heavy (32-byte then 512-byte payloads), cpu (CPU 1 offline at 1/3 of a fixed run's time, back at 2/3), kill (a work instance SIGKILLed at 1/3, then --resume), memory (a sort of the output beside it; vm.min_free_kbytes raised by $rules_short_mb MiB at 1/3 of a fixed run's time, for 1/3 of it), store (skew again on the filled plan store), pieces (skew's job beside an independent one on uniform keys, which a change of the first leaves running)"
		echo "acted at (from a fixed run's time):${rules_acted:- nothing}"
		echo "reaction: ub from the evaluation before the deciding one (the metric crossed after it), lb from the deciding one, to the new plan's first set running; pause: sets stopped to the last new set running"
		if [ -n "$rules_low" ]; then
			echo "memory: MemAvailable $rules_avail0 kB at the start; the rules runs add 'var low_memory = $rules_low' (bytes: $((rules_short_mb * 2 / 3)) MiB under it) to the default rules, so the reserve raised by $rules_short_mb MiB (MemAvailable down by more: the high watermarks rise by 1.25 times that) takes memory below it and its end brings it back; phases: 1 to the raising write, 2 from it to the lowering write, 3 from that (mem_short's CLOCK_MONOTONIC; the writes in no phase, their ms in rules_runs.csv's actions), every config alike; a change is in phase 2 if decided from the raising write's start to the reserve back; fixed: the sort all along, fixed_external: sort_external all along; output and the sorted copy checked; a run fails unless the raised reserve took MemAvailable under low_memory and its end back over, a rules run unless the substitution was decided once, in phase 2 (--explain names it; other changes the default rules make are counted)"
		fi
		echo "degrees after each change: $(tr '\n' ';' <"$rw/degrees.txt")"
		describe_machine
	} >"$out/rules.cmd"
	column -s, -t "$out/rules_summary.csv" 2>/dev/null || cat "$out/rules_summary.csv"
	echo "# bench: rules -> ${out#"$top"/}/rules_{runs,phases,changes,summary}.csv, rules.cmd"
	return "$fail"
}
