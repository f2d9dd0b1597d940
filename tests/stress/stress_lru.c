// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru stress (plain pthreads, TAP; runs under TSan and ASan): threads
 * add their own objects through a shared lb_cpubatch, and isolate anyone's
 * objects from either list, flip some to the other list, and put them
 * back, releasing some (which hands them back to their owner, who may add
 * them again). Every scan checks that what it finds on the LRU is live.
 * At the end, after the batches are drained and both lists emptied, each
 * live object was found exactly once and the counters agree.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <lockbatch/lru.h>
#include <lockbatch/cpubatch.h>
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define THREADS 4
#define PER_THREAD 256

enum { FREE, LIVE };

struct sobj {
	struct lb_lru_node node;
	int state;		/* atomic: FREE (owner may add) or LIVE */
	int dying;		/* set by the isolating thread */
	int seen;		/* final count, main thread only */
};

static struct sobj objs[THREADS][PER_THREAD];
static struct lb_lru *lru;
static struct lb_cpubatch *pc;
static unsigned long iters;
static unsigned long bad_scan;	/* atomic */

static bool op_release(void *o, void *arg)
{
	(void)arg;
	return ((struct sobj *)o)->dying;
}

static void op_secondary(void *o, void *arg)
{
	(void)arg;
	__atomic_store_n(&((struct sobj *)o)->state, FREE, __ATOMIC_RELEASE);
}

static enum lb_lru_verdict check_live(void *o, void *arg)
{
	(void)arg;
	if (__atomic_load_n(&((struct sobj *)o)->state, __ATOMIC_ACQUIRE) != LIVE)
		__atomic_add_fetch(&bad_scan, 1, __ATOMIC_RELAXED);
	return LB_LRU_ISOLATE;
}

static void reclaim(struct lb_rng *r)
{
	enum lb_lru_list l = lb_rng_below(r, 2) ? LB_LRU_ACTIVE : LB_LRU_INACTIVE;
	struct cds_list_head iso, *pos;

	CDS_INIT_LIST_HEAD(&iso);
	lb_lru_isolate(lru, l, &iso, 1 + lb_rng_below(r, 32), check_live, NULL);
	cds_list_for_each(pos, &iso) {
		struct lb_lru_node *n = cds_list_entry(pos, struct lb_lru_node,
						       link);
		struct sobj *o = lb_lru_obj_of(lru, n);

		o->dying = lb_rng_below(r, 16) == 0;
		if (lb_rng_below(r, 3) == 0)
			lb_lru_node_set_active(n, lb_rng_below(r, 2));
	}
	lb_lru_putback(lru, &iso, lb_rng_below(r, 2) ? LB_LRU_PUTBACK_LOCKED : 0);
}

static void *worker(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg;
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, 0x5eed + t);
	for (i = 0; i < iters; i++) {
		struct sobj *o = &objs[t][lb_rng_below(&r, PER_THREAD)];

		if (lb_rng_below(&r, 4)) {
			if (__atomic_load_n(&o->state, __ATOMIC_ACQUIRE) != FREE)
				continue;
			o->dying = 0;
			lb_lru_node_init(&o->node, 1 + lb_rng_below(&r, 8));
			__atomic_store_n(&o->state, LIVE, __ATOMIC_RELEASE);
			lb_lru_add(pc, lru, o);
		} else {
			reclaim(&r);
		}
	}
	return NULL;
}

/* Drain the batches, empty both lists; each live object found once. */
static int final_check(void)
{
	struct lb_lru_stats st;
	struct cds_list_head all, *pos;
	unsigned int t, i, live = 0, once = 1;
	int l;

	lb_cpubatch_drain_all(pc);
	lb_lru_stats(lru, &st);
	CDS_INIT_LIST_HEAD(&all);
	for (l = 0; l < LB_LRU_NR_LISTS; l++)
		lb_lru_isolate(lru, l, &all, THREADS * PER_THREAD, NULL, NULL);
	cds_list_for_each(pos, &all)
		((struct sobj *)lb_lru_obj_of(lru, cds_list_entry(pos,
				struct lb_lru_node, link)))->seen++;
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < PER_THREAD; i++) {
			struct sobj *o = &objs[t][i];

			live += o->state == LIVE;
			if (o->seen != (o->state == LIVE))
				once = 0;
		}
	lb_tap_diag("live %u, listed %llu + %llu, errors %llu", live,
		    (unsigned long long)st.nr[0], (unsigned long long)st.nr[1],
		    (unsigned long long)st.errors);
	return once && st.nr[0] + st.nr[1] == live && !st.errors;
}

int main(void)
{
	static const struct lb_lru_ops ops = { .release = op_release,
					       .secondary = op_secondary };
	struct lb_lru_conf conf = { .lock_kind = LB_LOCK_SPIN,
				    .node_offset = offsetof(struct sobj, node),
				    .ops = &ops };
	struct lb_cpubatch_conf pconf = { .nr_slots = 2, .mode = LB_CPUBATCH_WEIGHTED };
	pthread_t th[THREADS];
	unsigned int t;

	iters = lb_stress_iters(200000, 5000000);
	lb_tap_plan(3);
	lb_tap_ok(lb_lru_create(&lru, &conf) == 0 &&
		  lb_lru_cpubatch_conf(lru, &pconf) == 0 &&
		  lb_cpubatch_create(&pc, &pconf) == 0, "setup");
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t);
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	lb_tap_ok(bad_scan == 0, "every object a scan met was live (%lu not)",
		  bad_scan);
	lb_tap_ok(final_check(), "every live object listed exactly once");
	lb_cpubatch_destroy(pc);
	lb_lru_destroy(lru);
	return lb_tap_done();
}
