#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs libdfg's tests that skip on a host without /dev/dfg, here where the
# module is loaded. Each prints its own "# Totals:" line.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
st=0
for t in module graph_module region_module chan_module team_module \
	 sched_module coll_module \
	 alltoall_module run_opts; do
	bin=$BUILD/libdfg/tests/$t
	if [ ! -x "$bin" ]; then
		echo "# libdfg: $t not built (make -C libdfg test)"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
		st=1
		continue
	fi
	t0=$SECONDS
	"$bin" || st=1
	echo "# libdfg: $t: $((SECONDS - t0)) s"
done
exit $st
