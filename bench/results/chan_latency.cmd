# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=chan make bench
# which runs tools/bench/host.sh (host: records the contention below, publishes only if the host was quiet),
# which runs inside the test VM (tools/vm/dfg-vm) tools/bench/run.sh (function run_chan),
# which ran (writes chan_latency, chan_throughput, chan_pipeline):
command: build/bin/chan_bench -d build/bench-stage 
method: interleaved; per case the same processes run every method, one timed repetition each per round, the first method turning round by round, sequence numbers checked; ratios to pipe taken within a round: value and ratio_to_baseline are medians over the rounds, ratio_min/ratio_max the range; every round in chan_latency_rounds.csv
pinning: latency (block, busy) and throughput pin the two processes to CPUs 0 and 1, latency block1 pins both to CPU 0; pipeline processes are not pinned
date: 2026-11-28T04:38:41Z
git: 2e0619b
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.9.0
mitigations: mitigations=off
# host contention over the run (tools/bench/host.sh):
host_command: tools/bench/host.sh tools/bench/run.sh 
host_window_s: 155.8 (from qemu seen to its last sample)
host_qemu_cpu_s: 221.9 (142% of one core)
host_other_cpu_s: 0.0 (0.0% of one core)
guest_busy_pct: 67.57
guest_steal_pct: 0.00
guest_loadavg_after: 1.31 0.56 0.21
host_loadavg: before 0.07 0.86 1.55, after 1.48 1.14 1.55
rule: publish only if other host processes used <= 10% of one core (DFG_BENCH_MAX_OTHER_CPU) and guest steal <= 2% (DFG_BENCH_MAX_STEAL)
verdict: accepted
