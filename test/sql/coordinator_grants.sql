--
-- The coordinator's grants in O(log n) of the pool (snowid_coordinator
-- 1.1): the preference order (the node's last worker id, then one never
-- used, then the free one with the lowest high-water mark), no worker id
-- lost when a node restores a lease above the never-used ones, and a
-- worker id outside the pool refused.
--
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(worker_bits => 4, single_server => true);
-- initialize() fences a remote coordinator; these tests start unfenced
UPDATE snowid_coordinator.settings SET fenced_until = NULL, fence_floor_ms = 0;

CREATE FUNCTION grant_to(p_token uuid, p_node text, OUT status text, OUT worker_id int)
LANGUAGE sql AS $$
	SELECT a.status, a.worker_id
	  FROM snowid_coordinator.settings s,
		   snowid_coordinator.lease_acquire_v2(p_token, p_node, s.timestamp_bits,
				s.worker_bits, s.region_bits, s.sequence_bits, s.epoch_ms, 0,
				snowid_coordinator.now_ms()) a
$$;
CREATE FUNCTION tok(i int) RETURNS uuid
LANGUAGE sql IMMUTABLE AS $$ SELECT lpad(to_hex(i), 32, '0')::uuid $$;

-- never used ones first, lowest first
SELECT * FROM grant_to(tok(1), 'n1');
SELECT * FROM grant_to(tok(2), 'n2');

-- a node restores a lease the coordinator forgot, above the never-used
-- ids: the ids in between get rows, free and never used
SELECT status FROM snowid_coordinator.lease_renew_v2(tok(9), 9,
	snowid_coordinator.now_ms(), 0, true);
SELECT worker_id, node_name, high_water_ms = 0 AS mark_zero,
	   snowid_coordinator.lease_state(owner, expires_at, 5000) AS state
  FROM snowid_coordinator.leases ORDER BY worker_id;
-- (that renewal fenced the coordinator; lift it for the rest)
UPDATE snowid_coordinator.settings SET fenced_until = NULL;

-- a worker id outside the pool is nobody's: refused, no row, no fence
SELECT status, detail FROM snowid_coordinator.lease_renew_v2(tok(99), 16,
	snowid_coordinator.now_ms(), 0, true);
SELECT status, detail FROM snowid_coordinator.lease_renew_v2(tok(99), -1,
	snowid_coordinator.now_ms(), 0, true);
SELECT count(*) AS rows_outside FROM snowid_coordinator.leases WHERE worker_id >= 16;
SELECT fenced_until IS NULL AS not_fenced FROM snowid_coordinator.settings;

-- every worker id is granted once: 16 ids, 3 held, 13 more grants, then
-- none (the low-pool warnings' counts are up to a second old: not shown;
-- test/t/043_pool.pl checks the warning)
SET client_min_messages = error;
SELECT count(*) AS granted, count(DISTINCT g.worker_id) AS distinct_ids
  FROM generate_series(100, 112) i, grant_to(tok(i), 'm' || i) g
 WHERE g.status = 'granted';
SELECT status FROM grant_to(tok(200), 'late');
SELECT count(*) AS held FROM snowid_coordinator.worker_leases WHERE state = 'held';
SELECT total, held, cooling_down, free, low FROM snowid_coordinator.worker_pool;

-- a node name gets its last worker id back
SELECT snowid_coordinator.lease_release_v1(tok(2), 1, 0);
SELECT snowid_coordinator.lease_release_v1(tok(1), 0, 0);
SELECT * FROM grant_to(tok(3), 'n2');
-- then the free one with the lowest high-water mark, whatever its id
CREATE FUNCTION release(p_token uuid) RETURNS text
LANGUAGE sql AS $$
	SELECT snowid_coordinator.lease_release_v1(p_token, l.worker_id, 0)
	  FROM snowid_coordinator.leases l WHERE l.owner = p_token
$$;
SELECT release(tok(104)), release(tok(106));
UPDATE snowid_coordinator.leases SET high_water_ms = 3 WHERE node_name = 'm104';
UPDATE snowid_coordinator.leases SET high_water_ms = 7 WHERE node_name = 'm106';
SELECT worker_id, node_name, high_water_ms FROM snowid_coordinator.leases
 WHERE owner IS NULL ORDER BY worker_id;
SELECT * FROM grant_to(tok(4), 'new');
SELECT * FROM grant_to(tok(5), 'new2');
SELECT status FROM grant_to(tok(6), 'new3');
RESET client_min_messages;

DROP FUNCTION release(uuid);
DROP FUNCTION grant_to(uuid, text);
DROP FUNCTION tok(int);
DROP EXTENSION snowid_coordinator;
