// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_nodetab under concurrency: threads add their own objects through one
 * side table into two lb_cpubatch instances (each add picks one, so
 * objects move between instances while flushes of the other may still
 * hold them), with a CPU id that hops between slots, while every thread
 * also drains and settles objects of the others through the table. A few
 * buckets only, so that threads meet in the same chains and free lists.
 * Afterwards: every accepted add committed exactly once, every batch
 * reference dropped, no release without an entry, and no entry left.
 * Plain pthreads and TAP: runs under TSan and ASan.
 *
 * The test's own counters use GCC __atomic builtins (TSan sees them).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/nodetab.h>
#include "../common/nodetab_ops.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define NR_THREADS 6
#define OBJS_PER_THREAD 40
#define NR_SLOTS 4

static pthread_barrier_t start;
static struct test_obj *objs;
static struct lb_cpubatch *inst[2];
static unsigned long errors, drained, exdev, settled;
static int first_error;		/* the first unexpected return value */
static __thread unsigned int calls;

static int cpu_hopping(void *arg)
{
	return (int)(calls++ * 7u % (NR_SLOTS + 2)) - 1;
}

static void count(unsigned long *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static void fail(int rc)
{
	int none = 0;

	__atomic_compare_exchange_n(&first_error, &none, rc, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	count(&errors);
}

/* A drain or settle of someone else's object: any outcome but an error. */
static void poke(struct lb_rng *rng)
{
	struct test_obj *o = &objs[lb_rng_below(rng, NR_THREADS *
						     OBJS_PER_THREAD)];
	struct lb_cpubatch *pc = inst[lb_rng_below(rng, 2)];
	int rc;

	if (lb_rng_below(rng, 2)) {
		rc = lb_nodetab_drain_obj(nodetab, pc, o);
		if (rc == 1)
			count(&drained);
	} else {
		/* Its owner's reference; the batch's may be there or not. */
		rc = lb_nodetab_settle(nodetab, pc, o, 1);
		if (rc == LB_SETTLED || rc == LB_DRAINED || rc == LB_BUSY)
			count(&settled);
	}
	if (rc == -EXDEV)
		count(&exdev);
	else if (rc < 0 && rc != -EAGAIN)
		fail(rc);
}

static void *worker_fn(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, i;
	struct test_obj *mine = objs + (size_t)id * OBJS_PER_THREAD;
	unsigned long r, rounds = lb_stress_iters(200, 20000);
	struct lb_rng rng;

	lb_rng_seed(&rng, 0x7ab1e000u + id);
	pthread_barrier_wait(&start);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < OBJS_PER_THREAD; i++) {
			struct test_obj *o = &mine[lb_rng_below(&rng,
							OBJS_PER_THREAD)];
			int rc = nodetab_add(inst[lb_rng_below(&rng, 2)], o,
					     o->weight, true);

			if (rc < 0 && rc != -EEXIST)
				fail(rc);
			if (lb_rng_below(&rng, 8) == 0)
				poke(&rng);
		}
	}
	return NULL;
}

int main(void)
{
	struct lb_cpubatch_conf conf = {
		.nr_slots = NR_SLOTS, .mode = LB_CPUBATCH_WEIGHTED, .max_nr = 8,
		.ops = &nodetab_ops, .backend = &backend_fixture.be[0],
		.cpu_fn = cpu_hopping,
	};
	unsigned int i, n = NR_THREADS * OBJS_PER_THREAD;
	unsigned long lost = 0, refs = 0, accepted = 0;
	pthread_t t[NR_THREADS];
	struct lb_nodetab_stats st;
	int rc;

	lb_tap_plan(8);
	if (!lb_tap_ok(backend_init() == 0 &&
		       lb_nodetab_create(&nodetab, 8) == 0 &&
		       lb_cpubatch_create(&inst[0], &conf) == 0 &&
		       lb_cpubatch_create(&inst[1], &conf) == 0,
		       "table and two instances"))
		return 1;
	objs = calloc(n, sizeof(*objs));
	for (i = 0; i < n; i++)
		backend_obj_init_at(&objs[i], i, 0, 1 + i % 5);
	pthread_barrier_init(&start, NULL, NR_THREADS);
	for (i = 0; i < NR_THREADS; i++)
		pthread_create(&t[i], NULL, worker_fn, (void *)(uintptr_t)i);
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	lb_tap_ok(errors == 0, "no unexpected errors (%lu, first %d; %lu "
		  "drained, %lu settled, %lu -EXDEV)", errors, first_error,
		  drained, settled, exdev);
	lb_tap_ok(lb_cpubatch_drain_all(inst[0]) >= 0 &&
		  lb_cpubatch_drain_all(inst[1]) >= 0, "drain both instances");
	rc = lb_nodetab_stats(nodetab, &st);
	lb_tap_ok(rc == 0 && st.entries == 0,
		  "no entry left (%llu; %llu created, %llu reused)",
		  (unsigned long long)st.entries, (unsigned long long)st.adds,
		  (unsigned long long)st.reuses);
	for (i = 0; i < n; i++) {
		accepted += objs[i].adds;
		lost += objs[i].commits != objs[i].adds;
		refs += backend_batch_refs(&objs[i]) != 0;
	}
	lb_tap_ok(lost == 0 && st.releases == accepted,
		  "%lu adds, each committed and released once (%lu objects off)",
		  accepted, lost);
	lb_tap_ok(refs == 0 && nodetab_release_errors == 0,
		  "every batch reference dropped, no stray release");
	lb_tap_ok(lb_cpubatch_destroy(inst[0]) == 0 &&
		  lb_cpubatch_destroy(inst[1]) == 0 &&
		  lb_nodetab_destroy(nodetab) == 0, "destroy");
	lb_tap_ok(backend_teardown() == 0, "callback order (%s)",
		  backend_fixture.first_error ? backend_fixture.first_error :
						"clean");
	free(objs);
	return lb_tap_failed ? 1 : 0;
}
