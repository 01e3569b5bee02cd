/*-------------------------------------------------------------------------
 *
 * generator.h
 *	  The id generator's entry points used outside generator.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_GENERATOR_H
#define SNOWID_GENERATOR_H

extern int64 snowid_reserve(int want, int *got);
pg_noreturn extern void snowid_report_state(void);

#endif							/* SNOWID_GENERATOR_H */
