#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live re-planning of dfg run, in the test VM (TAP output):
#   tools/vm/dfg-vm -- selftests/run/replan.sh
# libdfg's replan_module (libdfg/tests/replan_module.c) drives dfg_run()
# with a test replanner; a program of its own here, so that its minutes
# under TCG count against no other program's time limit.
# DFG_REPLAN_TARGET: random re-plans to check (60; make replan-stress
# asks for 10,000). The tests of a graph of two pieces run apart
# (replan_pieces.sh), in a time limit of their own.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$here
while [ "$top" != / ] && [ ! -f "$top/Kbuild" ]; do top=$(dirname "$top"); done
BUILD=${BUILD:-$top/build}
bin=$BUILD/libdfg/tests/replan_module
if [ ! -x "$bin" ]; then
	echo "# replan_module not built (make -C libdfg test)"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi
DFG_REPLAN_PART=${DFG_REPLAN_PART:-one} exec "$bin"
