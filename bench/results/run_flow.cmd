# Reproduce on the host, from the repository root:
#   make bench   (tools/bench/run.sh, function run_flow)
command: tools/bench/run.sh: dfg run [--no-fold] light.dot|wordfreq.dot (n=400000, best of 3)
date: 2026-11-22T02:28:41Z
git: 46fd3af (kmod/uapi/tools/bench modified)
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.1.0
mitigations: mitigations=off
