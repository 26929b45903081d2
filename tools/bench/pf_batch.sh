#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The measurement behind dfg_rdma.ko's batched reads (see pf_batch.c): on
# node0 of the two-node rig, node1 serves, node0 reads batches of
# DFG_PF_BATCH_N (default 289: a norep batch's remote reads) extents of
# each of DFG_PF_BATCH_LENS bytes, DFG_PF_BATCH_ROUNDS rounds each:
#   tools/vm/dfg-vm --nodes 2 --no-module -- tools/bench/pf_batch.sh
# Loaded-host figures are indications only (DESIGN.md, Performance method).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${BUILD:-$top/build}/bin/pf_batch
port=18700
n=${DFG_PF_BATCH_N:-289}
rounds=${DFG_PF_BATCH_ROUNDS:-15}
rc=0
for len in ${DFG_PF_BATCH_LENS:-64 512}; do
	ssh node1 "setsid -f $bin server $port </dev/null >/tmp/pf_batch.log 2>&1"
	sleep 2
	"$bin" client 169.254.0.11 "$port" "$n" "$len" "$rounds" || rc=1
	ssh node1 cat /tmp/pf_batch.log
done
exit $rc
