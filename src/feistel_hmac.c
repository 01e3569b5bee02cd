/*-------------------------------------------------------------------------
 *
 * feistel_hmac.c
 *	  HMAC-SHA-256 as the round function of the public id permutation.
 *
 * Built into the extension (backend) and into the fuzzers (frontend, with
 * -DFRONTEND, linked with libpgcommon), so both use the same code and
 * PostgreSQL's own HMAC (OpenSSL's when the server was built with it).
 * In the backend pg_hmac_create() registers the context with the current
 * resource owner; the caller frees it before raising any error.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRONTEND
#include "postgres.h"
#else
#include "postgres_fe.h"
#endif

#include "common/hmac.h"
#include "common/sha2.h"

#include "feistel.h"

/* F(round, input): the first 8 bytes of HMAC-SHA-256(key, message). */
bool
snowid_hmac_round(void *arg, int round, uint64_t input, uint64_t *output)
{
	SnowidHmacRound *h = (SnowidHmacRound *) arg;
	uint8		message[SNOWID_FEISTEL_MESSAGE_LEN];
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	uint64_t	v = 0;
	int			i;

	snowid_feistel_message(round, input, message);
	if (pg_hmac_init(h->ctx, h->key, h->key_len) < 0 ||
		pg_hmac_update(h->ctx, message, sizeof(message)) < 0 ||
		pg_hmac_final(h->ctx, digest, sizeof(digest)) < 0)
		return false;
	for (i = 0; i < 8; i++)
		v = (v << 8) | digest[i];
	*output = v;
	return true;
}
