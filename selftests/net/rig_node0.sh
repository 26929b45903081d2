#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The checks of selftests/net/rig.sh, run on node0 of a two-node rig: dfg.ko
# on both nodes, link-local IPv4 and IPv6 both ways, rdma_cm (rping) and
# verbs (ibv_rc_pingpong) over Soft-RoCE with rxe0's packet counters moving
# on both nodes, Open MPI launching across the nodes over ssh, and an MPI
# collective across them whose traffic goes through rxe0 (UCX, the defaults
# of tools/vm/rig.env). One TAP line per check.
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
peer=node1
# One ssh connection to the peer for all the checks (a login costs seconds
# under TCG).
ctl=/run/rig-test-ssh
peer_sh() {
	ssh -o ControlMaster=auto -o ControlPath=$ctl -o ControlPersist=300 \
		"$peer" "$@"
}
counters=ports/1/hw_counters
rxe=/sys/class/infiniband/rxe0

# check NAME REGEX CMD...: CMD exits 0 and its output matches REGEX.
# DFG_TEST_FILTER (a regex on "net/NAME", as for selftests/run.sh) runs
# only the checks it matches.
check() {
	local name=$1 re=$2 out t0=$SECONDS
	shift 2
	if [ -n "${DFG_TEST_FILTER:-}" ] &&
	   ! grep -Eq -- "$DFG_TEST_FILTER" <<<"net/$name"; then
		return 0
	fi
	if out=$("$@" 2>&1) && grep -Eq -- "$re" <<<"$out"; then
		# What it measured, for the log: its last lines.
		tail -n 2 <<<"$out" | sed 's/^/# /'
		echo "ok - $name"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok - $name"
	fi
	echo "# $((SECONDS - t0)) s"
}

# Packets rxe0 sent and received on this node (both, as "SENT RCVD").
pkts() {
	echo "$(cat $rxe/$counters/sent_pkts) $(cat $rxe/$counters/rcvd_pkts)"
}

# moved BEFORE AFTER: both counters grew.
moved() {
	local s0 r0 s1 r1
	read -r s0 r0 <<<"$1"
	read -r s1 r1 <<<"$2"
	echo "sent $s0 -> $s1, received $r0 -> $r1"
	[ "$s1" -gt "$s0" ] && [ "$r1" -gt "$r0" ]
}

ip6() {
	ip -6 -o addr show dev eth0 scope link | awk '{ sub("/.*", "", $4); print $4 }'
}

check "dfg.ko loaded on node0" '' test -d /sys/kernel/dfg
check "dfg.ko loaded on $peer" '' peer_sh test -d /sys/kernel/dfg
check "IPv4 link-local ping node0 -> $peer" ' 0% packet loss' \
	ping -c 2 -W 10 "$peer"
check "IPv4 link-local ping $peer -> node0" ' 0% packet loss' \
	peer_sh ping -c 2 -W 10 node0
me6=$(ip6)
peer6=$(peer_sh ip -6 -o addr show dev eth0 scope link |
	awk '{ sub("/.*", "", $4); print $4 }')
check "IPv6 link-local ping node0 -> $peer" ' 0% packet loss' \
	ping -6 -c 2 -W 10 "$peer6%eth0"
check "IPv6 link-local ping $peer -> node0" ' 0% packet loss' \
	peer_sh ping -6 -c 2 -W 10 "$me6%eth0"

mine0=$(pkts)
theirs0=$(peer_sh cat $rxe/$counters/sent_pkts $rxe/$counters/rcvd_pkts | xargs)
# The servers, started in the background on the peer; back once both
# listen (rping's rdma_cm id, ibv_rc_pingpong's TCP port).
peer6=${peer6:-none}
check "rping and ibv_rc_pingpong servers listen on $peer" '^listening$' \
	peer_sh "rping -s -a 169.254.0.11 -C 3 -v >/tmp/rping.log 2>&1 &
		ibv_rc_pingpong -d rxe0 -g 0 -n 5 >/tmp/ibv.log 2>&1 &
		for t in \$(seq 300); do
			rdma res show cm_id | grep -q 'state LISTEN.*rping' &&
				ss -ltn | grep -q ':18515 ' &&
				{ echo listening; exit 0; }
			sleep 0.1
		done; exit 1"
check "rping over rdma_cm, IPv4 link-local, 3 round trips" \
	'^ping data: rdma-ping-2: ' \
	timeout 60 rping -c -a 169.254.0.11 -C 3 -v
check "ibv_rc_pingpong over rxe0, 5 round trips" '^5 iters in ' \
	timeout 60 ibv_rc_pingpong -d rxe0 -g 0 -n 5 "$peer"
check "rxe0 counters moved on node0" . moved "$mine0" "$(pkts)"
check "rxe0 counters moved on $peer" . moved "$theirs0" \
	"$(peer_sh cat $rxe/$counters/sent_pkts $rxe/$counters/rcvd_pkts | xargs)"

check "mpirun --host node0,$peer starts a rank on each" \
	'^node0 node1$' \
	bash -c "timeout 120 mpirun --host node0,$peer -np 2 hostname | sort | xargs"
# An MPI collective across the nodes goes through UCX over rxe0.
before=$(pkts)
check "MPI allreduce across node0 and $peer over UCX and rxe0" \
	'^allreduce ok 2 4096$' \
	timeout 180 mpirun --host node0,$peer -np 2 \
	"$BUILD/selftests/net/mpi_allreduce" 4096
check "rxe0 counters moved during the MPI allreduce" . moved "$before" "$(pkts)"

# The module's pages on both nodes before dfg's tests: every failure
# test below must give them back on both.
pages_both() {
	echo "$(cat /sys/kernel/dfg/pages) $(peer_sh cat /sys/kernel/dfg/pages)"
}
pages0=$(pages_both)
# back_to_baseline: both nodes' pages as before (their processes may
# still be going: up to 30 s).
back_to_baseline() {
	local now
	for _ in $(seq 60); do
		now=$(pages_both)
		[ "$now" = "$pages0" ] && break
		sleep 0.5
	done
	echo "pages (node0 $peer): $pages0 -> $now"
	[ "$now" = "$pages0" ]
}

# dfg's collectives across the nodes: a network team from
# dfg_team_from_mpi, UCX over rxe0 (rig.env), every result against the
# serial reference, 1 element to 1 MiB.
before=$(pkts)
check "dfg collectives across node0 and $peer (dfg_team_from_mpi, UCX, rxe0)" \
	'^net_coll ok 2 [0-9]+$' \
	timeout 600 mpirun --host node0,$peer -np 2 \
	"$BUILD/selftests/net/net_coll" $((1 << 20))
rdma=$(pkts)
check "rxe0 counters moved during dfg's collectives" . moved "$before" "$rdma"
check "dfg collectives across the nodes, team from dfg_team_from_pmix" \
	'^net_coll ok 2 [0-9]+$' \
	timeout 300 mpirun --host node0,$peer -np 2 \
	"$BUILD/selftests/net/net_coll" pmix 4096
# Two ranks on each node (four in all), with every rank's liveness
# connections: the team is hierarchical (each node's two ranks in a kernel
# team, the nodes' leaders over rxe0), and every reduction, broadcast,
# allgather, barrier and alltoall runs both flat and hierarchical
# (DFG_ALGO_HIER, the default there; alltoall's up to 2 KiB blocks), and
# alltoallv flat (the table's choice) and hierarchical (forced), in 4-
# and 8-byte elements, 1 element to 16 KiB.
check "dfg collectives, two ranks on node0 and two on $peer (hier)" \
	'^net_coll ok 4 [0-9]+ hier$' \
	timeout 600 mpirun --host node0:2,$peer:2 -np 4 \
	"$BUILD/selftests/net/net_coll" $((64 << 10))
# Mismatched calls (allreduce, allgather, alltoall, an alltoall with
# unusable arguments on one rank; in the first 4 rounds two hierarchical
# alltoallv whose counts disagree in one pair), over and over, on the
# same four ranks:
# every rank must fail each one with EINVAL, told why, and go on. A rank whose transport broke there used to
# leave the others waiting for it in the next barrier (1 run in 5).
check "mismatched calls 20 times, two ranks on node0 and two on $peer (hier)" \
	'^net_coll ok 4 [0-9]+ hier$' \
	timeout 300 mpirun --host node0:2,$peer:2 -np 4 \
	"$BUILD/selftests/net/net_coll" mismatch 20
# dfg's alltoall, each call followed by an MPI_Alltoall on the same
# buffers, as the benchmark interleaves them: a rank that has left dfg's
# call sits inside MPI and does not progress dfg's UCX worker. The tiles
# (DFG_COLL_ALGO=alltoall=tiles) hung there in loaded benchmark runs; the
# put algorithm waits for no peer once it has the peers' records. Open
# MPI over UCX (rig.env) and over ob1 + tcp, where the hang was first seen.
check "dfg alltoall interleaved with MPI_Alltoall, 30 calls at each of 8 B-4 KiB (Open MPI over UCX)" \
	'^net_coll ok 2 [0-9]+$' \
	timeout 300 mpirun --host node0,$peer -np 2 \
	"$BUILD/selftests/net/net_coll" alltoall 30 mpi
check "dfg alltoall interleaved with MPI_Alltoall, 30 calls at each of 8 B-4 KiB (Open MPI over ob1 + tcp)" \
	'^net_coll ok 2 [0-9]+$' \
	timeout 300 mpirun --host node0,$peer -np 2 -x OMPI_MCA_pml=ob1 \
	-x OMPI_MCA_btl=tcp,self -x OMPI_MCA_btl_tcp_if_include=eth0 \
	"$BUILD/selftests/net/net_coll" alltoall 30 mpi
# The same four ranks placed round-robin (--map-by node): ranks 0 and 2
# on node0, 1 and 3 on $peer, so a machine's ranks are not consecutive;
# the hierarchical allgather still gives the flat layout, rank order.
check "dfg collectives, ranks interleaved over node0 and $peer (hier)" \
	'^net_coll ok 4 [0-9]+ hier$' \
	timeout 600 mpirun --host node0:2,$peer:2 -np 4 --map-by node \
	"$BUILD/selftests/net/net_coll" 4096
# The same collectives with UCX forced onto TCP (and MPI onto ob1/tcp):
# rxe0 carries none of them, so its counters stay where they were.
before=$(pkts)
check "dfg collectives across the nodes over UCX_TLS=tcp" \
	'^net_coll ok 2 [0-9]+$' \
	timeout 300 mpirun --host node0,$peer -np 2 -x UCX_TLS=tcp,self \
	-x UCX_NET_DEVICES=eth0 -x OMPI_MCA_pml=ob1 -x OMPI_MCA_btl=tcp,self \
	"$BUILD/selftests/net/net_coll" $((64 << 10))
still() {
	local s0 r0 s1 r1
	read -r s0 r0 <<<"$1"
	read -r s1 r1 <<<"$2"
	echo "sent $s0 -> $s1, received $r0 -> $r1"
	[ "$s1" = "$s0" ] && [ "$r1" = "$r0" ]
}
check "rxe0 counters still while UCX runs over TCP" . still "$before" \
	"$(pkts)"
# reported WHAT RANK ERRNO MIN_MS MAX_MS OUTPUT [WHY WHO]: OUTPUT has the
# line "WHAT RANK ERRNO <ms> <why> <who> [<clock>]" (ERRNO, WHY and WHO
# regexes; net_coll.c), MIN_MS <= ms <= MAX_MS.
reported() {
	local ms
	ms=$(sed -n "s/^$1 $2 $3 \([0-9]*\) ${7:-[a-z?]*} ${8:--*[0-9]*}\( [0-9]*\)\?\$/\1/p" <<<"$6")
	echo "$1 $2: ${ms:-none} ms $(grep "^$1 $2 " <<<"$6" | cut -d' ' -f5-6)"
	[ -n "$ms" ] && [ "$ms" -ge "$4" ] && [ "$ms" -le "$5" ]
}
# together WHAT OUTPUT RANK...: the RANKs (one machine's) failed within
# 2 s of each other on that machine's clock: the first to find the
# failure told the others (DESIGN.md, "Failure").
together() {
	local what=$1 out=$2 lo= hi= c r
	shift 2
	for r in "$@"; do
		c=$(awk -v w="$what" -v r="$r" '$1 == w && $2 == r { print $7 }' <<<"$out")
		[ -n "$c" ] || { echo "$what $r: no line"; return 1; }
		[ -z "$lo" ] || [ "$c" -lt "$lo" ] && lo=$c
		[ -z "$hi" ] || [ "$c" -gt "$hi" ] && hi=$c
	done
	echo "$what ranks $*: failed within $((hi - lo)) ms of each other"
	[ $((hi - lo)) -le 2000 ]
}
# failjob SECONDS ARG...: mpirun ARG... for a failure test, its output,
# and "job hung" if it had not ended after SECONDS. --enable-recovery:
# mpirun kills no survivor when a rank dies (or UCX aborts one). Each
# rank ends with _exit() (MPI_Finalize would wait for the lost rank), and
# with recovery on Open MPI 4.1's mpirun never ends a job whose machine
# had two ranks that exit so: a plain MPI program whose 4 ranks (2 x 2)
# _exit(0) after an MPI_Barrier waited out its timeout (4 runs of 4; 1 x 2
# ends; DESIGN.md, "Failure"). orte_allowed_exit_without_sync makes such
# an exit an end.
failjob() {
	local s=$1
	shift
	timeout "$s" mpirun --enable-recovery \
		--mca orte_allowed_exit_without_sync 1 "$@" 2>&1
	[ $? != 124 ] || echo "job hung: no end after $s s"
}
# ended OUTPUT: the job ended by itself.
ended() {
	! grep -q '^job hung' <<<"$1"
}
# A rank that dies mid-series: the survivor fails with EOWNERDEAD (130)
# within 2 s of the death (DESIGN.md, "Across machines": the liveness
# connection closes as the process goes), and nothing hangs.
survivor() {
	local out
	out=$(failjob 120 --host node0,$peer -np 2 \
		"$BUILD/selftests/net/net_coll" die 1)
	echo "$out"
	reported survivor 0 130 0 2000 "$out" killed 1 && ended "$out"
}
check "a rank killed on $peer: node0's collective fails with EOWNERDEAD within 2 s, reason killed, rank 1" \
	'^survivor 0: ' survivor
check "pages back to baseline on both nodes after the kill" '^pages' \
	back_to_baseline
# The same in a hierarchical alltoall (the series runs allreduce,
# allgather, barrier and alltoall in turn), two ranks per node: the killed
# rank is not its node's leader, so its leader learns it from the kernel
# team (in the node's allgather of the send buffers), node0's leader from
# the network (in the leaders' exchange), node0's other rank from its
# leader's abort; all three fail with EOWNERDEAD within 2 s (50-70 ms
# seen in a hierarchical barrier, which the host test hier_death and the
# flat kill above still cover; 69 ms in an alltoall, node0's ranks 29 ms
# apart, one loaded run). The job ends by itself (failjob; it used to
# wait out its timeout); 240 s for a loaded host (75 s was too short
# there: no survivor had printed yet).
survivors_hier() {
	local out r
	out=$(failjob 240 --host node0:2,$peer:2 -np 4 \
		"$BUILD/selftests/net/net_coll" die 3 alltoall)
	echo "$out"
	ended "$out" || return 1
	for r in 0 1 2; do
		reported survivor $r 130 0 2000 "$out" killed 3 || return 1
	done
	together survivor "$out" 0 1
}
check "a rank killed on $peer mid-hier alltoall: the three others fail with EOWNERDEAD within 2 s, reason killed, rank 3" \
	'failed within' survivors_hier
check "pages back to baseline on both nodes after the kill mid-hier" \
	'^pages' back_to_baseline
# A rank that never forms the team: the others' join ends with ETIMEDOUT
# (110) after DFG_TEAM_TIMEOUT_MS (PMIx's fence counts whole seconds).
nojoin() {
	local out
	out=$(DFG_TEAM_TIMEOUT_MS=3000 failjob 120 -x DFG_TEAM_TIMEOUT_MS \
		--host node0,$peer -np 2 "$BUILD/selftests/net/net_coll" \
		nojoin 1)
	echo "$out"
	reported nojoin 0 110 3000 5000 "$out" timeout -1 && ended "$out"
}
check "a rank on $peer that never joins: node0's join fails with ETIMEDOUT, reason timeout" \
	'^nojoin 0: ' nojoin
check "pages back to baseline on both nodes after the failed join" \
	'^pages' back_to_baseline
# $peer's link goes down mid-collective (for 20 s): node0's rank fails by
# UCX's transport timeouts (DESIGN.md: about 8 s; 20 s allowed here), the
# reason "link" naming rank 1, and nothing hangs; the job ends once the
# link is back. The rank on $peer finds it at once (a link event: its
# machine has no link left), within 2 s, or, in some runs, UCX 1.13 aborts
# it on a flushed UD receive (its ud_verbs treats that as fatal;
# DESIGN.md).
ud_fatal() {
	grep -q 'ud_verbs.*Fatal: receive completion.*Flushed' <<<"$1"
}
linkdown() {
	local out
	out=$(failjob 300 --host node0,$peer -np 2 \
		"$BUILD/selftests/net/net_coll" linkdown 1)
	echo "$out"
	ended "$out" && reported linkdown 0 130 0 20000 "$out" link 1 &&
		{ reported linkdown 1 130 0 2000 "$out" link 1 ||
		  ud_fatal "$out"; }
}
check "$peer's link down mid-collective: node0's rank fails (reason link, rank 1), $peer's within 2 s, none hangs" \
	'^linkdown 0: ' linkdown
check "$peer reachable again after its link came back" ' 0% packet loss' \
	ping -c 2 -W 30 "$peer"
check "pages back to baseline on both nodes after the link came back" \
	'^pages' back_to_baseline
# The same with two ranks per node (hierarchical), rank 3 on $peer
# downing the link: node0's leader finds it through UCX's timeouts, and
# node0's other rank learns it from its leader's abort through the
# node's kernel team, both reason "link", within 2 s of each other;
# $peer's ranks find it at once (or UCX aborts them, as above).
linkdown_hier() {
	local out r
	out=$(failjob 300 --host node0:2,$peer:2 -np 4 \
		"$BUILD/selftests/net/net_coll" linkdown 3)
	echo "$out"
	ended "$out" || return 1
	for r in 0 1; do
		reported linkdown $r 130 0 20000 "$out" link '[23]' || return 1
	done
	if ! ud_fatal "$out"; then
		for r in 2 3; do
			reported linkdown $r 130 0 2000 "$out" link '[23]' ||
				return 1
		done
	fi
	together linkdown "$out" 0 1
}
check "$peer's link down mid-hier: node0's two ranks fail within 2 s of each other, reason link" \
	'failed within' linkdown_hier
check "$peer reachable again after its link came back (hier)" \
	' 0% packet loss' ping -c 2 -W 30 "$peer"
check "pages back to baseline on both nodes after the link came back (hier)" \
	'^pages' back_to_baseline
echo "# rig checks done"
