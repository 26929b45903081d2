# Reproduce on the host, from the repository root:
#   make bench
# which runs, inside the test VM (tools/vm/dfg-vm):
#   tools/bench/run.sh
# which ran:
command: build/bin/cmd_roundtrip -o bench/results/cmd_roundtrip.csv 
date: 2026-11-25T01:40:37Z
git: 57e36f7 (kmod/uapi/tools/bench modified)
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.1.0
mitigations: mitigations=off
