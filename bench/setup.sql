-- The candidates and the measuring functions, loaded into each of the
-- benchmark's throwaway servers by bench/run.sh (psql -f, from bench/).

CREATE EXTENSION snowid;
CREATE EXTENSION snowid_bench_noop;

-- nextval() on a plain sequence is the baseline (CACHE 1, as bigserial and
-- identity columns get); CACHE 100 shows what a per-backend cache buys.
CREATE SEQUENCE bench_seq;
CREATE SEQUENCE bench_seq_cache100 CACHE 100;

\ir instagram.sql

-- Every figure: one row per repetition.  bench/report.sql sums them up.
CREATE TABLE bench_raw (
	section text NOT NULL,
	candidate text NOT NULL,
	form text NOT NULL DEFAULT '',
	metric text NOT NULL,
	rep int NOT NULL,
	value float8
);

-- One row per session of a concurrent run (section 3).
CREATE TABLE bench_session_raw (
	candidate text NOT NULL,
	sessions int NOT NULL,
	rep int NOT NULL,
	pid int,
	n bigint,
	first_id bigint,
	last_id bigint,
	started float8,				-- Unix seconds
	secs float8,
	cpu_ticks bigint			-- utime + stime, in clock ticks
);

-- What a job of sections 1 and 2 runs: a query that returns the number of
-- ids it made.
CREATE TABLE bench_job (
	section text NOT NULL,
	candidate text NOT NULL,
	form text NOT NULL,
	n int NOT NULL,
	query text NOT NULL
);

-- CPU time this backend has used so far, in clock ticks (utime + stime,
-- fields 14 and 15 of /proc/<pid>/stat).
CREATE FUNCTION bench_cpu_ticks() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
	SELECT f[12]::bigint + f[13]::bigint
	  FROM (SELECT string_to_array(
					regexp_replace(pg_read_file('/proc/' || pg_backend_pid() || '/stat'),
								   '^.*\) ', ''), ' ') AS f) s
$$;

-- Milliseconds since the layout's epoch in an id.
CREATE FUNCTION bench_id_ms(bigint) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
	SELECT extract(epoch FROM snowid_timestamp($1::snowid)) * 1000
$$;

-- Run one query that makes ids and returns how many.  The two ids the
-- same session takes right before and right after it bracket the ids the
-- query made, so N / (last - first) of their timestamps is the generator's
-- own rate, with no per-row aggregate slowing the query down.
CREATE FUNCTION bench_run(q text, bracket bool,
						  OUT n bigint, OUT secs float8, OUT cpu_ticks bigint,
						  OUT first_id bigint, OUT last_id bigint,
						  OUT started float8)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	c0 bigint;
	t0 timestamptz;
	t1 timestamptz;
BEGIN
	c0 := bench_cpu_ticks();
	IF bracket THEN
		first_id := snowid_nextval();
	END IF;
	t0 := clock_timestamp();
	EXECUTE q INTO n;
	t1 := clock_timestamp();
	IF bracket THEN
		last_id := snowid_nextval();
	END IF;
	cpu_ticks := bench_cpu_ticks() - c0;
	secs := extract(epoch FROM t1 - t0);
	started := extract(epoch FROM t0);
END;
$$;

-- Run the jobs of a section "reps" times, interleaved: every repetition
-- runs each candidate once, starting one further along the list each time.
-- Snowid candidates also record the span rate of their ids.
CREATE FUNCTION bench_jobs(sec text, reps int) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	jobs bench_job[];
	j bench_job;
	k int;
	r record;
	snowid_job bool;
BEGIN
	SELECT array_agg(b ORDER BY candidate, form) INTO jobs
	  FROM bench_job b WHERE section = sec;
	FOR rep IN 1..reps LOOP
		FOR i IN 0..cardinality(jobs) - 1 LOOP
			j := jobs[1 + (i + rep) % cardinality(jobs)];
			snowid_job := j.candidate LIKE 'snowid%';
			r := bench_run(replace(j.query, ':N', j.n::text), snowid_job);
			IF r.n <> j.n THEN
				RAISE EXCEPTION 'job % % made % ids, not %', j.candidate, j.form, r.n, j.n;
			END IF;
			INSERT INTO bench_raw VALUES
				(sec, j.candidate, j.form, 'ids_per_s', rep, r.n / r.secs),
				(sec, j.candidate, j.form, 'ns_per_id', rep, r.secs * 1e9 / r.n);
			IF snowid_job THEN
				INSERT INTO bench_raw VALUES
					(sec, j.candidate, j.form, 'span_ids_per_ms', rep,
					 r.n / (bench_id_ms(r.last_id) - bench_id_ms(r.first_id)));
			END IF;
		END LOOP;
	END LOOP;
END;
$$;

-- One session of a concurrent run: wait for the common start time, then
-- run the query (bracketed by snowid ids if asked), and say how much CPU
-- this backend used.
CREATE FUNCTION bench_session(q text, start_at float8, bracket bool,
							  OUT pid int, OUT n bigint,
							  OUT first_id bigint, OUT last_id bigint,
							  OUT started float8, OUT secs float8,
							  OUT cpu_ticks bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	r record;
BEGIN
	PERFORM pg_sleep(greatest(start_at - extract(epoch FROM clock_timestamp()), 0));
	r := bench_run(q, bracket);
	pid := pg_backend_pid();
	n := r.n;
	first_id := r.first_id;
	last_id := r.last_id;
	started := r.started;
	secs := r.secs;
	cpu_ticks := r.cpu_ticks;
END;
$$;

-- Section 6: load n rows into a fresh table keyed by a candidate's default;
-- the load time, and the sizes of the primary key index and the table.
CREATE FUNCTION bench_load(cand text, coldef text, n int,
						   OUT secs float8, OUT index_bytes bigint,
						   OUT table_bytes bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	t0 timestamptz;
BEGIN
	EXECUTE 'DROP TABLE IF EXISTS bench_load_t';
	EXECUTE format('CREATE TABLE bench_load_t (id %s PRIMARY KEY)', coldef);
	t0 := clock_timestamp();
	EXECUTE format('INSERT INTO bench_load_t SELECT FROM generate_series(1, %s)', n);
	secs := extract(epoch FROM clock_timestamp() - t0);
	index_bytes := pg_relation_size('bench_load_t_pkey');
	table_bytes := pg_relation_size('bench_load_t');
	EXECUTE 'DROP TABLE bench_load_t';
END;
$$;

-- Section 5: one table per candidate, keyed by its default.
CREATE TABLE pgb_bigserial (id bigserial PRIMARY KEY);
CREATE TABLE pgb_identity (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY);
CREATE TABLE pgb_snowid (id snowid PRIMARY KEY DEFAULT snowid_nextval());
CREATE TABLE pgb_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid());
CREATE TABLE pgb_instagram (id bigint PRIMARY KEY DEFAULT bench_insta_next_id());
-- PostgreSQL 18 and later: the server's native uuidv7().
SELECT current_setting('server_version_num')::int >= 180000 AS has_uuidv7 \gset
\if :has_uuidv7
CREATE TABLE pgb_uuidv7 (id uuid PRIMARY KEY DEFAULT uuidv7());
\endif

-- Section 3: the duplicate check.
CREATE UNLOGGED TABLE bench_dup (id bigint);
