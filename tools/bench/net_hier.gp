# SPDX-License-Identifier: GPL-2.0
# Plots net_alt_summary.csv (tools/bench/net.sh; coll_vs_mpi -a, -O): at
# 2 ranks per node, the bus bandwidth of dfg's table choice (the
# hierarchy, hier) and of flat recursive halving (rhalving) measured in
# the same rounds, and the per-round ratio flat time / hier time (median,
# range): above 1 the hierarchy is faster; at 1 rank per node, the ratio
# time without patent 002's overlap (DFG_COLL_OVERLAP=0) / time with it.
#   gnuplot -e "csv='net_alt_summary.csv'; png='net_hier.png'; term='pngcairo'" net_hier.gp
if (!exists("csv")) csv = 'net_alt_summary.csv'
if (!exists("png")) png = 'net_hier.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''

if (term eq 'pngcairo') {
	set terminal pngcairo size 1650,600 font 'sans,10'
} else {
	set terminal png size 1650,600
}
set output png
set termoption noenhanced
set datafile separator ','
set grid
set key top left font ',9' opaque
set xlabel 'allreduce vector, bytes'
load system('dirname "'.ARG0.'"').'/units.gp'
# columns: 1 coll, 4 bytes, 8 dfg_algo, 9 alt_algo, 12-14 alt_over_dfg
# med/min/max, 15 dfg_busbw, 16 alt_busbw
sel(c) = strcol(1) eq 'allreduce' && strcol(9) eq c ? $4 : NaN
set multiplot layout 1,3 title "allreduce across 2 nodes: the hierarchy against flat recursive halving (2 ranks per node), the overlap against none (1 rank per node); same rounds".(subtitle eq '' ? '' : "\n".subtitle)
set logscale xy 2
eval size_xtics
set format y '%g'
set ylabel 'bus bandwidth, MB/s'
set title '2 ranks per node: bus bandwidth (median of the rounds)'
plot csv skip 1 using (sel('rhalving')):15 with linespoints lw 2 pt 7 ps 0.6 title 'table choice (hier)', \
     csv skip 1 using (sel('rhalving')):16 with linespoints lw 2 dt 2 pt 5 ps 0.6 title 'flat (rhalving)'
unset logscale y
set logscale x 2
set format y '%.2f'
set ylabel 'flat time / hier time (> 1: hier faster)'
set title '2 ranks per node: per-round ratio, median and range'
plot csv skip 1 using (sel('rhalving')):12:13:14 with yerrorlines lw 2 pt 7 ps 0.6 title 'rhalving / hier', \
     1 with lines lc rgb '#7f7f7f' notitle
set ylabel 'time without overlap / with (> 1: the overlap saves time)'
set title '1 rank per node: DFG_COLL_OVERLAP=0 / default, per round'
plot csv skip 1 using (sel('rhalving/nooverlap')):12:13:14 with yerrorlines lw 2 pt 7 ps 0.6 title 'no overlap / overlap', \
     1 with lines lc rgb '#7f7f7f' notitle
unset multiplot
