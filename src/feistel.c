/*-------------------------------------------------------------------------
 *
 * feistel.c
 *	  The keyed 63-bit permutation behind public ids (see feistel.h).
 *
 * Plain C: no allocation, no server calls.
 *
 *-------------------------------------------------------------------------
 */
#include "feistel.h"

#define HIGH_MASK	((UINT64_C(1) << SNOWID_FEISTEL_HIGH_BITS) - 1)
#define LOW_MASK	((UINT64_C(1) << SNOWID_FEISTEL_LOW_BITS) - 1)

/*
 * One round on (*high, *low): even rounds change the high half from the
 * low one, odd rounds the low half from the high one.
 */
static bool
feistel_round(int i, SnowidFeistelRound round, void *arg,
			  uint64_t *high, uint64_t *low)
{
	uint64_t	f;

	if (i % 2 == 0)
	{
		if (!round(arg, i, *low, &f))
			return false;
		*high ^= f & HIGH_MASK;
	}
	else
	{
		if (!round(arg, i, *high, &f))
			return false;
		*low ^= f & LOW_MASK;
	}
	return true;
}

bool
snowid_feistel_encrypt(int64_t in, SnowidFeistelRound round, void *arg,
					   int64_t *out)
{
	uint64_t	high,
				low;
	int			i;

	if (in < 0)
		return false;
	high = (uint64_t) in >> SNOWID_FEISTEL_LOW_BITS;
	low = (uint64_t) in & LOW_MASK;
	for (i = 0; i < SNOWID_FEISTEL_ROUNDS; i++)
		if (!feistel_round(i, round, arg, &high, &low))
			return false;
	*out = (int64_t) ((high << SNOWID_FEISTEL_LOW_BITS) | low);
	return true;
}

bool
snowid_feistel_decrypt(int64_t in, SnowidFeistelRound round, void *arg,
					   int64_t *out)
{
	uint64_t	high,
				low;
	int			i;

	if (in < 0)
		return false;
	high = (uint64_t) in >> SNOWID_FEISTEL_LOW_BITS;
	low = (uint64_t) in & LOW_MASK;
	for (i = SNOWID_FEISTEL_ROUNDS - 1; i >= 0; i--)
		if (!feistel_round(i, round, arg, &high, &low))
			return false;
	*out = (int64_t) ((high << SNOWID_FEISTEL_LOW_BITS) | low);
	return true;
}

/*
 * "snw1" (the purpose and version of this construction, so that a key
 * reused elsewhere never hashes the same messages), the round number, and
 * the input half as 8 bytes, most significant first.
 */
void
snowid_feistel_message(int round, uint64_t input, uint8_t *message)
{
	int			i;

	message[0] = 's';
	message[1] = 'n';
	message[2] = 'w';
	message[3] = '1';
	message[4] = (uint8_t) round;
	for (i = 0; i < 8; i++)
		message[5 + i] = (uint8_t) (input >> (56 - 8 * i));
}
