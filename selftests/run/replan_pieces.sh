#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Live re-planning of dfg run, a graph of two independent pieces (a
# change stops one, the other runs on), in the test VM (TAP output):
#   tools/vm/dfg-vm -- selftests/run/replan_pieces.sh
# replan.sh's program (libdfg/tests/replan_module.c), its pieces_* tests
# alone but for those of a refusal (replan_refused.sh): a program of its
# own, in a time limit of its own.
DFG_REPLAN_PART=pieces exec "$(dirname "$0")/replan.sh"
