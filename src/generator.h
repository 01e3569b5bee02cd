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

#endif							/* SNOWID_GENERATOR_H */
