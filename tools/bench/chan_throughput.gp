# SPDX-License-Identifier: GPL-2.0
# Plots chan_bench's throughput CSV: MB/s per method and size and its
# ratio to a pipe's (same size; higher is better).
#   gnuplot -e "csv='in.csv'; png='out.png'; term='pngcairo'" chan_throughput.gp
if (!exists("csv")) csv = 'bench/results/chan_throughput.csv'
if (!exists("png")) png = 'bench/results/chan_throughput.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''

if (term eq 'pngcairo') {
	set terminal pngcairo size 1400,600 font 'sans,10'
} else {
	set terminal png size 1400,600
}
set output png
set termoption noenhanced
set datafile separator ','

load system('dirname "'.ARG0.'"').'/units.gp'
label(m, s, md) = sprintf("%s %s", m, sz(s))
col(m) = m eq 'dfg' ? 0xc00000 : m eq 'dfg_park' ? 0xf4a0a0 : m eq 'pipe' ? 0x4472c4 : m eq 'unix' ? 0x70ad47 : m eq 'shmring' ? 0xed7d31 : 0x7f7f7f

set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set xtics nomirror rotate by -35
set bmargin 8
set key off
set offsets 0, 0, graph 0.08, 0
set multiplot layout 1,2 title 'dfg channels: streaming throughput (dfg red, dfg_park pink, pipe blue, unix green, shmring orange, cma grey)'.(subtitle eq '' ? '' : "\n".subtitle)

set title 'MB/s (median of repetitions)'
set ylabel 'MB/s'
set logscale y
plot csv skip 1 using 0:4:(col(strcol(1))):xtic(label(strcol(1), $2, strcol(3))) with boxes lc rgb variable, \
     '' skip 1 using 0:4:(sprintf("%.0f", $4)) with labels offset 0,0.7

unset logscale y
set title 'ratio to a pipe (same size; higher is better)'
set ylabel 'x pipe'
set yrange [0:*]
plot csv skip 1 using 0:6:(col(strcol(1))):xtic(label(strcol(1), $2, strcol(3))) with boxes lc rgb variable, \
     '' skip 1 using 0:6:(sprintf("%.2f", $6)) with labels offset 0,0.7, \
     5 with lines dt 2 lc rgb '#c00000' title 'target 5 (1 MiB)'

unset multiplot
