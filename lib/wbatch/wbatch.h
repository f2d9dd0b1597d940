/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The size-weighted batch rule, inline, without argument checks: callers
 * validated the batch's caps and the weight once.
 */
#ifndef LOCKBATCH_WBATCH_IMPL_H
#define LOCKBATCH_WBATCH_IMPL_H

#include <stdbool.h>

#include <lockbatch/wbatch.h>

static inline bool lbi_wbatch_caps_ok(unsigned int max_nr, uint32_t max_weight)
{
	return max_nr >= 1 && max_nr <= LB_WBATCH_MAX && max_weight >= 1 &&
	       max_weight <= LB_WBATCH_WEIGHT_MAX;
}

/*
 * Append, then decide. The weight sum is kept exact (it is reported as
 * weight moved); it cannot overflow: a waiting batch holds at most
 * max_weight units and one more object of at most LB_WBATCH_WEIGHT_MAX.
 */
static inline int lbi_wbatch_add(struct lb_wbatch *b, void *obj, uint32_t weight)
{
	b->objs[b->nr++] = obj;
	b->weight += weight;
	if (weight >= b->max_weight || b->weight > b->max_weight)
		return 0;
	return b->max_nr - b->nr;
}

/* Take back the last add (a caller that cannot flush now). */
static inline void lbi_wbatch_unadd(struct lb_wbatch *b, uint32_t weight)
{
	b->nr--;
	b->weight -= weight;
}

static inline void lbi_wbatch_init_nocheck(struct lb_wbatch *b,
					   unsigned int max_nr,
					   uint32_t max_weight)
{
	b->nr = 0;
	b->weight = 0;
	b->max_nr = (uint16_t)max_nr;
	b->max_weight = max_weight;
}

static inline void lbi_wbatch_reinit(struct lb_wbatch *b)
{
	b->nr = 0;
	b->weight = 0;
}

#endif /* LOCKBATCH_WBATCH_IMPL_H */
