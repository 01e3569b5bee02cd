/*-------------------------------------------------------------------------
 *
 * uuidv7.c
 *	  snowid_uuidv7() and snowid_uuidv7_timestamp(): time-ordered UUIDs
 *	  (RFC 9562, version 7) for PostgreSQL before 18.
 *
 * Layout of the 128 bits, most significant first:
 *
 *	  unix_ts_ms (48) | ver = 7 (4) | rand_a (12) | var = 10 (2) | rand_b (62)
 *
 * rand_a is a counter within the millisecond (RFC 9562 section 6.2,
 * method 1, fixed-length dedicated counter), so that the UUIDs of a node
 * are strictly increasing across all its backends: the shared word
 * snowid_shared->uuidv7_last holds (unix_ts_ms << 12 | rand_a) of the last
 * UUID handed out, and each call advances it with compare-and-swap to
 *
 *	  now << 12 | seed		if the clock is past the last millisecond,
 *	  last + 1				otherwise,
 *
 * where seed is a random number below 2048 (the counter's top bit starts
 * at zero, as the RFC advises, so at least 2048 UUIDs fit in any
 * millisecond).  When a millisecond's counter is used up, or the clock
 * steps back, last + 1 carries into the timestamp: the UUID's time runs
 * ahead of the clock by a millisecond at a time instead of waiting, and
 * the clock catches up.  rand_b comes from pg_strong_random().
 *
 * The shared word lives as long as the server: a crash restart starts it
 * again from the clock.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "shmem.h"

PG_FUNCTION_INFO_V1(snowid_uuidv7);
PG_FUNCTION_INFO_V1(snowid_uuidv7_timestamp);

#define UUIDV7_COUNTER_BITS		12
#define UUIDV7_MAX_MS			((INT64CONST(1) << 48) - 1)

/* A new version 7 UUID, above every one this server handed out before. */
Datum
snowid_uuidv7(PG_FUNCTION_ARGS)
{
	uint8		rnd[10];
	int64		now_ms;
	uint64		seed;
	uint64		last;
	uint64		next;
	uint64		ms;
	uint32		counter;
	pg_uuid_t  *uuid;
	int			i;

	snowid_require_shared();

	if (!pg_strong_random(rnd, sizeof(rnd)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random values")));
	seed = ((uint64) rnd[8] << 8 | rnd[9]) & 0x7FF;

	now_ms = snowid_wall_clock_ms();
	if (now_ms < 0 || now_ms > UUIDV7_MAX_MS)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("system clock is outside the range of a version 7 UUID")));

	last = pg_atomic_read_u64(&snowid_shared->uuidv7_last);
	for (;;)
	{
		if ((last >> UUIDV7_COUNTER_BITS) < (uint64) now_ms)
			next = ((uint64) now_ms << UUIDV7_COUNTER_BITS) | seed;
		else
			next = last + 1;
		if ((next >> UUIDV7_COUNTER_BITS) > (uint64) UUIDV7_MAX_MS)
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("version 7 UUID timestamps are exhausted")));
		/* on failure, last is updated to the current value */
		if (pg_atomic_compare_exchange_u64(&snowid_shared->uuidv7_last,
										   &last, next))
			break;
	}

	ms = next >> UUIDV7_COUNTER_BITS;
	counter = (uint32) (next & ((1 << UUIDV7_COUNTER_BITS) - 1));

	uuid = palloc(sizeof(pg_uuid_t));
	for (i = 0; i < 6; i++)
		uuid->data[i] = (uint8) (ms >> (40 - 8 * i));
	uuid->data[6] = (uint8) (0x70 | (counter >> 8));
	uuid->data[7] = (uint8) (counter & 0xFF);
	uuid->data[8] = (uint8) (0x80 | (rnd[0] & 0x3F));
	for (i = 9; i < UUID_LEN; i++)
		uuid->data[i] = rnd[i - 8];

	PG_RETURN_UUID_P(uuid);
}

/* The millisecond a version 7 UUID carries; an error for other UUIDs. */
Datum
snowid_uuidv7_timestamp(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *uuid = PG_GETARG_UUID_P(0);
	int			version = uuid->data[6] >> 4;
	int64		ms = 0;
	int			i;

	if (version != 7 || (uuid->data[8] & 0xC0) != 0x80)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uuid is not a version 7 UUID"),
				 (uuid->data[8] & 0xC0) != 0x80 ?
				 errdetail("Its variant bits are not those of RFC 9562.") :
				 errdetail("Its version is %d.", version)));

	for (i = 0; i < 6; i++)
		ms = (ms << 8) | uuid->data[i];
	PG_RETURN_TIMESTAMPTZ(snowid_unix_ms_to_timestamptz(ms));
}
