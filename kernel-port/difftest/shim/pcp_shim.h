/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Userspace stand-ins for what decay_pcp_high(), extracted verbatim from
 * the patched mm/page_alloc.c, uses: the fields of struct per_cpu_pages it
 * reads and writes, the min/max helpers, and a free_pcppages_bulk() that
 * only takes the pages off the count, as the real one does.
 */
#ifndef DIFFTEST_PCP_SHIM_H
#define DIFFTEST_PCP_SHIM_H

#include <stdbool.h>

#define CONFIG_PCP_BATCH_SCALE_MAX 5
#define READ_ONCE(x) (x)
#define WRITE_ONCE(x, v) ((x) = (v))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define max3(a, b, c) max(max(a, b), c)
#define pcp_spin_lock_maybe_irqsave(pcp, flags) ((void)(flags))
#define pcp_spin_unlock_maybe_irqrestore(pcp, flags) ((void)(flags))

struct zone {
	int unused;
};

struct per_cpu_pages {
	int count;
	int count_min;
	int high;
	int high_min;
	int high_max;
	int batch;
};

static inline void free_pcppages_bulk(struct zone *zone, int count,
				      struct per_cpu_pages *pcp, int pindex)
{
	(void)zone;
	(void)pindex;
	pcp->count -= min(count, pcp->count);
}

#endif
