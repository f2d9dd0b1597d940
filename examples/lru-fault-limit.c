// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lru-fault's limit mode: the floor every other mode is judged against.
 * The cheapest program that still does the work of a fault pass and its
 * unmap: each thread maps its objects onto a list of its own and takes
 * them off again. No lock, no atomic instruction, no clock read, no call
 * into the library or libc: plain loads and stores only.
 *
 * This file stands alone on purpose: tests/lru-fault-limit.sh checks its
 * object file for undefined symbols (a lock, a clock or any other call
 * would be one) and for locked instructions (an atomic would be one), so
 * a later change that slips either into the floor fails the build's
 * tests rather than quietly moving the floor.
 */
#include <urcu/list.h>

#include "lru-fault.h"

/*
 * The next free object in ring order, as the shared modes' pool scan takes
 * one. Nobody else holds this thread's objects, and the unmap pass frees
 * all it mapped, so the scan ends within one lap.
 */
static struct lf_obj *limit_take(struct lf_limit *l)
{
	for (;;) {
		struct lf_obj *o = &l->pool[l->cursor];

		if (++l->cursor == l->nr_pool)
			l->cursor = 0;
		if (o->free) {
			o->free = 0;
			return o;
		}
	}
}

void lf_limit_init(struct lf_limit *l, struct lf_obj *pool,
		   unsigned int nr_pool, uint32_t weight)
{
	CDS_INIT_LIST_HEAD(&l->head);
	l->pool = pool;
	l->nr_pool = nr_pool;
	l->cursor = 0;
	l->weight = weight;
	l->nr_listed = 0;
}

/* The fault pass: map @nr objects and put each at the head of the list. */
void lf_limit_populate(struct lf_limit *l, struct lf_obj **live,
		       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		struct lf_obj *o = limit_take(l);

		o->adds++;
		o->lru.weight = l->weight;
		cds_list_add(&o->lru.link, &l->head);
		o->commits++;
		l->nr_listed++;
		live[i] = o;
	}
}

/* The unmap pass: every mapped object leaves the list and is free again. */
void lf_limit_unmap(struct lf_limit *l, struct lf_obj **live, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		struct lf_obj *o = live[i];

		cds_list_del(&o->lru.link);
		o->releases++;
		l->nr_listed--;
		o->free = 1;
	}
}
