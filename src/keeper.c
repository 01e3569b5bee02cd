/*-------------------------------------------------------------------------
 *
 * keeper.c
 *	  The "snowid lease keeper" background worker.
 *
 * The keeper holds this node's worker id lease: it acquires one at start,
 * renews it every third of the lease, releases it on shutdown, and stops
 * generation (sets the INVALID flag of the generator word) the moment the
 * lease is lost or cannot be confirmed before it expires.  Expiry is
 * tracked on the monotonic clock from the moment a request was sent, so a
 * stepped wall clock never stretches a lease.
 *
 * Everything the keeper knows about its lease lives in shared memory, so a
 * keeper that exits on an error and is restarted by the postmaster (which
 * keeps shared memory) resumes the same lease instead of taking a second
 * worker id.  A postmaster crash restart wipes shared memory: the old lease
 * then expires at the coordinator and the node takes a new one, whose
 * floor keeps ids unique.
 *
 * SIGTERM (server shutdown, or pg_terminate_backend) releases the lease
 * and exits with status 1, so that outside a shutdown the postmaster starts
 * a fresh keeper.  A cancel (pg_cancel_backend) raises an error and exits
 * without releasing; the restarted keeper resumes the lease.
 *
 * The session is a superuser's: before its first statement it pins
 * search_path to pg_catalog, pg_temp (CVE-2018-1058), and every name in
 * its SQL is qualified (lease_client.c).
 *
 * Transitions
 * -----------
 * The state (node_state.h) changes only here, on these events; nothing
 * else turns generation on.  "Lease" means a lease is held (has_lease).
 *
 *	event						in state				action, new state
 *	---------------------------	----------------------	--------------------------------
 *	setup fails					no lease				coordinator_error, retry in 1 s
 *	setup fails					lease					message only; expiry still applies
 *	grant, clock confirmed		no lease				install; active, or floor_ahead
 *	grant, clock off			no lease				install, generation off; clock_offset
 *	refusal (status)			no lease				snowid_state_for_refusal(status)
 *	no answer to a grant		no lease				coordinator_error; same token next time
 *	renewal, clock confirmed	active, floor_ahead		usable_until moves on
 *	renewal, clock confirmed	expired, clock_offset,	resume: active, or floor_ahead
 *								coordinator_error
 *	renewal, clock off			lease					generation off; clock_offset
 *	renewal lost				lease					drop the lease; lost
 *	renewal unfenced			lease					drop the lease; unfenced_copy
 *	no answer to a renewal		lease					message only, retry in 1 s
 *	expiry (monotonic clock)	lease, not expired		generation off; expired
 *	clock passes the floor		floor_ahead				active
 *	takeover confirmed			unfenced_copy			no_lease_yet
 *	SIGTERM						any						release; released
 *
 * Expiry is checked at every turn of the loop while a lease is held,
 * whatever else failed, so a keeper restarted into a failing setup still
 * stops generation on time.  The clock is judged against the
 * coordinator's bound (max_clock_offset, sent with every answer) before
 * generation starts, and what was judged lives in shared memory, so a
 * restarted keeper neither forgets an offset nor declares a jump the
 * monotonic clock cannot explain.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "keeper.h"
#include "lease_client.h"
#include "lease_transport.h"
#include "node_state.h"
#include "shmem.h"

PGDLLEXPORT void snowid_keeper_main(Datum main_arg);

/* How long to wait before retrying a failed acquisition or renewal. */
#define RETRY_INTERVAL_MS		1000

static char node_name[NAMEDATALEN * 2];
static char last_refusal[LEASE_STATUS_LEN];	/* status of the last refused grant */

/* Register the keeper with the postmaster (from _PG_init). */
void
snowid_register_keeper(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	strlcpy(worker.bgw_library_name, "snowid", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "snowid_keeper_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "snowid lease keeper", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "snowid lease keeper", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* snowid.node_name, or the cluster name, or host name and port. */
static void
resolve_node_name(void)
{
	if (snowid_node_name && snowid_node_name[0])
		strlcpy(node_name, snowid_node_name, sizeof(node_name));
	else if (cluster_name && cluster_name[0])
		strlcpy(node_name, cluster_name, sizeof(node_name));
	else
	{
		char		host[256];

		if (gethostname(host, sizeof(host)) != 0)
			strlcpy(host, "localhost", sizeof(host));
		host[sizeof(host) - 1] = '\0';
		snprintf(node_name, sizeof(node_name), "%s:%d", host, PostPortNumber);
	}
}

/* Id time (ms since the layout's epoch) for a Unix-ms value, clamped at 0. */
static int64
to_id_time(const SnowidLayout *layout, int64 unix_ms)
{
	return Max(unix_ms - layout->epoch_ms, 0);
}

/*
 * Stop generation at once.  Returns the last id issued before the flag
 * went up (without the flag).
 */
static uint64
stop_generation(void)
{
	uint64		prev = pg_atomic_fetch_or_u64(&snowid_shared->last_id,
											  SNOWID_INVALID_FLAG);

	return prev & ~SNOWID_INVALID_FLAG;
}

/* The keeper's view of the shared lease, copied under the lock. */
typedef struct HeldLease
{
	bool		has_lease;
	uint8		token[SNOWID_TOKEN_LEN];
	int32		worker_id;
	int64		high_water;		/* id time */
	int64		expiry_mono;
	int64		lease_ms;
	SnowidNodeState state;
} HeldLease;

static HeldLease
held_lease(void)
{
	HeldLease	h;

	SpinLockAcquire(&snowid_shared->mutex);
	h.has_lease = snowid_shared->has_lease;
	memcpy(h.token, snowid_shared->token, SNOWID_TOKEN_LEN);
	h.worker_id = snowid_shared->worker_id;
	h.high_water = snowid_shared->high_water;
	h.expiry_mono = snowid_shared->lease_expiry_mono;
	h.lease_ms = snowid_shared->lease_ms;
	h.state = snowid_shared->state;
	SpinLockRelease(&snowid_shared->mutex);
	return h;
}

/*
 * The highest id time this node may use: the confirmed high-water mark,
 * and the lease expiry (monotonic) converted to wall-clock time now.
 */
static void
publish_usable_until(const SnowidLayout *layout, int64 high_water_ms,
					 int64 expiry_mono)
{
	int64		wall = snowid_wall_clock_ms();
	int64		mono = snowid_monotonic_ms();
	int64		until = Min(high_water_ms, wall + (expiry_mono - mono));

	pg_atomic_write_u64(&snowid_shared->usable_until,
						(uint64) to_id_time(layout, until));
}

/*
 * Let backends generate again (clear the INVALID flag), unless the lease's
 * floor lies further ahead of the clock than backends would wait: then the
 * state is floor_ahead, and the keeper looks again shortly.
 */
static bool
resume_generation(const SnowidLayout *layout)
{
	uint64		word = pg_atomic_read_u64(&snowid_shared->last_id);
	int64		start_ts = (int64) ((word & ~SNOWID_INVALID_FLAG) >>
									snowid_timestamp_shift(layout));
	int64		now_ts = to_id_time(layout, snowid_wall_clock_ms());

	if (start_ts > now_ts + snowid_max_clock_wait_ms)
	{
		char		message[SNOWID_MESSAGE_LEN];

		snprintf(message, sizeof(message),
				 "Ids of this lease must lie above %s; generation starts when the clock gets there.",
				 timestamptz_to_str(snowid_unix_ms_to_timestamptz(start_ts + layout->epoch_ms)));
		snowid_set_state(SNOWID_STATE_FLOOR_AHEAD, message);
		return false;
	}
	/* usable_until was written before: backends read it after the word */
	pg_write_barrier();
	pg_atomic_fetch_and_u64(&snowid_shared->last_id, ~SNOWID_INVALID_FLAG);
	snowid_set_state(SNOWID_STATE_ACTIVE, NULL);
	return true;
}

/*
 * Install a freshly granted lease with generation still stopped: the
 * generator word goes to the floor (or the last id issued here, if later)
 * with the new worker id, flag up; then usable_until.  The caller lets
 * generation start once the clock is judged.  Returns false if the lease
 * cannot be used at all.
 */
static bool
install_lease(const SnowidLayout *layout, const uint8 *token,
			  const LeaseGrant *grant, int64 sent_mono)
{
	int			shift = snowid_timestamp_shift(layout);
	uint64		prev = stop_generation();
	int64		start_ts = Max(to_id_time(layout, grant->floor_ms),
							   (int64) (prev >> shift));
	int64		expiry_mono = sent_mono + grant->lease_ms;
	TimestampTz now = GetCurrentTimestamp();
	int64		word;

	if (start_ts >= snowid_max_timestamp(layout))
	{
		snowid_set_state(SNOWID_STATE_TIME_EXHAUSTED,
						 "The floor of the granted lease is at the end of the layout's time.");
		return false;
	}
	if (!snowid_compose(layout, start_ts, grant->worker_id,
						snowid_max_sequence(layout), &word))
		elog(ERROR, "granted worker id %d does not fit the layout",
			 grant->worker_id);
	pg_atomic_write_u64(&snowid_shared->last_id,
						(uint64) word | SNOWID_INVALID_FLAG);

	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->has_lease = true;
	snowid_shared->has_pending_token = false;
	memcpy(snowid_shared->token, token, SNOWID_TOKEN_LEN);
	snowid_shared->worker_id = grant->worker_id;
	snowid_shared->floor = to_id_time(layout, grant->floor_ms);
	snowid_shared->high_water = to_id_time(layout, grant->high_water_ms);
	snowid_shared->lease_expiry_mono = expiry_mono;
	snowid_shared->lease_ms = grant->lease_ms;
	snowid_shared->last_renewal = now;
	SpinLockRelease(&snowid_shared->mutex);
	lease_transport_set_lease(grant->lease_ms);

	publish_usable_until(layout, grant->high_water_ms, expiry_mono);
	snowid_count(SNOWID_STAT_LEASE_ACQUISITIONS, 1);

	ereport(LOG,
			(errmsg("snowid lease keeper acquired worker id %d for node \"%s\"",
					grant->worker_id, node_name),
			 errdetail("Ids start above %lld ms past the epoch.",
					   (long long) start_ts)));
	return true;
}

/* The lease is gone for good: stop generation and forget it. */
static void
drop_lease(SnowidNodeState state, const char *message)
{
	stop_generation();
	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->has_lease = false;
	SpinLockRelease(&snowid_shared->mutex);
	snowid_set_state(state, message);
}

/*
 * Clock watch.  Each answer from the coordinator carries its clock and its
 * bound; the node's offset is estimated against the midpoint of the round
 * trip, with half the round trip as the uncertainty.  The last time the
 * clock was found in bounds is kept in shared memory, so that a step
 * forward the monotonic clock cannot explain is not declared in a
 * high-water mark before a renewal confirms it, even by a new keeper.
 */

/* The bound in force: the coordinator's once known, else the node's. */
static int64
clock_bound_ms(void)
{
	int32		bound = snowid_shared->max_clock_offset_ms;

	return bound >= 0 ? bound : snowid_max_clock_offset_ms;
}

/* The node clock to declare: the wall clock, unless it jumped unconfirmed. */
static int64
declared_clock_ms(int64 wall)
{
	int64		confirmed_wall,
				confirmed_mono,
				explained;

	SpinLockAcquire(&snowid_shared->mutex);
	confirmed_wall = snowid_shared->clock_confirmed_wall;
	confirmed_mono = snowid_shared->clock_confirmed_mono;
	SpinLockRelease(&snowid_shared->mutex);
	if (confirmed_mono == 0)
		return wall;
	explained = confirmed_wall + (snowid_monotonic_ms() - confirmed_mono);
	if (wall > explained + clock_bound_ms())
		return explained;
	return wall;
}

/*
 * Judge the clock from one round trip against the coordinator's bound;
 * returns true when the offset is within it.  Publishes the estimate.
 */
static bool
check_clock(int64 sent_wall, int64 sent_mono, int64 coordinator_now_ms,
			int32 coordinator_bound_ms)
{
	int64		recv_wall = snowid_wall_clock_ms();
	int64		rtt = snowid_monotonic_ms() - sent_mono;
	int64		offset = coordinator_now_ms - (sent_wall + recv_wall) / 2;
	int64		uncertainty = rtt / 2 + 1;
	bool		ok;

	SpinLockAcquire(&snowid_shared->mutex);
	if (coordinator_bound_ms >= 0)
		snowid_shared->max_clock_offset_ms = coordinator_bound_ms;
	SpinLockRelease(&snowid_shared->mutex);
	ok = Abs(offset) <= clock_bound_ms() + uncertainty;

	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->clock_offset_ms = offset;
	snowid_shared->clock_offset_uncertainty_ms = uncertainty;
	snowid_shared->clock_offset_exceeded = !ok;
	if (ok)
	{
		snowid_shared->clock_confirmed_wall = sent_wall;
		snowid_shared->clock_confirmed_mono = sent_mono;
	}
	SpinLockRelease(&snowid_shared->mutex);
	return ok;
}

/* The clock is too far off: stop generation, keep the lease (if any). */
static void
refuse_for_clock(void)
{
	char		message[SNOWID_MESSAGE_LEN];
	int64		offset;

	SpinLockAcquire(&snowid_shared->mutex);
	offset = snowid_shared->clock_offset_ms;
	SpinLockRelease(&snowid_shared->mutex);
	snprintf(message, sizeof(message),
			 "This node's clock is about %lld ms off the coordinator's; the coordinator allows %lld ms (max_clock_offset).",
			 (long long) offset, (long long) clock_bound_ms());
	stop_generation();
	if (snowid_shared->state != SNOWID_STATE_CLOCK_OFFSET)
		ereport(WARNING,
				(errmsg("snowid stopped generation: the clock is off"),
				 errdetail("%s", message)));
	snowid_set_state(SNOWID_STATE_CLOCK_OFFSET, message);
}

/*
 * The token of the next grant: the one asked with last time if no grant
 * came of it (a grant whose answer was lost is then found again), else a
 * new one.
 */
static void
acquisition_token(uint8 *token)
{
	SpinLockAcquire(&snowid_shared->mutex);
	if (snowid_shared->has_pending_token)
	{
		memcpy(token, snowid_shared->pending_token, SNOWID_TOKEN_LEN);
		SpinLockRelease(&snowid_shared->mutex);
		return;
	}
	SpinLockRelease(&snowid_shared->mutex);

	if (!pg_strong_random(token, SNOWID_TOKEN_LEN))
		elog(ERROR, "could not generate a random lease token");
	SpinLockAcquire(&snowid_shared->mutex);
	memcpy(snowid_shared->pending_token, token, SNOWID_TOKEN_LEN);
	snowid_shared->has_pending_token = true;
	SpinLockRelease(&snowid_shared->mutex);
}

/* Try to get a lease; publish the outcome. */
static void
try_acquire(const SnowidLayout *layout)
{
	uint8		token[SNOWID_TOKEN_LEN];
	LeaseGrant	grant;
	char		errbuf[SNOWID_MESSAGE_LEN];
	int64		sent_mono;
	int64		sent_wall;

	/* No lease is of any use once the layout's time has run out. */
	if (to_id_time(layout, snowid_wall_clock_ms()) > snowid_max_timestamp(layout))
	{
		snowid_set_state(SNOWID_STATE_TIME_EXHAUSTED,
						 "The layout's timestamp field cannot represent the current time.");
		return;
	}

	acquisition_token(token);
	sent_mono = snowid_monotonic_ms();
	sent_wall = snowid_wall_clock_ms();
	if (!lease_client_acquire(token, node_name, layout, snowid_node_region,
							  declared_clock_ms(sent_wall), &grant, errbuf))
	{
		snowid_set_state(SNOWID_STATE_COORDINATOR_ERROR, errbuf);
		if (strcmp(last_refusal, "error") != 0)
			ereport(LOG,
					(errmsg("snowid lease keeper could not acquire a lease: %s", errbuf)));
		strlcpy(last_refusal, "error", sizeof(last_refusal));
		return;
	}

	if (strcmp(grant.status, "granted") == 0)
	{
		if (install_lease(layout, token, &grant, sent_mono))
		{
			if (check_clock(sent_wall, sent_mono, grant.coordinator_now_ms,
							grant.max_clock_offset_ms))
				resume_generation(layout);
			else
				refuse_for_clock();
		}
		last_refusal[0] = '\0';
		return;
	}

	snowid_set_state(snowid_state_for_refusal(grant.status), grant.detail);
	/* Say so once per kind of refusal, not at every retry. */
	if (strcmp(grant.status, last_refusal) != 0)
		ereport(WARNING,
				(errmsg("snowid lease keeper was refused a lease: %s",
						grant.status),
				 grant.detail[0] ? errdetail("%s", grant.detail) : 0));
	strlcpy(last_refusal, grant.status, sizeof(last_refusal));
}

/* Renew the lease; on success push usable_until forward. */
static void
try_renew(const SnowidLayout *layout)
{
	HeldLease	h = held_lease();
	LeaseRenewal renewal;
	char		errbuf[SNOWID_MESSAGE_LEN];
	int64		sent_mono;
	int64		sent_wall;
	int64		offset;
	bool		exceeded;

	SpinLockAcquire(&snowid_shared->mutex);
	offset = snowid_shared->clock_offset_ms;
	exceeded = snowid_shared->clock_offset_exceeded;
	SpinLockRelease(&snowid_shared->mutex);

	sent_mono = snowid_monotonic_ms();
	sent_wall = snowid_wall_clock_ms();
	if (!lease_client_renew(h.token, h.worker_id, declared_clock_ms(sent_wall),
							h.high_water + layout->epoch_ms,
							sent_mono < h.expiry_mono,
							offset, exceeded, &renewal, errbuf))
	{
		char		message[SNOWID_MESSAGE_LEN];

		snowid_count(SNOWID_STAT_LEASE_RENEWAL_FAILURES, 1);
		if (h.state == SNOWID_STATE_EXPIRED)
			snprintf(message, sizeof(message),
					 "No renewal was confirmed before the lease expired. Last error: %s",
					 errbuf);
		else
			strlcpy(message, errbuf, sizeof(message));
		snowid_set_state_message(message);
		ereport(LOG,
				(errmsg("snowid lease keeper could not renew the lease on worker id %d: %s",
						h.worker_id, errbuf)));
		return;
	}

	if (strcmp(renewal.status, "renewed") == 0)
	{
		int64		expiry_mono = sent_mono + renewal.lease_ms;
		TimestampTz now = GetCurrentTimestamp();
		bool		clock_ok;

		/* Judge the clock before the new bound reaches backends. */
		clock_ok = check_clock(sent_wall, sent_mono, renewal.coordinator_now_ms,
							   renewal.max_clock_offset_ms);
		if (!clock_ok)
			refuse_for_clock();
		SpinLockAcquire(&snowid_shared->mutex);
		snowid_shared->high_water = to_id_time(layout, renewal.high_water_ms);
		snowid_shared->lease_expiry_mono = expiry_mono;
		snowid_shared->lease_ms = renewal.lease_ms;
		snowid_shared->last_renewal = now;
		SpinLockRelease(&snowid_shared->mutex);
		lease_transport_set_lease(renewal.lease_ms);
		publish_usable_until(layout, renewal.high_water_ms, expiry_mono);
		snowid_count(SNOWID_STAT_LEASE_RENEWALS, 1);

		if (!clock_ok)
			;					/* stays in clock_offset */
		else if (h.state == SNOWID_STATE_ACTIVE)
			snowid_set_state_message(NULL);
		else if (h.state != SNOWID_STATE_FLOOR_AHEAD)
		{
			/*
			 * A lease that expired locally but that nobody took is ours
			 * again; a clock back in bounds may be used again.
			 */
			if (resume_generation(layout))
				ereport(LOG,
						(errmsg("snowid lease keeper confirmed worker id %d again; generation resumes",
								h.worker_id)));
		}
	}
	else if (strcmp(renewal.status, "unfenced") == 0)
	{
		drop_lease(SNOWID_STATE_UNFENCED_COPY,
				   "This server's system identifier, timeline or incarnation changed since the leases were recorded (promotion, clone or restore).");
		ereport(WARNING,
				(errmsg("snowid lease keeper stopped generation: this server is a copy of another"),
				 errhint("Once the old server can no longer generate ids, run SELECT snowid_confirm_takeover();")));
	}
	else
	{
		snowid_count(SNOWID_STAT_LEASE_LOSSES, 1);
		drop_lease(SNOWID_STATE_LOST,
				   renewal.detail[0] ? renewal.detail :
				   "The coordinator no longer records this node as the owner of its worker id.");
		ereport(WARNING,
				(errmsg("snowid lease keeper lost the lease on worker id %d", h.worker_id),
				 renewal.detail[0] ? errdetail("%s", renewal.detail) : 0));
	}
}

/* The lease ran out before a renewal was confirmed: stop generation. */
static void
expire_lease(int32 worker_id)
{
	char		message[SNOWID_MESSAGE_LEN];

	stop_generation();
	SpinLockAcquire(&snowid_shared->mutex);
	snprintf(message, sizeof(message),
			 "No renewal was confirmed before the lease expired. Last error: %s",
			 snowid_shared->message[0] ? snowid_shared->message : "none");
	SpinLockRelease(&snowid_shared->mutex);
	snowid_set_state(SNOWID_STATE_EXPIRED, message);
	ereport(WARNING,
			(errmsg("snowid lease on worker id %d expired; generation stopped",
					worker_id),
			 errdetail("%s", message)));
}

/* Clean shutdown: stop generation, release with the true last used time. */
static void
release_lease(const SnowidLayout *layout)
{
	HeldLease	h;
	uint64		last;
	int64		last_unix_ms;
	char		status[LEASE_STATUS_LEN];
	char		errbuf[SNOWID_MESSAGE_LEN];

	last = stop_generation();
	h = held_lease();
	if (!h.has_lease)
		return;

	last_unix_ms = (int64) (last >> snowid_timestamp_shift(layout)) + layout->epoch_ms;
	drop_lease(SNOWID_STATE_RELEASED, NULL);
	if (lease_client_release(h.token, h.worker_id, last_unix_ms, status, errbuf))
		ereport(LOG,
				(errmsg("snowid lease keeper released worker id %d (%s)",
						h.worker_id, status)));
	else
		ereport(LOG,
				(errmsg("snowid lease keeper could not release worker id %d: %s",
						h.worker_id, errbuf),
				 errdetail("The lease expires at the coordinator by itself.")));
}

/* Log a WARNING when less than a year of the layout's time is left. */
static void
check_time_left(const SnowidLayout *layout)
{
	int64		end_ms = layout->epoch_ms + snowid_max_timestamp(layout);
	int64		left_ms = end_ms - snowid_wall_clock_ms();

	if (left_ms < INT64CONST(365) * 24 * 3600 * 1000)
		ereport(WARNING,
				(errmsg("snowid timestamp bits run out at %s",
						timestamptz_to_str(snowid_unix_ms_to_timestamptz(end_ms))),
				 errhint("Plan a new cluster layout (a later snowid.epoch or more timestamp bits) before then.")));
}

/*
 * The keeper's session settings, before its first statement: durable
 * answers (a local flush in local mode, where the leases live in the
 * node's own database and the identity fence covers promoted copies, so
 * that an absent synchronous standby never blocks the keeper or a fast
 * shutdown), statements that cannot hang for long, a pinned search_path,
 * and commit warnings that reach emit_log_hook (transport_spi.c).
 */
static void
set_session_options(void)
{
	SetConfigOption("search_path", SNOWID_SAFE_SEARCH_PATH, PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("synchronous_commit",
					lease_transport_is_remote() ? "on" : "local",
					PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("lock_timeout", "2s", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("statement_timeout", "5s", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("idle_in_transaction_session_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);
	if (log_min_messages > WARNING)
		SetConfigOption("log_min_messages", "warning", PGC_SUSET, PGC_S_OVERRIDE);
}

/* An operator confirmed a takeover (snowid_confirm_takeover()). */
static void
handle_confirmed_takeover(void)
{
	char		errbuf[SNOWID_MESSAGE_LEN];

	if (lease_client_confirm_identity(errbuf))
	{
		ereport(LOG,
				(errmsg("snowid takeover confirmed by an operator; the coordinator is fenced and new leases start above anything the old server could have used")));
		snowid_set_state(SNOWID_STATE_NO_LEASE_YET, NULL);
	}
	else
		ereport(WARNING,
				(errmsg("snowid could not record the confirmed takeover: %s", errbuf)));
	snowid_shared->confirm_takeover = false;
}

void
snowid_keeper_main(Datum main_arg)
{
	const SnowidLayout *layout;
	bool		setup_done = false;
	int64		next_attempt_mono = 0;
	int64		next_time_check_mono = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(snowid_database, NULL, 0);
	pgstat_report_appname("snowid lease keeper");
	set_session_options();

	snowid_attach_stat_slot();
	layout = snowid_get_layout();
	resolve_node_name();

	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->keeper_pid = MyProcPid;
	snowid_shared->keeper_latch = &MyProc->procLatch;
	lease_transport_describe(snowid_shared->coordinator,
							 sizeof(snowid_shared->coordinator));
	strlcpy(snowid_shared->node_name, node_name, sizeof(snowid_shared->node_name));
	SpinLockRelease(&snowid_shared->mutex);

	lease_transport_set_lease(snowid_shared->has_lease ?
							  (int) snowid_shared->lease_ms : snowid_lease_time_ms);
	if (snowid_shared->has_lease)
		ereport(LOG,
				(errmsg("snowid lease keeper restarted; resuming the lease on worker id %d",
						snowid_shared->worker_id)));

	while (!ShutdownRequestPending)
	{
		int64		now_mono;
		int64		wake_mono;
		long		timeout;
		HeldLease	h;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		now_mono = snowid_monotonic_ms();
		if (now_mono >= next_time_check_mono)
		{
			check_time_left(layout);
			next_time_check_mono = now_mono + INT64CONST(24) * 3600 * 1000;
		}

		/* Expiry first, whatever else fails below. */
		h = held_lease();
		if (h.has_lease && now_mono >= h.expiry_mono &&
			h.state != SNOWID_STATE_EXPIRED)
			expire_lease(h.worker_id);

		if (snowid_shared->confirm_takeover)
		{
			handle_confirmed_takeover();
			next_attempt_mono = 0;
		}

		h = held_lease();
		if (!setup_done)
		{
			if (now_mono >= next_attempt_mono)
			{
				char		errbuf[SNOWID_MESSAGE_LEN];

				setup_done = lease_client_setup(layout, snowid_started_from_backup,
												errbuf);
				if (!setup_done)
				{
					if (h.has_lease)
						snowid_set_state_message(errbuf);
					else
						snowid_set_state(SNOWID_STATE_COORDINATOR_ERROR, errbuf);
					ereport(LOG,
							(errmsg("snowid lease keeper could not set up the coordinator: %s", errbuf)));
					next_attempt_mono = now_mono + RETRY_INTERVAL_MS;
				}
				else
					next_attempt_mono = 0;
			}
			wake_mono = next_attempt_mono;
		}
		else if (!h.has_lease)
		{
			if (h.state == SNOWID_STATE_UNFENCED_COPY)
				next_attempt_mono = now_mono + 10 * RETRY_INTERVAL_MS;
			else if (now_mono >= next_attempt_mono)
			{
				try_acquire(layout);
				next_attempt_mono = snowid_monotonic_ms() + RETRY_INTERVAL_MS;
			}
			wake_mono = next_attempt_mono;
		}
		else
		{
			/* Renew at a third of the lease; retry each second after a failure. */
			if (now_mono >= h.expiry_mono - 2 * h.lease_ms / 3 &&
				now_mono >= next_attempt_mono)
			{
				try_renew(layout);
				next_attempt_mono = snowid_monotonic_ms() + RETRY_INTERVAL_MS;
			}
			h = held_lease();

			/* Waiting for the clock to pass the floor: look again soon. */
			if (h.has_lease && h.state == SNOWID_STATE_FLOOR_AHEAD &&
				snowid_monotonic_ms() < h.expiry_mono)
				resume_generation(layout);
			h = held_lease();
			wake_mono = 0;
		}

		/* Sleep until the next thing to do, or the lease's expiry. */
		if (h.has_lease && setup_done)
		{
			wake_mono = Max(h.expiry_mono - 2 * h.lease_ms / 3, next_attempt_mono);
			if (h.state == SNOWID_STATE_FLOOR_AHEAD)
				wake_mono = Min(wake_mono, snowid_monotonic_ms() + 100);
		}
		if (h.has_lease && h.state != SNOWID_STATE_EXPIRED)
			wake_mono = Min(wake_mono, h.expiry_mono);
		timeout = (long) Max(wake_mono - snowid_monotonic_ms(), 0);
		timeout = Min(timeout, 10000L);
		if (timeout > 0)
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 timeout, SNOWID_WAIT_LEASE_KEEPER);
			ResetLatch(MyLatch);
		}
	}

	release_lease(layout);
	lease_transport_close();
	proc_exit(1);
}
