#!/bin/sh
# Prints the kernel build directory dfg.ko is built against: the running
# kernel's where it exists, else the newest installed headers that have a
# matching /boot/vmlinuz-* (so the test VM can boot the same kernel).
r=$(uname -r)
if [ -d "/lib/modules/$r/build" ]; then
	readlink -f "/lib/modules/$r/build"
	exit 0
fi
for d in $(ls -d /usr/src/linux-headers-*/ 2>/dev/null | sort -V -r); do
	v=${d#/usr/src/linux-headers-}
	v=${v%/}
	if [ -f "/boot/vmlinuz-$v" ] && [ -f "$d/Makefile" ]; then
		echo "${d%/}"
		exit 0
	fi
done
echo "kdir.sh: no kernel headers with a matching /boot/vmlinuz-*; run 'make deps'" >&2
exit 1
