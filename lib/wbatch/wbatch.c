// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Size-weighted batch: the validating public wrappers around the inline
 * rule in wbatch/wbatch.h, which lb_cpubatch's hot path uses directly.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include <lockbatch/wbatch.h>
#include "wbatch/wbatch.h"

int lb_wbatch_init(struct lb_wbatch *b, unsigned int max_nr,
		   uint32_t max_weight)
{
	if (!b || !lbi_wbatch_caps_ok(max_nr, max_weight))
		return -EINVAL;
	lbi_wbatch_init_nocheck(b, max_nr, max_weight);
	return 0;
}

int lb_wbatch_add(struct lb_wbatch *b, void *obj, uint32_t weight)
{
	if (!b || !obj || weight == 0 || weight > LB_WBATCH_WEIGHT_MAX ||
	    !lbi_wbatch_caps_ok(b->max_nr, b->max_weight))
		return -EINVAL;
	/* A previous add asked for a flush that did not happen. */
	if (b->nr >= b->max_nr || b->weight > b->max_weight)
		return -ENOSPC;
	/* The internal add returns the entries left, 0 for "flush now". */
	return lbi_wbatch_add(b, obj, weight) ? 0 : 1;
}

int lb_wbatch_room(const struct lb_wbatch *b)
{
	if (!b)
		return -EINVAL;
	return b->nr < b->max_nr ? b->max_nr - b->nr : 0;
}

int lb_wbatch_count(const struct lb_wbatch *b)
{
	return b ? b->nr : -EINVAL;
}

long lb_wbatch_weight(const struct lb_wbatch *b)
{
	return b ? (long)b->weight : -EINVAL;
}

int lb_wbatch_reinit(struct lb_wbatch *b)
{
	if (!b)
		return -EINVAL;
	lbi_wbatch_reinit(b);
	return 0;
}
