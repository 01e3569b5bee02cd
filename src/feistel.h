/*-------------------------------------------------------------------------
 *
 * feistel.h
 *	  A keyed, reversible permutation of the 63-bit values of snowids.
 *
 * An unbalanced, alternating Feistel network over 63 bits: the value is
 * split into a high half L of 31 bits and a low half R of 32 bits; round i
 * (0-based) replaces L by L xor F(i, R) when i is even and R by R xor F(i,
 * L) when i is odd, the round function's output cut to the width of the
 * half it changes.  Each round is its own inverse, so decryption runs the
 * same rounds backwards.  Every value below 2^63 maps to a value below
 * 2^63 and back: no cycle-walking is needed.
 *
 * The round function F is a parameter.  Public ids use HMAC-SHA-256 keyed
 * with a secret key, over the message snowid_feistel_message() builds
 * (feistel_hmac.c), so the permutation is a pseudorandom one as long as
 * the key stays secret.  Each round changes one half, as a round of a
 * classic Feistel network does; Luby and Rackoff need 4 such rounds, and
 * 10 are used, as NIST's FF1 format-preserving encryption does for its
 * (also unbalanced) Feistel network, because the halves are small.
 *
 * Plain C: no allocation, no server calls (see layout.h).  feistel_hmac.c
 * holds the HMAC round function, built against PostgreSQL's common code.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWID_FEISTEL_H
#define SNOWID_FEISTEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNOWID_FEISTEL_ROUNDS		10
#define SNOWID_FEISTEL_HIGH_BITS	31
#define SNOWID_FEISTEL_LOW_BITS		32

/* What the HMAC sees in each round: a tag, the round, the other half. */
#define SNOWID_FEISTEL_MESSAGE_LEN	13

/*
 * A round function: a pseudorandom 64-bit output for (round, input).
 * Returns false on failure (out of memory, a crypto library error); the
 * permutation then fails too.
 */
typedef bool (*SnowidFeistelRound) (void *arg, int round, uint64_t input,
									uint64_t *output);

/* in (0 to 2^63 - 1) to its permuted value; false if F failed or in is out of range */
extern bool snowid_feistel_encrypt(int64_t in, SnowidFeistelRound round,
								   void *arg, int64_t *out);
/* the inverse of snowid_feistel_encrypt */
extern bool snowid_feistel_decrypt(int64_t in, SnowidFeistelRound round,
								   void *arg, int64_t *out);

/* The bytes F hashes in one round. */
extern void snowid_feistel_message(int round, uint64_t input,
								   uint8_t *message);

/*
 * feistel_hmac.c: the round function of public ids, HMAC-SHA-256 from
 * PostgreSQL's common code (common/hmac.h).  arg is a SnowidHmacRound
 * whose ctx the caller created with pg_hmac_create(PG_SHA256) and frees.
 */
struct pg_hmac_ctx;

typedef struct SnowidHmacRound
{
	struct pg_hmac_ctx *ctx;
	const uint8_t *key;
	size_t		key_len;
} SnowidHmacRound;

extern bool snowid_hmac_round(void *arg, int round, uint64_t input,
							  uint64_t *output);

#endif							/* SNOWID_FEISTEL_H */
