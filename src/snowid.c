/*-------------------------------------------------------------------------
 *
 * snowid.c
 *	  Module entry point: settings, shared memory hooks, the lease keeper.
 *
 *	  Loaded without shared_preload_libraries, the type and decoding
 *	  functions work; generation and status raise a clear error instead.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include <unistd.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "keeper.h"
#include "shmem.h"

SNOWID_MODULE_MAGIC;

/*
 * Whether the postmaster found backup_label at start-up: the data directory
 * came from a base backup and may be a copy of a server that still runs.
 * Children inherit it; the coordinator records it (see mark_copy_v1).
 */
bool		snowid_started_from_backup = false;

void		_PG_init(void);

void
_PG_init(void)
{
	if (process_shared_preload_libraries_in_progress)
	{
		snowid_define_layout_settings();
		snowid_define_node_settings();
		MarkGUCPrefixReserved("snowid");
	}
	else
		snowid_read_layout_placeholders();

	/* Check the layout now, so a bad one stops the server at start-up. */
	snowid_resolve_layout();

	if (!process_shared_preload_libraries_in_progress)
		return;

	/* The postmaster runs in the data directory. */
	snowid_started_from_backup = (access("backup_label", F_OK) == 0);
	snowid_check_lease_settings();
	snowid_check_coordinator_setting();

	snowid_shmem_install_hooks();
	/* pg_upgrade runs the server with no place for a lease keeper. */
	if (!IsBinaryUpgrade)
		snowid_register_keeper();
}
