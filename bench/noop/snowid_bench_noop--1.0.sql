\echo Use "CREATE EXTENSION snowid_bench_noop" to load this file. \quit

-- Same shape as snowid_nextval(): no argument, a bigint, VOLATILE so the
-- executor calls it once per row.
CREATE FUNCTION bench_noop()
	RETURNS pg_catalog.int8
	AS 'MODULE_PATHNAME', 'bench_noop'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- Same shape as nextval(regclass): one argument, a bigint.
CREATE FUNCTION bench_noop(pg_catalog.regclass)
	RETURNS pg_catalog.int8
	AS 'MODULE_PATHNAME', 'bench_noop_arg'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- Switch callgrind instrumentation of this backend on or off (see the C
-- file); false when not running under valgrind.
CREATE FUNCTION bench_callgrind(on_off bool)
	RETURNS bool
	AS 'MODULE_PATHNAME', 'bench_callgrind'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
