/*-------------------------------------------------------------------------
 *
 * decode.c
 *	  SQL functions that take snowids apart and build them from parts.
 *
 * All of them read the layout from the settings.  They are IMMUTABLE: the
 * layout of a cluster never changes once ids exist (the coordinator pins it
 * and refuses nodes that disagree), which is what lets them be used in
 * expression indexes and generated columns.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(snowid_timestamp);
PG_FUNCTION_INFO_V1(snowid_worker);
PG_FUNCTION_INFO_V1(snowid_region);
PG_FUNCTION_INFO_V1(snowid_sequence);
PG_FUNCTION_INFO_V1(snowid_decode);
PG_FUNCTION_INFO_V1(snowid_from_parts);
PG_FUNCTION_INFO_V1(snowid_from_time);

/* The timestamptz an id's timestamp field stands for. */
static TimestampTz
id_timestamptz(const SnowidLayout *layout, const SnowidParts *parts)
{
	TimestampTz result = DT_NOEND;

	/*
	 * 61 timestamp bits of milliseconds reach beyond timestamptz's range;
	 * test the bound before multiplying so nothing overflows.
	 */
	if (parts->timestamp < END_TIMESTAMP / 1000 - layout->epoch_ms +
		SNOWID_PG_EPOCH_UNIX_MS)
		result = snowid_unix_ms_to_timestamptz(parts->timestamp + layout->epoch_ms);
	if (!IS_VALID_TIMESTAMP(result))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp of snowid out of range")));
	return result;
}

/*
 * Milliseconds since the layout's epoch for a timestamptz, or an error if
 * the layout cannot express it.
 */
static int64
timestamptz_to_id_time(const SnowidLayout *layout, TimestampTz ts)
{
	int64		ms;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowid"),
				 errdetail("A snowid cannot stand for an infinite time.")));
	ms = snowid_timestamptz_to_unix_ms(ts) - layout->epoch_ms;
	if (ms < 0 || ms > snowid_max_timestamp(layout))
	{
		/*
		 * The last millisecond of a layout with many timestamp bits lies
		 * beyond timestamptz's range: name timestamptz's last one instead.
		 * timestamptz_to_str returns a static buffer, so copy the first.
		 */
		int64		last_ms = Min(layout->epoch_ms + snowid_max_timestamp(layout),
								  END_TIMESTAMP / 1000 - 1 + SNOWID_PG_EPOCH_UNIX_MS);
		char	   *first;

		first = pstrdup(timestamptz_to_str(snowid_unix_ms_to_timestamptz(layout->epoch_ms)));
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowid"),
				 errdetail("The layout covers %s to %s.", first,
						   timestamptz_to_str(snowid_unix_ms_to_timestamptz(last_ms)))));
	}
	return ms;
}

Datum
snowid_timestamp(PG_FUNCTION_ARGS)
{
	const SnowidLayout *layout = snowid_get_layout();
	SnowidParts parts;

	snowid_decompose(layout, PG_GETARG_SNOWID(0), &parts);
	PG_RETURN_TIMESTAMPTZ(id_timestamptz(layout, &parts));
}

Datum
snowid_worker(PG_FUNCTION_ARGS)
{
	SnowidParts parts;

	snowid_decompose(snowid_get_layout(), PG_GETARG_SNOWID(0), &parts);
	PG_RETURN_INT32(parts.worker);
}

Datum
snowid_region(PG_FUNCTION_ARGS)
{
	SnowidParts parts;

	snowid_decompose(snowid_get_layout(), PG_GETARG_SNOWID(0), &parts);
	PG_RETURN_INT32(parts.region);
}

Datum
snowid_sequence(PG_FUNCTION_ARGS)
{
	SnowidParts parts;

	snowid_decompose(snowid_get_layout(), PG_GETARG_SNOWID(0), &parts);
	PG_RETURN_INT32(parts.sequence);
}

/* All parts at once: (timestamp, worker, region, sequence). */
Datum
snowid_decode(PG_FUNCTION_ARGS)
{
	const SnowidLayout *layout = snowid_get_layout();
	SnowidParts parts;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	snowid_decompose(layout, PG_GETARG_SNOWID(0), &parts);
	values[0] = TimestampTzGetDatum(id_timestamptz(layout, &parts));
	values[1] = Int32GetDatum(parts.worker);
	values[2] = Int32GetDatum(parts.region);
	values[3] = Int32GetDatum(parts.sequence);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* Build an id from a time (truncated to the millisecond), worker, sequence. */
Datum
snowid_from_parts(PG_FUNCTION_ARGS)
{
	const SnowidLayout *layout = snowid_get_layout();
	int64		ms = timestamptz_to_id_time(layout, PG_GETARG_TIMESTAMPTZ(0));
	int32		worker = PG_GETARG_INT32(1);
	int32		sequence = PG_GETARG_INT32(2);
	int64		id;

	if (worker < 0 || worker > snowid_max_worker(layout))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("worker id %d out of range for snowid", worker),
				 errdetail("With %d worker bits, worker ids run from 0 to %d.",
						   layout->worker_bits, snowid_max_worker(layout))));
	if (sequence < 0 || sequence > snowid_max_sequence(layout))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("sequence %d out of range for snowid", sequence),
				 errdetail("With %d sequence bits, sequences run from 0 to %d.",
						   layout->sequence_bits, snowid_max_sequence(layout))));
	if (!snowid_compose(layout, ms, worker, sequence, &id))
		elog(ERROR, "snowid parts out of range after checks");
	PG_RETURN_SNOWID(id);
}

/* The lowest id of the millisecond containing a time, for range scans. */
Datum
snowid_from_time(PG_FUNCTION_ARGS)
{
	const SnowidLayout *layout = snowid_get_layout();
	int64		ms = timestamptz_to_id_time(layout, PG_GETARG_TIMESTAMPTZ(0));
	int64		id;

	if (!snowid_compose(layout, ms, 0, 0, &id))
		elog(ERROR, "snowid time out of range after checks");
	PG_RETURN_SNOWID(id);
}
