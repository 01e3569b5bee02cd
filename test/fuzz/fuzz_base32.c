/*
 * libFuzzer harness: the compact base32 form (snowid_from_base32 and
 * snowid_to_base32).
 *
 * Any input must decode without a crash or a leak, with the verdict a
 * simple reference gives (canonical symbols: upper case, aliases mapped,
 * hyphens dropped); an accepted one must encode back to its canonical
 * form.  The reference is written out here, apart from base32.c.  The
 * input's bytes also give two values whose encodings must round-trip and
 * compare as the values do.
 */
#include <stdlib.h>
#include <string.h>

#include "base32.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* 63 bits from 8 bytes */
static int64_t
value_from(const uint8_t *p)
{
	uint64_t	v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return (int64_t) (v & INT64_MAX);
}

static void
check_value(int64_t v)
{
	char		text[SNOWID_BASE32_LEN + 1];
	int64_t		back = -1;

	snowid_base32_encode(v, text);
	if (strlen(text) != SNOWID_BASE32_LEN ||
		snowid_base32_decode(text, SNOWID_BASE32_LEN, &back) != SNOWID_BASE32_OK ||
		back != v)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *canon = malloc(size + 1);
	size_t		n = 0;
	bool		bad_char = false;
	int64_t		value = -1;
	SnowidBase32Result r;
	size_t		i;

	/* the reference verdict */
	for (i = 0; i < size; i++)
	{
		int			v;

		if (data[i] == '-')
			continue;
		v = ref_value(data[i]);
		if (v < 0)
			bad_char = true;
		else
			canon[n++] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[v];
	}
	canon[n] = '\0';

	r = snowid_base32_decode((const char *) data, size, &value);
	if (bad_char)
	{
		if (r != SNOWID_BASE32_SYNTAX)
			abort();
	}
	else if (n != SNOWID_BASE32_LEN)
	{
		if (r != SNOWID_BASE32_LENGTH)
			abort();
	}
	else if (ref_value((uint8_t) canon[0]) > 7)
	{
		if (r != SNOWID_BASE32_RANGE)
			abort();
	}
	else
	{
		char		text[SNOWID_BASE32_LEN + 1];

		if (r != SNOWID_BASE32_OK || value < 0)
			abort();
		snowid_base32_encode(value, text);
		if (strcmp(text, canon) != 0)
			abort();
	}

	if (size >= 16)
	{
		int64_t		a = value_from(data);
		int64_t		b = value_from(data + 8);
		char		ta[SNOWID_BASE32_LEN + 1];
		char		tb[SNOWID_BASE32_LEN + 1];
		int			c;

		check_value(a);
		check_value(b);
		snowid_base32_encode(a, ta);
		snowid_base32_encode(b, tb);
		c = strcmp(ta, tb);
		if ((a < b && c >= 0) || (a == b && c != 0) || (a > b && c <= 0))
			abort();
	}
	free(canon);
	return 0;
}
