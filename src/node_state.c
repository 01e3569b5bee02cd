/*-------------------------------------------------------------------------
 *
 * node_state.c
 *	  The node's states: names, the error each one raises, and the mapping
 *	  from a coordinator's answer to a state (see node_state.h).
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "access/xlog.h"
#include "utils/timestamp.h"

#include "node_state.h"
#include "shmem.h"

static const char *const state_names[] = {
	[SNOWID_STATE_NO_LEASE_YET] = "no_lease_yet",
	[SNOWID_STATE_ACTIVE] = "active",
	[SNOWID_STATE_FLOOR_AHEAD] = "floor_ahead",
	[SNOWID_STATE_NO_FREE_WORKER] = "no_free_worker",
	[SNOWID_STATE_EXPIRED] = "expired",
	[SNOWID_STATE_LOST] = "lost",
	[SNOWID_STATE_LAYOUT_MISMATCH] = "layout_mismatch",
	[SNOWID_STATE_REGION_NOT_SERVED] = "region_not_served",
	[SNOWID_STATE_UNFENCED_COPY] = "unfenced_copy",
	[SNOWID_STATE_TIME_EXHAUSTED] = "time_exhausted",
	[SNOWID_STATE_COORDINATOR_ERROR] = "coordinator_error",
	[SNOWID_STATE_CLOCK_OFFSET] = "clock_offset",
	[SNOWID_STATE_RELEASED] = "released",
};

const char *
snowid_state_name(SnowidNodeState state)
{
	if ((int) state < 0 || (int) state >= lengthof(state_names) ||
		state_names[state] == NULL)
		return "unknown";
	return state_names[state];
}

/* Publish the node's state and a sentence saying why (may be NULL). */
void
snowid_set_state(SnowidNodeState state, const char *message)
{
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&snowid_shared->mutex);
	if (snowid_shared->state != state)
		snowid_shared->state_since = now;
	snowid_shared->state = state;
	strlcpy(snowid_shared->message, message ? message : "",
			sizeof(snowid_shared->message));
	SpinLockRelease(&snowid_shared->mutex);
}

/* Change only the sentence saying why (the last error, say). */
void
snowid_set_state_message(const char *message)
{
	SpinLockAcquire(&snowid_shared->mutex);
	strlcpy(snowid_shared->message, message ? message : "",
			sizeof(snowid_shared->message));
	SpinLockRelease(&snowid_shared->mutex);
}

/*
 * The state for a grant the coordinator refused, from the status it
 * answered (lease_acquire_v2's list).  A status this node does not know
 * (a newer coordinator) refuses like "no lease yet", with its detail.
 */
SnowidNodeState
snowid_state_for_refusal(const char *status)
{
	static const struct
	{
		const char *status;
		SnowidNodeState state;
	}			refusals[] =
	{
		{"layout_mismatch", SNOWID_STATE_LAYOUT_MISMATCH},
		{"region_not_served", SNOWID_STATE_REGION_NOT_SERVED},
		{"no_free_worker", SNOWID_STATE_NO_FREE_WORKER},
		{"unfenced", SNOWID_STATE_UNFENCED_COPY},
		{"clock_offset", SNOWID_STATE_CLOCK_OFFSET},
		/* fenced, no_sync_standby, not_initialized: wait and ask again */
	};
	int			i;

	for (i = 0; i < lengthof(refusals); i++)
		if (strcmp(status, refusals[i].status) == 0)
			return refusals[i].state;
	return SNOWID_STATE_NO_LEASE_YET;
}

/* Raise the error for a node state that forbids generation. */
void
snowid_report_state(void)
{
	SnowidNodeState state;
	char		message[SNOWID_MESSAGE_LEN];
	int32		worker;

	SpinLockAcquire(&snowid_shared->mutex);
	state = snowid_shared->state;
	worker = snowid_shared->worker_id;
	strlcpy(message, snowid_shared->message, sizeof(message));
	SpinLockRelease(&snowid_shared->mutex);

	snowid_count(SNOWID_STAT_NO_LEASE_REFUSALS, 1);

	if (state == SNOWID_STATE_NO_LEASE_YET && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowids during recovery"),
				 errdetail("A standby holds no worker id lease."),
				 errhint("Generate ids on the primary; after promotion this node takes a lease of its own.")));

	switch (state)
	{
		case SNOWID_STATE_NO_LEASE_YET:
		case SNOWID_STATE_ACTIVE:
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("snowid has no worker id lease yet"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("The lease keeper is acquiring one; retry in a few seconds, and see snowid_status() if this persists.")));
			break;
		case SNOWID_STATE_FLOOR_AHEAD:
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("snowid lease on worker id %d starts later than the clock", worker),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("The lease's floor lies ahead of this node's clock; generation starts by itself when the clock passes it.")));
			break;
		case SNOWID_STATE_NO_FREE_WORKER:
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("snowid found no free worker id"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("Retry once another node releases its worker id, or use a layout with more worker bits for a new cluster.")));
			break;
		case SNOWID_STATE_EXPIRED:
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("snowid lease on worker id %d expired", worker),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("The lease keeper could not confirm the lease in time; generation resumes once the coordinator answers. See snowid_status().")));
			break;
		case SNOWID_STATE_LOST:
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("snowid lease on worker id %d was lost", worker),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("The lease keeper is acquiring a new lease; retry in a few seconds.")));
			break;
		case SNOWID_STATE_LAYOUT_MISMATCH:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowid layout of this node differs from the coordinator's"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("Set snowid.epoch, snowid.worker_bits, snowid.region_bits and snowid.sequence_bits to the coordinator's values and restart the server.")));
			break;
		case SNOWID_STATE_REGION_NOT_SERVED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowid coordinator does not serve this node's region"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("Point snowid.coordinator at the coordinator of this node's region (snowid.region), or have this coordinator serve it: SELECT snowid_coordinator.serve_regions(...).")));
			break;
		case SNOWID_STATE_UNFENCED_COPY:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowid refuses to generate on a copy of another server"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("Once the server this one was promoted, cloned or restored from can no longer generate ids, a superuser runs SELECT snowid_confirm_takeover();")));
			break;
		case SNOWID_STATE_TIME_EXHAUSTED:
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("snowid timestamp bits are exhausted"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("A new cluster needs a later snowid.epoch or more timestamp bits.")));
			break;
		case SNOWID_STATE_COORDINATOR_ERROR:
			ereport(ERROR,
					(errcode(ERRCODE_CANNOT_CONNECT_NOW),
					 errmsg("snowid has no worker id lease: the coordinator failed"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("See the server log and snowid_status(); generation starts once a lease is granted.")));
			break;
		case SNOWID_STATE_CLOCK_OFFSET:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowid refuses to generate: this node's clock is too far off the coordinator's"),
					 message[0] ? errdetail("%s", message) : 0,
					 errhint("Fix the time synchronisation of this server; generation resumes at the next renewal that finds the clock within snowid.max_clock_offset.")));
			break;
		case SNOWID_STATE_RELEASED:
			ereport(ERROR,
					(errcode(ERRCODE_ADMIN_SHUTDOWN),
					 errmsg("snowid released its worker id lease because the server is shutting down")));
			break;
	}
	elog(ERROR, "unexpected snowid state %d", (int) state);
}

