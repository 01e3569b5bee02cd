-- snowid_nextval() and snowid_generate(): contracts and errors
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS snowid;
RESET client_min_messages;
SET timezone = 'UTC';

-- The lease keeper acquires a lease shortly after start-up.
DO $$
BEGIN
	FOR i IN 1..600 LOOP
		EXIT WHEN (SELECT state FROM snowid_status()) = 'active';
		PERFORM pg_sleep(0.1);
	END LOOP;
END;
$$;
SELECT state, coordinator, layout, worker_id IS NOT NULL AS has_worker
  FROM snowid_status();

-- Ids from one session are strictly increasing and carry the lease's
-- worker id and the current time.
CREATE TABLE gen (ord serial, id snowid);
INSERT INTO gen (id) SELECT snowid_nextval() FROM generate_series(1, 5000);
INSERT INTO gen (id) SELECT snowid_generate(20000);
INSERT INTO gen (id) SELECT * FROM snowid_generate(10000);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids FROM gen;
SELECT count(*) AS out_of_order
  FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev FROM gen) s
 WHERE id <= prev;
SELECT count(DISTINCT snowid_worker(id)) AS workers,
	   bool_and(snowid_worker(id) = (SELECT worker_id FROM snowid_status())) AS lease_worker,
	   bool_and(snowid_timestamp(id) BETWEEN now() - interval '1 minute'
										 AND clock_timestamp()) AS current_time
  FROM gen;
-- A batch of 20000 spans at least five milliseconds (4096 ids per ms).
SELECT count(DISTINCT snowid_timestamp(id)) >= 5 AS spans_milliseconds
  FROM (SELECT snowid_generate(20000) AS id) s;
-- A column default, as bigint too.
CREATE TABLE orders (id snowid PRIMARY KEY DEFAULT snowid_nextval(), note text);
CREATE TABLE orders_bigint (id bigint PRIMARY KEY DEFAULT snowid_nextval(), note text);
INSERT INTO orders (note) SELECT 'n' || g FROM generate_series(1, 100) g;
INSERT INTO orders_bigint (note) SELECT 'n' || g FROM generate_series(1, 100) g;
SELECT count(*) FROM orders JOIN orders_bigint USING (note) WHERE orders.id < orders_bigint.id;

-- Bad batch sizes.
\set VERBOSITY sqlstate
SELECT snowid_generate(0);
SELECT snowid_generate(-1);
SELECT snowid_generate(1000001);
\set VERBOSITY default
SELECT snowid_generate(0);
SELECT count(*) FROM snowid_generate(NULL);
SELECT count(*) FROM snowid_generate(1000000);

-- Statistics count what was done since the last reset.
SELECT snowid_stats_reset();
SELECT snowid_nextval() IS NOT NULL;
SELECT count(*) FROM snowid_generate(10);
SELECT ids, calls, batch_calls, no_lease_refusals FROM snowid_stats;
SELECT stats_reset > now() - interval '1 minute' FROM snowid_stats;
SELECT lease_acquisitions >= 0 AND lease_renewals >= 0 FROM snowid_stats;

-- Nothing to confirm on a node that is not a copy.
SELECT snowid_confirm_takeover();

-- Status shows the lease.
SELECT lease_valid_for > interval '0' AS valid,
	   high_water >= last_used AS below_high_water,
	   last_used >= floor AS above_floor,
	   keeper_pid IS NOT NULL AS keeper_running,
	   time_exhausted_at = '2094-09-07 15:47:35.551+00' AS end_of_time
  FROM snowid_status();
