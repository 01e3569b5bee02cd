/*-------------------------------------------------------------------------
 *
 * shmem.c
 *	  Creating and attaching the node's shared state (see shmem.h for the
 *	  concurrency rules).
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "miscadmin.h"
#include "access/twophase.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "shmem.h"

SnowidShared *snowid_shared = NULL;
SnowidStatSlot *snowid_my_slot = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* One statistics slot per PGPROC: backends, auxiliary processes, 2PC. */
static int
stat_slot_count(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

static Size
shared_size(void)
{
	return add_size(offsetof(SnowidShared, slots),
					mul_size(stat_slot_count(), sizeof(SnowidStatSlot)));
}

static void
snowid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shared_size());
}

static void
snowid_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	snowid_shared = ShmemInitStruct("snowid", shared_size(), &found);
	if (!found)
	{
		int			i,
					c;

		memset(snowid_shared, 0, shared_size());
		/* No lease yet: generation is refused until the keeper installs one. */
		pg_atomic_init_u64(&snowid_shared->last_id, SNOWID_INVALID_FLAG);
		pg_atomic_init_u64(&snowid_shared->usable_until, 0);
		pg_atomic_init_u64(&snowid_shared->uuidv7_last, 0);
		SpinLockInit(&snowid_shared->mutex);
		snowid_shared->state = SNOWID_STATE_NO_LEASE_YET;
		snowid_shared->max_clock_offset_ms = -1;
		snowid_shared->state_since = GetCurrentTimestamp();
		snowid_shared->stats_reset = GetCurrentTimestamp();
		snowid_shared->num_slots = stat_slot_count();
		for (i = 0; i < snowid_shared->num_slots; i++)
			for (c = 0; c < SNOWID_NUM_COUNTERS; c++)
				pg_atomic_init_u64(&snowid_shared->slots[i].counters[c], 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init when preloaded. */
void
snowid_shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowid_shmem_startup;
}

/*
 * Raise the not_preloaded error unless the shared state exists, and attach
 * this process's statistics slot.
 */
void
snowid_require_shared(void)
{
	if (snowid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid must be loaded via \"shared_preload_libraries\""),
				 errdetail("snowid generates ids from shared memory, which only a preloaded library can set up."),
				 errhint("Add the line shared_preload_libraries = 'snowid' to postgresql.conf (or add snowid to the list already there) and restart the server.")));
	if (snowid_my_slot == NULL)
		snowid_attach_stat_slot();
}

/* Find this process's statistics slot. */
void
snowid_attach_stat_slot(void)
{
	if (snowid_shared != NULL && MyProc != NULL &&
		SNOWID_MY_PROC_NUMBER >= 0 && SNOWID_MY_PROC_NUMBER < snowid_shared->num_slots)
		snowid_my_slot = &snowid_shared->slots[SNOWID_MY_PROC_NUMBER];
}
