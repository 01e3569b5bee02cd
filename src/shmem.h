/*-------------------------------------------------------------------------
 *
 * shmem.h
 *	  The node's shared state: generator word, lease, statistics.
 *
 * Concurrency rules
 * -----------------
 * last_id is the generator.  It holds the last issued id (timestamp |
 * worker | sequence); bit 63 is SNOWID_INVALID_FLAG.  Backends advance it
 * with compare-and-swap only, and only while the flag is clear.  The keeper
 * sets the flag with one atomic fetch-or, which stops generation at once
 * and tells it the true last used value; it installs a new lease by
 * storing floor | worker with the flag still set, and clears the flag last.
 *
 * usable_until is the highest id timestamp (milliseconds since the layout's
 * epoch) the node may issue: the minimum of the confirmed high-water mark
 * and the lease expiry converted to wall-clock time.  Only the keeper
 * writes it, before it clears the flag (with a write barrier between).
 * Backends read it after reading last_id, with a read barrier between, so
 * a backend that sees a word of the new lease sees its usable_until too.
 *
 * Everything else the keeper publishes (state, worker id, floor, reasons)
 * is protected by the spinlock "mutex" and read by status functions and by
 * backends building an error message; the hot path never takes it.
 *
 * Statistics live in one slot per PGPROC.  A process only ever writes its
 * own slot (plain read-then-write of an atomic, so no locked instruction);
 * readers add the slots up.  A reset records the current sums as a
 * baseline instead of writing to other processes' slots.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_SHMEM_H
#define SNOWID_SHMEM_H

#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/spin.h"

#include "layout.h"
#include "node_state.h"

#define SNOWID_INVALID_FLAG		(UINT64CONST(1) << 63)
#define SNOWID_TOKEN_LEN		16
#define SNOWID_MESSAGE_LEN		512

typedef enum SnowidCounter
{
	SNOWID_STAT_IDS = 0,
	SNOWID_STAT_CALLS,
	SNOWID_STAT_BATCH_CALLS,
	SNOWID_STAT_EXHAUSTION_WAITS,
	SNOWID_STAT_CLOCK_WAITS,
	SNOWID_STAT_CLOCK_REFUSALS,
	SNOWID_STAT_NO_LEASE_REFUSALS,
	SNOWID_STAT_CAS_RETRIES,
	SNOWID_STAT_LEASE_ACQUISITIONS,
	SNOWID_STAT_LEASE_RENEWALS,
	SNOWID_STAT_LEASE_RENEWAL_FAILURES,
	SNOWID_STAT_LEASE_LOSSES,
	SNOWID_NUM_COUNTERS
} SnowidCounter;

typedef struct SnowidStatSlot
{
	pg_atomic_uint64 counters[SNOWID_NUM_COUNTERS];
} SnowidStatSlot;

typedef struct SnowidShared
{
	/* the generator (see the rules above) */
	pg_atomic_uint64 last_id;
	pg_atomic_uint64 usable_until;
	/* the generator word gets a cache line of its own */
	char		pad_generator[PG_CACHE_LINE_SIZE - 2 * sizeof(pg_atomic_uint64)];

	/* snowid_uuidv7(): last (unix ms << 12 | rand_a) handed out */
	pg_atomic_uint64 uuidv7_last;
	char		pad_uuidv7[PG_CACHE_LINE_SIZE - sizeof(pg_atomic_uint64)];

	/* published by the keeper, protected by mutex */
	slock_t		mutex;
	SnowidNodeState state;
	bool		has_lease;
	uint8		token[SNOWID_TOKEN_LEN];
	int32		worker_id;
	int64		floor;			/* id-time ms: ids are above it */
	int64		high_water;		/* id-time ms, confirmed durable */
	int64		lease_expiry_mono;	/* monotonic ms */
	int64		lease_ms;
	TimestampTz last_renewal;
	TimestampTz state_since;
	int			keeper_pid;
	Latch	   *keeper_latch;	/* to wake the keeper */
	char		node_name[NAMEDATALEN * 2];
	bool		confirm_takeover;	/* operator said the old server is gone */
	char		message[SNOWID_MESSAGE_LEN];	/* detail of the state */
	char		coordinator[SNOWID_MESSAGE_LEN];	/* where leases live */

	/*
	 * The lease being asked for: its token is kept until a grant, so that a
	 * grant whose answer was lost is found again (grants are idempotent per
	 * token), never a second worker id.  Protected by mutex.
	 */
	bool		has_pending_token;
	uint8		pending_token[SNOWID_TOKEN_LEN];

	/*
	 * The keeper's clock watch, protected by mutex.  It lives here, not in
	 * the keeper's memory, so that a restarted keeper neither forgets that
	 * the clock was off nor declares an unconfirmed jump.
	 */
	int64		clock_offset_ms;	/* coordinator minus node */
	int64		clock_offset_uncertainty_ms;
	bool		clock_offset_exceeded;
	int64		clock_confirmed_wall;	/* wall clock at the last confirmation */
	int64		clock_confirmed_mono;	/* monotonic clock then; 0 = never */
	int32		max_clock_offset_ms;	/* the coordinator's bound; -1 unknown */

	/* backends' clock regression events, protected by mutex */
	TimestampTz last_clock_regression;
	int64		last_clock_regression_ms;

	/* statistics */
	uint64		stats_baseline[SNOWID_NUM_COUNTERS];	/* under mutex */
	TimestampTz stats_reset;
	int			num_slots;
	SnowidStatSlot slots[FLEXIBLE_ARRAY_MEMBER];
} SnowidShared;

/* NULL unless the library was preloaded */
extern SnowidShared *snowid_shared;

extern void snowid_shmem_install_hooks(void);
extern void snowid_require_shared(void);

/* Add to one of this process's counters. */
static inline void
snowid_count(SnowidCounter counter, uint64 n)
{
	extern SnowidStatSlot *snowid_my_slot;

	if (snowid_my_slot != NULL)
	{
		pg_atomic_uint64 *c = &snowid_my_slot->counters[counter];

		pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
	}
}

extern void snowid_attach_stat_slot(void);

#endif							/* SNOWID_SHMEM_H */
