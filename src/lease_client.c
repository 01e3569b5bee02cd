/*-------------------------------------------------------------------------
 *
 * lease_client.c
 *	  The lease protocol (version 1) as the keeper speaks it: the SQL calls
 *	  into snowid_coordinator and the parsing of their answers, carried by
 *	  whichever transport applies (lease_transport.h).
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "utils/builtins.h"
#include "utils/timestamp.h"

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

bool
lease_transport_query(const char *sql, int nparams, const char *const *params,
					  LeaseRow *row, char *errbuf)
{
	if (lease_transport_is_remote())
		return libpq_transport_query(sql, nparams, params, row, errbuf);
	return spi_transport_query(sql, nparams, params, row, errbuf);
}

/* Text form of a token, as PostgreSQL's uuid type reads it. */
static void
format_token(const uint8 *token, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	int			i,
				p = 0;

	for (i = 0; i < SNOWID_TOKEN_LEN; i++)
	{
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[p++] = '-';
		buf[p++] = hex[token[i] >> 4];
		buf[p++] = hex[token[i] & 0x0F];
	}
	buf[p] = '\0';
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
				lease[16],
				safety[16],
				margin[16];
	const char *epoch;
	const char *params[7];
	bool		installed = false;

	if (lease_transport_is_remote())
		return true;

	snprintf(worker_bits, sizeof(worker_bits), "%d", layout->worker_bits);
	snprintf(region_bits, sizeof(region_bits), "%d", layout->region_bits);
	snprintf(sequence_bits, sizeof(sequence_bits), "%d", layout->sequence_bits);
	epoch = timestamptz_to_str(snowid_unix_ms_to_timestamptz(layout->epoch_ms));
	snprintf(lease, sizeof(lease), "%d", snowid_lease_time_ms);
	snprintf(safety, sizeof(safety), "%d", snowid_safety_period_ms);
	snprintf(margin, sizeof(margin), "%d", snowid_lease_margin_ms);
	params[0] = worker_bits;
	params[1] = region_bits;
	params[2] = sequence_bits;
	params[3] = epoch;
	params[4] = lease;
	params[5] = safety;
	params[6] = margin;

	if (!spi_local_setup("SELECT snowid_coordinator.initialize("
						 "worker_bits => $1::int, region_bits => $2::int, sequence_bits => $3::int, "
						 "epoch => $4::timestamptz, "
						 "lease_time => make_interval(secs => $5::int / 1000.0), "
						 "safety_period => make_interval(secs => $6::int / 1000.0), "
						 "lease_margin => make_interval(secs => $7::int / 1000.0), "
						 "local_mode => true) "
						 "WHERE NOT EXISTS (SELECT FROM snowid_coordinator.settings) "
						 "UNION ALL "
						 "SELECT snowid_coordinator.set_timing_v1($5::int, $6::int, $7::int)",
						 7, params, started_from_backup, &installed, errbuf))
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
	if (!lease_transport_query("SELECT status, detail, worker_id, floor_ms, high_water_ms, "
							   "lease_ms, coordinator_now_ms "
							   "FROM snowid_coordinator.lease_acquire_v1($1::uuid, $2, $3::int, "
							   "$4::int, $5::int, $6::int, $7::bigint, $8::int, $9::bigint)",
							   9, params, &row, errbuf))
		return false;
	column_text(&row, 0, grant->status, sizeof(grant->status));
	column_text(&row, 1, grant->detail, sizeof(grant->detail));
	grant->worker_id = (int32) column_int64(&row, 2);
	grant->floor_ms = column_int64(&row, 3);
	grant->high_water_ms = column_int64(&row, 4);
	grant->lease_ms = (int32) column_int64(&row, 5);
	grant->coordinator_now_ms = column_int64(&row, 6);
	return true;
}

bool
lease_client_renew(const uint8 *token, int32 worker_id, int64 node_clock_ms,
				   int64 clock_offset_ms, bool clock_offset_exceeded,
				   LeaseRenewal *renewal, char *errbuf)
{
	char		token_text[40],
				worker[16],
				clock[24],
				offset[24];
	const char *params[5];
	LeaseRow	row;

	format_token(token, token_text);
	snprintf(worker, sizeof(worker), "%d", worker_id);
	snprintf(clock, sizeof(clock), INT64_FORMAT, node_clock_ms);
	snprintf(offset, sizeof(offset), INT64_FORMAT, clock_offset_ms);
	params[0] = token_text;
	params[1] = worker;
	params[2] = clock;
	params[3] = offset;
	params[4] = clock_offset_exceeded ? "true" : "false";

	memset(renewal, 0, sizeof(LeaseRenewal));
	if (!lease_transport_query("SELECT status, high_water_ms, lease_ms, coordinator_now_ms "
							   "FROM snowid_coordinator.lease_renew_v1($1::uuid, $2::int, "
							   "$3::bigint, $4::bigint, $5::bool)",
							   5, params, &row, errbuf))
		return false;
	column_text(&row, 0, renewal->status, sizeof(renewal->status));
	renewal->high_water_ms = column_int64(&row, 1);
	renewal->lease_ms = (int32) column_int64(&row, 2);
	renewal->coordinator_now_ms = column_int64(&row, 3);
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

	if (!lease_transport_query("SELECT status FROM snowid_coordinator.lease_release_v1("
							   "$1::uuid, $2::int, $3::bigint)",
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

	return lease_transport_query("SELECT snowid_coordinator.confirm_identity_v1()::text",
								 0, NULL, &row, errbuf);
}
