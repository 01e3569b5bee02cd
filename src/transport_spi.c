/*-------------------------------------------------------------------------
 *
 * transport_spi.c
 *	  The lease protocol carried over SPI to the local coordinator kept in
 *	  snowid.database (the embedded default).
 *
 * Each statement is a transaction of its own.  Its row is copied out
 * before the commit and reported only after the commit returned without a
 * warning (a WARNING while committing, such as "canceling wait for
 * synchronous replication", means the commit is only local).  The keeper's
 * session forces synchronous_commit = on, and so do the protocol
 * functions.  Errors are caught and turned into a false return: the keeper
 * decides what they mean.
 *
 * The warnings are caught through emit_log_hook, which sees only messages
 * the server logs: a WARNING below log_min_messages is never even built.
 * So the keeper's session keeps log_min_messages at warning or finer
 * (keeper.c), whatever postgresql.conf says.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "lease_transport.h"

typedef void (*spi_body) (void *arg);

static emit_log_hook_type prev_emit_log_hook = NULL;
static bool hook_installed = false;
static bool in_commit = false;
static bool warning_seen = false;
static char warning_message[SNOWID_MESSAGE_LEN];

static void
remember_commit_warnings(ErrorData *edata)
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
 * the error message in errbuf, if anything raised an error (the
 * transaction is then rolled back) or the commit warned.
 */
static bool
run_in_transaction(spi_body body, void *arg, char *errbuf, char *sqlstate)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	bool		ok = true;

	if (!hook_installed)
	{
		prev_emit_log_hook = emit_log_hook;
		emit_log_hook = remember_commit_warnings;
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
		if (sqlstate)
			strlcpy(sqlstate, unpack_sql_state(edata->sqlerrcode), 6);
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

/* Run one statement with text parameters. */
static int
execute_text_params(const char *sql, int nparams, const char *const *params,
					bool read_only)
{
	Oid			types[16];
	Datum		values[16];
	char		nulls[16];
	int			i;

	Assert(nparams <= lengthof(types));
	for (i = 0; i < nparams; i++)
	{
		types[i] = TEXTOID;
		values[i] = params[i] ? CStringGetTextDatum(params[i]) : (Datum) 0;
		nulls[i] = params[i] ? ' ' : 'n';
	}
	return SPI_execute_with_args(sql, nparams, types, values, nulls,
								 read_only, 0);
}

typedef struct QueryArgs
{
	const char *sql;
	int			nparams;
	const char *const *params;
	LeaseRow   *row;
} QueryArgs;

static void
query_body(void *arg)
{
	QueryArgs  *a = arg;
	TupleDesc	tupdesc;
	int			col;

	if (execute_text_params(a->sql, a->nparams, a->params, false) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "snowid lease statement did not return one row");

	tupdesc = SPI_tuptable->tupdesc;
	if (tupdesc->natts > LEASE_MAX_COLUMNS)
		elog(ERROR, "snowid lease statement returned too many columns");
	a->row->ncolumns = tupdesc->natts;
	for (col = 0; col < tupdesc->natts; col++)
	{
		char	   *value = SPI_getvalue(SPI_tuptable->vals[0], tupdesc, col + 1);

		a->row->isnull[col] = (value == NULL);
		strlcpy(a->row->values[col], value ? value : "", LEASE_VALUE_LEN);
	}
}

bool
spi_transport_query(const char *sql, int nparams, const char *const *params,
					LeaseRow *row, char *errbuf)
{
	QueryArgs	a = {sql, nparams, params, row};

	memset(row, 0, sizeof(LeaseRow));
	return run_in_transaction(query_body, &a, errbuf, row->sqlstate);
}

typedef struct SetupArgs
{
	const char *init_sql;
	int			nparams;
	const char *const *params;
	bool		started_from_backup;
	bool		installed;
	char		updated_from[16];	/* version before an update, or "" */
} SetupArgs;

static void
setup_body(void *arg)
{
	SetupArgs  *a = arg;
	int			rc;

	rc = SPI_execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'snowid_coordinator'",
					 true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not look up extension snowid_coordinator");
	if (SPI_processed == 0)
	{
		SPI_execute("CREATE EXTENSION snowid_coordinator", false, 0);
		a->installed = true;
	}
	else
	{
		char	   *version = SPI_getvalue(SPI_tuptable->vals[0],
										   SPI_tuptable->tupdesc, 1);

		/* In local mode the keeper owns the coordinator: bring it along. */
		if (strcmp(version, SNOWID_COORDINATOR_VERSION) != 0)
		{
			SPI_execute("ALTER EXTENSION snowid_coordinator UPDATE TO '" SNOWID_COORDINATOR_VERSION "'",
						false, 0);
			strlcpy(a->updated_from, version, sizeof(a->updated_from));
		}
	}

	execute_text_params(a->init_sql, a->nparams, a->params, false);

	if (a->started_from_backup)
	{
		const char *start = timestamptz_to_str(PgStartTime);

		execute_text_params("SELECT snowid_coordinator.mark_copy_v1($1::pg_catalog.timestamptz)",
							1, &start, false);
	}
}

/*
 * Local mode: make sure snowid_coordinator is installed in this database,
 * then run init_sql (initialise it, or bring the lease timing up to date),
 * and record a start from a base backup.
 */
bool
spi_local_setup(const char *init_sql, int nparams, const char *const *params,
				bool started_from_backup, bool *installed, char *errbuf)
{
	SetupArgs	a = {init_sql, nparams, params, started_from_backup, false, ""};
	bool		ok = run_in_transaction(setup_body, &a, errbuf, NULL);

	*installed = a.installed;
	if (ok && a.updated_from[0])
		ereport(LOG,
				(errmsg("snowid lease keeper updated extension \"snowid_coordinator\" from version %s to %s",
						a.updated_from, SNOWID_COORDINATOR_VERSION)));
	return ok;
}
