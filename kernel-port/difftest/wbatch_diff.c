// SPDX-License-Identifier: GPL-2.0-only
/*
 * Differential test: the patched kernel's per-CPU LRU cache batch decision,
 * lru_fbatch_add() cut verbatim out of the patched mm/swap.c and compiled
 * on top of 6.12's include/linux/pagevec.h, against lockbatch's
 * lb_wbatch_add() with the kernel's caps (31 entries, 31 pages).
 *
 * For each random sequence of adds (folio sizes drawn from base pages, the
 * mTHP orders, odd sizes and PMD-sized folios), both batches get the same
 * folio and must agree on every decision: move the batch now (the kernel
 * returns true, the library 0) or let it wait (the kernel returns false,
 * the library the number of slots left, which must then match 6.12's
 * folio_batch_space()), and on the entries and pages held.  After a move
 * both batches are emptied, as folio_batch_move_lru() does; the kernel's
 * page count is left stale there, as in cpu_fbatches, and must restart by
 * itself.  With every folio a base page the decision must also be 6.12's
 * folio_batch_add() one.
 *
 * usage: wbatch_diff [sequences] [seed]
 */
#include <stdio.h>
#include <stdlib.h>

#include "lru_fbatch_shim.h"
#include PRISTINE_PAGEVEC_H
#include PATCHED_LRU_FBATCH_ADD_C
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
	static struct folio objs[PAGEVEC_SIZE + 1];
	struct folio_batch fb, ref;
	unsigned char nr_pages = 0xff;	/* stale, as after boot or a move */
	struct lb_wbatch wb;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x6c6f636b62617463ULL;

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
			folio = &objs[fb.nr];
			folio->nr_pages = pages;
			k = lru_fbatch_add(&fb, &nr_pages, folio);
			l = lb_wbatch_add(&wb, folio, pages);
			adds++;
			/* lb_wbatch_add(): 1 = move now, 0 = waits. */
			if (l < 0 || k != (l == 1))
				return fail(seq, step, "move now", k, l, pages);
			if (fb.nr != lb_wbatch_count(&wb))
				return fail(seq, step, "entries held", fb.nr,
					    lb_wbatch_count(&wb), pages);
			if (mode == 0) {
				long o = !folio_batch_add(&ref, folio);

				if (o != k)
					return fail(seq, step,
						    "6.12 folio_batch_add vs patched",
						    o, k, pages);
			}
			if (k) {
				folio_batch_reinit(&fb);
				folio_batch_reinit(&ref);
				lb_wbatch_reinit(&wb);
				flushes++;
				continue;
			}
			if (lb_wbatch_room(&wb) != (int)folio_batch_space(&fb))
				return fail(seq, step, "slots left",
					    folio_batch_space(&fb),
					    lb_wbatch_room(&wb), pages);
			/* A batch that waits holds at most 31 pages. */
			if (nr_pages > PAGEVEC_SIZE ||
			    nr_pages != lb_wbatch_weight(&wb))
				return fail(seq, step, "pages held", nr_pages,
					    lb_wbatch_weight(&wb), pages);
		}
	}
	printf("wbatch_diff: %lu sequences, %lu adds, %lu flushes: lru_fbatch_add() and lb_wbatch_add() agree\n",
	       seqs, adds, flushes);
	return 0;
}
