/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Key-derived values: what mc-loadgen stores under a key is a function of
 * the key alone, so any GET answer can be checked without remembering
 * what was sent. A value is the key's 8 decimal digits and a '.', repeated
 * and cut to a length that is itself a function of the key (between the
 * smallest and largest value size). Two keys never share a value: their
 * first 8 bytes differ. A stray store into an item (zeros, another key's
 * bytes) or an item handed out for the wrong key shows as a wrong answer.
 */
#include <string.h>

#include "lg.h"

unsigned int lg_value_len(unsigned int vmin, unsigned int vmax, uint32_t id)
{
	uint64_t z = (uint64_t)id * 0x9e3779b97f4a7c15ull;

	if (vmax <= vmin)
		return vmin;
	/* A hash, not id % span: neighbouring keys land in different
	 * slab classes. */
	z ^= z >> 29;
	return vmin + (unsigned int)(z % ((uint64_t)vmax - vmin + 1));
}

void lg_value_pattern(uint32_t id, char pat[LG_VALUE_PERIOD])
{
	unsigned int i;

	for (i = 8; i-- > 0; id /= 10)
		pat[i] = (char)('0' + id % 10);
	pat[8] = '.';
}

void lg_value_fill(char *dst, uint32_t id, unsigned int len)
{
	char pat[LG_VALUE_PERIOD];
	unsigned int off;

	lg_value_pattern(id, pat);
	for (off = 0; off < len; off += LG_VALUE_PERIOD)
		memcpy(dst + off, pat,
		       len - off < LG_VALUE_PERIOD ? len - off : LG_VALUE_PERIOD);
}
