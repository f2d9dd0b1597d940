// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Stress for C20: no get/put hooks, so the batch holds no reference. Adders
 * allocate objects, add them (their batches fill and flush) and hand each
 * one over at once; drainers call lb_cpubatch_drain_obj() or
 * lb_cpubatch_drain_objs() on what they are handed and free it as soon as the
 * call returns. The commit dawdles before it touches its objects, so a
 * drain that returned while another thread's flush still held the object
 * is a use-after-free (ASan, TSan) or an object seen uncommitted.
 * Plain pthreads and TAP, so it runs under ThreadSanitizer.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define NSLOTS 4
#define ADDERS 2
#define DRAINERS 2
#define CELLS 8

struct dobj {
	struct lb_node node;
	unsigned int committed;		/* atomic */
};

static struct lb_lock be_lock;
static struct lb_cpubatch *pc;
static struct dobj *cells[CELLS];	/* atomic: handed from adders */
static unsigned long iters;
static unsigned int adders_left;	/* atomic */
static unsigned long created, freed, early, errors;	/* atomic */
static uint64_t seed;
static __thread int tls_cpu;

static int cpu_fn(void *arg)
{
	(void)arg;
	return tls_cpu;
}

static void lock(void *be)
{
	lb_lock_acquire(be);
}

static void unlock(void *be)
{
	lb_lock_release(be);
}

static void commit(void *be, void **objs, unsigned int n)
{
	volatile unsigned int spin;
	unsigned int i;

	(void)be;
	for (spin = 0; spin < 200 * n; spin++)
		;
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&((struct dobj *)objs[i])->committed, 1,
				   __ATOMIC_RELAXED);
}

static const struct lb_backend_ops ops = {
	.lock = lock,
	.unlock = unlock,
	.commit = commit,
};

static void count(unsigned long *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static void hand_over(struct dobj *o, struct lb_rng *r)
{
	struct dobj *none;
	unsigned int c = lb_rng_below(r, CELLS);

	for (;;) {
		none = NULL;
		if (__atomic_compare_exchange_n(&cells[c], &none, o, false,
						__ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return;
		c = (c + 1) % CELLS;
		if (!c)
			sched_yield();
	}
}

static void *adder(void *arg)
{
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed + (uintptr_t)arg);
	for (i = 0; i < iters; i++) {
		struct dobj *o = calloc(1, sizeof(*o));

		if (!o) {
			count(&errors);
			break;
		}
		tls_cpu = (int)lb_rng_below(&r, NSLOTS);
		if (lb_cpubatch_add(pc, o, &o->node, 1 + lb_rng_below(&r, 3)) < 0) {
			count(&errors);
			free(o);
			continue;
		}
		count(&created);
		hand_over(o, &r);
	}
	__atomic_sub_fetch(&adders_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Drain what was handed over, then free it at once. */
static void drain_and_free(struct dobj **got, unsigned int nr, int together)
{
	struct lb_node *nodes[2] = { NULL, NULL };
	unsigned int i;
	int rc = 0;

	if (together) {
		for (i = 0; i < nr; i++)
			nodes[i] = &got[i]->node;
		rc = lb_cpubatch_drain_objs(pc, nodes, nr);
	}
	for (i = 0; i < nr; i++) {
		if (!together)
			rc = lb_cpubatch_drain_obj(pc, &got[i]->node);
		if (rc < 0)
			count(&errors);
	}
	for (i = 0; i < nr; i++) {
		if (__atomic_load_n(&got[i]->committed, __ATOMIC_RELAXED) != 1)
			count(&early);
		free(got[i]);
		count(&freed);
	}
}

static void *drainer(void *arg)
{
	struct dobj *got[2];
	struct lb_rng r;
	unsigned int c, nr;
	int last = 0;

	lb_rng_seed(&r, seed ^ (0x9e37u + (uintptr_t)arg));
	tls_cpu = (int)(uintptr_t)arg;
	while (!last) {
		last = !__atomic_load_n(&adders_left, __ATOMIC_ACQUIRE);
		nr = 0;
		for (c = 0; c < CELLS; c++) {
			got[nr] = __atomic_exchange_n(&cells[c], NULL,
						      __ATOMIC_ACQUIRE);
			if (got[nr] && ++nr == 2) {
				drain_and_free(got, nr, lb_rng_below(&r, 2));
				nr = 0;
			}
		}
		if (nr)
			drain_and_free(got, nr, lb_rng_below(&r, 2));
		sched_yield();
	}
	return NULL;
}

int main(void)
{
	pthread_t a[ADDERS], d[DRAINERS];
	struct lb_cpubatch_conf conf = {
		.nr_slots = NSLOTS, .mode = LB_CPUBATCH_WEIGHTED, .max_nr = 4,
		.max_weight = 8, .ops = &ops, .backend = &be_lock,
		.cpu_fn = cpu_fn,
	};
	struct lb_cpubatch_stats st;
	uint64_t flushes = 0;
	unsigned int i, c;

	seed = lb_test_seed(0xc20c20);
	iters = lb_stress_iters(20000, 1000000);
	lb_tap_plan(4);
	lb_tap_diag(LB_SEED_FMT ", %lu objects per adder", LB_SEED_ARGS(seed),
		    iters);
	if (lb_lock_init(&be_lock, LB_LOCK_SPIN, "drainfree") ||
	    lb_cpubatch_create(&pc, &conf)) {
		lb_tap_ok(0, "setup");
		return lb_tap_done();
	}
	adders_left = ADDERS;
	for (i = 0; i < DRAINERS; i++)
		pthread_create(&d[i], NULL, drainer, (void *)(uintptr_t)i);
	for (i = 0; i < ADDERS; i++)
		pthread_create(&a[i], NULL, adder, (void *)(uintptr_t)i);
	for (i = 0; i < ADDERS; i++)
		pthread_join(a[i], NULL);
	for (i = 0; i < DRAINERS; i++)
		pthread_join(d[i], NULL);
	lb_tap_ok(errors == 0 && created == freed,
		  "every object handed over was drained and freed (%lu, %lu "
		  "errors)", freed, errors);
	lb_tap_ok(early == 0, "no drain returned before the object's commit "
		  "(%lu did)", early);
	lb_cpubatch_stats(pc, &st, NULL, 0);
	for (c = 0; c < LB_FLUSH_NR; c++)
		flushes += st.total.flushes[c];
	lb_tap_ok(st.total.adds == created && st.total.objs_committed ==
		  created && st.total.nr_cached == 0 && st.flushes_inflight == 0,
		  "stats: %llu adds, %llu committed, nothing cached or in flight",
		  (unsigned long long)st.total.adds,
		  (unsigned long long)st.total.objs_committed);
	lb_tap_ok(st.backend_locks == flushes &&
		  st.total.flushes_committed == flushes,
		  "one back-end lock hold per flush (%llu flushes)",
		  (unsigned long long)flushes);
	lb_cpubatch_destroy(pc);
	lb_lock_destroy(&be_lock);
	return lb_tap_done();
}
