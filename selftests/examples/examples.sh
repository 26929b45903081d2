#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs each example a new user runs first and checks what it prints.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
pass=0 fail=0

# check NAME REGEX CMD...: CMD exits 0 and its output matches REGEX.
check() {
	local name=$1 re=$2 out
	shift 2
	if out=$("$@" 2>&1) && grep -Eq "$re" <<<"$out"; then
		echo "ok - $name"
		pass=$((pass + 1))
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok - $name"
		fail=$((fail + 1))
	fi
}

check arena_demo 'peer [0-9]+: read at offset [0-9]+: "hello from [0-9]+"' \
	"$BUILD/bin/arena_demo"
check pipeline_demo '^zero copy: every message arrived at the offset it was written at' \
	"$BUILD/bin/pipeline_demo" 20000
check coll_demo '^coll_demo: ok$' "$BUILD/bin/coll_demo" 4 1
# A team from MPI_COMM_WORLD (<dfg/coll_mpi.h>), where Open MPI is there.
if command -v mpirun >/dev/null && [ -x "$BUILD/bin/coll_from_mpi" ]; then
	check coll_from_mpi 'dfg_allreduce equals MPI_Allreduce' \
		mpirun --allow-run-as-root --oversubscribe -np 4 \
		"$BUILD/bin/coll_from_mpi"
fi
check dfgctl_info '^api_version: 1$' "$BUILD/bin/dfgctl" info
# dfgctl objects lists an arena, a region and a team of a live graph, one
# line each.
check dfgctl_objects_arena \
	'^graph=[0-9]+ name=exobj-[0-9]+ kind=arena id=1 size=8192 pages=2 resident=0$' \
	"$BUILD/selftests/examples/hold_objects" "$BUILD/bin/dfgctl" objects
check dfgctl_objects_region \
	'^graph=[0-9]+ name=exobj-[0-9]+ kind=region id=2 size=4096 pages=1 writable=0 users=1$' \
	"$BUILD/selftests/examples/hold_objects" "$BUILD/bin/dfgctl" objects
check dfgctl_objects_team \
	'^graph=[0-9]+ name=exobj-[0-9]+ kind=team id=3 team=exteam size=1 joined=1 state=active dead_rank=-1 waits=0 wakes=0 pages=[1-9][0-9]*$' \
	"$BUILD/selftests/examples/hold_objects" "$BUILD/bin/dfgctl" objects

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" = 0 ]
