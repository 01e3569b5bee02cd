# bench.png from the data files bench/report.sql writes (run by
# bench/major.sh in its work directory, with -e "major = M"; it becomes
# bench/results/bench-M.png).  Every panel is a ratio to the baseline of
# the same run, except the generator's own cost.

set terminal pngcairo size 1400,1000 font "DejaVu Sans,10" noenhanced
set output 'bench.png'
set datafile separator "\t"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics rotate by -25 nomirror
if (!exists("major")) major = 0
set multiplot layout 2,2 title sprintf("snowid benchmark (make bench), PostgreSQL %d: ratios to the baseline of the same run", major) font ",13"

set title "1. One session: ids/s ÷ nextval() CACHE 1 (log scale)"
set logscale y
set yrange [0.02:20]
plot 'plot_single.dat' using 2:xtic(1) title 'streaming form' lc rgb '#3b6ea5', \
	'' using 3 title 'FROM generate_series form' lc rgb '#9dbbe0'
unset logscale y

set title "2. Own cost per call, net of a no-op C function (uncapped layout; labels: callgrind)"
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set ylabel "ns per call"
plot 'plot_cost.dat' using 2:xtic(1) notitle lc rgb '#3b6ea5', \
	'' using 0:2:(sprintf("%.0f instr.", $3)) with labels offset 0,1 notitle
unset ylabel
set offsets 0, 0, 0, 0

set title "5. pgbench INSERT ... DEFAULT VALUES: TPS ÷ bigserial"
set yrange [0:*]
plot 'plot_pgbench.dat' using 2:xtic(1) title '1 client' lc rgb '#3b6ea5', \
	'' using 3 title '2 clients' lc rgb '#7fa7d6', \
	'' using 4 title '8 clients' lc rgb '#c5d8ef'

set title "6. Primary key after the same load: ÷ bigserial"
set yrange [0:*]
plot 'plot_load.dat' using 2:xtic(1) title 'index size' lc rgb '#3b6ea5', \
	'' using 3 title 'load time' lc rgb '#e3a857'

unset multiplot
