--
-- The coordinator's renewals as witnesses (snowid_coordinator 1.1): a
-- renewal delivered late (sent longer ago than its keeper waits for an
-- answer) is no witness, a timely one that finds another owner contests
-- the worker id and fences, and a later one on a contested worker id
-- keeps it from both without fencing again.
--
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(worker_bits => 2, single_server => true);
UPDATE snowid_coordinator.settings SET fenced_until = NULL, fence_floor_ms = 0;

CREATE FUNCTION tok(i int) RETURNS uuid
LANGUAGE sql IMMUTABLE AS $$ SELECT lpad(to_hex(i), 32, '0')::uuid $$;
-- a renewal of worker id w with token t, sent age_ms ago by the node's clock
CREATE FUNCTION renew(t int, w int, age_ms bigint, valid bool,
					  OUT status text, OUT detail text)
LANGUAGE sql AS $$
	SELECT r.status, regexp_replace(r.detail, '[0-9]+ ms ago', 'N ms ago')
	  FROM snowid_coordinator.lease_renew_v2(tok(t), w,
			snowid_coordinator.now_ms() - age_ms, 0, valid) r
$$;
CREATE VIEW pool AS
SELECT l.worker_id, l.node_name, l.owner = tok(1) AS owner_is_1,
	   snowid_coordinator.lease_state(l.owner, l.expires_at, 5000) AS state,
	   (SELECT fenced_until IS NOT NULL FROM snowid_coordinator.settings) AS fenced
  FROM snowid_coordinator.leases l;

SELECT a.status, a.worker_id
  FROM snowid_coordinator.settings s,
	   snowid_coordinator.lease_acquire_v2(tok(1), 'n1', s.timestamp_bits,
			s.worker_bits, s.region_bits, s.sequence_bits, s.epoch_ms, 0,
			snowid_coordinator.now_ms()) a;

-- the owner's own renewal, late or not, renews
SELECT * FROM renew(1, 0, 0, true);
SELECT * FROM renew(1, 0, 60000, true);

-- token 9 held worker id 0 before (so its node says "valid"), but its
-- renewal was sent a minute ago: delivered late, no witness
SELECT * FROM renew(9, 0, 60000, true);
-- and a late renewal of a lease this coordinator has no row for
SELECT * FROM renew(9, 3, 60000, true);
SELECT * FROM pool ORDER BY worker_id;

-- a timely one is a witness: the worker id is taken from both, fenced
SELECT * FROM renew(9, 0, 0, true);
SELECT * FROM pool ORDER BY worker_id;
UPDATE snowid_coordinator.settings SET fenced_until = NULL;

-- the other owner's next renewal: lost, kept from both, no new fence
SELECT * FROM renew(1, 0, 0, true);
SELECT * FROM pool ORDER BY worker_id;

-- not valid by the node's own clock: never a witness
SELECT * FROM renew(8, 1, 0, false);

SELECT event, detail FROM snowid_coordinator.events
 WHERE event IN ('renewal_refused', 'contested', 'fence', 'lease_restored')
 ORDER BY event_id;

DROP VIEW pool;
DROP FUNCTION renew(int, int, bigint, bool);
DROP FUNCTION tok(int);
DROP EXTENSION snowid_coordinator;
