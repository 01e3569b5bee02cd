/* snowid--1.1.sql: fresh install of version 1.1 (1.0 plus what snowid--1.0--1.1.sql adds) */

\echo Use "CREATE EXTENSION snowid" to load this file. \quit

--
-- The type: 8 bytes, by value, stored like bigint, never negative.
--
CREATE TYPE @extschema@.snowid;

CREATE FUNCTION @extschema@.snowid_in(pg_catalog.cstring)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_out(@extschema@.snowid)
RETURNS pg_catalog.cstring
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_recv(pg_catalog.internal)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_send(@extschema@.snowid)
RETURNS pg_catalog.bytea
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE @extschema@.snowid (
	INPUT = @extschema@.snowid_in,
	OUTPUT = @extschema@.snowid_out,
	RECEIVE = @extschema@.snowid_recv,
	SEND = @extschema@.snowid_send,
	LIKE = pg_catalog.int8
);

COMMENT ON TYPE @extschema@.snowid IS
	'time-ordered, globally unique 64-bit id (timestamp | worker | sequence)';

--
-- Casts.  snowid -> bigint is binary coercible; the way back checks the
-- sign.  None is implicit: that would make "id = 12345" ambiguous.  There
-- is deliberately no cast to json, so JSON output stays a string.
--
CREATE FUNCTION @extschema@.snowid(pg_catalog.int8)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME', 'snowid_from_int8' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid(pg_catalog.int4)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME', 'snowid_from_int4' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (@extschema@.snowid AS pg_catalog.int8) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE CAST (pg_catalog.int8 AS @extschema@.snowid)
	WITH FUNCTION @extschema@.snowid(pg_catalog.int8) AS ASSIGNMENT;
CREATE CAST (pg_catalog.int4 AS @extschema@.snowid)
	WITH FUNCTION @extschema@.snowid(pg_catalog.int4) AS ASSIGNMENT;

--
-- Comparison.  A snowid is an int8 in memory, so int8's internal functions
-- do the work, for snowid against snowid and against bigint alike.
--
CREATE FUNCTION @extschema@.snowid_eq(@extschema@.snowid, @extschema@.snowid) RETURNS bool
AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_ne(@extschema@.snowid, @extschema@.snowid) RETURNS bool
AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_lt(@extschema@.snowid, @extschema@.snowid) RETURNS bool
AS 'int8lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_le(@extschema@.snowid, @extschema@.snowid) RETURNS bool
AS 'int8le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_gt(@extschema@.snowid, @extschema@.snowid) RETURNS bool
AS 'int8gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_ge(@extschema@.snowid, @extschema@.snowid) RETURNS bool
AS 'int8ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_smaller(@extschema@.snowid, @extschema@.snowid) RETURNS @extschema@.snowid
AS 'int8smaller' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.snowid_larger(@extschema@.snowid, @extschema@.snowid) RETURNS @extschema@.snowid
AS 'int8larger' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION @extschema@.snowid_cmp(@extschema@.snowid, @extschema@.snowid) RETURNS int4
AS 'btint8cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_hash(@extschema@.snowid) RETURNS int4
AS 'hashint8' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_hash_extended(@extschema@.snowid, pg_catalog.int8) RETURNS pg_catalog.int8
AS 'hashint8extended' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.snowid_eq_int8(@extschema@.snowid, pg_catalog.int8) RETURNS bool
AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_ne_int8(@extschema@.snowid, pg_catalog.int8) RETURNS bool
AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_lt_int8(@extschema@.snowid, pg_catalog.int8) RETURNS bool
AS 'int8lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_le_int8(@extschema@.snowid, pg_catalog.int8) RETURNS bool
AS 'int8le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_gt_int8(@extschema@.snowid, pg_catalog.int8) RETURNS bool
AS 'int8gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_ge_int8(@extschema@.snowid, pg_catalog.int8) RETURNS bool
AS 'int8ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.snowid_cmp_int8(@extschema@.snowid, pg_catalog.int8) RETURNS int4
AS 'btint8cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE FUNCTION @extschema@.int8_eq_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS bool
AS 'int8eq' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_ne_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS bool
AS 'int8ne' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_lt_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS bool
AS 'int8lt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_le_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS bool
AS 'int8le' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_gt_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS bool
AS 'int8gt' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_ge_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS bool
AS 'int8ge' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION @extschema@.int8_cmp_snowid(pg_catalog.int8, @extschema@.snowid) RETURNS int4
AS 'btint8cmp' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OPERATOR @extschema@.= (
	LEFTARG = @extschema@.snowid, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.snowid_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = @extschema@.snowid, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.snowid_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR @extschema@.< (
	LEFTARG = @extschema@.snowid, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.snowid_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = @extschema@.snowid, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.snowid_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR @extschema@.> (
	LEFTARG = @extschema@.snowid, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.snowid_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = @extschema@.snowid, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.snowid_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR @extschema@.= (
	LEFTARG = @extschema@.snowid, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.snowid_eq_int8,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = @extschema@.snowid, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.snowid_ne_int8,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR @extschema@.< (
	LEFTARG = @extschema@.snowid, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.snowid_lt_int8,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = @extschema@.snowid, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.snowid_le_int8,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR @extschema@.> (
	LEFTARG = @extschema@.snowid, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.snowid_gt_int8,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = @extschema@.snowid, RIGHTARG = pg_catalog.int8,
	FUNCTION = @extschema@.snowid_ge_int8,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE OPERATOR @extschema@.= (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.int8_eq_snowid,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR @extschema@.<> (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.int8_ne_snowid,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR @extschema@.< (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.int8_lt_snowid,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR @extschema@.<= (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.int8_le_snowid,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR @extschema@.> (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.int8_gt_snowid,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR @extschema@.>= (
	LEFTARG = pg_catalog.int8, RIGHTARG = @extschema@.snowid,
	FUNCTION = @extschema@.int8_ge_snowid,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = scalargesel, JOIN = scalargejoinsel);

CREATE AGGREGATE @extschema@.min(@extschema@.snowid) (
	SFUNC = @extschema@.snowid_smaller,
	STYPE = @extschema@.snowid,
	COMBINEFUNC = @extschema@.snowid_smaller,
	SORTOP = OPERATOR(@extschema@.<),
	PARALLEL = SAFE);
CREATE AGGREGATE @extschema@.max(@extschema@.snowid) (
	SFUNC = @extschema@.snowid_larger,
	STYPE = @extschema@.snowid,
	COMBINEFUNC = @extschema@.snowid_larger,
	SORTOP = OPERATOR(@extschema@.>),
	PARALLEL = SAFE);

--
-- Operator classes.  The btree family holds the cross-type operators with
-- bigint, so "id = 12345" and "id = $1::bigint" can use an index on a
-- snowid column.  btequalimage allows btree deduplication, and the
-- extended hash function allows hash partitioning.
--
CREATE OPERATOR CLASS @extschema@.snowid_ops
DEFAULT FOR TYPE @extschema@.snowid USING btree AS
	OPERATOR 1 @extschema@.< ,
	OPERATOR 2 @extschema@.<= ,
	OPERATOR 3 @extschema@.= ,
	OPERATOR 4 @extschema@.>= ,
	OPERATOR 5 @extschema@.> ,
	FUNCTION 1 @extschema@.snowid_cmp(@extschema@.snowid, @extschema@.snowid),
	FUNCTION 2 pg_catalog.btint8sortsupport(pg_catalog.internal),
	FUNCTION 4 pg_catalog.btequalimage(pg_catalog.oid);

ALTER OPERATOR FAMILY @extschema@.snowid_ops USING btree ADD
	OPERATOR 1 @extschema@.< (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 2 @extschema@.<= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 3 @extschema@.= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 4 @extschema@.>= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 5 @extschema@.> (@extschema@.snowid, pg_catalog.int8),
	FUNCTION 1 @extschema@.snowid_cmp_int8(@extschema@.snowid, pg_catalog.int8),
	OPERATOR 1 @extschema@.< (pg_catalog.int8, @extschema@.snowid),
	OPERATOR 2 @extschema@.<= (pg_catalog.int8, @extschema@.snowid),
	OPERATOR 3 @extschema@.= (pg_catalog.int8, @extschema@.snowid),
	OPERATOR 4 @extschema@.>= (pg_catalog.int8, @extschema@.snowid),
	OPERATOR 5 @extschema@.> (pg_catalog.int8, @extschema@.snowid),
	FUNCTION 1 @extschema@.int8_cmp_snowid(pg_catalog.int8, @extschema@.snowid),
	OPERATOR 1 pg_catalog.< (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 2 pg_catalog.<= (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 3 pg_catalog.= (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 4 pg_catalog.>= (pg_catalog.int8, pg_catalog.int8),
	OPERATOR 5 pg_catalog.> (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 pg_catalog.btint8cmp(pg_catalog.int8, pg_catalog.int8);

CREATE OPERATOR CLASS @extschema@.snowid_hash_ops
DEFAULT FOR TYPE @extschema@.snowid USING hash AS
	OPERATOR 1 @extschema@.= ,
	FUNCTION 1 @extschema@.snowid_hash(@extschema@.snowid),
	FUNCTION 2 @extschema@.snowid_hash_extended(@extschema@.snowid, pg_catalog.int8);

ALTER OPERATOR FAMILY @extschema@.snowid_hash_ops USING hash ADD
	OPERATOR 1 @extschema@.= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 1 @extschema@.= (pg_catalog.int8, @extschema@.snowid),
	OPERATOR 1 pg_catalog.= (pg_catalog.int8, pg_catalog.int8),
	FUNCTION 1 pg_catalog.hashint8(pg_catalog.int8),
	FUNCTION 2 pg_catalog.hashint8extended(pg_catalog.int8, pg_catalog.int8);

CREATE OPERATOR CLASS @extschema@.snowid_minmax_ops
DEFAULT FOR TYPE @extschema@.snowid USING brin AS
	OPERATOR 1 @extschema@.< ,
	OPERATOR 2 @extschema@.<= ,
	OPERATOR 3 @extschema@.= ,
	OPERATOR 4 @extschema@.>= ,
	OPERATOR 5 @extschema@.> ,
	FUNCTION 1 pg_catalog.brin_minmax_opcinfo(pg_catalog.internal),
	FUNCTION 2 pg_catalog.brin_minmax_add_value(pg_catalog.internal, pg_catalog.internal, pg_catalog.internal, pg_catalog.internal),
	FUNCTION 3 pg_catalog.brin_minmax_consistent(pg_catalog.internal, pg_catalog.internal, pg_catalog.internal),
	FUNCTION 4 pg_catalog.brin_minmax_union(pg_catalog.internal, pg_catalog.internal, pg_catalog.internal);

ALTER OPERATOR FAMILY @extschema@.snowid_minmax_ops USING brin ADD
	OPERATOR 1 @extschema@.< (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 2 @extschema@.<= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 3 @extschema@.= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 4 @extschema@.>= (@extschema@.snowid, pg_catalog.int8),
	OPERATOR 5 @extschema@.> (@extschema@.snowid, pg_catalog.int8);

--
-- Decoding and building ids.  IMMUTABLE because a cluster's layout never
-- changes once ids exist: the coordinator records it and refuses nodes
-- whose settings differ.  That lets these appear in expression indexes
-- and generated columns.
--
CREATE FUNCTION @extschema@.snowid_timestamp(@extschema@.snowid)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_worker(@extschema@.snowid)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_region(@extschema@.snowid)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_sequence(@extschema@.snowid)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_decode(id @extschema@.snowid,
	OUT "timestamp" pg_catalog.timestamptz,
	OUT worker pg_catalog.int4,
	OUT region pg_catalog.int4,
	OUT sequence pg_catalog.int4)
RETURNS record
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_from_parts("timestamp" pg_catalog.timestamptz,
	worker pg_catalog.int4, sequence pg_catalog.int4)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_from_time(pg_catalog.timestamptz)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

--
-- Generation.  VOLATILE and PARALLEL UNSAFE like nextval(): every call
-- changes shared state.
--
CREATE FUNCTION @extschema@.snowid_nextval()
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION @extschema@.snowid_generate(n pg_catalog.int4)
RETURNS SETOF @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
ROWS 1000;

--
-- Operating a node.
--
CREATE FUNCTION @extschema@.snowid_status(
	OUT node_name pg_catalog.text,
	OUT worker_id pg_catalog.int4,
	OUT region pg_catalog.int4,
	OUT state pg_catalog.text,
	OUT detail pg_catalog.text,
	OUT lease_valid_for pg_catalog.interval,
	OUT floor pg_catalog.timestamptz,
	OUT high_water pg_catalog.timestamptz,
	OUT last_used pg_catalog.timestamptz,
	OUT coordinator pg_catalog.text,
	OUT layout pg_catalog.text,
	OUT time_exhausted_at pg_catalog.timestamptz,
	OUT keeper_pid pg_catalog.int4,
	OUT last_renewal pg_catalog.timestamptz,
	OUT last_clock_regression pg_catalog.timestamptz,
	OUT last_clock_regression_ms pg_catalog.int8,
	OUT clock_offset_ms pg_catalog.int8)
RETURNS record
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.snowid_stats_internal(
	OUT ids pg_catalog.int8,
	OUT calls pg_catalog.int8,
	OUT batch_calls pg_catalog.int8,
	OUT exhaustion_waits pg_catalog.int8,
	OUT clock_rollback_waits pg_catalog.int8,
	OUT clock_rollback_refusals pg_catalog.int8,
	OUT no_lease_refusals pg_catalog.int8,
	OUT cas_retries pg_catalog.int8,
	OUT lease_acquisitions pg_catalog.int8,
	OUT lease_renewals pg_catalog.int8,
	OUT lease_renewal_failures pg_catalog.int8,
	OUT lease_losses pg_catalog.int8,
	OUT stats_reset pg_catalog.timestamptz)
RETURNS record
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW @extschema@.snowid_stats AS
	SELECT * FROM @extschema@.snowid_stats_internal();

CREATE FUNCTION @extschema@.snowid_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION @extschema@.snowid_confirm_takeover()
RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Statistics and status for monitoring roles; changes for superusers and
-- whoever they grant them to.
REVOKE ALL ON FUNCTION @extschema@.snowid_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.snowid_stats_internal() FROM PUBLIC;
REVOKE ALL ON @extschema@.snowid_stats FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.snowid_stats_reset() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@.snowid_confirm_takeover() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.snowid_status() TO pg_monitor;
GRANT EXECUTE ON FUNCTION @extschema@.snowid_stats_internal() TO pg_monitor;
GRANT SELECT ON @extschema@.snowid_stats TO pg_monitor;

--
-- Formats for the outside world (formats.c, public_id.c, uuidv7.c).
--
-- Compact text: 13 Crockford base32 characters, text order = id order.
-- IMMUTABLE: the form depends on the value only.
CREATE FUNCTION @extschema@.snowid_to_base32(@extschema@.snowid)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_from_base32(pg_catalog.text)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Keyed public ids.  STABLE, not IMMUTABLE: they depend on the key file
-- (snowid.public_id_keys_file), which may change at any reload.  They hide
-- an id's time and worker; they authorise nothing.
CREATE FUNCTION @extschema@.snowid_to_public(@extschema@.snowid)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_from_public(pg_catalog.text)
RETURNS @extschema@.snowid
AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- RFC 9562 version 7 UUIDs, strictly increasing across the node's
-- backends (shared memory: needs shared_preload_libraries).  VOLATILE like
-- gen_random_uuid(); parallel workers share the same shared word.
CREATE FUNCTION @extschema@.snowid_uuidv7()
RETURNS pg_catalog.uuid
AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION @extschema@.snowid_uuidv7_timestamp(pg_catalog.uuid)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
