# SPDX-License-Identifier: GPL-2.0
# Sizes in binary units (B, KiB, MiB, GiB), as the README and the tables
# write them, for every plot; loaded by the others from their directory:
#   load system('dirname "'.ARG0.'"').'/units.gp'
# sz(bytes): the label of a size, "32KiB".
sz(s) = s >= 1073741824 ? sprintf("%gGiB", s / 1073741824.0) : s >= 1048576 ? sprintf("%gMiB", s / 1048576.0) : s >= 1024 ? sprintf("%gKiB", s / 1024.0) : sprintf("%gB", s)
# eval size_xtics: on a log2 size axis, tics at 8 B, 64 B, ... 64 MiB,
# labelled by sz() (gnuplot's own %b%B prints "32ki").
size_xtics = "set xtics (); do for [i = 3:26:3] { set xtics add (sz(2**i) 2**i) }"
