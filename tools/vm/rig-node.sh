#!/bin/bash
# The nodes of the multi-node rig (dfg-vm --nodes).
#
#   rig-node.sh --prepare RUN N   on the host: writes RUN/rig/, the files
#                                 every node uses (keys, sshd and ssh
#                                 configuration, /etc/hosts)
#   rig-node.sh CMD...            in a guest (the job execs it): sets node
#                                 $dfgvm_node up, runs CMD if it is node0
#                                 (every node with --on-each)
#
# A node gets its name, eth0 with its link-local address, Soft-RoCE (rxe0)
# over it, /etc/hosts and sshd; waits for every node; runs CMD; then waits
# until every node's CMD has ended, so that no node powers off under a peer
# that still uses it. Exit status: CMD's, 0 on a node that only served, 125
# if the node could not come up. The host makes the keys and files (one
# program run costs a good fraction of a second in a TCG guest).
#
# The run directory (shared by the host and every node) carries the
# handshake: node<i>/ready when node i serves, node<i>/cmd-status when its
# CMD ended, node<i>/gone (written by the host) when its VM is gone.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

prepare() {
	local run=$1 n=$2 rig=$1/rig j
	mkdir -p "$rig/ssh" && chmod 0700 "$rig/ssh" || return 1
	ssh-keygen -q -t ed25519 -N '' -C dfg-rig -f "$rig/ssh/id_ed25519" ||
		return 1
	cp "$rig/ssh/id_ed25519.pub" "$rig/ssh/authorized_keys"
	grep -E '^[A-Z_]+=' "$here/rig.env" >"$rig/ssh/environment"
	cat >"$rig/ssh/config" <<-CONFIG
	Host *
		StrictHostKeyChecking no
		UserKnownHostsFile /dev/null
		LogLevel ERROR
		BatchMode yes
		ConnectTimeout 60
	CONFIG
	cat >"$rig/sshd_config" <<-CONFIG
	PidFile /run/sshd.pid
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	UseDNS no
	PermitUserEnvironment yes
	LoginGraceTime 300
	CONFIG
	{
		echo "127.0.0.1 localhost"
		echo "::1 localhost ip6-localhost ip6-loopback"
		for ((j = 0; j < n; j++)); do
			echo "169.254.0.$((10 + j)) node$j"
		done
	} >"$rig/hosts"
	for ((j = 0; j < n; j++)); do
		mkdir -p "$run/node$j" &&
		ssh-keygen -q -t ed25519 -N '' -C "node$j" \
			-f "$run/node$j/host_key" || return 1
	done
}

if [ "${1:-}" = --prepare ]; then
	prepare "$2" "$3"
	exit
fi

i=$dfgvm_node
n=$dfgvm_nodes
run=$dfgvm_run
rig=$run/rig
me=$run/node$i
wait_tmo=300

die() {
	echo "dfg-vm: node$i: $*" >&2
	exit 125
}

# wait_all FILE: waits until every node has FILE; false if one is gone
# without it, or after $wait_tmo seconds.
wait_all() {
	local j t=0
	for ((j = 0; j < n; j++)); do
		until [ -e "$run/node$j/$1" ]; do
			[ -e "$run/node$j/gone" ] && return 1
			((t++ < wait_tmo * 10)) || return 1
			sleep 0.1
		done
	done
}

runs_cmd() {
	[ "$1" = 0 ] || [ "$dfgvm_oneach" = 1 ]
}

hostname "node$i"
# The shared root is read-only: the rig's hosts file goes over it.
mount --bind "$rig/hosts" /etc/hosts || die "cannot bind /etc/hosts"
# No duplicate address detection: the IPv6 link-local address is usable at
# once (the segment holds only the rig's nodes, whose MACs differ).
echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad || die "no eth0"
ip -b - <<-IP || die "cannot configure eth0"
	link set eth0 up
	addr add 169.254.0.$((10 + i))/16 dev eth0
IP
rdma link add rxe0 type rxe netdev eth0 || die "cannot add rxe0"
# /root is a 0700 tmpfs (tools/vm/init): sshd trusts keys there.
cp -a "$rig/ssh" /root/.ssh || die "cannot install /root/.ssh"
# Privilege separation wants a root-owned directory nobody else can write.
mkdir -m 0755 /run/sshd &&
	/usr/sbin/sshd -f "$rig/sshd_config" -E /run/sshd.log \
		-o "HostKey=$me/host_key" ||
	die "sshd did not start: $(cat /run/sshd.log)"
: >"$me/ready"

wait_all ready || die "not every node came up"
st=0
if runs_cmd "$i"; then
	# Every peer's sshd answers over the rig's network (its banner: a
	# full ssh login costs seconds under TCG, and CMD makes its own).
	for ((j = 0; j < n; j++)); do
		[ "$j" = "$i" ] && continue
		banner=$(timeout 60 bash -c \
			'exec 3<>"/dev/tcp/$0/22" && head -c 8 <&3' "node$j") &&
			[ "$banner" = SSH-2.0- ] ||
			die "no sshd answers on node$j"
	done
	"$@"
	st=$?
	echo "$st" >"$me/cmd-status"
fi
for ((j = 0; j < n; j++)); do
	runs_cmd "$j" || continue
	# A node gone without its status has been reported by the host.
	until [ -e "$run/node$j/cmd-status" ] || [ -e "$run/node$j/gone" ]; do
		sleep 0.2
	done
done
exit "$st"
