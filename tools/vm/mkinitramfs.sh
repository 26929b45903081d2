#!/bin/sh
# Builds the test VM's initramfs: static busybox, the 9p/virtio modules of
# kernel $1, the network and Soft-RoCE modules the multi-node rig loads (with
# their dependencies, in load order), and tools/vm/init. Output: $2 (gzip
# cpio).
set -e
kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mods="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
netfs fscache 9pnet 9pnet_virtio 9p"
# rxe computes its ICRC with the crypto API's crc32, which it cannot load on
# demand (no modprobe in the initramfs): crc32_generic goes first.
netmods="crc32_generic virtio_net rdma_rxe rdma_ucm ib_uverbs"

bb=$(command -v busybox || true)
[ -n "$bb" ] && file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	bb=/bin/busybox
if ! ldd "$bb" 2>&1 | grep -q 'not a dynamic'; then
	echo "mkinitramfs.sh: $bb is not static; install busybox-static" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/dev" "$tmp/proc" "$tmp/sys" "$tmp/newroot" \
	"$tmp/lib/modules"
cp "$bb" "$tmp/bin/busybox"
cp "$here/init" "$tmp/init"
chmod 0755 "$tmp/init"
moddir=/lib/modules/$kver

# Appends module $1 to $netorder after its dependencies (modules.dep).
netorder=
add_with_deps() {
	case " $mods $netorder " in *" $1 "*) return ;; esac
	local d
	for d in $(modinfo -k "$kver" -F depends "$1" | tr ',' ' '); do
		add_with_deps "$d"
	done
	netorder="$netorder $1"
}
for m in $netmods; do
	add_with_deps "$m"
done

for m in $mods $netorder; do
	f=$(find "$moddir/kernel" -name "$m.ko*" | head -n 1)
	if [ -z "$f" ]; then
		echo "mkinitramfs.sh: module $m missing for $kver" >&2
		exit 1
	fi
	case "$f" in
	*.ko.xz) xz -dc "$f" >"$tmp/lib/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$tmp/lib/modules/$m.ko" ;;
	*) cp "$f" "$tmp/lib/modules/$m.ko" ;;
	esac
done
echo "$mods" | tr '\n' ' ' >"$tmp/lib/modules/order"
echo "$netorder" >"$tmp/lib/modules/order.net"
(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
