/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Which key a request names: uniform over the key space, or Zipf(theta)
 * by inversion of the exact cumulative distribution (a table of n doubles
 * and a binary search: 19 steps for 400k keys, and no approximation to
 * argue about). Rank r is key r: memcached hashes keys, so which ids are
 * hot does not matter to it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "lg.h"

int lg_keys_init(struct lg_keys *k, uint32_t n, enum lg_skew skew,
		 double theta)
{
	double sum = 0, acc = 0;
	uint32_t i;

	if (n == 0 || (skew == LG_ZIPF && !(theta > 0 && theta < 10)))
		return -EINVAL;
	k->n = n;
	k->skew = skew;
	k->theta = theta;
	k->cdf = NULL;
	if (skew == LG_UNIFORM)
		return 0;
	k->cdf = malloc(sizeof(*k->cdf) * n);
	if (!k->cdf)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sum += pow((double)i + 1, -theta);
	for (i = 0; i < n; i++) {
		acc += pow((double)i + 1, -theta) / sum;
		k->cdf[i] = acc;
	}
	k->cdf[n - 1] = 1.0;	/* rounding must not leave a gap at the top */
	return 0;
}

void lg_keys_fini(struct lg_keys *k)
{
	free(k->cdf);
	k->cdf = NULL;
}

uint32_t lg_keys_pick(const struct lg_keys *k, struct lb_rng *r)
{
	uint32_t lo = 0, hi;
	double u;

	if (k->skew == LG_UNIFORM)
		return lb_rng_below(r, k->n);
	/* 53 random bits: u in [0, 1). */
	u = (double)(lb_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
	hi = k->n - 1;
	while (lo < hi) {	/* the first rank whose cdf exceeds u */
		uint32_t mid = lo + (hi - lo) / 2;

		if (k->cdf[mid] > u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}
