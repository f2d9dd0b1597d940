/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The reference model of one lb_wbatch, restated from wbatch.h's rule and
 * shared by tests/prop/prop_wbatch.c and tests/fuzz/fuzz_wbatch.c: what the
 * batch must hold, in order, and what each call must return.
 */
#ifndef LB_TEST_WBATCH_MODEL_H
#define LB_TEST_WBATCH_MODEL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <lockbatch/wbatch.h>

struct wbatch_model {
	unsigned int max_nr;
	uint32_t max_weight;
	unsigned int nr;
	uint64_t weight;
	void *objs[LB_WBATCH_MAX];
};

/* lb_wbatch_init()'s answer; the model is changed only on success. */
static inline int wbatch_model_init(struct wbatch_model *m,
				    unsigned int max_nr, uint32_t max_w)
{
	if (!max_nr || max_nr > LB_WBATCH_MAX || !max_w ||
	    max_w > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->max_nr = max_nr;
	m->max_weight = max_w;
	return 0;
}

static inline void wbatch_model_reinit(struct wbatch_model *m)
{
	m->nr = 0;
	m->weight = 0;
}

/*
 * An add of @obj, weight @w: -EINVAL or -ENOSPC (nothing changes), else
 * the entries left, 0 meaning "flush now" (folio_batch_add()'s answer).
 */
static inline int wbatch_model_add(struct wbatch_model *m, void *obj,
				   uint32_t w)
{
	if (!obj || !w || w > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	if (m->nr >= m->max_nr || m->weight > m->max_weight)
		return -ENOSPC;
	m->objs[m->nr++] = obj;
	m->weight += w;
	if (w >= m->max_weight || m->weight > m->max_weight ||
	    m->nr == m->max_nr)
		return 0;
	return (int)(m->max_nr - m->nr);
}

/* lb_wbatch_add()'s return for the model's answer @left: 1 = flush. */
static inline int wbatch_model_rc(int left)
{
	return left < 0 ? left : left == 0;
}

#endif /* LB_TEST_WBATCH_MODEL_H */
