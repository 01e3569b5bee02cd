--
-- Taking snowids apart and building them from parts, with the default
-- layout: 41 timestamp bits, 10 worker bits (no region bits), 12 sequence
-- bits, epoch 2025-01-01 00:00:00 UTC.
--
--   id = (milliseconds since epoch << 22) | (worker << 12) | sequence
--
-- The last millisecond the layout can express is epoch + 2^41 - 1 ms,
-- 2094-09-07 15:47:35.551 UTC.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- What a statement gives, or its SQLSTATE and message.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE stmt INTO result;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

SHOW snowid.epoch;
SHOW snowid.worker_bits;
SHOW snowid.region_bits;
SHOW snowid.sequence_bits;

-- The functions, their results and markings: pure, strict, parallel safe.
SELECT p.oid::pg_catalog.regprocedure AS function,
	pg_catalog.format_type(p.prorettype, NULL) AS returns,
	p.provolatile, p.proisstrict, p.proparallel
FROM pg_catalog.pg_proc p
WHERE p.proname IN ('snowid_timestamp', 'snowid_worker', 'snowid_region',
	'snowid_sequence', 'snowid_decode', 'snowid_from_parts', 'snowid_from_time')
ORDER BY 1::text;

--
-- Decoding, at the edges of every field.
--
SELECT id, (snowid_decode(id)).*,
	snowid_timestamp(id) AS ts, snowid_worker(id) AS w,
	snowid_region(id) AS r, snowid_sequence(id) AS s
FROM (VALUES
	('0'::snowid),				-- everything zero
	('1'),						-- lowest sequence bit
	('4095'),					-- sequence all ones
	('4096'),					-- lowest worker bit
	('2097152'),				-- highest worker bit: 512 << 12
	('4190208'),				-- worker all ones: 1023 << 12
	('4194303'),				-- worker and sequence all ones
	('4194304'),				-- lowest timestamp bit: 1 ms
	('4611686018427387904'),	-- highest timestamp bit: 2^40 ms
	('9223372036850581504'),	-- timestamp all ones
	('9223372036854775807'),	-- every bit
	('59983986329409537')		-- 2025-06-15 12:34:56.789, worker 517, sequence 2049
	) AS v(id)
ORDER BY id;

-- The record form has named columns.
SELECT * FROM snowid_decode('59983986329409537');
SELECT d."timestamp", d.worker, d.region, d.sequence
FROM snowid_decode('4194303') AS d;
-- NULL in, NULL out.
SELECT snowid_timestamp(NULL), snowid_worker(NULL), snowid_sequence(NULL),
	snowid_decode(NULL) IS NULL AS decode_null,
	snowid_from_parts(NULL, 1, 1), snowid_from_parts('2025-01-01', NULL, 1),
	snowid_from_time(NULL);

--
-- Building ids from parts, at the edges of every field.
--
SELECT snowid_from_parts('2025-01-01 00:00:00+00', 0, 0) AS zero,
	snowid_from_parts('2025-01-01 00:00:00+00', 0, 4095) AS max_sequence,
	snowid_from_parts('2025-01-01 00:00:00+00', 1023, 0) AS max_worker,
	snowid_from_parts('2025-01-01 00:00:00.001+00', 0, 0) AS one_ms,
	snowid_from_parts('2094-09-07 15:47:35.551+00', 1023, 4095) AS max_id;
SELECT snowid_from_parts('2025-06-15 12:34:56.789+00', 517, 2049);
-- The same time written in another zone is the same id.
SELECT snowid_from_parts('2025-06-15 14:34:56.789+02', 517, 2049);
-- Microseconds are dropped: an id counts milliseconds.
SELECT snowid_from_parts('2025-01-01 00:00:00.000999+00', 0, 0) AS still_zero,
	snowid_from_parts('2025-01-01 00:00:00.001999+00', 0, 1) AS one_ms_seq_1,
	snowid_from_parts('2094-09-07 15:47:35.551999+00', 1023, 4095) AS last_us;

-- Round trips: parts -> id -> parts, for every combination of edge values.
CREATE TABLE edges AS
SELECT t.ts, w.w, s.s, snowid_from_parts(t.ts, w.w, s.s) AS id
FROM (VALUES ('2025-01-01 00:00:00+00'::timestamptz),
		('2025-01-01 00:00:00.001+00'), ('2025-01-01 00:00:01+00'),
		('2025-06-15 12:34:56.789+00'), ('2059-11-04 19:53:47.776+00'),
		('2094-09-07 15:47:35.55+00'), ('2094-09-07 15:47:35.551+00')) AS t(ts),
	(VALUES (0), (1), (511), (512), (1022), (1023)) AS w(w),
	(VALUES (0), (1), (2047), (2048), (4094), (4095)) AS s(s);
SELECT count(*) AS combinations,
	count(DISTINCT id) AS distinct_ids,
	count(*) FILTER (WHERE snowid_timestamp(id) <> ts
		OR snowid_worker(id) <> w OR snowid_sequence(id) <> s
		OR snowid_region(id) <> 0
		OR snowid_decode(id) IS DISTINCT FROM ROW(ts, w, 0, s)) AS wrong_parts,
	count(*) FILTER (WHERE id::bigint <> (((floor(extract(epoch FROM ts) * 1000)::bigint
		- 1735689600000) << 22) | (w::bigint << 12) | s)) AS wrong_bits
FROM edges;
-- Ids sort as their parts do: by time, then worker, then sequence.
SELECT count(*) AS out_of_order
FROM (SELECT id, lag(id) OVER (ORDER BY ts, w, s) AS prev FROM edges) AS x
WHERE prev >= id;
-- id -> parts -> id, for ids all over the range.
SELECT count(*) AS ids,
	count(*) FILTER (WHERE snowid_from_parts(d."timestamp", d.worker, d.sequence) <> v.id)
		AS not_round_tripping
FROM (SELECT ((g::numeric * 9223372036854775807 / 9973)::bigint)::snowid AS id
	  FROM generate_series(0, 9973) g) AS v,
	LATERAL snowid_decode(v.id) AS d;
DROP TABLE edges;

--
-- Bad parts: 22003, and the detail says what the range is.
--
SELECT pg_temp.try(stmt) AS result, stmt
FROM (VALUES
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', -1, 0)'),
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', 1024, 0)'),
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', 2147483647, 0)'),
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', -2147483648, 0)'),
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', 0, -1)'),
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', 0, 4096)'),
	('SELECT snowid_from_parts(''2025-01-01 00:00:00+00'', 0, 2147483647)'),
	('SELECT snowid_from_parts(''2024-12-31 23:59:59.999999+00'', 0, 0)'),
	('SELECT snowid_from_parts(''1970-01-01 00:00:00+00'', 0, 0)'),
	('SELECT snowid_from_parts(''4713-01-01 00:00:00+00 BC'', 0, 0)'),
	('SELECT snowid_from_parts(''2094-09-07 15:47:35.552+00'', 0, 0)'),
	('SELECT snowid_from_parts(''294276-12-31 23:59:59.999999+00'', 0, 0)'),
	('SELECT snowid_from_parts(''infinity'', 0, 0)'),
	('SELECT snowid_from_parts(''-infinity'', 0, 0)')) AS v(stmt);
-- The errors in full.
SELECT snowid_from_parts('2025-01-01 00:00:00+00', 1024, 0);
SELECT snowid_from_parts('2025-01-01 00:00:00+00', 0, -1);
SELECT snowid_from_parts('2024-12-31 23:59:59.999+00', 0, 0);
SELECT snowid_from_parts('2094-09-07 15:47:35.552+00', 0, 0);
SELECT snowid_from_parts('infinity', 0, 0);

--
-- snowid_from_time: the lowest id of a millisecond.
--
SELECT snowid_from_time('2025-01-01 00:00:00+00') AS epoch,
	snowid_from_time('2025-01-01 00:00:00.000999+00') AS epoch_plus_999us,
	snowid_from_time('2025-01-01 00:00:00.001+00') AS one_ms,
	snowid_from_time('2025-06-15 12:34:56.789+00') AS some_time,
	snowid_from_time('2094-09-07 15:47:35.551999+00') AS last_ms;
SELECT snowid_from_time(ts) = snowid_from_parts(ts, 0, 0) AS same,
	snowid_decode(snowid_from_time(ts))
FROM (VALUES ('2025-01-01 00:00:00+00'::timestamptz),
	('2030-02-03 04:05:06.789123+00'), ('2094-09-07 15:47:35.551+00')) AS v(ts);
-- Every id of a millisecond lies in [from_time(t), from_time(t + 1 ms)).
SELECT snowid_from_time('2025-06-15 12:34:56.789+00') <= snowid_from_parts('2025-06-15 12:34:56.789+00', 0, 0)
	AND snowid_from_parts('2025-06-15 12:34:56.789+00', 1023, 4095) < snowid_from_time('2025-06-15 12:34:56.790+00')
	AS brackets;
SELECT snowid_from_time('2025-06-15 12:34:56.790+00')::bigint
	- snowid_from_time('2025-06-15 12:34:56.789+00')::bigint AS ids_per_ms;
SELECT pg_temp.try(stmt) AS result, stmt
FROM (VALUES
	('SELECT snowid_from_time(''2024-12-31 23:59:59.999999+00'')'),
	('SELECT snowid_from_time(''2000-01-01 00:00:00+00'')'),
	('SELECT snowid_from_time(''2094-09-07 15:47:35.552+00'')'),
	('SELECT snowid_from_time(''infinity'')'),
	('SELECT snowid_from_time(''-infinity'')')) AS v(stmt);
SELECT snowid_from_time('2024-12-31 23:59:59.999+00');
SELECT snowid_from_time('-infinity');

--
-- Range scans over time, expression indexes and generated columns (which
-- need the decoding functions to be IMMUTABLE).
--
CREATE TABLE events (id snowid PRIMARY KEY,
	at timestamptz GENERATED ALWAYS AS (snowid_timestamp(id)) STORED);
INSERT INTO events (id)
SELECT snowid_from_parts('2025-03-01 00:00:00+00'::timestamptz + g * interval '1 minute',
	g % 1024, g % 4096)
FROM generate_series(0, 9999) g;
CREATE INDEX events_worker ON events (snowid_worker(id));
ANALYZE events;
SELECT count(*) FROM events WHERE at <> snowid_timestamp(id);
SELECT count(*) FROM events
WHERE id >= snowid_from_time('2025-03-01 01:00:00+00')
	AND id < snowid_from_time('2025-03-01 02:00:00+00');
SELECT min(at), max(at) FROM events
WHERE id >= snowid_from_time('2025-03-01 01:00:00+00')
	AND id < snowid_from_time('2025-03-01 02:00:00+00');
EXPLAIN (COSTS OFF) SELECT * FROM events
WHERE id >= snowid_from_time('2025-03-01 01:00:00+00')
	AND id < snowid_from_time('2025-03-01 02:00:00+00');
EXPLAIN (COSTS OFF) SELECT * FROM events WHERE snowid_worker(id) = 7;
SELECT count(*) FROM events WHERE snowid_worker(id) = 7;
DROP TABLE events;
