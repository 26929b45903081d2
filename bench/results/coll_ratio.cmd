# Reproduce on the host, from the repository root:
#   make bench
# which runs, inside the test VM (tools/vm/dfg-vm):
#   tools/bench/run.sh
# which ran, for N in 2 4 8 with MAX = 67108864 for N = 2, 4 and 4194304 for N = 8 (Open MPI's polling with 8 ranks on 2 CPUs takes seconds per call above it) (rows of coll_raw.csv: impl mpi, dfg = default table, alt = ring/direct forced, pat = patent algorithms forced):
command: mpirun --allow-run-as-root --oversubscribe -np N build/bin/coll_mpi -M MAX -t 0.2
command: build/bin/coll_bench -n N -M MAX -t 0.2
command: DFG_COLL_ALGO=allreduce=ring,reduce_scatter=ring,alltoall=direct build/bin/coll_bench -n N -M MAX -t 0.2
command: DFG_COLL_ALGO=allreduce=rhalving,reduce_scatter=rhalving,alltoall=tiles build/bin/coll_bench -n N -M MAX -t 0.2
ratios: tools/bench/coll_ratio.awk coll_raw.csv coll_ratio.csv coll_algos.csv
openmpi: mpirun (Open MPI) 4.1.4
date: 2026-11-22T03:10:07Z
git: 29c957c
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.1.0
mitigations: mitigations=off
