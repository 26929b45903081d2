# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=flow make bench
# which runs tools/bench/host.sh (host: records the contention below, publishes only if the host was quiet),
# which runs inside the test VM (tools/vm/dfg-vm) tools/bench/run.sh (function run_pool),
command: tools/bench/run.sh: [DFG_NO_URING=1] dfg run [--isolate] light.dot (--no-fold, n=200000), wordfreq.dot (folded, fortunes), g40.dot (--no-fold, n=40000); 5 rounds, order turning
method: interleaved; per round each mode (pool, isolate, ioctl = the pool under DFG_NO_URING=1) once, the first turning round by round, outputs compared; ratios within a round (throughput pool/isolate, context switches per element isolate/pool, throughput pool/ioctl), median [min, max] over the rounds
date: 2026-11-29T00:35:46Z
git: c390ac6
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.9.0
mitigations: mitigations=off
# host contention over the run (tools/bench/host.sh):
host_command: tools/bench/host.sh tools/bench/run.sh 
host_window_s: 396.9 (from qemu seen to its last sample)
host_qemu_cpu_s: 579.1 (146% of one core)
host_other_cpu_s: 0.0 (0.0% of one core)
guest_busy_pct: 70.94
guest_steal_pct: 0.00
guest_loadavg_after: 2.63 1.43 0.64
host_loadavg: before 2.01 1.79 1.66, after 1.67 1.70 1.66
rule: publish only if other host processes used <= 10% of one core (DFG_BENCH_MAX_OTHER_CPU) and guest steal <= 2% (DFG_BENCH_MAX_STEAL)
verdict: accepted
