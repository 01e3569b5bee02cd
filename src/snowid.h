/*-------------------------------------------------------------------------
 *
 * snowid.h
 *	  Declarations shared by the server-side parts of the snowid extension.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_H
#define SNOWID_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"

#include "compat.h"

#include "layout.h"

/* The snowid type is an int64 in a Datum. */
#define DatumGetSnowid(X)		DatumGetInt64(X)
#define SnowidGetDatum(X)		Int64GetDatum(X)
#define PG_GETARG_SNOWID(n)		DatumGetSnowid(PG_GETARG_DATUM(n))
#define PG_RETURN_SNOWID(x)		return SnowidGetDatum(x)

/* Milliseconds between the Unix epoch and PostgreSQL's 2000-01-01. */
#define SNOWID_PG_EPOCH_UNIX_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* settings.c: the settings and the layout they define */
extern char *snowid_epoch_string;
extern int	snowid_worker_bits;
extern int	snowid_region_bits;
extern int	snowid_sequence_bits;
extern char *snowid_database;
extern char *snowid_node_name;
extern int	snowid_max_clock_wait_ms;
extern int	snowid_lease_time_ms;
extern int	snowid_safety_period_ms;
extern int	snowid_lease_margin_ms;
extern char *snowid_coordinator_conninfo;
extern int	snowid_node_region;
extern int	snowid_max_clock_offset_ms;
extern char *snowid_public_id_keys_file;
extern uint32 snowid_public_id_keys_assignments;

extern void snowid_define_layout_settings(void);
extern void snowid_define_node_settings(void);
extern void snowid_read_layout_placeholders(void);
extern void snowid_check_lease_settings(void);

/* snowid.c */
extern bool snowid_started_from_backup;


extern const SnowidLayout *snowid_get_layout(void);
extern void snowid_resolve_layout(void);

/* time.c: clocks and conversions */
extern int64 snowid_wall_clock_ms(void);
extern int64 snowid_monotonic_ms(void);
extern TimestampTz snowid_unix_ms_to_timestamptz(int64 unix_ms);
extern int64 snowid_timestamptz_to_unix_ms(TimestampTz ts);

#endif							/* SNOWID_H */
