/*-------------------------------------------------------------------------
 *
 * lease_transport.h
 *	  How the lease protocol's SQL reaches the coordinator: SPI into the
 *	  local database (the embedded default), or libpq to the server named
 *	  by snowid.coordinator.  Both run one statement with text parameters
 *	  and return its single row as text, and both report success only once
 *	  the statement's transaction committed without a warning.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_LEASE_TRANSPORT_H
#define SNOWID_LEASE_TRANSPORT_H

#include "shmem.h"

#define LEASE_MAX_COLUMNS	8
#define LEASE_VALUE_LEN		SNOWID_MESSAGE_LEN

typedef struct LeaseRow
{
	char		sqlstate[6];	/* of a failed statement; "" otherwise */
	int			ncolumns;
	bool		isnull[LEASE_MAX_COLUMNS];
	char		values[LEASE_MAX_COLUMNS][LEASE_VALUE_LEN];
} LeaseRow;

/* true when snowid.coordinator names a remote server */
extern bool lease_transport_is_remote(void);

/* Where the leases live, without any password, for snowid_status(). */
extern void lease_transport_describe(char *buf, size_t len);

/* Close the connection to a remote coordinator, if one is open. */
extern void lease_transport_close(void);

/*
 * The lease length in force: connection attempts and statements to a
 * remote coordinator time out at a fifth of it (at least 1 s), far below
 * the renewal interval.
 */
extern void lease_transport_set_lease(int lease_ms);

/*
 * Run sql with nparams text parameters (NULL for SQL NULL); it must return
 * exactly one row of at most LEASE_MAX_COLUMNS columns, copied to *row.
 * A statement that failed leaves its SQLSTATE in row->sqlstate.
 */
extern bool lease_transport_query(const char *sql, int nparams,
								  const char *const *params, LeaseRow *row,
								  char *errbuf);

/* transport_spi.c */
extern bool spi_transport_query(const char *sql, int nparams,
								const char *const *params, LeaseRow *row,
								char *errbuf);
extern bool spi_local_setup(const char *lease_sql, int nparams,
							const char *const *params,
							bool started_from_backup, bool *installed,
							char *errbuf);

/* transport_libpq.c */
extern bool libpq_transport_query(const char *sql, int nparams,
								  const char *const *params, LeaseRow *row,
								  char *errbuf);
extern void libpq_transport_describe(char *buf, size_t len);
extern void libpq_transport_disconnect(void);
extern void libpq_transport_set_timeout(int timeout_ms);

#endif							/* SNOWID_LEASE_TRANSPORT_H */
