-- The hand-written alternative: an Instagram-style snowflake in PL/pgSQL
-- (as in Instagram's 2012 "Sharding & IDs at Instagram" post).  41 bits of
-- milliseconds from clock_timestamp(), 13 bits of shard id, 10 bits of
-- nextval() % 1024.  Not unique past 1,024 ids per millisecond, and the
-- sequence it calls is a nextval() per id anyway.
CREATE SEQUENCE bench_insta_seq;

CREATE FUNCTION bench_insta_next_id(OUT result bigint) AS $$
DECLARE
	our_epoch bigint := 1735689600000;	-- 2025-01-01, as snowid's default
	seq_id bigint;
	now_millis bigint;
	shard_id int := 5;
BEGIN
	SELECT nextval('bench_insta_seq') % 1024 INTO seq_id;
	SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) INTO now_millis;
	result := (now_millis - our_epoch) << 23;
	result := result | (shard_id << 10);
	result := result | (seq_id);
END;
$$ LANGUAGE plpgsql VOLATILE;
