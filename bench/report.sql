-- One PostgreSQL major's part of bench/results/REPORT.md from the figures
-- of its run (bench_raw and bench_session_raw on server a), and the data
-- files bench/plot.gp draws.  Run by bench/major.sh with psql -At and the
-- variables pgversion, runtime, clk_tck, quick, load_rows, pgb_seconds,
-- load_before and load_after.

\set QUIET on
\pset footer off

-- Median, spread and count of every figure.
CREATE TEMP VIEW s AS
SELECT section, candidate, form, metric,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS med,
	   min(value) AS lo, max(value) AS hi, count(*) AS reps
  FROM bench_raw
 GROUP BY 1, 2, 3, 4;

CREATE FUNCTION pg_temp.med(sec text, cand text, frm text, met text) RETURNS float8
LANGUAGE sql STABLE AS $$
	SELECT med FROM s WHERE section = sec AND candidate = cand AND form = frm AND metric = met
$$;

-- A number with thousands separators and "digits" decimals.
CREATE FUNCTION pg_temp.num(x float8, digits int DEFAULT 0) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN x IS NULL THEN '–'
		   ELSE trim(to_char(round(x::numeric, digits),
					 'FM999,999,999,999,990' || CASE WHEN digits > 0 THEN '.' || repeat('0', digits) ELSE '' END))
		   END
$$;

-- "median (min–max)"
CREATE FUNCTION pg_temp.spread(sec text, cand text, frm text, met text, digits int DEFAULT 0, scale float8 DEFAULT 1)
RETURNS text LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN reps > 1
		   THEN pg_temp.num(med * scale, digits) || ' (' || pg_temp.num(lo * scale, digits) || '–' || pg_temp.num(hi * scale, digits) || ')'
		   ELSE pg_temp.num(med * scale, digits) END
	  FROM s WHERE section = sec AND candidate = cand AND form = frm AND metric = met
$$;

-- A candidate's figure as a ratio to a baseline's: the median of the
-- ratios within each repetition, where both ran minutes apart at most.
CREATE FUNCTION pg_temp.rel(sec text, cand text, frm text, met text, base text, base_frm text)
RETURNS float8 LANGUAGE sql STABLE AS $$
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY a.value / b.value)
	  FROM bench_raw a
	  JOIN bench_raw b ON b.section = a.section AND b.metric = a.metric AND b.rep = a.rep
					  AND b.candidate = base AND b.form = base_frm
	 WHERE a.section = sec AND a.candidate = cand AND a.form = frm AND a.metric = met
	   AND b.value <> 0
$$;

CREATE FUNCTION pg_temp.fmt_ratio(x float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN x IS NULL THEN '–' ELSE to_char(x, 'FM999,990.00') END
$$;

CREATE FUNCTION pg_temp.ratio(x float8, base float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE WHEN x IS NULL OR base IS NULL OR base = 0 THEN '–'
		   ELSE to_char(x / base, 'FM999,990.00') END
$$;

-- The cap of server a's layout, ids per millisecond.
CREATE TEMP TABLE cap AS SELECT 4096::float8 AS per_ms;

-- Whether a candidate ran (uuidv7() only on PostgreSQL 18 and later).
CREATE FUNCTION pg_temp.ran(cand text) RETURNS bool
LANGUAGE sql STABLE AS $$
	SELECT EXISTS (SELECT 1 FROM bench_raw WHERE candidate = cand)
$$;

-- Section 3, per run: combined id-timestamp span rate; CPU per session.
CREATE TEMP VIEW conc_run AS
SELECT sessions, rep,
	   sum(n) / (max(bench_id_ms(last_id)) - min(bench_id_ms(first_id))) AS span_per_ms
  FROM bench_session_raw WHERE candidate = 'snowid_nextval()' GROUP BY 1, 2;
CREATE TEMP VIEW conc AS
SELECT c.sessions,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY c.span_per_ms) AS span_med,
	   min(c.span_per_ms) AS span_lo, max(c.span_per_ms) AS span_hi,
	   (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ticks::float8 / :clk_tck / secs)
		  FROM bench_session_raw r WHERE r.candidate = 'snowid_nextval()' AND r.sessions = c.sessions) AS cpu_med,
	   (SELECT max(cpu_ticks::float8 / :clk_tck / secs)
		  FROM bench_session_raw r WHERE r.candidate = 'snowid_nextval()' AND r.sessions = c.sessions) AS cpu_max
  FROM conc_run c GROUP BY 1;

-- Section 2: net cost per call (per repetition, against the no-op of the
-- same repetition), then the median.
CREATE TEMP VIEW net AS
SELECT g.candidate,
	   percentile_cont(0.5) WITHIN GROUP (ORDER BY g.value - o.value) AS med,
	   min(g.value - o.value) AS lo, max(g.value - o.value) AS hi
  FROM bench_raw g
  JOIN bench_raw o ON o.section = 'uncapped' AND o.metric = 'ns_per_id' AND o.rep = g.rep
	   AND o.candidate = CASE WHEN g.candidate LIKE 'nextval%' THEN 'no-op C function (regclass)'
							  ELSE 'no-op C function' END
 WHERE g.section = 'uncapped' AND g.metric = 'ns_per_id' AND g.candidate NOT LIKE 'no-op%'
 GROUP BY 1;

CREATE TEMP TABLE targets (ord int, target text, measured float8, goal text, met bool);
INSERT INTO targets
SELECT 1, 'one session, id-timestamp span rate (`snowid_nextval()`, streaming form)',
	   med / cap.per_ms, '≥ 0.95 × cap', med / cap.per_ms >= 0.95
  FROM s, cap WHERE section = 'single' AND candidate = 'snowid_nextval()' AND form = 'stream' AND metric = 'span_ids_per_ms'
UNION ALL
SELECT 2, 'generator''s own cost, net of the no-op (uncapped layout)',
	   (SELECT med FROM net WHERE candidate = 'snowid_nextval()') /
	   (SELECT med FROM net WHERE candidate = 'nextval() CACHE 1'),
	   '≤ 0.20 × `nextval()`', NULL
UNION ALL
SELECT 3, 'instructions per `snowid_nextval()` call (callgrind)',
	   pg_temp.med('callgrind', 'snowid_nextval()', '', 'instructions_per_call'), '≤ ~150', NULL
UNION ALL
SELECT 4, '2 sessions, combined id-timestamp span rate', span_med / cap.per_ms, '≥ 0.95 × cap', span_med / cap.per_ms >= 0.95
  FROM conc, cap WHERE sessions = 2
UNION ALL
SELECT 5, '4 sessions, combined id-timestamp span rate', span_med / cap.per_ms, '≥ 0.95 × cap', span_med / cap.per_ms >= 0.95
  FROM conc, cap WHERE sessions = 4
UNION ALL
SELECT 6, 'duplicates among ' || pg_temp.num(sum(value) FILTER (WHERE metric = 'dup_checked_ids')) || ' ids from 2 and 4 concurrent sessions',
	   sum(value) FILTER (WHERE metric = 'duplicates'), '0', sum(value) FILTER (WHERE metric = 'duplicates') = 0
  FROM bench_raw WHERE section = 'concurrent' AND metric IN ('duplicates', 'dup_checked_ids')
UNION ALL
SELECT 7, 'CPU of a capped session (median; 2 sessions)', cpu_med, '≤ 0.50 of a core', cpu_med <= 0.5
  FROM conc WHERE sessions = 2
UNION ALL
SELECT 8, 'CPU of a capped session (median; 4 sessions)', cpu_med, '≤ 0.50 of a core', cpu_med <= 0.5
  FROM conc WHERE sessions = 4
UNION ALL
SELECT 9, '`SELECT snowid_generate(1000000)`, id-timestamp span rate',
	   med / cap.per_ms, '≥ 0.95 × cap', med / cap.per_ms >= 0.95
  FROM s, cap WHERE section = 'single' AND candidate = 'snowid_generate(n)' AND form = 'stream' AND metric = 'span_ids_per_ms'
UNION ALL
SELECT 10 + c::int, 'pgbench inserts, ' || c || ' client' || CASE WHEN c = '1' THEN '' ELSE 's' END || ': snowid / bigserial TPS',
	   pg_temp.rel('pgbench', 'snowid', c, 'tps', 'bigserial', c),
	   '≥ 0.97', pg_temp.rel('pgbench', 'snowid', c, 'tps', 'bigserial', c) >= 0.97
  FROM unnest(ARRAY['1', '2', '8']) c
UNION ALL
SELECT 20 + c::int, 'pgbench inserts, ' || c || ' client' || CASE WHEN c = '1' THEN '' ELSE 's' END || ': snowid / uuid v4 TPS',
	   pg_temp.rel('pgbench', 'snowid', c, 'tps', 'uuid', c),
	   '≥ 1', pg_temp.rel('pgbench', 'snowid', c, 'tps', 'uuid', c) >= 1
  FROM unnest(ARRAY['1', '2', '8']) c
UNION ALL
SELECT 30, 'primary key index size: snowid / bigserial',
	   pg_temp.rel('load', 'snowid', '', 'index_bytes', 'bigserial', ''),
	   '≤ 1.05', pg_temp.rel('load', 'snowid', '', 'index_bytes', 'bigserial', '') <= 1.05
UNION ALL
SELECT 31, 'primary key index size: snowid / uuid v4',
	   pg_temp.rel('load', 'snowid', '', 'index_bytes', 'uuid', ''),
	   '≤ 0.60', pg_temp.rel('load', 'snowid', '', 'index_bytes', 'uuid', '') <= 0.60;
UPDATE targets SET met = measured <= 0.2 WHERE ord = 2;
UPDATE targets SET met = measured <= 150 WHERE ord = 3;

-- Issue 11's expectations for PostgreSQL 18's native uuidv7(), stated
-- before the run so that its figures can refute them.  Combined ids/s:
-- all the sessions' ids over the wall time from the first start to the
-- last end (section 3).  Only where uuidv7() ran.
CREATE TEMP TABLE expect (ord int, expectation text, measured float8, expected text, held bool);
INSERT INTO expect
SELECT k, '`snowid_nextval()`, ' || k || ' session' || CASE WHEN k = 1 THEN '' ELSE 's' END ||
	   ': combined ids/s ÷ the cap (4,096,000/s)',
	   pg_temp.med('concurrent', 'snowid_nextval()', k::text, 'ids_per_s') / (cap.per_ms * 1000),
	   '≥ 0.95 (at the cap)',
	   pg_temp.med('concurrent', 'snowid_nextval()', k::text, 'ids_per_s') / (cap.per_ms * 1000) >= 0.95
  FROM cap, unnest(ARRAY[1, 2, 4]) k
 WHERE pg_temp.ran('uuidv7()')
UNION ALL
SELECT 10 + k, 'native `uuidv7()`, ' || k || ' session' || CASE WHEN k = 1 THEN '' ELSE 's' END ||
	   ': combined ids/s ÷ the cap (4,096,000/s)',
	   pg_temp.med('concurrent', 'uuidv7()', k::text, 'ids_per_s') / (cap.per_ms * 1000),
	   '< 1 (below the cap)',
	   pg_temp.med('concurrent', 'uuidv7()', k::text, 'ids_per_s') / (cap.per_ms * 1000) < 1
  FROM cap, unnest(ARRAY[1, 2, 4]) k
 WHERE pg_temp.ran('uuidv7()')
UNION ALL
SELECT 20, 'primary key index size after ' || pg_temp.num(:load_rows) || ' rows: snowid / `uuidv7()`',
	   pg_temp.rel('load', 'snowid', '', 'index_bytes', 'uuidv7', ''),
	   '≤ 0.60', pg_temp.rel('load', 'snowid', '', 'index_bytes', 'uuidv7', '') <= 0.60
 WHERE pg_temp.ran('uuidv7');

-- The report, in three parts that bench/run.sh puts together (and the
-- summary also into README.md).
\o report-head.md
SELECT '## PostgreSQL ' || :'pgversion' || E'\n\n' ||
	   CASE WHEN :'quick' = '1' THEN '**A short trial run (BENCH_QUICK=1): fewer repetitions and smaller loads; not the figures to quote.**' || E'\n\n' ELSE '' END ||
	   '* This major''s part of the run: ' || :'runtime' || ' s; load average ' || :'load_before' || ' before it, ' || :'load_after' || ' after it' ||
	   CASE WHEN split_part(:'load_before', ' ', 1)::float8 > 0.5 OR split_part(:'load_after', ' ', 1)::float8 > 2
			THEN ' (**other work was running: the figures are noisier than on a quiet machine**)' ELSE '' END || E'\n' ||
	   '* Two throwaway servers on loopback: **a** with the default layout ' ||
	   '(41/10/12 bits: 4,096 ids per ms), **b** with an uncapped one (41/4/18 bits: 262,144 ids per ms). ' ||
	   'Both: `synchronous_commit = off`, no autovacuum or checkpoint during the run, `work_mem = 256MB`.' || E'\n' ||
	   '* Every figure is the median of its repetitions, with the spread (min–max) in brackets; ' ||
	   'the candidates run interleaved (each repetition runs every candidate once, in a rotating order). ' ||
	   '“×” columns are ratios to the baseline measured in the same run: the median of the ratios within each repetition.' || E'\n' ||
	   '* Every repetition is in `raw-' || split_part(:'pgversion', '.', 1) || '.csv` and `sessions-' ||
	   split_part(:'pgversion', '.', 1) || '.csv` beside this file.';

\o report-summary.md
SELECT E'\n**At a glance** (ratios to the baseline of the same run, medians over the repetitions; the absolute figures and their spreads are in REPORT.md, sections 1–7)\n\n' ||
	   '| candidate | one session: ids/s × `nextval()` | 4 sessions: ids/s × `nextval()` | pgbench inserts, 8 clients: TPS × bigserial | PK index size × bigserial | load time × bigserial |' || E'\n' ||
	   '|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s |', label,
			  CASE WHEN single IS NULL THEN '–'
				   ELSE pg_temp.fmt_ratio(pg_temp.rel('single', single, 'stream', 'ids_per_s', 'nextval() CACHE 1', 'stream')) END,
			  CASE WHEN single IS NULL THEN '–'
				   ELSE pg_temp.fmt_ratio(pg_temp.rel('concurrent', single, '4', 'ids_per_s', 'nextval() CACHE 1', '4')) END,
			  CASE WHEN tab IS NULL THEN '–'
				   ELSE pg_temp.fmt_ratio(pg_temp.rel('pgbench', tab, '8', 'tps', 'bigserial', '8')) END,
			  CASE WHEN tab IS NULL THEN '–'
				   ELSE pg_temp.fmt_ratio(pg_temp.rel('load', tab, '', 'index_bytes', 'bigserial', '')) END,
			  CASE WHEN tab IS NULL THEN '–'
				   ELSE pg_temp.fmt_ratio(pg_temp.rel('load', tab, '', 'secs', 'bigserial', '')) END)
  FROM (VALUES (1, 'sequence `nextval()` / bigserial (baseline)', 'nextval() CACHE 1', 'bigserial'),
			   (2, 'identity column (`nextval()`)', NULL, 'identity'),
			   (3, 'sequence `nextval()`, CACHE 100', 'nextval() CACHE 100', NULL),
			   (4, '**`snowid_nextval()`**', 'snowid_nextval()', 'snowid'),
			   (5, '**`snowid_generate(n)`**', 'snowid_generate(n)', NULL),
			   (6, '`gen_random_uuid()` (uuid v4)', 'gen_random_uuid()', 'uuid'),
			   (7, 'Instagram-style PL/pgSQL', 'Instagram PL/pgSQL', 'instagram'),
			   (8, 'native `uuidv7()` (PostgreSQL 18)', 'uuidv7()', 'uuidv7')) v(o, label, single, tab)
 WHERE single IS NULL OR pg_temp.ran(single)
 ORDER BY o;

SELECT E'\n**Targets** (issue 5)\n\n| target | measured | goal | |\n|---|---|---|---|';
SELECT format('| %s | %s | %s | %s |', target,
			  CASE WHEN ord = 6 THEN pg_temp.num(measured)
				   WHEN ord = 3 THEN pg_temp.num(measured, 0)
				   ELSE to_char(measured, 'FM999,990.000') END,
			  goal, CASE WHEN met THEN 'met' WHEN met IS NULL THEN '–' ELSE '**missed**' END)
  FROM targets ORDER BY ord;

SELECT E'\n**Expectations** (issue 11, stated before the run; native `uuidv7()` is C and per-backend monotonic)\n\n' ||
	   '| expectation | measured | expected | |' || E'\n' || '|---|---|---|---|'
 WHERE EXISTS (SELECT 1 FROM expect);
SELECT format('| %s | %s | %s | %s |', expectation, to_char(measured, 'FM999,990.000'), expected,
			  CASE WHEN held THEN 'held' WHEN held IS NULL THEN '–' ELSE '**refuted**' END)
  FROM expect ORDER BY ord;

-- 1. One session.
\o report-details.md
SELECT E'\n### 1. One session, ids per second\n\n' ||
	   'Streaming form: `SELECT count(g) FROM (SELECT <gen> AS g, generate_series(1, N)) s`; ' ||
	   'FROM form: `SELECT count(g) FROM (SELECT <gen> AS g FROM generate_series(1, N)) s` ' ||
	   '(generate_series writes its rows to a tuplestore first). For `snowid_generate(n)`: ' ||
	   '`SELECT count(g) FROM (SELECT snowid_generate(N) AS g) s` and `SELECT count(g) FROM snowid_generate(N) g`, N = 1,000,000. ' ||
	   'Server a (capped at 4,096,000 ids/s). Baseline: `nextval()` on a CACHE 1 sequence, the same form.' || E'\n\n' ||
	   '| candidate | streaming: ids/s | × nextval() | FROM: ids/s | × nextval() |' || E'\n' ||
	   '|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s |', c,
			  pg_temp.spread('single', c, 'stream', 'ids_per_s'),
			  pg_temp.fmt_ratio(pg_temp.rel('single', c, 'stream', 'ids_per_s', 'nextval() CACHE 1', 'stream')),
			  pg_temp.spread('single', c, 'from', 'ids_per_s'),
			  pg_temp.fmt_ratio(pg_temp.rel('single', c, 'from', 'ids_per_s', 'nextval() CACHE 1', 'from')))
  FROM unnest(ARRAY['nextval() CACHE 1', 'nextval() CACHE 100', 'snowid_nextval()', 'snowid_generate(n)',
					'gen_random_uuid()', 'uuidv7()', 'Instagram PL/pgSQL', 'no-op C function']) WITH ORDINALITY AS u(c, o)
 WHERE pg_temp.ran(c)
 ORDER BY o;
SELECT E'\nThe generator''s own rate, from the timestamps inside its ids: N / (last − first), where first and last ' ||
	   'are the ids the same session takes right before and right after the query (so no per-row aggregate slows it).' || E'\n\n' ||
	   '| candidate | form | id-timestamp span: ids/ms | × cap (4,096) | × nextval() (same form) |' || E'\n' ||
	   '|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s |', c, f,
			  pg_temp.spread('single', c, f, 'span_ids_per_ms'),
			  pg_temp.ratio(pg_temp.med('single', c, f, 'span_ids_per_ms'), cap.per_ms),
			  pg_temp.ratio(pg_temp.med('single', c, f, 'span_ids_per_ms') * 1000, pg_temp.med('single', 'nextval() CACHE 1', f, 'ids_per_s')))
  FROM cap, unnest(ARRAY['snowid_nextval()', 'snowid_generate(n)']) WITH ORDINALITY AS u(c, o),
	   unnest(ARRAY['stream', 'from']) WITH ORDINALITY AS v(f, p)
 ORDER BY o, p;

-- 2. Own cost.
SELECT E'\n### 2. The generator''s own cost (server b, uncapped layout)\n\n' ||
	   'Streaming form, ns per call; net = minus a no-op C function of the same shape in the same repetition ' ||
	   '(`bench_noop()` for snowid, `bench_noop(regclass)` for `nextval(regclass)`), so the executor''s and fmgr''s cost cancels. ' ||
	   'Instructions: callgrind, inclusive cost of the C function (`snowid_nextval`, `nextval_oid`, on 18 `uuidv7`) per call over ' ||
	   'one backend''s calls; under valgrind `clock_gettime()` is a system call (about 10 instructions instead of the vDSO''s ~70).' || E'\n\n' ||
	   '| candidate | ns per call | net ns per call | × nextval() net | instructions per call | × nextval() |' || E'\n' ||
	   '|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s |', c,
			  pg_temp.spread('uncapped', c, 'stream', 'ns_per_id', 1),
			  CASE WHEN n.med IS NULL THEN '–' ELSE pg_temp.num(n.med, 1) || ' (' || pg_temp.num(n.lo, 1) || '–' || pg_temp.num(n.hi, 1) || ')' END,
			  pg_temp.ratio(n.med, (SELECT med FROM net WHERE candidate = 'nextval() CACHE 1')),
			  pg_temp.num(pg_temp.med('callgrind', c, '', 'instructions_per_call'), 0),
			  pg_temp.fmt_ratio(pg_temp.rel('callgrind', c, '', 'instructions_per_call', 'nextval() CACHE 1', '')))
  FROM unnest(ARRAY['nextval() CACHE 1', 'nextval() CACHE 100', 'snowid_nextval()', 'no-op C function',
					'no-op C function (regclass)', 'uuidv7()']) WITH ORDINALITY AS u(c, o)
  LEFT JOIN net n ON n.candidate = c
 WHERE pg_temp.ran(c)
 ORDER BY o;

-- 3. Concurrent sessions.
SELECT E'\n### 3. Concurrent sessions (server a, capped)\n\n' ||
	   'k sessions start together, each streaming one candidate for its share of the ids ' ||
	   '(`SELECT count(g) FROM (SELECT <gen> AS g, generate_series(1, N / k)) s`). ' ||
	   'Combined ids/s: all their ids over the wall time from the earliest start to the latest end of their queries; ' ||
	   'baseline: `nextval()` on a CACHE 1 sequence at as many sessions. ' ||
	   'The cap of the default layout is 4,096,000 ids/s.' || E'\n\n' ||
	   '| candidate | 1 session: ids/s | × nextval() | × cap | 2 sessions: ids/s | × nextval() | × cap | 4 sessions: ids/s | × nextval() | × cap |' || E'\n' ||
	   '|---|---|---|---|---|---|---|---|---|---|';
SELECT format('| %s |', c) ||
	   string_agg(format(' %s | %s | %s |',
						 pg_temp.spread('concurrent', c, k::text, 'ids_per_s'),
						 pg_temp.fmt_ratio(pg_temp.rel('concurrent', c, k::text, 'ids_per_s', 'nextval() CACHE 1', k::text)),
						 pg_temp.ratio(pg_temp.med('concurrent', c, k::text, 'ids_per_s'), cap.per_ms * 1000)), '' ORDER BY k)
  FROM cap, unnest(ARRAY['nextval() CACHE 1', 'snowid_nextval()', 'uuidv7()']) WITH ORDINALITY AS u(c, o),
	   unnest(ARRAY[1, 2, 4]) k
 WHERE pg_temp.ran(c)
 GROUP BY c, o ORDER BY o;
SELECT E'\nFor `snowid_nextval()`, from the timestamps inside its ids: ' ||
	   'combined span rate: all their ids / (latest last − earliest first). CPU: utime + stime of each backend ' ||
	   '(/proc/<pg_backend_pid()>/stat) over its query''s wall time. CAS retries and exhaustion waits from `snowid_stats`, per run.' || E'\n\n' ||
	   '| sessions | combined span: ids/ms | × cap | CPU per session (median, max) | CAS retries per run | exhaustion waits per run |' || E'\n' ||
	   '|---|---|---|---|---|---|';
SELECT format('| %s | %s (%s–%s) | %s | %s, %s | %s | %s |', sessions,
			  pg_temp.num(span_med), pg_temp.num(span_lo), pg_temp.num(span_hi),
			  pg_temp.ratio(span_med, cap.per_ms),
			  to_char(cpu_med * 100, 'FM990') || '%', to_char(cpu_max * 100, 'FM990') || '%',
			  pg_temp.spread('concurrent', 'snowid_nextval()', sessions::text, 'cas_retries'),
			  pg_temp.spread('concurrent', 'snowid_nextval()', sessions::text, 'exhaustion_waits'))
  FROM conc, cap ORDER BY sessions;
SELECT E'\nDuplicate check: ' || string_agg(format('%s sessions inserted %s ids, %s duplicates',
			  form, pg_temp.num(sum_ids), pg_temp.num(sum_dups)), '; ' ORDER BY form) || '.'
  FROM (SELECT form, sum(value) FILTER (WHERE metric = 'dup_checked_ids') AS sum_ids,
			   sum(value) FILTER (WHERE metric = 'duplicates') AS sum_dups
		  FROM bench_raw WHERE section = 'concurrent' AND metric IN ('duplicates', 'dup_checked_ids')
		 GROUP BY form) d;

-- 4. snowid_generate.
SELECT E'\n### 4. `snowid_generate(1000000)` (server a)\n\n' ||
	   '| form | ids/s | × nextval() (same form) | id-timestamp span: ids/ms | × cap |' || E'\n' ||
	   '|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s |',
			  CASE f WHEN 'stream' THEN '`SELECT snowid_generate(n)`' ELSE '`FROM snowid_generate(n)` (a tuplestore first)' END,
			  pg_temp.spread('single', 'snowid_generate(n)', f, 'ids_per_s'),
			  pg_temp.fmt_ratio(pg_temp.rel('single', 'snowid_generate(n)', f, 'ids_per_s', 'nextval() CACHE 1', f)),
			  pg_temp.spread('single', 'snowid_generate(n)', f, 'span_ids_per_ms'),
			  pg_temp.ratio(pg_temp.med('single', 'snowid_generate(n)', f, 'span_ids_per_ms'), cap.per_ms))
  FROM cap, unnest(ARRAY['stream', 'from']) WITH ORDINALITY AS v(f, p) ORDER BY p;

-- 5. pgbench.
SELECT E'\n### 5. Concurrent inserts (pgbench, server a)\n\n' ||
	   '`INSERT INTO t DEFAULT VALUES` with the key defaulting to each candidate, `pgbench -n -M prepared -T ' || :pgb_seconds || ' -c <clients> -j <≤ 2>`, ' ||
	   'tables truncated before each run. TPS; baseline: bigserial.' || E'\n\n' ||
	   '| key default | 1 client | × bigserial | 2 clients | × bigserial | 8 clients | × bigserial |' || E'\n' ||
	   '|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s |',
			  CASE c WHEN 'bigserial' THEN 'bigserial (`nextval()`)' WHEN 'identity' THEN 'identity (`nextval()`)'
					 WHEN 'snowid' THEN '`snowid_nextval()`' WHEN 'uuid' THEN '`gen_random_uuid()` (uuid v4)'
					 WHEN 'uuidv7' THEN 'native `uuidv7()`' ELSE 'Instagram PL/pgSQL' END,
			  pg_temp.spread('pgbench', c, '1', 'tps'),
			  pg_temp.fmt_ratio(pg_temp.rel('pgbench', c, '1', 'tps', 'bigserial', '1')),
			  pg_temp.spread('pgbench', c, '2', 'tps'),
			  pg_temp.fmt_ratio(pg_temp.rel('pgbench', c, '2', 'tps', 'bigserial', '2')),
			  pg_temp.spread('pgbench', c, '8', 'tps'),
			  pg_temp.fmt_ratio(pg_temp.rel('pgbench', c, '8', 'tps', 'bigserial', '8')))
  FROM unnest(ARRAY['bigserial', 'identity', 'snowid', 'uuid', 'instagram', 'uuidv7']) WITH ORDINALITY AS u(c, o)
 WHERE pg_temp.ran(c)
 ORDER BY o;

-- 6. Index locality.
SELECT E'\n### 6. Index locality (server a)\n\n' ||
	   'One `INSERT INTO t SELECT FROM generate_series(1, ' || pg_temp.num(:load_rows) || ')` ' ||
	   'per candidate into a fresh table keyed by its default; load time, primary key index and table size.' || E'\n\n' ||
	   '| key default | load s | × bigserial | index MB | × bigserial | × uuid v4 | table MB |' || E'\n' ||
	   '|---|---|---|---|---|---|---|';
SELECT format('| %s | %s | %s | %s | %s | %s | %s |', c,
			  pg_temp.spread('load', c, '', 'secs', 2),
			  pg_temp.fmt_ratio(pg_temp.rel('load', c, '', 'secs', 'bigserial', '')),
			  pg_temp.num(pg_temp.med('load', c, '', 'index_bytes') / 1048576, 1),
			  pg_temp.fmt_ratio(pg_temp.rel('load', c, '', 'index_bytes', 'bigserial', '')),
			  pg_temp.fmt_ratio(pg_temp.rel('load', c, '', 'index_bytes', 'uuid', '')),
			  pg_temp.num(pg_temp.med('load', c, '', 'table_bytes') / 1048576, 1))
  FROM unnest(ARRAY['bigserial', 'identity', 'snowid', 'uuid', 'instagram', 'uuidv7']) WITH ORDINALITY AS u(c, o)
 WHERE pg_temp.ran(c)
 ORDER BY o;

-- 7. Shared memory.
SELECT E'\n### 7. Shared memory\n\n' ||
	   'The extension''s allocation (`pg_shmem_allocations`, name `snowid`): one fixed part and one statistics slot per PGPROC.' || E'\n\n' ||
	   '| server | max_connections | size (bytes) | allocated (bytes) |' || E'\n' ||
	   '|---|---|---|---|';
SELECT format('| %s | %s | %s | %s |', CASE WHEN mc = 100 THEN 'a' ELSE 'b' END, mc,
			  pg_temp.num(sz), pg_temp.num(al))
  FROM (SELECT max(value) FILTER (WHERE metric = 'max_connections') AS mc,
			   max(value) FILTER (WHERE metric = 'size') AS sz,
			   max(value) FILTER (WHERE metric = 'allocated_size') AS al
		  FROM bench_raw WHERE section = 'shmem' GROUP BY form) x
 ORDER BY mc;
SELECT E'\nEach extra connection adds ' ||
	   pg_temp.num((max(sz) - min(sz)) / (max(mc) - min(mc)), 0) ||
	   ' bytes; the rest (' || pg_temp.num(min(sz) - min(mc) * (max(sz) - min(sz)) / (max(mc) - min(mc)), 0) ||
	   ' bytes at max_connections 0, which still has slots for background and auxiliary processes) is fixed.'
  FROM (SELECT max(value) FILTER (WHERE metric = 'max_connections') AS mc,
			   max(value) FILTER (WHERE metric = 'size') AS sz
		  FROM bench_raw WHERE section = 'shmem' GROUP BY form) x;

SELECT E'\n![snowid benchmark, PostgreSQL ' || split_part(:'pgversion', '.', 1) || '](bench-' ||
	   split_part(:'pgversion', '.', 1) || '.png)';

-- Data for plot.gp: ratio to the baseline, one line per candidate.
\pset fieldsep '\t'
\o plot_single.dat
SELECT c,
	   pg_temp.rel('single', c, 'stream', 'ids_per_s', 'nextval() CACHE 1', 'stream'),
	   pg_temp.rel('single', c, 'from', 'ids_per_s', 'nextval() CACHE 1', 'from')
  FROM unnest(ARRAY['nextval() CACHE 1', 'nextval() CACHE 100', 'snowid_nextval()', 'snowid_generate(n)',
					'gen_random_uuid()', 'uuidv7()', 'Instagram PL/pgSQL']) WITH ORDINALITY AS u(c, o)
 WHERE pg_temp.ran(c)
 ORDER BY o;
\o plot_pgbench.dat
SELECT c,
	   pg_temp.rel('pgbench', c, '1', 'tps', 'bigserial', '1'),
	   pg_temp.rel('pgbench', c, '2', 'tps', 'bigserial', '2'),
	   pg_temp.rel('pgbench', c, '8', 'tps', 'bigserial', '8')
  FROM unnest(ARRAY['bigserial', 'identity', 'snowid', 'uuid', 'instagram', 'uuidv7']) WITH ORDINALITY AS u(c, o)
 WHERE pg_temp.ran(c)
 ORDER BY o;
\o plot_load.dat
SELECT c,
	   pg_temp.rel('load', c, '', 'index_bytes', 'bigserial', ''),
	   pg_temp.rel('load', c, '', 'secs', 'bigserial', '')
  FROM unnest(ARRAY['bigserial', 'identity', 'snowid', 'uuid', 'instagram', 'uuidv7']) WITH ORDINALITY AS u(c, o)
 WHERE pg_temp.ran(c)
 ORDER BY o;
\o plot_cost.dat
SELECT c, n.med, pg_temp.med('callgrind', c, '', 'instructions_per_call')
  FROM unnest(ARRAY['snowid_nextval()', 'nextval() CACHE 100', 'nextval() CACHE 1']) WITH ORDINALITY AS u(c, o)
  JOIN net n ON n.candidate = c
 ORDER BY o;
\o
