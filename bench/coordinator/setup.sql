/*
 * bench/coordinator/setup.sql: what make bench-coordinator adds to each
 * coordinator database it creates on its throwaway coordinator (schema
 * bench), after CREATE EXTENSION snowid_coordinator VERSION '1.0' and
 * initialize(): bench.seed() fills the pool in 1.0's lease table, then the
 * script updates the extension (see coordinator_db in coordinator.sh), so
 * these functions use what 1.0 has and later versions keep.  Nothing here
 * belongs in a real coordinator.
 *
 * Simulated node i of generation g (a restarted node is a new generation:
 * the lease keeper draws a new random token at every start) owns token
 * bench.token(g, i) and is called node-i.
 */

CREATE SCHEMA bench;

CREATE FUNCTION bench.token(p_gen int, p_node int)
RETURNS uuid
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
	SELECT (lpad(to_hex(p_gen), 8, '0') || '-0000-4000-8000-' ||
			lpad(to_hex(p_node), 12, '0'))::uuid
$$;

/* The node's wall clock, as the keeper declares it (same machine here). */
CREATE FUNCTION bench.clock_ms()
RETURNS bigint
LANGUAGE sql VOLATILE
AS $$
	SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
$$;

/*
 * initialize() fences a remote coordinator for a lease plus the safety
 * period, because it cannot tell a new cluster from one whose nodes issued
 * ids before the extension was created again.  This one is brand new and
 * no node ever used it: lift the fence rather than wait 35 s per database.
 */
CREATE FUNCTION bench.unfence()
RETURNS void
LANGUAGE sql
AS $$
	UPDATE snowid_coordinator.settings SET fenced_until = NULL;
$$;

/*
 * The state of a pool in which nodes 0 .. p_nodes - 1 hold worker ids
 * 0 .. p_nodes - 1 (generation 1), as if each had been granted its id and
 * renewed it once, except that every p_free_every-th id (when not 0) is
 * free: released an hour ago by a node that is gone.  Held leases expire
 * after p_expires.  Seeded directly: the grants are what the benchmark
 * measures, not a way to fill the pool (60,000 grants would take longer
 * than the whole run while grants cost O(pool)).
 */
CREATE FUNCTION bench.seed(p_nodes int, p_free_every int, p_expires interval)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
	s snowid_coordinator.settings;
	now_ms bigint := bench.clock_ms();
BEGIN
	SELECT * INTO STRICT s FROM snowid_coordinator.settings;
	INSERT INTO snowid_coordinator.leases
		(worker_id, owner, node_name, high_water_ms, expires_at, acquired_at,
		 renewed_at, released_at)
	SELECT g,
		   CASE WHEN free THEN NULL ELSE bench.token(1, g) END,
		   CASE WHEN free THEN 'gone-' ELSE 'node-' END || g,
		   now_ms + s.lease_ms + s.margin_ms - CASE WHEN free THEN 3600000 ELSE 0 END,
		   CASE WHEN free THEN now() - interval '1 hour' ELSE now() + p_expires END,
		   now() - interval '2 hours',
		   CASE WHEN free THEN NULL ELSE now() END,
		   CASE WHEN free THEN now() - interval '1 hour' END
	  FROM generate_series(0, p_nodes - 1) g,
		   LATERAL (SELECT p_free_every > 0 AND g % p_free_every = p_free_every - 1 AS free) f;
	ANALYZE snowid_coordinator.leases;
END;
$$;

/*
 * A clean shutdown of every node holding a lease: each releases it with
 * the last timestamp it used, as the keeper does (lease_release_v1).
 * Returns how many were released.
 */
CREATE FUNCTION bench.release_all(p_name_pattern text)
RETURNS bigint
LANGUAGE sql
AS $$
	SELECT count(*) FILTER (WHERE r.status = 'released')
	  FROM snowid_coordinator.leases l,
		   LATERAL snowid_coordinator.lease_release_v1(l.owner, l.worker_id,
													   bench.clock_ms()) r
	 WHERE l.owner IS NOT NULL AND l.node_name LIKE p_name_pattern;
$$;

/* Lease events since p_since that a benchmark run must not cause. */
CREATE FUNCTION bench.bad_events(p_since timestamptz)
RETURNS TABLE (event text, n bigint, detail text)
LANGUAGE sql
AS $$
	SELECT e.event, count(*), min(e.detail)
	  FROM snowid_coordinator.events e
	 WHERE e.at >= p_since
	   AND e.event NOT IN ('grant', 'release')
	 GROUP BY e.event
$$;
