#!/usr/bin/env bash
# make bench-coordinator: what one coordinator carries, against whatever
# snowid_coordinator this tree installs.
#
# Starts a throwaway coordinator on loopback: a primary with a synchronous
# streaming standby (synchronous_standby_names, synchronous_commit = on),
# each coordinator database with CREATE EXTENSION snowid_coordinator and
# initialize() for a 30 s lease (the pool filled at 1.0, then updated: see
# coordinator_db).  pgbench (PostgreSQL's own) plays the
# nodes, with the statements the lease keeper sends (src/lease_client.c),
# over TCP on 127.0.0.1, on the same 2 cores as the coordinator:
#
# 1. Grant cost against pool size: pools of 1,024 (worker_bits 10) and
#    65,536 worker ids (worker_bits 16), 99% held, every grant to a node
#    that never held one; batches alternate between the two pools and the
#    batch's grants are released again (not timed) before the next.
# 2. For N = 1,000, 10,000 and 60,000 nodes, in a pool that holds N
#    (worker_bits 10, 14, 16):
#    a. renewals at the rate N nodes need (the keeper renews every third
#       of the lease: N / 10 s), Poisson arrivals (pgbench --rate) from
#       BENCH_CLIENTS connections, for RENEW_SECONDS; a renewal more than a
#       fifth of the lease late is dropped (--latency-limit), since the
#       keeper gives up a call after lease / 5; the coordinator's CPU
#       (every process of its postmaster, from /proc) over the interval;
#    b. the thundering herd: every node shuts down cleanly (releases), then
#       all N start at once and ask for a grant from BENCH_CLIENTS
#       connections, as fast as the coordinator takes them, for at most
#       HERD_SECONDS.
#
# Writes bench/results/coordinator/REPORT.md and runs.csv, and a full run
# refreshes the coordinator section of README.md (between its
# bench-coordinator:begin and :end markers).  Every figure is also given
# as a ratio: to the demand, to the lease, or to the other pool of the
# same run.  4 to 7 minutes on 2 cores.  BENCH_QUICK=1: N = 1,000 only,
# short phases.  A quick run, or any run with BENCH_NODES, BENCH_CLIENTS,
# RENEW_SECONDS or HERD_SECONDS set, writes to bench/results/coordinator/
# trial/ and leaves README.md alone.  No test depends on it.
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

# It installs the extension into the PostgreSQL that PG_CONFIG names and
# runs from there: hold the lock make test holds for that installation
# (scripts/test.sh), so that neither changes the other's files mid-run.
if [ -z "${SNOWID_TEST_LOCKED:-}" ] && command -v flock >/dev/null; then
	lock=${TMPDIR:-/tmp}/snowid-test.$(echo "$PG_CONFIG" | cksum | cut -d' ' -f1).lock
	export SNOWID_TEST_LOCKED=1
	exec flock -o "$lock" bash "$0" "$@"
fi

BENCH=$SNOWID_ROOT/bench/coordinator
standard=1
[ -n "${BENCH_NODES:-}${BENCH_CLIENTS:-}${RENEW_SECONDS:-}${HERD_SECONDS:-}" ] && standard=0
RESULTS=$SNOWID_ROOT/bench/results/coordinator
LEASE_MS=30000
CLIENTS=${BENCH_CLIENTS:-16}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	QUICK=1
	NODES=${BENCH_NODES:-1000}
	RENEW_SECONDS=${RENEW_SECONDS:-10}
	HERD_SECONDS=${HERD_SECONDS:-20}
	GRANT_BATCHES=3
else
	QUICK=0
	NODES=${BENCH_NODES:-1000 10000 60000}
	RENEW_SECONDS=${RENEW_SECONDS:-45}
	HERD_SECONDS=${HERD_SECONDS:-120}
	GRANT_BATCHES=12
fi
GRANT_BATCH_SIZE=5			# the 1,024-id pool has 10 free ids at 99% held
EPOCH_MS=1735689600000		# initialize()'s default epoch, 2025-01-01 UTC
# Only a standard full run replaces the results kept in the tree.
[ "$QUICK" = 1 ] || [ "$standard" = 0 ] && RESULTS=$RESULTS/trial

ensure_packages postgresql-15
build_and_install
command -v pgbench >/dev/null || die "pgbench not found in $PG_BINDIR"

load_before=$(cut -d ' ' -f 1-3 /proc/loadavg)
when=$(date -u '+%Y-%m-%d %H:%M UTC')
work=$(server_user_tmpdir coordbench)
cp "$BENCH"/*.sql "$work"/
chmod 644 "$work"/*.sql
pport=$(free_port)
sport=$(free_port)
cleanup() {
	stop_servers "$work" standby primary
	rm -rf "$work"
}
trap cleanup EXIT

# psql against the primary, as the server user: sql DATABASE ARGS...
sql() {
	local db=$1
	shift
	as_server_user psql -X -q -h "$work" -p "$pport" -U postgres -d "$db" \
		-v ON_ERROR_STOP=1 "$@"
}
val() { sql "$1" -Atc "$2"; }

# CPU clock ticks (user + system) of a postmaster and every process it
# started: the live children's own, plus those of the children it has
# already reaped (its cutime and cstime), so that backends that exit
# inside the interval still count.
tree_ticks() {
	perl -e '
		my $pm = shift;
		my $sum = 0;
		opendir(my $d, "/proc") or die;
		for my $pid (grep { /^\d+$/ } readdir $d) {
			open(my $f, "<", "/proc/$pid/stat") or next;
			my $s = <$f>;
			$s =~ s/^.*\) //s;	# after the command name
			my @f = split / /, $s;	# $f[0] is field 3 (state)
			if ($pid == $pm) { $sum += $f[11] + $f[12] + $f[13] + $f[14]; }
			elsif ($f[1] == $pm) { $sum += $f[11] + $f[12]; }
		}
		print "$sum\n";' "$(head -1 "$work/$1/postmaster.pid")"
}
# The CPU of this shell's reaped children (pgbench, through runuser): read
# right before and after pgbench, so that nothing else ends in between.
own_child_ticks() { awk '{ sub(/^.*\) /, ""); print $14 + $15 }' "/proc/$$/stat"; }

log "primary on 127.0.0.1:$pport, synchronous standby on 127.0.0.1:$sport"
as_server_user initdb -D "$work/primary" -A trust -U postgres >/dev/null
cat >>"$work/primary/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $pport
unix_socket_directories = '$work'
cluster_name = 'coordinator'
max_connections = 100
synchronous_standby_names = 'standby'
synchronous_commit = on
CONF
as_server_user pg_ctl -D "$work/primary" -l "$work/primary.log" -w -t 120 start >/dev/null
as_server_user pg_basebackup -D "$work/standby" -h "$work" -p "$pport" -U postgres \
	-X stream -c fast >/dev/null
cat >>"$work/standby/postgresql.conf" <<CONF
port = $sport
cluster_name = 'standby'
primary_conninfo = 'host=$work port=$pport user=postgres application_name=standby'
CONF
as_server_user touch "$work/standby/standby.signal"
as_server_user pg_ctl -D "$work/standby" -l "$work/standby.log" -w -t 120 start >/dev/null
for i in $(seq 1 300); do
	[ "$(val postgres "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")" = sync ] && break
	[ "$i" -eq 300 ] && die "the standby is not synchronous after 60 s; see $work/standby.log"
	sleep 0.2
done
pgversion=$(val postgres "SELECT version()")

sql postgres -c "CREATE DATABASE bench_report"
sql bench_report -f "$work/analysis.sql"

# A coordinator database whose pool is filled: coordinator_db DB
# WORKER_BITS SEED_ARGS (those of bench.seed() in setup.sql).  The pool is
# filled while the extension is at 1.0, which is then updated to the
# current version: whatever a version keeps besides the lease rows (an
# index, a free list) is then built by its own update script, as on any
# upgraded coordinator, and the benchmark writes nothing but lease rows.
coordinator_db() {
	local db=$1 w=$2 seed=$3
	sql postgres -c "CREATE DATABASE $db"
	sql "$db" -c "CREATE EXTENSION snowid_coordinator VERSION '1.0'" \
		-c "SELECT snowid_coordinator.initialize(worker_bits => $w, sequence_bits => $((22 - w)),
				lease_time => '$((LEASE_MS / 1000)) seconds')" \
		-f "$work/setup.sql" -c "SELECT bench.seed($seed)" \
		-c "ALTER EXTENSION snowid_coordinator UPDATE" \
		-c "SELECT bench.unfence()" -c "ANALYZE" -c CHECKPOINT >/dev/null
}

# pgbench against the primary over TCP, as the server user, one line per
# transaction in $work/log.PHASE.*: run_pgbench DB PHASE ARGS...
run_pgbench() {
	local db=$1 phase=$2
	shift 2
	(cd "$work" && as_server_user pgbench -n -M extended -h 127.0.0.1 -p "$pport" -U postgres \
		--log --log-prefix="$work/log.$phase" "$@" "$db") >"$work/pgbench.$phase.out" 2>&1 ||
		die "pgbench ($phase) failed: $(tail -5 "$work/pgbench.$phase.out")"
}

# Load a phase's logs into bench_report.
load_log() {
	local phase=$1
	cat "$work/log.$phase".* | sed "s/^/$phase /" |
		sql bench_report -c "COPY pgbench_line (line) FROM STDIN" -c "SELECT parse_lines()" >/dev/null
	rm -f "$work/log.$phase".*
}

# Die if the coordinator logged what a correct run never causes.
check_events() {
	local db=$1 since=$2 bad
	bad=$(val "$db" "SELECT string_agg(format('%s x%s (%s)', event, n, detail), '; ') FROM bench.bad_events('$since')")
	[ -z "$bad" ] || die "$db: unexpected lease events: $bad"
}

layout_vars() { echo "-D ts_bits=41 -D w_bits=$1 -D s_bits=$((22 - $1)) -D epoch_ms=$EPOCH_MS"; }

#
# 1. Grant cost: 1,024 against 65,536 worker ids, 99% held.
#
log "1. grant cost with 99% of the pool held: 1,024 vs 65,536 ids ($GRANT_BATCHES batches of $GRANT_BATCH_SIZE each)"
for w in 10 16; do
	coordinator_db "pool$w" "$w" "$((1 << w)), 100, '1 day'"
done
coordinator_version=$(val pool10 "SELECT extversion FROM pg_extension WHERE extname = 'snowid_coordinator'")
for b in $(seq 1 "$GRANT_BATCHES"); do
	for w in 10 16; do
		held=$(val "pool$w" "SELECT count(*) FROM snowid_coordinator.leases WHERE owner IS NOT NULL")
		sql bench_report -c "INSERT INTO grant_batch VALUES ($((1 << w)), $b, 'grant$w.$b', $held)"
		# shellcheck disable=SC2046
		run_pgbench "pool$w" "grant$w.$b" -c 1 -t "$GRANT_BATCH_SIZE" $(layout_vars "$w") -f "$work/grant.sql"
		load_log "grant$w.$b"
		[ "$(val "pool$w" "SELECT bench.release_all('joiner-%')")" -eq "$GRANT_BATCH_SIZE" ] ||
			die "pool$w: batch $b did not grant $GRANT_BATCH_SIZE leases: $(tail -3 "$work/pgbench.grant$w.$b.out")"
	done
done

#
# 2. N nodes: renewals at their cadence, then the thundering herd.
#
for n in $NODES; do
	w=1
	while [ $((1 << w)) -lt "$n" ]; do w=$((w + 1)); done
	[ "$w" -lt 10 ] && w=10
	db=coord_$n
	rate=$(awk -v n="$n" -v l="$LEASE_MS" 'BEGIN { printf "%.3f", n / (l / 3 / 1000) }')
	log "2. $n nodes (worker_bits $w): renewals at $rate/s for ${RENEW_SECONDS}s from $CLIENTS connections"
	coordinator_db "$db" "$w" "$n, 0, '$((LEASE_MS / 1000)) seconds'"
	since=$(val "$db" "SELECT now()")
	c0=$(tree_ticks primary)
	s0=$(tree_ticks standby)
	p0=$(own_child_ticks)
	run_pgbench "$db" "renew$n" -c "$CLIENTS" -j 2 -T "$RENEW_SECONDS" -R "$rate" \
		-L $((LEASE_MS / 5)) -D nodes="$n" -f "$work/renew.sql"
	p1=$(own_child_ticks)
	c1=$(tree_ticks primary)
	s1=$(tree_ticks standby)
	check_events "$db" "$since"
	load_log "renew$n"

	log "   the herd: $n nodes restart at once (at most ${HERD_SECONDS}s)"
	released=$(val "$db" "SELECT bench.release_all('node-%')")
	[ "$released" -eq "$n" ] || die "$db: released $released leases, not $n"
	sql "$db" -c CHECKPOINT
	since=$(val "$db" "SELECT now()")
	deadline_ms=$(( $(date +%s%3N) + HERD_SECONDS * 1000 ))
	# shellcheck disable=SC2046
	run_pgbench "$db" "herd$n" -c "$CLIENTS" -j 2 -t $(( (n + CLIENTS - 1) / CLIENTS )) \
		-D k=0 -D clients="$CLIENTS" -D nodes="$n" -D deadline_ms="$deadline_ms" \
		$(layout_vars "$w") -f "$work/herd.sql"
	check_events "$db" "$since"
	granted=$(val "$db" "SELECT count(*) FROM snowid_coordinator.leases
		WHERE owner::text LIKE '00000002-%' AND acquired_at >= '$since'")
	[ "$granted" -gt 0 ] || die "$db: the herd got no grant: $(tail -3 "$work/pgbench.herd$n.out")"
	load_log "herd$n"
	sql bench_report -c "INSERT INTO run VALUES ($n, $w, $LEASE_MS, $CLIENTS, $RENEW_SECONDS,
		$((c1 - c0)), $((s1 - s0)), $((p1 - p0)), $HERD_SECONDS,
		to_timestamp($deadline_ms / 1000.0), $granted, $(getconf CLK_TCK))"
	sql postgres -c "DROP DATABASE $db"
done
load_after=$(cut -d ' ' -f 1-3 /proc/loadavg)

#
# The report.
#
machine="$(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)"
commit=$(git -C "$SNOWID_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
sql bench_report -At -v clk_tck="$(getconf CLK_TCK)" -v quick="$QUICK" -v when="$when" \
	-v machine="$machine" -v pgversion="$pgversion" -v commit="$commit" -v coordinator_version="$coordinator_version" \
	-v load_before="$load_before" -v load_after="$load_after" -v runtime="$SECONDS" \
	-v clients="$CLIENTS" -v batch="$GRANT_BATCH_SIZE" \
	-f "$work/report.sql" >"$work/REPORT.md"
sql bench_report -c "COPY (SELECT * FROM run_figures ORDER BY nodes) TO STDOUT (FORMAT csv, HEADER)" >"$work/runs.csv"
mkdir -p "$RESULTS"
cp "$work/REPORT.md" "$work/runs.csv" "$RESULTS"/
cat "$RESULTS/REPORT.md"

readme=$SNOWID_ROOT/README.md
if [ "$QUICK" = 0 ] && [ "$standard" = 1 ] && grep -q '^<!-- bench-coordinator:begin -->$' "$readme"; then
	{
		echo '<!-- bench-coordinator:begin -->'
		sed -n '/^<!-- summary:begin -->$/,/^<!-- summary:end -->$/p' "$work/REPORT.md" | sed '1d;$d'
		echo
		echo 'Full report: [bench/results/coordinator/REPORT.md](bench/results/coordinator/REPORT.md).'
		echo '<!-- bench-coordinator:end -->'
	} >"$work/readme-block.md"
	perl -0pi -e 'BEGIN { local $/; open(my $f, "<", shift @ARGV) or die; $block = <$f>; }
		s/^<!-- bench-coordinator:begin -->\n.*?^<!-- bench-coordinator:end -->\n/$block/ms' \
		"$work/readme-block.md" "$readme"
	log "README.md: coordinator section updated"
fi
log "done in ${SECONDS}s: $RESULTS/REPORT.md"
