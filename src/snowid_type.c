/*-------------------------------------------------------------------------
 *
 * snowid_type.c
 *	  Input, output and casts of the snowid type.
 *
 * A snowid is stored exactly like an int8 (8 bytes, by value), so the
 * comparison, hashing and sort support functions are int8's own, declared
 * LANGUAGE internal in the extension script.  Only the functions that must
 * refuse negative values live here.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "libpq/pqformat.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(snowid_in);
PG_FUNCTION_INFO_V1(snowid_out);
PG_FUNCTION_INFO_V1(snowid_recv);
PG_FUNCTION_INFO_V1(snowid_send);
PG_FUNCTION_INFO_V1(snowid_from_int8);
PG_FUNCTION_INFO_V1(snowid_from_int4);

/* Raise the error every negative snowid gets. */
static void
report_negative(int64 value)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("snowid out of range"),
			 errdetail("A snowid is never negative, but the value was " INT64_FORMAT ".",
					   value)));
}

/*
 * Text input: a decimal number from 0 to 2^63 - 1.  Errors are soft (16
 * on): with an ErrorSaveContext in fcinfo->context, as pg_input_is_valid()
 * and COPY ... ON_ERROR pass, they are recorded there instead of raised.
 */
Datum
snowid_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	int64		result = 0;

	switch (snowid_parse_decimal(str, &result))
	{
		case SNOWID_PARSE_OK:
			break;
		case SNOWID_PARSE_SYNTAX:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for type %s: \"%s\"",
							"snowid", str)));
		case SNOWID_PARSE_RANGE:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value \"%s\" is out of range for type %s",
							str, "snowid"),
					 errdetail("A snowid is a whole number from 0 to 9223372036854775807.")));
	}
	PG_RETURN_SNOWID(result);
}

/* Text output: the decimal number. */
Datum
snowid_out(PG_FUNCTION_ARGS)
{
	int64		value = PG_GETARG_SNOWID(0);
	char		buf[MAXINT8LEN + 1];

	pg_lltoa(value, buf);
	PG_RETURN_CSTRING(pstrdup(buf));
}

/* Binary input: eight bytes in network order, as int8, never negative. */
Datum
snowid_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int64		value = pq_getmsgint64(buf);

	if (value < 0)
		report_negative(value);
	PG_RETURN_SNOWID(value);
}

/* Binary output: eight bytes in network order, as int8. */
Datum
snowid_send(PG_FUNCTION_ARGS)
{
	int64		value = PG_GETARG_SNOWID(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, value);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* Cast bigint to snowid. */
Datum
snowid_from_int8(PG_FUNCTION_ARGS)
{
	int64		value = PG_GETARG_INT64(0);

	if (value < 0)
		report_negative(value);
	PG_RETURN_SNOWID(value);
}

/* Cast integer to snowid. */
Datum
snowid_from_int4(PG_FUNCTION_ARGS)
{
	int32		value = PG_GETARG_INT32(0);

	if (value < 0)
		report_negative(value);
	PG_RETURN_SNOWID((int64) value);
}
