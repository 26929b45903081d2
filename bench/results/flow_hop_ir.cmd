# Instructions per element per in-set hop (callgrind), dfg run against the
# hand-written loop (tools/bench/flow_loop.c) and its chain of bare map
# instances (-m comp); a count a loaded host does not change.
command: tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh 20000
git: 20dfdb0 (the code; main's later commits in this run touch docs and bench scripts only)
date: 2026-11-28T10:31:41Z
kernel: guest of tools/vm/dfg-vm (Linux 6.1, TCG, 2 vCPUs)
valgrind: valgrind-3.19.0
before (ca1244c, same script, reported by the change's author): 211-213 instructions per hop at N = 1-20, the loop 6.1-7.0
