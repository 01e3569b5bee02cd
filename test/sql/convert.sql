-- snowid_convert_column(): adopting snowid on existing tables (issue 13).
-- The metadata before and after, rows and foreign keys kept, and every
-- refusal.  test/t/067_convert_column.pl converts under concurrent
-- inserts and dumps and restores a converted database.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
-- Errors show their detail and hint, not the function's line numbers.
\set SHOW_CONTEXT never

-- New rows after a conversion need the node's lease.
DO $$
BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN (SELECT state FROM snowid_status()) = 'active';
		PERFORM pg_sleep(0.1);
	END LOOP;
END;
$$;
SELECT state FROM snowid_status();

-- What a tool reading identity metadata sees of a column.
CREATE FUNCTION col_meta(tbl regclass, col name)
RETURNS TABLE (type text, identity text, "default" text, serial_sequence text)
LANGUAGE sql AS $$
	SELECT format_type(a.atttypid, a.atttypmod), a.attidentity::text,
		   pg_get_expr(d.adbin, d.adrelid),
		   pg_get_serial_sequence(tbl::text, col::text)
	  FROM pg_attribute a
	  LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	 WHERE a.attrelid = tbl AND a.attname = col
$$;
-- A refusal as (state, message, detail, hint), with the bound that
-- moves with the clock replaced by <now>.
CREATE FUNCTION refusal(stmt text)
RETURNS TABLE (state text, message text, detail text, hint text)
LANGUAGE plpgsql AS $$
DECLARE
	bound text := snowid_from_time(now())::text;
BEGIN
	EXECUTE stmt;
	RAISE EXCEPTION 'statement did not fail: %', stmt;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	IF state = 'P0001' THEN
		RAISE;
	END IF;
	detail := replace(detail, bound, '<now>');
	RETURN NEXT;
END
$$;

--
-- bigserial, with a referencing table: the column stays bigint.
--
CREATE TABLE customers (id bigserial PRIMARY KEY, name text NOT NULL);
CREATE TABLE invoices (
	id			bigserial PRIMARY KEY,
	customer_id bigint NOT NULL REFERENCES customers ON DELETE CASCADE,
	amount		numeric);
INSERT INTO customers (name) SELECT 'c' || g FROM generate_series(1, 1000) g;
INSERT INTO invoices (customer_id, amount)
	SELECT 1 + g % 1000, g FROM generate_series(1, 3000) g;
SELECT * FROM col_meta('customers', 'id');
SELECT count(*) FROM pg_class WHERE relname = 'customers_id_seq';

SELECT snowid_convert_column('customers', 'id');

SELECT * FROM col_meta('customers', 'id');
-- the sequence is gone
SELECT count(*) FROM pg_class WHERE relname = 'customers_id_seq';
-- every row and the foreign key are kept
SELECT count(*), min(id), max(id), sum(id) FROM customers;
SELECT conname, contype, convalidated, pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conrelid = 'invoices'::regclass
   AND contype <> 'n'		-- 18 lists NOT NULL constraints too
 ORDER BY conname;
-- new rows take snowids, above every old id and of this millisecond
INSERT INTO customers (name) VALUES ('new 1'), ('new 2');
SELECT count(*) AS new_rows,
	   bool_and(id >= snowid_from_time(now() - interval '1 minute')) AS snowids,
	   bool_and(snowid_worker(id::snowid) = (SELECT worker_id FROM snowid_status())) AS this_node
  FROM customers WHERE name LIKE 'new%';
INSERT INTO invoices (customer_id, amount)
	SELECT id, 1 FROM customers WHERE name = 'new 1';
-- the foreign key still holds
INSERT INTO invoices (customer_id, amount) VALUES (123456789012, 1);
DELETE FROM customers WHERE name = 'new 1';
SELECT count(*) FROM invoices WHERE amount = 1;
-- A second call changes nothing.
SELECT snowid_convert_column('customers', 'id');
SELECT * FROM col_meta('customers', 'id');

--
-- GENERATED ALWAYS AS IDENTITY, with a referencing table, to type snowid.
--
CREATE TABLE accounts (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text);
CREATE TABLE transfers (
	id			bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id	bigint REFERENCES accounts,
	note		text);
CREATE INDEX transfers_account ON transfers (account_id);
INSERT INTO accounts (name) SELECT 'a' || g FROM generate_series(1, 500) g;
INSERT INTO transfers (account_id, note) SELECT 1 + g % 500, 't' FROM generate_series(1, 1500) g;
INSERT INTO transfers (account_id, note) VALUES (NULL, 'no account');
SELECT * FROM col_meta('accounts', 'id');
SELECT count(*) FROM pg_class WHERE relname = 'accounts_id_seq';
-- an explicit id is refused by GENERATED ALWAYS
INSERT INTO accounts (id, name) VALUES (1000, 'explicit');

SELECT snowid_convert_column('accounts', 'id', as_snowid => true);

SELECT * FROM col_meta('accounts', 'id');
SELECT * FROM col_meta('transfers', 'account_id');
SELECT * FROM col_meta('transfers', 'id');
SELECT count(*) FROM pg_class WHERE relname = 'accounts_id_seq';
SELECT count(*), min(id), max(id), sum(id::bigint) FROM accounts;
SELECT count(*), count(account_id), sum(account_id::bigint) FROM transfers;
SELECT conname, convalidated, pg_get_constraintdef(oid)
  FROM pg_constraint WHERE conrelid = 'transfers'::regclass AND contype = 'f';
SELECT indexrelid::regclass, indisvalid FROM pg_index
 WHERE indrelid IN ('accounts'::regclass, 'transfers'::regclass) ORDER BY indexrelid::regclass::text;
-- explicit ids are allowed now, and new rows take snowids
INSERT INTO accounts (id, name) VALUES (1000, 'explicit');
INSERT INTO accounts (name) VALUES ('new') RETURNING id >= snowid_from_time(now() - interval '1 minute') AS snowid;
INSERT INTO transfers (account_id, note) SELECT id, 'new' FROM accounts WHERE name = 'new';
INSERT INTO transfers (account_id, note) VALUES (123456789012, 'dangling');

--
-- GENERATED BY DEFAULT, a self-referencing foreign key, a plain bigint.
--
CREATE TABLE nodes (
	id		bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	parent	bigint REFERENCES nodes);
INSERT INTO nodes (parent) VALUES (NULL);
INSERT INTO nodes (parent) SELECT 1 FROM generate_series(1, 9);
SELECT snowid_convert_column('nodes', 'id', true);
SELECT * FROM col_meta('nodes', 'id');
SELECT * FROM col_meta('nodes', 'parent');
SELECT count(*), count(parent) FROM nodes;
INSERT INTO nodes (parent) VALUES (1) RETURNING id > 1000 AS snowid;
CREATE TABLE plain (id bigint PRIMARY KEY);
INSERT INTO plain VALUES (1), (2);
SELECT snowid_convert_column('plain', 'id');
SELECT * FROM col_meta('plain', 'id');

-- A partitioned table: partitions follow.
CREATE TABLE events (id bigserial, at date NOT NULL, PRIMARY KEY (id, at))
	PARTITION BY RANGE (at);
CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
INSERT INTO events (at) VALUES ('2026-03-01'), ('2026-04-01');
SELECT snowid_convert_column('events', 'id');
SELECT * FROM col_meta('events', 'id');
SELECT * FROM col_meta('events_2026', 'id');
SELECT count(*) FROM pg_class WHERE relname = 'events_id_seq';
INSERT INTO events (at) VALUES ('2026-05-01');
SELECT count(*), count(*) FILTER (WHERE id > 1000) AS snowids FROM events;

-- A sequence the column owns but another default uses too is kept (and
-- no longer owned); one it does not own is left alone.
CREATE TABLE shared_a (id bigserial PRIMARY KEY);
CREATE TABLE shared_b (id bigint PRIMARY KEY DEFAULT nextval('shared_a_id_seq'));
SELECT snowid_convert_column('shared_a', 'id');
SELECT * FROM col_meta('shared_b', 'id');
SELECT pg_get_serial_sequence('shared_a', 'id');
CREATE SEQUENCE free_seq;
CREATE TABLE uses_free (id bigint PRIMARY KEY DEFAULT nextval('free_seq'));
SELECT snowid_convert_column('uses_free', 'id');
SELECT * FROM col_meta('uses_free', 'id');
SELECT count(*) FROM pg_class WHERE relname = 'free_seq';

--
-- Refusals.  Each leaves the table as it was.
--
-- values that new ids could equal (the bound moves with the clock)
CREATE TABLE big (id bigserial PRIMARY KEY);
INSERT INTO big VALUES (1), (9000000000000000000);
\x on
SELECT * FROM refusal($$SELECT snowid_convert_column('big', 'id')$$);
\x off
SELECT * FROM col_meta('big', 'id');
-- a value just below the bound converts
DELETE FROM big WHERE id > 1;
INSERT INTO big SELECT snowid_from_time(now())::bigint - 1;
SELECT snowid_convert_column('big', 'id');
SELECT * FROM col_meta('big', 'id');
-- negative values cannot become type snowid (bigint is fine)
CREATE TABLE negative (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY);
INSERT INTO negative VALUES (-5), (3);
SELECT snowid_convert_column('negative', 'id', as_snowid => true);
SELECT * FROM col_meta('negative', 'id');
SELECT snowid_convert_column('negative', 'id');
SELECT * FROM col_meta('negative', 'id');
-- other column types
CREATE TABLE small (id serial PRIMARY KEY, code text, u uuid, n numeric,
	g bigint GENERATED ALWAYS AS (id * 2) STORED);
SELECT snowid_convert_column('small', 'id');
SELECT snowid_convert_column('small', 'code');
SELECT snowid_convert_column('small', 'u');
SELECT snowid_convert_column('small', 'n');
SELECT snowid_convert_column('small', 'g');
SELECT * FROM col_meta('small', 'id');
-- a column or relation that does not exist, or is not a table
SELECT snowid_convert_column('small', 'missing');
SELECT snowid_convert_column('no_such_table', 'id');
CREATE VIEW small_view AS SELECT id FROM small;
SELECT snowid_convert_column('small_view', 'id');
SELECT snowid_convert_column('small_id_seq', 'last_value');
-- as_snowid: a referencing column that cannot follow
CREATE TABLE parents (id bigserial PRIMARY KEY);
CREATE TABLE kids_int (id serial, parent_id integer REFERENCES parents);
SELECT snowid_convert_column('parents', 'id', as_snowid => true);
SELECT * FROM col_meta('parents', 'id');
DROP TABLE kids_int;
-- as_snowid: a view reading a referencing column
CREATE TABLE kids (id serial, parent_id bigint REFERENCES parents);
CREATE VIEW kids_view AS SELECT parent_id FROM kids;
SELECT snowid_convert_column('parents', 'id', as_snowid => true);
SELECT * FROM col_meta('parents', 'id');
-- without as_snowid the view is no obstacle
SELECT snowid_convert_column('parents', 'id');
SELECT * FROM col_meta('parents', 'id');
SELECT * FROM col_meta('kids', 'parent_id');
-- a caller who does not own the table
CREATE ROLE snowid_convert_plain;
GRANT ALL ON TABLE kids, parents TO snowid_convert_plain;
SET ROLE snowid_convert_plain;
SELECT snowid_convert_column('kids', 'id');
RESET ROLE;
-- who owns the table but not a referencing one
ALTER TABLE parents OWNER TO snowid_convert_plain;
SET ROLE snowid_convert_plain;
SELECT snowid_convert_column('parents', 'id', as_snowid => true);
RESET ROLE;
SELECT * FROM col_meta('kids', 'id');
ALTER TABLE parents OWNER TO CURRENT_USER;
DROP OWNED BY snowid_convert_plain;
DROP ROLE snowid_convert_plain;

-- The function: invoker's rights, its search_path pinned.
SELECT p.oid::regprocedure, prosecdef, proconfig, provolatile, proparallel
  FROM pg_proc p WHERE proname = 'snowid_convert_column';
