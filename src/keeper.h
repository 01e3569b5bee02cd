/*-------------------------------------------------------------------------
 *
 * keeper.h
 *	  The lease keeper background worker.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_KEEPER_H
#define SNOWID_KEEPER_H

extern void snowid_register_keeper(void);

#endif							/* SNOWID_KEEPER_H */
