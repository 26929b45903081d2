#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live re-planning of dfg run, a graph of two independent pieces, a change
# the carry refuses after the piece it stops stopped (that piece alone
# restarts on the old plan, the other runs on), in the test VM (TAP output):
#   tools/vm/dfg-vm -- selftests/run/replan_refused.sh
# replan.sh's program (libdfg/tests/replan_module.c), its pieces_refused_*
# tests alone: a program of its own, in a time limit of its own.
DFG_REPLAN_PART=refused exec "$(dirname "$0")/replan.sh"
