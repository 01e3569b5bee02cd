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
 * state says so, and the keeper tries again shortly.
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
		snowid_set_state(SNOWID_STATE_NO_LEASE_YET, message);
		return false;
	}
	pg_write_barrier();
	pg_atomic_fetch_and_u64(&snowid_shared->last_id, ~SNOWID_INVALID_FLAG);
	snowid_set_state(SNOWID_STATE_ACTIVE, NULL);
	return true;
}

/*
 * Install a freshly granted lease: the generator word goes to the floor
 * (or the last id issued here, if later) with the new worker id, with the
 * flag still up; then usable_until; then the flag comes down.
 */
static void
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
		return;
	}
	if (!snowid_compose(layout, start_ts, grant->worker_id,
						snowid_max_sequence(layout), &word))
		elog(ERROR, "granted worker id %d does not fit the layout",
			 grant->worker_id);
	pg_atomic_write_u64(&snowid_shared->last_id,
						(uint64) word | SNOWID_INVALID_FLAG);

	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->has_lease = true;
	memcpy(snowid_shared->token, token, SNOWID_TOKEN_LEN);
	snowid_shared->worker_id = grant->worker_id;
	snowid_shared->floor = to_id_time(layout, grant->floor_ms);
	snowid_shared->high_water = to_id_time(layout, grant->high_water_ms);
	snowid_shared->lease_expiry_mono = expiry_mono;
	snowid_shared->lease_ms = grant->lease_ms;
	snowid_shared->last_renewal = now;
	SpinLockRelease(&snowid_shared->mutex);

	publish_usable_until(layout, grant->high_water_ms, expiry_mono);
	resume_generation(layout);
	snowid_count(SNOWID_STAT_LEASE_ACQUISITIONS, 1);

	ereport(LOG,
			(errmsg("snowid lease keeper acquired worker id %d for node \"%s\"",
					grant->worker_id, node_name),
			 errdetail("Ids start above %lld ms past the epoch.",
					   (long long) start_ts)));
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
 * Clock watch.  Each answer from the coordinator carries its clock; the
 * node's offset from it is estimated against the midpoint of the round
 * trip, with half the round trip as the uncertainty.  The last time the
 * node's clock was found in bounds is remembered, so that a step forward
 * the monotonic clock cannot explain is not declared in a high-water mark
 * before a renewal confirms it.
 */
static int64 confirmed_wall = 0;	/* wall clock at the last confirmation */
static int64 confirmed_mono = 0;	/* monotonic clock then; 0 = never */
static int64 last_offset_ms = 0;
static bool last_offset_exceeded = false;

/* The node clock to declare: the wall clock, unless it jumped unconfirmed. */
static int64
declared_clock_ms(int64 wall)
{
	int64		explained;

	if (confirmed_mono == 0)
		return wall;
	explained = confirmed_wall + (snowid_monotonic_ms() - confirmed_mono);
	if (wall > explained + snowid_max_clock_offset_ms)
		return explained;
	return wall;
}

/*
 * Judge the clock from one round trip; returns true when the offset is
 * within snowid.max_clock_offset.  Publishes the estimate.
 */
static bool
check_clock(int64 sent_wall, int64 sent_mono, int64 coordinator_now_ms)
{
	int64		recv_wall = snowid_wall_clock_ms();
	int64		rtt = snowid_monotonic_ms() - sent_mono;
	int64		offset = coordinator_now_ms - (sent_wall + recv_wall) / 2;
	int64		uncertainty = rtt / 2 + 1;
	bool		ok = Abs(offset) <= snowid_max_clock_offset_ms + uncertainty;

	last_offset_ms = offset;
	last_offset_exceeded = !ok;
	SpinLockAcquire(&snowid_shared->mutex);
	snowid_shared->clock_offset_ms = offset;
	snowid_shared->clock_offset_uncertainty_ms = uncertainty;
	SpinLockRelease(&snowid_shared->mutex);
	if (ok)
	{
		confirmed_wall = sent_wall;
		confirmed_mono = sent_mono;
	}
	return ok;
}

/* The clock is too far off: stop generation, keep the lease. */
static void
refuse_for_clock(int64 worker_id)
{
	char		message[SNOWID_MESSAGE_LEN];

	snprintf(message, sizeof(message),
			 "This node's clock is about %lld ms off the coordinator's; snowid.max_clock_offset is %d ms.",
			 (long long) last_offset_ms, snowid_max_clock_offset_ms);
	stop_generation();
	if (snowid_shared->state != SNOWID_STATE_CLOCK_OFFSET)
		ereport(WARNING,
				(errmsg("snowid stopped generation on worker id %d: the clock is off", (int) worker_id),
				 errdetail("%s", message)));
	snowid_set_state(SNOWID_STATE_CLOCK_OFFSET, message);
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

	/* A new token for every lease this keeper takes. */
	if (!pg_strong_random(token, sizeof(token)))
		elog(ERROR, "could not generate a random lease token");

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
		install_lease(layout, token, &grant, sent_mono);
		if (!check_clock(sent_wall, sent_mono, grant.coordinator_now_ms))
			refuse_for_clock(grant.worker_id);
	}
	else if (strcmp(grant.status, "layout_mismatch") == 0)
		snowid_set_state(SNOWID_STATE_LAYOUT_MISMATCH, grant.detail);
	else if (strcmp(grant.status, "no_free_worker") == 0)
		snowid_set_state(SNOWID_STATE_NO_FREE_WORKER, grant.detail);
	else if (strcmp(grant.status, "unfenced") == 0)
		snowid_set_state(SNOWID_STATE_UNFENCED_COPY, grant.detail);
	else
		snowid_set_state(SNOWID_STATE_NO_LEASE_YET, grant.detail);

	/* Say so once per kind of refusal, not at every retry. */
	if (strcmp(grant.status, "granted") != 0 &&
		strcmp(grant.status, last_refusal) != 0)
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
	uint8		token[SNOWID_TOKEN_LEN];
	int32		worker_id;
	LeaseRenewal renewal;
	char		errbuf[SNOWID_MESSAGE_LEN];
	int64		sent_mono;
	int64		sent_wall;

	SpinLockAcquire(&snowid_shared->mutex);
	memcpy(token, snowid_shared->token, SNOWID_TOKEN_LEN);
	worker_id = snowid_shared->worker_id;
	SpinLockRelease(&snowid_shared->mutex);

	sent_mono = snowid_monotonic_ms();
	sent_wall = snowid_wall_clock_ms();
	if (!lease_client_renew(token, worker_id, declared_clock_ms(sent_wall),
							last_offset_ms, last_offset_exceeded, &renewal,
							errbuf))
	{
		snowid_count(SNOWID_STAT_LEASE_RENEWAL_FAILURES, 1);
		SpinLockAcquire(&snowid_shared->mutex);
		if (snowid_shared->state == SNOWID_STATE_EXPIRED)
			snprintf(snowid_shared->message, sizeof(snowid_shared->message),
					 "No renewal was confirmed before the lease expired. Last error: %s",
					 errbuf);
		else
			strlcpy(snowid_shared->message, errbuf, sizeof(snowid_shared->message));
		SpinLockRelease(&snowid_shared->mutex);
		ereport(LOG,
				(errmsg("snowid lease keeper could not renew the lease on worker id %d: %s",
						worker_id, errbuf)));
		return;
	}

	if (strcmp(renewal.status, "renewed") == 0)
	{
		int64		expiry_mono = sent_mono + renewal.lease_ms;
		TimestampTz now = GetCurrentTimestamp();

		SpinLockAcquire(&snowid_shared->mutex);
		snowid_shared->high_water = to_id_time(layout, renewal.high_water_ms);
		snowid_shared->lease_expiry_mono = expiry_mono;
		snowid_shared->lease_ms = renewal.lease_ms;
		snowid_shared->last_renewal = now;
		SpinLockRelease(&snowid_shared->mutex);
		publish_usable_until(layout, renewal.high_water_ms, expiry_mono);
		snowid_count(SNOWID_STAT_LEASE_RENEWALS, 1);

		if (!check_clock(sent_wall, sent_mono, renewal.coordinator_now_ms))
			refuse_for_clock(worker_id);
		else if (snowid_shared->state == SNOWID_STATE_EXPIRED ||
				 snowid_shared->state == SNOWID_STATE_CLOCK_OFFSET)
		{
			/*
			 * A lease that expired locally but that nobody took is ours
			 * again; a clock back in bounds may be used again.
			 */
			if (resume_generation(layout))
				ereport(LOG,
						(errmsg("snowid lease keeper confirmed worker id %d again; generation resumes",
								worker_id)));
		}
		else if (snowid_shared->state == SNOWID_STATE_ACTIVE)
			snowid_set_state(SNOWID_STATE_ACTIVE, NULL);
	}
	else if (strcmp(renewal.status, "unfenced") == 0)
	{
		drop_lease(SNOWID_STATE_UNFENCED_COPY,
				   "This server's system identifier or timeline changed since the leases were recorded (promotion, clone or restore).");
		ereport(WARNING,
				(errmsg("snowid lease keeper stopped generation: this server is a copy of another"),
				 errhint("Once the old server can no longer generate ids, run SELECT snowid_confirm_takeover();")));
	}
	else
	{
		snowid_count(SNOWID_STAT_LEASE_LOSSES, 1);
		drop_lease(SNOWID_STATE_LOST,
				   "The coordinator no longer records this node as the owner of its worker id.");
		ereport(WARNING,
				(errmsg("snowid lease keeper lost the lease on worker id %d", worker_id)));
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
	uint8		token[SNOWID_TOKEN_LEN];
	int32		worker_id;
	bool		has_lease;
	uint64		last;
	int64		last_unix_ms;
	char		status[LEASE_STATUS_LEN];
	char		errbuf[SNOWID_MESSAGE_LEN];

	last = stop_generation();
	SpinLockAcquire(&snowid_shared->mutex);
	has_lease = snowid_shared->has_lease;
	memcpy(token, snowid_shared->token, SNOWID_TOKEN_LEN);
	worker_id = snowid_shared->worker_id;
	SpinLockRelease(&snowid_shared->mutex);
	if (!has_lease)
		return;

	last_unix_ms = (int64) (last >> snowid_timestamp_shift(layout)) + layout->epoch_ms;
	drop_lease(SNOWID_STATE_RELEASED, NULL);
	if (lease_client_release(token, worker_id, last_unix_ms, status, errbuf))
		ereport(LOG,
				(errmsg("snowid lease keeper released worker id %d (%s)",
						worker_id, status)));
	else
		ereport(LOG,
				(errmsg("snowid lease keeper could not release worker id %d: %s",
						worker_id, errbuf),
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

	/* Durable answers, and no statement that can hang for long. */
	SetConfigOption("synchronous_commit", "on", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("lock_timeout", "2s", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("statement_timeout", "5s", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("idle_in_transaction_session_timeout", "0", PGC_SUSET, PGC_S_OVERRIDE);

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

	if (snowid_shared->has_lease)
		ereport(LOG,
				(errmsg("snowid lease keeper restarted; resuming the lease on worker id %d",
						snowid_shared->worker_id)));

	while (!ShutdownRequestPending)
	{
		int64		now_mono;
		int64		wake_mono;
		long		timeout;

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

		if (snowid_shared->confirm_takeover)
		{
			char		errbuf[SNOWID_MESSAGE_LEN];

			if (lease_client_confirm_identity(errbuf))
			{
				ereport(LOG,
						(errmsg("snowid takeover confirmed by an operator; the coordinator is fenced and new leases start above anything the old server could have used")));
				snowid_set_state(SNOWID_STATE_NO_LEASE_YET, NULL);
				next_attempt_mono = 0;
			}
			else
				ereport(WARNING,
						(errmsg("snowid could not record the confirmed takeover: %s", errbuf)));
			snowid_shared->confirm_takeover = false;
		}

		if (!setup_done)
		{
			char		errbuf[SNOWID_MESSAGE_LEN];

			if (now_mono >= next_attempt_mono)
			{
				setup_done = lease_client_setup(layout, snowid_started_from_backup,
												errbuf);
				if (!setup_done)
				{
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
		else if (!snowid_shared->has_lease)
		{
			if (now_mono >= next_attempt_mono &&
				snowid_shared->state != SNOWID_STATE_UNFENCED_COPY)
			{
				try_acquire(layout);
				next_attempt_mono = snowid_monotonic_ms() + RETRY_INTERVAL_MS;
			}
			else if (snowid_shared->state == SNOWID_STATE_UNFENCED_COPY)
				next_attempt_mono = now_mono + 10 * RETRY_INTERVAL_MS;
			wake_mono = next_attempt_mono;
		}
		else
		{
			int64		expiry_mono = snowid_shared->lease_expiry_mono;
			int64		lease_ms = snowid_shared->lease_ms;

			if (now_mono >= expiry_mono &&
				snowid_shared->state == SNOWID_STATE_ACTIVE)
				expire_lease(snowid_shared->worker_id);

			/* Renew at a third of the lease; retry each second after a failure. */
			if (now_mono >= expiry_mono - 2 * lease_ms / 3 &&
				now_mono >= next_attempt_mono)
			{
				try_renew(layout);
				next_attempt_mono = snowid_monotonic_ms() + RETRY_INTERVAL_MS;
			}

			if (snowid_shared->has_lease)
			{
				expiry_mono = snowid_shared->lease_expiry_mono;
				wake_mono = Max(expiry_mono - 2 * lease_ms / 3, next_attempt_mono);
				if (snowid_shared->state == SNOWID_STATE_ACTIVE)
					wake_mono = Min(wake_mono, expiry_mono);

				/* Waiting for the clock to pass the floor: look again soon. */
				if (snowid_shared->state == SNOWID_STATE_NO_LEASE_YET &&
					now_mono < expiry_mono && !resume_generation(layout))
					wake_mono = Min(wake_mono, now_mono + 100);
			}
			else
				wake_mono = 0;
		}

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
	libpq_transport_disconnect();
	proc_exit(1);
}
