# SPDX-License-Identifier: GPL-2.0
# Plots coll_summary.csv (tools/bench/coll_vs_mpi): bus bandwidth (nccl-tests'
# definition) against size for dfg and Open MPI at one team size n, one
# panel per collective, one pair of lines per MPI mode of the data, and
# memcpy's bandwidth measured in the same job: the physical limit.
#   gnuplot -e "csv='coll_summary.csv'; png='out.png'; term='pngcairo'; n=4; modes='default yield'" coll_busbw.gp
# colls: the panels (default all five); what: the title's team (default
# "N = n").
if (!exists("csv")) csv = 'bench/results/coll_summary.csv'
if (!exists("png")) png = 'bench/results/coll_busbw.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''
if (!exists("n")) n = 2
if (!exists("modes")) modes = 'default'
if (!exists("colls")) colls = 'allreduce reduce_scatter allgather bcast alltoall'
if (!exists("what")) what = sprintf("N = %d", n)

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
set xlabel 'size, bytes (nccl-tests: the vector, or a rank''s send or receive buffer)'
set ylabel 'bus bandwidth, MB/s'
load system('dirname "'.ARG0.'"').'/units.gp'
eval size_xtics
set format y '%.0f'
# columns: 1 coll, 2 nprocs, 3 mpi_mode, 5 bytes, 17 mpi_busbw, 18 dfg_busbw, 19 memcpy
sel(c, m) = (strcol(1) eq c && $2 == n && strcol(3) eq m) ? $5 : NaN
if (words(colls) > 3) {
	set multiplot layout 2,3 title sprintf("dfg vs Open MPI, %s: bus bandwidth (median of the rounds; higher is better)", what).(subtitle eq '' ? '' : "\n".subtitle)
} else {
	set multiplot layout 1,words(colls) title sprintf("dfg vs Open MPI, %s: bus bandwidth (median of the rounds; higher is better)", what).(subtitle eq '' ? '' : "\n".subtitle)
}
do for [k = 1:words(colls)] {
	c = word(colls, k)
	set title word(colls, k)
	plot for [m in modes] csv skip 1 using (sel(c, m)):18 with linespoints lw 2 pt 7 ps 0.6 title 'dfg (job with MPI '.m.')', \
	     for [m in modes] csv skip 1 using (sel(c, m)):17 with linespoints lw 2 dt 2 pt 5 ps 0.6 title 'Open MPI '.m, \
	     csv skip 1 using (sel(c, 'default')):19 with lines lw 1 lc rgb '#7f7f7f' title 'memcpy (same job)'
}
unset multiplot
