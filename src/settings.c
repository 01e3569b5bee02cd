/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The snowid.* settings, and the id layout they define.
 *
 * The layout settings are PGC_POSTMASTER: a node's layout can only change
 * with a restart, and the coordinator pins it cluster-wide, so decoding an
 * id gives the same answer for the life of a cluster.  That is what lets the
 * decoding functions be IMMUTABLE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "libpq-fe.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "clock.h"
#include "settings.h"

char	   *snowid_epoch_string = NULL;
int			snowid_worker_bits = SNOWID_DEFAULT_WORKER_BITS;
int			snowid_region_bits = SNOWID_DEFAULT_REGION_BITS;
int			snowid_sequence_bits = SNOWID_DEFAULT_SEQUENCE_BITS;
char	   *snowid_database = NULL;
char	   *snowid_node_name = NULL;
int			snowid_max_clock_wait_ms = 5;
int			snowid_lease_time_ms = 30000;
int			snowid_safety_period_ms = 5000;
int			snowid_lease_margin_ms = 1000;

char	   *snowid_coordinator_conninfo = NULL;
int			snowid_node_region = -1;
int			snowid_max_clock_offset_ms = 1000;

/* public ids (public_id.c) */
char	   *snowid_public_id_keys_file = NULL;
uint32		snowid_public_id_keys_assignments = 0;

static SnowidLayout resolved_layout;
static bool layout_resolved = false;

/*
 * What postgresql.conf (or the command line) said for a setting before the
 * library defined it, or NULL if nothing.  Until then the setting is a
 * placeholder holding the raw text.
 */
static char *
raw_setting(const char *name)
{
	const char *value = GetConfigOption(name, true, false);

	return value ? pstrdup(value) : NULL;
}

/*
 * Refuse an integer layout setting whose configured value did not take.
 * When a library defines a setting, PostgreSQL only warns about a value it
 * cannot apply (not a number, out of range) and keeps the default: for a
 * layout setting that would silently give the node a different layout.
 */
static void
check_layout_setting_applied(const char *name, const char *raw, int value,
							 int min, int max)
{
	int			parsed;

	if (raw == NULL)
		return;
	if (!parse_int(raw, &parsed, 0, NULL) || parsed != value)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid layout"),
				 errdetail("\"%s\" is set to \"%s\", but it must be a whole number from %d to %d.",
						   name, raw, min, max),
				 errhint("Change the snowid.* settings in postgresql.conf and restart the server.")));
}

/* Define the settings that make up the id layout (all PGC_POSTMASTER). */
void
snowid_define_layout_settings(void)
{
	char	   *raw_worker_bits = raw_setting("snowid.worker_bits");
	char	   *raw_region_bits = raw_setting("snowid.region_bits");
	char	   *raw_sequence_bits = raw_setting("snowid.sequence_bits");

	DefineCustomStringVariable("snowid.epoch",
							   "Time that timestamp 0 of an id stands for.",
							   "Cluster-wide; recorded by the coordinator at the first lease.",
							   &snowid_epoch_string,
							   "2025-01-01 00:00:00+00",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.worker_bits",
							"Bits of an id that hold the worker id (region bits included).",
							NULL,
							&snowid_worker_bits,
							SNOWID_DEFAULT_WORKER_BITS, 1, SNOWID_MAX_WORKER_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.region_bits",
							"High bits of the worker field that hold a region number.",
							NULL,
							&snowid_region_bits,
							SNOWID_DEFAULT_REGION_BITS, 0, SNOWID_MAX_WORKER_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.sequence_bits",
							"Bits of an id that count ids within one millisecond.",
							NULL,
							&snowid_sequence_bits,
							SNOWID_DEFAULT_SEQUENCE_BITS, 1, SNOWID_MAX_SEQUENCE_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);

	check_layout_setting_applied("snowid.worker_bits", raw_worker_bits,
								 snowid_worker_bits, 1, SNOWID_MAX_WORKER_BITS);
	check_layout_setting_applied("snowid.region_bits", raw_region_bits,
								 snowid_region_bits, 0, SNOWID_MAX_WORKER_BITS);
	check_layout_setting_applied("snowid.sequence_bits", raw_sequence_bits,
								 snowid_sequence_bits, 1, SNOWID_MAX_SEQUENCE_BITS);
}

/*
 * Without shared_preload_libraries, PGC_POSTMASTER settings cannot be
 * defined after start-up.  Decoding still needs the layout, so take it from
 * the placeholders postgresql.conf left (or the defaults).
 */
void
snowid_read_layout_placeholders(void)
{
	static const struct
	{
		const char *name;
		int		   *value;
		int			min;
		int			max;
	}			ints[] =
	{
		{"snowid.worker_bits", &snowid_worker_bits, 1, SNOWID_MAX_WORKER_BITS},
		{"snowid.region_bits", &snowid_region_bits, 0, SNOWID_MAX_WORKER_BITS},
		{"snowid.sequence_bits", &snowid_sequence_bits, 1, SNOWID_MAX_SEQUENCE_BITS},
	};
	char	   *raw_epoch = raw_setting("snowid.epoch");
	int			i;

	for (i = 0; i < lengthof(ints); i++)
	{
		char	   *raw = raw_setting(ints[i].name);
		int			parsed;

		if (raw == NULL)
			continue;
		if (parse_int(raw, &parsed, 0, NULL) &&
			parsed >= ints[i].min && parsed <= ints[i].max)
			*ints[i].value = parsed;
		/* anything that did not take is reported here */
		check_layout_setting_applied(ints[i].name, raw, *ints[i].value,
									 ints[i].min, ints[i].max);
	}
	snowid_epoch_string = MemoryContextStrdup(TopMemoryContext,
											  raw_epoch ? raw_epoch : "2025-01-01 00:00:00+00");
}

/*
 * A reload that sets snowid.public_id_keys_file (even to the same value)
 * makes public_id.c read the key file again.
 */
static void
assign_public_id_keys_file(const char *newval, void *extra)
{
	snowid_public_id_keys_assignments++;
}

/* Define the settings of the generator and the lease keeper. */
void
snowid_define_node_settings(void)
{
	DefineCustomIntVariable("snowid.max_clock_wait",
							"How far back the clock may step before generation refuses instead of waiting.",
							NULL,
							&snowid_max_clock_wait_ms,
							5, 0, 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomStringVariable("snowid.coordinator",
							   "Connection string of a remote coordinator; empty keeps the leases in snowid.database.",
							   "A multi-host string with target_session_attrs=read-write follows a coordinator failover.",
							   &snowid_coordinator_conninfo,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.region",
							"Region whose worker ids this node takes, when snowid.region_bits > 0.",
							"-1 means none.",
							&snowid_node_region,
							-1, -1, (1 << SNOWID_MAX_WORKER_BITS) - 1,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.max_clock_offset",
							"How far this node's clock may be off the coordinator's before generation refuses.",
							NULL,
							&snowid_max_clock_offset_ms,
							1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomStringVariable("snowid.database",
							   "Database in which the lease keeper keeps the local coordinator.",
							   NULL,
							   &snowid_database,
							   "postgres",
							   PGC_POSTMASTER, 0,
							   NULL, NULL, NULL);
	DefineCustomStringVariable("snowid.node_name",
							   "Name this node gives the coordinator; a preference, never proof of ownership.",
							   "Empty means the cluster name, or the host name and port.",
							   &snowid_node_name,
							   "",
							   PGC_POSTMASTER, 0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.lease_time",
							"Length of a worker id lease.",
							"The keeper renews at a third of it.",
							&snowid_lease_time_ms,
							30000, 3000, 3600 * 1000,
							PGC_POSTMASTER, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.safety_period",
							"How long an expired lease stays cooling down before its worker id is granted again.",
							NULL,
							&snowid_safety_period_ms,
							5000, 0, 3600 * 1000,
							PGC_POSTMASTER, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowid.lease_margin",
							"How far past the lease expiry the declared high-water mark reaches.",
							NULL,
							&snowid_lease_margin_ms,
							1000, 0, 60000,
							PGC_POSTMASTER, GUC_UNIT_MS,
							NULL, NULL, NULL);

	/*
	 * Public ids (public_id.c).  The setting names the key file and never
	 * holds a key: superuser-only settings are still readable by
	 * pg_read_all_settings.
	 */
	DefineCustomStringVariable("snowid.public_id_keys_file",
							   "File that holds the keys of public ids, one version:key line each.",
							   "It must be readable by the server's OS user only; a relative path is relative to the data directory.",
							   &snowid_public_id_keys_file,
							   "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY,
							   NULL, assign_public_id_keys_file, NULL);
}

/*
 * Does an epoch string name a moving time ("now", "today", ...)?  Such an
 * epoch would change at every restart.
 */
static bool
epoch_is_relative(const char *value)
{
	static const char *const words[] = {"now", "today", "tomorrow", "yesterday"};
	char		lower[256];
	int			i;

	for (i = 0; value[i] && i < (int) sizeof(lower) - 1; i++)
		lower[i] = pg_tolower((unsigned char) value[i]);
	lower[i] = '\0';
	for (i = 0; i < lengthof(words); i++)
		if (strstr(lower, words[i]) != NULL)
			return true;
	return false;
}

/*
 * The lease timing must be consistent: an expired lease cools down at least
 * as long as its high-water mark reaches past expiry, or the next owner's
 * floor could lie ahead of its clock.
 */
void
snowid_check_lease_settings(void)
{
	const SnowidLayout *layout = snowid_get_layout();

	if (layout->region_bits > 0 &&
		(snowid_node_region < 0 || snowid_node_region >= (1 << layout->region_bits)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid region"),
				 errdetail("With snowid.region_bits = %d, snowid.region must be between 0 and %d, but it is %d.",
						   layout->region_bits, (1 << layout->region_bits) - 1,
						   snowid_node_region),
				 errhint("Set snowid.region in postgresql.conf and restart the server.")));
	if (layout->region_bits == 0 && snowid_node_region > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid region"),
				 errdetail("snowid.region is %d, but snowid.region_bits is 0.",
						   snowid_node_region),
				 errhint("Set snowid.region_bits (the same on every node) or remove snowid.region.")));
	if (snowid_safety_period_ms < snowid_lease_margin_ms)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid lease settings"),
				 errdetail("snowid.safety_period (%d ms) must be at least snowid.lease_margin (%d ms).",
						   snowid_safety_period_ms, snowid_lease_margin_ms),
				 errhint("Change the settings in postgresql.conf and restart the server.")));
}

/*
 * snowid.coordinator must parse, and must hold no secret: members of
 * pg_read_all_settings (pg_monitor) read even superuser-only settings.
 * Checked at start-up, since PostgreSQL would only warn about a value a
 * check hook refuses and fall back to the default, which here means local
 * mode: a different coordinator.
 */
void
snowid_check_coordinator_setting(void)
{
	PQconninfoOption *opts;
	PQconninfoOption *opt;
	char	   *parse_error = NULL;
	const char *secret = NULL;

	if (snowid_coordinator_conninfo == NULL || snowid_coordinator_conninfo[0] == '\0')
		return;
	opts = PQconninfoParse(snowid_coordinator_conninfo, &parse_error);
	if (opts == NULL)
	{
		char		message[256];

		strlcpy(message, parse_error ? parse_error : "out of memory", sizeof(message));
		if (parse_error)
			PQfreemem(parse_error);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for \"snowid.coordinator\""),
				 errdetail("%s", message),
				 errhint("Write a libpq connection string, e.g. host=coord1,coord2 dbname=postgres user=snowid_node target_session_attrs=read-write.")));
	}
	for (opt = opts; opt->keyword; opt++)
		if (opt->val != NULL && opt->val[0] != '\0' &&
			(strcmp(opt->keyword, "password") == 0 ||
			 strcmp(opt->keyword, "sslpassword") == 0))
			secret = opt->keyword;
	PQconninfoFree(opts);
	if (secret)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"snowid.coordinator\" must not contain a password"),
				 errdetail("It sets \"%s\", and members of pg_read_all_settings (pg_monitor) can read every setting.",
						   secret),
				 errhint("Remove it and keep the password in a password file: passfile=/path/to/file in the connection string, or ~/.pgpass of the server's OS user; or log in with a client certificate (sslcert, sslkey).")));
}

/* Error context for a bad snowid.epoch value. */
static void
epoch_error_callback(void *arg)
{
	errcontext("while parsing the value of \"snowid.epoch\"");
}

/*
 * Work out the layout from the settings, raising an error if it is not
 * acceptable.  Called once per process; at postmaster start-up the error is
 * FATAL, so a bad layout stops the server with a clear message.
 */
void
snowid_resolve_layout(void)
{
	ErrorContextCallback errcallback;
	TimestampTz epoch;
	SnowidLayoutError err;

	if (epoch_is_relative(snowid_epoch_string))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid layout"),
				 errdetail("snowid.epoch must be a fixed time, not \"%s\".",
						   snowid_epoch_string),
				 errhint("Write the epoch out, e.g. snowid.epoch = '2025-01-01 00:00:00+00'.")));

	errcallback.callback = epoch_error_callback;
	errcallback.arg = NULL;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	epoch = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													CStringGetDatum(snowid_epoch_string),
													ObjectIdGetDatum(InvalidOid),
													Int32GetDatum(-1)));
	error_context_stack = errcallback.previous;

	if (TIMESTAMP_NOT_FINITE(epoch))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid layout"),
				 errdetail("snowid.epoch must be a finite time.")));

	err = snowid_layout_init(&resolved_layout,
							 snowid_timestamptz_to_unix_ms(epoch),
							 snowid_worker_bits, snowid_region_bits,
							 snowid_sequence_bits,
							 snowid_wall_clock_ms());
	if (err != SNOWID_LAYOUT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowid layout"),
				 errdetail("%s", snowid_layout_error_text(err)),
				 errhint("Change the snowid.* settings in postgresql.conf and restart the server.")));
	layout_resolved = true;
}

/* The layout in force in this process. */
const SnowidLayout *
snowid_get_layout(void)
{
	if (!layout_resolved)
		snowid_resolve_layout();
	return &resolved_layout;
}
