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
#include "../common/backend.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define NSLOTS 4
#define ADDERS 2
#define DRAINERS 2
#define CELLS 8

static struct lb_cpubatch *pc;
static struct test_obj *cells[CELLS];	/* atomic: handed from adders */
static unsigned long iters;
static unsigned int adders_left;	/* atomic */
static unsigned long created, freed, early, errors;	/* atomic */
static uint64_t seed;

/*
 * The fixture's commit, after a dawdle that widens the window a drain
 * must wait out before its caller frees the objects.
 */
static void slow_commit(void *be, void **objs, unsigned int n)
{
	volatile unsigned int spin;

	for (spin = 0; spin < 200 * n; spin++)
		;
	backend_commit(be, objs, n);
}

/*
 * C20 needs a back-end without get/put (the batch holds no reference)
 * and without after(): the fixture's callbacks less those, and its commit
 * wrapped by the dawdle.
 */
static struct lb_backend_ops drainfree_ops(void)
{
	struct lb_backend_ops ops = backend_ops;

	ops.commit = slow_commit;
	ops.after = NULL;
	ops.get = NULL;
	ops.put = NULL;
	ops.refcount = NULL;
	return ops;
}

static void count(unsigned long *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static void hand_over(struct test_obj *o, struct lb_rng *r)
{
	struct test_obj *none;
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
		struct test_obj *o = malloc(sizeof(*o));

		if (!o) {
			count(&errors);
			break;
		}
		backend_obj_init(o, 0);
		backend_set_cpu((int)lb_rng_below(&r, NSLOTS));
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
static void drain_and_free(struct test_obj **got, unsigned int nr, int together)
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
		if (backend_commits(got[i]) != 1)
			count(&early);
		free(got[i]);
		count(&freed);
	}
}

static void *drainer(void *arg)
{
	struct test_obj *got[2];
	struct lb_rng r;
	unsigned int c, nr;
	int last = 0;

	lb_rng_seed(&r, seed ^ (0x9e37u + (uintptr_t)arg));
	backend_set_cpu((int)(uintptr_t)arg);
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
	struct lb_backend_ops ops = drainfree_ops();
	struct lb_cpubatch_stats st;
	uint64_t flushes = 0;
	unsigned int i, c;

	seed = lb_test_seed(0xc20c20);
	iters = lb_stress_iters(20000, 1000000);
	lb_tap_plan(5);
	lb_tap_diag(LB_SEED_FMT ", %lu objects per adder", LB_SEED_ARGS(seed),
		    iters);
	if (backend_setup_ops(NSLOTS, LB_CPUBATCH_WEIGHTED, 4, 8, &ops)) {
		lb_tap_ok(0, "setup");
		return lb_tap_done();
	}
	pc = backend_fixture.pc;
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
	lb_tap_ok(backend_teardown() == 0,
		  "back-end callbacks in order (first error: %s)",
		  backend_fixture.first_error ? backend_fixture.first_error :
						"none");
	return lb_tap_done();
}
