/*-------------------------------------------------------------------------
 *
 * lease_spi.c
 *	  The lease protocol over SPI, for the local coordinator kept in
 *	  snowid.database (the embedded default).
 *
 * Each call is one transaction of its own.  Results are copied out before
 * the commit and reported only after it returns, so nothing counts as
 * confirmed until it is durable (the keeper's session forces
 * synchronous_commit = on, and so do the protocol functions).  Errors are
 * caught, logged and turned into a false return: the keeper decides.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/snapmgr.h"
#include "utils/uuid.h"

#include "lease_client.h"

typedef void (*spi_body) (void *arg);

/*
 * A WARNING while committing (e.g. "canceling wait for synchronous
 * replication") means the commit is only local: not confirmed.
 */
static emit_log_hook_type prev_emit_log_hook = NULL;
static bool hook_installed = false;
static bool in_commit = false;
static bool warning_seen = false;
static char warning_message[SNOWID_MESSAGE_LEN];

static void
remember_warnings(ErrorData *edata)
{
	if (in_commit && edata->elevel == WARNING && !warning_seen)
	{
		warning_seen = true;
		strlcpy(warning_message, edata->message ? edata->message : "",
				sizeof(warning_message));
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * Run body inside a transaction with SPI connected.  Returns false, with
 * the error message in errbuf, if anything raised an error; the
 * transaction is then rolled back.
 */
static bool
run_in_transaction(spi_body body, void *arg, char *errbuf)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	bool		ok = true;

	if (!hook_installed)
	{
		prev_emit_log_hook = emit_log_hook;
		emit_log_hook = remember_warnings;
		hook_installed = true;
	}
	warning_seen = false;

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		SPI_connect();
		PushActiveSnapshot(GetTransactionSnapshot());
		body(arg);
		SPI_finish();
		PopActiveSnapshot();
		in_commit = true;
		CommitTransactionCommand();
		in_commit = false;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		in_commit = false;
		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		strlcpy(errbuf, edata->message, SNOWID_MESSAGE_LEN);
		AbortCurrentTransaction();
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcontext);
	if (ok && warning_seen)
	{
		snprintf(errbuf, SNOWID_MESSAGE_LEN,
				 "commit not confirmed: %s", warning_message);
		ok = false;
	}
	return ok;
}

/* Run a statement with parameters, expecting one row. */
static void
execute_one_row(const char *sql, int nargs, Oid *types, Datum *values)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, values, NULL,
										   false, 1);

	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "snowid lease query returned no row: %s", sql);
}

static Datum
uuid_datum(const uint8 *token)
{
	pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));

	memcpy(uuid->data, token, UUID_LEN);
	return UUIDPGetDatum(uuid);
}

/* Column "name" of the single result row, or false if NULL. */
static bool
result_column(const char *name, Datum *value)
{
	int			col = SPI_fnumber(SPI_tuptable->tupdesc, name);
	bool		isnull;

	if (col <= 0)
		elog(ERROR, "snowid lease result has no column \"%s\"", name);
	*value = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
						   col, &isnull);
	return !isnull;
}

static void
result_text(const char *name, char *buf, size_t len)
{
	Datum		value;

	if (result_column(name, &value))
		text_to_cstring_buffer(DatumGetTextPP(value), buf, len);
	else
		buf[0] = '\0';
}

static int64
result_int64(const char *name)
{
	Datum		value;

	return result_column(name, &value) ? DatumGetInt64(value) : 0;
}

static int32
result_int32(const char *name)
{
	Datum		value;

	return result_column(name, &value) ? DatumGetInt32(value) : -1;
}

/* --- setup: install and initialise the local coordinator --- */

typedef struct SetupArgs
{
	const SnowidLayout *layout;
	bool		started_from_backup;
	bool		installed;
} SetupArgs;

static void
setup_body(void *arg)
{
	SetupArgs  *a = arg;
	Oid			types[7] = {INT4OID, INT4OID, INT4OID, TIMESTAMPTZOID,
	INT4OID, INT4OID, INT4OID};
	Datum		values[7];
	int			rc;

	rc = SPI_execute("SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'snowid_coordinator'",
					 true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not look up extension snowid_coordinator");
	if (SPI_processed == 0)
	{
		SPI_execute("CREATE EXTENSION snowid_coordinator", false, 0);
		a->installed = true;
	}

	values[0] = Int32GetDatum(a->layout->worker_bits);
	values[1] = Int32GetDatum(a->layout->region_bits);
	values[2] = Int32GetDatum(a->layout->sequence_bits);
	values[3] = TimestampTzGetDatum(snowid_unix_ms_to_timestamptz(a->layout->epoch_ms));
	values[4] = Int32GetDatum(snowid_lease_time_ms);
	values[5] = Int32GetDatum(snowid_safety_period_ms);
	values[6] = Int32GetDatum(snowid_lease_margin_ms);
	rc = SPI_execute("SELECT 1 FROM snowid_coordinator.settings", true, 1);
	if (rc == SPI_OK_SELECT && SPI_processed == 0)
		SPI_execute_with_args("SELECT snowid_coordinator.initialize("
							  "worker_bits => $1, region_bits => $2, sequence_bits => $3, "
							  "epoch => $4, lease_time => make_interval(secs => $5 / 1000.0), "
							  "safety_period => make_interval(secs => $6 / 1000.0), "
							  "lease_margin => make_interval(secs => $7 / 1000.0), "
							  "local_mode => true)",
							  7, types, values, NULL, false, 0);
	else
		SPI_execute_with_args("SELECT snowid_coordinator.set_timing_v1($1, $2, $3)",
							  3, types + 4, values + 4, NULL, false, 0);

	if (a->started_from_backup)
	{
		Oid			start_type = TIMESTAMPTZOID;
		Datum		start = TimestampTzGetDatum(PgStartTime);

		SPI_execute_with_args("SELECT snowid_coordinator.mark_copy_v1($1)",
							  1, &start_type, &start, NULL, false, 0);
	}
}

/*
 * Make sure snowid_coordinator is installed and initialised in this
 * database; in local mode the lease timing follows this node's settings.
 * A node started from a base backup marks itself as a possible copy.
 */
bool
lease_client_setup(const SnowidLayout *layout, bool started_from_backup,
				   char *errbuf)
{
	SetupArgs	a = {layout, started_from_backup, false};

	if (!run_in_transaction(setup_body, &a, errbuf))
		return false;
	if (a.installed)
		ereport(LOG,
				(errmsg("snowid lease keeper installed extension \"snowid_coordinator\" in database \"%s\"",
						snowid_database)));
	return true;
}

/* --- acquire --- */

typedef struct AcquireArgs
{
	const uint8 *token;
	const char *node_name;
	const SnowidLayout *layout;
	int			region;
	int64		node_clock_ms;
	LeaseGrant *grant;
} AcquireArgs;

static void
acquire_body(void *arg)
{
	AcquireArgs *a = arg;
	Oid			types[9] = {UUIDOID, TEXTOID, INT4OID, INT4OID, INT4OID,
	INT4OID, INT8OID, INT4OID, INT8OID};
	Datum		values[9];
	char		nulls[10] = "         ";

	values[0] = uuid_datum(a->token);
	values[1] = CStringGetTextDatum(a->node_name);
	values[2] = Int32GetDatum(a->layout->timestamp_bits);
	values[3] = Int32GetDatum(a->layout->worker_bits);
	values[4] = Int32GetDatum(a->layout->region_bits);
	values[5] = Int32GetDatum(a->layout->sequence_bits);
	values[6] = Int64GetDatum(a->layout->epoch_ms);
	values[7] = Int32GetDatum(a->region);
	values[8] = Int64GetDatum(a->node_clock_ms);
	if (a->region < 0)
		nulls[7] = 'n';

	if (SPI_execute_with_args("SELECT * FROM snowid_coordinator.lease_acquire_v1($1, $2, $3, $4, $5, $6, $7, $8, $9)",
							  9, types, values, nulls, false, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "snowid lease_acquire_v1 returned no row");

	result_text("status", a->grant->status, sizeof(a->grant->status));
	result_text("detail", a->grant->detail, sizeof(a->grant->detail));
	a->grant->worker_id = result_int32("worker_id");
	a->grant->floor_ms = result_int64("floor_ms");
	a->grant->high_water_ms = result_int64("high_water_ms");
	a->grant->lease_ms = result_int32("lease_ms");
	a->grant->coordinator_now_ms = result_int64("coordinator_now_ms");
}

bool
lease_client_acquire(const uint8 *token, const char *node_name,
					 const SnowidLayout *layout, int region,
					 int64 node_clock_ms, LeaseGrant *grant, char *errbuf)
{
	AcquireArgs a = {token, node_name, layout, region, node_clock_ms, grant};

	memset(grant, 0, sizeof(LeaseGrant));
	return run_in_transaction(acquire_body, &a, errbuf);
}

/* --- renew --- */

typedef struct RenewArgs
{
	const uint8 *token;
	int32		worker_id;
	int64		node_clock_ms;
	LeaseRenewal *renewal;
} RenewArgs;

static void
renew_body(void *arg)
{
	RenewArgs  *a = arg;
	Oid			types[3] = {UUIDOID, INT4OID, INT8OID};
	Datum		values[3];

	values[0] = uuid_datum(a->token);
	values[1] = Int32GetDatum(a->worker_id);
	values[2] = Int64GetDatum(a->node_clock_ms);
	execute_one_row("SELECT * FROM snowid_coordinator.lease_renew_v1($1, $2, $3)",
					3, types, values);
	result_text("status", a->renewal->status, sizeof(a->renewal->status));
	a->renewal->high_water_ms = result_int64("high_water_ms");
	a->renewal->lease_ms = result_int32("lease_ms");
	a->renewal->coordinator_now_ms = result_int64("coordinator_now_ms");
}

bool
lease_client_renew(const uint8 *token, int32 worker_id, int64 node_clock_ms,
				   LeaseRenewal *renewal, char *errbuf)
{
	RenewArgs	a = {token, worker_id, node_clock_ms, renewal};

	memset(renewal, 0, sizeof(LeaseRenewal));
	return run_in_transaction(renew_body, &a, errbuf);
}

/* --- release --- */

typedef struct ReleaseArgs
{
	const uint8 *token;
	int32		worker_id;
	int64		last_used_ms;
	char	   *status;
} ReleaseArgs;

static void
release_body(void *arg)
{
	ReleaseArgs *a = arg;
	Oid			types[3] = {UUIDOID, INT4OID, INT8OID};
	Datum		values[3];

	values[0] = uuid_datum(a->token);
	values[1] = Int32GetDatum(a->worker_id);
	values[2] = Int64GetDatum(a->last_used_ms);
	execute_one_row("SELECT * FROM snowid_coordinator.lease_release_v1($1, $2, $3)",
					3, types, values);
	result_text("status", a->status, LEASE_STATUS_LEN);
}

bool
lease_client_release(const uint8 *token, int32 worker_id, int64 last_used_ms,
					 char *status, char *errbuf)
{
	ReleaseArgs a = {token, worker_id, last_used_ms, status};

	return run_in_transaction(release_body, &a, errbuf);
}

/* --- confirm identity (local mode, after promotion, clone or restore) --- */

static void
confirm_body(void *arg)
{
	if (SPI_execute("SELECT snowid_coordinator.confirm_identity_v1()", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "snowid confirm_identity_v1 failed");
}

bool
lease_client_confirm_identity(char *errbuf)
{
	return run_in_transaction(confirm_body, NULL, errbuf);
}
