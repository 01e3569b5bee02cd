/*-------------------------------------------------------------------------
 *
 * keyring.h
 *	  The keys of public ids, as read from snowid.public_id_keys_file.
 *
 * The file holds one key per line:
 *
 *	  # comment
 *	  1:4f1c...	(64 to 128 hexadecimal digits: a key of 32 to 64 bytes)
 *	  2:9a0b...
 *
 * The version is one symbol of the base32 alphabet (0-9, A-Z without I, L,
 * O and U; lower case accepted), so 32 versions can be listed at once; it
 * becomes the first character of every public id made with that key.
 * Blank lines and lines starting with '#' are skipped; spaces and tabs
 * around a line, the version and the key are ignored, and so is a
 * carriage return at a line's end.  A version may appear only once.  The
 * key on the last line is the newest: new public ids use it, and ids made
 * with any listed key decode.
 *
 * Plain C, fixed size, no allocation (see layout.h): the parser is fuzzed.
 * Errors name a line number and a reason, never the key material.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_KEYRING_H
#define SNOWID_KEYRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base32.h"

#define SNOWID_KEY_MIN_BYTES	32
#define SNOWID_KEY_MAX_BYTES	64	/* SHA-256's block size */

typedef struct SnowidKey
{
	bool		present;
	uint8_t		len;
	uint8_t		bytes[SNOWID_KEY_MAX_BYTES];
} SnowidKey;

typedef struct SnowidKeyRing
{
	int			newest;			/* version of the newest key, -1 if none */
	int			count;
	SnowidKey	keys[SNOWID_BASE32_VERSIONS];	/* indexed by version */
} SnowidKeyRing;

typedef enum SnowidKeyRingError
{
	SNOWID_KEYRING_OK = 0,
	SNOWID_KEYRING_NO_COLON,	/* a line is not version:key */
	SNOWID_KEYRING_VERSION,		/* the version is not one base32 symbol */
	SNOWID_KEYRING_HEX,			/* the key is not hexadecimal digits in pairs */
	SNOWID_KEYRING_SHORT,		/* the key has fewer than 32 bytes */
	SNOWID_KEYRING_LONG,		/* the key has more than 64 bytes */
	SNOWID_KEYRING_DUPLICATE,	/* the version appeared on an earlier line */
	SNOWID_KEYRING_EMPTY		/* no key at all */
} SnowidKeyRingError;

/*
 * Parse len bytes of key file text into *ring.  On error, *line is the
 * 1-based line number at fault (0 for EMPTY) and *ring is cleared.
 */
extern SnowidKeyRingError snowid_keyring_parse(const char *text, size_t len,
											   SnowidKeyRing *ring, int *line);

/* A sentence for an error detail. */
extern const char *snowid_keyring_error_text(SnowidKeyRingError err);

/* Overwrite the ring's key material (and everything else) with zeros. */
extern void snowid_keyring_clear(SnowidKeyRing *ring);

#endif							/* SNOWID_KEYRING_H */
