/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Test-only reference model: a direct transcription of Linux 6.12's PCP
 * functions (mm/page_alloc.c: nr_pcp_alloc, rmqueue_pcplist,
 * __rmqueue_pcplist, free_unref_page_commit, nr_pcp_high, nr_pcp_free,
 * free_pcppages_bulk, decay_pcp_high, drain_pages_zone) on one pageset
 * with one migratetype, written independently of lib/tune/tune.h. The zone
 * flags are never set. Lists are object counts per order.
 *
 * 6.18's free-high threshold is behind @free_high_618 (its only change to
 * these functions with the zone flags clear).
 *
 * Deliberate additions, each marked "lb_pcp:" where it sits:
 *  - the count_min patch ("mm, pcp: avoid to reduce PCP high
 *    unnecessarily") behind @count_min_patch;
 *  - the free path's free_pcppages_bulk() call split into calls of at most
 *    batch << 5 pages (decay is already split by batch in 6.12.117,
 *    drain_pages_zone() by batch << 5);
 *  - lb_pcp's no-stranding rules (pcp.h, DOC overview), behind @lb_rules
 *    (the cache has them, the pure lb_pcp_tune_*() rules do not): (B) slot
 *    expiry after @expire idle decay periods (count drains to zero, high
 *    returns to high_min; decay then reports whether another tick may
 *    change the slot: high above high_min or objects cached), (C) a free
 *    flushes at least count - high, decay caps high at high_max. Rule (A)
 *    (drain and retry on an empty back-end) never fires here: the zone
 *    never runs out.
 * Not modelled: lb_pcp's refill cap of (batch << 5) >> order objects (at
 * least one), which only orders above 3 reach; the model has orders 0..3.
 */
#ifndef LB_TEST_PCP_REF_H
#define LB_TEST_PCP_REF_H

#include <stdbool.h>

#define REF_SCALE_MAX 5			/* CONFIG_PCP_BATCH_SCALE_MAX */
#define REF_COSTLY_ORDER 3		/* PAGE_ALLOC_COSTLY_ORDER */
#define REF_PREV_FREE_HIGH_ORDER 0x1	/* PCPF_PREV_FREE_HIGH_ORDER */
#define REF_FREE_HIGH_BATCH 0x2		/* PCPF_FREE_HIGH_BATCH */
#define REF_MAX_ORDER 10

struct per_cpu_pages {
	int count, high, high_min, high_max, batch;
	unsigned char flags, alloc_factor;
	int free_count;
	int count_min;
	int lists[REF_MAX_ORDER + 1];
	int nr_lists;
	bool count_min_patch;
	bool free_high_618;	/* 6.18's free-high threshold */
	long zone_lock_holds;
	bool lb_rules;
	/* lb_pcp rule (B): allocations + frees, the count at the last tick. */
	unsigned int expire, idle;
	long ops, last_ops;
};

#define ref_min(a, b) ((a) < (b) ? (a) : (b))
#define ref_max(a, b) ((a) > (b) ? (a) : (b))
#define ref_max3(a, b, c) ref_max(ref_max(a, b), c)
/* __clamp() of include/linux/minmax.h. */
#define ref_clamp(v, lo, hi) ((v) >= (hi) ? (hi) : ((v) <= (lo) ? (lo) : (v)))

static void free_pcppages_bulk(struct per_cpu_pages *pcp, int count,
			       int pindex)
{
	count = ref_min(pcp->count, count);
	if (count <= 0)
		return;
	pindex = pindex - 1;
	pcp->zone_lock_holds++;
	while (count > 0) {
		int nr_pages;

		do {
			if (++pindex > pcp->nr_lists - 1)
				pindex = 0;
		} while (!pcp->lists[pindex]);
		nr_pages = 1 << pindex;
		do {
			pcp->lists[pindex]--;
			count -= nr_pages;
			pcp->count -= nr_pages;
		} while (count > 0 && pcp->lists[pindex]);
	}
}

static int nr_pcp_alloc(struct per_cpu_pages *pcp, int order)
{
	int high, base_batch, batch, max_nr_alloc;
	int high_max, high_min;

	base_batch = pcp->batch;
	high_min = pcp->high_min;
	high_max = pcp->high_max;
	high = pcp->high = ref_clamp(pcp->high, high_min, high_max);

	if (high < base_batch)
		return 1;
	if (order)
		batch = base_batch;
	else
		batch = (base_batch << pcp->alloc_factor);
	if (high_min != high_max)
		high = pcp->high = ref_min(high + batch, high_max);
	if (!order) {
		max_nr_alloc = ref_max(high - pcp->count - base_batch, base_batch);
		if (batch <= max_nr_alloc && pcp->alloc_factor < REF_SCALE_MAX)
			pcp->alloc_factor++;
		batch = ref_min(batch, max_nr_alloc);
	}
	if (batch > 1)
		batch = ref_max(batch >> order, 2);
	return batch;
}

/* rmqueue_pcplist() + __rmqueue_pcplist(); the zone never runs out. */
static void rmqueue_pcplist(struct per_cpu_pages *pcp, int order)
{
	pcp->ops++;			/* lb_pcp: rule (B) */
	pcp->free_count >>= 1;
	if (!pcp->lists[order]) {
		int batch = nr_pcp_alloc(pcp, order);

		pcp->zone_lock_holds++;		/* rmqueue_bulk() */
		pcp->lists[order] += batch;
		pcp->count += batch << order;
	}
	pcp->lists[order]--;
	pcp->count -= 1 << order;
	if (pcp->count_min_patch && pcp->count < pcp->count_min)
		pcp->count_min = pcp->count;
}

static int nr_pcp_free(struct per_cpu_pages *pcp, int batch, int high,
		       bool free_high)
{
	int min_nr_free, max_nr_free;

	if (free_high)
		return ref_min(pcp->count, batch << REF_SCALE_MAX);
	if (high < batch)
		return 1;
	min_nr_free = batch;
	max_nr_free = high - batch;
	return ref_clamp(pcp->free_count, min_nr_free, max_nr_free);
}

static int nr_pcp_high(struct per_cpu_pages *pcp, int batch, bool free_high)
{
	int high, high_min, high_max;

	high_min = pcp->high_min;
	high_max = pcp->high_max;
	high = pcp->high = ref_clamp(pcp->high, high_min, high_max);
	if (!high)
		return 0;
	if (free_high) {
		pcp->high = ref_max(high - (batch << REF_SCALE_MAX), high_min);
		return 0;
	}
	if (high_min == high_max)
		return high;
	if (pcp->count >= high) {
		int need_high = pcp->free_count + batch;

		if (pcp->high < need_high)
			pcp->high = ref_clamp(need_high, high_min, high_max);
	}
	return high;
}

static void free_unref_page_commit(struct per_cpu_pages *pcp, int order)
{
	int high, batch, pindex = order;
	bool free_high = false;

	pcp->ops++;			/* lb_pcp: rule (B) */
	pcp->alloc_factor >>= 1;
	pcp->lists[order]++;
	pcp->count += 1 << order;
	batch = pcp->batch;
	if (order && order <= REF_COSTLY_ORDER) {
		/*
		 * 6.18 (free_frozen_page_commit(), "mm: pcp: increase
		 * pcp->free_count threshold to trigger free_high"): batch +
		 * high_min / 2.
		 */
		int threshold = pcp->free_high_618 ?
				batch + pcp->high_min / 2 : batch;

		free_high = (pcp->free_count >= threshold &&
			     (pcp->flags & REF_PREV_FREE_HIGH_ORDER) &&
			     (!(pcp->flags & REF_FREE_HIGH_BATCH) ||
			      pcp->count >= batch));
		pcp->flags |= REF_PREV_FREE_HIGH_ORDER;
	} else if (pcp->flags & REF_PREV_FREE_HIGH_ORDER) {
		pcp->flags &= ~REF_PREV_FREE_HIGH_ORDER;
	}
	if (pcp->free_count < (batch << REF_SCALE_MAX))
		pcp->free_count += 1 << order;
	high = nr_pcp_high(pcp, batch, free_high);
	if (pcp->count >= high) {
		int todo = nr_pcp_free(pcp, batch, high, free_high);

		/* lb_pcp: rule (C), never leave count above high. */
		if (pcp->lb_rules)
			todo = ref_max(todo, pcp->count - pcp->high);
		while (todo > 0 && pcp->count > 0) {
			int n = ref_min(todo, batch << REF_SCALE_MAX);

			free_pcppages_bulk(pcp, n, pindex);
			todo -= n;
		}
	}
}

static bool decay_pcp_high(struct per_cpu_pages *pcp)
{
	int high_min, to_drain, batch, decrease;
	bool todo = false;

	high_min = pcp->high_min;
	batch = pcp->batch;
	if (pcp->high > high_min) {
		if (pcp->count_min_patch)
			decrease = ref_min(pcp->count_min, pcp->high / 5);
		else
			decrease = pcp->high >> 3;
		pcp->high = ref_max3(pcp->count - (batch << REF_SCALE_MAX),
				     pcp->high - decrease, high_min);
		/* lb_pcp: rule (C), high never stays above high_max. */
		if (pcp->lb_rules)
			pcp->high = ref_min(pcp->high, pcp->high_max);
		if (pcp->high > high_min)
			todo = true;
	}
	to_drain = pcp->count - pcp->high;
	/*
	 * lb_pcp: rule (B), a slot idle for expire ticks drains to zero and
	 * its high returns to high_min.
	 */
	if (pcp->ops != pcp->last_ops) {
		pcp->last_ops = pcp->ops;
		pcp->idle = 0;
	} else if (pcp->lb_rules && ++pcp->idle >= pcp->expire) {
		pcp->idle = pcp->expire;
		pcp->high = high_min;
		to_drain = pcp->count;
	}
	while (to_drain > 0) {
		int to_drain_batched = ref_min(to_drain, batch);

		free_pcppages_bulk(pcp, to_drain_batched, 0);
		todo = true;
		to_drain -= to_drain_batched;
	}
	if (pcp->count_min_patch)
		pcp->count_min = pcp->count;
	/*
	 * lb_pcp: whether another tick with no call in between may change
	 * the slot (high above high_min, or objects that expiry will drain).
	 */
	if (pcp->lb_rules)
		return pcp->count > 0 || pcp->high > high_min;
	return todo;
}

static void drain_pages_zone(struct per_cpu_pages *pcp)
{
	int count;

	do {
		count = pcp->count;
		if (count) {
			int to_drain = ref_min(count,
					       pcp->batch << REF_SCALE_MAX);

			free_pcppages_bulk(pcp, to_drain, 0);
		}
	} while (count);
}

#endif /* LB_TEST_PCP_REF_H */
