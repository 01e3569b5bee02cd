/*-------------------------------------------------------------------------
 *
 * keyring.c
 *	  Parsing the public id key file (format in keyring.h).
 *
 * Plain C: no allocation, no server calls.  It is built against
 * PostgreSQL's headers only for explicit_bzero() (libc's, or src/port's
 * where libc has none), in the backend and in the fuzzer (-DFRONTEND, as
 * feistel_hmac.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FRONTEND
#include "postgres.h"
#else
#include "postgres_fe.h"
#endif

#include "keyring.h"

/*
 * explicit_bzero(), unlike memset(), is never dropped by the compiler as a
 * dead store: the ring is cleared because it is about to go out of use.
 */
void
snowid_keyring_clear(SnowidKeyRing *ring)
{
	explicit_bzero(ring, sizeof(*ring));
	ring->newest = -1;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int
hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse one line (without its newline) into ring; blank lines are fine. */
static SnowidKeyRingError
parse_line(const char *p, const char *end, SnowidKeyRing *ring)
{
	const char *colon;
	const char *v_start,
			   *v_end;
	SnowidKey  *key;
	int			version;
	size_t		ndigits;
	size_t		i;

	if (end > p && end[-1] == '\r')
		end--;
	while (p < end && is_blank(*p))
		p++;
	while (end > p && is_blank(end[-1]))
		end--;
	if (p == end || *p == '#')
		return SNOWID_KEYRING_OK;

	colon = memchr(p, ':', (size_t) (end - p));
	if (colon == NULL)
		return SNOWID_KEYRING_NO_COLON;

	v_start = p;
	v_end = colon;
	while (v_end > v_start && is_blank(v_end[-1]))
		v_end--;
	if (v_end - v_start != 1)
		return SNOWID_KEYRING_VERSION;
	version = snowid_base32_canonical_value((unsigned char) *v_start);
	if (version < 0)
		return SNOWID_KEYRING_VERSION;

	p = colon + 1;
	while (p < end && is_blank(*p))
		p++;
	ndigits = (size_t) (end - p);
	for (i = 0; i < ndigits; i++)
		if (hex_value((unsigned char) p[i]) < 0)
			return SNOWID_KEYRING_HEX;
	if (ndigits % 2 != 0)
		return SNOWID_KEYRING_HEX;
	if (ndigits < 2 * SNOWID_KEY_MIN_BYTES)
		return SNOWID_KEYRING_SHORT;
	if (ndigits > 2 * SNOWID_KEY_MAX_BYTES)
		return SNOWID_KEYRING_LONG;

	key = &ring->keys[version];
	if (key->present)
		return SNOWID_KEYRING_DUPLICATE;
	key->present = true;
	key->len = (uint8_t) (ndigits / 2);
	for (i = 0; i < ndigits / 2; i++)
		key->bytes[i] = (uint8_t) (hex_value((unsigned char) p[2 * i]) * 16 +
								   hex_value((unsigned char) p[2 * i + 1]));
	ring->newest = version;
	ring->count++;
	return SNOWID_KEYRING_OK;
}

SnowidKeyRingError
snowid_keyring_parse(const char *text, size_t len, SnowidKeyRing *ring,
					 int *line)
{
	const char *p = text;
	const char *end = text + len;
	int			lineno = 0;

	snowid_keyring_clear(ring);
	while (p < end)
	{
		const char *nl = memchr(p, '\n', (size_t) (end - p));
		const char *line_end = nl ? nl : end;
		SnowidKeyRingError err;

		lineno++;
		err = parse_line(p, line_end, ring);
		if (err != SNOWID_KEYRING_OK)
		{
			snowid_keyring_clear(ring);
			*line = lineno;
			return err;
		}
		p = nl ? nl + 1 : end;
	}
	if (ring->count == 0)
	{
		*line = 0;
		return SNOWID_KEYRING_EMPTY;
	}
	return SNOWID_KEYRING_OK;
}

const char *
snowid_keyring_error_text(SnowidKeyRingError err)
{
	switch (err)
	{
		case SNOWID_KEYRING_OK:
			return "The file is valid.";
		case SNOWID_KEYRING_NO_COLON:
			return "A line must be version:key, or blank, or a comment starting with #.";
		case SNOWID_KEYRING_VERSION:
			return "A key version must be one character of 0-9 and A-Z without I, L, O and U.";
		case SNOWID_KEYRING_HEX:
			return "A key must be written as hexadecimal digits, two per byte.";
		case SNOWID_KEYRING_SHORT:
			return "A key must have at least 32 bytes (64 hexadecimal digits).";
		case SNOWID_KEYRING_LONG:
			return "A key must have at most 64 bytes (128 hexadecimal digits).";
		case SNOWID_KEYRING_DUPLICATE:
			return "The key version appears on an earlier line too.";
		case SNOWID_KEYRING_EMPTY:
			return "The file lists no key.";
	}
	return "Unknown key file error.";
}
