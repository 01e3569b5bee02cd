--
-- Operators and operator classes of snowid: comparison with snowid and
-- bigint, btree (with the cross-type members), hash and BRIN indexes,
-- sorting, grouping, joins and hash partitioning.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- The operators the extension defines, with their properties.
SELECT o.oprname AS op,
	pg_catalog.format_type(o.oprleft, NULL) AS "left",
	pg_catalog.format_type(o.oprright, NULL) AS "right",
	o.oprcom::pg_catalog.regoperator AS commutator,
	o.oprnegate::pg_catalog.regoperator AS negator,
	o.oprcanhash AS hashes, o.oprcanmerge AS merges,
	o.oprrest AS restrict, o.oprjoin AS "join"
FROM pg_catalog.pg_operator o
WHERE o.oprleft = 'snowid'::pg_catalog.regtype
	OR o.oprright = 'snowid'::pg_catalog.regtype
ORDER BY 2, 3, 1;

-- The members of the operator families.
SELECT am.amname, f.opfname, a.amopstrategy AS strategy,
	pg_catalog.format_type(a.amoplefttype, NULL) AS "left",
	pg_catalog.format_type(a.amoprighttype, NULL) AS "right",
	a.amopopr::pg_catalog.regoperator AS op
FROM pg_catalog.pg_amop a
	JOIN pg_catalog.pg_opfamily f ON f.oid = a.amopfamily
	JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod
WHERE f.opfname LIKE 'snowid%'
ORDER BY 1, 2, 4, 5, 3;
SELECT am.amname, f.opfname, p.amprocnum AS support,
	pg_catalog.format_type(p.amproclefttype, NULL) AS "left",
	pg_catalog.format_type(p.amprocrighttype, NULL) AS "right",
	p.amproc::pg_catalog.regprocedure AS proc
FROM pg_catalog.pg_amproc p
	JOIN pg_catalog.pg_opfamily f ON f.oid = p.amprocfamily
	JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod
WHERE f.opfname LIKE 'snowid%'
ORDER BY 1, 2, 4, 5, 3;
SELECT am.amname, c.opcname, c.opcdefault
FROM pg_catalog.pg_opclass c
	JOIN pg_catalog.pg_am am ON am.oid = c.opcmethod
WHERE c.opcintype = 'snowid'::pg_catalog.regtype
ORDER BY 1, 2;

--
-- Every operator, snowid against snowid, on values at both ends of the
-- range and on either side of 2^31 and 2^32.
--
CREATE TABLE vals (v snowid);
INSERT INTO vals VALUES ('0'), ('1'), ('2147483647'), ('2147483648'),
	('4294967296'), ('9223372036854775806'), ('9223372036854775807');
SELECT a.v AS a, b.v AS b,
	a.v = b.v AS eq, a.v <> b.v AS ne, a.v < b.v AS lt,
	a.v <= b.v AS le, a.v > b.v AS gt, a.v >= b.v AS ge
FROM vals a, vals b
WHERE a.v IN ('0', '2147483647', '2147483648', '9223372036854775807')
ORDER BY a.v, b.v;

-- snowid against bigint and bigint against snowid, negative bigints too.
CREATE TABLE bvals (b bigint);
INSERT INTO bvals VALUES (-9223372036854775808), (-1), (0), (1),
	(2147483648), (9223372036854775807);
SELECT a.v AS a, b.b AS b,
	a.v = b.b AS eq, a.v <> b.b AS ne, a.v < b.b AS lt,
	a.v <= b.b AS le, a.v > b.b AS gt, a.v >= b.b AS ge
FROM vals a, bvals b
WHERE a.v IN ('0', '2147483648', '9223372036854775807')
ORDER BY a.v, b.b;
SELECT b.b AS a, a.v AS b,
	b.b = a.v AS eq, b.b <> a.v AS ne, b.b < a.v AS lt,
	b.b <= a.v AS le, b.b > a.v AS gt, b.b >= a.v AS ge
FROM vals a, bvals b
WHERE a.v IN ('0', '2147483648', '9223372036854775807')
ORDER BY b.b, a.v;

-- Each cross-type operator agrees with bigint's own on every pair.
SELECT count(*) AS pairs,
	count(*) FILTER (WHERE (a.v = b.b) IS DISTINCT FROM (a.v::bigint = b.b)
		OR (a.v <> b.b) IS DISTINCT FROM (a.v::bigint <> b.b)
		OR (a.v < b.b) IS DISTINCT FROM (a.v::bigint < b.b)
		OR (a.v <= b.b) IS DISTINCT FROM (a.v::bigint <= b.b)
		OR (a.v > b.b) IS DISTINCT FROM (a.v::bigint > b.b)
		OR (a.v >= b.b) IS DISTINCT FROM (a.v::bigint >= b.b)
		OR (b.b = a.v) IS DISTINCT FROM (b.b = a.v::bigint)
		OR (b.b <> a.v) IS DISTINCT FROM (b.b <> a.v::bigint)
		OR (b.b < a.v) IS DISTINCT FROM (b.b < a.v::bigint)
		OR (b.b <= a.v) IS DISTINCT FROM (b.b <= a.v::bigint)
		OR (b.b > a.v) IS DISTINCT FROM (b.b > a.v::bigint)
		OR (b.b >= a.v) IS DISTINCT FROM (b.b >= a.v::bigint)) AS disagreeing
FROM vals a, bvals b;

-- Integer constants and untyped literals resolve without ambiguity.
SELECT '5'::snowid = 5 AS int_const, 5 = '5'::snowid AS int_const_left,
	'5'::snowid = '5' AS literal, '5'::snowid < 6::bigint AS bigint_const,
	'5'::snowid IN (1, 5) AS in_list,
	'5'::snowid = ANY (ARRAY[4, 5]::bigint[]) AS any_array,
	'5'::snowid BETWEEN 1 AND 10 AS between;
-- NULL in, NULL out.
SELECT NULL::snowid = '1'::snowid AS eq, '1'::snowid < NULL::bigint AS lt,
	NULL::bigint >= NULL::snowid AS ge;

--
-- Index usage: a btree on a snowid column serves "= 12345", "= $1::bigint"
-- and "= '12345'".
--
CREATE TABLE t (id snowid PRIMARY KEY, b bigint, pad text);
INSERT INTO t SELECT g * 5, g * 5, 'row ' || g FROM generate_series(1, 10000) g;
ANALYZE t;

EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id = 12345;
SELECT * FROM t WHERE id = 12345;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id = '12345';
SELECT * FROM t WHERE id = '12345';
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id = 12345::bigint;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE 12345::bigint = id;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id = '12345'::snowid;

SET plan_cache_mode = force_generic_plan;
PREPARE by_bigint(bigint) AS SELECT * FROM t WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE by_bigint(12345);
EXECUTE by_bigint(12345);
EXECUTE by_bigint(-5);
PREPARE by_cast(text) AS SELECT * FROM t WHERE id = $1::bigint;
EXPLAIN (COSTS OFF) EXECUTE by_cast('12345');
EXECUTE by_cast('12345');
PREPARE by_unknown AS SELECT * FROM t WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE by_unknown('12345');
EXECUTE by_unknown('12345');
PREPARE by_snowid(snowid) AS SELECT * FROM t WHERE id = $1;
EXPLAIN (COSTS OFF) EXECUTE by_snowid('12345');
EXECUTE by_snowid('12345');
DEALLOCATE ALL;
RESET plan_cache_mode;

-- Ranges and lists, with bigint bounds.
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id >= 100 AND id < 120::bigint;
SELECT * FROM t WHERE id >= 100 AND id < 120::bigint ORDER BY id;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id IN (10, 20, 12345);
SELECT * FROM t WHERE id IN (10, 20, 12345) ORDER BY id;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE id = ANY ('{15,25}'::bigint[]);
SELECT * FROM t WHERE id = ANY ('{15,25}'::bigint[]) ORDER BY id;
-- A negative bigint matches nothing, and bounds nothing away.
SELECT count(*) FROM t WHERE id = -5;
SELECT count(*) FROM t WHERE id > -5;
SELECT count(*) FROM t WHERE id >= '49990' AND id <= 9223372036854775807;

-- An index on a bigint column serves bigint's own operator family only:
-- compared with a snowid value, cast the snowid to bigint to use it.
CREATE INDEX t_b ON t (b);
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE b = '12345'::snowid;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE b = '12345'::snowid::bigint;
SELECT * FROM t WHERE b = '12345'::snowid::bigint;
DROP INDEX t_b;

--
-- ORDER BY, DISTINCT, GROUP BY: numeric order, not text order.
--
CREATE TABLE s (id snowid, n int);
INSERT INTO s VALUES ('10', 1), ('9', 2), ('100', 3), ('9223372036854775807', 4),
	('0', 5), ('2147483648', 6), ('10', 7), ('9', 8), ('0', 9),
	('9223372036854775807', 10);
ANALYZE s;
EXPLAIN (COSTS OFF) SELECT id FROM s ORDER BY id;
SELECT id FROM s ORDER BY id;
SELECT id FROM s ORDER BY id DESC;
EXPLAIN (COSTS OFF) SELECT id FROM t ORDER BY id DESC LIMIT 3;
SELECT id FROM t ORDER BY id DESC LIMIT 3;

SET enable_hashagg = off;
EXPLAIN (COSTS OFF) SELECT DISTINCT id FROM s;
SELECT DISTINCT id FROM s;
EXPLAIN (COSTS OFF) SELECT id, count(*), sum(n) FROM s GROUP BY id;
SELECT id, count(*), sum(n) FROM s GROUP BY id;
RESET enable_hashagg;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT DISTINCT id FROM s;
SELECT DISTINCT id FROM s ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT id, count(*), sum(n) FROM s GROUP BY id;
SELECT id, count(*), sum(n) FROM s GROUP BY id ORDER BY 1;
RESET enable_sort;
SELECT count(DISTINCT id) FROM s;
SELECT id, rank() OVER (ORDER BY id) FROM s ORDER BY id, n;

--
-- Joins on snowid = snowid and snowid = bigint.
--
CREATE TABLE u (id snowid, b bigint);
INSERT INTO u SELECT (g * 3)::bigint, g * 3 FROM generate_series(1, 5000) g;
ANALYZE u;
-- t.id = u.id and t.id = u.b match where the id is a multiple of 15 and
-- at most 15000: 1000 rows.
SET enable_nestloop = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON t.id = u.id;
SELECT count(*) FROM t JOIN u ON t.id = u.id;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON t.id = u.b;
SELECT count(*) FROM t JOIN u ON t.id = u.b;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON u.b = t.id;
SELECT count(*) FROM t JOIN u ON u.b = t.id;
RESET enable_mergejoin;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON t.id = u.id;
SELECT count(*) FROM t JOIN u ON t.id = u.id;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON t.id = u.b;
SELECT count(*) FROM t JOIN u ON t.id = u.b;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON u.b = t.id;
SELECT count(*) FROM t JOIN u ON u.b = t.id;
RESET enable_hashjoin;
RESET enable_nestloop;
-- The same answer from a plain bigint join.
SELECT count(*) FROM t JOIN u ON t.b = u.b;

--
-- Btree deduplication is allowed (btequalimage) and happens.
--
CREATE EXTENSION pageinspect;
CREATE TABLE dup (id snowid);
INSERT INTO dup SELECT (g % 10)::bigint FROM generate_series(1, 20000) g;
CREATE INDEX dup_dedup ON dup (id);
CREATE INDEX dup_nodedup ON dup (id) WITH (deduplicate_items = off);
SELECT allequalimage FROM bt_metap('dup_dedup');
SELECT allequalimage FROM bt_metap('t_pkey');
-- Posting lists hold the duplicates: the deduplicated index is much
-- smaller than the other, and exactly as small as bigint's.
CREATE TABLE dup_b (id bigint);
INSERT INTO dup_b SELECT id FROM dup;
CREATE INDEX dup_b_dedup ON dup_b (id);
SELECT pg_relation_size('dup_dedup') * 2 < pg_relation_size('dup_nodedup') AS smaller,
	pg_relation_size('dup_dedup') = pg_relation_size('dup_b_dedup') AS same_as_bigint;
DROP TABLE dup_b;
DROP INDEX dup_nodedup;
SELECT count(*) > 0 AS has_posting_lists
FROM generate_series(1, (pg_relation_size('dup_dedup') / 8192)::int - 1) blk,
	LATERAL bt_page_items('dup_dedup', blk) i
WHERE i.tids IS NOT NULL;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM dup WHERE id = 3;
SELECT count(*) FROM dup WHERE id = 3;
SELECT id, count(*) FROM dup WHERE id >= 8 GROUP BY id ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE dup;
DROP EXTENSION pageinspect;

--
-- Hash index, with snowid and bigint keys.
--
CREATE TABLE h (id snowid, pad text);
INSERT INTO h SELECT g::bigint, 'row ' || g FROM generate_series(1, 10000) g;
CREATE INDEX h_hash ON h USING hash (id);
ANALYZE h;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM h WHERE id = '4242';
SELECT * FROM h WHERE id = '4242';
EXPLAIN (COSTS OFF) SELECT * FROM h WHERE id = 4242;
SELECT * FROM h WHERE id = 4242;
EXPLAIN (COSTS OFF) SELECT * FROM h WHERE 4242::bigint = id;
SELECT * FROM h WHERE 4242::bigint = id;
-- Hash values are bigint's, so hash joins across the two types are right.
SELECT pg_catalog.count(*) AS differing
FROM h WHERE snowid_hash(id) <> hashint8(id::bigint)
	OR snowid_hash_extended(id, 42) <> hashint8extended(id::bigint, 42);
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE h;

--
-- BRIN minmax index.
--
CREATE TABLE br (id snowid, pad text);
INSERT INTO br SELECT g::bigint, 'row ' || g FROM generate_series(1, 100000) g;
CREATE INDEX br_brin ON br USING brin (id) WITH (pages_per_range = 4);
ANALYZE br;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM br WHERE id >= '50000' AND id < '50100';
SELECT count(*) FROM br WHERE id >= '50000' AND id < '50100';
EXPLAIN (COSTS OFF) SELECT * FROM br WHERE id = '77777';
SELECT * FROM br WHERE id = '77777';
SELECT count(*) FROM br WHERE id <= '10';
SELECT count(*) FROM br WHERE id > '99990';
RESET enable_seqscan;
DROP TABLE br;

--
-- Hash partitioning by a snowid column.
--
CREATE TABLE p (id snowid, n int) PARTITION BY HASH (id);
CREATE TABLE p0 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE p1 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE p2 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE p3 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO p SELECT (g * 4096)::bigint, g FROM generate_series(1, 1000) g;
-- Every partition gets rows.
SELECT tableoid::regclass AS partition, count(*) FROM p GROUP BY 1 ORDER BY 1;
-- A row lands where the same value would in a table partitioned by bigint.
CREATE TABLE pb (id bigint, n int) PARTITION BY HASH (id);
CREATE TABLE pb0 PARTITION OF pb FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE pb1 PARTITION OF pb FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE pb2 PARTITION OF pb FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE pb3 PARTITION OF pb FOR VALUES WITH (MODULUS 4, REMAINDER 3);
INSERT INTO pb SELECT id, n FROM p;
SELECT count(*) AS rows, count(*) FILTER (WHERE pg_catalog.right(p.tableoid::regclass::text, 1)
	<> pg_catalog.right(pb.tableoid::regclass::text, 1)) AS elsewhere
FROM p JOIN pb USING (n);
-- Partition pruning, with snowid and bigint constants.
EXPLAIN (COSTS OFF) SELECT * FROM p WHERE id = '40960';
SELECT tableoid::regclass, * FROM p WHERE id = '40960';
EXPLAIN (COSTS OFF) SELECT * FROM p WHERE id = 40960;
SELECT tableoid::regclass, * FROM p WHERE id = 40960;
DROP TABLE p, pb;

DROP TABLE vals, bvals, t, s, u;
