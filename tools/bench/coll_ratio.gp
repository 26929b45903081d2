# SPDX-License-Identifier: GPL-2.0
# Plots coll_ratio.csv: dfg's collectives against Open MPI's, speedup
# (MPI latency / dfg latency, = bus bandwidth ratio) per size, one panel
# per collective, one line per team size.
#   gnuplot -e "csv='in.csv'; png='out.png'; term='pngcairo'" coll_ratio.gp
if (!exists("csv")) csv = 'bench/results/coll_ratio.csv'
if (!exists("png")) png = 'bench/results/coll_ratio.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''
if (!exists("ycol")) ycol = 8
if (!exists("what")) what = 'dfg vs Open MPI: speedup (MPI latency / dfg latency; > 1 is dfg faster)'

if (term eq 'pngcairo') {
	set terminal pngcairo size 1400,900 font 'sans,10'
} else {
	set terminal png size 1400,900
}
set output png
set termoption noenhanced
set datafile separator ','
set logscale x 2
set logscale y 2
set grid
set key top left
set xlabel 'bytes per rank'
set format x '%.0s%cB'
set multiplot layout 2,2 title what.(subtitle eq '' ? '' : "\n".subtitle)
sel(c, n) = (strcol(1) eq c && $2 == n) ? $3 : NaN
do for [c in 'allreduce reduce_scatter alltoall alltoallv'] {
	set title c
	plot for [n in '2 4 8'] csv skip 1 using (sel(c, n + 0)):(column(ycol)) with linespoints title c.' N='.n, \
	     1 with lines dt 2 lc rgb '#7f7f7f' notitle
}
unset multiplot
