/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The bit layout of a snowid and the pure arithmetic on it.
 *
 * A snowid is a non-negative 64-bit integer:
 *
 *	  bit 63 | timestamp bits | worker bits (region | node) | sequence bits
 *
 * Everything declared here is plain C with no dependency on the server
 * (no palloc, no ereport), so it can be unit-tested and fuzzed on its own.
 * Functions report problems through return codes; the SQL wrappers turn
 * them into PostgreSQL errors.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_LAYOUT_H
#define SNOWID_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* Defaults: 41 timestamp bits, 10 worker bits, 12 sequence bits. */
#define SNOWID_DEFAULT_WORKER_BITS		10
#define SNOWID_DEFAULT_REGION_BITS		0
#define SNOWID_DEFAULT_SEQUENCE_BITS	12
/* 2025-01-01 00:00:00 UTC in milliseconds since the Unix epoch */
#define SNOWID_DEFAULT_EPOCH_MS			INT64_C(1735689600000)

/*
 * Fewer timestamp bits than this would run out within a few years
 * (2^38 ms is about 8.7 years), so such layouts are refused.
 */
#define SNOWID_MIN_TIMESTAMP_BITS		38
#define SNOWID_MAX_WORKER_BITS			20
#define SNOWID_MAX_SEQUENCE_BITS		22

typedef struct SnowidLayout
{
	int64_t		epoch_ms;		/* Unix milliseconds of timestamp 0 */
	int			timestamp_bits;
	int			worker_bits;	/* including region_bits */
	int			region_bits;	/* high bits of the worker field */
	int			sequence_bits;
} SnowidLayout;

/* The parts of one id. */
typedef struct SnowidParts
{
	int64_t		timestamp;		/* milliseconds since the layout's epoch */
	int32_t		worker;			/* the whole worker field */
	int32_t		region;			/* its high region_bits */
	int32_t		sequence;
} SnowidParts;

typedef enum SnowidLayoutError
{
	SNOWID_LAYOUT_OK = 0,
	SNOWID_LAYOUT_WORKER_BITS,		/* worker_bits out of range */
	SNOWID_LAYOUT_SEQUENCE_BITS,	/* sequence_bits out of range */
	SNOWID_LAYOUT_REGION_BITS,		/* region_bits negative or > worker_bits */
	SNOWID_LAYOUT_TIMESTAMP_BITS,	/* too few timestamp bits left */
	SNOWID_LAYOUT_EPOCH				/* epoch before 1970 or in the future */
} SnowidLayoutError;

/* Result of parsing decimal text. */
typedef enum SnowidParseResult
{
	SNOWID_PARSE_OK = 0,
	SNOWID_PARSE_SYNTAX,		/* empty, or not a decimal number */
	SNOWID_PARSE_RANGE			/* negative, or above 2^63 - 1 */
} SnowidParseResult;

extern SnowidLayoutError snowid_layout_init(SnowidLayout *layout,
											int64_t epoch_ms,
											int worker_bits,
											int region_bits,
											int sequence_bits,
											int64_t now_ms);
extern const char *snowid_layout_error_text(SnowidLayoutError err);
extern int	snowid_layout_format(const SnowidLayout *layout, char *buf,
								 int buflen);

static inline int64_t
snowid_max_timestamp(const SnowidLayout *layout)
{
	return (INT64_C(1) << layout->timestamp_bits) - 1;
}

static inline int32_t
snowid_max_worker(const SnowidLayout *layout)
{
	return (INT32_C(1) << layout->worker_bits) - 1;
}

static inline int32_t
snowid_max_sequence(const SnowidLayout *layout)
{
	return (INT32_C(1) << layout->sequence_bits) - 1;
}

/* Shift of the timestamp field inside an id. */
static inline int
snowid_timestamp_shift(const SnowidLayout *layout)
{
	return layout->worker_bits + layout->sequence_bits;
}

extern void snowid_decompose(const SnowidLayout *layout, int64_t id,
							 SnowidParts *parts);
extern bool snowid_compose(const SnowidLayout *layout, int64_t timestamp,
						   int32_t worker, int32_t sequence, int64_t *id);
extern int64_t snowid_floor_div(int64_t a, int64_t b);

extern SnowidParseResult snowid_parse_decimal(const char *str, int64_t *result);

#endif							/* SNOWID_LAYOUT_H */
