-- bench/coordinator/renew.sql: one renewal of a random simulated node, the
-- statement the lease keeper sends (src/lease_client.c), with the values a
-- node holding a valid lease sends.  pgbench -D: nodes.
\set id random(0, :nodes - 1)
SELECT r.status, r.detail, r.high_water_ms, r.lease_ms, r.coordinator_now_ms, r.max_clock_offset_ms FROM snowid_coordinator.lease_renew_v2(bench.token(1, :id), :id::int4, bench.clock_ms(), 0::int8, true, 0::int8, false) r;
