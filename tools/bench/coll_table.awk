#!/usr/bin/awk -f
# SPDX-License-Identifier: GPL-2.0
# coll_table.awk coll_summary.csv: markdown tables of dfg against Open MPI,
# one per collective, N and MPI mode, ready for the README. Ratio = MPI
# time / dfg time per round (> 1: dfg faster), median [min..max] over the
# rounds; a size where the median is below 1.0x is flagged, and a summary
# lists every such size.
BEGIN { FS = "," }
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
function c(name) { return $(col[name]) }
function human(b) {
	if (b >= 1048576 && b % 1048576 == 0) return b / 1048576 " MiB"
	if (b >= 1024 && b % 1024 == 0) return b / 1024 " KiB"
	return b " B"
}
{
	key = c("coll") " N=" c("nprocs") " (" (c("nprocs") > 2 ? "oversubscribed, " : "") "MPI " c("mpi_mode") (c("mpi_yield") != "" ? ", yield=" c("mpi_yield") : "") ")"
	if (!(key in rows)) order[++nkeys] = key
	flag = ""
	if (c("ratio_med") + 0 < 1.0) {
		flag = c("ratio_max") + 0 < 1.0 ? "**slower, every round**" : "**slower**"
		slow[key] = slow[key] (slow[key] == "" ? "" : ", ") human(c("bytes")) " " sprintf("%.2fx", c("ratio_med"))
	}
	rows[key] = rows[key] sprintf("| %s | %s | %.2f | %.2f | **%.2fx** [%.2f..%.2f] | %.1f / %.1f | %.0f%% / %.0f%% | %.2f / %.2f | %s |\n",
		human(c("bytes")), human(c("block")), c("mpi_us"), c("dfg_us"), c("ratio_med"),
		c("ratio_min"), c("ratio_max"), c("mpi_busbw_MBps"), c("dfg_busbw_MBps"),
		100 * c("mpi_busbw_frac"), 100 * c("dfg_busbw_frac"), c("mpi_cpu_us"), c("dfg_cpu_us"), flag)
}
END {
	if (!nkeys) { print "coll_table.awk: no rows" > "/dev/stderr"; exit 1 }
	for (i = 1; i <= nkeys; i++) {
		k = order[i]
		printf "### %s\n\n", k
		print "| size | block | MPI us | dfg us | MPI/dfg time, median [range] | busbw MB/s MPI / dfg | of memcpy MPI / dfg | CPU us/call, all ranks, MPI / dfg | |"
		print "|---:|---:|---:|---:|---|---:|---:|---:|---|"
		printf "%s\n", rows[k]
	}
	print "### Where dfg is slower than Open MPI (median ratio < 1.0x)\n"
	for (i = 1; i <= nkeys; i++)
		if (order[i] in slow)
			printf "- %s: %s\n", order[i], slow[order[i]]
		else
			printf "- %s: none\n", order[i]
}
