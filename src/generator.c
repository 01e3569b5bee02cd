/*-------------------------------------------------------------------------
 *
 * generator.c
 *	  snowid_nextval() and snowid_generate(): ids from shared memory.
 *
 * The request path reads the wall clock once, reads the shared word
 * holding the last issued id and the usable_until bound, and advances the
 * word with compare-and-swap.  No lock, no I/O, no network.  See shmem.h
 * for the protocol with the lease keeper.
 *
 * snowid_nextval() has a fast path for the two common cases (the same
 * millisecond with sequence numbers left, and a new millisecond): the
 * layout's masks are computed once per process, the clock is read once
 * and converted to milliseconds with one division, and the statistics
 * slot is written directly.  Everything else (no lease, an exhausted
 * millisecond, a clock behind the last used timestamp, the end of the
 * timestamp bits) goes through snowid_reserve(), the general path that
 * snowid_generate() uses too.  Both keep the same rules: an id's timestamp
 * is a clock reading (read again only when another backend has already
 * used a later millisecond), usable_until is read after last_id, only a
 * compare-and-swap publishes an id, and a millisecond past usable_until or
 * past the timestamp bits is refused.
 *
 * Waiting: when the 2^sequence_bits ids of a millisecond are used up, the
 * caller waits for the next millisecond, since an id never carries a
 * timestamp ahead of the clock: it sleeps until shortly before the
 * millisecond turns and yields the processor for the rest, so a capped
 * session does not burn a core.  When the clock is behind the last used
 * timestamp by at most snowid.max_clock_wait, the caller waits too;
 * further behind, it refuses and generation resumes by itself once the
 * clock passes that timestamp.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include <sched.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "access/xlog.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/timestamp.h"

#include "node_state.h"
#include "shmem.h"

PG_FUNCTION_INFO_V1(snowid_nextval);
PG_FUNCTION_INFO_V1(snowid_generate);

#define SNOWID_MAX_BATCH		1000000

/*
 * Waiting for the next millisecond: sleep until this many microseconds
 * before it (a sleep may wake up to the kernel's timer slack, 50 us, late),
 * then yield until it comes.
 */
#define WAKE_BEFORE_US			60

/* This process's statistics slot (shmem.c); NULL until attached. */
extern SnowidStatSlot *snowid_my_slot;

/* The layout's constants, computed once per process (the layout is fixed). */
typedef struct GeneratorConsts
{
	bool		ready;
	int			shift;			/* of the timestamp field */
	uint64		seq_mask;
	uint64		worker_mask;
	int64		max_ts;
	int64		epoch_ms;
	bool		prefetchw;		/* the CPU has PREFETCHW */
} GeneratorConsts;

static GeneratorConsts gen;

static void
generator_init(void)
{
	const SnowidLayout *layout = snowid_get_layout();

	gen.shift = snowid_timestamp_shift(layout);
	gen.seq_mask = (uint64) snowid_max_sequence(layout);
	gen.worker_mask = (uint64) snowid_max_worker(layout) << layout->sequence_bits;
	gen.max_ts = snowid_max_timestamp(layout);
	gen.epoch_ms = layout->epoch_ms;
#if defined(__x86_64__)
	{
		unsigned int eax,
					ebx,
					ecx,
					edx;

		gen.prefetchw = __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) &&
			(ecx & (1 << 8)) != 0;
	}
#endif
	gen.ready = true;
}

/*
 * Ask for the cache line of the generator word in exclusive state, so that
 * under contention the read and the compare-and-swap that follow find it
 * here instead of moving it between processors twice.  Only a hint.
 */
static inline void
prefetch_for_write(void)
{
#if defined(__x86_64__)
	if (gen.prefetchw)
		__asm__ __volatile__("prefetchw %0" : : "m"(snowid_shared->last_id));
#endif
}

/* The wall clock, read once: id-time milliseconds, and microseconds. */
static inline int64
clock_id_ms(int64 *unix_us)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (unix_us)
		*unix_us = (int64) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - gen.epoch_ms;
}

/*
 * usable_until, read after the generator word: the read barrier keeps a
 * weakly ordered processor (ARM64) from loading it first and pairing a new
 * lease's word with the old lease's bound (shmem.h).  On x86 it costs
 * nothing but a compiler barrier.
 */
static inline int64
read_usable_until(void)
{
	pg_read_barrier();
	return (int64) pg_atomic_read_u64(&snowid_shared->usable_until);
}

/* Add to a counter of this process's slot (see shmem.h). */
static inline void
count_in(SnowidStatSlot *slot, SnowidCounter counter, uint64 n)
{
	pg_atomic_uint64 *c = &slot->counters[counter];

	pg_atomic_write_u64(c, pg_atomic_read_u64(c) + n);
}

/* The layout's timestamp field cannot hold the current time. */
static void
report_time_exhausted(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("snowid timestamp bits are exhausted"),
			 errdetail("The layout's timestamp field cannot represent the current time."),
			 errhint("A new cluster needs a later snowid.epoch or more timestamp bits.")));
}

/* The lease does not reach the current time: refuse. */
static void
report_not_confirmed(int64 now, int64 until)
{
	snowid_count(SNOWID_STAT_NO_LEASE_REFUSALS, 1);
	ereport(ERROR,
			(errcode(ERRCODE_CANNOT_CONNECT_NOW),
			 errmsg("snowid lease is not confirmed for the current time"),
			 errdetail("The lease covers ids up to %lld ms past the epoch; the clock reads %lld.",
					   (long long) until, (long long) now),
			 errhint("The lease keeper renews the lease with the coordinator; retry in a few seconds, and see snowid_status() if this persists.")));
}

/* The clock is further behind the last used timestamp than we may wait. */
static void
report_clock_regressed(int64 behind_ms)
{
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->last_clock_regression = now;
	snowid_shared->last_clock_regression_ms = behind_ms;
	SpinLockRelease(&snowid_shared->mutex);
	snowid_count(SNOWID_STAT_CLOCK_REFUSALS, 1);

	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("system clock moved backwards by %lld ms", (long long) behind_ms),
			 errdetail("snowid already issued ids with a later timestamp, and snowid.max_clock_wait is %d ms.",
					   snowid_max_clock_wait_ms),
			 errhint("Generation resumes by itself once the clock passes the last used timestamp; check the time synchronisation of this server.")));
}

/*
 * Wait until the clock shows a millisecond after last_ts; return the new
 * id time.  Sleeps until WAKE_BEFORE_US before the millisecond turns, then
 * yields the processor until it has, so a capped session does not spin a
 * core for the rest of the millisecond.
 */
static int64
wait_for_next_ms(int64 last_ts)
{
	for (;;)
	{
		int64		now_us;
		int64		now = clock_id_ms(&now_us);
		int64		remaining_us;

		if (now > last_ts)
			return now;
		remaining_us = (last_ts + 1 + gen.epoch_ms) * 1000 - now_us;
		if (remaining_us > 1000)
			return now;			/* clock went back: let the caller decide */
		if (remaining_us > WAKE_BEFORE_US + 20)
			snowid_exhaustion_usleep(remaining_us - WAKE_BEFORE_US);
		else
			sched_yield();
	}
}

/*
 * Reserve up to "want" consecutive ids of one millisecond in one atomic
 * step.  Returns the first; *got tells how many.  The general path: it
 * handles every state of the shared word and of the clock.
 */
static int64
snowid_reserve(int want, int *got)
{
	uint64		old;
	int64		now;
	bool		waited_for_clock = false;

	if (unlikely(!gen.ready))
		generator_init();
	old = pg_atomic_read_u64(&snowid_shared->last_id);
	now = clock_id_ms(NULL);

	for (;;)
	{
		int64		last_ts;
		int64		until;
		uint64		first;
		uint64		count;

		if (old & SNOWID_INVALID_FLAG)
			snowid_report_state();

		last_ts = (int64) (old >> gen.shift);
		if (now > last_ts)
		{
			until = read_usable_until();
			if (now > until)
				report_not_confirmed(now, until);
			if (now > gen.max_ts)
				report_time_exhausted();
			first = ((uint64) now << gen.shift) | (old & gen.worker_mask);
			count = Min((uint64) want, gen.seq_mask + 1);
		}
		else if (now == last_ts)
		{
			uint64		seq = old & gen.seq_mask;

			if (seq == gen.seq_mask)
			{
				snowid_count(SNOWID_STAT_EXHAUSTION_WAITS, 1);
				now = wait_for_next_ms(last_ts);
				old = pg_atomic_read_u64(&snowid_shared->last_id);
				continue;
			}
			first = old + 1;
			count = Min((uint64) want, gen.seq_mask - seq);
		}
		else
		{
			int64		behind = last_ts - now;

			if (behind > snowid_max_clock_wait_ms)
				report_clock_regressed(behind);
			if (!waited_for_clock)
			{
				snowid_count(SNOWID_STAT_CLOCK_WAITS, 1);
				waited_for_clock = true;
			}
			snowid_clock_usleep(Min(behind, 1) * 1000);
			CHECK_FOR_INTERRUPTS();
			old = pg_atomic_read_u64(&snowid_shared->last_id);
			now = clock_id_ms(NULL);
			continue;
		}

		if (pg_atomic_compare_exchange_u64(&snowid_shared->last_id, &old,
										   first + count - 1))
		{
			*got = (int) count;
			return (int64) first;
		}
		snowid_count(SNOWID_STAT_CAS_RETRIES, 1);
		/* Another backend moved on; our clock read may be stale now. */
		if ((int64) (old >> gen.shift) > now && !(old & SNOWID_INVALID_FLAG))
			now = clock_id_ms(NULL);
	}
}

/*
 * snowid_nextval(): the fast path of snowid_reserve(1) for a millisecond
 * with sequence numbers left or a new millisecond; anything else (no
 * lease, an exhausted millisecond, the clock behind, the end of the
 * timestamp bits) goes the general way.  With the INVALID flag set,
 * last_ts is above every timestamp the layout can hold, so only the
 * same-millisecond branch needs to test the flag.
 *
 * Unlike snowid_reserve(), it reads the clock before the shared word: the
 * clock read then overlaps the fetch of the word's cache line, and the
 * compare-and-swap follows the read within a few instructions, so that
 * concurrent sessions rarely fail it (a tenth of the retries, and about a
 * third less CPU per session at two sessions, than reading the word
 * first).  The price is the case where another backend moved to a later
 * millisecond in between, which costs a second clock read.  Every id
 * still takes its timestamp from one clock reading, never ahead of the
 * clock, and checks that same reading against usable_until, which is read
 * after the word.
 */
Datum
snowid_nextval(PG_FUNCTION_ARGS)
{
	SnowidStatSlot *slot = snowid_my_slot;
	uint64		old;
	uint64		next;
	int64		now;

	if (unlikely(slot == NULL || !gen.ready))
	{
		snowid_require_shared();
		if (!gen.ready)
			generator_init();
		slot = snowid_my_slot;
		if (unlikely(slot == NULL))
		{
			int			got;

			next = (uint64) snowid_reserve(1, &got);
			PG_RETURN_SNOWID((int64) next);
		}
	}

	prefetch_for_write();
	now = clock_id_ms(NULL);
	old = pg_atomic_read_u64(&snowid_shared->last_id);
	for (;;)
	{
		int64		last_ts = (int64) (old >> gen.shift);

		if (unlikely(last_ts > now) && !(old & SNOWID_INVALID_FLAG))
		{
			/*
			 * Another backend moved on to a later millisecond since our
			 * clock read (or the clock went back): read it again, and if
			 * it is still behind, let the general path wait or refuse.
			 */
			now = clock_id_ms(NULL);
			if (last_ts > now)
			{
				int			got;

				next = (uint64) snowid_reserve(1, &got);
				break;
			}
		}
		if (likely(now == last_ts) && (old & gen.seq_mask) != gen.seq_mask &&
			!(old & SNOWID_INVALID_FLAG))
			next = old + 1;
		else if (now > last_ts && now <= gen.max_ts &&
				 now <= read_usable_until())
			next = ((uint64) now << gen.shift) | (old & gen.worker_mask);
		else
		{
			int			got;

			next = (uint64) snowid_reserve(1, &got);
			break;
		}
		if (likely(pg_atomic_compare_exchange_u64(&snowid_shared->last_id,
												  &old, next)))
			break;
		count_in(slot, SNOWID_STAT_CAS_RETRIES, 1);
	}
	count_in(slot, SNOWID_STAT_CALLS, 1);
	count_in(slot, SNOWID_STAT_IDS, 1);
	PG_RETURN_SNOWID((int64) next);
}

typedef struct GenerateState
{
	int64		remaining;		/* ids still to return */
	int64		next;			/* next id of the reserved block */
	int			block_left;		/* ids left in the reserved block */
} GenerateState;

/*
 * snowid_generate(n): n ids, value per call.  Each step reserves what is
 * left of the current millisecond (up to what is still wanted) at once.
 */
Datum
snowid_generate(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	GenerateState *st;

	if (SRF_IS_FIRSTCALL())
	{
		int32		n = PG_GETARG_INT32(0);
		MemoryContext oldcontext;

		if (n < 1 || n > SNOWID_MAX_BATCH)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("number of snowids must be between 1 and %d, not %d",
							SNOWID_MAX_BATCH, n)));
		snowid_require_shared();
		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(GenerateState));
		st->remaining = n;
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(oldcontext);
		snowid_count(SNOWID_STAT_BATCH_CALLS, 1);
		snowid_count(SNOWID_STAT_CALLS, 1);
	}

	funcctx = SRF_PERCALL_SETUP();
	st = (GenerateState *) funcctx->user_fctx;
	if (st->remaining > 0)
	{
		int64		id;

		if (st->block_left == 0)
		{
			int			want = (int) Min(st->remaining, (int64) PG_INT32_MAX);

			st->next = snowid_reserve(want, &st->block_left);
			snowid_count(SNOWID_STAT_IDS, st->block_left);
		}
		id = st->next++;
		st->block_left--;
		st->remaining--;
		SRF_RETURN_NEXT(funcctx, SnowidGetDatum(id));
	}
	SRF_RETURN_DONE(funcctx);
}
