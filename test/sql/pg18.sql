--
-- What PostgreSQL 18 adds, as snowid uses it.  The Makefile runs this file
-- on 18 and later only.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;

-- PG_MODULE_MAGIC_EXT: the preloaded library names itself and its version,
-- which is the extension's default version.
SELECT module_name, version, file_name
FROM pg_get_loaded_modules() WHERE module_name = 'snowid';
SELECT m.version = e.default_version AS version_matches_control
FROM pg_get_loaded_modules() AS m, pg_available_extensions AS e
WHERE m.module_name = 'snowid' AND e.name = 'snowid';

-- snowid_uuidv7() next to the built-in uuidv7(): both are version 7 and
-- read the same millisecond with either function.
SELECT uuid_extract_version(snowid_uuidv7()) AS ours,
	uuid_extract_version(uuidv7()) AS builtin;
SELECT bool_and(snowid_uuidv7_timestamp(u) = uuid_extract_timestamp(u)) AS same_ms_ours
FROM (SELECT snowid_uuidv7() AS u FROM generate_series(1, 1000)) s;
SELECT bool_and(snowid_uuidv7_timestamp(u) = uuid_extract_timestamp(u)) AS same_ms_builtin
FROM (SELECT uuidv7() AS u FROM generate_series(1, 1000)) s;

-- Generated in turn in one session, ours and theirs sort together in the
-- order they were made (each is monotonic, and both lead with the
-- millisecond; the built-in's 12 bits after it are a sub-millisecond
-- fraction, ours a counter, so only the millisecond is compared).
CREATE TEMP TABLE mixed (n int, src text, u uuid);
DO $$
BEGIN
	FOR i IN 1..2000 LOOP
		INSERT INTO mixed VALUES (2 * i - 1, 'ours', snowid_uuidv7());
		INSERT INTO mixed VALUES (2 * i, 'builtin', uuidv7());
	END LOOP;
END
$$;
-- each strictly increasing on its own
SELECT src, bool_and(u > prev) AS strictly_increasing
FROM (SELECT src, u, lag(u) OVER (PARTITION BY src ORDER BY n) AS prev FROM mixed) s
WHERE prev IS NOT NULL GROUP BY src ORDER BY src;
-- and their milliseconds never go back across the two
SELECT bool_and(uuid_extract_timestamp(u) >= uuid_extract_timestamp(prev)) AS ms_in_order
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM mixed) s
WHERE prev IS NOT NULL;

-- uuidv7(interval) shifts the time; snowid_uuidv7_timestamp reads it.
SELECT snowid_uuidv7_timestamp(uuidv7(interval '-1 day')) < now() - interval '23 hours' AS shifted;

-- COPY ... ON_ERROR ignore (17 on) skips rows whose snowid is malformed,
-- through the soft input errors of snowid_in.
CREATE TEMP TABLE copied (id snowid);
COPY copied FROM STDIN (ON_ERROR ignore);
1
12x
9223372036854775808
3
\.
SELECT * FROM copied ORDER BY id;
