--
-- snowid in JSON: always a string, so JavaScript clients (whose numbers
-- are doubles, exact only up to 2^53) never lose digits.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

SELECT to_json('0'::snowid), to_json('9223372036854775807'::snowid);
SELECT to_jsonb('0'::snowid), to_jsonb('9223372036854775807'::snowid);
SELECT json_typeof(to_json('42'::snowid)), jsonb_typeof(to_jsonb('42'::snowid));
-- Unlike bigint, which JSON gets as a number.
SELECT to_json(9007199254740993::bigint), to_json('9007199254740993'::snowid);

SELECT json_build_object('id', '9007199254740993'::snowid, 'n', 1);
SELECT jsonb_build_object('id', '9007199254740993'::snowid, 'n', 1);
SELECT json_build_array('1'::snowid, '9223372036854775807'::snowid);
SELECT jsonb_build_array('1'::snowid, '9223372036854775807'::snowid);
SELECT array_to_json(ARRAY['1', '22', '333']::snowid[]);
SELECT to_jsonb(ARRAY['1', '22', '333']::snowid[]);
SELECT json_object_agg(k, v) FROM (VALUES ('a', '1'::snowid), ('b', '2')) AS x(k, v);

CREATE TABLE orders (id snowid PRIMARY KEY, item text, qty int);
INSERT INTO orders VALUES ('9223372036854775807', 'widget', 3),
	('9007199254740993', 'gadget', 1), ('0', 'nothing', 0);
SELECT row_to_json(o) FROM orders o ORDER BY id;
SELECT to_jsonb(o) FROM orders o ORDER BY id;
SELECT json_agg(o ORDER BY id) FROM orders o;
SELECT jsonb_agg(id ORDER BY id) FROM orders;
SELECT jsonb_typeof(j -> 'id') AS id_type, jsonb_typeof(j -> 'qty') AS qty_type
FROM (SELECT to_jsonb(o) AS j FROM orders o WHERE id = 0) AS x;
SELECT jsonb_path_query(jsonb_agg(id), '$[*].type()') FROM orders;

-- And back: from a JSON string (or a number) to a snowid.
SELECT ('{"id": "9223372036854775807"}'::jsonb ->> 'id')::snowid;
SELECT * FROM jsonb_populate_record(NULL::orders,
	'{"id": "9007199254740993", "item": "gadget", "qty": 1}');
SELECT * FROM jsonb_populate_record(NULL::orders, '{"id": 12345}');
SELECT * FROM json_populate_record(NULL::orders, '{"id": "12345"}');
SELECT * FROM jsonb_to_record('{"id": "77", "item": "x"}') AS r(id snowid, item text);
SELECT * FROM jsonb_populate_record(NULL::orders, '{"id": "-1"}');
SELECT * FROM jsonb_populate_record(NULL::orders, '{"id": "x"}');
-- Round trip through JSON keeps every digit.
SELECT count(*) AS differing
FROM orders o
WHERE (to_jsonb(o) ->> 'id')::snowid <> o.id
	OR (row_to_json(o) ->> 'id')::snowid <> o.id;

-- There is no cast to json or jsonb: that would turn ids into numbers.
SELECT '1'::snowid::json;
SELECT '1'::snowid::jsonb;
SELECT count(*) AS json_casts FROM pg_catalog.pg_cast
WHERE castsource = 'snowid'::pg_catalog.regtype
	AND casttarget IN ('json'::pg_catalog.regtype, 'jsonb'::pg_catalog.regtype);

DROP TABLE orders;
