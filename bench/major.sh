#!/usr/bin/env bash
# One PostgreSQL major's part of make bench (bench/run.sh runs it once per
# major, with PG_CONFIG naming the installation): snowid against the
# alternatives, side by side.
#
#   bash bench/major.sh OUTDIR
#
# Builds snowid and the bench-only no-op module (bench/noop) in a copy of
# the tree (so majors never share objects), installs both into the
# PostgreSQL that PG_CONFIG names, starts two throwaway servers on
# loopback and Unix sockets:
#
#   A  the default layout (41/10/12: 4,096 ids per ms), max_connections 100
#   B  an uncapped layout (worker_bits 4, sequence_bits 18: the cap never
#      binds), max_connections 300
#
# and measures every candidate interleaved and repeated (each repetition
# runs every candidate once, in a rotating order).  Every figure is also a
# ratio to the baseline measured in the same run.  On PostgreSQL 18 and
# later the server's native uuidv7() is one more candidate.  Writes, for
# major M, into OUTDIR: report-M.md (this major's part of REPORT.md),
# summary-M.md (its part of README's Performance section), bench-M.png,
# raw-M.csv and sessions-M.csv (every repetition).
#
# BENCH_QUICK=1 makes a short run (fewer repetitions, smaller loads) for
# trying the script out; its report says so.
set -euo pipefail
source "$(dirname "$0")/../scripts/common.sh"

out=${1:?usage: bench/major.sh OUTDIR}
BENCH=$SNOWID_ROOT/bench
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

# The extension goes into that installation: take the lock make test
# (scripts/test.sh) takes for it, so that neither swaps the library under
# the other's servers.
if [ -z "${SNOWID_TEST_LOCKED:-}" ] && command -v flock >/dev/null; then
	lock=${TMPDIR:-/tmp}/snowid-test.$(echo "$PG_CONFIG" | cksum | cut -d' ' -f1).lock
	export SNOWID_TEST_LOCKED=1
	exec flock -o "$lock" bash "$0" "$@"
fi

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	REPS=2 CG_CALLS=20000 PGB_SECONDS=1 PGB_REPS=1 LOAD_ROWS=200000 LOAD_REPS=1 CONC_IDS=1000000
else
	REPS=7 CG_CALLS=100000 PGB_SECONDS=2 PGB_REPS=5 LOAD_ROWS=2000000 LOAD_REPS=2 CONC_IDS=4000000
fi

load_before=$(cut -d ' ' -f 1-3 /proc/loadavg)
work=$(server_user_tmpdir "bench-pg$major")
port_a=$(free_port)
port_b=$(free_port)
valgrind_pid=
cleanup() {
	stop_servers "$work" a b
	[ -n "$valgrind_pid" ] && kill "$valgrind_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

log "PostgreSQL $major ($PG_CONFIG)"
tar -C "$SNOWID_ROOT" --exclude=.git --exclude='tmp_check*' --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' --exclude=results --exclude=node_modules --exclude=test/fuzz/build -cf - . |
	(mkdir "$work/src" && tar -C "$work/src" -xf -)
build_and_install "$work/src"
log "building the bench-only no-op module (bench/noop)"
make -C "$work/src/bench/noop" -s PG_CONFIG="$PG_CONFIG" >/dev/null
make -C "$work/src/bench/noop" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
cp "$BENCH"/*.sql "$work"/
chmod 644 "$work"/*.sql

# psql against server a or b, as the server user.
sql() {
	local port
	if [ "$1" = a ]; then port=$port_a; else port=$port_b; fi
	shift
	as_server_user psql -X -q -h "$work" -p "$port" -U postgres -d postgres \
		-v ON_ERROR_STOP=1 "$@"
}

# Wait (bounded) until a server's lease keeper holds a lease.
wait_active() {
	local name=$1 i state=
	for i in $(seq 1 600); do
		state=$(sql "$name" -Atc "SELECT state FROM snowid_status()" 2>/dev/null || true)
		[ "$state" = active ] && return 0
		sleep 0.2
	done
	die "server $name: snowid is not active after 120 s (state: ${state:-none}); see $work/$name.log"
}

# initdb, configure and start one server.
start_server() {
	local name=$1 port=$2
	shift 2
	as_server_user initdb -D "$work/$name" -A trust -U postgres >/dev/null
	{
		echo "listen_addresses = '127.0.0.1'"
		echo "port = $port"
		echo "unix_socket_directories = '$work'"
		echo "shared_preload_libraries = 'snowid'"
		# Keep the disk and the background out of the figures: WAL is
		# flushed by the WAL writer, no checkpoint or autovacuum runs
		# during the benchmark, and tuplestores stay in memory.
		echo "synchronous_commit = off"
		echo "max_wal_size = '8GB'"
		echo "checkpoint_timeout = '1h'"
		echo "autovacuum = off"
		echo "work_mem = '256MB'"
		printf '%s\n' "$@"
	} >>"$work/$name/postgresql.conf"
	as_server_user pg_ctl -D "$work/$name" -l "$work/$name.log" -w -t 120 start >/dev/null
}

log "starting server a (default layout) on 127.0.0.1:$port_a"
start_server a "$port_a" "shared_buffers = '1GB'" "max_connections = 100"
log "starting server b (uncapped layout) on 127.0.0.1:$port_b"
start_server b "$port_b" "snowid.worker_bits = 4" "snowid.sequence_bits = 18" \
	"max_connections = 300"
for name in a b; do
	(cd "$work" && sql "$name" -f setup.sql)
	wait_active "$name"
done
# PostgreSQL 18's native uuidv7() is a candidate where the server has it.
uuidv7=$(sql a -Atc "SELECT count(*) FROM pg_proc WHERE proname = 'uuidv7' AND pronargs = 0")

#
# 1 and 4. One session: every candidate in both query forms; snowid's
# id-timestamp span rate; snowid_generate(1000000) in both forms.
#
log "1. one session, every candidate, both query forms ($REPS repetitions)"
stream="SELECT count(g) FROM (SELECT %s AS g, generate_series(1, :N)) s"
from="SELECT count(g) FROM (SELECT %s AS g FROM generate_series(1, :N)) s"
add_job() {		# server section candidate n expression
	local server=$1 section=$2 cand=$3 n=$4 expr=$5 form
	for form in stream from; do
		[ "$section" = uncapped ] && [ "$form" = from ] && continue
		local q
		if [ "$form" = stream ]; then q=${stream//%s/$expr}; else q=${from//%s/$expr}; fi
		sql "$server" -c "INSERT INTO bench_job VALUES ('$section', '$cand', '$form', $n, \$q\$$q\$q\$)"
	done
}
add_job a single "nextval() CACHE 1" 500000 "nextval('bench_seq')"
add_job a single "nextval() CACHE 100" 1000000 "nextval('bench_seq_cache100')"
add_job a single "snowid_nextval()" 1000000 "snowid_nextval()"
add_job a single "gen_random_uuid()" 200000 "gen_random_uuid()"
[ "$uuidv7" = 1 ] && add_job a single "uuidv7()" 200000 "uuidv7()"
add_job a single "Instagram PL/pgSQL" 50000 "bench_insta_next_id()"
add_job a single "no-op C function" 1000000 "bench_noop()"
sql a -c "INSERT INTO bench_job VALUES
	('single', 'snowid_generate(n)', 'stream', 1000000, 'SELECT count(g) FROM (SELECT snowid_generate(:N) AS g) s'),
	('single', 'snowid_generate(n)', 'from', 1000000, 'SELECT count(g) FROM snowid_generate(:N) AS g')"
sql a -c "SELECT bench_jobs('single', $REPS)"

#
# 2. The generator's own cost, on the uncapped layout, net of the no-op.
#
log "2. generator's own cost on the uncapped layout ($REPS repetitions)"
add_job b uncapped "no-op C function" 2000000 "bench_noop()"
add_job b uncapped "no-op C function (regclass)" 2000000 "bench_noop('bench_seq'::regclass)"
add_job b uncapped "snowid_nextval()" 2000000 "snowid_nextval()"
add_job b uncapped "nextval() CACHE 1" 500000 "nextval('bench_seq')"
add_job b uncapped "nextval() CACHE 100" 2000000 "nextval('bench_seq_cache100')"
[ "$uuidv7" = 1 ] && add_job b uncapped "uuidv7()" 500000 "uuidv7()"
sql b -c "SELECT bench_jobs('uncapped', $REPS)"
sql b -c "COPY bench_raw TO STDOUT" | sql a -c "COPY bench_raw FROM STDIN"

#
# 7. Shared memory: the extension's allocation at two max_connections.
#
log "7. shared memory"
for name in a b; do
	sql "$name" -Atc "SELECT 'shmem', 'snowid', 'max_connections ' || current_setting('max_connections'),
			m, 1, v
		FROM pg_shmem_allocations,
			LATERAL (VALUES ('size', size), ('allocated_size', allocated_size),
							('max_connections', current_setting('max_connections')::bigint)) x(m, v)
		WHERE name = 'snowid'" |
		sql a -c "COPY bench_raw FROM STDIN (DELIMITER '|')"
done

#
# 3. Concurrent sessions on the default layout: combined ids/s of each
# candidate (baseline: nextval() at as many sessions), and for snowid the
# combined span rate, CAS retries and CPU per session while capped; then a
# duplicate check.
#
log "3. 1, 2 and 4 concurrent sessions ($REPS repetitions)"
# Start k sessions running the same query at the same moment; their rows
# go to file $4.  $3: whether to bracket with snowid ids (bench_session).
concurrent() {
	local k=$1 q=$2 bracket=$3 out=$4 start s pids=()
	start=$(awk -v t="$(date +%s.%N)" 'BEGIN { printf "%.3f", t + 0.8 }')
	for s in $(seq 1 "$k"); do
		sql a -Atc "SELECT * FROM bench_session(\$q\$$q\$q\$, $start, $bracket)" >"$out.$s" &
		pids+=($!)
	done
	for s in "${pids[@]}"; do wait "$s"; done
	cat "$out".* >"$out"
	rm -f "$out".*
}
stats() { sql a -Atc "SELECT cas_retries || ' ' || exhaustion_waits FROM snowid_stats"; }
# candidate|expression|ids per run (the slower ones make fewer: a rate)
conc_cands=("nextval() CACHE 1|nextval('bench_seq')|$((CONC_IDS / 2))"
	"snowid_nextval()|snowid_nextval()|$CONC_IDS")
[ "$uuidv7" = 1 ] && conc_cands+=("uuidv7()|uuidv7()|$((CONC_IDS / 4))")
for rep in $(seq 1 "$REPS"); do
	for i in 0 1 2; do
		k=$(((i + rep) % 3)); k=$((1 << k))
		for j in "${!conc_cands[@]}"; do
			IFS='|' read -r cand expr ids <<<"${conc_cands[$(((i + j + rep) % ${#conc_cands[@]}))]}"
			n=$((ids / k))
			snowid=false
			[ "$cand" = "snowid_nextval()" ] && snowid=true
			$snowid && read -r cas0 ex0 < <(stats)
			concurrent "$k" "SELECT count(g) FROM (SELECT $expr AS g, generate_series(1, $n)) s" "$snowid" "$work/conc"
			sed "s/^/$cand|$k|$rep|/" "$work/conc" |
				sql a -c "COPY bench_session_raw (candidate, sessions, rep, pid, n, first_id, last_id, started, secs, cpu_ticks) FROM STDIN (DELIMITER '|', NULL '')"
			sql a -c "INSERT INTO bench_raw SELECT 'concurrent', '$cand', '$k', 'ids_per_s', $rep,
					sum(n) / (max(started + secs) - min(started))
				FROM bench_session_raw WHERE candidate = '$cand' AND sessions = $k AND rep = $rep"
			if $snowid; then
				read -r cas1 ex1 < <(stats)
				sql a -c "INSERT INTO bench_raw VALUES
					('concurrent', 'snowid_nextval()', '$k', 'cas_retries', $rep, $((cas1 - cas0))),
					('concurrent', 'snowid_nextval()', '$k', 'exhaustion_waits', $rep, $((ex1 - ex0)))"
			fi
		done
	done
done
for k in 2 4; do
	sql a -c "TRUNCATE bench_dup"
	concurrent "$k" "WITH i AS (INSERT INTO bench_dup SELECT snowid_nextval() FROM generate_series(1, $((1000000 / k))) RETURNING 1) SELECT count(*) FROM i" true "$work/dup"
	sql a -c "INSERT INTO bench_raw SELECT 'concurrent', 'snowid_nextval()', '$k', m, 1, v
		FROM (SELECT count(*) AS ids, count(*) - count(DISTINCT id) AS dups FROM bench_dup) d,
			LATERAL (VALUES ('dup_checked_ids', ids), ('duplicates', dups)) x(m, v)"
done

#
# 5. Concurrent inserts with pgbench, key defaulting to each candidate.
#
log "5. pgbench inserts at 1, 2, 8 clients, ${PGB_SECONDS}s each ($PGB_REPS repetitions)"
cands=(bigserial identity snowid uuid instagram)
coldefs=("bigserial" "bigint GENERATED ALWAYS AS IDENTITY" "snowid DEFAULT snowid_nextval()"
	"uuid DEFAULT gen_random_uuid()" "bigint DEFAULT bench_insta_next_id()")
if [ "$uuidv7" = 1 ]; then
	cands+=(uuidv7)
	coldefs+=("uuid DEFAULT uuidv7()")
fi
for c in "${cands[@]}"; do
	echo "INSERT INTO pgb_$c DEFAULT VALUES;" >"$work/pgb_$c.sql"
done
chmod 644 "$work"/pgb_*.sql
for rep in $(seq 1 "$PGB_REPS"); do
	for clients in 1 2 8; do
		for i in "${!cands[@]}"; do
			c=${cands[$(((i + rep + clients) % ${#cands[@]}))]}
			sql a -c "TRUNCATE pgb_$c"
			tps=$(as_server_user pgbench -n -M prepared -h "$work" -p "$port_a" -U postgres \
				-c "$clients" -j "$((clients < 2 ? clients : 2))" -T "$PGB_SECONDS" \
				-f "$work/pgb_$c.sql" postgres 2>&1 |
				sed -n 's/^tps = \([0-9.]*\) .*without initial connection time.*/\1/p')
			[ -n "$tps" ] || die "pgbench for $c with $clients clients reported no tps"
			sql a -c "INSERT INTO bench_raw VALUES ('pgbench', '$c', '$clients', 'tps', $rep, $tps)"
		done
	done
done

#
# 6. Index locality: load the same number of rows with each default.
#
log "6. loading $LOAD_ROWS rows with each candidate's default ($LOAD_REPS repetitions)"
for rep in $(seq 1 "$LOAD_REPS"); do
	for i in "${!cands[@]}"; do
		j=$(((i + rep) % ${#cands[@]}))
		sql a -c "INSERT INTO bench_raw SELECT 'load', '${cands[$j]}', '', m, $rep, v
			FROM bench_load('${cands[$j]}', '${coldefs[$j]}', $LOAD_ROWS) l,
				LATERAL (VALUES ('secs', l.secs), ('index_bytes', l.index_bytes),
								('table_bytes', l.table_bytes)) x(m, v)"
		sql a -c "CHECKPOINT"
	done
done

#
# 2 (continued). Instructions per call with callgrind: server b again,
# under valgrind with instrumentation off everywhere but in the backend
# being measured (bench_callgrind() switches it on there).
#
log "2. instructions per call (callgrind, $CG_CALLS calls each)"
as_server_user pg_ctl -D "$work/b" -m fast -w -t 120 stop >/dev/null
as_server_user mkdir -p "$work/cg"
if [ "$(id -u)" -eq 0 ]; then
	runuser -u postgres -- valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
		--toggle-collect=snowid_nextval --toggle-collect=nextval_oid --toggle-collect=bench_noop --toggle-collect=uuidv7 \
		--callgrind-out-file="$work/cg/cg.%p" -q postgres -D "$work/b" >"$work/b-valgrind.log" 2>&1 &
else
	valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no \
		--toggle-collect=snowid_nextval --toggle-collect=nextval_oid --toggle-collect=bench_noop --toggle-collect=uuidv7 \
		--callgrind-out-file="$work/cg/cg.%p" -q postgres -D "$work/b" >"$work/b-valgrind.log" 2>&1 &
fi
valgrind_pid=$!
for i in $(seq 1 600); do
	pg_isready -q -h "$work" -p "$port_b" && break
	sleep 0.2
done
wait_active b
cg_exprs=("snowid_nextval()" "nextval('bench_seq')" "nextval('bench_seq_cache100')" "bench_noop()")
[ "$uuidv7" = 1 ] && cg_exprs+=("uuidv7()")
for expr in "${cg_exprs[@]}"; do
	case $expr in
	snowid*) cand="snowid_nextval()" ;;
	uuidv7*) cand="uuidv7()" ;;
	*cache100*) cand="nextval() CACHE 100" ;;
	nextval*) cand="nextval() CACHE 1" ;;
	*) cand="no-op C function" ;;
	esac
	pid=$(sql b -At <<SQL
SELECT count(g) FROM (SELECT $expr AS g, generate_series(1, 1000)) s \g /dev/null
SELECT bench_callgrind(true) \g /dev/null
SELECT count(g) FROM (SELECT $expr AS g, generate_series(1, $CG_CALLS)) s \g /dev/null
SELECT bench_callgrind(false) \g /dev/null
SELECT pg_backend_pid();
SQL
	)
	# The backend writes its profile when it exits.
	for i in $(seq 1 300); do
		grep -q '^totals:' "$work/cg/cg.$pid" 2>/dev/null && break
		sleep 0.2
	done
	ir=$(sed -n 's/^totals: *//p' "$work/cg/cg.$pid")
	[ -n "$ir" ] || die "no callgrind profile for $cand (backend $pid)"
	sql a -c "INSERT INTO bench_raw VALUES ('callgrind', '$cand', '', 'instructions_per_call', 1, $ir::float8 / $CG_CALLS)"
done
as_server_user pg_ctl -D "$work/b" -m fast -w -t 120 stop >/dev/null
wait "$valgrind_pid" || true
valgrind_pid=

#
# This major's part of the report, and its plot.
#
log "writing this major's report and plot"
(cd "$work" && sql a -At \
	-v pgversion="$(sql a -Atc 'SHOW server_version')" \
	-v runtime="$SECONDS" -v clk_tck="$(getconf CLK_TCK)" -v quick="${BENCH_QUICK:-0}" \
	-v load_rows="$LOAD_ROWS" -v pgb_seconds="$PGB_SECONDS" \
	-v load_before="$load_before" -v load_after="$(cut -d ' ' -f 1-3 /proc/loadavg)" \
	-f report.sql)
(cd "$work" && gnuplot -e "major = $major" "$BENCH/plot.gp") || die "gnuplot failed"
cat "$work/report-head.md" "$work/report-summary.md" "$work/report-details.md" >"$out/report-$major.md"
cp "$work/report-summary.md" "$out/summary-$major.md"
cp "$work/bench.png" "$out/bench-$major.png"
sql a -c "COPY (SELECT * FROM bench_raw ORDER BY section, candidate, form, metric, rep) TO STDOUT (FORMAT csv, HEADER)" >"$out/raw-$major.csv"
sql a -c "COPY (SELECT * FROM bench_session_raw ORDER BY candidate, sessions, rep, pid) TO STDOUT (FORMAT csv, HEADER)" >"$out/sessions-$major.csv"
log "PostgreSQL $major done in ${SECONDS}s"
