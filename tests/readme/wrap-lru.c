// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Runs README.md's lb_lru function (block-lru.c, written by
 * tests/readme/extract.sh) on one referenced 4-page page: it must come back
 * from the isolate/putback round on the active list and leave the LRU
 * empty.
 */
#include <stddef.h>
#include <stdint.h>

#include <lockbatch/lockbatch.h>

#include "block-lru.c"

static unsigned int flushed;

static void flush_fn(void *arg, unsigned int first, unsigned int nr)
{
	(void)arg;
	(void)first;
	flushed += nr;
}

int main(void)
{
	static struct page pg;

	if (lb_refbits_init(&pg.rb, 4) || lb_refbits_mark(&pg.rb, 2))
		return 1;
	if (lru_example(&pg, 4, flush_fn, NULL))
		return 1;
	/* The referenced bit was cleared, and flushed once. */
	return flushed >= 1 && lb_refbits_count(&pg.rb) == 0 ? 0 : 1;
}
