/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every difference between the PostgreSQL majors snowid supports
 *	  (15 through 18), in one place.
 *
 * The rest of the code is written against PostgreSQL 18's names; this
 * header maps them onto older majors, or turns a newer feature into its
 * nearest older equivalent.  No PG_VERSION_NUM test belongs anywhere else.
 *
 *	  16: varatt.h (VARDATA_ANY & co.) and soft input errors (ereturn,
 *		  escontext); on 15 ereturn raises the error, as 15 always did.
 *	  17: named wait events (WaitEventExtensionNew): see snowid_wait_event();
 *		  on 15 and 16 every wait is the generic "Extension".
 *		  MyProcNumber replaces MyProc->pgprocno.
 *	  18: pg_noreturn replaces pg_attribute_noreturn(), Abs() is gone, and
 *		  PG_MODULE_MAGIC_EXT names the module and its version for
 *		  pg_get_loaded_modules().
 *
 * Not used: 17's pg_atomic_monotonic_advance_u64().  Each shared word snowid
 * advances either has one writer (usable_until: the keeper) or needs to
 * know whether this backend won the value it wrote (last_id, uuidv7_last:
 * two backends must never both take one id), which a monotonic advance
 * does not tell; a compare-and-swap does, on every major.
 *
 * Included by snowid.h, so every file sees it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_COMPAT_H
#define SNOWID_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "snowid needs PostgreSQL 15 or later"
#endif

/* 16 moved the varlena macros out of postgres.h. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * 16: soft input errors.  An input function reports through
 * ereturn(fcinfo->context, (Datum) 0, ...), which records the error in an
 * ErrorSaveContext when the caller passed one (pg_input_is_valid(), COPY
 * ... ON_ERROR) and raises it otherwise.  15 has no such context: raise.
 */
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#else
#define ereturn(context, dummy_value, ...) \
	do { \
		(void) (context); \
		ereport(ERROR, __VA_ARGS__); \
		return dummy_value; \
	} while (0)
#endif

/* 18: pg_noreturn goes before the declaration; older majors' attribute does too. */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 18 removed c.h's Abs() (keeper.c uses it on int64 offsets). */
#ifndef Abs
#define Abs(x)			((x) >= 0 ? (x) : -(x))
#endif

/* 17: this process's index into the PGPROC array. */
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#define SNOWID_MY_PROC_NUMBER	MyProcNumber
#else
#include "storage/proc.h"
#define SNOWID_MY_PROC_NUMBER	(MyProc != NULL ? MyProc->pgprocno : -1)
#endif

/* 18: the module's magic block carries its name and version. */
#if PG_VERSION_NUM >= 180000
#define SNOWID_MODULE_MAGIC \
	PG_MODULE_MAGIC_EXT(.name = "snowid", .version = SNOWID_VERSION)
#else
#define SNOWID_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * 17: named wait events.  Each wait snowid does has a name in
 * pg_wait_events and pg_stat_activity.wait_event ("Extension" type); on 15
 * and 16 they are all the generic "Extension".  Call sites use the macros,
 * so they read the same on every major.
 */
typedef enum SnowidWaitEvent
{
	SNOWID_WE_LEASE_KEEPER = 0,	/* the keeper's main loop (latch) */
	SNOWID_WE_COORDINATOR_SOCKET,	/* the keeper waiting for the coordinator */
	SNOWID_WE_SEQUENCE_EXHAUSTED,	/* a backend waiting for the next ms */
	SNOWID_WE_CLOCK_BEHIND,		/* a backend waiting for the clock */
	SNOWID_NUM_WAIT_EVENTS
} SnowidWaitEvent;

extern uint32 snowid_wait_event(SnowidWaitEvent which);
extern void snowid_wait_usleep(SnowidWaitEvent which, long microsec);

#define SNOWID_WAIT_LEASE_KEEPER		snowid_wait_event(SNOWID_WE_LEASE_KEEPER)
#define SNOWID_WAIT_COORDINATOR_SOCKET	snowid_wait_event(SNOWID_WE_COORDINATOR_SOCKET)

/* pg_usleep() that pg_stat_activity shows as the named wait. */
#define snowid_exhaustion_usleep(us)	snowid_wait_usleep(SNOWID_WE_SEQUENCE_EXHAUSTED, (us))
#define snowid_clock_usleep(us)			snowid_wait_usleep(SNOWID_WE_CLOCK_BEHIND, (us))

#endif							/* SNOWID_COMPAT_H */
