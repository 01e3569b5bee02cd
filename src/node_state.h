/*-------------------------------------------------------------------------
 *
 * node_state.h
 *	  Why a node can or cannot generate ids: the states the lease keeper
 *	  publishes, their names, the error each one raises, and how a
 *	  coordinator's answer to a grant maps onto them.
 *
 * Only the keeper changes the state (keeper.c holds the transition table);
 * backends read it to build the error of a refused call, and
 * snowid_status() shows it.  Generation itself is switched on and off by
 * the generator word's INVALID flag (shmem.h): a state never enables it,
 * it only says why it is off.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_NODE_STATE_H
#define SNOWID_NODE_STATE_H

typedef enum SnowidNodeState
{
	/* The keeper is starting, or asking for a lease; none is held. */
	SNOWID_STATE_NO_LEASE_YET = 0,
	/* A lease is held and its clock confirmed: backends generate. */
	SNOWID_STATE_ACTIVE,
	/*
	 * A lease is held, but its floor lies further ahead of the clock than
	 * snowid.max_clock_wait: generation starts when the clock passes it.
	 */
	SNOWID_STATE_FLOOR_AHEAD,
	/* Every worker id of the node's range is held or cooling down. */
	SNOWID_STATE_NO_FREE_WORKER,
	/* The lease ran out (monotonic clock) before a renewal was confirmed. */
	SNOWID_STATE_EXPIRED,
	/* The coordinator no longer records this node as the owner. */
	SNOWID_STATE_LOST,
	/* The node's layout differs from the coordinator's. */
	SNOWID_STATE_LAYOUT_MISMATCH,
	/* The coordinator serves other regions than the node's. */
	SNOWID_STATE_REGION_NOT_SERVED,
	/* Local mode: this server is a copy; an operator must confirm. */
	SNOWID_STATE_UNFENCED_COPY,
	/* The layout's timestamp bits cannot hold the current time. */
	SNOWID_STATE_TIME_EXHAUSTED,
	/* The coordinator did not answer, or answered with an error. */
	SNOWID_STATE_COORDINATOR_ERROR,
	/* The node's clock is further off the coordinator's than it allows. */
	SNOWID_STATE_CLOCK_OFFSET,
	/* The server is shutting down and gave its lease back. */
	SNOWID_STATE_RELEASED
} SnowidNodeState;

extern const char *snowid_state_name(SnowidNodeState state);
extern void snowid_set_state(SnowidNodeState state, const char *message);
extern void snowid_set_state_message(const char *message);
extern SnowidNodeState snowid_state_for_refusal(const char *status);
pg_noreturn extern void snowid_report_state(void);

#endif							/* SNOWID_NODE_STATE_H */
