/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-ins for what lru_fbatch_add(), cut verbatim out of the
 * patched mm/swap.c, uses besides 6.12's include/linux/pagevec.h: a folio
 * that knows its size, folio_nr_pages() and min_t().
 */
#ifndef DIFFTEST_LRU_FBATCH_SHIM_H
#define DIFFTEST_LRU_FBATCH_SHIM_H

#include <stdbool.h>

struct folio {
	unsigned int nr_pages;
};

static inline unsigned int folio_nr_pages(const struct folio *folio)
{
	return folio->nr_pages;
}

#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))

#endif
