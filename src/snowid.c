/*-------------------------------------------------------------------------
 *
 * snowid.c
 *	  Module entry point: settings, shared memory hooks, background worker.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	snowid_define_layout_settings();
	snowid_define_node_settings();
	MarkGUCPrefixReserved("snowid");

	/* Check the layout now, so a bad one stops the server at start-up. */
	snowid_resolve_layout();
}
