# The parked channel round trip over the thread's io_uring (libdfg's default
# since the ucmd merge) against the same endpoints with DFG_NO_URING=1
# (ioctl), alternating in one VM boot, 3 rounds, each round's chan_bench
# latency run measuring its own pipe baseline. Reproduce, from the
# repository root (the script is the whole method):
#   cat > build/cb/ab.sh <<'SH'
#   #!/bin/bash
#   cd /work/main
#   for r in 1 2 3; do for m in ring ioctl; do mkdir -p build/cb/$m$r
#     if [ $m = ioctl ]; then env DFG_NO_URING=1 build/bin/chan_bench -d build/cb/$m$r -b latency -r 3
#     else build/bin/chan_bench -d build/cb/$m$r -b latency -r 3; fi
#   done; done
#   SH
#   tools/vm/dfg-vm -- build/cb/ab.sh
# then the CSV rows are the dfg_park and pipe rows of each run's chan_latency.csv.
# modes: block = the two processes on CPUs 0 and 1; block1 = both on CPU 0.
date: 2026-11-25T01:24Z
git: 6275b06
kernel: Linux 6.1.0-56-amd64 (Debian 6.1.192-2), QEMU TCG, 2 vCPUs
host: quiet (no other job; load average before 1.9)
