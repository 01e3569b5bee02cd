/*
 * libFuzzer harness: keyed public ids (snowid_from_public and
 * snowid_to_public) and the key file parser.
 *
 * The first byte picks what the rest is:
 *	 0: a key file; parsed without a crash or a leak, an accepted one must
 *		be consistent (newest key present, lengths 32-64 bytes);
 *	 1: a public id, decoded with two test keys (the real HMAC-SHA-256
 *		rounds from libpgcommon); an accepted one with a known version must
 *		encode back to its canonical form;
 *	 2: a value and a version: the permutation must round-trip, and so
 *		must the text.
 */
#include "postgres_fe.h"

#include "common/hmac.h"

#include "base32.h"
#include "feistel.h"
#include "keyring.h"

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char test_keys[] =
"# test keys\n"
"1:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
"2 : 404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f\n";

static SnowidKeyRing ring;
static pg_hmac_ctx *ctx;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int			line;

	if (snowid_keyring_parse(test_keys, strlen(test_keys), &ring, &line) != SNOWID_KEYRING_OK ||
		ring.count != 2 || ring.newest != 2)
		abort();
	ctx = pg_hmac_create(PG_SHA256);
	if (ctx == NULL)
		abort();
	return 0;
}

/*
 * An independent reference for one character: its value 0-31 in
 * Crockford's alphabet (any case, I and L for 1, O for 0), or -1.
 */
static int
ref_value(uint8_t c)
{
	static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	const char *p;

	if (c >= 'a' && c <= 'z')
		c = (uint8_t) (c - 'a' + 'A');
	if (c == 'I' || c == 'L')
		return 1;
	if (c == 'O')
		return 0;
	if (c == '\0')
		return -1;
	p = strchr(alphabet, c);
	return p ? (int) (p - alphabet) : -1;
}

static int64_t
permute(int version, int64_t value, bool decrypt)
{
	SnowidHmacRound round;
	int64_t		out = -1;
	bool		ok;

	round.ctx = ctx;
	round.key = ring.keys[version].bytes;
	round.key_len = ring.keys[version].len;
	if (decrypt)
		ok = snowid_feistel_decrypt(value, snowid_hmac_round, &round, &out);
	else
		ok = snowid_feistel_encrypt(value, snowid_hmac_round, &round, &out);
	if (!ok || out < 0)
		abort();
	return out;
}

static void
fuzz_key_file(const uint8_t *data, size_t size)
{
	SnowidKeyRing r;
	int			line = -1;
	int			i,
				present = 0;

	if (snowid_keyring_parse((const char *) data, size, &r, &line) != SNOWID_KEYRING_OK)
	{
		if (line < 0 || r.count != 0 || r.newest != -1)
			abort();
		return;
	}
	for (i = 0; i < SNOWID_BASE32_VERSIONS; i++)
		if (r.keys[i].present)
		{
			present++;
			if (r.keys[i].len < SNOWID_KEY_MIN_BYTES ||
				r.keys[i].len > SNOWID_KEY_MAX_BYTES)
				abort();
		}
	if (present != r.count || r.newest < 0 || !r.keys[r.newest].present)
		abort();
	snowid_keyring_clear(&r);
}

static void
fuzz_public_text(const uint8_t *data, size_t size)
{
	int			version = -1;
	int64_t		value = -1;
	char	   *canon;
	size_t		n = 0;
	size_t		i;
	char		text[SNOWID_PUBLIC_LEN + 1];

	if (snowid_public_decode((const char *) data, size, &version, &value) != SNOWID_BASE32_OK)
		return;
	if (version < 0 || version >= SNOWID_BASE32_VERSIONS || value < 0)
		abort();
	if (!ring.keys[version].present)
		return;					/* the server reports an unknown version */

	canon = malloc(size + 1);
	for (i = 0; i < size; i++)
	{
		int			v = ref_value(data[i]);

		if (data[i] == '-')
			continue;
		if (v < 0)
			abort();			/* accepted a character outside the alphabet */
		canon[n++] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[v];
	}
	canon[n] = '\0';

	/* the id it stands for, made public again */
	value = permute(version, permute(version, value, true), false);
	snowid_public_encode(version, value, text);
	if (strcmp(text, canon) != 0)
		abort();
	free(canon);
}

static void
fuzz_value(const uint8_t *data, size_t size)
{
	uint64_t	v = 0;
	int			version;
	int64_t		id,
				permuted,
				back = -1;
	int			back_version = -1;
	char		text[SNOWID_PUBLIC_LEN + 1];
	size_t		i;

	if (size < 9)
		return;
	for (i = 0; i < 8; i++)
		v = (v << 8) | data[i];
	id = (int64_t) (v & INT64_MAX);
	version = (data[8] & 1) ? 1 : 2;

	permuted = permute(version, id, false);
	if (permute(version, permuted, true) != id)
		abort();
	snowid_public_encode(version, permuted, text);
	if (snowid_public_decode(text, strlen(text), &back_version, &back) != SNOWID_BASE32_OK ||
		back_version != version || back != permuted)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3)
	{
		case 0:
			fuzz_key_file(data + 1, size - 1);
			break;
		case 1:
			fuzz_public_text(data + 1, size - 1);
			break;
		case 2:
			fuzz_value(data + 1, size - 1);
			break;
	}
	return 0;
}
