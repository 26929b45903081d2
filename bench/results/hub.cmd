# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=hub make bench
# which runs tools/bench/host.sh, which boots the two-node rig and runs tools/bench/hub.sh on node0
graph rmat: dfg graph gen --scale 18 --seed 1; dfg graph partition -k 2
graph apt: deb.debian.org_debian-security_dists_bookworm-security_main_binary-amd64_Packages.lz4 deb.debian.org_debian_dists_bookworm-updates_main_binary-amd64_Packages.lz4 deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4 (apt lists, 19620816 bytes compressed as stored); dfg graph partition -k 2
command: dfg graph sample --fanout 10,5 --batch 64 --batches 32 (apt: 32) --seed 1 --verbose, with --rules none (norep, rep), r1,r2,r4 (local), all (r3); norep served with --no-replica; kv: dfg graph kv-serve on node1, dfg graph sample --kv 169.254.0.11:7469 --timeout 30000 --no-replica on node0
configurations: norep/rdma rep/rdma local/rdma r3/rdma norep/tcp rep/tcp local/tcp r3/tcp kv
r3 gate: the module's default, /sys/kernel/dfg/prefetch/traffic_threshold = 67108864 bytes/s
rounds: 5, configuration order rotating; node0's dfg.ko and transport module reloaded before each module run (empty cache); every batch's hash checked equal across configurations
K: 2 (K=4 needs 4 nodes: not booted by host.sh)
largest R-MAT scale fitting the rig (estimate): 20
duration_s: 560
date: 2026-11-28T23:46:19Z
git: eb30667
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 1
virt: guest (tools/vm/dfg-vm)
dfg module: 0.9.0
mitigations: mitigations=off
# host contention over the run (tools/bench/host.sh):
host_command: tools/bench/host.sh tools/bench/host.sh --rig tools/bench/hub.sh 
host_window_s: 582.2 (from qemu seen to its last sample)
host_qemu_cpu_s: 766.1 (132% of one core)
host_other_cpu_s: 3.1 (0.5% of one core)
guest_busy_pct: 78.79
guest_steal_pct: 0.00
guest_loadavg_after: 1.05 0.88 0.47
host_loadavg: before 1.57 3.04 7.25, after 1.34 1.70 4.54
rule: publish only if other host processes used <= 10% of one core (DFG_BENCH_MAX_OTHER_CPU) and guest steal <= 2% (DFG_BENCH_MAX_STEAL)
verdict: accepted
