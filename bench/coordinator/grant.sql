-- bench/coordinator/grant.sql: one grant to a node that never held a
-- lease (a new token and a new name), the statement the lease keeper
-- sends (src/lease_client.c).  pgbench -D: ts_bits, w_bits, s_bits,
-- epoch_ms.
\set n random(1, 2000000000)
SELECT a.status, a.detail, a.worker_id, a.floor_ms, a.high_water_ms, a.lease_ms, a.coordinator_now_ms, a.max_clock_offset_ms FROM snowid_coordinator.lease_acquire_v2(gen_random_uuid(), 'joiner-' || :n, :ts_bits::int4, :w_bits::int4, 0::int4, :s_bits::int4, :epoch_ms::int8, NULL::int4, bench.clock_ms()) a;
