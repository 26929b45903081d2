# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=flow make bench   (tools/bench/run.sh, function run_flow_hop)
command: tools/bench/run.sh: dfg run hopN.dot and flow_loop -n N -c 200000, N = 0 1 2 5 10 20, 3 rounds alternating
load: taken on a loaded host unless tools/bench/host.sh's figures say otherwise: ratios only, not final figures
date: 2026-11-25T02:36:50Z
git: 35b8c87 (kmod/uapi/tools/bench modified)
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.1.0
mitigations: mitigations=off
