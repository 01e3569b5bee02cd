/*
 * libFuzzer harness: the decimal text form of a snowid (snowid_in).
 *
 * Any input must parse without a crash or a leak; an accepted one must be
 * what strtoll() reads too, lie in 0 .. 2^63 - 1, and round-trip through
 * its printed form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *str = malloc(size + 1);
	int64_t		value = -1;
	int64_t		again = -1;
	char		printed[32];

	memcpy(str, data, size);
	str[size] = '\0';

	if (snowid_parse_decimal(str, &value) == SNOWID_PARSE_OK)
	{
		long long	ref;

		if (value < 0)
			abort();
		errno = 0;
		ref = strtoll(str, NULL, 10);
		if (errno != 0 || ref != value)
			abort();
		snprintf(printed, sizeof(printed), "%lld", (long long) value);
		if (snowid_parse_decimal(printed, &again) != SNOWID_PARSE_OK ||
			again != value)
			abort();
	}
	free(str);
	return 0;
}
