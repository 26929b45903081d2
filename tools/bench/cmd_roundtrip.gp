# SPDX-License-Identifier: GPL-2.0
# Plots cmd_roundtrip's CSV: ns/op per method, ratio to getppid and ratio
# to IORING_OP_NOP at the same batch.
#   gnuplot -e "csv='in.csv'; png='out.png'; term='pngcairo'" cmd_roundtrip.gp
if (!exists("csv")) csv = 'bench/results/cmd_roundtrip.csv'
if (!exists("png")) png = 'bench/results/cmd_roundtrip.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''

if (term eq 'pngcairo') {
	set terminal pngcairo size 2000,600 font 'sans,10'
} else {
	set terminal png size 2000,600
}
set output png
set termoption noenhanced
set datafile separator ','

label(m, b) = sprintf("%s x%d", m, b)

set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set xtics nomirror rotate by -35
set bmargin 8
set key off
set offsets 0, 0, graph 0.08, 0
set multiplot layout 1,3 title 'dfg command round trip'.(subtitle eq '' ? '' : "\n".subtitle)

set title 'ns per operation (median of repetitions)'
set ylabel 'ns/op'
set logscale y
plot csv skip 1 using 0:3:xtic(label(strcol(1), $2)) with boxes lc rgb '#4472c4', \
     '' skip 1 using 0:3:(sprintf("%.0f", $3)) with labels offset 0,0.7

# Log scale: a wait woken by a peer costs thousands of NOPs.
set title 'ratio to getppid() (the syscall floor)'
set ylabel 'x getppid'
plot csv skip 1 using 0:4:xtic(label(strcol(1), $2)) with boxes lc rgb '#ed7d31', \
     '' skip 1 using 0:4:(sprintf("%.2f", $4)) with labels offset 0,0.7

set title 'ratio to IORING_OP_NOP at the same batch (the io_uring floor)'
set ylabel 'x IORING_OP_NOP'
plot csv skip 1 using 0:6:xtic(label(strcol(1), $2)) with boxes lc rgb '#70ad47', \
     '' skip 1 using 0:6:(sprintf("%.2f", $6)) with labels offset 0,0.7

unset multiplot
