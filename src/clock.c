/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  Clock reads and conversions between Unix milliseconds and timestamptz.
 *
 * Ids carry wall-clock milliseconds (CLOCK_REALTIME, which libfaketime can
 * step in tests); lease expiry is tracked on CLOCK_MONOTONIC, which never
 * steps.  (Named clock.c, not time.c: a src/time.h would shadow <time.h>.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "clock.h"
#include "layout.h"

/* Current wall-clock time in Unix milliseconds. */
int64
snowid_wall_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds on the monotonic clock (arbitrary origin, never steps). */
int64
snowid_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

TimestampTz
snowid_unix_ms_to_timestamptz(int64 unix_ms)
{
	return (TimestampTz) ((unix_ms - SNOWID_PG_EPOCH_UNIX_MS) * 1000);
}

/* Milliseconds since the Unix epoch, rounding towards minus infinity. */
int64
snowid_timestamptz_to_unix_ms(TimestampTz ts)
{
	return snowid_floor_div(ts, 1000) + SNOWID_PG_EPOCH_UNIX_MS;
}
