# Reproduce on the host, from the repository root:
#   tools/bench/host.sh tools/bench/chan_wait_path.sh 5
# (chan_bench's latency benchmark once over the thread's io_uring (DFG_WAIT_URING=1) and once
# with DFG_NO_URING=1 per round, order alternating, each with its own pipe
# baseline; ring_over_ioctl is taken within the round)
date: 2026-11-28T04:45:04Z
git: 829c890
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpus: 2
8 B block    ring/ioctl median 1.28 [1.22..1.44]
8 B block1   ring/ioctl median 1.56 [1.52..2.02]
4096 B block ring/ioctl median 1.39 [1.23..1.44]
4096 B block1 ring/ioctl median 1.48 [1.38..1.65]
# host contention over the run (tools/bench/host.sh):
host_command: tools/bench/host.sh tools/bench/chan_wait_path.sh 5 
host_window_s: 309.7 (from qemu seen to its last sample)
host_qemu_cpu_s: 451.9 (146% of one core)
host_other_cpu_s: 0.0 (0.0% of one core)
guest_busy_pct: 68.53
guest_steal_pct: 0.00
guest_loadavg_after: 1.46 0.91 0.40
host_loadavg: before 0.54 0.93 1.45, after 1.49 1.35 1.48
rule: publish only if other host processes used <= 10% of one core (DFG_BENCH_MAX_OTHER_CPU) and guest steal <= 2% (DFG_BENCH_MAX_STEAL)
verdict: accepted
