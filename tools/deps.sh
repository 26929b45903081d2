#!/bin/sh
# Installs, from Debian packages, everything dfg needs to build, test and
# benchmark on a fresh machine. Idempotent: installs only what is missing.
set -e
pkgs="build-essential pkg-config linux-headers-amd64 linux-image-amd64
linux-source-6.1 sparse kmod cpio xz-utils qemu-system-x86 busybox-static
liburing-dev libnl-3-dev libnl-genl-3-dev gnuplot-nox procps
openmpi-bin libopenmpi-dev fortunes graphviz libgraphviz-dev jq
iproute2 iputils-ping openssh-server openssh-client rdma-core
ibverbs-providers ibverbs-utils rdmacm-utils libibverbs-dev librdmacm-dev libucx0 ucx-utils vde2
strace dkms man-db groff-base libucx-dev libpmix-dev
libclips-dev libmetis-dev libsqlite3-dev sqlite3"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps.sh: all packages present"
	exit 0
fi
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "deps.sh: installing$missing"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
