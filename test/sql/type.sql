--
-- The snowid type: text input and output, binary send and receive, casts.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- What a cast of text to a type gives: the value, or SQLSTATE and message.
CREATE FUNCTION pg_temp.try_cast(input text, typ text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	result text;
BEGIN
	EXECUTE format('SELECT %L::%s::text', input, typ) INTO result;
	RETURN result;
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- The same for any statement, to show the SQLSTATE of an error.
CREATE FUNCTION pg_temp.try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

--
-- Text input, side by side with bigint's: a snowid accepts what bigint
-- accepts, except negative numbers.
--
SELECT pg_catalog.format('%L', input) AS input,
	pg_temp.try_cast(input, 'snowid') AS snowid,
	pg_temp.try_cast(input, 'bigint') AS "bigint"
FROM (VALUES ('0'), ('1'), ('42'), ('9223372036854775807'),
	('9223372036854775808'), ('18446744073709551615'),
	('18446744073709551616'), ('99999999999999999999'),
	('-1'), ('-0'), ('+0'), ('+5'), ('-9223372036854775808'),
	('-9223372036854775809'), ('-99999999999999999999'),
	(''), (' '), (' 42 '), ('0042'), ('4x'), ('x4'), ('4 2'), ('+'), ('-'), ('--1'), ('+-1'),
	('-+1'), ('- 1'), ('0x10'), ('1e3'), ('1.0'), ('1.'), ('.5'),
	('1_000'), ('NaN'), ('null'), ('infinity')) AS v(input);

-- Surrounding whitespace of every kind is fine, inner whitespace is not.
SELECT label, pg_temp.try_cast(input, 'snowid') AS snowid,
	pg_temp.try_cast(input, 'bigint') AS "bigint"
FROM (VALUES ('tab 42 newline', E'\t42\n'),
	('cr ff vt 42 vt', E'\r\f' || chr(11) || '42' || chr(11)),
	('space 42 cr lf', E' 42\r\n'),
	('4 tab 2', E'4\t2'),
	('tab only', E'\t'),
	('newline -0', E'\n-0')) AS v(label, input);

-- Very long strings: many zeros before a digit are fine; many digits are
-- out of range; much junk is junk.
SELECT ('000000' || repeat('0', 10000) || '9223372036854775807')::snowid;
SELECT pg_temp.try_cast(repeat('0', 100000) || '1', 'snowid') AS leading_zeros;
SELECT pg_catalog.left(pg_temp.try_cast(repeat('9', 100000), 'snowid'), 70) AS many_digits;
SELECT pg_catalog.left(pg_temp.try_cast('-' || repeat('9', 100000), 'snowid'), 70) AS many_negative_digits;
SELECT pg_catalog.left(pg_temp.try_cast(repeat('x', 100000), 'snowid'), 70) AS junk;
SELECT pg_catalog.left(pg_temp.try_cast(repeat('1', 10000) || 'x', 'snowid'), 70) AS digits_then_junk;
SELECT pg_catalog.left(pg_temp.try_cast(repeat(' ', 10000) || '7' || repeat(' ', 10000), 'snowid'), 70) AS much_space;

-- The errors in full.
SELECT ''::snowid;
SELECT '4x'::snowid;
SELECT '-1'::snowid;
SELECT '9223372036854775808'::snowid;

-- Output is the plain decimal number.
SELECT '0'::snowid, ' 000123 '::snowid, '9223372036854775807'::snowid,
	'-0'::snowid, '+5'::snowid;
SELECT '9223372036854775807'::snowid::text,
	pg_catalog.length('9223372036854775807'::snowid::text);

-- NULL stays NULL.
SELECT NULL::snowid IS NULL AS is_null, NULL::bigint::snowid IS NULL AS cast_null;

-- The type itself: 8 bytes, by value, aligned like bigint.
SELECT typlen, typbyval, typalign, typstorage
FROM pg_catalog.pg_type WHERE oid = 'snowid'::pg_catalog.regtype;
SELECT pg_catalog.pg_column_size('9223372036854775807'::snowid);

--
-- Binary send and receive.
--
SELECT snowid_send('0'), snowid_send('1'), snowid_send('4096'),
	snowid_send('9223372036854775807');
SELECT snowid_send(x) = int8send(x::bigint) AS same_as_bigint
FROM (VALUES ('0'::snowid), ('255'), ('256'), ('9223372036854775807')) AS v(x);

CREATE TABLE copy_src (n int, id snowid, b bigint);
INSERT INTO copy_src VALUES
	(1, '0', 0),
	(2, '1', 1),
	(3, '4096', 4096),
	(4, '4294967295', 4294967295),
	(5, '4294967296', 4294967296),
	(6, '9223372036854775806', 9223372036854775806),
	(7, '9223372036854775807', 9223372036854775807),
	(8, NULL, NULL);

\getenv abs_builddir PG_ABS_BUILDDIR
\set copy_file :abs_builddir '/results/snowid_type_copy.bin'
\set neg_file :abs_builddir '/results/snowid_type_negative.bin'
\set int4_file :abs_builddir '/results/snowid_type_int4.bin'

-- Out in binary, back in binary: the same values.
COPY copy_src TO :'copy_file' (FORMAT binary);
CREATE TABLE copy_dst (LIKE copy_src);
COPY copy_dst FROM :'copy_file' (FORMAT binary);
SELECT * FROM copy_dst ORDER BY n;
SELECT count(*) AS rows_differing
FROM copy_src s FULL JOIN copy_dst d USING (n)
WHERE s.id IS DISTINCT FROM d.id OR s.b IS DISTINCT FROM d.b;

-- The binary form is bigint's: a snowid column reads a bigint column's
-- data and the other way round.
CREATE TABLE copy_swapped (n int, id bigint, b snowid);
COPY copy_swapped FROM :'copy_file' (FORMAT binary);
SELECT count(*) AS rows_differing
FROM copy_src s JOIN copy_swapped w USING (n)
WHERE s.id::bigint IS DISTINCT FROM w.id OR s.b IS DISTINCT FROM w.b::bigint;

-- A negative number is refused in binary receive too.
COPY (SELECT 1, -1::bigint, 0::bigint) TO :'neg_file' (FORMAT binary);
COPY copy_dst FROM :'neg_file' (FORMAT binary);
COPY (SELECT 1, (-9223372036854775808)::bigint, 0::bigint) TO :'neg_file' (FORMAT binary);
COPY copy_dst FROM :'neg_file' (FORMAT binary);
-- Four bytes are not a snowid.
COPY (SELECT 1, 1::int4, 0::bigint) TO :'int4_file' (FORMAT binary);
COPY copy_dst FROM :'int4_file' (FORMAT binary);
-- The SQLSTATEs: 22003 for a negative number, 08P01 for a short field.
SELECT pg_temp.try(pg_catalog.format('COPY copy_dst FROM %L (FORMAT binary)', :'neg_file')) AS negative,
	pg_temp.try(pg_catalog.format('COPY copy_dst FROM %L (FORMAT binary)', :'int4_file')) AS short;
SELECT count(*) FROM copy_dst;

-- Text COPY round trip too.
CREATE TABLE copy_text (LIKE copy_src);
COPY copy_src TO :'copy_file';
COPY copy_text FROM :'copy_file';
SELECT count(*) AS rows_differing
FROM copy_src s FULL JOIN copy_text d USING (n)
WHERE s.id IS DISTINCT FROM d.id OR s.b IS DISTINCT FROM d.b;

DROP TABLE copy_src, copy_dst, copy_swapped, copy_text;

--
-- Casts.
--
SELECT pg_catalog.format_type(castsource, NULL) AS source,
	pg_catalog.format_type(casttarget, NULL) AS target,
	castcontext, castmethod
FROM pg_catalog.pg_cast
WHERE castsource = 'snowid'::pg_catalog.regtype
	OR casttarget = 'snowid'::pg_catalog.regtype
ORDER BY 1, 2;

-- snowid to bigint: every value, as is.
SELECT '0'::snowid::bigint, '9223372036854775807'::snowid::bigint,
	pg_catalog.pg_typeof('1'::snowid::bigint);
-- bigint and integer to snowid.
SELECT 0::snowid, 2147483647::snowid, 9223372036854775807::snowid,
	0::bigint::snowid, 42::bigint::snowid, pg_catalog.pg_typeof(42::snowid);
SELECT CAST(12345 AS snowid), snowid(12345::bigint), snowid(12345);
-- Text casts go through the text form.
SELECT '42'::text::snowid, '42'::snowid::text, ' 42 '::varchar::snowid;
-- Negative numbers are never snowids (22003), whatever their type.
SELECT pg_temp.try(stmt) AS result, stmt
FROM (VALUES ('SELECT (-1)::snowid'),
	('SELECT (-1)::bigint::snowid'),
	('SELECT (-2147483648)::snowid'),
	('SELECT (-9223372036854775808)::bigint::snowid'),
	('SELECT snowid(-5)'),
	('SELECT snowid(-5::bigint)'),
	('SELECT ''-1''::text::snowid')) AS v(stmt);
SELECT (-1)::snowid;
SELECT (-9223372036854775808)::bigint::snowid;
-- No other casts: not from numeric, not to numeric, integer or JSON.
SELECT pg_temp.try(stmt) AS result, stmt
FROM (VALUES ('SELECT 1.5::snowid'),
	('SELECT 42::numeric::snowid'),
	('SELECT ''1''::snowid::numeric'),
	('SELECT ''1''::snowid::integer'),
	('SELECT ''1''::snowid::json'),
	('SELECT ''1''::snowid::jsonb')) AS v(stmt);

-- No cast is implicit: snowid does not silently become bigint arithmetic.
SELECT '1'::snowid + 1;
SELECT abs('1'::snowid);

-- Assignment casts: integers go into snowid columns, and snowids into
-- bigint columns; negative integers are refused.
CREATE TABLE assign_s (id snowid);
CREATE TABLE assign_b (id bigint);
INSERT INTO assign_s VALUES (12345), (12345::bigint), (9223372036854775807), ('7');
INSERT INTO assign_s VALUES (-1);
INSERT INTO assign_s VALUES (-1::bigint);
INSERT INTO assign_s SELECT id FROM assign_b;
INSERT INTO assign_b SELECT id FROM assign_s;
UPDATE assign_s SET id = 8 WHERE id = 7;
UPDATE assign_s SET id = -8 WHERE id = 8;
SELECT pg_temp.try('INSERT INTO assign_s VALUES (-1)') AS int_literal,
	pg_temp.try('INSERT INTO assign_s VALUES (-1::bigint)') AS bigint_literal,
	pg_temp.try('INSERT INTO assign_s VALUES (''-1'')') AS text_literal;
SELECT * FROM assign_s ORDER BY id;
SELECT id, pg_catalog.pg_typeof(id) FROM assign_b ORDER BY id;
-- A bigint column can take its default from something returning snowid.
CREATE TABLE assign_d (id bigint DEFAULT '99'::snowid, x int);
INSERT INTO assign_d (x) VALUES (1);
SELECT * FROM assign_d;
DROP TABLE assign_s, assign_b, assign_d;
