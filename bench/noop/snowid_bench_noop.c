/*-------------------------------------------------------------------------
 *
 * snowid_bench_noop.c
 *	  Functions that return a constant, for the snowid benchmark.
 *
 * The benchmark times N calls of a generator in a query and subtracts N
 * calls of one of these, which cost the same executor and function-call
 * overhead and nothing else, to get the generator's own cost.
 *
 * bench_callgrind(on) switches valgrind's callgrind instrumentation on or
 * off in the calling backend only, so that a server started under
 * "valgrind --tool=callgrind --instr-atstart=no" runs at near-native speed
 * everywhere but in the backend being measured.  Outside valgrind it does
 * nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(bench_noop);
PG_FUNCTION_INFO_V1(bench_noop_arg);
PG_FUNCTION_INFO_V1(bench_callgrind);

/* bench_noop(): like snowid_nextval() without the generator. */
Datum
bench_noop(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(42);
}

/* bench_noop(regclass): like nextval(regclass) without the sequence. */
Datum
bench_noop_arg(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64((int64) PG_GETARG_OID(0));
}

/*
 * bench_callgrind(on): start or stop callgrind instrumentation of this
 * backend.  Returns whether it runs under valgrind at all.
 */
Datum
bench_callgrind(PG_FUNCTION_ARGS)
{
#ifdef HAVE_CALLGRIND
	if (PG_GETARG_BOOL(0))
		CALLGRIND_START_INSTRUMENTATION;
	else
		CALLGRIND_STOP_INSTRUMENTATION;
	PG_RETURN_BOOL(RUNNING_ON_VALGRIND != 0);
#else
	PG_RETURN_BOOL(false);
#endif
}
