/*-------------------------------------------------------------------------
 *
 * base32.c
 *	  Crockford base32 encoding and decoding of snowids (see base32.h).
 *
 * Plain C: no allocation, no server calls; results through return codes.
 *
 *-------------------------------------------------------------------------
 */
#include "base32.h"

static const char alphabet[32] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

char
snowid_base32_symbol(int value)
{
	return alphabet[value & 31];
}

/* The value of a canonical upper-case symbol, or -1. */
static int
upper_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'H')
		return c - 'A' + 10;	/* A-H: 10-17 */
	if (c == 'J' || c == 'K')
		return c - 'J' + 18;
	if (c == 'M' || c == 'N')
		return c - 'M' + 20;
	if (c >= 'P' && c <= 'T')
		return c - 'P' + 22;
	if (c >= 'V' && c <= 'Z')
		return c - 'V' + 27;
	return -1;
}

static unsigned char
to_upper(unsigned char c)
{
	return (c >= 'a' && c <= 'z') ? (unsigned char) (c - 'a' + 'A') : c;
}

int
snowid_base32_canonical_value(unsigned char c)
{
	return upper_value(to_upper(c));
}

int
snowid_base32_value(unsigned char c)
{
	c = to_upper(c);
	if (c == 'I' || c == 'L')
		return 1;
	if (c == 'O')
		return 0;
	return upper_value(c);
}

/*
 * Read exactly nsymbols symbol values from str (hyphens ignored) into
 * symbols[].  A bad character wins over a wrong length, so that "12#" is a
 * syntax error whatever its length.
 */
static SnowidBase32Result
decode_symbols(const char *str, size_t len, int nsymbols, int *symbols)
{
	int			n = 0;
	size_t		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) str[i];
		int			v;

		if (c == '-')
			continue;
		v = snowid_base32_value(c);
		if (v < 0)
			return SNOWID_BASE32_SYNTAX;
		if (n < nsymbols)
			symbols[n] = v;
		n++;
	}
	if (n != nsymbols)
		return SNOWID_BASE32_LENGTH;
	return SNOWID_BASE32_OK;
}

/*
 * The value of 13 symbols, or RANGE if above 2^63 - 1: 13 symbols carry 65
 * bits, so the first must be at most 7.
 */
static SnowidBase32Result
symbols_to_value(const int *symbols, int64_t *value)
{
	uint64_t	v = 0;
	int			i;

	if (symbols[0] > 7)
		return SNOWID_BASE32_RANGE;
	for (i = 0; i < SNOWID_BASE32_LEN; i++)
		v = (v << 5) | (uint64_t) symbols[i];
	*value = (int64_t) v;
	return SNOWID_BASE32_OK;
}

void
snowid_base32_encode(int64_t value, char *out)
{
	uint64_t	v = (uint64_t) value;
	int			i;

	for (i = SNOWID_BASE32_LEN - 1; i >= 0; i--)
	{
		out[i] = alphabet[v & 31];
		v >>= 5;
	}
	out[SNOWID_BASE32_LEN] = '\0';
}

SnowidBase32Result
snowid_base32_decode(const char *str, size_t len, int64_t *value)
{
	int			symbols[SNOWID_BASE32_LEN];
	SnowidBase32Result r;

	r = decode_symbols(str, len, SNOWID_BASE32_LEN, symbols);
	if (r != SNOWID_BASE32_OK)
		return r;
	return symbols_to_value(symbols, value);
}

void
snowid_public_encode(int version, int64_t value, char *out)
{
	out[0] = alphabet[version & 31];
	snowid_base32_encode(value, out + 1);
}

SnowidBase32Result
snowid_public_decode(const char *str, size_t len, int *version, int64_t *value)
{
	int			symbols[SNOWID_PUBLIC_LEN];
	SnowidBase32Result r;

	r = decode_symbols(str, len, SNOWID_PUBLIC_LEN, symbols);
	if (r != SNOWID_BASE32_OK)
		return r;
	r = symbols_to_value(symbols + 1, value);
	if (r != SNOWID_BASE32_OK)
		return r;
	*version = symbols[0];
	return SNOWID_BASE32_OK;
}
