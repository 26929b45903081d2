# Instructions per element per in-set hop (callgrind), dfg run against the
# (named apart from flow_hop_*: tools/bench/host.sh replaces those files when it publishes the flow benchmark)
# hand-written loop (tools/bench/flow_loop.c) and its chain of bare map
# instances (-m comp); a count a loaded host does not change.
command: tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh 20000
git: 9972559
date: 2026-11-28T19:20:00Z
kernel: guest of tools/vm/dfg-vm (Linux 6.1, TCG, 2 vCPUs)
valgrind: valgrind-3.19.0
per element: (Ir(N) - Ir(0)) / (N x 20000) also spreads each member's set-up (creating it, compiling its expression, its node in the DOT file, its name in the module's set) over the 20000 elements: about 6 of the 24.6 at N = 20. callgrind_annotate of `dfg run` on the N = 20 graph (the pool process) counts the hop's own loop at 16.3 instructions per element and hop: rt_steps() 14.3 (the step's indirect call, its result's test, the link to the next member, the active-member mark) and the step of a map of $0, 2
before: at 11ed9c1 the same command counted 45.8-72.5 instructions per hop (46.9 at N = 10, 45.8 at N = 20); at 20dfdb0 78.2-79.6 for dfg run and 85.4-85.7 for -m comp (N = 1-20), the loop 6.1-7.0; at ca1244c (5,000 elements) 210-213 for dfg run
