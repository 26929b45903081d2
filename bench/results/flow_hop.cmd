# Reproduce on the host, from the repository root:
#   DFG_BENCH_ONLY=flow make bench   (tools/bench/run.sh, function run_flow_hop)
command: tools/bench/run.sh: dfg run hopN.dot and flow_loop -n N -c 200000, N = 0 1 2 5 10 20, 5 rounds alternating
load: taken on a loaded host unless tools/bench/host.sh's figures say otherwise: ratios only, not final figures
date: 2026-11-25T04:25:30Z
git: 0e06fe0
kernel: Linux 6.1.0-56-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-11-16) x86_64
cpu: QEMU TCG CPU version 2.5+
cpus: 2
virt: guest (tools/vm/dfg-vm)
dfg module: 0.7.0
mitigations: mitigations=off
host: made 2026-11-25 04:25 UTC inside a `make bench` run on a quiet host
(the lead's session only, host load average 0.7 at its start; no helper
running), but not gated by tools/bench/host.sh (it gates only coll):
ratios only, to be re-made under host.sh before the README quotes them as
final.
