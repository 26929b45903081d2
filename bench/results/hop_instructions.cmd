# Instructions per element per in-set hop (callgrind), dfg run against the
# (named apart from flow_hop_*: tools/bench/host.sh replaces those files when it publishes the flow benchmark)
# hand-written loop (tools/bench/flow_loop.c) and its chain of bare map
# instances (-m comp); a count a loaded host does not change.
command: tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh 20000
git: 11ed9c1
date: 2026-11-28T16:17:00Z
kernel: guest of tools/vm/dfg-vm (Linux 6.1, TCG, 2 vCPUs)
valgrind: valgrind-3.19.0
before: at 20dfdb0 the same command counted 78.2-79.6 instructions per hop for dfg run and 85.4-85.7 for -m comp (N = 1-20), the loop 6.1-7.0; at ca1244c (5,000 elements) 210-213 for dfg run
