/*-------------------------------------------------------------------------
 *
 * lease_client.h
 *	  The lease protocol as the keeper sees it: one interface, whatever
 *	  carries it to the coordinator.
 *
 * Every call returns true when the coordinator answered and the answer's
 * transaction committed durably; the answer's status then says what
 * happened.  It returns false, with a message in errbuf, when the answer
 * cannot be trusted (error, timeout, no connection): the keeper treats
 * that as unconfirmed.
 *
 * The keeper speaks lease protocol version 2 (snowid_coordinator 1.1:
 * lease_acquire_v2, lease_renew_v2, lease_release_v1).  A coordinator
 * that only has version 1 is refused with an error that says so: version
 * 2 is what lets the coordinator bound the node's clock and the nodes
 * witness a coordinator whose state went back in time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_LEASE_CLIENT_H
#define SNOWID_LEASE_CLIENT_H

#include "layout.h"
#include "shmem.h"

#define LEASE_STATUS_LEN 32

typedef struct LeaseGrant
{
	char		status[LEASE_STATUS_LEN];	/* granted, layout_mismatch, ... */
	char		detail[SNOWID_MESSAGE_LEN];
	int32		worker_id;
	int64		floor_ms;		/* Unix ms */
	int64		high_water_ms;	/* Unix ms */
	int32		lease_ms;
	int64		coordinator_now_ms;
	int32		max_clock_offset_ms;	/* the coordinator's clock bound */
} LeaseGrant;

typedef struct LeaseRenewal
{
	char		status[LEASE_STATUS_LEN];	/* renewed, lost, unfenced */
	char		detail[SNOWID_MESSAGE_LEN];
	int64		high_water_ms;
	int32		lease_ms;
	int64		coordinator_now_ms;
	int32		max_clock_offset_ms;
} LeaseRenewal;

extern bool lease_client_setup(const SnowidLayout *layout,
							   bool started_from_backup, char *errbuf);
extern bool lease_client_acquire(const uint8 *token, const char *node_name,
								 const SnowidLayout *layout, int region,
								 int64 node_clock_ms, LeaseGrant *grant,
								 char *errbuf);
extern bool lease_client_renew(const uint8 *token, int32 worker_id,
							   int64 node_clock_ms,
							   int64 confirmed_high_water_ms,
							   bool lease_valid, int64 clock_offset_ms,
							   bool clock_offset_exceeded,
							   LeaseRenewal *renewal, char *errbuf);
extern bool lease_client_release(const uint8 *token, int32 worker_id,
								 int64 last_used_ms, char *status,
								 char *errbuf);
extern bool lease_client_confirm_identity(char *errbuf);

#endif							/* SNOWID_LEASE_CLIENT_H */
