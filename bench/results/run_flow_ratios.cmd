# Reproduce: DFG_BENCH_ONLY=flow make bench (tools/bench/run.sh, run_flow)
# job, vs, per-round ratios of throughput (dfg / other), 3 rounds, the three modes taking turns
host: made 2026-11-25 04:25 UTC inside a `make bench` run on a quiet host
(the lead's session only, host load average 0.7 at its start; no helper
running), but not gated by tools/bench/host.sh (it gates only coll):
ratios only, to be re-made under host.sh before the README quotes them as
final.
