# Reproduce on the host, from the repository root:
#   make bench
# which runs, inside the test VM (tools/vm/dfg-vm):
#   tools/bench/run.sh
# which ran (writes chan_latency, chan_throughput, chan_pipeline):
command: build/bin/chan_bench -d bench/results 
pinning: latency (block, busy) and throughput pin the two processes to CPUs 0 and 1, latency block1 pins both to CPU 0; pipeline processes are not pinned
date: 2026-11-22T05:04:34Z
git: dcffb81 (kmod/uapi/tools/bench modified)
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.1.0
mitigations: mitigations=off
