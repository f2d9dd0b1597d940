// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Referenced bits, tested and cleared a word at a time.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include <ck_pr.h>

#include <lockbatch/refbits.h>

static int valid(const struct lb_refbits *rb)
{
	return rb && rb->nr_units >= 1 && rb->nr_units <= LB_REFBITS_MAX;
}

static unsigned int nr_words(const struct lb_refbits *rb)
{
	return (rb->nr_units + 63u) / 64u;
}

int lb_refbits_init(struct lb_refbits *rb, unsigned int nr_units)
{
	unsigned int i;

	if (!rb || nr_units < 1 || nr_units > LB_REFBITS_MAX)
		return -EINVAL;
	rb->nr_units = nr_units;
	for (i = 0; i < LB_REFBITS_WORDS; i++)
		ck_pr_store_64(&rb->words[i], 0);
	return 0;
}

int lb_refbits_mark(struct lb_refbits *rb, unsigned int unit)
{
	uint64_t bit;

	if (!valid(rb) || unit >= rb->nr_units)
		return -EINVAL;
	bit = 1ull << (unit % 64u);
	/* Test first: a set bit needs no write, the line stays shared. */
	if (!(ck_pr_load_64(&rb->words[unit / 64u]) & bit))
		ck_pr_or_64(&rb->words[unit / 64u], bit);
	return 0;
}

int lb_refbits_count(const struct lb_refbits *rb)
{
	unsigned int i, nr = 0;

	if (!valid(rb))
		return -EINVAL;
	for (i = 0; i < nr_words(rb); i++)
		nr += (unsigned int)__builtin_popcountll(
			ck_pr_load_64((uint64_t *)&rb->words[i]));
	return (int)nr;
}

int lb_refbits_test_and_clear(struct lb_refbits *rb, lb_refbits_flush_fn flush,
			      void *arg)
{
	unsigned int i, nr = 0, first = 0, last = 0;

	if (!valid(rb))
		return -EINVAL;
	for (i = 0; i < nr_words(rb); i++) {
		uint64_t w;

		/* A plain load skips words with nothing to clear (no write). */
		if (!ck_pr_load_64(&rb->words[i]))
			continue;
		w = ck_pr_fas_64(&rb->words[i], 0);
		if (!w)
			continue;
		if (!nr)
			first = i * 64u + (unsigned int)__builtin_ctzll(w);
		last = i * 64u + 63u - (unsigned int)__builtin_clzll(w);
		nr += (unsigned int)__builtin_popcountll(w);
	}
	if (nr && flush)
		flush(arg, first, last - first + 1);
	return (int)nr;
}

int lb_refbits_test_and_clear_each(struct lb_refbits *rb,
				   lb_refbits_flush_fn flush, void *arg)
{
	unsigned int u, nr = 0;

	if (!valid(rb))
		return -EINVAL;
	for (u = 0; u < rb->nr_units; u++) {
		uint64_t *w = &rb->words[u / 64u];

		/* As pte_young() before ptep_test_and_clear_young(). */
		if (!(ck_pr_load_64(w) & (1ull << (u % 64u))) ||
		    !ck_pr_btr_64(w, u % 64u))
			continue;
		nr++;
		if (flush)
			flush(arg, u, 1);
	}
	return (int)nr;
}
