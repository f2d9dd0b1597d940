// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Stress: adders on random (and out-of-range) slots, settlers holding
 * their own reference, targeted drainers, drain_all callers (plain and
 * forced) and a thread toggling disable/enable, all on one lb_cpubatch.
 * Plain pthreads and TAP, so it runs under ThreadSanitizer.
 *
 * Checked at the end: every object committed exactly once per add, every
 * reference returned, nothing cached, settle results always valid and
 * drain_all calls = passes + coalesced callers.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "../common/drain_fixture.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define NSLOTS 6
#define NOBJ 64
#define ADDERS 3
#define SETTLERS 2

static struct fx_obj obj[NOBJ];
static unsigned long iters;
static int stop;			/* set once the adders are done */
static pthread_barrier_t start;

static unsigned long bad_settle, bad_drain, bad_add;
static unsigned long outcomes[5];	/* settled, drained, busy, eagain, enoent */
static uint64_t seed;

/* Pace the whole-object calls so that batches have time to fill. */
static void nap(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static int running(void)
{
	return !__atomic_load_n(&stop, __ATOMIC_ACQUIRE);
}

static int wild_cpu(struct lb_rng *r)
{
	uint32_t k = lb_rng_below(r, 16);

	if (k == 0)
		return -1;
	if (k == 1)
		return NSLOTS + (int)lb_rng_below(r, 100);
	return (int)lb_rng_below(r, NSLOTS);
}

static void *adder(void *arg)
{
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed ^ (uintptr_t)arg);
	pthread_barrier_wait(&start);
	for (i = 0; i < iters; i++) {
		struct fx_obj *o = &obj[lb_rng_below(&r, NOBJ)];
		int rc = fx_add(o, wild_cpu(&r), 1 + lb_rng_below(&r, 8));

		if (rc != 0 && rc != 1 && rc != -EEXIST)
			__atomic_add_fetch(&bad_add, 1, __ATOMIC_RELAXED);
		/* Interleave with the other threads even on two CPUs. */
		if (i % 64 == 63)
			sched_yield();
	}
	return NULL;
}

static void *settler(void *arg)
{
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed ^ (uintptr_t)arg);
	pthread_barrier_wait(&start);
	for (i = 0; running(); i++) {
		struct fx_obj *o = &obj[lb_rng_below(&r, NOBJ)];
		int rc;

		fx_get(o);	/* the settler's own reference */
		rc = lb_rng_below(&r, 2) ?
			lb_cpubatch_settle(fx.pc, o, &o->node, 2) :
			lb_cpubatch_settle_held(fx.pc, o, &o->node, 1, 1);
		switch (rc) {
		case LB_SETTLED:
		case LB_DRAINED:
		case LB_BUSY:
			__atomic_add_fetch(&outcomes[rc - LB_SETTLED], 1,
					   __ATOMIC_RELAXED);
			break;
		case -EAGAIN:
			__atomic_add_fetch(&outcomes[3], 1, __ATOMIC_RELAXED);
			break;
		case -ENOENT:	/* not added yet */
			__atomic_add_fetch(&outcomes[4], 1, __ATOMIC_RELAXED);
			break;
		default:
			__atomic_add_fetch(&bad_settle, 1, __ATOMIC_RELAXED);
		}
		fx_put(o);
		if (i % 64 == 63)
			sched_yield();
	}
	return NULL;
}

static void *drainer(void *arg)
{
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed ^ 0xd7a1);
	pthread_barrier_wait(&start);
	for (i = 0; running(); i++) {
		struct lb_node *nodes[4];
		unsigned int k;
		int rc;

		if (lb_rng_below(&r, 2)) {
			rc = lb_cpubatch_drain_obj(fx.pc,
					       &obj[lb_rng_below(&r, NOBJ)].node);
			if (rc < 0 && rc != -EAGAIN)
				__atomic_add_fetch(&bad_drain, 1, __ATOMIC_RELAXED);
		} else {
			for (k = 0; k < 4; k++)
				nodes[k] = &obj[lb_rng_below(&r, NOBJ)].node;
			if (lb_cpubatch_drain_objs(fx.pc, nodes, 4) < 0)
				__atomic_add_fetch(&bad_drain, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void *all_drainer(void *arg)
{
	uintptr_t forced = (uintptr_t)arg;
	unsigned long i;

	pthread_barrier_wait(&start);
	for (i = 0; running(); i++) {
		int rc = forced && i % 4 == 0 ? lb_cpubatch_drain_all_forced(fx.pc) :
						lb_cpubatch_drain_all(fx.pc);

		if (rc < 0)
			__atomic_add_fetch(&bad_drain, 1, __ATOMIC_RELAXED);
		nap(1000);
	}
	return NULL;
}

static void *toggler(void *arg)
{
	unsigned long i;

	pthread_barrier_wait(&start);
	for (i = 0; running(); i++) {
		if (lb_cpubatch_disable(fx.pc))
			__atomic_add_fetch(&bad_drain, 1, __ATOMIC_RELAXED);
		nap(100);
		if (lb_cpubatch_enable(fx.pc) < 0)
			__atomic_add_fetch(&bad_drain, 1, __ATOMIC_RELAXED);
		nap(5000);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[ADDERS + SETTLERS + 4];
	struct lb_cpubatch_stats st;
	unsigned long adds = 0, lost = 0, refs = 0;
	unsigned int i, n = 0;

	seed = lb_test_seed(0x57e55d7a1ull);
	iters = lb_stress_iters(10000, 1000000);
	lb_tap_plan(7);
	lb_tap_diag(LB_SEED_FMT ", %lu iterations", LB_SEED_ARGS(seed), iters);
	if (fx_setup_ops(NSLOTS, LB_CPUBATCH_WEIGHTED, 8, 16, &fx_ops)) {
		lb_tap_ok(0, "setup");
		return lb_tap_done();
	}
	/* Every object is added once up front: settlers never see -ENOENT. */
	for (i = 0; i < NOBJ; i++) {
		fx_obj_init(&obj[i], i);
		fx_add(&obj[i], (int)(i % NSLOTS), 1);
	}
	pthread_barrier_init(&start, NULL, ADDERS + SETTLERS + 4);
	for (i = 0; i < ADDERS; i++)
		pthread_create(&t[n++], NULL, adder, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < SETTLERS; i++)
		pthread_create(&t[n++], NULL, settler, (void *)(uintptr_t)(i + 100));
	pthread_create(&t[n++], NULL, drainer, NULL);
	pthread_create(&t[n++], NULL, all_drainer, (void *)0);
	pthread_create(&t[n++], NULL, all_drainer, (void *)1);
	pthread_create(&t[n++], NULL, toggler, NULL);
	for (i = 0; i < ADDERS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);

	lb_tap_ok(bad_add == 0 && bad_drain == 0,
		  "adds and drains return documented values (%lu, %lu bad)",
		  bad_add, bad_drain);
	lb_tap_ok(bad_settle == 0,
		  "settle results valid: %lu settled, %lu drained, %lu busy, "
		  "%lu moving, %lu never added",
		  outcomes[0], outcomes[1], outcomes[2], outcomes[3], outcomes[4]);
	lb_cpubatch_drain_all(fx.pc);
	lb_cpubatch_stats(fx.pc, &st, NULL, 0);
	for (i = 0; i < NOBJ; i++) {
		adds += obj[i].adds;
		lost += fx_commits(&obj[i]) != obj[i].adds;
		refs += fx_refcount(&obj[i]) != 1;
	}
	lb_tap_ok(lost == 0, "every object committed once per add (%lu adds, %lu off)",
		  adds, lost);
	lb_tap_ok(refs == 0 && st.total.nr_cached == 0,
		  "every reference returned, nothing cached");
	lb_tap_ok(st.drain.drain_all_calls ==
			  st.drain.drain_all_passes + st.drain.drain_all_coalesced,
		  "drain_all calls %llu = passes %llu + coalesced %llu",
		  (unsigned long long)st.drain.drain_all_calls,
		  (unsigned long long)st.drain.drain_all_passes,
		  (unsigned long long)st.drain.drain_all_coalesced);
	lb_tap_ok(st.drain.disable_depth == 0 &&
			  st.drain.settled + st.drain.drained + st.drain.busy ==
				  outcomes[0] + outcomes[1] + outcomes[2],
		  "disable balanced; settle outcomes counted");
	lb_tap_ok(fx_teardown() == 0,
		  "commit() under the back-end lock, after() outside it");
	return lb_tap_done();
}
