# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=flow make bench   (tools/bench/run.sh, function run_flow)
command: tools/bench/run.sh: dfg run [--no-fold] light.dot|wordfreq.dot|wordfreq10.dot and the shell pipelines (n=400000, 3 rounds, order turning)
load: taken on a loaded host unless tools/bench/host.sh's figures say otherwise: ratios only, not final figures
date: 2026-11-25T02:42:33Z
git: 35b8c87 (kmod/uapi/tools/bench modified)
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.1.0
mitigations: mitigations=off
