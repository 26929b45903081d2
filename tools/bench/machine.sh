# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the benchmarks (run.sh, hub.sh): describe_machine prints the
# facts every .cmd file records (date, commit, kernel, CPU, module). Needs
# $top, the repository's root.

# Kernel, CPU and module facts for the .cmd file.
describe_machine() {
	local rev
	rev=$(git -C "$top" -c safe.directory='*' rev-parse --short HEAD 2>/dev/null)
	if [ -n "$rev" ] &&
	   [ -n "$(git -C "$top" -c safe.directory='*' status --porcelain \
		-- kmod uapi tools/bench 2>/dev/null)" ]; then
		rev="$rev (kmod/uapi/tools/bench modified)"
	fi
	echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
	echo "git: ${rev:-unknown}"
	echo "kernel: $(uname -srvm)"
	echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "cpus: $(nproc)"
	echo "virt: $(if grep -qw hypervisor /proc/cpuinfo; then
		echo "guest${DFG_VM:+ (tools/vm/dfg-vm)}"; else echo none; fi)"
	echo "dfg module: $(cat /sys/kernel/dfg/version 2>/dev/null || echo '?')"
	echo "mitigations: $(tr '\0' ' ' </proc/cmdline | grep -o 'mitigations=[^ ]*' || echo default)"
}
