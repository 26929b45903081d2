# SPDX-License-Identifier: GPL-2.0
# Plots hub_summary.csv (tools/bench/hub.sh): per graph and configuration,
# the median over rounds of each round's latency ratio to no replication
# over the same transport (bars; < 1: faster), the rounds' range (error
# bars), and the patent's reported ratio (1 - its reduction; points).
#   gnuplot -e "csv='hub_summary.csv'; png='hub.png'; term='pngcairo'" hub.gp
if (!exists("csv")) csv = 'bench/results/hub_summary.csv'
if (!exists("png")) png = 'bench/results/hub.png'
if (!exists("term")) term = 'pngcairo'
if (!exists("subtitle")) subtitle = ''

if (term eq 'pngcairo') {
	set terminal pngcairo size 1200,700 font 'sans,10'
} else {
	set terminal png size 1200,700
}
set output png
set termoption noenhanced
set datafile separator ','
set title 'hub benchmark: mini-batch latency / no replication (median of per-round ratios)'.(subtitle eq '' ? '' : "\n".subtitle)
set ylabel 'latency ratio to norep, same transport (< 1: faster)'
set yrange [0:*]
set offsets 0.5, 0.5, 0.15, 0
set grid ytics
set key top right
set style fill solid 0.5 border -1
set boxwidth 0.6
set xtics rotate by -40 font ',9'
set bars small
# columns: 1 graph, 2 transport, 3 config, 7..9 ratio to norep (median,
# min, max), 11 the patent's reduction in percent (empty: none)
lab(a, b, c) = sprintf('%s %s/%s', a, c, b)
plot csv every ::1 using 0:7:xtic(lab(strcol(1), strcol(2), strcol(3))) \
		with boxes title 'dfg / norep (kv: user-space TCP / norep)', \
	'' every ::1 using 0:7:8:9 with yerrorbars lc black pt 0 \
		title 'range over rounds', \
	'' every ::1 using 0:(strcol(11) eq '' ? NaN : 1 + $11 / 100) \
		with points pt 7 ps 1.4 lc rgb 'red' \
		title 'patent (1 - reported reduction)'
