/*-------------------------------------------------------------------------
 *
 * status.c
 *	  snowid_status(), snowid_stats and snowid_confirm_takeover(): what
 *	  operators see of a node, and the one thing they may tell it.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "shmem.h"

PG_FUNCTION_INFO_V1(snowid_status);
PG_FUNCTION_INFO_V1(snowid_stats_internal);
PG_FUNCTION_INFO_V1(snowid_stats_reset);
PG_FUNCTION_INFO_V1(snowid_confirm_takeover);

#define STATUS_COLUMNS 17

static Datum
interval_ms_datum(int64 ms)
{
	Interval   *result = palloc0(sizeof(Interval));

	result->time = ms * 1000;
	return IntervalPGetDatum(result);
}

static Datum
id_time_datum(const SnowidLayout *layout, int64 id_time)
{
	return TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(id_time + layout->epoch_ms));
}

/* One row describing this node's lease and generator. */
Datum
snowid_status(PG_FUNCTION_ARGS)
{
	const SnowidLayout *layout;
	TupleDesc	tupdesc;
	Datum		values[STATUS_COLUMNS];
	bool		nulls[STATUS_COLUMNS];
	SnowidShared copy;
	uint64		word;
	char		layout_text[256];
	int64		end_ms;
	int			i = 0;

	snowid_require_shared();
	layout = snowid_get_layout();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	word = pg_atomic_read_u64(&snowid_shared->last_id);
	SpinLockAcquire(&snowid_shared->mutex);
	memcpy(&copy, snowid_shared, offsetof(SnowidShared, stats_baseline));
	SpinLockRelease(&snowid_shared->mutex);

	memset(nulls, 0, sizeof(nulls));
	values[i++] = CStringGetTextDatum(copy.node_name);
	if (copy.has_lease)
	{
		values[i++] = Int32GetDatum(copy.worker_id);
		values[i++] = Int32GetDatum(copy.worker_id >> (layout->worker_bits - layout->region_bits));
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
	}
	values[i++] = CStringGetTextDatum(snowid_state_name(copy.state));
	if (copy.message[0])
		values[i++] = CStringGetTextDatum(copy.message);
	else
		nulls[i++] = true;
	if (copy.has_lease)
	{
		values[i++] = interval_ms_datum(Max(copy.lease_expiry_mono - snowid_monotonic_ms(), 0));
		values[i++] = id_time_datum(layout, copy.floor);
		values[i++] = id_time_datum(layout, copy.high_water);
		values[i++] = id_time_datum(layout, (int64) ((word & ~SNOWID_INVALID_FLAG) >> snowid_timestamp_shift(layout)));
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
		nulls[i++] = true;
		nulls[i++] = true;
	}
	values[i++] = CStringGetTextDatum(copy.coordinator);
	snowid_layout_format(layout, layout_text, sizeof(layout_text));
	values[i++] = CStringGetTextDatum(layout_text);
	end_ms = layout->epoch_ms + snowid_max_timestamp(layout);
	values[i++] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(end_ms));
	if (copy.keeper_pid)
		values[i++] = Int32GetDatum(copy.keeper_pid);
	else
		nulls[i++] = true;
	if (copy.last_renewal)
		values[i++] = TimestampTzGetDatum(copy.last_renewal);
	else
		nulls[i++] = true;
	if (copy.last_clock_regression)
	{
		values[i++] = TimestampTzGetDatum(copy.last_clock_regression);
		values[i++] = Int64GetDatum(copy.last_clock_regression_ms);
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
	}
	if (copy.has_lease)
		values[i++] = Int64GetDatum(copy.clock_offset_ms);
	else
		nulls[i++] = true;
	Assert(i == STATUS_COLUMNS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* Sum of every process's counters. */
static void
sum_counters(uint64 *sums)
{
	int			i,
				c;

	memset(sums, 0, sizeof(uint64) * SNOWID_NUM_COUNTERS);
	for (i = 0; i < snowid_shared->num_slots; i++)
		for (c = 0; c < SNOWID_NUM_COUNTERS; c++)
			sums[c] += pg_atomic_read_u64(&snowid_shared->slots[i].counters[c]);
}

/* The counters since the last reset, for the snowid_stats view. */
Datum
snowid_stats_internal(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[SNOWID_NUM_COUNTERS + 1];
	bool		nulls[SNOWID_NUM_COUNTERS + 1];
	uint64		sums[SNOWID_NUM_COUNTERS];
	uint64		baseline[SNOWID_NUM_COUNTERS];
	TimestampTz reset;
	int			c;

	snowid_require_shared();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	SpinLockAcquire(&snowid_shared->mutex);
	memcpy(baseline, snowid_shared->stats_baseline, sizeof(baseline));
	reset = snowid_shared->stats_reset;
	SpinLockRelease(&snowid_shared->mutex);
	sum_counters(sums);

	memset(nulls, 0, sizeof(nulls));
	for (c = 0; c < SNOWID_NUM_COUNTERS; c++)
		values[c] = Int64GetDatum((int64) (sums[c] - baseline[c]));
	values[SNOWID_NUM_COUNTERS] = TimestampTzGetDatum(reset);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* Start counting from zero (by taking the current sums as a baseline). */
Datum
snowid_stats_reset(PG_FUNCTION_ARGS)
{
	uint64		sums[SNOWID_NUM_COUNTERS];
	TimestampTz now = GetCurrentTimestamp();

	snowid_require_shared();
	sum_counters(sums);
	SpinLockAcquire(&snowid_shared->mutex);
	memcpy(snowid_shared->stats_baseline, sums, sizeof(sums));
	snowid_shared->stats_reset = now;
	SpinLockRelease(&snowid_shared->mutex);
	PG_RETURN_VOID();
}

/*
 * An operator confirms that the server this one was promoted, cloned or
 * restored from can no longer generate ids.  The keeper then fences the
 * local coordinator and takes a new lease.
 */
Datum
snowid_confirm_takeover(PG_FUNCTION_ARGS)
{
	Latch	   *latch;
	SnowidNodeState state;

	snowid_require_shared();
	SpinLockAcquire(&snowid_shared->mutex);
	state = snowid_shared->state;
	latch = snowid_shared->keeper_latch;
	if (state == SNOWID_STATE_UNFENCED_COPY)
		snowid_shared->confirm_takeover = true;
	SpinLockRelease(&snowid_shared->mutex);

	if (state != SNOWID_STATE_UNFENCED_COPY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid has no takeover to confirm"),
				 errdetail("The node's state is \"%s\", not \"unfenced_copy\".",
						   snowid_state_name(state))));
	if (latch)
		SetLatch(latch);
	PG_RETURN_VOID();
}
