/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A reference model of lb_cpubatch's slots for single-threaded property
 * tests with an injected CPU id: which slot each object waits in, each
 * batch's order and weight, commits per object, and the flush rule of
 * %LB_CPUBATCH_WEIGHTED. Define SM_MAXS and SM_NOBJ before including.
 */
#ifndef LB_TEST_SLOT_MODEL_H
#define LB_TEST_SLOT_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <lockbatch/wbatch.h>
#include "prng.h"

struct slot_model {
	unsigned int nr_slots, max_nr;
	uint32_t max_weight;
	int slot_of[SM_NOBJ];		/* -1: not waiting */
	unsigned int nr[SM_MAXS];
	uint32_t weight[SM_MAXS];
	int order[SM_MAXS][LB_WBATCH_MAX];
	unsigned int commits[SM_NOBJ];
	uint32_t w[SM_NOBJ];
	unsigned int waiting;
};

static inline void sm_init(struct slot_model *m, struct lb_rng *r)
{
	unsigned int i;

	m->nr_slots = 1 + lb_rng_below(r, SM_MAXS);
	m->max_nr = 2 + lb_rng_below(r, 7);
	m->max_weight = 4 + lb_rng_below(r, 13);
	for (i = 0; i < SM_NOBJ; i++) {
		m->slot_of[i] = -1;
		/* Mostly small, some at or above the weight cap. */
		m->w[i] = lb_rng_below(r, 8) ? 1 + lb_rng_below(r, 4) :
					       m->max_weight + lb_rng_below(r, 3) - 1;
	}
}

static inline void sm_flush(struct slot_model *m, unsigned int s)
{
	unsigned int i;

	for (i = 0; i < m->nr[s]; i++) {
		m->commits[m->order[s][i]]++;
		m->slot_of[m->order[s][i]] = -1;
	}
	m->waiting -= m->nr[s];
	m->nr[s] = 0;
	m->weight[s] = 0;
}

static inline unsigned int sm_drain_all(struct slot_model *m)
{
	unsigned int s, n = 0;

	for (s = 0; s < m->nr_slots; s++) {
		n += m->nr[s];
		sm_flush(m, s);
	}
	return n;
}

static inline unsigned int sm_slot(const struct slot_model *m, int cpu)
{
	return cpu < 0 ? 0 : (unsigned int)cpu % m->nr_slots;
}

/* Mostly in range, some negative, some beyond the slot count. */
static inline int sm_random_cpu(const struct slot_model *m, struct lb_rng *r)
{
	switch (lb_rng_below(r, 4)) {
	case 0:
		return -1 - (int)lb_rng_below(r, 100);
	case 1:
		return (int)(m->nr_slots + lb_rng_below(r, 1000));
	default:
		return (int)lb_rng_below(r, m->nr_slots);
	}
}

/*
 * An accepted add of object @x from @cpu (the caller checked it was not
 * waiting); returns what lb_cpubatch_add() returns: 1 if it flushed.
 */
static inline int sm_add(struct slot_model *m, unsigned int x, int cpu)
{
	unsigned int s = sm_slot(m, cpu);
	bool flush;

	m->order[s][m->nr[s]++] = (int)x;
	m->weight[s] += m->w[x];
	m->slot_of[x] = (int)s;
	m->waiting++;
	flush = m->w[x] >= m->max_weight || m->weight[s] > m->max_weight ||
		m->nr[s] == m->max_nr;
	if (flush)
		sm_flush(m, s);
	return flush;
}

#endif /* LB_TEST_SLOT_MODEL_H */
