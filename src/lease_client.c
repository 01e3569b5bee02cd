/*-------------------------------------------------------------------------
 *
 * lease_client.c
 *	  The lease protocol (version 2) as the keeper speaks it: the SQL calls
 *	  into snowid_coordinator and the parsing of their answers, carried by
 *	  whichever transport applies (lease_transport.h).
 *
 * Every name in the SQL is schema-qualified, and both transports run with
 * search_path = pg_catalog, pg_temp: the keeper is a superuser session,
 * and a better-matching function or operator planted in a schema on the
 * search_path would otherwise run with its privileges (CVE-2018-1058).
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "lease_client.h"
#include "lease_transport.h"

bool
lease_transport_is_remote(void)
{
	return snowid_coordinator_conninfo != NULL &&
		snowid_coordinator_conninfo[0] != '\0';
}

void
lease_transport_describe(char *buf, size_t len)
{
	if (lease_transport_is_remote())
		libpq_transport_describe(buf, len);
	else
		snprintf(buf, len, "local database \"%s\"", snowid_database);
}

void
lease_transport_set_lease(int lease_ms)
{
	libpq_transport_set_timeout(lease_ms / 5);
}

void
lease_transport_close(void)
{
	if (lease_transport_is_remote())
		libpq_transport_disconnect();
}

/*
 * Run a lease statement.  A coordinator without the function asked for
 * (42883, undefined_function) is an older snowid_coordinator: say so.
 */
bool
lease_transport_query(const char *sql, int nparams, const char *const *params,
					  LeaseRow *row, char *errbuf)
{
	bool		ok;

	if (lease_transport_is_remote())
		ok = libpq_transport_query(sql, nparams, params, row, errbuf);
	else
		ok = spi_transport_query(sql, nparams, params, row, errbuf);
	if (!ok && strcmp(row->sqlstate, "42883") == 0)
		snprintf(errbuf, SNOWID_MESSAGE_LEN,
				 "the coordinator does not speak lease protocol version 2 (it needs snowid_coordinator %s; run ALTER EXTENSION snowid_coordinator UPDATE there, and grant the node role EXECUTE on lease_acquire_v2 and lease_renew_v2): %s",
				 SNOWID_COORDINATOR_VERSION, errbuf);
	return ok;
}

/* Text form of a token: PostgreSQL's own uuid output. */
static void
format_token(const uint8 *token, char *buf)
{
	pg_uuid_t	uuid;
	char	   *text;

	memcpy(uuid.data, token, SNOWID_TOKEN_LEN);
	text = DatumGetCString(DirectFunctionCall1(uuid_out, UUIDPGetDatum(&uuid)));
	strlcpy(buf, text, 40);
	pfree(text);
}

static int64
column_int64(const LeaseRow *row, int col)
{
	if (col >= row->ncolumns || row->isnull[col])
		return 0;
	return strtoi64(row->values[col], NULL, 10);
}

static void
column_text(const LeaseRow *row, int col, char *buf, size_t len)
{
	if (col >= row->ncolumns || row->isnull[col])
		buf[0] = '\0';
	else
		strlcpy(buf, row->values[col], len);
}

/*
 * Local mode: install and initialise the coordinator in snowid.database if
 * needed, with this node's layout and lease timing.  A remote coordinator
 * is initialised by its operator; nothing to do here.
 */
bool
lease_client_setup(const SnowidLayout *layout, bool started_from_backup,
				   char *errbuf)
{
	char		worker_bits[16],
				region_bits[16],
				sequence_bits[16],
				lease[24],
				safety[24],
				margin[24],
				offset[24],
				lease_ms[16],
				safety_ms[16],
				margin_ms[16],
				offset_ms[16];
	const char *epoch;
	const char *params[12];
	bool		installed = false;

	if (lease_transport_is_remote())
		return true;

	snprintf(worker_bits, sizeof(worker_bits), "%d", layout->worker_bits);
	snprintf(region_bits, sizeof(region_bits), "%d", layout->region_bits);
	snprintf(sequence_bits, sizeof(sequence_bits), "%d", layout->sequence_bits);
	epoch = timestamptz_to_str(snowid_unix_ms_to_timestamptz(layout->epoch_ms));
	snprintf(lease, sizeof(lease), "%d milliseconds", snowid_lease_time_ms);
	snprintf(safety, sizeof(safety), "%d milliseconds", snowid_safety_period_ms);
	snprintf(margin, sizeof(margin), "%d milliseconds", snowid_lease_margin_ms);
	snprintf(offset, sizeof(offset), "%d milliseconds", snowid_max_clock_offset_ms);
	snprintf(lease_ms, sizeof(lease_ms), "%d", snowid_lease_time_ms);
	snprintf(safety_ms, sizeof(safety_ms), "%d", snowid_safety_period_ms);
	snprintf(margin_ms, sizeof(margin_ms), "%d", snowid_lease_margin_ms);
	snprintf(offset_ms, sizeof(offset_ms), "%d", snowid_max_clock_offset_ms);
	params[0] = worker_bits;
	params[1] = region_bits;
	params[2] = sequence_bits;
	params[3] = epoch;
	params[4] = lease;
	params[5] = safety;
	params[6] = margin;
	params[7] = offset;
	params[8] = lease_ms;
	params[9] = safety_ms;
	params[10] = margin_ms;
	params[11] = offset_ms;

	if (!spi_local_setup("SELECT snowid_coordinator.initialize("
						 "worker_bits => $1::pg_catalog.int4, region_bits => $2::pg_catalog.int4, "
						 "sequence_bits => $3::pg_catalog.int4, epoch => $4::pg_catalog.timestamptz, "
						 "lease_time => $5::pg_catalog.interval, safety_period => $6::pg_catalog.interval, "
						 "lease_margin => $7::pg_catalog.interval, max_clock_offset => $8::pg_catalog.interval, "
						 "local_mode => true) "
						 "WHERE NOT EXISTS (SELECT FROM snowid_coordinator.settings) "
						 "UNION ALL "
						 "SELECT snowid_coordinator.set_timing_v2($9::pg_catalog.int4, $10::pg_catalog.int4, "
						 "$11::pg_catalog.int4, $12::pg_catalog.int4)",
						 12, params, started_from_backup, &installed, errbuf))
		return false;
	if (installed)
		ereport(LOG,
				(errmsg("snowid lease keeper installed extension \"snowid_coordinator\" in database \"%s\"",
						snowid_database)));
	return true;
}

bool
lease_client_acquire(const uint8 *token, const char *node_name,
					 const SnowidLayout *layout, int region,
					 int64 node_clock_ms, LeaseGrant *grant, char *errbuf)
{
	char		token_text[40],
				ts_bits[16],
				w_bits[16],
				r_bits[16],
				s_bits[16],
				epoch[24],
				region_text[16],
				clock[24];
	const char *params[9];
	LeaseRow	row;

	format_token(token, token_text);
	snprintf(ts_bits, sizeof(ts_bits), "%d", layout->timestamp_bits);
	snprintf(w_bits, sizeof(w_bits), "%d", layout->worker_bits);
	snprintf(r_bits, sizeof(r_bits), "%d", layout->region_bits);
	snprintf(s_bits, sizeof(s_bits), "%d", layout->sequence_bits);
	snprintf(epoch, sizeof(epoch), INT64_FORMAT, layout->epoch_ms);
	snprintf(region_text, sizeof(region_text), "%d", region);
	snprintf(clock, sizeof(clock), INT64_FORMAT, node_clock_ms);
	params[0] = token_text;
	params[1] = node_name;
	params[2] = ts_bits;
	params[3] = w_bits;
	params[4] = r_bits;
	params[5] = s_bits;
	params[6] = epoch;
	params[7] = region >= 0 ? region_text : NULL;
	params[8] = clock;

	memset(grant, 0, sizeof(LeaseGrant));
	if (!lease_transport_query("SELECT a.status, a.detail, a.worker_id, a.floor_ms, "
							   "a.high_water_ms, a.lease_ms, a.coordinator_now_ms, "
							   "a.max_clock_offset_ms "
							   "FROM snowid_coordinator.lease_acquire_v2($1::pg_catalog.uuid, "
							   "$2::pg_catalog.text, $3::pg_catalog.int4, $4::pg_catalog.int4, "
							   "$5::pg_catalog.int4, $6::pg_catalog.int4, $7::pg_catalog.int8, "
							   "$8::pg_catalog.int4, $9::pg_catalog.int8) a",
							   9, params, &row, errbuf))
		return false;
	column_text(&row, 0, grant->status, sizeof(grant->status));
	column_text(&row, 1, grant->detail, sizeof(grant->detail));
	grant->worker_id = (int32) column_int64(&row, 2);
	grant->floor_ms = column_int64(&row, 3);
	grant->high_water_ms = column_int64(&row, 4);
	grant->lease_ms = (int32) column_int64(&row, 5);
	grant->coordinator_now_ms = column_int64(&row, 6);
	grant->max_clock_offset_ms = (int32) column_int64(&row, 7);
	return true;
}

bool
lease_client_renew(const uint8 *token, int32 worker_id, int64 node_clock_ms,
				   int64 confirmed_high_water_ms, bool lease_valid,
				   int64 clock_offset_ms, bool clock_offset_exceeded,
				   LeaseRenewal *renewal, char *errbuf)
{
	char		token_text[40],
				worker[16],
				clock[24],
				confirmed[24],
				offset[24];
	const char *params[7];
	LeaseRow	row;

	format_token(token, token_text);
	snprintf(worker, sizeof(worker), "%d", worker_id);
	snprintf(clock, sizeof(clock), INT64_FORMAT, node_clock_ms);
	snprintf(confirmed, sizeof(confirmed), INT64_FORMAT, confirmed_high_water_ms);
	snprintf(offset, sizeof(offset), INT64_FORMAT, clock_offset_ms);
	params[0] = token_text;
	params[1] = worker;
	params[2] = clock;
	params[3] = confirmed;
	params[4] = lease_valid ? "true" : "false";
	params[5] = offset;
	params[6] = clock_offset_exceeded ? "true" : "false";

	memset(renewal, 0, sizeof(LeaseRenewal));
	if (!lease_transport_query("SELECT r.status, r.detail, r.high_water_ms, r.lease_ms, "
							   "r.coordinator_now_ms, r.max_clock_offset_ms "
							   "FROM snowid_coordinator.lease_renew_v2($1::pg_catalog.uuid, "
							   "$2::pg_catalog.int4, $3::pg_catalog.int8, $4::pg_catalog.int8, "
							   "$5::pg_catalog.bool, $6::pg_catalog.int8, $7::pg_catalog.bool) r",
							   7, params, &row, errbuf))
		return false;
	column_text(&row, 0, renewal->status, sizeof(renewal->status));
	column_text(&row, 1, renewal->detail, sizeof(renewal->detail));
	renewal->high_water_ms = column_int64(&row, 2);
	renewal->lease_ms = (int32) column_int64(&row, 3);
	renewal->coordinator_now_ms = column_int64(&row, 4);
	renewal->max_clock_offset_ms = (int32) column_int64(&row, 5);
	return true;
}

bool
lease_client_release(const uint8 *token, int32 worker_id, int64 last_used_ms,
					 char *status, char *errbuf)
{
	char		token_text[40],
				worker[16],
				last[24];
	const char *params[3];
	LeaseRow	row;

	format_token(token, token_text);
	snprintf(worker, sizeof(worker), "%d", worker_id);
	snprintf(last, sizeof(last), INT64_FORMAT, last_used_ms);
	params[0] = token_text;
	params[1] = worker;
	params[2] = last;

	if (!lease_transport_query("SELECT r.status FROM snowid_coordinator.lease_release_v1("
							   "$1::pg_catalog.uuid, $2::pg_catalog.int4, $3::pg_catalog.int8) r",
							   3, params, &row, errbuf))
		return false;
	column_text(&row, 0, status, LEASE_STATUS_LEN);
	return true;
}

/* Local mode, after promotion, clone or restore: see confirm_identity_v1. */
bool
lease_client_confirm_identity(char *errbuf)
{
	LeaseRow	row;

	return lease_transport_query("SELECT snowid_coordinator.confirm_identity_v1()::pg_catalog.text",
								 0, NULL, &row, errbuf);
}
