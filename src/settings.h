/*-------------------------------------------------------------------------
 *
 * settings.h
 *	  The snowid.* settings, and the id layout they define (settings.c).
 *
 * The layout settings are PGC_POSTMASTER, so the layout of a process never
 * changes once snowid_get_layout() resolved it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_SETTINGS_H
#define SNOWID_SETTINGS_H

#include "layout.h"

/* the layout (PGC_POSTMASTER) */
extern char *snowid_epoch_string;
extern int	snowid_worker_bits;
extern int	snowid_region_bits;
extern int	snowid_sequence_bits;

/* the generator and the lease keeper */
extern char *snowid_database;
extern char *snowid_node_name;
extern int	snowid_max_clock_wait_ms;
extern int	snowid_lease_time_ms;
extern int	snowid_safety_period_ms;
extern int	snowid_lease_margin_ms;
extern char *snowid_coordinator_conninfo;
extern int	snowid_node_region;
extern int	snowid_max_clock_offset_ms;

/* public ids (public_id.c) */
extern char *snowid_public_id_keys_file;
extern uint32 snowid_public_id_keys_assignments;

/* From _PG_init: define the settings, or read them without preloading. */
extern void snowid_define_layout_settings(void);
extern void snowid_define_node_settings(void);
extern void snowid_read_layout_placeholders(void);
extern void snowid_check_lease_settings(void);
extern void snowid_check_coordinator_setting(void);

/* The layout in force in this process; an ERROR if the settings are bad. */
extern const SnowidLayout *snowid_get_layout(void);
extern void snowid_resolve_layout(void);

#endif							/* SNOWID_SETTINGS_H */
