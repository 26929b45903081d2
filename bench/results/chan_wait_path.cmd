# Reproduce on the host, from the repository root:
#   tools/vm/dfg-vm -- tools/bench/chan_wait_path.sh 5
# (chan_bench's latency benchmark once over the thread's io_uring and once
# with DFG_NO_URING=1 per round, order alternating, each with its own pipe
# baseline; ring_over_ioctl is taken within the round)
date: 2026-11-25T01:31Z
git: 57e36f7 plus tools/bench/chan_wait_path.sh (committed with this file)
kernel: 6.1.0-56-amd64 (Debian) in the test VM, QEMU TCG, 2 vCPUs
host: no other job ran (load average before 1.1); 2 processes busy at most (the benchmark's pair)
8 B block    ring/ioctl median 1.24 [1.13..1.37]
8 B block1   ring/ioctl median 1.57 [1.49..1.60]
4096 B block ring/ioctl median 1.10 [0.95..1.27]
4096 B block1 ring/ioctl median 1.50 [1.45..1.60]
