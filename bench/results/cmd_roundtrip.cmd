# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=roundtrip make bench
# which runs tools/bench/host.sh (host: records the contention below, publishes only if the host was quiet),
# which runs inside the test VM (tools/vm/dfg-vm) tools/bench/run.sh (function run_bench),
# which ran:
command: build/bin/cmd_roundtrip -o build/bench-stage/cmd_roundtrip.csv 
date: 2026-11-28T04:36:55Z
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
