#!/usr/bin/env bash
# make bench: snowid against the alternatives, side by side, in one run, on
# every PostgreSQL major asked for.
#
#   BENCH_MAJORS="15 18"  the majors to measure (default: 15, plus 18 when
#                         it is installed); one that is not found is an
#                         error
#   PG_CONFIG_15=...      where a major is (default: Debian's package in
#   PG_CONFIG_18=...      /usr/lib/postgresql/M, else scripts/build_pg.sh's
#                         /opt/snowid-pg/M); the extension is installed
#                         there
#   PG_CONFIG=...         without BENCH_MAJORS: measure that one only
#   BENCH_QUICK=1         a short trial run (fewer repetitions, smaller
#                         loads): its report says so, it goes to
#                         bench/results/quick/ and README.md is left alone
#
# Installs what it needs (gnuplot-nox, valgrind; pgbench comes with
# PostgreSQL), then runs bench/major.sh once per major, one after the
# other: the same measurements, each against its own throwaway servers, as
# ratios to the baseline of the same major's run; on 18 the server's
# native uuidv7() is one more candidate.  Writes bench/results/REPORT.md
# (every major), bench-M.png, raw-M.csv and sessions-M.csv per major, and
# refreshes the Performance section of README.md.  About 8 to 10 minutes
# per major on 2 cores; no test depends on it.
set -euo pipefail
explicit_pg_config=${PG_CONFIG:-}
source "$(dirname "$0")/../scripts/common.sh"

BENCH=$SNOWID_ROOT/bench
RESULTS=$BENCH/results
quick=${BENCH_QUICK:-0}
[ "$quick" = 1 ] && RESULTS=$BENCH/results/quick

if [ -n "${BENCH_MAJORS:-}" ]; then
	majors=$BENCH_MAJORS
elif [ -n "$explicit_pg_config" ]; then
	majors=$("$explicit_pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	printf -v "PG_CONFIG_$majors" '%s' "$explicit_pg_config"
else
	majors=15
	[ -n "$(major_pg_config 18)" ] && majors="15 18"
fi
configs=()
for major in $majors; do
	config=$(major_pg_config "$major")
	[ -n "$config" ] && [ -x "$config" ] ||
		die "PostgreSQL $major not found: set PG_CONFIG_$major, or install Debian's postgresql-server-dev-$major, or run scripts/build_pg.sh $major"
	configs+=("$config")
done

ensure_packages gnuplot-nox valgrind
load_before=$(cut -d ' ' -f 1-3 /proc/loadavg)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
machine="$(nproc) cores, $cpu, $(($(awk '/MemTotal/ { print $2 }' /proc/meminfo) / 1024 / 1024)) GiB, Linux $(uname -r)"
out=$(mktemp -d "${TMPDIR:-/tmp}/snowid-bench-out.XXXXXX")
trap 'rm -rf "$out"' EXIT

i=0
for major in $majors; do
	PG_CONFIG=${configs[$i]} bash "$BENCH/major.sh" "$out"
	i=$((i + 1))
done

log "writing $RESULTS/REPORT.md"
{
	echo '# snowid benchmark'
	echo
	if [ "$quick" = 1 ]; then
		echo '**A short trial run (BENCH_QUICK=1): fewer repetitions and smaller loads; not the figures to quote.**'
		echo
	fi
	echo "Made by \`make bench\` (bench/run.sh) on $when, in $SECONDS s, on $machine" \
		"(load average before the run: $load_before, after it: $(cut -d ' ' -f 1-3 /proc/loadavg))." \
		"One part per PostgreSQL major ($majors), each measured against its own servers, one major after the other;" \
		"ratios compare figures of the same major's run only."
	for major in $majors; do
		echo
		cat "$out/report-$major.md"
	done
} >"$out/REPORT.md"
mkdir -p "$RESULTS"
# Figures of an earlier run that this one does not replace would mislead.
rm -f "$RESULTS"/REPORT.md "$RESULTS"/*.png "$RESULTS"/*.csv
cp "$out/REPORT.md" "$out"/bench-*.png "$out"/raw-*.csv "$out"/sessions-*.csv "$RESULTS"/

# A full run also refreshes the Performance section of README.md (between
# its bench:begin and bench:end markers).
readme=$SNOWID_ROOT/README.md
if [ "$quick" != 1 ] && grep -q '^<!-- bench:begin -->$' "$readme"; then
	{
		echo '<!-- bench:begin -->'
		echo "Latest run: $when, $SECONDS s, on $machine (load average before the run: $load_before)."
		echo "Full report: [bench/results/REPORT.md](bench/results/REPORT.md)."
		for major in $majors; do
			echo
			echo "### PostgreSQL $major"
			cat "$out/summary-$major.md"
			echo
			echo "![snowid benchmark, PostgreSQL $major](bench/results/bench-$major.png)"
		done
		echo '<!-- bench:end -->'
	} >"$out/readme-block.md"
	perl -0pi -e 'BEGIN { local $/; open(my $f, "<", shift @ARGV) or die; $block = <$f>; }
		s/^<!-- bench:begin -->\n.*?^<!-- bench:end -->\n/$block/ms' "$out/readme-block.md" "$readme"
	log "README.md: Performance section updated"
fi
log "done in ${SECONDS}s: $RESULTS/REPORT.md"
