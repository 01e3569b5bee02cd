/* snowid_coordinator--1.0--1.1.sql: update from 1.0 to 1.1 */

\echo Use "ALTER EXTENSION snowid_coordinator UPDATE TO '1.1'" to load this file. \quit

/*
 * Version 1.1: lease protocol version 2, and a coordinator that notices
 * when its state went back in time (docs/design.md, "Hardening in 1.1").
 *
 * What changes:
 * - An incarnation that no dump carries (table incarnation): a
 *   coordinator restored in place from a dump, or dropped and created
 *   again, finds its settings recorded under another incarnation and
 *   fences (remote) or refuses (local mode) like after a restore.
 * - A remote coordinator also fences after every start of its server: a
 *   storage or VM snapshot that was reverted comes back with a restart.
 * - Nodes are witnesses: a protocol 2 renewal says what the node was last
 *   confirmed (its high-water mark) and whether its lease is still valid
 *   by its own monotonic clock.  A renewal that finds its lease forgotten
 *   or behind fences the coordinator and keeps the worker id held.
 * - One clock bound, the coordinator's max_clock_offset, returned with
 *   every grant and renewal; a declared node clock beyond now + bound is
 *   refused at grant and clamped at renewal.
 * - A grant is idempotent per token, so a keeper that timed out retries
 *   with the same token and gets the same lease, not a second one.
 * - Each grant's floor is stored; a release is clamped to [floor,
 *   high-water mark].
 * - Local mode forces only a local flush (synchronous_commit = local):
 *   its leases live in the node's own database, and the identity fence
 *   covers promoted copies.
 * - One rule for "this lease is free" (lease_state), used everywhere.
 * - A coordinator per region: initialize(regions => ...) records the
 *   regions it serves, and a grant for another region is refused
 *   (region_not_served), so that two regions' coordinators can never
 *   grant the same worker id.
 *
 * Every function without a pinned search_path (the inlinable SQL ones)
 * names everything with its schema.
 */

ALTER TABLE snowid_coordinator.settings
	ADD COLUMN incarnation uuid,
	ADD COLUMN postmaster_start timestamptz,
	ADD COLUMN regions int[];		/* the regions served; NULL: all */

ALTER TABLE snowid_coordinator.leases
	ADD COLUMN floor_ms bigint;

/*
 * A grant, and the pool view, at a cost that does not grow with the pool
 * (docs/design.md, "The coordinator's cost"): one index for each question
 * a grant asks.  Which lease does this token hold (owner)?  Which worker
 * id did this node name hold last (node_name)?  Which free worker id has
 * the lowest high-water mark (high_water_ms)?  Which leases are live
 * (expires_at: held or cooling down, for the counts)?
 */
CREATE INDEX leases_owner_idx ON snowid_coordinator.leases (owner);
CREATE INDEX leases_node_idx ON snowid_coordinator.leases (node_name, acquired_at);
CREATE INDEX leases_high_water_idx ON snowid_coordinator.leases (high_water_ms, worker_id);
CREATE INDEX leases_expires_idx ON snowid_coordinator.leases (expires_at);

/*
 * Grants take this table's lock, one at a time.  Renewals and releases
 * never take it (they lock their own row), so they go on while a storm of
 * grants after a mass restart waits here.
 */
CREATE TABLE snowid_coordinator.grant_lock ();
REVOKE ALL ON snowid_coordinator.grant_lock FROM PUBLIC;

/*
 * The last count of free worker ids per range (region), for the grant's
 * low-pool warning: counted at most once a second.  A cache, not
 * configuration: pg_dump does not carry it.
 */
CREATE TABLE snowid_coordinator.pool_checks (
	first_id	int PRIMARY KEY,
	free		int NOT NULL,
	checked_at	timestamptz NOT NULL
);
REVOKE ALL ON snowid_coordinator.pool_checks FROM PUBLIC;

/*
 * The worker ids of a range get their lease rows in order, the lowest
 * first, so that the one above the highest row is the lowest never used.
 * A lease that a node restores (lease_renew_v2) may land above that: the
 * ids in between get rows of their own, free and never used (high-water
 * mark 0), so that the order holds.  Fills [the highest row below
 * p_before, or p_first; p_before).
 */
CREATE FUNCTION snowid_coordinator.fill_never_used(p_first int, p_before int)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	INSERT INTO snowid_coordinator.leases
		(worker_id, owner, node_name, high_water_ms, expires_at, acquired_at)
	SELECT g, NULL, '(never used)', 0, '-infinity', '-infinity'
	  FROM generate_series(
			COALESCE((SELECT max(l.worker_id) + 1
						FROM snowid_coordinator.leases l
					   WHERE l.worker_id >= p_first AND l.worker_id < p_before),
					 p_first),
			p_before - 1) g
	ON CONFLICT (worker_id) DO NOTHING;
$$;

/* A 1.0 pool has no gaps (its grants took the lowest id first); make sure. */
INSERT INTO snowid_coordinator.leases
	(worker_id, owner, node_name, high_water_ms, expires_at, acquired_at)
SELECT g, NULL, '(never used)', 0, '-infinity', '-infinity'
  FROM (SELECT (l.worker_id >> (s.worker_bits - s.region_bits))
				   << (s.worker_bits - s.region_bits) AS first_id,
			   max(l.worker_id) AS top
		  FROM snowid_coordinator.leases l, snowid_coordinator.settings s
		 GROUP BY 1) r,
	   generate_series(r.first_id, r.top - 1) g
ON CONFLICT (worker_id) DO NOTHING;

/*
 * One random value per creation of the extension.  Not a configuration
 * table: pg_dump never carries its row, so a restore (which creates the
 * extension again before it loads the configuration tables) or a DROP and
 * CREATE EXTENSION gives a new value, which the restored settings row does
 * not match.
 */
CREATE TABLE snowid_coordinator.incarnation (
	singleton	bool PRIMARY KEY DEFAULT true CHECK (singleton),
	id			uuid NOT NULL,
	created_at	timestamptz NOT NULL DEFAULT pg_catalog.now()
);
INSERT INTO snowid_coordinator.incarnation (id)
	VALUES (pg_catalog.gen_random_uuid());
REVOKE ALL ON snowid_coordinator.incarnation FROM PUBLIC;

/* An installed 1.0 coordinator was not restored by its update: adopt. */
UPDATE snowid_coordinator.settings
   SET incarnation = (SELECT i.id FROM snowid_coordinator.incarnation i),
	   postmaster_start = pg_catalog.pg_postmaster_start_time();

/* A number of milliseconds as an interval. */
CREATE FUNCTION snowid_coordinator.ms(p_ms bigint)
RETURNS interval
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
	SELECT pg_catalog.make_interval(
		secs => p_ms::pg_catalog.float8 OPERATOR(pg_catalog./) 1000::pg_catalog.float8)
$$;

/*
 * The state of one lease row: held (its owner may be generating),
 * cooling_down (expired less than the safety period ago: its owner may
 * not have noticed yet), or free (no owner, or long expired: it may be
 * granted).  The one place this rule is written; inlined where it is used.
 */
CREATE FUNCTION snowid_coordinator.lease_state(p_owner uuid,
											   p_expires_at timestamptz,
											   p_safety_ms int)
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
	SELECT CASE
		WHEN p_owner IS NULL THEN 'free'
		WHEN p_expires_at OPERATOR(pg_catalog.>) pg_catalog.now() THEN 'held'
		WHEN p_expires_at OPERATOR(pg_catalog.+) snowid_coordinator.ms(p_safety_ms)
			 OPERATOR(pg_catalog.>=) pg_catalog.now() THEN 'cooling_down'
		ELSE 'free'
	END
$$;

/* The synchronous_commit a lease transaction needs (see the header). */
CREATE FUNCTION snowid_coordinator.require_durable_commit()
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT pg_catalog.set_config('synchronous_commit',
		CASE WHEN (SELECT s.local_mode FROM snowid_coordinator.settings s)
			 THEN 'local' ELSE 'on' END, true);
$$;

/*
 * Fence now, whatever the identity: no grant for a lease plus the safety
 * period, and every floor at least now plus lease, margin and the allowed
 * clock offset.  p_reason goes into the event.
 */
CREATE FUNCTION snowid_coordinator.fence_now(p_reason text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s snowid_coordinator.settings;
BEGIN
	SELECT * INTO s FROM snowid_coordinator.settings FOR UPDATE;
	UPDATE snowid_coordinator.settings
	   SET fenced_until = GREATEST(fenced_until,
								   now() + snowid_coordinator.ms(s.lease_ms + s.safety_ms)),
		   fence_floor_ms = GREATEST(fence_floor_ms,
									 snowid_coordinator.now_ms() + s.lease_ms +
									 s.margin_ms + s.max_clock_offset_ms);
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'fence', p_reason);
END;
$$;

/*
 * Record this server's identity, incarnation and start, and fence.  The
 * arguments are the identity the caller saw; a caller that finds it
 * recorded already (another one fenced first) does nothing.
 */
CREATE OR REPLACE FUNCTION snowid_coordinator.fence(p_system_identifier text, p_timeline int)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s snowid_coordinator.settings;
	inc uuid;
	reasons text[] := '{}';
BEGIN
	SELECT * INTO s FROM snowid_coordinator.settings FOR UPDATE;
	SELECT i.id INTO inc FROM snowid_coordinator.incarnation i;
	IF s.incarnation IS DISTINCT FROM inc THEN
		reasons := reasons || 'the extension was created again since the settings were recorded (restored from a dump, or dropped and created)'::text;
	END IF;
	IF NOT s.local_mode AND s.postmaster_start IS DISTINCT FROM pg_postmaster_start_time() THEN
		reasons := reasons || format('the server started at %s (restart, crash recovery or a reverted snapshot)',
									 pg_postmaster_start_time());
	END IF;
	/* last: 1.0 ended its event with the new identity */
	IF s.system_identifier IS DISTINCT FROM p_system_identifier
	   OR s.timeline IS DISTINCT FROM p_timeline THEN
		reasons := reasons || format('identity changed from system identifier %s, timeline %s to system identifier %s, timeline %s',
									 s.system_identifier, s.timeline,
									 p_system_identifier, p_timeline);
	END IF;
	IF cardinality(reasons) = 0 THEN
		RETURN;					/* another caller fenced first */
	END IF;
	UPDATE snowid_coordinator.settings
	   SET system_identifier = p_system_identifier,
		   timeline = p_timeline,
		   incarnation = inc,
		   postmaster_start = pg_postmaster_start_time();
	PERFORM snowid_coordinator.fence_now(array_to_string(reasons, '; '));
END;
$$;

/*
 * Compare this server with what the settings recorded: identity (system
 * identifier, timeline, base backup), incarnation, and for a remote
 * coordinator its start time.  Returns 'ok', or 'unfenced' in local mode
 * when anything changed (an operator must confirm that the old server is
 * gone).  A remote coordinator fences itself and returns 'ok'.
 */
CREATE OR REPLACE FUNCTION snowid_coordinator.check_identity()
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s snowid_coordinator.settings;
	ident record;
	inc uuid;
BEGIN
	/* Every call reads; only a change takes the row lock (in fence()). */
	SELECT * INTO s FROM snowid_coordinator.settings;
	SELECT * INTO ident FROM snowid_coordinator.current_identity();
	SELECT i.id INTO inc FROM snowid_coordinator.incarnation i;
	IF s.system_identifier = ident.system_identifier
	   AND s.timeline = ident.timeline
	   AND s.incarnation = inc
	   AND (s.local_mode OR s.postmaster_start = pg_postmaster_start_time()) THEN
		RETURN 'ok';
	END IF;
	IF s.local_mode THEN
		RETURN 'unfenced';
	END IF;
	PERFORM snowid_coordinator.fence(ident.system_identifier, ident.timeline);
	RETURN 'ok';
END;
$$;

/*
 * Refuse a list of regions to serve that the layout cannot have: for
 * initialize() and serve_regions().  NULL (every region) is valid.
 */
CREATE FUNCTION snowid_coordinator.check_regions(p_regions int[], p_region_bits int)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF p_regions IS NOT NULL AND p_region_bits = 0 THEN
		RAISE EXCEPTION 'invalid snowid regions'
			USING ERRCODE = '22023',
				  DETAIL = format('regions => %s: the layout has no region bits, so it has no regions to choose from.',
								  p_regions),
				  HINT = 'Leave regions out (NULL), or initialize with region_bits.';
	END IF;
	IF p_regions IS NOT NULL AND
	   (cardinality(p_regions) = 0
		OR array_position(p_regions, NULL) IS NOT NULL
		OR EXISTS (SELECT FROM unnest(p_regions) r
					WHERE r < 0 OR r >= (1 << p_region_bits))) THEN
		RAISE EXCEPTION 'invalid snowid regions'
			USING ERRCODE = '22023',
				  DETAIL = format('regions => %s: with %s region bits each region must be between 0 and %s, and at least one is needed.',
								  p_regions, p_region_bits, (1 << p_region_bits) - 1),
				  HINT = 'Leave regions out (NULL) for a coordinator that serves every region, or set region_bits.';
	END IF;
END;
$$;

/*
 * Create the settings row (see 1.0); now with the incarnation, the server
 * start, and the regions this coordinator serves (NULL: all of them).
 * 1.0's initialize() had no regions argument: it is replaced.
 */
DROP FUNCTION snowid_coordinator.initialize(int, int, int, timestamptz, interval,
											interval, interval, bool, bool, interval);
CREATE FUNCTION snowid_coordinator.initialize(
	worker_bits int DEFAULT 10,
	region_bits int DEFAULT 0,
	sequence_bits int DEFAULT 12,
	epoch timestamptz DEFAULT '2025-01-01 00:00:00+00',
	lease_time interval DEFAULT '30 seconds',
	safety_period interval DEFAULT '5 seconds',
	lease_margin interval DEFAULT '1 second',
	single_server bool DEFAULT false,
	local_mode bool DEFAULT false,
	max_clock_offset interval DEFAULT '1 second',
	regions int[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ident record;
BEGIN
	IF EXISTS (SELECT FROM snowid_coordinator.settings) THEN
		RAISE EXCEPTION 'snowid coordinator is already initialized'
			USING ERRCODE = '55000',
				  HINT = 'The layout of a cluster never changes once ids exist.';
	END IF;
	IF worker_bits NOT BETWEEN 1 AND 20 OR sequence_bits NOT BETWEEN 1 AND 22
	   OR region_bits NOT BETWEEN 0 AND worker_bits
	   OR 63 - worker_bits - sequence_bits < 38 THEN
		RAISE EXCEPTION 'invalid snowid layout'
			USING ERRCODE = '22023',
				  DETAIL = format('worker_bits=%s region_bits=%s sequence_bits=%s leaves %s timestamp bits; at least 38 are needed, with 1-20 worker bits, 1-22 sequence bits and region bits no more than worker bits.',
								  worker_bits, region_bits, sequence_bits,
								  63 - worker_bits - sequence_bits);
	END IF;
	IF epoch > now() OR epoch < '1970-01-01 00:00:00+00' THEN
		RAISE EXCEPTION 'invalid snowid epoch'
			USING ERRCODE = '22023',
				  DETAIL = 'The epoch must not be before 1970 or in the future.';
	END IF;
	IF lease_time < interval '3 seconds' OR safety_period < interval '0'
	   OR lease_margin < interval '0' OR max_clock_offset < interval '0' THEN
		RAISE EXCEPTION 'invalid snowid lease timing'
			USING ERRCODE = '22023',
				  DETAIL = 'The lease time must be at least 3 seconds; the safety period, margin and clock offset must not be negative.';
	END IF;
	PERFORM snowid_coordinator.check_regions(regions, region_bits);
	SELECT * INTO ident FROM snowid_coordinator.current_identity();
	INSERT INTO snowid_coordinator.settings
		(timestamp_bits, worker_bits, region_bits, sequence_bits, epoch_ms,
		 lease_ms, safety_ms, margin_ms, max_clock_offset_ms, local_mode,
		 single_server, system_identifier, timeline, incarnation,
		 postmaster_start, regions)
	VALUES (63 - worker_bits - sequence_bits, worker_bits, region_bits,
			sequence_bits, floor(extract(epoch FROM epoch) * 1000)::bigint,
			(extract(epoch FROM lease_time) * 1000)::int,
			(extract(epoch FROM safety_period) * 1000)::int,
			(extract(epoch FROM lease_margin) * 1000)::int,
			(extract(epoch FROM max_clock_offset) * 1000)::int,
			local_mode, single_server,
			ident.system_identifier, ident.timeline,
			(SELECT i.id FROM snowid_coordinator.incarnation i),
			pg_postmaster_start_time(),
			(SELECT array_agg(DISTINCT r ORDER BY r) FROM unnest(regions) r));
	/*
	 * A remote coordinator cannot tell a new cluster from one re-created
	 * after DROP EXTENSION, whose nodes may have issued ids: it starts
	 * fenced, like after a restore.
	 */
	IF NOT local_mode THEN
		UPDATE snowid_coordinator.settings st
		   SET fenced_until = now() + snowid_coordinator.ms(st.lease_ms + st.safety_ms),
			   fence_floor_ms = snowid_coordinator.now_ms() + st.lease_ms + st.margin_ms +
								st.max_clock_offset_ms;
	END IF;
	/* one row: let the planner know, for the views that join it */
	ANALYZE snowid_coordinator.settings;
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'initialize',
		format('layout %s/%s/%s (region %s), epoch %s, regions served: %s',
			   63 - worker_bits - sequence_bits, worker_bits, sequence_bits,
			   region_bits, epoch, COALESCE(regions::text, 'all')));
END;
$$;

/*
 * Choose a worker id for a grant among [p_first, p_last], by preference:
 * this node name's most recent worker id, then one never used (its row is
 * created), then the free one with the lowest high-water mark, so that
 * the floor most likely lies below the node's clock.  The caller holds
 * the lock that serialises grants.  No row: none is free.
 *
 * Each step is one index probe, whatever the pool's size.  The last walks
 * leases_high_water_idx from the lowest mark and stops at the first free
 * row: it passes over only the leases that are not free yet have a lower
 * mark: the ones cooling down, and held ones whose node's clock lags (a
 * held lease was renewed within one lease time, so its mark normally lies
 * above every long expired one's).
 */
CREATE FUNCTION snowid_coordinator.choose_worker(p_node_name text,
												 p_first int, p_last int,
												 p_safety_ms int,
												 OUT worker_id int,
												 OUT high_water_ms bigint)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	top int;
BEGIN
	SELECT l.worker_id, l.high_water_ms INTO worker_id, high_water_ms
	  FROM snowid_coordinator.leases l
	 WHERE l.node_name = p_node_name
	   AND l.worker_id BETWEEN p_first AND p_last
	   AND snowid_coordinator.lease_state(l.owner, l.expires_at, p_safety_ms) = 'free'
	 ORDER BY l.acquired_at DESC
	 LIMIT 1;
	IF FOUND THEN
		RETURN;
	END IF;

	/* never used: above the range's highest row (see fill_never_used) */
	SELECT max(l.worker_id) INTO top
	  FROM snowid_coordinator.leases l
	 WHERE l.worker_id BETWEEN p_first AND p_last;
	worker_id := COALESCE(top + 1, p_first);
	IF worker_id <= p_last THEN
		high_water_ms := 0;
		INSERT INTO snowid_coordinator.leases
			(worker_id, owner, node_name, high_water_ms, expires_at, acquired_at)
		VALUES (worker_id, NULL, p_node_name, 0, '-infinity', now())
		ON CONFLICT DO NOTHING;
		IF FOUND THEN
			RETURN;
		END IF;
	END IF;

	SELECT l.worker_id, l.high_water_ms INTO worker_id, high_water_ms
	  FROM snowid_coordinator.leases l
	 WHERE l.worker_id BETWEEN p_first AND p_last
	   AND snowid_coordinator.lease_state(l.owner, l.expires_at, p_safety_ms) = 'free'
	 ORDER BY l.high_water_ms, l.worker_id
	 LIMIT 1;
END;
$$;

/*
 * How many worker ids of [p_first, p_last] are free, after a grant, for
 * the low-pool warning; at a cost that does not grow with the pool.  The
 * never-used ids above the range's highest row are free: when
 * they are a tenth of the range or more, the pool is not low and nothing
 * is counted (NULL).  Else the live leases are counted (leases_expires_idx:
 * a lease that is not free has an owner and has not been expired longer
 * than the safety period, by lease_state()), at most once a second per
 * range; in between the last count answers.
 */
CREATE FUNCTION snowid_coordinator.pool_free(p_first int, p_last int,
											 p_safety_ms int)
RETURNS int
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	total int := p_last - p_first + 1;
	top int;
	live int;
	free_ids int;
BEGIN
	SELECT max(l.worker_id) INTO top
	  FROM snowid_coordinator.leases l
	 WHERE l.worker_id BETWEEN p_first AND p_last;
	IF (p_last - top) * 10 >= total THEN
		RETURN NULL;
	END IF;

	SELECT c.free INTO free_ids
	  FROM snowid_coordinator.pool_checks c
	 WHERE c.first_id = p_first
	   AND c.checked_at > now() - interval '1 second';
	IF FOUND THEN
		RETURN free_ids;
	END IF;

	SELECT count(*) INTO live
	  FROM snowid_coordinator.leases l
	 WHERE l.expires_at >= now() - snowid_coordinator.ms(p_safety_ms)
	   AND l.owner IS NOT NULL
	   AND l.worker_id BETWEEN p_first AND p_last
	   AND snowid_coordinator.lease_state(l.owner, l.expires_at, p_safety_ms) <> 'free';
	free_ids := total - live;
	INSERT INTO snowid_coordinator.pool_checks AS c (first_id, free, checked_at)
	VALUES (p_first, free_ids, now())
	ON CONFLICT (first_id) DO UPDATE
	   SET free = EXCLUDED.free, checked_at = EXCLUDED.checked_at;
	RETURN free_ids;
END;
$$;

/*
 * Grant a worker id lease to a node: lease protocol version 2.
 *
 * The checks come first (initialised, same layout, same identity, not
 * fenced, a synchronous standby, a valid region, a node clock no further
 * ahead than max_clock_offset).  Then, under the lock that serialises
 * grants: a token that already holds a lease gets that lease again (the
 * keeper retries with the same token until it has a definitive answer,
 * so a grant whose answer was lost never pins a second worker id); else a
 * free worker id is chosen and taken in one conditional statement.  The
 * floor returned, and stored with the lease, is the highest timestamp any
 * earlier owner could have used (its high-water mark, or the clamped last
 * used timestamp it released with), and at least the fence floor.  The
 * node never issues a timestamp at or below it.
 *
 * status: granted, not_initialized, layout_mismatch, unfenced, fenced,
 * no_sync_standby, region_not_served, clock_offset, no_free_worker.
 */
CREATE FUNCTION snowid_coordinator.lease_acquire_v2(
	p_token uuid,
	p_node_name text,
	p_timestamp_bits int, p_worker_bits int, p_region_bits int,
	p_sequence_bits int, p_epoch_ms bigint,
	p_region int,
	p_node_clock_ms bigint,
	OUT status text,
	OUT detail text,
	OUT worker_id int,
	OUT floor_ms bigint,
	OUT high_water_ms bigint,
	OUT lease_ms int,
	OUT coordinator_now_ms bigint,
	OUT max_clock_offset_ms int)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	s snowid_coordinator.settings;
	first_id int;
	last_id int;
	chosen record;
	retried record;
	free_ids int;
	region_text text;
BEGIN
	coordinator_now_ms := snowid_coordinator.now_ms();
	SELECT * INTO s FROM snowid_coordinator.settings;
	IF NOT FOUND THEN
		status := 'not_initialized';
		detail := 'Call snowid_coordinator.initialize() on the coordinator first.';
		RETURN;
	END IF;
	/* durable before it is reported: for this whole transaction */
	PERFORM snowid_coordinator.require_durable_commit();
	lease_ms := s.lease_ms;
	max_clock_offset_ms := s.max_clock_offset_ms;

	IF (s.timestamp_bits, s.worker_bits, s.region_bits, s.sequence_bits, s.epoch_ms)
	   IS DISTINCT FROM (p_timestamp_bits, p_worker_bits, p_region_bits,
						 p_sequence_bits, p_epoch_ms) THEN
		status := 'layout_mismatch';
		detail := format('The coordinator''s layout is timestamp_bits=%s worker_bits=%s region_bits=%s sequence_bits=%s epoch_ms=%s; the node''s is timestamp_bits=%s worker_bits=%s region_bits=%s sequence_bits=%s epoch_ms=%s.',
						 s.timestamp_bits, s.worker_bits, s.region_bits,
						 s.sequence_bits, s.epoch_ms,
						 p_timestamp_bits, p_worker_bits, p_region_bits,
						 p_sequence_bits, p_epoch_ms);
		PERFORM snowid_coordinator.log_event(NULL, p_node_name, 'refused', detail);
		RETURN;
	END IF;

	IF snowid_coordinator.check_identity() = 'unfenced' THEN
		status := 'unfenced';
		detail := 'This server''s system identifier, timeline or incarnation changed since the leases were recorded (promotion, clone or restore).';
		RETURN;
	END IF;
	SELECT * INTO s FROM snowid_coordinator.settings;
	IF s.fenced_until IS NOT NULL AND s.fenced_until > now() THEN
		status := 'fenced';
		detail := format('The coordinator is fenced (it was just initialized, restarted, restored or promoted, or a node found its lease forgotten); grants resume at %s.',
						 s.fenced_until);
		RETURN;
	END IF;
	IF NOT s.local_mode AND NOT s.single_server
	   AND current_setting('synchronous_standby_names') = '' THEN
		status := 'no_sync_standby';
		detail := 'synchronous_standby_names is empty on the coordinator, and it was not initialized with single_server => true.';
		RETURN;
	END IF;

	/* The worker ids this node may take: its region's range, or all. */
	IF s.region_bits > 0 THEN
		IF p_region IS NULL OR p_region < 0 OR p_region >= (1 << s.region_bits) THEN
			status := 'layout_mismatch';
			detail := format('With %s region bits the node''s region must be between 0 and %s.',
							 s.region_bits, (1 << s.region_bits) - 1);
			RETURN;
		END IF;
		IF s.regions IS NOT NULL AND NOT p_region = ANY (s.regions) THEN
			status := 'region_not_served';
			detail := format('This coordinator serves regions %s; the node''s region is %s. Point snowid.coordinator at the coordinator of region %s.',
							 array_to_string(s.regions, ', '), p_region, p_region);
			PERFORM snowid_coordinator.log_event(NULL, p_node_name, 'refused', detail);
			RETURN;
		END IF;
		first_id := p_region << (s.worker_bits - s.region_bits);
		last_id := first_id + (1 << (s.worker_bits - s.region_bits)) - 1;
		region_text := format(' of region %s', p_region);
	ELSE
		first_id := 0;
		last_id := (1 << s.worker_bits) - 1;
		region_text := '';
	END IF;

	/* A node clock ahead of ours would issue ids no fence floor covers. */
	IF p_node_clock_ms > coordinator_now_ms + s.max_clock_offset_ms THEN
		status := 'clock_offset';
		detail := format('The node''s clock is %s ms ahead of the coordinator''s; the coordinator allows %s ms (max_clock_offset).',
						 p_node_clock_ms - coordinator_now_ms, s.max_clock_offset_ms);
		PERFORM snowid_coordinator.log_event(NULL, p_node_name, 'refused', detail);
		RETURN;
	END IF;

	LOCK TABLE snowid_coordinator.grant_lock IN EXCLUSIVE MODE;

	/* A retried grant: the lease this token already holds. */
	SELECT l.worker_id, l.floor_ms INTO retried
	  FROM snowid_coordinator.leases l
	 WHERE l.owner = p_token;
	IF FOUND THEN
		UPDATE snowid_coordinator.leases l
		   SET high_water_ms = GREATEST(l.high_water_ms,
										p_node_clock_ms + s.lease_ms + s.margin_ms),
			   expires_at = now() + snowid_coordinator.ms(s.lease_ms)
		 WHERE l.worker_id = retried.worker_id
		RETURNING l.high_water_ms INTO high_water_ms;
		worker_id := retried.worker_id;
		floor_ms := GREATEST(retried.floor_ms, s.fence_floor_ms);
		status := 'granted';
		PERFORM snowid_coordinator.log_event(worker_id, p_node_name, 'grant',
											 'the same lease again: a retried grant');
		RETURN;
	END IF;

	/*
	 * Take the chosen worker id if it is still free.  Renewals do not take
	 * the grant lock, so the owner of an expired lease may renew it (or a
	 * node restore it) between the choice and the update; then choose
	 * again.
	 */
	FOR attempt IN 1..3 LOOP
		SELECT * INTO chosen
		  FROM snowid_coordinator.choose_worker(p_node_name, first_id, last_id, s.safety_ms);
		IF chosen.worker_id IS NULL THEN
			status := 'no_free_worker';
			detail := format('All %s worker ids%s are held or cooling down.',
							 last_id - first_id + 1, region_text);
			PERFORM snowid_coordinator.log_event(NULL, p_node_name, 'refused', detail);
			RETURN;
		END IF;

		UPDATE snowid_coordinator.leases l
		   SET owner = p_token,
			   node_name = p_node_name,
			   high_water_ms = GREATEST(l.high_water_ms,
										p_node_clock_ms + s.lease_ms + s.margin_ms),
			   floor_ms = GREATEST(l.high_water_ms, s.fence_floor_ms),
			   expires_at = now() + snowid_coordinator.ms(s.lease_ms),
			   acquired_at = now(),
			   renewed_at = NULL,
			   released_at = NULL
		 WHERE l.worker_id = chosen.worker_id
		   AND snowid_coordinator.lease_state(l.owner, l.expires_at, s.safety_ms) = 'free'
		RETURNING l.high_water_ms, l.floor_ms INTO high_water_ms, floor_ms;
		EXIT WHEN FOUND;
		IF attempt = 3 THEN
			RAISE EXCEPTION 'worker id % changed owner during a grant', chosen.worker_id
				USING ERRCODE = '40001',
					  HINT = 'The node retries the grant.';
		END IF;
	END LOOP;

	/* Warn when fewer than 10% of the region's worker ids are free. */
	free_ids := snowid_coordinator.pool_free(first_id, last_id, s.safety_ms);
	IF free_ids * 10 < last_id - first_id + 1 THEN
		RAISE WARNING 'snowid worker id pool is running low'
			USING ERRCODE = '01SN1',
				  DETAIL = format('%s of the %s worker ids%s are free.',
								  free_ids, last_id - first_id + 1, region_text),
				  HINT = 'Shut down nodes that no longer need ids, or plan a layout with more worker bits.';
	END IF;
	worker_id := chosen.worker_id;
	status := 'granted';
	PERFORM snowid_coordinator.log_event(worker_id, p_node_name, 'grant', NULL);

	DELETE FROM snowid_coordinator.events e
	 WHERE e.at < now() - s.event_retention;
END;
$$;

/* Protocol version 1: a grant as version 2 makes it, in the old columns. */
CREATE OR REPLACE FUNCTION snowid_coordinator.lease_acquire_v1(
	p_token uuid,
	p_node_name text,
	p_timestamp_bits int, p_worker_bits int, p_region_bits int,
	p_sequence_bits int, p_epoch_ms bigint,
	p_region int,
	p_node_clock_ms bigint,
	OUT status text,
	OUT detail text,
	OUT worker_id int,
	OUT floor_ms bigint,
	OUT high_water_ms bigint,
	OUT lease_ms int,
	OUT coordinator_now_ms bigint)
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
	SELECT a.status, a.detail, a.worker_id, a.floor_ms, a.high_water_ms,
		   a.lease_ms, a.coordinator_now_ms
	  FROM snowid_coordinator.lease_acquire_v2(p_token, p_node_name,
			p_timestamp_bits, p_worker_bits, p_region_bits, p_sequence_bits,
			p_epoch_ms, p_region, p_node_clock_ms) a;
$$;

/*
 * Renew a lease: lease protocol version 2.
 *
 * Only the owner token renews.  The new high-water mark is the node's
 * clock (clamped to this server's clock plus max_clock_offset) plus lease
 * and margin, stored as the maximum of the old, the new and what the node
 * says it was last confirmed.  A lease whose expiry passed but that
 * nobody else took is still this owner's.
 *
 * The node is a witness.  p_lease_valid says that its lease had not
 * expired yet by its own monotonic clock when it sent this renewal, so
 * this coordinator cannot have granted the worker id to anyone since,
 * unless its state went back in time (restored, reverted) or its clock
 * jumped.  Such a renewal that finds no row, a row without owner, or a
 * high-water mark below p_confirmed_high_water_ms, fences the coordinator
 * and keeps the worker id held for this node.  One that finds another
 * owner stops both: the row is taken away from that owner too (owner set
 * to a token nobody holds) until it cools down; a later one that finds it
 * so only keeps it from both for longer.  A renewal sent (by the node's
 * clock) longer ago than its keeper waits for an answer is no witness:
 * the network delivered it late (retransmitted after a partition), its
 * keeper has given up on it and may hold a new lease by now.
 *
 * status: renewed, lost, unfenced.
 */
CREATE FUNCTION snowid_coordinator.lease_renew_v2(
	p_token uuid,
	p_worker_id int,
	p_node_clock_ms bigint,
	p_confirmed_high_water_ms bigint,
	p_lease_valid bool,
	p_clock_offset_ms bigint DEFAULT NULL,
	p_clock_offset_exceeded bool DEFAULT false,
	OUT status text,
	OUT detail text,
	OUT high_water_ms bigint,
	OUT lease_ms int,
	OUT coordinator_now_ms bigint,
	OUT max_clock_offset_ms int)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	s snowid_coordinator.settings;
	l snowid_coordinator.leases;
	declared bigint;
	have_row bool;
	witness bool;
BEGIN
	coordinator_now_ms := snowid_coordinator.now_ms();
	SELECT * INTO s FROM snowid_coordinator.settings;
	IF NOT FOUND THEN
		status := 'lost';
		detail := 'The coordinator is not initialized.';
		RETURN;
	END IF;
	PERFORM snowid_coordinator.require_durable_commit();
	lease_ms := s.lease_ms;
	max_clock_offset_ms := s.max_clock_offset_ms;
	IF snowid_coordinator.check_identity() = 'unfenced' THEN
		status := 'unfenced';
		detail := 'This server''s system identifier, timeline or incarnation changed since the leases were recorded (promotion, clone or restore).';
		RETURN;
	END IF;

	/* what a node says is untrusted: a worker id outside the pool is nobody's */
	IF p_worker_id IS NULL OR p_worker_id < 0 OR p_worker_id >= (1 << s.worker_bits) THEN
		status := 'lost';
		detail := format('Worker id %s is not in this coordinator''s pool (0 to %s).',
						 p_worker_id, (1 << s.worker_bits) - 1);
		RETURN;
	END IF;

	declared := LEAST(p_node_clock_ms, coordinator_now_ms + s.max_clock_offset_ms)
		+ s.lease_ms + s.margin_ms;
	/*
	 * A node witnesses only in a renewal its keeper still waits for: sent,
	 * by its clock, within two call timeouts (the keeper gives up a call
	 * after a fifth of the lease, at least a second, and a statement on a
	 * fresh connection gets another) plus max_clock_offset.  An older one
	 * is a request the network delivered late, after its keeper gave up
	 * and perhaps took a new lease: it says nothing about now.
	 */
	witness := p_lease_valid AND p_node_clock_ms >= coordinator_now_ms
		- 2 * GREATEST(1000, s.lease_ms / 5) - s.max_clock_offset_ms;
	SELECT * INTO l FROM snowid_coordinator.leases r
	 WHERE r.worker_id = p_worker_id FOR UPDATE;
	have_row := FOUND;

	IF have_row AND l.owner = p_token THEN
		IF witness AND l.high_water_ms < p_confirmed_high_water_ms THEN
			PERFORM snowid_coordinator.fence_now(format(
				'worker id %s: the node was confirmed up to %s ms, the coordinator remembers %s ms (its state went back in time)',
				p_worker_id, p_confirmed_high_water_ms, l.high_water_ms));
		END IF;
		UPDATE snowid_coordinator.leases r
		   SET high_water_ms = GREATEST(r.high_water_ms, declared,
										p_confirmed_high_water_ms),
			   expires_at = now() + snowid_coordinator.ms(s.lease_ms),
			   renewed_at = now(),
			   clock_offset_ms = p_clock_offset_ms
		 WHERE r.worker_id = p_worker_id
		RETURNING r.high_water_ms INTO high_water_ms;
		IF p_clock_offset_exceeded THEN
			PERFORM snowid_coordinator.log_event(p_worker_id, l.node_name, 'clock_offset',
				format('the node''s clock is off by about %s ms; it refuses to generate', p_clock_offset_ms));
		END IF;
		status := 'renewed';
		RETURN;
	END IF;

	IF NOT witness THEN
		status := 'lost';
		IF p_lease_valid THEN
			detail := format('The renewal was sent %s ms ago by the node''s clock: its keeper no longer waits for it.',
							 coordinator_now_ms - p_node_clock_ms);
		ELSE
			detail := 'The lease is held by another owner or was released.';
		END IF;
		PERFORM snowid_coordinator.log_event(p_worker_id, NULL, 'renewal_refused',
			CASE WHEN p_lease_valid
				 THEN 'a renewal delivered late, from a call its keeper gave up'
				 ELSE 'the lease is held by another owner or was released' END);
		RETURN;
	END IF;

	IF NOT have_row OR l.owner IS NULL THEN
		/* Forgotten: keep it held for the node that still uses it. */
		PERFORM snowid_coordinator.fill_never_used(
			(p_worker_id >> (s.worker_bits - s.region_bits)) << (s.worker_bits - s.region_bits),
			p_worker_id);
		PERFORM snowid_coordinator.fence_now(format(
			'worker id %s: a node renewed a valid lease the coordinator had forgotten (its state went back in time); the lease is kept',
			p_worker_id));
		INSERT INTO snowid_coordinator.leases AS r
			(worker_id, owner, node_name, high_water_ms, expires_at,
			 acquired_at, renewed_at, clock_offset_ms)
		VALUES (p_worker_id, p_token, '(restored by its node)',
				GREATEST(declared, p_confirmed_high_water_ms),
				now() + snowid_coordinator.ms(s.lease_ms), now(), now(),
				p_clock_offset_ms)
		ON CONFLICT (worker_id) DO UPDATE
		   SET owner = EXCLUDED.owner,
			   high_water_ms = GREATEST(r.high_water_ms, EXCLUDED.high_water_ms),
			   expires_at = EXCLUDED.expires_at,
			   renewed_at = EXCLUDED.renewed_at,
			   released_at = NULL,
			   clock_offset_ms = EXCLUDED.clock_offset_ms
		RETURNING r.high_water_ms INTO high_water_ms;
		PERFORM snowid_coordinator.log_event(p_worker_id, NULL, 'lease_restored',
											 'kept for the node that renewed it');
		status := 'renewed';
		RETURN;
	END IF;

	IF l.owner = '00000000-0000-0000-0000-000000000000' THEN
		/*
		 * Contested already, and fenced then: the other owner still uses it.
		 * Keep it from both for longer; the fence has done its part.
		 */
		UPDATE snowid_coordinator.leases r
		   SET high_water_ms = GREATEST(r.high_water_ms, declared, p_confirmed_high_water_ms),
			   expires_at = GREATEST(r.expires_at,
									 now() + snowid_coordinator.ms(s.lease_ms + s.margin_ms))
		 WHERE r.worker_id = p_worker_id;
		status := 'lost';
		detail := 'The coordinator had granted this worker id to another owner; both stop.';
		RETURN;
	END IF;

	/* Another owner holds what this node validly holds: stop both. */
	PERFORM snowid_coordinator.fence_now(format(
		'worker id %s: a node renewed a valid lease that the coordinator had granted to another owner (its state went back in time, or its clock jumped)',
		p_worker_id));
	UPDATE snowid_coordinator.leases r
	   SET owner = '00000000-0000-0000-0000-000000000000',
		   node_name = '(contested)',
		   high_water_ms = GREATEST(r.high_water_ms, declared, p_confirmed_high_water_ms),
		   expires_at = now() + snowid_coordinator.ms(s.lease_ms + s.margin_ms)
	 WHERE r.worker_id = p_worker_id;
	PERFORM snowid_coordinator.log_event(p_worker_id, l.node_name, 'contested',
		'two owners: the lease is taken from both until it cools down');
	status := 'lost';
	detail := 'The coordinator had granted this worker id to another owner; both stop.';
END;
$$;

/* Protocol version 1: a renewal without witness information. */
CREATE OR REPLACE FUNCTION snowid_coordinator.lease_renew_v1(
	p_token uuid,
	p_worker_id int,
	p_node_clock_ms bigint,
	p_clock_offset_ms bigint DEFAULT NULL,
	p_clock_offset_exceeded bool DEFAULT false,
	OUT status text,
	OUT high_water_ms bigint,
	OUT lease_ms int,
	OUT coordinator_now_ms bigint)
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
	SELECT r.status, r.high_water_ms, r.lease_ms, r.coordinator_now_ms
	  FROM snowid_coordinator.lease_renew_v2(p_token, p_worker_id,
			p_node_clock_ms, NULL, false, p_clock_offset_ms,
			p_clock_offset_exceeded) r;
$$;

/*
 * Release a lease on clean shutdown (both protocol versions).  The node
 * reports its true last used timestamp, which becomes the high-water mark
 * (the next owner's floor), clamped to [floor, high-water mark]: a node
 * cannot have used more than it was confirmed nor less than its floor, and
 * a wrong value must neither push the next floor out of reach nor lower it
 * below this lease's floor (the floor wins where the two cross).  The
 * safety period is waived.
 *
 * status: released, lost.
 */
CREATE OR REPLACE FUNCTION snowid_coordinator.lease_release_v1(
	p_token uuid,
	p_worker_id int,
	p_last_used_ms bigint,
	OUT status text)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	node text;
	kept bigint;
BEGIN
	PERFORM snowid_coordinator.require_durable_commit();
	UPDATE snowid_coordinator.leases l
	   SET owner = NULL,
		   high_water_ms = GREATEST(LEAST(p_last_used_ms, l.high_water_ms), l.floor_ms),
		   expires_at = now(),
		   released_at = now()
	 WHERE l.worker_id = p_worker_id
	   AND l.owner = p_token
	RETURNING l.node_name, l.high_water_ms INTO node, kept;
	IF NOT FOUND THEN
		status := 'lost';
		RETURN;
	END IF;
	PERFORM snowid_coordinator.log_event(p_worker_id, node, 'release',
		format('last used %s, kept %s', p_last_used_ms, kept));
	status := 'released';
END;
$$;

/* Local mode: the operator confirmed the takeover (see 1.0). */
CREATE OR REPLACE FUNCTION snowid_coordinator.confirm_identity_v1()
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ident record;
BEGIN
	PERFORM snowid_coordinator.require_durable_commit();
	SELECT * INTO ident FROM snowid_coordinator.current_identity();
	/* the incarnation may be what changed: fence() records it all */
	UPDATE snowid_coordinator.settings SET incarnation = NULL;
	PERFORM snowid_coordinator.fence(ident.system_identifier, ident.timeline);
	/* The old server's leases are void: nobody can renew them any more. */
	UPDATE snowid_coordinator.leases SET owner = NULL WHERE owner IS NOT NULL;
END;
$$;

/* Local mode: the node was started from a base backup (see 1.0). */
CREATE OR REPLACE FUNCTION snowid_coordinator.mark_copy_v1(p_postmaster_start timestamptz)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM snowid_coordinator.require_durable_commit();
	IF EXISTS (SELECT FROM snowid_coordinator.events e
				WHERE e.event = ANY (ARRAY['fence', 'copy_detected'])
				  AND e.at >= p_postmaster_start) THEN
		RETURN;
	END IF;
	UPDATE snowid_coordinator.settings SET timeline = -1;
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'copy_detected',
		'the node was started from a base backup');
END;
$$;

/*
 * Serve more (or other) regions: a region's nodes get grants here from now
 * on.  Taking a region away does not stop the leases its nodes hold; they
 * run out once their nodes renew elsewhere or stop.
 */
CREATE FUNCTION snowid_coordinator.serve_regions(p_regions int[])
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s snowid_coordinator.settings;
BEGIN
	SELECT * INTO s FROM snowid_coordinator.settings FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'snowid coordinator is not initialized'
			USING ERRCODE = '55000',
				  HINT = 'Call snowid_coordinator.initialize() first.';
	END IF;
	PERFORM snowid_coordinator.check_regions(p_regions, s.region_bits);
	UPDATE snowid_coordinator.settings
	   SET regions = (SELECT array_agg(DISTINCT r ORDER BY r) FROM unnest(p_regions) r);
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'regions',
		format('regions served: %s (were %s)', COALESCE(p_regions::text, 'all'),
			   COALESCE(s.regions::text, 'all')));
END;
$$;

/* Local mode: make the lease timing and clock bound follow the node's settings. */
CREATE FUNCTION snowid_coordinator.set_timing_v2(p_lease_ms int, p_safety_ms int,
												 p_margin_ms int,
												 p_max_clock_offset_ms int)
RETURNS void
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
	UPDATE snowid_coordinator.settings
	   SET lease_ms = p_lease_ms, safety_ms = p_safety_ms, margin_ms = p_margin_ms,
		   max_clock_offset_ms = p_max_clock_offset_ms;
$$;

/* The worker id pool, without owner tokens. */
CREATE OR REPLACE VIEW snowid_coordinator.worker_leases AS
SELECT l.worker_id,
	   l.node_name,
	   snowid_coordinator.lease_state(l.owner, l.expires_at, s.safety_ms) AS state,
	   to_timestamp(l.high_water_ms / 1000.0) AS high_water,
	   l.expires_at,
	   l.acquired_at,
	   l.renewed_at,
	   l.released_at,
	   l.clock_offset_ms
  FROM snowid_coordinator.leases l, snowid_coordinator.settings s;

/*
 * The worker id pool per region (see 1.0), by lease_state(), and whether
 * this coordinator serves the region.
 */
CREATE OR REPLACE VIEW snowid_coordinator.worker_pool AS
WITH s AS (SELECT * FROM snowid_coordinator.settings LIMIT 1),	/* one row */
used AS (
	SELECT l.worker_id >> (s.worker_bits - s.region_bits) AS r,
		   count(*) FILTER (WHERE snowid_coordinator.lease_state(l.owner, l.expires_at, s.safety_ms) = 'held') AS held,
		   count(*) FILTER (WHERE snowid_coordinator.lease_state(l.owner, l.expires_at, s.safety_ms) = 'cooling_down') AS cooling_down
	  FROM snowid_coordinator.leases l, s
	 WHERE l.owner IS NOT NULL
	   /* the live leases only (leases_expires_idx): see pool_free() */
	   AND l.expires_at >= now() - snowid_coordinator.ms(s.safety_ms)
	 GROUP BY 1
)
SELECT CASE WHEN s.region_bits > 0 THEN g.r END AS region,
	   1 << (s.worker_bits - s.region_bits) AS total,
	   COALESCE(u.held, 0) AS held,
	   COALESCE(u.cooling_down, 0) AS cooling_down,
	   (1 << (s.worker_bits - s.region_bits)) - COALESCE(u.held, 0) - COALESCE(u.cooling_down, 0) AS free,
	   ((1 << (s.worker_bits - s.region_bits)) - COALESCE(u.held, 0) - COALESCE(u.cooling_down, 0)) * 10
		   < (1 << (s.worker_bits - s.region_bits)) AS low,
	   s.regions IS NULL OR g.r = ANY (s.regions) AS served
  FROM s
 CROSS JOIN LATERAL generate_series(0, (1 << s.region_bits) - 1) AS g(r)
  LEFT JOIN used u ON u.r = g.r;

REVOKE ALL ON ALL TABLES IN SCHEMA snowid_coordinator FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA snowid_coordinator FROM PUBLIC;
GRANT SELECT ON snowid_coordinator.worker_leases, snowid_coordinator.worker_pool
	TO pg_monitor;
/* the views call these as the querying role */
GRANT EXECUTE ON FUNCTION snowid_coordinator.lease_state(uuid, timestamptz, int),
	snowid_coordinator.ms(bigint) TO pg_monitor;
