-- bench/coordinator/herd.sql: the thundering herd after a mass restart.
-- Client c's k-th grant (k from 1) is for node c + clients * (k - 1), with
-- the new token of its new start (generation 2) and the statement the
-- lease keeper sends (src/lease_client.c).  Node numbers of nodes or more,
-- and everything after deadline_ms (Unix ms), do nothing, so that pgbench
-- ends soon after the time limit.  pgbench -D: k=0, clients, nodes,
-- deadline_ms, ts_bits, w_bits, s_bits, epoch_ms.
\set k :k + 1
\set id :client_id + :clients * (:k - 1)
SELECT a.status, a.detail, a.worker_id, a.floor_ms, a.high_water_ms, a.lease_ms, a.coordinator_now_ms, a.max_clock_offset_ms FROM (SELECT :id::int4 AS id WHERE :id::int4 < :nodes::int4 AND clock_timestamp() < to_timestamp(:deadline_ms::float8 / 1000)) n, LATERAL snowid_coordinator.lease_acquire_v2(bench.token(2, n.id), 'node-' || n.id, :ts_bits::int4, :w_bits::int4, 0::int4, :s_bits::int4, :epoch_ms::int8, NULL::int4, bench.clock_ms()) a;
