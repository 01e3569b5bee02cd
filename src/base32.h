/*-------------------------------------------------------------------------
 *
 * base32.h
 *	  Crockford base32 text forms of snowids: the compact form and the
 *	  public form, independent of the server.
 *
 * Compact form: exactly 13 symbols of Crockford's alphabet
 *
 *	  0123456789ABCDEFGHJKMNPQRSTVWXYZ	(no I, L, O, U)
 *
 * most significant first, so that 13 symbols hold 65 bits, the first
 * symbol of a snowid is 0-7, and text order (in the C collation) is
 * numeric order.  Decoding accepts lower case, Crockford's aliases (I and
 * L for 1, O for 0) and ignores hyphens anywhere; anything else is
 * refused.
 *
 * Public form: one key-version symbol followed by 13 symbols holding the
 * keyed permutation of the id (see feistel.h), 14 symbols in all, decoded
 * by the same rules.
 *
 * Nothing here allocates or raises errors (see layout.h); it is fuzzed on
 * its own (test/fuzz/).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_BASE32_H
#define SNOWID_BASE32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNOWID_BASE32_LEN			13	/* symbols of a compact snowid */
#define SNOWID_PUBLIC_LEN			14	/* symbols of a public id */
#define SNOWID_BASE32_VERSIONS		32	/* key versions: one symbol */

typedef enum SnowidBase32Result
{
	SNOWID_BASE32_OK = 0,
	SNOWID_BASE32_SYNTAX,		/* a character outside the alphabet */
	SNOWID_BASE32_LENGTH,		/* not the right number of symbols */
	SNOWID_BASE32_RANGE			/* above 2^63 - 1 */
} SnowidBase32Result;

/* The canonical symbol of a value 0-31. */
extern char snowid_base32_symbol(int value);

/* The value (0-31) of a character, with aliases and lower case; -1 if none. */
extern int	snowid_base32_value(unsigned char c);

/* The value (0-31) of a character in canonical form only (any case); -1 if none. */
extern int	snowid_base32_canonical_value(unsigned char c);

/* value (0 to 2^63 - 1) as 13 symbols and a NUL into out[14]. */
extern void snowid_base32_encode(int64_t value, char *out);

/* Decode len bytes of compact text into *value. */
extern SnowidBase32Result snowid_base32_decode(const char *str, size_t len,
											   int64_t *value);

/* version (0-31) and permuted value (0 to 2^63 - 1) into out[15]. */
extern void snowid_public_encode(int version, int64_t value, char *out);

/* Decode len bytes of public text into its version and permuted value. */
extern SnowidBase32Result snowid_public_decode(const char *str, size_t len,
											   int *version, int64_t *value);

#endif							/* SNOWID_BASE32_H */
