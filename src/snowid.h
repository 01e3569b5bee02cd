/*-------------------------------------------------------------------------
 *
 * snowid.h
 *	  Declarations shared by the server-side parts of the snowid extension:
 *	  the snowid type as a Datum, and (through clock.h and settings.h) the
 *	  clocks and the settings, which nearly every file needs.
 *
 * clock.c, settings.c and the server-independent files (layout.c,
 * base32.c, feistel.c, keyring.c) do not include it: they sit below it
 * (see scripts/check_includes.sh for the layers).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_H
#define SNOWID_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"

#include "compat.h"

#include "clock.h"
#include "layout.h"
#include "settings.h"

/* This library's version, and the snowid_coordinator version it needs. */
#define SNOWID_VERSION				"1.1"
#define SNOWID_COORDINATOR_VERSION	"1.1"

/* The search_path of every session snowid opens (CVE-2018-1058). */
#define SNOWID_SAFE_SEARCH_PATH		"pg_catalog, pg_temp"

/* The snowid type is an int64 in a Datum. */
#define DatumGetSnowid(X)		DatumGetInt64(X)
#define SnowidGetDatum(X)		Int64GetDatum(X)
#define PG_GETARG_SNOWID(n)		DatumGetSnowid(PG_GETARG_DATUM(n))
#define PG_RETURN_SNOWID(x)		return SnowidGetDatum(x)

/* snowid.c: the postmaster found backup_label at start-up */
extern bool snowid_started_from_backup;

#endif							/* SNOWID_H */
