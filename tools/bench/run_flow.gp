# SPDX-License-Identifier: GPL-2.0
# dfg run, folded vs --no-fold vs a shell pipeline (tools/bench/run.sh,
# run_flow): throughput and context switches per element.
# csv columns: job,mode,elements,seconds,elem_per_s,ctxsw_per_elem,processes,startup_s
set terminal term size 1000,420
set output png
set datafile separator ","
set multiplot layout 1,2 title "dfg run: folded vs unfolded (".subtitle.")"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -20
set grid ytics
set title "throughput (elements/s)"
plot csv every ::1 using 5:xtic(stringcolumn(1)." ".stringcolumn(2)) notitle lc rgb "#3060a0"
set title "context switches per element"
set logscale y
plot csv every ::1 using ($6 > 0 ? $6 : 1e-6):xtic(stringcolumn(1)." ".stringcolumn(2)) notitle lc rgb "#a04030"
unset multiplot
