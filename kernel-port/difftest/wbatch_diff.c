// SPDX-License-Identifier: GPL-2.0-only
/*
 * Differential test: the patched kernel's per-CPU LRU cache batch decision,
 * folio_batch_add_pages() compiled straight from the patched
 * include/linux/pagevec.h, against lockbatch's lb_wbatch_add() with the
 * kernel's caps (31 entries, 31 pages).
 *
 * For each random sequence of adds (folio sizes drawn from base pages, the
 * mTHP orders, odd sizes and PMD-sized folios), both batches get the same
 * folio and must agree on every return value: 0 (process the batch now) or
 * the number of slots left.  After a 0 both batches are emptied, as
 * folio_batch_move_lru() does.  With every folio a base page the patched
 * helper must also agree with 6.12's folio_batch_add().
 *
 * usage: wbatch_diff [sequences] [seed]
 */
#include <stdio.h>
#include <stdlib.h>

#include PATCHED_PAGEVEC_H
#include <lockbatch/wbatch.h>

/* xorshift64*: reproducible across libcs */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* A folio size in base pages, biased towards the sizes that matter. */
static unsigned int folio_pages(int mode)
{
	static const unsigned int mthp[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256,
					     512 };
	unsigned int r = rng() % 100;

	if (mode == 0)
		return 1;
	if (mode == 1)		/* one mTHP size for the whole sequence */
		return 0;
	if (r < 40)
		return 1;
	if (r < 80)
		return mthp[rng() % 10];
	if (r < 95)
		return 1 + rng() % 40;	/* odd sizes around the cap */
	return 1 + rng() % 4096;
}

static int fail(unsigned long seq, int step, const char *what, long k,
		long l, unsigned int pages)
{
	fprintf(stderr,
		"wbatch_diff: sequence %lu step %d (folio of %u pages): %s: kernel %ld, lockbatch %ld\n",
		seq, step, pages, what, k, l);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long seqs = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	unsigned long seq, adds = 0, flushes = 0;
	static struct folio *objs[PAGEVEC_SIZE + 1];
	struct folio_batch fb, ref;
	struct lb_wbatch wb;
	int i;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x6c6f636b62617463ULL;
	for (i = 0; i <= PAGEVEC_SIZE; i++)
		objs[i] = (struct folio *)(uintptr_t)(0x1000 * (i + 1));

	for (seq = 0; seq < seqs; seq++) {
		int mode = rng() % 4, len = 1 + rng() % 96, step;
		unsigned int fixed = 1u << (rng() % 10);

		folio_batch_init(&fb);
		folio_batch_init(&ref);
		if (lb_wbatch_init(&wb, PAGEVEC_SIZE, PAGEVEC_SIZE))
			return fail(seq, -1, "lb_wbatch_init", 0, -1, 0);

		for (step = 0; step < len; step++) {
			unsigned int pages = folio_pages(mode);
			struct folio *folio;
			long k, l;

			if (!pages)
				pages = fixed;
			folio = objs[fb.nr];
			k = folio_batch_add_pages(&fb, folio, pages);
			/* lb_wbatch_add(): 1 = flush; room = entries left. */
			l = lb_wbatch_add(&wb, folio, pages);
			if (l >= 0)
				l = l ? 0 : lb_wbatch_room(&wb);
			adds++;
			if (k != l)
				return fail(seq, step, "return value", k, l,
					    pages);
			if (fb.nr != lb_wbatch_count(&wb))
				return fail(seq, step, "entries held", fb.nr,
					    lb_wbatch_count(&wb), pages);
			if (mode == 0) {
				long o = folio_batch_add(&ref, folio);

				if (o != k)
					return fail(seq, step,
						    "6.12 folio_batch_add vs patched",
						    o, k, pages);
			}
			if (k == 0) {
				folio_batch_reinit(&fb);
				folio_batch_reinit(&ref);
				lb_wbatch_reinit(&wb);
				flushes++;
				continue;
			}
			/* A batch that waits holds at most 31 pages. */
			if (fb.nr_pages > PAGEVEC_SIZE ||
			    lb_wbatch_weight(&wb) > PAGEVEC_SIZE)
				return fail(seq, step, "pages held", fb.nr_pages,
					    lb_wbatch_weight(&wb), pages);
			if (fb.nr_pages != lb_wbatch_weight(&wb))
				return fail(seq, step, "pages held", fb.nr_pages,
					    lb_wbatch_weight(&wb), pages);
		}
	}
	printf("wbatch_diff: %lu sequences, %lu adds, %lu flushes: folio_batch_add_pages() and lb_wbatch_add() agree\n",
	       seqs, adds, flushes);
	return 0;
}
