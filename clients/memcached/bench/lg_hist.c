/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Log-linear latency histogram: bucket = 16 x (the value's top bit) + the
 * next 4 bits. Values below 16 ns get a bucket each.
 */
#include "lg.h"

static unsigned int lg_hist_bucket(uint64_t ns)
{
	unsigned int top;

	if (ns < LG_HIST_SUB)
		return (unsigned int)ns;
	top = 63 - (unsigned int)__builtin_clzll(ns);
	return (top - 3) * LG_HIST_SUB +
	       (unsigned int)((ns >> (top - 4)) & (LG_HIST_SUB - 1));
}

/* The smallest value that falls in bucket @b (its lower bound). */
static uint64_t lg_hist_floor(unsigned int b)
{
	unsigned int top;

	if (b < LG_HIST_SUB)
		return b;
	top = b / LG_HIST_SUB + 3;
	return ((uint64_t)(LG_HIST_SUB + b % LG_HIST_SUB)) << (top - 4);
}

void lg_hist_add(struct lg_hist *h, uint64_t ns)
{
	h->count[lg_hist_bucket(ns)]++;
	h->n++;
	if (ns > h->max)
		h->max = ns;
}

void lg_hist_merge(struct lg_hist *into, const struct lg_hist *h)
{
	unsigned int b;

	for (b = 0; b < LG_HIST_BUCKETS; b++)
		into->count[b] += h->count[b];
	into->n += h->n;
	if (h->max > into->max)
		into->max = h->max;
}

/* The value at percentile @pct (0..100): its bucket's lower bound. */
uint64_t lg_hist_pct(const struct lg_hist *h, double pct)
{
	uint64_t want, seen = 0;
	unsigned int b;

	if (h->n == 0)
		return 0;
	want = (uint64_t)(pct / 100.0 * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (b = 0; b < LG_HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen > want)
			return lg_hist_floor(b);
	}
	return h->max;
}
