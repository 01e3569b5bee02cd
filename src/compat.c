/*-------------------------------------------------------------------------
 *
 * compat.c
 *	  The functions behind compat.h: snowid's named wait events.
 *
 * From PostgreSQL 17 on, WaitEventExtensionNew() registers a name in
 * shared memory (once per cluster; the same name always gives the same
 * id) and returns the wait event id to pass to WaitLatch() or to
 * pgstat_report_wait_start().  Each process asks once and keeps the ids.
 * The first lookup registers all of snowid's events, so that
 * pg_wait_events lists every one of them as soon as the lease keeper has
 * waited once, not only those that happened to occur.  On 15 and 16 every
 * event is PG_WAIT_EXTENSION.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "pgstat.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM >= 170000
static const char *const wait_event_names[SNOWID_NUM_WAIT_EVENTS] = {
	[SNOWID_WE_LEASE_KEEPER] = "SnowidLeaseKeeper",
	[SNOWID_WE_COORDINATOR_SOCKET] = "SnowidCoordinatorSocket",
	[SNOWID_WE_SEQUENCE_EXHAUSTED] = "SnowidSequenceExhausted",
	[SNOWID_WE_CLOCK_BEHIND] = "SnowidClockBehind",
};

static uint32 wait_event_ids[SNOWID_NUM_WAIT_EVENTS];
static bool wait_events_known = false;
#endif

/* The wait event id for one of snowid's waits. */
uint32
snowid_wait_event(SnowidWaitEvent which)
{
	Assert(which >= 0 && which < SNOWID_NUM_WAIT_EVENTS);
#if PG_VERSION_NUM >= 170000
	if (unlikely(!wait_events_known))
	{
		int			i;

		for (i = 0; i < SNOWID_NUM_WAIT_EVENTS; i++)
			wait_event_ids[i] = WaitEventExtensionNew(wait_event_names[i]);
		wait_events_known = true;
	}
	return wait_event_ids[which];
#else
	return PG_WAIT_EXTENSION;
#endif
}

/*
 * Sleep, shown in pg_stat_activity as the wait "which".  For the short
 * sleeps of a backend (under a millisecond, or one at a time), where
 * WaitLatch's millisecond timeout is too coarse.
 */
void
snowid_wait_usleep(SnowidWaitEvent which, long microsec)
{
	pgstat_report_wait_start(snowid_wait_event(which));
	pg_usleep(microsec);
	pgstat_report_wait_end();
}
