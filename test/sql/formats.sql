--
-- Formats for the outside world: compact base32 text, keyed public ids,
-- UUIDv7.
--
-- test/snowid.conf sets snowid.public_id_keys_file = 'snowid_public_id_keys'
-- (relative to the data directory); this suite writes that file itself.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- What a statement gives: its result as text, or SQLSTATE and message.
CREATE FUNCTION pg_temp.try(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE query INTO result;
	RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- The same with the error's detail.
CREATE FUNCTION pg_temp.try_detail(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
	detail text;
BEGIN
	EXECUTE query INTO result;
	RETURN coalesce(result, 'NULL');
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || ' / ' || coalesce(nullif(detail, ''), '(no detail)');
END
$$;

-- Ids that look random, the same at every run.
CREATE TEMP TABLE some_ids AS
SELECT g AS n,
	(('x' || substr(md5(g::text), 1, 16))::bit(64)::bigint
		& 9223372036854775807)::snowid AS id
FROM generate_series(1, 10000) g;

-- Markings: the formats are IMMUTABLE, public ids depend on the key file.
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
	AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'snowid'
WHERE p.proname IN ('snowid_to_base32', 'snowid_from_base32',
	'snowid_to_public', 'snowid_from_public',
	'snowid_uuidv7', 'snowid_uuidv7_timestamp')
ORDER BY 1;

--
-- Compact base32 text.
--
SELECT id, snowid_to_base32(id::snowid) AS base32,
	snowid_from_base32(snowid_to_base32(id::snowid)) = id::snowid AS round_trip
FROM (VALUES (0), (1), (31), (32), (1023), (1024), (4294967295),
	(4294967296), (252764451642540032), (9223372036854775806),
	(9223372036854775807)) AS v(id);

-- Every id round-trips, always in 13 characters, and text order (C
-- collation, and the database's) is id order.
SELECT bool_and(snowid_from_base32(snowid_to_base32(id)) = id) AS round_trip,
	min(length(snowid_to_base32(id))) AS min_len,
	max(length(snowid_to_base32(id))) AS max_len,
	array_agg(id ORDER BY snowid_to_base32(id) COLLATE "C") =
		array_agg(id ORDER BY id) AS c_order,
	array_agg(id ORDER BY snowid_to_base32(id)) =
		array_agg(id ORDER BY id) AS default_order
FROM some_ids;

-- Accepted spellings: lower case, I and L for 1, O for 0, hyphens anywhere.
SELECT pg_catalog.format('%L', input) AS input,
	pg_temp.try(pg_catalog.format('SELECT snowid_from_base32(%L)', input)) AS result
FROM (VALUES ('0000000000001'), ('000000000000i'), ('000000000000I'),
	('000000000000l'), ('000000000000L'), ('o00000000000O'),
	('7zzzzzzzzzzzz'), ('7ZZZ-ZZZZ-ZZZZZ'), ('-0000000000001-'),
	('0-0-0-0-0-0-0-0-0-0-0-0-1'), ('----07-0fzx-qw00000'),
	('0bcdefghjkmnp'), ('0QRSTVWXYZ012')) AS v(input);

-- Refused: other characters (22P02), other lengths (22P02), above 2^63-1
-- (22003).
SELECT pg_catalog.format('%L', input) AS input,
	pg_temp.try(pg_catalog.format('SELECT snowid_from_base32(%L)', input)) AS result
FROM (VALUES (''), ('-'), ('---'), ('000000000000'), ('00000000000000'),
	('000000000000U'), ('000000000000u'), ('000000000000*'),
	('000000000000~'), ('000000000000$'), ('000000000000='),
	(' 0000000000001'), ('0000000000001 '), (E'000000000000\t1'),
	('000000000000_1'), ('0000000000001#'), ('000000000000é'),
	('00000000000.1'), ('+000000000001'), ('8000000000000'),
	('80000-00000000'), ('ZZZZZZZZZZZZZ'), ('G000000000000'),
	('7ZZZZZZZZZZZZZ'), ('1234')) AS v(input);
-- One of each kind with its detail.
SELECT pg_temp.try_detail($$SELECT snowid_from_base32('000000000000U')$$);
SELECT pg_temp.try_detail($$SELECT snowid_from_base32('000000000000')$$);
SELECT pg_temp.try_detail($$SELECT snowid_from_base32('8000000000000')$$);
SELECT snowid_from_base32(NULL) IS NULL AS strict;

--
-- Keyed public ids.  First without the key file.
--
SELECT pg_temp.try_detail('SELECT snowid_to_public(1::snowid)') AS no_file;
SELECT pg_temp.try($$SELECT snowid_from_public('1407PC3AEQTZN7')$$) AS no_file;

-- The key file: version 1 (32 bytes), then version 2 (64 bytes, the
-- newest, because it is on the last line).  COPY TO a file makes it
-- readable by everyone, which is refused.
CREATE TEMP TABLE key_file (n int, line text);
INSERT INTO key_file VALUES
	(1, '# snowid public id keys (test)'),
	(2, ''),
	(3, '1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'),
	(4, '  2 : 404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f  ');
DO $$
BEGIN
	EXECUTE pg_catalog.format(
		'COPY (SELECT line FROM key_file ORDER BY n) TO %L',
		current_setting('data_directory') || '/snowid_public_id_keys');
END
$$;
SELECT pg_temp.try_detail('SELECT snowid_to_public(1::snowid)') AS world_readable;
-- A shell command in the data directory makes it u=rw only.
COPY (SELECT 1) TO PROGRAM 'cat >/dev/null && chmod 600 snowid_public_id_keys';

-- Known answers (computed independently from the documented
-- construction): 10 HMAC-SHA-256 rounds over "snw1" || round || half.
SELECT id, snowid_to_public(id::snowid) AS public,
	snowid_from_public(snowid_to_public(id::snowid)) = id::snowid AS round_trip
FROM (VALUES (0), (1), (2), (252764451642540032),
	(9223372036854775807)) AS v(id);

-- Ids made with the older key (version 1) still decode.
SELECT input, snowid_from_public(input) AS id
FROM (VALUES ('1407PC3AEQTZN7'), ('16RFWRK9X23H52'), ('14M64Z5FD98NK3'),
	('13QYNG2AYHCQ0F'), ('166X1BM0YANQ9N')) AS v(input);

-- Every id round-trips; public ids are 14 characters, all of key 2, all
-- different, and not in id order.
SELECT bool_and(snowid_from_public(p) = id) AS round_trip,
	min(length(p)) AS min_len, max(length(p)) AS max_len,
	bool_and(p LIKE '2%') AS newest_key,
	count(DISTINCT p) AS distinct_public,
	array_agg(id ORDER BY p COLLATE "C") = array_agg(id ORDER BY id) AS id_order
FROM (SELECT id, snowid_to_public(id) AS p FROM some_ids) s;

-- Neighbouring ids give unrelated public ids: of consecutive ids, the
-- public ids share few leading characters.
SELECT max(common) <= 4 AS unrelated
FROM (SELECT (SELECT count(*) FROM generate_series(1, 14) i
			WHERE substr(a, 1, i) = substr(b, 1, i)) AS common
	FROM (SELECT snowid_to_public(g::snowid) AS a,
			snowid_to_public((g + 1)::snowid) AS b
		FROM generate_series(252764451642540032, 252764451642540032 + 200) g) s) t;

-- Accepted spellings of one public id.
SELECT pg_catalog.format('%L', input) AS input,
	pg_temp.try(pg_catalog.format('SELECT snowid_from_public(%L)', input)) AS result
FROM (VALUES ('13QYNG2AYHCQ0F'), ('13qyng2ayhcq0f'), ('13QY-NG2A-YHCQ-0F'),
	('-13QYNG2AYHCQ0F-')) AS v(input);

-- Refused, all with 22P02: other characters, other lengths, a second
-- character above 7, a key version not in the file.  A changed character
-- of a valid public id decodes to some other id (it authorises nothing).
SELECT pg_catalog.format('%L', input) AS input,
	pg_temp.try(pg_catalog.format('SELECT snowid_from_public(%L)', input)) AS result
FROM (VALUES (''), ('-'), ('13QYNG2AYHCQ0'), ('13QYNG2AYHCQ0FQ'),
	('13QYNG2AYHCQ0U'), ('13QYNG2AYHCQ0!'), (' 13QYNG2AYHCQ0F'),
	('13QYNG2AYHCQ0 Q'), ('18QYNG2AYHCQ0F'), ('1ZZZZZZZZZZZZZ'),
	('33QYNG2AYHCQ0F'), ('Z3QYNG2AYHCQ0F'), ('03QYNG2AYHCQ0F'),
	('13QYNG2AYHCQ0R'), ('23QYNG2AYHCQ0F')) AS v(input);
-- One of each kind with its detail.
SELECT pg_temp.try_detail($$SELECT snowid_from_public('13QYNG2AYHCQ0!')$$);
SELECT pg_temp.try_detail($$SELECT snowid_from_public('13QYNG2AYHCQ0')$$);
SELECT pg_temp.try_detail($$SELECT snowid_from_public('18QYNG2AYHCQ0F')$$);
SELECT pg_temp.try_detail($$SELECT snowid_from_public('Z3QYNG2AYHCQ0F')$$);
SELECT snowid_from_public(NULL) IS NULL AS strict,
	snowid_to_public(NULL) IS NULL AS strict;

--
-- UUIDv7.
--
CREATE TEMP TABLE uuids AS
SELECT n, snowid_uuidv7() AS u FROM generate_series(1, 20000) n;

-- Version 7, RFC 9562 variant, the current millisecond, strictly
-- increasing in the order they were made (20000 span several ms of
-- counter), all distinct.
SELECT bool_and(substr(u::text, 15, 1) = '7') AS version_7,
	bool_and(substr(u::text, 20, 1) IN ('8', '9', 'a', 'b')) AS variant,
	bool_and(snowid_uuidv7_timestamp(u) BETWEEN now() - interval '1 minute'
		AND clock_timestamp() + interval '1 second') AS current_time,
	count(DISTINCT u) AS distinct_uuids,
	count(*) FILTER (WHERE u <= prev) AS not_increasing
FROM (SELECT u, lag(u) OVER (ORDER BY n) AS prev FROM uuids) s;

-- Timestamps of known UUIDs: the example of RFC 9562 (2022-02-22 19:22:22
-- UTC), the first and the last millisecond of the format.
SELECT u, snowid_uuidv7_timestamp(u)
FROM (VALUES ('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'::uuid),
	('00000000-0000-7000-8000-000000000000'),
	('ffffffff-ffff-7fff-bfff-ffffffffffff')) AS v(u);

-- Not version 7: 22023.
SELECT u, pg_temp.try(pg_catalog.format('SELECT snowid_uuidv7_timestamp(%L)', u)) AS result
FROM (VALUES ('00000000-0000-0000-0000-000000000000'::uuid),
	('ffffffff-ffff-ffff-ffff-ffffffffffff'),
	('017f22e2-79b0-4cc3-98c4-dc0c0c07398f'),
	('017f22e2-79b0-6cc3-98c4-dc0c0c07398f'),
	('017f22e2-79b0-8cc3-98c4-dc0c0c07398f'),
	('017f22e2-79b0-7cc3-08c4-dc0c0c07398f'),
	('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f')) AS v(u);
SELECT pg_temp.try_detail('SELECT snowid_uuidv7_timestamp(gen_random_uuid())') AS v4;
SELECT pg_temp.try_detail($$SELECT snowid_uuidv7_timestamp('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f')$$) AS variant;
SELECT snowid_uuidv7_timestamp(NULL) IS NULL AS strict;
