/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_pcp tuners as inline functions on &struct lb_pcp_tune_state: the
 * cache's hot paths inline them; lib/tune/tune.c exports the decay rule
 * as the pure lb_pcp_tune_*() functions of lockbatch/pcp_tune.h. The LINUX rules transcribe mm/page_alloc.c of
 * Linux 6.12 with the zone flags (ZONE_BELOW_HIGH, ZONE_RECLAIM_ACTIVE)
 * never set; LINUX_618 differs in the free-high threshold and honours
 * LB_PCP_TS_ZONE_BELOW_HIGH when a caller that models a zone sets it.
 */
#ifndef LOCKBATCH_PCP_TUNE_IMPL_H
#define LOCKBATCH_PCP_TUNE_IMPL_H

#include <stdbool.h>

#include <lockbatch/pcp.h>

#define LBI_SCALE LB_PCP_BATCH_SCALE_MAX

static inline int lbi_min(int a, int b)
{
	return a < b ? a : b;
}

static inline int lbi_max(int a, int b)
{
	return a > b ? a : b;
}

/* clamp() of the kernel's minmax.h: v >= hi ? hi : (v <= lo ? lo : v). */
static inline int lbi_clamp(int v, int lo, int hi)
{
	return v >= hi ? hi : (v <= lo ? lo : v);
}

/*
 * lbi_tune_alloc_start() - Account an allocation attempt.
 * @t: The tuner.
 * @s: The state.
 *
 * Halves @s->free_count (rmqueue_pcplist()); %LB_PCP_TUNE_ADAPTIVE only
 * while alloc_factor > 0. Call before the refill decision.
 *
 * Context: Pure; caller serialises access to @s.
 */
static inline void lbi_tune_alloc_start(enum lb_pcp_tuner t,
					struct lb_pcp_tune_state *s)
{
	/*
	 * ADAPTIVE forgets a run of frees only while allocations dominate
	 * (refills are scaling up); LINUX forgets it on every allocation.
	 */
	if (t == LB_PCP_TUNE_ADAPTIVE && !s->alloc_factor)
		return;
	s->free_count >>= 1;
}

/*
 * lbi_tune_alloc_done() - Account an object taken from the slot.
 * @t: The tuner.
 * @s: The state.
 * @order: Its order.
 *
 * ``count -= 1 << order`` and the ``count_min`` update of the count_min
 * patch (__rmqueue_pcplist()).
 *
 * Context: Pure; caller serialises access to @s.
 */
static inline void lbi_tune_alloc_done(enum lb_pcp_tuner t,
				       struct lb_pcp_tune_state *s,
				       unsigned int order)
{
	s->count -= 1 << order;
	/* The count_min patch tracks it at the same place. */
	if (s->count < s->count_min)
		s->count_min = s->count;
}

/*
 * nr_pcp_alloc(), mm/page_alloc.c (6.12), for orders whose list is empty.
 * @grow: what high grows by; negative for LINUX's rule (the refill size).
 * @zone_flags: honour LB_PCP_TS_ZONE_BELOW_HIGH (LINUX_618).
 */
static inline int lbi_tune_refill_linux(struct lb_pcp_tune_state *s,
					unsigned int order, int grow,
					bool zone_flags)
{
	int base = s->batch, high, batch, max_nr_alloc;

	high = s->high = lbi_clamp(s->high, s->high_min, s->high_max);
	if (high < base)
		return 1;
	batch = order ? base : base << s->alloc_factor;
	/*
	 * "If we had larger pcp->high, we could avoid to allocate from zone."
	 * Not while the zone is below its high watermark (LINUX_618).
	 */
	if (s->high_min != s->high_max &&
	    !(zone_flags && (s->flags & LB_PCP_TS_ZONE_BELOW_HIGH)))
		high = s->high = lbi_min(high + (grow < 0 ? batch : grow),
					 s->high_max);
	if (!order) {
		max_nr_alloc = lbi_max(high - s->count - base, base);
		/* ADAPTIVE's copy of alloc_factor under LINUX's rules. */
		if ((base << s->grow_factor) <= max_nr_alloc &&
		    s->grow_factor < LBI_SCALE)
			s->grow_factor++;
		if (batch <= max_nr_alloc && s->alloc_factor < LBI_SCALE)
			s->alloc_factor++;
		batch = lbi_min(batch, max_nr_alloc);
	}
	if (batch > 1)
		batch = lbi_max(batch >> order, 2);
	return batch;
}

/*
 * lbi_tune_refill() - How many objects to take from the back-end.
 * @t: The tuner.
 * @s: The state; @s->high and @s->alloc_factor may change.
 * @order: The order whose list is empty.
 *
 * nr_pcp_alloc() for %LB_PCP_TUNE_LINUX and %LB_PCP_TUNE_COUNT_MIN;
 * ``max(batch >> order, 2)`` for %LB_PCP_TUNE_FIXED; for
 * %LB_PCP_TUNE_ADAPTIVE nr_pcp_alloc() with high raised by
 * ``batch << grow_factor``. The caller then adds ``got << order`` to
 * @s->count itself.
 *
 * Context: Pure; caller serialises access to @s.
 * Return: the number of order-@order objects to request (>= 1).
 */
static inline int lbi_tune_refill(enum lb_pcp_tuner t,
				  struct lb_pcp_tune_state *s,
				  unsigned int order)
{
	switch (t) {
	case LB_PCP_TUNE_FIXED:
		/* Before 6.7: rmqueue_bulk(zone, order, batch) scaled by order. */
		return s->batch > 1 ? lbi_max(s->batch >> order, 2) : 1;
	case LB_PCP_TUNE_ADAPTIVE:
		/*
		 * Refills scale with alloc_factor, which ADAPTIVE keeps
		 * through sporadic frees; high grows as LINUX's would, by
		 * grow_factor, so bigger refills do not inflate it.
		 */
		return lbi_tune_refill_linux(s, order, order ? s->batch :
					     s->batch << s->grow_factor, false);
	default:
		return lbi_tune_refill_linux(s, order, -1,
					     t == LB_PCP_TUNE_LINUX_618);
	}
}

/*
 * nr_pcp_high(), 6.12, without the zone-flag branches; with @below_high,
 * 6.18's ZONE_BELOW_HIGH branch (its caller has seen the flag): high
 * sheds what was freed recently and every free above high_min flushes.
 */
static inline int lbi_nr_pcp_high(struct lb_pcp_tune_state *s, int batch,
				  bool free_high, bool below_high)
{
	int high = s->high = lbi_clamp(s->high, s->high_min, s->high_max);

	if (!high)
		return 0;
	if (free_high) {
		s->high = lbi_max(high - (batch << LBI_SCALE), s->high_min);
		return 0;
	}
	if (s->high_min == s->high_max)
		return high;
	if (below_high) {
		s->high = lbi_max(high - lbi_max(s->free_count, batch),
				  s->high_min);
		return lbi_max(s->count, s->high_min);
	}
	if (s->count >= high) {
		int need = s->free_count + batch;

		/* "pcp->high should be large enough to hold batch freed pages." */
		if (s->high < need)
			s->high = lbi_clamp(need, s->high_min, s->high_max);
	}
	return high;
}

/* nr_pcp_free(), 6.12. */
static inline int lbi_nr_pcp_free(const struct lb_pcp_tune_state *s,
				  int batch, int high, bool free_high)
{
	if (free_high)
		return lbi_min(s->count, batch << LBI_SCALE);
	if (high < batch)
		return 1;
	return lbi_clamp(s->free_count, batch, high - batch);
}

/*
 * free_unref_page_commit(), 6.12, after the page joined its list;
 * free_frozen_page_commit() of 6.18 with @free_high_min = batch +
 * high_min / 2 (the free_count that starts the free-high rule).
 */
static inline int lbi_tune_free_linux(struct lb_pcp_tune_state *s,
				      unsigned int order, int free_high_min,
				      bool zone_flags)
{
	int batch = s->batch, high;
	bool free_high = false;

	s->alloc_factor >>= 1;
	s->count += 1 << order;
	/*
	 * A run of high-order frees with no allocation in between is a
	 * bulk free: return it rather than hold it.
	 */
	if (order && order <= LB_PCP_COSTLY_ORDER) {
		free_high = s->free_count >= free_high_min &&
			    (s->flags & LB_PCP_TS_PREV_FREE_HIGH_ORDER) &&
			    (!(s->flags & LB_PCP_TS_FREE_HIGH_BATCH) ||
			     s->count >= batch);
		s->flags |= LB_PCP_TS_PREV_FREE_HIGH_ORDER;
	} else if (s->flags & LB_PCP_TS_PREV_FREE_HIGH_ORDER) {
		s->flags &= ~LB_PCP_TS_PREV_FREE_HIGH_ORDER;
	}
	if (s->free_count < (batch << LBI_SCALE))
		s->free_count += 1 << order;
	high = lbi_nr_pcp_high(s, batch, free_high, zone_flags &&
			       (s->flags & LB_PCP_TS_ZONE_BELOW_HIGH));
	if (s->count >= high)
		return lbi_nr_pcp_free(s, batch, high, free_high);
	return 0;
}

/*
 * lbi_tune_free() - Account a free and decide the flush.
 * @t: The tuner.
 * @s: The state: @count grows by ``1 << order``; @high, @free_count,
 *	@alloc_factor and @flags may change.
 * @order: The order of the freed object.
 *
 * free_unref_page_commit() with nr_pcp_high() and nr_pcp_free();
 * %LB_PCP_TUNE_LINUX_618 and %LB_PCP_TUNE_ADAPTIVE with 6.18's free-high
 * threshold (and, for LINUX_618, %LB_PCP_TS_ZONE_BELOW_HIGH);
 * %LB_PCP_TUNE_FIXED returns ``batch`` once count reaches high;
 * %LB_PCP_TUNE_ADAPTIVE keeps alloc_factor unless free_count >= batch. The
 * caller then frees the returned number of units (whole objects, from the
 * freed order's list first) and subtracts what it freed from @s->count.
 *
 * Context: Pure; caller serialises access to @s.
 * Return: base units to flush now, 0 for none.
 */
static inline int lbi_tune_free(enum lb_pcp_tuner t,
				struct lb_pcp_tune_state *s,
				unsigned int order)
{
	uint8_t af = s->alloc_factor;
	int n;

	if (t == LB_PCP_TUNE_FIXED) {
		s->count += 1 << order;
		/* Before 5.14: free one batch once count reaches high. */
		return s->count >= s->high ? s->batch : 0;
	}
	n = lbi_tune_free_linux(s, order, t == LB_PCP_TUNE_LINUX_618 ||
				t == LB_PCP_TUNE_ADAPTIVE ?
				s->batch + s->high_min / 2 : s->batch,
				t == LB_PCP_TUNE_LINUX_618);
	if (t == LB_PCP_TUNE_ADAPTIVE) {
		s->grow_factor >>= 1;
		/*
		 * A free forgets the allocation run only once frees dominate:
		 * a batch freed since allocations last halved free_count.
		 */
		if (s->free_count < s->batch)
			s->alloc_factor = af;
	}
	return n;
}

/*
 * The free of an order-0 object that stays below high: what
 * lbi_tune_free() does in that case, with nothing else to decide (high is
 * always kept inside [high_min, high_max], so nr_pcp_high() would change
 * nothing). False, with nothing changed, when the full rule must run.
 */
static inline bool lbi_tune_free_fast(enum lb_pcp_tuner t,
				      struct lb_pcp_tune_state *s,
				      unsigned int order)
{
	if (order || s->count + 1 >= s->high)
		return false;
	s->count++;
	if (t == LB_PCP_TUNE_FIXED)
		return true;
	s->flags &= ~LB_PCP_TS_PREV_FREE_HIGH_ORDER;
	if (s->free_count < (s->batch << LBI_SCALE))
		s->free_count++;
	if (t != LB_PCP_TUNE_ADAPTIVE) {
		s->alloc_factor >>= 1;
	} else {
		s->grow_factor >>= 1;
		if (s->free_count >= s->batch)
			s->alloc_factor >>= 1;
	}
	return true;
}

/*
 * decay_pcp_high(), 6.12, and the count_min variant; returns todo and sets
 * *to_drain (may be <= 0).
 */
static inline bool lbi_tune_decay(enum lb_pcp_tuner t,
				  struct lb_pcp_tune_state *s, int *to_drain)
{
	int batch = s->batch, dec;
	bool todo = false;

	if (t != LB_PCP_TUNE_FIXED && s->high > s->high_min) {
		switch (t) {
		case LB_PCP_TUNE_COUNT_MIN:
			dec = lbi_min(s->count_min, s->high / 5);
			break;
		default:
			dec = s->high >> 3;
			break;
		}
		s->high = lbi_max(lbi_max(s->count - (batch << LBI_SCALE),
					  s->high - dec), s->high_min);
		if (s->high > s->high_min)
			todo = true;
	}
	*to_drain = s->count - s->high;
	if (*to_drain > 0)
		todo = true;
	return todo;
}

static inline void lbi_tune_tick_end(enum lb_pcp_tuner t,
				     struct lb_pcp_tune_state *s)
{
	s->count_min = s->count;
}

#endif /* LOCKBATCH_PCP_TUNE_IMPL_H */
