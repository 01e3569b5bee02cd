#!/usr/bin/env bash
# The demo: a throwaway PostgreSQL node with snowid, a table keyed by
# snowid_nextval(), thousands of rows from concurrent sessions, the ids
# decoded, and what an operator sees.  Stops the server when done.
set -euo pipefail
source "$(dirname "$0")/common.sh"

ensure_packages
build_and_install

dir=$(server_user_tmpdir demo)
port=$(free_port)
cleanup() {
	as_server_user pg_ctl -D "$dir/data" -m fast stop >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT

log "starting a throwaway server on 127.0.0.1:$port"
as_server_user initdb -D "$dir/data" -A trust -U postgres >/dev/null
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
shared_preload_libraries = 'snowid'
CONF
as_server_user pg_ctl -D "$dir/data" -l "$dir/server.log" -w start >/dev/null

psql_demo() {
	as_server_user psql -X -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

psql_demo -q <<'SQL'
CREATE EXTENSION snowid;
-- The lease keeper takes a worker id lease right after start-up.
DO $$
BEGIN
	FOR i IN 1..300 LOOP
		EXIT WHEN (SELECT state FROM snowid_status()) = 'active';
		PERFORM pg_sleep(0.1);
	END LOOP;
END;
$$;
CREATE TABLE orders (
	id snowid PRIMARY KEY DEFAULT snowid_nextval(),
	customer text NOT NULL,
	amount numeric(10, 2) NOT NULL
);
SQL

log "8 concurrent sessions insert 10,000 orders (pgbench)"
cat >"$dir/insert.sql" <<'SQL'
INSERT INTO orders (customer, amount) VALUES ('customer ' || :client_id, random() * 100);
SQL
chmod 644 "$dir/insert.sql"
as_server_user pgbench -n -h "$dir" -p "$port" -U postgres -c 8 -j 2 -t 1250 \
	-f "$dir/insert.sql" postgres | grep -E "^(number of transactions actually processed|tps)"

psql_demo <<'SQL'
\echo
\echo '== every id is unique, and they increase with time'
SELECT count(*) AS orders, count(DISTINCT id) AS distinct_ids,
       min(id) AS first_id, max(id) AS last_id
  FROM orders;

\echo '== an id, taken apart'
SELECT id, (snowid_decode(id)).* FROM orders ORDER BY id DESC LIMIT 3;

\echo '== ids per millisecond (4096 at most per worker)'
SELECT snowid_timestamp(id) AS millisecond, count(*) AS ids
  FROM orders GROUP BY 1 ORDER BY 2 DESC LIMIT 3;

\echo '== in JSON an id is a string, so JavaScript keeps every digit'
SELECT json_build_object('id', id, 'customer', customer) AS json
  FROM orders ORDER BY id LIMIT 2;

\echo '== range scan by time: the last second of orders, through the primary key'
EXPLAIN (costs off)
SELECT count(*) FROM orders WHERE id >= snowid_from_time(now() - interval '1 second');

\echo '== build an id from parts, and a batch of ids at once'
SELECT snowid_from_parts('2026-01-01 00:00:00+00', 5, 42) AS from_parts,
       snowid_worker(snowid_from_parts('2026-01-01 00:00:00+00', 5, 42)) AS worker;
SELECT count(*) AS batch FROM snowid_generate(100000);

\echo '== what an operator sees'
\x on
SELECT * FROM snowid_status();
SELECT * FROM snowid_stats;
\x off
SELECT worker_id, node_name, state, expires_at FROM snowid_coordinator.worker_leases;
SQL

log "stopping the server"
