#!/usr/bin/env bash
# The cluster demo: a coordinator and two nodes on loopback, each node
# leasing its worker id from the coordinator over libpq, both generating
# at once; then the ids of both are compared.  Stops everything it started.
set -euo pipefail
source "$(dirname "$0")/common.sh"

ensure_packages
build_and_install

dir=$(server_user_tmpdir cluster-demo)
servers=()
cleanup() {
	local s
	for s in "${servers[@]}"; do
		as_server_user pg_ctl -D "$dir/$s" -m fast stop >/dev/null 2>&1 || true
	done
	rm -rf "$dir"
}
trap cleanup EXIT

# start_server NAME PORT EXTRA_CONF
start_server() {
	as_server_user initdb -D "$dir/$1" -A trust -U postgres >/dev/null
	cat >>"$dir/$1/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $2
unix_socket_directories = '$dir'
cluster_name = '$1'
$3
CONF
	as_server_user pg_ctl -D "$dir/$1" -l "$dir/$1.log" -w start >/dev/null
	servers+=("$1")
}

sql() {
	local port=$1
	shift
	as_server_user psql -X -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

cport=$(free_port)
log "coordinator on 127.0.0.1:$cport"
start_server coordinator "$cport" ""
sql "$cport" <<'SQL'
CREATE EXTENSION snowid_coordinator;
-- Short leases for the demo; single_server because this demo has no
-- synchronous standby (a real coordinator should have one).
SELECT snowid_coordinator.initialize(lease_time => '6s', safety_period => '2s',
                                     single_server => true);
CREATE ROLE snowid_node LOGIN;
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_acquire_v2,
	snowid_coordinator.lease_renew_v2, snowid_coordinator.lease_acquire_v1,
    snowid_coordinator.lease_renew_v1, snowid_coordinator.lease_release_v1 TO snowid_node;
SQL

ports=()
for n in node1 node2; do
	p=$(free_port)
	log "$n on 127.0.0.1:$p"
	start_server "$n" "$p" "shared_preload_libraries = 'snowid'
snowid.coordinator = 'host=127.0.0.1 port=$cport dbname=postgres user=snowid_node'
snowid.lease_time = '6s'
snowid.safety_period = '2s'"
	ports+=("$p")
	sql "$p" -c "CREATE EXTENSION snowid" \
		-c "CREATE TABLE orders (id snowid PRIMARY KEY DEFAULT snowid_nextval(), node text)"
done

log "a new coordinator grants nothing for a lease plus the safety period (8 s): waiting"
for p in "${ports[@]}"; do
	sql "$p" -c "DO \$\$ BEGIN FOR i IN 1..300 LOOP
		EXIT WHEN (SELECT state FROM snowid_status()) = 'active';
		PERFORM pg_sleep(0.1); END LOOP; END \$\$"
done

log "both nodes insert 10,000 orders at once (pgbench, 4 clients each)"
cat >"$dir/insert.sql" <<'SQL'
INSERT INTO orders (node) VALUES (current_setting('cluster_name'));
SQL
chmod 644 "$dir/insert.sql"
for p in "${ports[@]}"; do
	as_server_user pgbench -n -h "$dir" -p "$p" -U postgres -c 4 -j 2 -t 2500 \
		-f "$dir/insert.sql" postgres >/dev/null &
done
wait

for p in "${ports[@]}"; do
	sql "$p" -c "SELECT node_name, worker_id, state, coordinator FROM snowid_status()"
	sql "$p" -At -c "SELECT id FROM orders" >"$dir/ids.$p"
done
total=$(cat "$dir"/ids.* | wc -l)
distinct=$(sort -u "$dir"/ids.* | wc -l)
echo "ids from both nodes: $total, distinct: $distinct"

sql "${ports[0]}" -c "SELECT id, (snowid_decode(id)).* FROM orders ORDER BY id DESC LIMIT 2"
sql "${ports[1]}" -c "SELECT id, (snowid_decode(id)).* FROM orders ORDER BY id DESC LIMIT 2"

echo "== the coordinator's view of the worker id pool"
sql "$cport" -c "SELECT * FROM snowid_coordinator.worker_pool" \
	-c "SELECT worker_id, node_name, state, high_water FROM snowid_coordinator.worker_leases ORDER BY worker_id"

[ "$total" -eq "$distinct" ] || die "duplicate ids across nodes"
log "stopping the cluster"
