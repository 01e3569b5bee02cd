-- Who may do what.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
CREATE EXTENSION IF NOT EXISTS snowid_coordinator;
CREATE ROLE snowid_plain;
CREATE ROLE snowid_monitor IN ROLE pg_monitor;
CREATE ROLE snowid_resetter;
GRANT EXECUTE ON FUNCTION snowid_stats_reset() TO snowid_resetter;
-- Even with the schema open to it, a plain role gets nothing inside.
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_plain;

-- Anyone may generate and decode.
SET ROLE snowid_plain;
SELECT snowid_nextval() IS NOT NULL AS generated;
SELECT snowid_worker(snowid_from_parts('2025-06-01', 3, 0));
-- but not see the node's status or statistics, reset them or confirm a takeover
SELECT state FROM snowid_status();
SELECT ids FROM snowid_stats;
SELECT snowid_stats_reset();
SELECT snowid_confirm_takeover();
-- nor touch the coordinator's tables or call its lease functions
SELECT * FROM snowid_coordinator.leases;
SELECT * FROM snowid_coordinator.settings;
SELECT * FROM snowid_coordinator.events;
SELECT * FROM snowid_coordinator.worker_leases;
UPDATE snowid_coordinator.leases SET owner = NULL;
SELECT * FROM snowid_coordinator.lease_acquire_v1(gen_random_uuid(), 'x', 41, 10, 0, 12, 1735689600000, NULL, 0);
SELECT * FROM snowid_coordinator.lease_renew_v1(gen_random_uuid(), 0, 0);
SELECT * FROM snowid_coordinator.lease_release_v1(gen_random_uuid(), 0, 0);
SELECT snowid_coordinator.confirm_identity_v1();
SELECT snowid_coordinator.initialize();
RESET ROLE;

-- pg_monitor members read status, statistics and the worker pool.
SET ROLE snowid_monitor;
SELECT state IS NOT NULL AS has_state FROM snowid_status();
SELECT ids >= 0 AS counted FROM snowid_stats;
SELECT count(*) >= 0 AS pool_readable FROM snowid_coordinator.worker_leases;
SELECT snowid_stats_reset();
RESET ROLE;

-- A role granted the reset may reset.
SET ROLE snowid_resetter;
SELECT snowid_stats_reset();
RESET ROLE;

DROP EXTENSION snowid_coordinator;
DROP SCHEMA snowid_coordinator;
REVOKE EXECUTE ON FUNCTION snowid_stats_reset() FROM snowid_resetter;
DROP ROLE snowid_plain, snowid_monitor, snowid_resetter;
