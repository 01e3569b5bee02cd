/*-------------------------------------------------------------------------
 *
 * transport_libpq.c
 *	  The lease protocol carried over libpq to a remote coordinator named
 *	  by snowid.coordinator.
 *
 * The keeper keeps one connection and drives it without blocking: every
 * wait is WaitLatchOrSocket with a deadline well under the renewal
 * interval, so a hung or unreachable coordinator never stalls the keeper
 * past its lease.  A statement that does not answer in time is abandoned
 * by closing the connection, never cancelled: a cancel could cut short a
 * commit waiting for the coordinator's synchronous standby and leave it
 * committed only locally.  The session runs with synchronous_commit = on,
 * and a WARNING from the coordinator (e.g. "canceling wait for synchronous
 * replication") makes the answer unconfirmed.  Passwords in the conninfo
 * never reach snowid_status(), the log or an error message.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include <sys/socket.h>

#include "libpq-fe.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

#include "lease_transport.h"

/* SQLSTATE of the coordinator's own advisory warnings (pool running low). */
#define COORDINATOR_ADVISORY_SQLSTATE "01SN1"

static PGconn *conn = NULL;
static bool warning_seen = false;
static char warning_message[SNOWID_MESSAGE_LEN];

/*
 * How long one connection attempt or statement may take, in ms: set by the
 * keeper from the lease length it knows (lease_transport_set_lease()).
 */
static int	call_timeout = 1000;

static int
call_timeout_ms(void)
{
	return call_timeout;
}

void
libpq_transport_set_timeout(int timeout_ms)
{
	call_timeout = Max(1000, timeout_ms);
}

/* Warnings while a statement runs: advisory ones are logged, others void it. */
static void
notice_receiver(void *arg, const PGresult *res)
{
	const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	if (severity == NULL || strcmp(severity, "WARNING") != 0)
		return;
	if (sqlstate && strcmp(sqlstate, COORDINATOR_ADVISORY_SQLSTATE) == 0)
	{
		ereport(LOG,
				(errmsg("snowid coordinator warns: %s", message ? message : "")));
		return;
	}
	if (!warning_seen)
	{
		warning_seen = true;
		strlcpy(warning_message, message ? message : "", sizeof(warning_message));
	}
}

void
libpq_transport_disconnect(void)
{
	if (conn)
		PQfinish(conn);
	conn = NULL;
}

/*
 * Drop a connection whose call was given up: close it with a reset
 * (SO_LINGER 0), which discards what the kernel still holds to send.  A
 * plain close would keep retransmitting the abandoned statement, and after
 * a partition the coordinator would run it late, when this keeper may hold
 * another lease (the chaos soak saw one arrive 50 s late).
 */
static void
abandon_connection(void)
{
	if (conn && PQsocket(conn) >= 0)
	{
		struct linger reset = {.l_onoff = 1,.l_linger = 0};

		(void) setsockopt(PQsocket(conn), SOL_SOCKET, SO_LINGER,
						  &reset, sizeof(reset));
	}
	libpq_transport_disconnect();
}

/* Fail: copy libpq's message (it never includes the password) and drop. */
static bool
fail(char *errbuf, const char *what)
{
	const char *msg = conn ? PQerrorMessage(conn) : "out of memory";
	size_t		len;
	char	   *p;

	snprintf(errbuf, SNOWID_MESSAGE_LEN, "coordinator unreachable: %s%s%s",
			 what, msg[0] ? ": " : "", msg);
	/* one line: libpq's multi-line messages read badly in a status column */
	for (p = errbuf; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	len = strlen(errbuf);
	while (len > 0 && errbuf[len - 1] == ' ')
		errbuf[--len] = '\0';
	abandon_connection();
	return false;
}

/*
 * Wait until the socket is ready for "events" or the deadline passes.
 * Returns false on timeout.
 */
static bool
wait_for_socket(int events, int64 deadline_mono)
{
	for (;;)
	{
		int64		left = deadline_mono - snowid_monotonic_ms();
		int			rc;

		if (left <= 0)
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
							   PQsocket(conn), (long) left, SNOWID_WAIT_COORDINATOR_SOCKET);
		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		if (rc & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
			return true;
	}
}

/* Open the connection, trying the hosts of a multi-host conninfo. */
static bool
connect_coordinator(int64 deadline_mono, char *errbuf)
{
	PQconninfoOption *opts;
	PQconninfoOption *opt;
	const char *keys[64];
	const char *vals[64];
	char		options[1024];
	char		user_timeout[32];
	char	   *parse_error = NULL;
	int			n = 0;
	const char *user_options = NULL;

	opts = PQconninfoParse(snowid_coordinator_conninfo, &parse_error);
	if (opts == NULL)
	{
		snprintf(errbuf, SNOWID_MESSAGE_LEN, "invalid snowid.coordinator: %s",
				 parse_error ? parse_error : "out of memory");
		if (parse_error)
			PQfreemem(parse_error);
		return false;
	}
	for (opt = opts; opt->keyword && n < lengthof(keys) - 4; opt++)
	{
		if (opt->val == NULL || opt->val[0] == '\0')
			continue;
		if (strcmp(opt->keyword, "options") == 0)
		{
			user_options = opt->val;
			continue;
		}
		if (strcmp(opt->keyword, "tcp_user_timeout") == 0)
			continue;			/* ours, below */
		keys[n] = opt->keyword;
		vals[n] = opt->val;
		n++;
	}
	/*
	 * Durable answers; statements that cannot hang past our deadline; and
	 * a search_path no role or database setting on the coordinator can
	 * change (ours come last, so they win over the user's options, and a
	 * startup option wins over ALTER ROLE / DATABASE ... SET).
	 */
	snprintf(options, sizeof(options),
			 "%s -c synchronous_commit=on -c statement_timeout=%d -c lock_timeout=%d "
			 "-c search_path=pg_catalog,pg_temp",
			 user_options ? user_options : "", call_timeout_ms(), call_timeout_ms());
	keys[n] = "options";
	vals[n++] = options;
	/* and the kernel gives up on unacknowledged data when we do (TCP) */
	snprintf(user_timeout, sizeof(user_timeout), "%d", call_timeout_ms());
	keys[n] = "tcp_user_timeout";
	vals[n++] = user_timeout;
	keys[n] = "fallback_application_name";
	vals[n++] = "snowid lease keeper";
	keys[n] = NULL;
	vals[n] = NULL;

	conn = PQconnectStartParams(keys, vals, false);
	PQconninfoFree(opts);
	if (conn == NULL || PQstatus(conn) == CONNECTION_BAD)
		return fail(errbuf, "could not start a connection");

	for (;;)
	{
		PostgresPollingStatusType st = PQconnectPoll(conn);

		if (st == PGRES_POLLING_OK)
			break;
		if (st == PGRES_POLLING_FAILED)
			return fail(errbuf, "could not connect");
		if (!wait_for_socket(st == PGRES_POLLING_READING ?
							 WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE,
							 deadline_mono))
			return fail(errbuf, "connection timed out");
	}
	PQsetNoticeReceiver(conn, notice_receiver, NULL);
	return true;
}

/* Copy the single row of res into *row. */
static bool
copy_row(PGresult *res, LeaseRow *row, char *errbuf)
{
	int			col;

	if (PQntuples(res) != 1 || PQnfields(res) > LEASE_MAX_COLUMNS)
	{
		snprintf(errbuf, SNOWID_MESSAGE_LEN,
				 "coordinator returned %d rows of %d columns, expected one row",
				 PQntuples(res), PQnfields(res));
		return false;
	}
	row->ncolumns = PQnfields(res);
	for (col = 0; col < row->ncolumns; col++)
	{
		row->isnull[col] = PQgetisnull(res, 0, col);
		strlcpy(row->values[col], PQgetvalue(res, 0, col), LEASE_VALUE_LEN);
	}
	return true;
}

bool
libpq_transport_query(const char *sql, int nparams, const char *const *params,
					  LeaseRow *row, char *errbuf)
{
	int64		deadline = snowid_monotonic_ms() + call_timeout_ms();
	PGresult   *res;
	bool		ok = false;
	bool		have_row = false;

	memset(row, 0, sizeof(LeaseRow));
	if (conn && PQstatus(conn) != CONNECTION_OK)
		libpq_transport_disconnect();
	if (conn == NULL)
	{
		if (!connect_coordinator(deadline, errbuf))
			return false;
		/* A fresh connection's first statement gets a full allowance too. */
		deadline = snowid_monotonic_ms() + call_timeout_ms();
	}

	warning_seen = false;
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
		return fail(errbuf, "could not send the lease statement");

	/* Collect every result; the statement's transaction commits before the last. */
	for (;;)
	{
		while (PQisBusy(conn))
		{
			if (!wait_for_socket(WL_SOCKET_READABLE, deadline))
				return fail(errbuf, "no answer in time");
			if (!PQconsumeInput(conn))
				return fail(errbuf, "connection lost");
		}
		res = PQgetResult(conn);
		if (res == NULL)
			break;
		if (PQresultStatus(res) == PGRES_TUPLES_OK && !have_row)
		{
			have_row = true;
			ok = copy_row(res, row, errbuf);
		}
		else if (PQresultStatus(res) != PGRES_TUPLES_OK)
		{
			const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
			const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

			if (sqlstate)
				strlcpy(row->sqlstate, sqlstate, sizeof(row->sqlstate));
			snprintf(errbuf, SNOWID_MESSAGE_LEN, "coordinator error: %s",
					 msg ? msg : PQresStatus(PQresultStatus(res)));
			ok = false;
			have_row = true;
		}
		PQclear(res);
	}
	if (!have_row)
	{
		strlcpy(errbuf, "coordinator returned no result", SNOWID_MESSAGE_LEN);
		return false;
	}
	if (ok && warning_seen)
	{
		snprintf(errbuf, SNOWID_MESSAGE_LEN, "commit not confirmed: %s",
				 warning_message);
		ok = false;
	}
	return ok;
}

/* The conninfo without secrets, for snowid_status(). */
void
libpq_transport_describe(char *buf, size_t len)
{
	PQconninfoOption *opts = PQconninfoParse(snowid_coordinator_conninfo, NULL);
	PQconninfoOption *opt;
	size_t		used = 0;

	buf[0] = '\0';
	if (opts == NULL)
	{
		strlcpy(buf, "(invalid snowid.coordinator)", len);
		return;
	}
	for (opt = opts; opt->keyword; opt++)
	{
		if (opt->val == NULL || opt->val[0] == '\0' ||
			strcmp(opt->keyword, "password") == 0 ||
			strcmp(opt->keyword, "sslpassword") == 0 ||
			strchr(opt->dispchar, '*') != NULL)
			continue;
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%s=%s",
						 used ? " " : "", opt->keyword, opt->val);
		if (used >= len)
			break;
	}
	PQconninfoFree(opts);
}
