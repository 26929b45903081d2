# SPDX-License-Identifier: GPL-2.0
# Plots coll_summary.csv (tools/bench/coll_vs_mpi): dfg against Open MPI,
# MPI time / dfg time per round, median with the rounds' range as error
# bars, against size; one panel per collective, one series per N and MPI
# mode (N = 4, 8 oversubscribed), shifted a little sideways to stay apart.
#   gnuplot -e "csv='coll_summary.csv'; png='out.png'; term='pngcairo'; series='2:default 4:yield'" coll_ratio.gp
if (!exists("csv")) csv = 'bench/results/coll_summary.csv'
if (!exists("png")) png = 'bench/results/coll_ratio.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''

if (term eq 'pngcairo') {
	set terminal pngcairo size 1500,900 font 'sans,10'
} else {
	set terminal png size 1500,900
}
set output png
set termoption noenhanced
set datafile separator ','
set logscale xy 2
set grid
set key top left font ',9' opaque
set xlabel 'size, bytes'
set ylabel 'MPI time / dfg time (> 1: dfg faster)'
load system('dirname "'.ARG0.'"').'/units.gp'
eval size_xtics
set bars small
if (!exists("series")) series = '2:default 4:default 4:yield 8:default 8:yield'
# columns: 1 coll, 2 nprocs, 3 mpi_mode, 5 bytes, 12..14 ratio med, min, max
sel(c, s, i) = (strcol(1) eq c && sprintf('%d:%s', $2, strcol(3)) eq s) ? $5 * (1 + 0.08 * (i - 3)) : NaN
set multiplot layout 2,3 title "dfg vs Open MPI, same job, same buffers: MPI time / dfg time per round, median and range".(subtitle eq '' ? '' : "\n".subtitle)
colls = 'allreduce reduce_scatter allgather bcast alltoall'
do for [k = 1:words(colls)] {
	c = word(colls, k)
	set title word(colls, k)
	plot for [i = 1:words(series)] csv skip 1 using (sel(c, word(series, i), i)):12:13:14 with yerrorlines lw 1.5 pt 7 ps 0.6 title 'N='.word(series, i)[1:strstrt(word(series, i), ':') - 1].', MPI '.word(series, i)[strstrt(word(series, i), ':') + 1:], \
	     1 with lines dt 2 lw 2 lc rgb '#000000' notitle
}
unset multiplot
