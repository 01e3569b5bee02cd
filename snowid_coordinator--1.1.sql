/* snowid_coordinator--1.1.sql: fresh install of version 1.1 (1.0 plus what snowid_coordinator--1.0--1.1.sql adds) */

\echo Use "CREATE EXTENSION snowid_coordinator" to load this file. \quit

/*
 * The lease protocol (DESIGN.md section 3), version 1.
 *
 * A lease is (worker id, owner token, floor, high-water mark).  Every
 * lease time is taken from this server's clock (now()), so a node's clock
 * skew never shortens a safety period.  High-water marks are in the
 * nodes' own clock, since they bound the timestamps inside the ids a node
 * makes.  All times here are Unix milliseconds.
 *
 * The protocol functions are SECURITY DEFINER and granted to nobody: the
 * lease keeper calls them as a superuser, and a node role for a remote
 * coordinator is granted EXECUTE on them alone.  Each forces
 * synchronous_commit = on for its transaction, so a grant or renewal is
 * never reported before it is durable.
 */

CREATE TABLE snowid_coordinator.settings (
	singleton			bool PRIMARY KEY DEFAULT true CHECK (singleton),
	timestamp_bits		int NOT NULL,
	worker_bits			int NOT NULL,
	region_bits			int NOT NULL,
	sequence_bits		int NOT NULL,
	epoch_ms			bigint NOT NULL,
	lease_ms			int NOT NULL CHECK (lease_ms >= 3000),
	safety_ms			int NOT NULL CHECK (safety_ms >= 0),
	margin_ms			int NOT NULL CHECK (margin_ms >= 0),
	max_clock_offset_ms	int NOT NULL DEFAULT 1000 CHECK (max_clock_offset_ms >= 0),
	local_mode			bool NOT NULL,
	single_server		bool NOT NULL DEFAULT false,
	event_retention		interval NOT NULL DEFAULT '30 days',
	system_identifier	text NOT NULL,
	timeline			int NOT NULL,
	fenced_until		timestamptz,
	fence_floor_ms		bigint NOT NULL DEFAULT 0,
	created_at			timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE snowid_coordinator.leases (
	worker_id		int PRIMARY KEY CHECK (worker_id >= 0),
	owner			uuid,
	node_name		text NOT NULL,
	high_water_ms	bigint NOT NULL,
	expires_at		timestamptz NOT NULL,
	acquired_at		timestamptz NOT NULL,
	renewed_at		timestamptz,
	released_at		timestamptz,
	clock_offset_ms	bigint			/* the node's last reported clock offset */
);

CREATE TABLE snowid_coordinator.events (
	event_id	bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at			timestamptz NOT NULL DEFAULT now(),
	worker_id	int,
	node_name	text,
	event		text NOT NULL,
	detail		text
);
CREATE INDEX events_at_idx ON snowid_coordinator.events (at);

REVOKE ALL ON ALL TABLES IN SCHEMA snowid_coordinator FROM PUBLIC;
REVOKE ALL ON SCHEMA snowid_coordinator FROM PUBLIC;

/* Append one lease event. */
CREATE FUNCTION snowid_coordinator.log_event(p_worker_id int, p_node_name text,
											 p_event text, p_detail text)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
	INSERT INTO snowid_coordinator.events (worker_id, node_name, event, detail)
	VALUES (p_worker_id, p_node_name, p_event, p_detail);
$$;

/* This server's clock in Unix milliseconds. */
CREATE FUNCTION snowid_coordinator.now_ms()
RETURNS bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT floor(extract(epoch FROM now()) * 1000)::bigint;
$$;

/*
 * This server's identity: its system identifier and current timeline.  A
 * server started from a base backup keeps both (unless recovery ended on a
 * new timeline), so the identifier is suffixed with the time of the backup
 * it was started from, which backup_label.old records; the server it was
 * copied from has no such file (non-exclusive backups leave none behind).
 */
CREATE FUNCTION snowid_coordinator.current_identity(OUT system_identifier text,
													OUT timeline int)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT (SELECT s.system_identifier::text FROM pg_control_system() s) ||
		   COALESCE('/backup@' ||
					(SELECT floor(extract(epoch FROM f.modification))::bigint::text
					   FROM pg_stat_file('backup_label.old', true) f),
					''),
		   ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int;
$$;

/*
 * Compare this server's identity with the recorded one.  Returns 'ok', or
 * 'unfenced' when it changed (restore, promotion, clone) and this
 * coordinator may not fence itself (local mode: an operator must confirm
 * that the old server is gone).  In remote mode a change fences the
 * coordinator at once: no grant for a lease plus the safety period, and
 * every floor at least the fence time plus lease, margin and clock offset.
 */
CREATE FUNCTION snowid_coordinator.check_identity()
RETURNS text
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s snowid_coordinator.settings;
	ident record;
BEGIN
	/* Every call reads; only a change takes the row lock (in fence()). */
	SELECT * INTO s FROM snowid_coordinator.settings;
	SELECT * INTO ident FROM snowid_coordinator.current_identity();
	IF s.system_identifier OPERATOR(pg_catalog.=) ident.system_identifier
	   AND s.timeline OPERATOR(pg_catalog.=) ident.timeline THEN
		RETURN 'ok';
	END IF;
	IF s.local_mode THEN
		RETURN 'unfenced';
	END IF;
	PERFORM snowid_coordinator.fence(ident.system_identifier, ident.timeline);
	RETURN 'ok';
END;
$$;

/* Record a new identity and fence this coordinator. */
CREATE FUNCTION snowid_coordinator.fence(p_system_identifier text, p_timeline int)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s snowid_coordinator.settings;
	old_identity text;
BEGIN
	SELECT * INTO s FROM snowid_coordinator.settings FOR UPDATE;
	IF s.system_identifier OPERATOR(pg_catalog.=) p_system_identifier
	   AND s.timeline OPERATOR(pg_catalog.=) p_timeline THEN
		RETURN;					/* another caller fenced first */
	END IF;
	old_identity := format('system identifier %s, timeline %s',
						   s.system_identifier, s.timeline);
	UPDATE snowid_coordinator.settings
	   SET system_identifier = p_system_identifier,
		   timeline = p_timeline,
		   fenced_until = now() + make_interval(secs => (s.lease_ms + s.safety_ms) / 1000.0),
		   fence_floor_ms = GREATEST(fence_floor_ms,
									 snowid_coordinator.now_ms() + s.lease_ms +
									 s.margin_ms + s.max_clock_offset_ms);
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'fence',
		format('identity changed from %s to system identifier %s, timeline %s',
			   old_identity, p_system_identifier, p_timeline));
END;
$$;

/*
 * Create the settings row: the cluster's layout and lease timing.  Called
 * once; by the lease keeper itself in local mode.  Refuses to run twice.
 */
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
	max_clock_offset interval DEFAULT '1 second')
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
	   OR lease_margin < interval '0' THEN
		RAISE EXCEPTION 'invalid snowid lease timing'
			USING ERRCODE = '22023',
				  DETAIL = 'The lease time must be at least 3 seconds; the safety period and margin must not be negative.';
	END IF;
	SELECT * INTO ident FROM snowid_coordinator.current_identity();
	/*
	 * A remote coordinator cannot tell a new cluster from one re-created
	 * after DROP EXTENSION, whose nodes may have issued ids: it starts
	 * fenced, like after a restore.
	 */
	INSERT INTO snowid_coordinator.settings
		(timestamp_bits, worker_bits, region_bits, sequence_bits, epoch_ms,
		 lease_ms, safety_ms, margin_ms, max_clock_offset_ms, local_mode,
		 single_server, system_identifier, timeline)
	VALUES (63 - worker_bits - sequence_bits, worker_bits, region_bits,
			sequence_bits, floor(extract(epoch FROM epoch) * 1000)::bigint,
			(extract(epoch FROM lease_time) * 1000)::int,
			(extract(epoch FROM safety_period) * 1000)::int,
			(extract(epoch FROM lease_margin) * 1000)::int,
			(extract(epoch FROM max_clock_offset) * 1000)::int,
			local_mode, single_server,
			ident.system_identifier, ident.timeline);
	IF NOT local_mode THEN
		UPDATE snowid_coordinator.settings st
		   SET fenced_until = now() + make_interval(secs => (st.lease_ms + st.safety_ms) / 1000.0),
			   fence_floor_ms = snowid_coordinator.now_ms() + st.lease_ms + st.margin_ms +
								st.max_clock_offset_ms;
	END IF;
	/* one row: let the planner know, for the views that join it */
	ANALYZE snowid_coordinator.settings;
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'initialize',
		format('layout %s/%s/%s (region %s), epoch %s',
			   63 - worker_bits - sequence_bits, worker_bits, sequence_bits,
			   region_bits, epoch));
END;
$$;

/*
 * Grant a worker id lease to a node.
 *
 * One statement decides: the row is taken only if it has no owner or its
 * lease expired more than the safety period ago, by this server's clock;
 * grants are serialised by a table lock.  The floor returned is the
 * highest timestamp any earlier owner could have used (its high-water
 * mark, or its true last used timestamp if it released), and at least the
 * fence floor.  The node never issues a timestamp at or below it.
 *
 * status: granted, not_initialized, layout_mismatch, unfenced, fenced,
 * no_sync_standby, no_free_worker.
 */
CREATE FUNCTION snowid_coordinator.lease_acquire_v1(
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
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	s snowid_coordinator.settings;
	first_id int;
	last_id int;
	chosen int;
	old_high_water bigint;
	in_use int;
BEGIN
	/* durable before it is reported: for this whole transaction */
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	coordinator_now_ms := snowid_coordinator.now_ms();
	SELECT * INTO s FROM snowid_coordinator.settings;
	IF NOT FOUND THEN
		status := 'not_initialized';
		detail := 'Call snowid_coordinator.initialize() on the coordinator first.';
		RETURN;
	END IF;
	lease_ms := s.lease_ms;

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

	IF snowid_coordinator.check_identity() OPERATOR(pg_catalog.=) 'unfenced' THEN
		status := 'unfenced';
		detail := 'This server''s system identifier or timeline changed since the leases were recorded (promotion, clone or restore).';
		RETURN;
	END IF;
	SELECT * INTO s FROM snowid_coordinator.settings;
	IF s.fenced_until IS NOT NULL AND s.fenced_until > now() THEN
		status := 'fenced';
		detail := format('The coordinator is fenced (it was just initialized, restored, promoted or its identity changed); grants resume at %s.',
						 s.fenced_until);
		RETURN;
	END IF;
	IF NOT s.local_mode AND NOT s.single_server
	   AND current_setting('synchronous_standby_names') OPERATOR(pg_catalog.=) '' THEN
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
		first_id := p_region << (s.worker_bits - s.region_bits);
		last_id := first_id + (1 << (s.worker_bits - s.region_bits)) - 1;
	ELSE
		first_id := 0;
		last_id := (1 << s.worker_bits) - 1;
	END IF;

	LOCK TABLE snowid_coordinator.leases IN SHARE ROW EXCLUSIVE MODE;

	/*
	 * Preference: this node name's most recent worker id; then one never
	 * used; then the free one with the lowest high-water mark, so that the
	 * floor most likely lies below the node's clock.
	 */
	SELECT l.worker_id, l.high_water_ms INTO chosen, old_high_water
	  FROM snowid_coordinator.leases l
	 WHERE l.worker_id BETWEEN first_id AND last_id
	   AND l.node_name OPERATOR(pg_catalog.=) p_node_name
	   AND (l.owner IS NULL OR
			l.expires_at + make_interval(secs => s.safety_ms / 1000.0) < now())
	 ORDER BY l.acquired_at DESC
	 LIMIT 1;
	IF chosen IS NULL THEN
		SELECT g INTO chosen
		  FROM generate_series(first_id, last_id) g
		 WHERE NOT EXISTS (SELECT FROM snowid_coordinator.leases l
							WHERE l.worker_id OPERATOR(pg_catalog.=) g)
		 ORDER BY g
		 LIMIT 1;
		IF chosen IS NOT NULL THEN
			old_high_water := 0;
			INSERT INTO snowid_coordinator.leases
				(worker_id, owner, node_name, high_water_ms, expires_at, acquired_at)
			VALUES (chosen, NULL, p_node_name, 0, '-infinity', now());
		END IF;
	END IF;
	IF chosen IS NULL THEN
		SELECT l.worker_id, l.high_water_ms INTO chosen, old_high_water
		  FROM snowid_coordinator.leases l
		 WHERE l.worker_id BETWEEN first_id AND last_id
		   AND (l.owner IS NULL OR
				l.expires_at + make_interval(secs => s.safety_ms / 1000.0) < now())
		 ORDER BY l.high_water_ms
		 LIMIT 1;
	END IF;
	IF chosen IS NULL THEN
		status := 'no_free_worker';
		detail := format('All %s worker ids%s are held or cooling down.',
						 last_id - first_id + 1,
						 CASE WHEN s.region_bits > 0 THEN format(' of region %s', p_region) ELSE '' END);
		PERFORM snowid_coordinator.log_event(NULL, p_node_name, 'refused', detail);
		RETURN;
	END IF;

	UPDATE snowid_coordinator.leases l
	   SET owner = p_token,
		   node_name = p_node_name,
		   high_water_ms = GREATEST(l.high_water_ms,
									p_node_clock_ms + s.lease_ms + s.margin_ms),
		   expires_at = now() + make_interval(secs => s.lease_ms / 1000.0),
		   acquired_at = now(),
		   renewed_at = NULL,
		   released_at = NULL
	 WHERE l.worker_id OPERATOR(pg_catalog.=) chosen
	   AND (l.owner IS NULL OR
			l.expires_at + make_interval(secs => s.safety_ms / 1000.0) < now())
	RETURNING l.high_water_ms INTO high_water_ms;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'worker id % changed owner during a grant', chosen;
	END IF;

	floor_ms := GREATEST(old_high_water, s.fence_floor_ms);

	/* Warn when fewer than 10% of the region's worker ids are free. */
	SELECT count(*) INTO in_use
	  FROM snowid_coordinator.leases l
	 WHERE l.worker_id BETWEEN first_id AND last_id
	   AND l.owner IS NOT NULL
	   AND l.expires_at + make_interval(secs => s.safety_ms / 1000.0) >= now();
	IF (last_id - first_id + 1 - in_use) * 10 < last_id - first_id + 1 THEN
		RAISE WARNING 'snowid worker id pool is running low'
			USING ERRCODE = '01SN1',
				  DETAIL = format('%s of the %s worker ids%s are free.',
								  last_id - first_id + 1 - in_use, last_id - first_id + 1,
								  CASE WHEN s.region_bits > 0 THEN format(' of region %s', p_region) ELSE '' END),
				  HINT = 'Shut down nodes that no longer need ids, or plan a layout with more worker bits.';
	END IF;
	worker_id := chosen;
	status := 'granted';
	PERFORM snowid_coordinator.log_event(chosen, p_node_name, 'grant', NULL);

	DELETE FROM snowid_coordinator.events e
	 WHERE e.at < now() - s.event_retention;
END;
$$;

/*
 * Renew a lease.  Only the owner token can renew; a renewal that finds
 * another owner or no row reports 'lost', never a re-grab.  The new
 * high-water mark is the node's clock plus lease and margin, stored as the
 * maximum of the old and the new.  A lease whose expiry passed but that
 * nobody else took (the safety period keeps it from being granted) is
 * still this owner's and can be renewed.
 *
 * status: renewed, lost, unfenced.
 */
CREATE FUNCTION snowid_coordinator.lease_renew_v1(
	p_token uuid,
	p_worker_id int,
	p_node_clock_ms bigint,
	p_clock_offset_ms bigint DEFAULT NULL,
	p_clock_offset_exceeded bool DEFAULT false,
	OUT status text,
	OUT high_water_ms bigint,
	OUT lease_ms int,
	OUT coordinator_now_ms bigint)
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET jit = off
AS $$
DECLARE
	s snowid_coordinator.settings;
BEGIN
	/* durable before it is reported: for this whole transaction */
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	coordinator_now_ms := snowid_coordinator.now_ms();
	SELECT * INTO s FROM snowid_coordinator.settings;
	IF NOT FOUND THEN
		status := 'lost';
		RETURN;
	END IF;
	lease_ms := s.lease_ms;
	IF snowid_coordinator.check_identity() OPERATOR(pg_catalog.=) 'unfenced' THEN
		status := 'unfenced';
		RETURN;
	END IF;

	UPDATE snowid_coordinator.leases l
	   SET high_water_ms = GREATEST(l.high_water_ms,
									p_node_clock_ms + s.lease_ms + s.margin_ms),
		   expires_at = now() + make_interval(secs => s.lease_ms / 1000.0),
		   renewed_at = now(),
		   clock_offset_ms = p_clock_offset_ms
	 WHERE l.worker_id OPERATOR(pg_catalog.=) p_worker_id
	   AND l.owner OPERATOR(pg_catalog.=) p_token
	RETURNING l.high_water_ms INTO high_water_ms;
	IF NOT FOUND THEN
		status := 'lost';
		PERFORM snowid_coordinator.log_event(p_worker_id, NULL, 'renewal_refused',
											 'the lease is held by another owner or was released');
		RETURN;
	END IF;
	IF p_clock_offset_exceeded THEN
		PERFORM snowid_coordinator.log_event(p_worker_id, NULL, 'clock_offset',
			format('the node''s clock is off by about %s ms; it refuses to generate', p_clock_offset_ms));
	END IF;
	status := 'renewed';
END;
$$;

/*
 * Release a lease on clean shutdown.  The node reports the true last used
 * timestamp, which becomes the high-water mark (the next owner's floor),
 * and the safety period is waived.
 *
 * status: released, lost.
 */
CREATE FUNCTION snowid_coordinator.lease_release_v1(
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
BEGIN
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	UPDATE snowid_coordinator.leases l
	   SET owner = NULL,
		   high_water_ms = p_last_used_ms,
		   expires_at = now(),
		   released_at = now()
	 WHERE l.worker_id OPERATOR(pg_catalog.=) p_worker_id
	   AND l.owner OPERATOR(pg_catalog.=) p_token
	RETURNING l.node_name INTO node;
	IF NOT FOUND THEN
		status := 'lost';
		RETURN;
	END IF;
	PERFORM snowid_coordinator.log_event(p_worker_id, node, 'release',
		format('last used %s', p_last_used_ms));
	status := 'released';
END;
$$;

/*
 * Local mode: an operator confirms that the server this one was copied or
 * promoted from is gone.  Records the new identity and fences, so every
 * floor handed out lies beyond anything the old server could have used.
 */
CREATE FUNCTION snowid_coordinator.confirm_identity_v1()
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	ident record;
BEGIN
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	SELECT * INTO ident FROM snowid_coordinator.current_identity();
	PERFORM snowid_coordinator.fence(ident.system_identifier, ident.timeline);
	/* The old server's leases are void: nobody can renew them any more. */
	UPDATE snowid_coordinator.leases SET owner = NULL WHERE owner IS NOT NULL;
END;
$$;

/*
 * Local mode: the node was started from a base backup (backup_label was
 * present), so it may be a copy of a server that still runs, even with the
 * same system identifier and timeline.  Mark the recorded identity as
 * unknown, so the node refuses until an operator confirms the takeover.
 * Done once per postmaster start, and not after a confirmation made since.
 */
CREATE FUNCTION snowid_coordinator.mark_copy_v1(p_postmaster_start timestamptz)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM pg_catalog.set_config('synchronous_commit', 'on', true);
	IF EXISTS (SELECT FROM snowid_coordinator.events e
				WHERE e.event OPERATOR(pg_catalog.=) ANY (ARRAY['fence', 'copy_detected'])
				  AND e.at >= p_postmaster_start) THEN
		RETURN;
	END IF;
	UPDATE snowid_coordinator.settings SET timeline = -1;
	PERFORM snowid_coordinator.log_event(NULL, NULL, 'copy_detected',
		'the node was started from a base backup');
END;
$$;

/* Local mode: make the lease timing follow the node's settings. */
CREATE FUNCTION snowid_coordinator.set_timing_v1(p_lease_ms int, p_safety_ms int,
												 p_margin_ms int)
RETURNS void
LANGUAGE sql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
	UPDATE snowid_coordinator.settings
	   SET lease_ms = p_lease_ms, safety_ms = p_safety_ms, margin_ms = p_margin_ms;
$$;

/* The worker id pool, without owner tokens. */
CREATE VIEW snowid_coordinator.worker_leases AS
SELECT l.worker_id,
	   l.node_name,
	   CASE
		   WHEN l.owner IS NOT NULL AND l.expires_at > now() THEN 'held'
		   WHEN l.owner IS NOT NULL AND
				l.expires_at + make_interval(secs => s.safety_ms / 1000.0) >= now() THEN 'cooling_down'
		   ELSE 'free'
	   END AS state,
	   to_timestamp(l.high_water_ms / 1000.0) AS high_water,
	   l.expires_at,
	   l.acquired_at,
	   l.renewed_at,
	   l.released_at,
	   l.clock_offset_ms
  FROM snowid_coordinator.leases l, snowid_coordinator.settings s;

/*
 * The worker id pool per region (one row with region NULL when the layout
 * has no regions): total, held, cooling down, free, and "low" when fewer
 * than 10% are free.
 */
CREATE VIEW snowid_coordinator.worker_pool AS
WITH s AS (SELECT * FROM snowid_coordinator.settings LIMIT 1),	/* one row */
used AS (
	SELECT l.worker_id >> (s.worker_bits - s.region_bits) AS r,
		   count(*) FILTER (WHERE l.expires_at > now()) AS held,
		   count(*) FILTER (WHERE l.expires_at <= now()) AS cooling_down
	  FROM snowid_coordinator.leases l, s
	 WHERE l.owner IS NOT NULL
	   AND l.expires_at + make_interval(secs => s.safety_ms / 1000.0) >= now()
	 GROUP BY 1
)
SELECT CASE WHEN s.region_bits > 0 THEN g.r END AS region,
	   1 << (s.worker_bits - s.region_bits) AS total,
	   COALESCE(u.held, 0) AS held,
	   COALESCE(u.cooling_down, 0) AS cooling_down,
	   (1 << (s.worker_bits - s.region_bits)) - COALESCE(u.held, 0) - COALESCE(u.cooling_down, 0) AS free,
	   ((1 << (s.worker_bits - s.region_bits)) - COALESCE(u.held, 0) - COALESCE(u.cooling_down, 0)) * 10
		   < (1 << (s.worker_bits - s.region_bits)) AS low
  FROM s
 CROSS JOIN LATERAL generate_series(0, (1 << s.region_bits) - 1) AS g(r)
  LEFT JOIN used u ON u.r = g.r;

REVOKE ALL ON ALL TABLES IN SCHEMA snowid_coordinator FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA snowid_coordinator FROM PUBLIC;
GRANT USAGE ON SCHEMA snowid_coordinator TO pg_monitor;
GRANT SELECT ON snowid_coordinator.worker_leases, snowid_coordinator.worker_pool,
	snowid_coordinator.events TO pg_monitor;

SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.settings', '');
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.leases', '');
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.events', '');
/*
 * The identity sequence behind events.event_id too: pg_dump dumps a config
 * table's rows but not its sequences unless they are marked themselves, and
 * a restore that left the sequence at 1 would make the next event (the
 * fence a restored coordinator records) collide with a restored row.
 */
SELECT pg_catalog.pg_extension_config_dump('snowid_coordinator.events_event_id_seq', '');
