#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Packaging tests, on the host (no module loading), in kselftest's TAP
# format with one "# Totals:" line:
#
#   tools/pkg-test.sh [group...]     groups: pc version messages plots man
#                                    install dkms (default: all)
#
# pc       the README's PKG_CONFIG_PATH=build/lib pkg-config command builds
#          and runs a program; the examples are linked that way
# version  VERSION, and every place it reaches: libdfg.map's nodes, the
#          soname and file name, both .pc files, dfg and dfgctl --version,
#          modinfo of dfg.ko (the running module: selftests/core/version.sh)
# messages usage errors of every subcommand of dfg and dfgctl, dfg run
#          without the module, help texts, plurals
# plots    sizes in binary units in tools/bench/*.gp
# man      every exported symbol and public inline has a page; every page
#          renders without a warning from the man root (MANPATH=libdfg/man)
# install  make install DESTDIR=: the exact tree, versions stamped, a
#          program built and run against it through its libdfg.pc; make
#          uninstall removes every file
# dkms     make dkms-install DESTDIR=: dkms builds and installs dfg.ko for
#          KDIR's kernel (the test VM's), in trees under DESTDIR (~30 s)
#
# Needs a built tree ('make all'). Exit status 0 if nothing failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
bin=$top/build/bin
lib=$top/build/lib
man=$top/libdfg/man
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dfg-pkg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
ver=$(cat VERSION)
n=0 pass=0 fail=0 skip=0

ok() {
	n=$((n + 1)) pass=$((pass + 1))
	echo "ok $n $1"
}
not_ok() {
	n=$((n + 1)) fail=$((fail + 1))
	echo "not ok $n $1"
	shift
	[ $# -gt 0 ] && printf '# %s\n' "$@"
}
skipped() {
	n=$((n + 1)) skip=$((skip + 1))
	echo "ok $n $1 # SKIP $2"
}
# expect NAME WANT GOT: equal strings
expect() {
	if [ "$2" = "$3" ]; then ok "$1"
	else not_ok "$1" "want: $2" "got:  $3"
	fi
}
# run_cmd NAME STATUS PATTERN... -- CMD...: exit status and every fixed
# string PATTERN in stdout+stderr
run_cmd() {
	local name=$1 want=$2 rc p
	local -a pats=()

	shift 2
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	"$@" >"$tmp/out" 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		not_ok "$name" "exit $rc, want $want: $*" "$(cat "$tmp/out")"
		return
	fi
	for p in "${pats[@]}"; do
		if ! grep -qF -- "$p" "$tmp/out"; then
			not_ok "$name" "no '$p' in the output of: $*" "$(cat "$tmp/out")"
			return
		fi
	done
	ok "$name"
}

# A program that prints dfg_version(), to build the documented way.
cat >"$tmp/app.c" <<'EOF'
#include <stdio.h>
#include <dfg/dfg.h>

int main(void)
{
	puts(dfg_version());
	return 0;
}
EOF

group_pc() {
	local flags

	# The README's commands, word for word but for the file names.
	if (export PKG_CONFIG_PATH=$PWD/build/lib
	    cc "$tmp/app.c" $(pkg-config --cflags --libs libdfg) -o "$tmp/app"); then
		expect pc.readme_command_runs "$ver" \
			"$(LD_LIBRARY_PATH=build/lib "$tmp/app")"
	else
		not_ok pc.readme_command_runs "cc failed"
	fi
	flags=$(PKG_CONFIG_PATH=build/lib pkg-config --cflags --libs libdfg)
	local want missing=
	for want in "-I$top/libdfg/include" "-I$top/uapi" "-L$lib"; do
		case " $flags " in
		*" $want "*) ;;
		*) missing="$missing $want" ;;
		esac
	done
	if [ -z "$missing" ]; then ok pc.build_tree_paths
	else not_ok pc.build_tree_paths "no$missing in: $flags"
	fi
	# The examples are built with it: libdfg.so.0 from build/lib.
	if readelf -d "$bin/arena_demo" | grep -q 'NEEDED.*\[libdfg\.so\.0\]' &&
	   readelf -d "$bin/arena_demo" | grep -qF "[$lib]"; then
		ok pc.examples_linked_through_it
	else
		not_ok pc.examples_linked_through_it "$(readelf -d "$bin/arena_demo" | grep -E 'NEEDED|PATH')"
	fi
}

group_version() {
	local node soname

	if [[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then ok version.format
	else not_ok version.format "VERSION: '$ver' is not MAJOR.MINOR.PATCH"
	fi
	# A release carries every node it exports: VERSION's MAJOR.MINOR is
	# never older than libdfg.map's newest node.
	node=$(sed -n 's/^LIBDFG_\([0-9.]*\) {.*/\1/p' libdfg/libdfg.map | sort -V | tail -n 1)
	if [ "$(printf '%s\n' "$node" "${ver%.*}" | sort -V | tail -n 1)" = "${ver%.*}" ]; then
		ok version.not_older_than_abi_nodes
	else
		not_ok version.not_older_than_abi_nodes "libdfg.map has LIBDFG_$node, VERSION is $ver"
	fi
	soname=$(readelf -d "$lib/libdfg.so.$ver" 2>/dev/null | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
	expect version.soname libdfg.so.0 "$soname"
	expect version.soname_link "libdfg.so.$ver" "$(readlink "$lib/libdfg.so.0")"
	expect version.pc "$ver" "$(PKG_CONFIG_PATH=$lib PKG_CONFIG_DISABLE_UNINSTALLED=1 pkg-config --modversion libdfg)"
	expect version.pc_uninstalled "$ver" "$(PKG_CONFIG_PATH=$lib pkg-config --modversion libdfg-uninstalled)"
	expect version.dfg "dfg $ver" "$("$bin/dfg" --version)"
	expect version.dfgctl "dfgctl $ver" "$("$bin/dfgctl" --version | cut -d' ' -f1-2)"
	expect version.dfgctl_subcommand "$("$bin/dfgctl" --version)" "$("$bin/dfgctl" version)"
	expect version.module "$ver" "$(modinfo -F version dfg.ko)"
	expect version.dkms_conf_template '"@VERSION@"' \
		"$(sed -n 's/^PACKAGE_VERSION=//p' dkms.conf.in)"
	# Pages carry it only once installed (the install group checks).
	local bad
	bad=$(grep -H '^\.TH' "$man"/man*/* | grep -v '^[^:]*:\.TH [^ ]* [0-9] "[^"]*" "\(lib\)\?dfg" ')
	if [ -z "$bad" ]; then ok version.none_in_tree_pages
	else not_ok version.none_in_tree_pages "write the source field as \"libdfg\" (or \"dfg\"), no version:" "$bad"
	fi
}

group_messages() {
	local sub subs graph=examples/wordfreq/wordfreq.dot

	run_cmd messages.dfg_run_no_module 1 "/dev/dfg" "sudo insmod ./dfg.ko" \
		"sudo modprobe dfg" "tools/vm/dfg-vm -- $bin/dfg run -q $graph" \
		-- env DFG_DEVICE="$tmp/no-dfg" "$bin/dfg" run -q "$graph"
	# A missing graph is not blamed on the module.
	"$bin/dfg" run "$tmp/none.dot" >"$tmp/out" 2>&1
	if grep -q 'dfg-vm\|not loaded' "$tmp/out"; then
		not_ok messages.dfg_run_missing_graph_no_hint "$(cat "$tmp/out")"
	else
		ok messages.dfg_run_missing_graph_no_hint
	fi
	for sub in plan run; do
		run_cmd "messages.dfg_${sub}_bad_option" 2 \
			"dfg $sub: " "--bogus" "usage: dfg $sub GRAPH.dot" \
			"dfg $sub --help" -- "$bin/dfg" "$sub" --bogus "$graph"
		run_cmd "messages.dfg_${sub}_missing_arg" 2 "usage: dfg $sub GRAPH.dot" \
			-- "$bin/dfg" "$sub"
	done
	run_cmd messages.dfg_unknown_command 2 "dfg: unknown command 'frob'" "usage:" \
		-- "$bin/dfg" frob
	run_cmd messages.dfg_help 0 "dfg --version" "dfg plan GRAPH.dot" -- "$bin/dfg" --help
	# Every subcommand dfgctl's help lists.
	subs=$("$bin/dfgctl" --help | sed -n 's/^  \([a-z]\+\)\([ ,].*\)\?$/\1/p')
	[ -n "$subs" ] || not_ok messages.dfgctl_subcommands_listed
	for sub in $subs; do
		run_cmd "messages.dfgctl_${sub}_bad_option" 2 "dfgctl: $sub: " \
			"'--bogus'" "Try 'dfgctl --help'." -- "$bin/dfgctl" "$sub" --bogus
	done
	run_cmd messages.dfgctl_unknown_command 2 "dfgctl: unknown command 'frob'" \
		-- "$bin/dfgctl" frob
	for p in dfg dfgctl; do
		if "$bin/$p" --help | grep -q '%%'; then
			not_ok "messages.${p}_help_no_format_escapes" "$("$bin/$p" --help | grep '%%')"
		else
			ok "messages.${p}_help_no_format_escapes"
		fi
	done
	# A lone generate has no flow for its output: a type-free plan.
	printf 'digraph one { a [type=generate, count=1]; }\n' >"$tmp/one.dot"
	run_cmd messages.plan_one_component 0 "1 component, 0 flows" "1 set, 1 instance" \
		-- "$bin/dfg" plan --any-types "$tmp/one.dot"
	printf 'digraph two { a [type=generate, count=1]; b [type=write_lines, file="x"]; a -> b; }\n' >"$tmp/two.dot"
	run_cmd messages.plan_two_components 0 "2 components, 1 flow" \
		-- "$bin/dfg" plan "$tmp/two.dot"
}

group_plots() {
	local f bad=

	expect plots.sz_units "8B 1KiB 32KiB 1.5MiB 64MiB 2GiB" \
		"$(gnuplot -e "load 'tools/bench/units.gp'; print sprintf('%s %s %s %s %s %s', sz(8), sz(1024), sz(32768), sz(1572864), sz(67108864), sz(2147483648))" 2>&1)"
	# gnuplot's own prefixes: %c and %B (k, ki), decimal kB.
	for f in tools/bench/*.gp; do
		grep -n "%[.0-9]*[cB]\|[0-9]k[B ']\|KB" "$f" | grep -v '^[0-9]*:#' |
			sed "s|^|$f:|" >>"$tmp/bad"
	done
	bad=$(cat "$tmp/bad")
	if [ -z "$bad" ]; then ok plots.no_decimal_prefixes
	else not_ok plots.no_decimal_prefixes "$bad"
	fi
	# Every plot still renders the committed data.
	for f in chan_latency chan_pipeline chan_throughput; do
		[ -f "bench/results/$f.csv" ] || continue
		run_cmd "plots.$f" 0 -- gnuplot -e "csv='bench/results/$f.csv'; png='$tmp/$f.png'; term='png'" "tools/bench/$f.gp"
	done
	for f in coll_busbw coll_ratio; do
		[ -f bench/results/coll_summary.csv ] || continue
		run_cmd "plots.$f" 0 -- gnuplot -e "csv='bench/results/coll_summary.csv'; png='$tmp/$f.png'; term='png'" "tools/bench/$f.gp"
	done
}

# Public inline functions of the headers (not __ helpers).
header_inlines() {
	sed -n 's/^static inline [^(]*[ *]\([a-z][a-z0-9_]*\)(.*/\1/p' \
		libdfg/include/dfg/*.h
}

group_man() {
	local s f out missing= warn= so=

	# Exported: the library's dynamic symbols (nm -D), which are
	# libdfg.map's globals (tests/abi.sh checks that).
	for s in $( { nm -D --defined-only "$lib/libdfg.so.$ver" |
		      awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }'
		      header_inlines; } | sort -u); do
		[ -f "$man/man3/$s.3" ] || missing="$missing $s"
	done
	if [ -z "$missing" ]; then ok man.every_symbol_has_a_page
	else not_ok man.every_symbol_has_a_page "no libdfg/man/man3/<name>.3 for:$missing"
	fi
	missing=
	for f in dfg.1 dfgctl.8; do
		[ -f "$man/man${f##*.}/$f" ] || missing="$missing $f"
	done
	if [ -z "$missing" ]; then ok man.tool_pages
	else not_ok man.tool_pages "missing:$missing"
	fi
	# Nothing at the top of the man root: each page in its section.
	out=$(find "$man" -maxdepth 1 -type f)
	if [ -z "$out" ]; then ok man.layout
	else not_ok man.layout "move into man<section>/:" "$out"
	fi
	# From the man root, as man(1) reads them: .so names man3/x.3.
	cd "$man" || return
	for f in man*/*; do
		s=$(sed -n 's/^\.so //p' "$f")
		[ -z "$s" ] || [ -f "$s" ] || so="$so $f->$s"
		out=$(groff -s -t -man -ww -z -Tutf8 "$f" 2>&1)
		[ -z "$out" ] || warn="$warn"$'\n'"$f: $out"
	done
	cd "$top" || return
	if [ -z "$so" ]; then ok man.so_links_resolve
	else not_ok man.so_links_resolve ".so must name man<section>/<page> from the man root:$so"
	fi
	if [ -z "$warn" ]; then ok man.render_without_warnings
	else not_ok man.render_without_warnings "$warn"
	fi
	run_cmd man.manpath_tree 0 "dfg_allreduce" "dfg_allgather" \
		-- env MANPATH="$man" MANWIDTH=80 man dfg_allgather
}

# The staged install's files and links, one per line, sorted.
tree_list() {
	(cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
}

group_install() {
	local d=$tmp/stage kver want got f bad=

	if ! make -s install DESTDIR="$d" PREFIX=/usr >"$tmp/install.log" 2>&1; then
		not_ok install.runs "$(tail -n 20 "$tmp/install.log")"
		return
	fi
	ok install.runs
	kver=$(modinfo -F vermagic dfg.ko | cut -d' ' -f1)
	{
		echo "lib/modules/$kver/extra/dfg.ko"
		echo "lib/modules/$kver/extra/dfg_rdma.ko"
		echo "lib/modules/$kver/extra/dfg_tcp.ko"
		echo usr/bin/dfg
		echo usr/bin/dfgctl
		for f in libdfg/include/dfg/*.h; do echo "usr/include/dfg/${f##*/}"; done
		echo usr/include/linux/dfg.h
		echo usr/include/linux/dfg_graph.h
		echo usr/lib/libdfg.a
		echo usr/lib/libdfg.so
		echo usr/lib/libdfg.so.0
		echo "usr/lib/libdfg.so.$ver"
		echo usr/lib/pkgconfig/libdfg.pc
		echo usr/share/dfg/default.rules
		(cd "$man" && ls man*/*) | sed 's|^|usr/share/man/|'
	} | sort >"$tmp/want"
	tree_list "$d" >"$tmp/got"
	if cmp -s "$tmp/want" "$tmp/got"; then ok install.tree
	else not_ok install.tree "diff want got:" "$(diff "$tmp/want" "$tmp/got")"
	fi
	expect install.soname_links "libdfg.so.$ver libdfg.so.$ver" \
		"$(readlink "$d/usr/lib/libdfg.so.0") $(readlink "$d/usr/lib/libdfg.so")"
	expect install.module_version "$ver" "$(modinfo -F version "$d/lib/modules/$kver/extra/dfg.ko")"
	# Every page's .TH, and nothing else, got the version.
	for f in $(cd "$man" && ls man*/*); do
		if grep -q '^\.TH' "$man/$f"; then
			grep -q "^\.TH [^ ]* [0-9] \"[^\"]*\" \"\(lib\)\?dfg $ver\"" "$d/usr/share/man/$f" ||
				bad="$bad $f"
		else
			cmp -s "$man/$f" "$d/usr/share/man/$f" || bad="$bad $f"
		fi
	done
	if [ -z "$bad" ]; then ok install.man_versions
	else not_ok install.man_versions "wrong .TH or changed .so in:$bad"
	fi
	run_cmd install.man_so_links 0 "dfg_allreduce" \
		-- env MANPATH="$d/usr/share/man" MANWIDTH=80 man dfg_allgather
	# A program built through the installed libdfg.pc, as a user would.
	local flags
	flags=$(PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_PATH= \
		PKG_CONFIG_LIBDIR="$d/usr/lib/pkgconfig:$(pkg-config --variable pc_path pkg-config)" \
		pkg-config --cflags --libs libdfg)
	if cc -Wall -Werror -o "$tmp/app-installed" "$tmp/app.c" $flags; then
		expect install.pc_builds_and_runs "$ver" \
			"$(LD_LIBRARY_PATH=$d/usr/lib "$tmp/app-installed")"
	else
		not_ok install.pc_builds_and_runs "cc failed with: $flags"
	fi
	expect install.pc_prefix /usr \
		"$(PKG_CONFIG_PATH="$d/usr/lib/pkgconfig" pkg-config --variable prefix libdfg)"
	make -s uninstall DESTDIR="$d" PREFIX=/usr >"$tmp/uninstall.log" 2>&1
	expect install.uninstall_removes_all "" "$(tree_list "$d")"
}

group_dkms() {
	local d=$tmp/dkms kver ko

	if ! command -v dkms >/dev/null; then
		skipped dkms.install "dkms is not installed (tools/deps.sh)"
		return
	fi
	if [ "$(id -u)" != 0 ]; then	# even with every tree under DESTDIR
		skipped dkms.install "dkms install needs root"
		return
	fi
	if ! make -s dkms-install DESTDIR="$d" >"$tmp/dkms.log" 2>&1; then
		not_ok dkms.install "$(tail -n 30 "$tmp/dkms.log")"
		return
	fi
	ok dkms.install
	kver=$(modinfo -F vermagic dfg.ko | cut -d' ' -f1)
	ko=$d/lib/modules/$kver/updates/dkms/dfg.ko
	expect dkms.module_version "$ver" "$(modinfo -F version "$ko" 2>&1)"
	expect dkms.module_kernel "$kver" "$(modinfo -F vermagic "$ko" 2>&1 | cut -d' ' -f1)"
	expect dkms.rdma_module_version "$ver" \
		"$(modinfo -F version "${ko%/*}/dfg_rdma.ko" 2>&1)"
	expect dkms.tcp_module_version "$ver" \
		"$(modinfo -F version "${ko%/*}/dfg_tcp.ko" 2>&1)"
	expect dkms.conf_version "\"$ver\"" \
		"$(sed -n 's/^PACKAGE_VERSION=//p' "$d/usr/src/dfg-$ver/dkms.conf")"
	run_cmd dkms.status 0 "dfg/$ver, $kver" "installed" \
		-- dkms status --dkmstree "$d/var/lib/dkms" --sourcetree "$d/usr/src" \
		--installtree "$d/lib/modules" dfg
}

groups=${*:-pc version messages plots man install dkms}
echo "TAP version 13"
for g in $groups; do
	case $g in
	pc|version|messages|plots|man|install|dkms) "group_$g" ;;
	*) echo "pkg-test.sh: unknown group '$g'" >&2; exit 2 ;;
	esac
done
echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" = 0 ]
