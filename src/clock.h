/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  Clock reads and conversions between Unix milliseconds and
 *	  timestamptz (clock.c).
 *
 * Ids carry wall-clock milliseconds (CLOCK_REALTIME); lease expiry is
 * tracked on CLOCK_MONOTONIC, which never steps.  The file is not called
 * time.h, which would shadow the system's <time.h> for every file in src/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_CLOCK_H
#define SNOWID_CLOCK_H

#include "datatype/timestamp.h"

/* Milliseconds between the Unix epoch and PostgreSQL's 2000-01-01. */
#define SNOWID_PG_EPOCH_UNIX_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* Current wall-clock time in Unix milliseconds. */
extern int64 snowid_wall_clock_ms(void);

/* Milliseconds on the monotonic clock (arbitrary origin, never steps). */
extern int64 snowid_monotonic_ms(void);

extern TimestampTz snowid_unix_ms_to_timestamptz(int64 unix_ms);
extern int64 snowid_timestamptz_to_unix_ms(TimestampTz ts);

#endif							/* SNOWID_CLOCK_H */
