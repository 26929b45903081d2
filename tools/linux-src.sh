#!/bin/sh
# Unpacks what dfg needs from the distribution's kernel source package:
# the kselftest harness headers and checkpatch.pl with its data files.
set -e
out=$1
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "linux-src.sh: no /usr/src/linux-source-*.tar.xz; run 'make deps'" >&2
	exit 1
fi
top=$(basename "$tarball" .tar.xz)
mkdir -p "$out"
tar -xJf "$tarball" -C "$out" --strip-components=1 \
	"$top/tools/testing/selftests/kselftest_harness.h" \
	"$top/tools/testing/selftests/kselftest.h" \
	"$top/scripts/checkpatch.pl" \
	"$top/scripts/spelling.txt" \
	"$top/scripts/const_structs.checkpatch"
touch "$out/.stamp"
