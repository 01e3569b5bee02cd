/*-------------------------------------------------------------------------
 *
 * formats.c
 *	  snowid_to_base32() and snowid_from_base32(): the compact text form.
 *
 * The work is done in base32.c; this file turns its results into values
 * and PostgreSQL errors.  Both functions are IMMUTABLE: the form depends
 * on nothing but the value.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "utils/builtins.h"

#include "base32.h"

PG_FUNCTION_INFO_V1(snowid_to_base32);
PG_FUNCTION_INFO_V1(snowid_from_base32);

/* A snowid as 13 Crockford base32 symbols. */
Datum
snowid_to_base32(PG_FUNCTION_ARGS)
{
	int64		value = PG_GETARG_SNOWID(0);
	char		buf[SNOWID_BASE32_LEN + 1];

	snowid_base32_encode(value, buf);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/*
 * 13 Crockford base32 symbols (hyphens ignored) to a snowid.  Its errors
 * are soft, as snowid_in's, for a caller that passes an ErrorSaveContext;
 * called from SQL it raises them.
 */
Datum
snowid_from_base32(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	int64		value = 0;

	switch (snowid_base32_decode(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t), &value))
	{
		case SNOWID_BASE32_OK:
			break;
		case SNOWID_BASE32_SYNTAX:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for a base32 snowid: \"%s\"",
							text_to_cstring(t)),
					 errdetail("A base32 snowid uses the characters 0-9 and A-Z without U (I and L read as 1, O as 0); hyphens are ignored.")));
		case SNOWID_BASE32_LENGTH:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid input syntax for a base32 snowid: \"%s\"",
							text_to_cstring(t)),
					 errdetail("A base32 snowid has exactly %d characters, not counting hyphens.",
							   SNOWID_BASE32_LEN)));
		case SNOWID_BASE32_RANGE:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("value \"%s\" is out of range for type %s",
							text_to_cstring(t), "snowid"),
					 errdetail("The largest base32 snowid is 7ZZZZZZZZZZZZ (9223372036854775807).")));
	}
	PG_RETURN_SNOWID(value);
}
