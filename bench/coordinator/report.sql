-- bench/results/coordinator/REPORT.md from one run of make
-- bench-coordinator (the views of analysis.sql, in bench_report).  Run by
-- bench/coordinator.sh with psql -At and the variables quick, when,
-- machine, pgversion, commit, coordinator_version, load_before, load_after, runtime, clients and
-- batch.  The part between the summary markers goes into README.md.

\set QUIET on
\pset footer off

-- A number with thousands separators and "digits" decimals.
CREATE FUNCTION pg_temp.num(x float8, digits int DEFAULT 0) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN x IS NULL THEN '–'
		   WHEN x = 'Infinity' THEN '∞'
		   ELSE trim(to_char(round(x::numeric, digits),
					 'FM999,999,999,999,990' || CASE WHEN digits > 0 THEN '.' || repeat('0', digits) ELSE '' END))
		   END
$$;

-- A latency: ms below a second, else s; a dropped one (infinite) says so.
CREATE FUNCTION pg_temp.lat(ms float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN ms IS NULL THEN '–'
		   WHEN ms = 'Infinity' THEN 'dropped (> lease/5)'
		   WHEN ms < 10 THEN pg_temp.num(ms, 2) || ' ms'
		   WHEN ms < 1000 THEN pg_temp.num(ms, 1) || ' ms'
		   ELSE pg_temp.num(ms / 1000, 2) || ' s'
		   END
$$;

-- A ratio with enough digits to read.
CREATE FUNCTION pg_temp.ratio(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN x IS NULL THEN '–'
		   WHEN x = 'Infinity' THEN '∞'
		   WHEN abs(x) >= 10 THEN pg_temp.num(x, 1)
		   WHEN abs(x) >= 0.1 THEN pg_temp.num(x, 2)
		   WHEN x = 0 THEN '0'
		   ELSE pg_temp.num(x, ceil(-log(abs(x)::numeric))::int + 1)	/* two digits */
		   END
$$;

-- Every figure once (each row sorts its phases' latencies).
CREATE TEMP TABLE f AS SELECT * FROM run_figures;

CREATE TEMP VIEW g AS
SELECT (SELECT p50_ms FROM grant_figures WHERE pool = 1024) AS small,
	   (SELECT p50_ms FROM grant_figures WHERE pool = 65536) AS large;

-- The largest measured N whose renewals kept up with p99 below a tenth of
-- the lease, and what the highest sustained rate would carry.
CREATE TEMP VIEW carried AS
SELECT max(nodes) FILTER (WHERE sustained_ratio >= 0.95 AND renewals_dropped = 0
						  AND renew_p99_ms < lease_ms / 10.0) AS measured,
	   bool_or(sustained_ratio < 0.95) AS saturated,
	   max(sustained_per_s) AS best_rate,
	   max(sustained_per_s) FILTER (WHERE sustained_ratio < 0.95) * min(lease_ms) / 3000.0 AS estimate,
	   min(lease_ms) AS lease_ms
  FROM f;

SELECT '# make bench-coordinator: what one coordinator carries'
	   || CASE WHEN :quick = 1 THEN ' (BENCH_QUICK=1: a short trial run, N = 1,000 only)' ELSE '' END;
SELECT '';
SELECT '<!-- summary:begin -->';
SELECT format('Latest run: %s, %s s, %s (load average before the run: %s; after: %s), tree %s, snowid_coordinator %s, %s.',
			  :'when', :'runtime', :'machine', :'load_before', :'load_after', :'commit',
			  :'coordinator_version', split_part(:'pgversion', ' on ', 1));
SELECT '';
SELECT format('One coordinator (a primary with a synchronous streaming standby, synchronous_commit = on, both on this machine); lease %s s, so every node renews every %s s. pgbench plays the nodes with the keeper''s own statements over TCP on 127.0.0.1, from %s connections, **on the same 2 cores as the coordinator**. The demand is the renewal rate N nodes need (N / 10 s); renewals arrive at that rate (Poisson), and one more than a fifth of the lease late (when the keeper gives up a call) is dropped and counts as infinitely late. Grant latencies are the herd''s: N nodes restarting at once, %s at a time. CPU is every process of the coordinator''s primary, from /proc.',
			  min(lease_ms) / 1000, min(lease_ms) / 3000, :'clients', :'clients')
  FROM f;
SELECT '';
SELECT '| nodes N | pool (worker ids) | demand (renewals/s) | sustained / demand | renewal p50 | renewal p99 | p99 / lease | grant p50 / p99 (herd) | herd: all N granted in | herd / lease | CPU per renewal | coordinator cores at demand |';
SELECT '|---|---|---|---|---|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s ms | %s of 2 |',
			  pg_temp.num(nodes), pg_temp.num(1 << worker_bits), pg_temp.num(demand_per_s),
			  pg_temp.ratio(sustained_ratio), pg_temp.lat(renew_p50_ms), pg_temp.lat(renew_p99_ms),
			  pg_temp.ratio(renew_p99_per_lease),
			  pg_temp.lat(grant_p50_ms), pg_temp.lat(grant_p99_ms),
			  CASE WHEN herd_s IS NOT NULL THEN pg_temp.num(herd_s, 1) || ' s'
				   ELSE format('not within %s s: %s granted; ~%s s at that rate', pg_temp.num(herd_cap_s),
							   pg_temp.num(herd_granted), pg_temp.num(herd_estimate_s)) END,
			  pg_temp.ratio(COALESCE(herd_s, herd_estimate_s) * 1000 / lease_ms)
				  || CASE WHEN herd_s IS NULL THEN ' (est.)' ELSE '' END,
			  pg_temp.num(cpu_ms_per_renewal, 2),
			  pg_temp.ratio(cpu_ms_per_renewal * demand_per_s / 1000))
  FROM f ORDER BY nodes;
SELECT '';
SELECT CASE WHEN measured IS NULL
			THEN format('**Largest N carried** with renewal p99 below a tenth of the lease (%s s): none of the N measured', pg_temp.num(lease_ms / 10000.0, 1))
			ELSE format('**Largest N carried** with renewal p99 below a tenth of the lease (%s s): %s of the N measured', pg_temp.num(lease_ms / 10000.0, 1), pg_temp.num(measured)) END
	   || CASE WHEN saturated
			   THEN format('; the renewals saturated at %s/s, which at one renewal per node every %s s would be at most ~%s nodes (an upper bound: at saturation the p99 is not below a tenth of the lease).',
						   pg_temp.num(estimate * 3000.0 / lease_ms), lease_ms / 3000, pg_temp.num(round(estimate::numeric, -2)))
			   ELSE format('; no N measured saturated the renewals (the highest rate sustained was %s/s).', pg_temp.num(best_rate)) END
  FROM carried;
SELECT '';
SELECT format('**Grant cost against the pool** (99%% of the pool held, every grant to a node that never held a lease, %s batches of %s alternating between the pools): median grant %s with 1,024 worker ids, %s with 65,536: **%s×** (target: at most 1.5×).',
			  (SELECT count(DISTINCT batch) FROM grant_batch), :'batch',
			  pg_temp.lat(small), pg_temp.lat(large), pg_temp.ratio(large / small))
  FROM g;
SELECT '';
SELECT '| target (issue 13) | measured | goal | |';
SELECT '|---|---|---|---|';
SELECT format('| median grant, 65,536-id pool / 1,024-id pool (99%% held) | %s | ≤ 1.5 | %s |',
			  pg_temp.ratio(large / small), CASE WHEN large / small <= 1.5 THEN 'met' ELSE 'not met' END)
  FROM g;
SELECT format('| 10,000 nodes, %s s lease: renewal p99 | %s | < 3 s | %s |', lease_ms / 1000,
			  pg_temp.lat(renew_p99_ms),
			  CASE WHEN renew_p99_ms < 3000 AND sustained_ratio >= 0.95 THEN 'met' ELSE 'not met' END)
  FROM f WHERE nodes = 10000;
SELECT '<!-- summary:end -->';
SELECT '';
SELECT '## Renewals, per N';
SELECT '';
SELECT format('Each N: %s s of renewals, after seeding the pool with N held leases.', pg_temp.num(min(renew_seconds))) FROM f;
SELECT '';
SELECT '| nodes N | sent | dropped (lag > lease/5) | completed but slower than lease/5 | renewals/s sustained | max latency | coordinator cores | standby cores | simulator (pgbench) cores |';
SELECT '|---|---|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s |',
			  pg_temp.num(nodes), pg_temp.num(renewals_sent), pg_temp.num(renewals_dropped),
			  pg_temp.num(renewals_late), pg_temp.num(sustained_per_s, 1), pg_temp.lat(renew_max_ms),
			  pg_temp.ratio(coordinator_cores), pg_temp.ratio(standby_cores), pg_temp.ratio(simulator_cores))
  FROM f ORDER BY nodes;
SELECT '';
SELECT '## The thundering herd, per N';
SELECT '';
SELECT format('Every node shuts down cleanly (releases its lease), then all N start again at once with new tokens and ask for a grant, %s at a time, each from its own name (so the coordinator prefers its last worker id); at most %s s.', :'clients', pg_temp.num(min(herd_cap_s))) FROM f;
SELECT '';
SELECT '| nodes N | granted | within the limit | first start to last grant | grants/s | grant p50 | grant p99 |';
SELECT '|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s s | %s | %s | %s |',
			  pg_temp.num(nodes), pg_temp.num(herd_granted),
			  CASE WHEN herd_s IS NOT NULL THEN 'all' ELSE format('no (%s s)', pg_temp.num(herd_cap_s)) END,
			  pg_temp.num(herd_span_s, 1), pg_temp.num(herd_logged / NULLIF(herd_span_s, 0), 1),
			  pg_temp.lat(grant_p50_ms), pg_temp.lat(grant_p99_ms))
  FROM f ORDER BY nodes;
SELECT '';
SELECT '## Grant cost against the pool';
SELECT '';
SELECT '| pool (worker ids) | grants | held before a batch (least) | median grant | p99 |';
SELECT '|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s |', pg_temp.num(pool), pg_temp.num(grants),
			  to_char(held_min * 100, 'FM990.0') || '%', pg_temp.lat(p50_ms), pg_temp.lat(p99_ms))
  FROM grant_figures ORDER BY pool;
