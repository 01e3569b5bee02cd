/*
 * bench/coordinator/analysis.sql: the tables and functions that sum up a
 * run of make bench-coordinator (bench/coordinator.sh), in a database of
 * their own (bench_report) on the benchmark's throwaway coordinator.  The
 * coordinator's own databases never see them.
 *
 * pgbench writes one line per transaction (--log, PostgreSQL 15):
 *
 *     client_id transaction_no time script_no time_epoch time_us [schedule_lag]
 *
 * time is the latency in microseconds (with --rate it counts from the
 * scheduled start, so it includes the schedule lag), or "skipped" for a
 * transaction that --latency-limit dropped because it was already too
 * late, or "failed"; time_epoch and time_us say when it ended.  The
 * script prefixes every line with the name of its phase.  A percentile
 * here counts a skipped or failed transaction as infinitely late: a
 * renewal that is never sent is the worst case for the node waiting on it.
 *
 * test/t/093_bench_coordinator.pl feeds these functions a log whose
 * answers are known.
 */

/* As loaded (COPY), until parse_lines() moves them into pgbench_tx. */
CREATE TABLE pgbench_line (line text NOT NULL);

CREATE TABLE pgbench_tx (
	phase		text NOT NULL,
	client		int NOT NULL,
	txno		bigint NOT NULL,
	latency_ms	float8 NOT NULL,	/* Infinity when dropped */
	dropped		bool NOT NULL,		/* skipped or failed */
	ended		timestamptz NOT NULL
);
CREATE INDEX ON pgbench_tx (phase);

/* Parse the lines loaded so far into pgbench_tx; returns how many. */
CREATE FUNCTION parse_lines()
RETURNS bigint
LANGUAGE sql
AS $$
	WITH moved AS (
		DELETE FROM pgbench_line RETURNING string_to_array(line, ' ') AS f
	), parsed AS (
		INSERT INTO pgbench_tx
		SELECT f[1], f[2]::int, f[3]::bigint,
			   CASE WHEN f[4] ~ '^[0-9]+$' THEN f[4]::float8 / 1000 ELSE 'Infinity' END,
			   f[4] !~ '^[0-9]+$',
			   to_timestamp(f[6]::float8 + f[7]::float8 / 1e6)
		  FROM moved
		RETURNING 1
	)
	SELECT count(*) FROM parsed
$$;

/*
 * The transactions of one phase, summed up.  For a herd (p_clients and
 * p_nodes given), client c's k-th transaction (k from 1) granted to node
 * c + p_clients * (k - 1), and a transaction for a node number of p_nodes
 * or more did nothing; those are left out.  p_until leaves out what ended
 * after it (a herd cut off by its time limit).  p_limit_ms counts the
 * completed transactions slower than it; max_ms is the slowest completed.
 */
CREATE FUNCTION latency_summary(p_phase text,
								p_clients int DEFAULT NULL,
								p_nodes int DEFAULT NULL,
								p_until timestamptz DEFAULT NULL,
								p_limit_ms float8 DEFAULT NULL,
								OUT transactions bigint,
								OUT dropped bigint,
								OUT late bigint,
								OUT p50_ms float8,
								OUT p99_ms float8,
								OUT max_ms float8,
								OUT first_start timestamptz,
								OUT last_end timestamptz)
LANGUAGE sql STABLE
AS $$
	SELECT count(*),
		   count(*) FILTER (WHERE t.dropped),
		   count(*) FILTER (WHERE NOT t.dropped AND t.latency_ms > p_limit_ms),
		   percentile_disc(0.5) WITHIN GROUP (ORDER BY t.latency_ms),
		   percentile_disc(0.99) WITHIN GROUP (ORDER BY t.latency_ms),
		   max(t.latency_ms) FILTER (WHERE NOT t.dropped),
		   min(t.ended - make_interval(secs => t.latency_ms / 1000)) FILTER (WHERE NOT t.dropped),
		   max(t.ended)
	  FROM pgbench_tx t
	 WHERE t.phase = p_phase
	   AND (p_nodes IS NULL OR t.client + p_clients * (t.txno - 1) < p_nodes)
	   AND (p_until IS NULL OR t.ended <= p_until)
$$;

/* One row per N: what the script measured besides the logs. */
CREATE TABLE run (
	nodes			int PRIMARY KEY,
	worker_bits		int NOT NULL,
	lease_ms		int NOT NULL,
	clients			int NOT NULL,
	renew_seconds	float8 NOT NULL,	/* pgbench -T */
	renew_ticks		bigint NOT NULL,	/* coordinator CPU over the renewals */
	standby_ticks	bigint NOT NULL,	/* its standby's, same interval */
	sim_ticks		bigint NOT NULL,	/* pgbench's own */
	herd_cap_s		float8 NOT NULL,
	herd_until		timestamptz NOT NULL,
	herd_granted	bigint NOT NULL,	/* counted in the leases table */
	clk_tck			int NOT NULL		/* clock ticks per second of the ticks */
);

/* The grant-cost comparison: one pgbench log phase per pool and batch. */
CREATE TABLE grant_batch (
	pool			int NOT NULL,
	batch			int NOT NULL,
	phase			text NOT NULL,
	held_before		int NOT NULL
);

/*
 * Every figure of one N.  The demand is the renewal rate N nodes need: each
 * renews every third of the lease.  A renewal counts as sustained when it
 * completed; the CPU is per completed renewal.  The herd's time is from the
 * first grant's start to the last one's end, when all N were granted within
 * the time limit; otherwise the rate it reached gives an estimate.
 */
CREATE VIEW run_figures AS
SELECT r.nodes,
	   r.worker_bits,
	   r.nodes / (r.lease_ms / 3000.0) AS demand_per_s,
	   (re.transactions - re.dropped) / r.renew_seconds AS sustained_per_s,
	   (re.transactions - re.dropped) / r.renew_seconds / (r.nodes / (r.lease_ms / 3000.0)) AS sustained_ratio,
	   re.transactions AS renewals_sent,
	   re.dropped AS renewals_dropped,
	   re.late AS renewals_late,
	   re.p50_ms AS renew_p50_ms,
	   re.p99_ms AS renew_p99_ms,
	   re.p99_ms / r.lease_ms AS renew_p99_per_lease,
	   re.max_ms AS renew_max_ms,
	   r.renew_ticks::float8 / r.clk_tck / NULLIF(re.transactions - re.dropped, 0) * 1000 AS cpu_ms_per_renewal,
	   r.renew_ticks::float8 / r.clk_tck / r.renew_seconds AS coordinator_cores,
	   r.standby_ticks::float8 / r.clk_tck / r.renew_seconds AS standby_cores,
	   r.sim_ticks::float8 / r.clk_tck / r.renew_seconds AS simulator_cores,
	   r.herd_granted,
	   h.transactions AS herd_logged,
	   h.p50_ms AS grant_p50_ms,
	   h.p99_ms AS grant_p99_ms,
	   extract(epoch FROM h.last_end - h.first_start) AS herd_span_s,
	   CASE WHEN r.herd_granted >= r.nodes THEN extract(epoch FROM h.last_end - h.first_start) END AS herd_s,
	   r.nodes / NULLIF(h.transactions / NULLIF(extract(epoch FROM h.last_end - h.first_start), 0), 0) AS herd_estimate_s,
	   r.herd_cap_s,
	   r.lease_ms,
	   r.clients,
	   r.renew_seconds
  FROM run r,
	   LATERAL latency_summary('renew' || r.nodes, p_limit_ms => r.lease_ms / 5.0) re,
	   LATERAL latency_summary('herd' || r.nodes, r.clients, r.nodes, r.herd_until) h;

/* The grant-cost comparison, per pool. */
CREATE VIEW grant_figures AS
SELECT b.pool,
	   count(*) AS grants,
	   min(b.held_before)::float8 / b.pool AS held_min,
	   percentile_disc(0.5) WITHIN GROUP (ORDER BY t.latency_ms) AS p50_ms,
	   percentile_disc(0.99) WITHIN GROUP (ORDER BY t.latency_ms) AS p99_ms
  FROM grant_batch b
  JOIN pgbench_tx t ON t.phase = b.phase
 GROUP BY b.pool;
