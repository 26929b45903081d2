# Instructions per element per in-set hop (callgrind), dfg run against the
# (named apart from flow_hop_*: tools/bench/host.sh replaces those files when it publishes the flow benchmark)
# hand-written loop (tools/bench/flow_loop.c) and its chain of bare map
# instances (-m comp); a count a loaded host does not change.
command: tools/vm/dfg-vm -- tools/bench/flow_hop_ir.sh 20000
git: 6e0e26e
date: 2026-11-29T02:44Z
kernel: guest of tools/vm/dfg-vm (Linux 6.1, TCG, 2 vCPUs)
valgrind: valgrind-3.19.0
per element: dfg run measured at 20000 and 40000 elements; a hop is (Ir(N, 40000) - Ir(N, 20000) - Ir(0, 40000) + Ir(0, 20000)) / (N x 20000), each member's one-off set-up (dfg_setup_ir_per_member) left out. The maps of $0 hand their batch on without touching an element: the figure is the runtime's per-batch call per member and the copy into the batch and the calls out of it, spread over the N hops.
before: at 9972559 (set-up not left out) 24.6 at N = 20, 26.7 at N = 10 (about 6 of it set-up; the hop's own loop 16.3); at 11ed9c1 45.8-72.5; at 20dfdb0 78.2-79.6; at ca1244c 210-213
