# Two more runs of the channel benchmark, right after the one in
# bench/results/chan_*.csv (run 1), same code (dcffb81),
# same host, each in a fresh VM boot, to show the run-to-run spread under
# TCG. Made on the host, from the repository root, with:
#   tools/vm/dfg-vm -- build/bin/chan_bench -d DIR
# and the CSVs copied here as run2_* and run3_*.
# Runs 1-3 were made with the code of commit dcffb81 (run 1's .cmd says
# "modified": comments in tools/bench/chan_bench.c were being reflowed,
# commit aa437ea, no code change).
