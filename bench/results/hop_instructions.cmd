# Instructions per element per in-set hop (callgrind), dfg run against the
# (named apart from flow_hop_*: tools/bench/host.sh replaces those files when it publishes the flow benchmark)
# hand-written loop (tools/bench/flow_loop.c) and its chain of bare map
# instances (-m comp); a count a loaded host does not change.
command: tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh 20000
git: 20dfdb0 (the code; main's later commits in this run touch docs and bench scripts only)
date: 2026-11-28T10:31:41Z
kernel: guest of tools/vm/dfg-vm (Linux 6.1, TCG, 2 vCPUs)
valgrind: valgrind-3.19.0
before: at ca1244c the same script (5,000 elements) counted 210-213 instructions per hop for N = 1-20 against the loop's 6.1-7.0 (run by the engineer of the change, not kept as a file)
