/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  Bit arithmetic and text parsing for snowids, independent of the server.
 *
 * Nothing here allocates or raises errors: callers get a status code and
 * decide how to report it.  This keeps the code usable from unit tests and
 * fuzzers that link it without a PostgreSQL backend.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>

#include "layout.h"

/* A limit as text, so that the messages quote the constants (no second copy). */
#define LAYOUT_STR_(x)	#x
#define LAYOUT_STR(x)	LAYOUT_STR_(x)

/*
 * Validate a layout and fill in *layout.  now_ms is the current Unix time in
 * milliseconds; an epoch after it is refused, since ids would then carry
 * negative timestamps.
 */
SnowidLayoutError
snowid_layout_init(SnowidLayout *layout, int64_t epoch_ms, int worker_bits,
				   int region_bits, int sequence_bits, int64_t now_ms)
{
	if (worker_bits < 1 || worker_bits > SNOWID_MAX_WORKER_BITS)
		return SNOWID_LAYOUT_WORKER_BITS;
	if (sequence_bits < 1 || sequence_bits > SNOWID_MAX_SEQUENCE_BITS)
		return SNOWID_LAYOUT_SEQUENCE_BITS;
	if (region_bits < 0 || region_bits > worker_bits)
		return SNOWID_LAYOUT_REGION_BITS;
	if (63 - worker_bits - sequence_bits < SNOWID_MIN_TIMESTAMP_BITS)
		return SNOWID_LAYOUT_TIMESTAMP_BITS;
	if (epoch_ms < 0 || epoch_ms > now_ms)
		return SNOWID_LAYOUT_EPOCH;

	layout->epoch_ms = epoch_ms;
	layout->worker_bits = worker_bits;
	layout->region_bits = region_bits;
	layout->sequence_bits = sequence_bits;
	layout->timestamp_bits = 63 - worker_bits - sequence_bits;
	return SNOWID_LAYOUT_OK;
}

/* A sentence describing a layout error, for an error detail. */
const char *
snowid_layout_error_text(SnowidLayoutError err)
{
	switch (err)
	{
		case SNOWID_LAYOUT_OK:
			return "The layout is valid.";
		case SNOWID_LAYOUT_WORKER_BITS:
			return "snowid.worker_bits must be between 1 and " LAYOUT_STR(SNOWID_MAX_WORKER_BITS) ".";
		case SNOWID_LAYOUT_SEQUENCE_BITS:
			return "snowid.sequence_bits must be between 1 and " LAYOUT_STR(SNOWID_MAX_SEQUENCE_BITS) ".";
		case SNOWID_LAYOUT_REGION_BITS:
			return "snowid.region_bits must be between 0 and snowid.worker_bits.";
		case SNOWID_LAYOUT_TIMESTAMP_BITS:
			return "snowid.worker_bits plus snowid.sequence_bits must leave at least " LAYOUT_STR(SNOWID_MIN_TIMESTAMP_BITS) " timestamp bits (about 8.7 years).";
		case SNOWID_LAYOUT_EPOCH:
			return "snowid.epoch must not be before 1970 or in the future.";
	}
	return "Unknown layout error.";
}

/*
 * Render a layout as "41/10/12 (region 0) epoch 1735689600000" into buf.
 * Returns what snprintf returns.
 */
int
snowid_layout_format(const SnowidLayout *layout, char *buf, int buflen)
{
	return snprintf(buf, buflen,
					"timestamp_bits=%d worker_bits=%d region_bits=%d sequence_bits=%d epoch_ms=%lld",
					layout->timestamp_bits, layout->worker_bits,
					layout->region_bits, layout->sequence_bits,
					(long long) layout->epoch_ms);
}

/* Split a (non-negative) id into its fields. */
void
snowid_decompose(const SnowidLayout *layout, int64_t id, SnowidParts *parts)
{
	uint64_t	u = (uint64_t) id;

	parts->sequence = (int32_t) (u & (uint64_t) snowid_max_sequence(layout));
	u >>= layout->sequence_bits;
	parts->worker = (int32_t) (u & (uint64_t) snowid_max_worker(layout));
	u >>= layout->worker_bits;
	parts->timestamp = (int64_t) u;
	parts->region = parts->worker >> (layout->worker_bits - layout->region_bits);
}

/*
 * Build an id from its fields.  Returns false if any field is out of range
 * for the layout (the caller reports it); *id is then left alone.
 */
bool
snowid_compose(const SnowidLayout *layout, int64_t timestamp, int32_t worker,
			   int32_t sequence, int64_t *id)
{
	if (timestamp < 0 || timestamp > snowid_max_timestamp(layout))
		return false;
	if (worker < 0 || worker > snowid_max_worker(layout))
		return false;
	if (sequence < 0 || sequence > snowid_max_sequence(layout))
		return false;

	*id = (int64_t) (((uint64_t) timestamp << snowid_timestamp_shift(layout)) |
					 ((uint64_t) worker << layout->sequence_bits) |
					 (uint64_t) sequence);
	return true;
}

/* Division rounding towards minus infinity (b > 0). */
int64_t
snowid_floor_div(int64_t a, int64_t b)
{
	int64_t		q = a / b;

	if ((a % b) != 0 && (a < 0))
		q--;
	return q;
}

static inline bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		c == '\f' || c == '\v';
}

/*
 * Parse the decimal text form of a snowid: optional surrounding whitespace,
 * an optional sign, and at least one digit.  A negative value or one above
 * 2^63 - 1 is a range error ("-0" is zero); anything else that is not such
 * a number is a syntax error.
 */
SnowidParseResult
snowid_parse_decimal(const char *str, int64_t *result)
{
	const char *p = str;
	bool		negative = false;
	bool		overflow = false;
	uint64_t	value = 0;
	const char *digits;

	while (is_space(*p))
		p++;
	if (*p == '+' || *p == '-')
	{
		negative = (*p == '-');
		p++;
	}
	digits = p;
	while (*p >= '0' && *p <= '9')
	{
		int			d = *p - '0';

		if (value > (UINT64_C(0x7FFFFFFFFFFFFFFF) - (uint64_t) d) / 10)
			overflow = true;
		else
			value = value * 10 + (uint64_t) d;
		p++;
	}
	if (p == digits)
		return SNOWID_PARSE_SYNTAX;
	while (is_space(*p))
		p++;
	if (*p != '\0')
		return SNOWID_PARSE_SYNTAX;
	if (overflow || (negative && value != 0))
		return SNOWID_PARSE_RANGE;

	*result = (int64_t) value;
	return SNOWID_PARSE_OK;
}
