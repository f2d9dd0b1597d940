// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch property test of the statistics identities in fork()
 * children (cpubatch.h, fork()): two adder threads add random objects of
 * random weights on random slots while a third drains (drain_all, forced,
 * drain_local) and a flush's @after sometimes yields, so flushes are in
 * flight and drain_all callers wait for the drain mutex at any moment;
 * the main thread forks at random times. Each child adds and drains on
 * its own, drains everything and checks, per slot and in total:
 * adds == objs_flushed + nr_cached, objs_flushed == objs_committed +
 * objs_abandoned, flushes of all causes == flushes_committed +
 * flushes_abandoned, flushes_inflight == 0, backend_locks ==
 * flushes_committed, drain_all_calls == passes + coalesced, and that no
 * more flushes were abandoned than threads were flushing. The parent,
 * once its threads stopped, has nothing abandoned and the same identities.
 * Seeds are fixed; LB_SEED replays one.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"
#include "../common/fork_child.h"
#include "../common/prng.h"

#define NR_SLOTS 4
#define ADDERS 2
#define FLUSHERS (ADDERS + 1)	/* threads that can have a flush in flight */
#define OBJS 64			/* per adder */
#define FORKS 8

static struct test_obj objs[ADDERS][OBJS];
static struct test_obj child_objs[OBJS];
static int stop_run;		/* atomic */
static unsigned int max_nr;
static uint64_t seed;
static unsigned int forks_abandoned;	/* children that inherited some */

struct worker {
	pthread_t t;
	unsigned int idx;
	struct lb_rng g;
};

/* 0 when every identity holds; else a bit per kind of failure. */
static int identities(struct lb_cpubatch *pc, bool none_abandoned)
{
	struct lb_cpubatch_slot_stats ss[NR_SLOTS];
	struct lb_cpubatch_stats st;
	int bad = 0, i;

	if (lb_cpubatch_stats(pc, &st, ss, NR_SLOTS) != NR_SLOTS)
		return 1;
	for (i = 0; i < NR_SLOTS; i++)
		if (!fork_child_slot_ok(&ss[i]))
			bad |= 2;
	if (!fork_child_slot_ok(&st.total))
		bad |= 2;
	if (st.flushes_inflight)
		bad |= 4;
	if (st.backend_locks != st.total.flushes_committed)
		bad |= 8;
	if (st.drain.drain_all_calls !=
	    st.drain.drain_all_passes + st.drain.drain_all_coalesced)
		bad |= 16;
	if (st.total.flushes_abandoned > FLUSHERS ||
	    st.total.objs_abandoned > (uint64_t)FLUSHERS * max_nr ||
	    (st.total.objs_abandoned == 0) != (st.total.flushes_abandoned == 0))
		bad |= 32;
	if (none_abandoned && st.total.flushes_abandoned)
		bad |= 64;
	return bad;
}

/* Whether the child inherited flushes it will never finish. */
static bool abandoned_any(struct lb_cpubatch *pc)
{
	struct lb_cpubatch_stats st;

	return lb_cpubatch_stats(pc, &st, NULL, 0) >= 0 &&
	       st.total.flushes_abandoned;
}

/* Sometimes hold a flush between commit and @put for a moment. */
static void maybe_yield(struct backend_fixture *f, struct test_backend *be,
			void **o, unsigned int n)
{
	(void)f;
	(void)be;
	(void)o;
	if (n & 1)
		sched_yield();
}

/* An object whose every add was committed and put: free to add again. */
static bool idle_obj(struct test_obj *o)
{
	return __atomic_load_n(&o->puts, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&o->adds, __ATOMIC_ACQUIRE);
}

static void *adder(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(&stop_run, __ATOMIC_ACQUIRE)) {
		struct test_obj *o = &objs[w->idx][lb_rng_below(&w->g, OBJS)];

		if (!idle_obj(o))
			continue;
		backend_set_cpu((int)lb_rng_below(&w->g, NR_SLOTS));
		backend_add_to(backend_fixture.pc, o,
			       1 + lb_rng_below(&w->g, 8));
	}
	return NULL;
}

static void *drainer(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(&stop_run, __ATOMIC_ACQUIRE)) {
		unsigned int x = lb_rng_below(&w->g, 4);

		if (x == 0)
			lb_cpubatch_drain_all(backend_fixture.pc);
		else if (x == 1)
			lb_cpubatch_drain_all_forced(backend_fixture.pc);
		else {
			backend_set_cpu((int)lb_rng_below(&w->g, NR_SLOTS));
			lb_cpubatch_drain_local(backend_fixture.pc);
		}
	}
	return NULL;
}

/* The child: its own adds and drains, then the identities. */
static int child(void *arg)
{
	struct lb_rng *g = arg;
	struct lb_cpubatch *pc = backend_fixture.pc;
	unsigned int i, n = lb_rng_below(g, OBJS);

	for (i = 0; i < n; i++) {
		backend_obj_init(&child_objs[i], 1000 + i);
		backend_set_cpu((int)lb_rng_below(g, NR_SLOTS));
		if (backend_add_to(pc, &child_objs[i], 1 + lb_rng_below(g, 8)) < 0)
			return 1;
		if (lb_rng_below(g, 8) == 0 && lb_cpubatch_drain_all(pc) < 0)
			return 1;
	}
	if (lb_cpubatch_drain_all_forced(pc) < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (backend_commits(&child_objs[i]) != 1)
			return 128;
	/* Bit 64 (none_abandoned) is the parent's: here it tells what was seen. */
	return identities(pc, false) | (abandoned_any(pc) ? 64 : 0);
}

static void run(uint64_t s)
{
	struct worker w[FLUSHERS];
	struct lb_rng g;
	unsigned int i, j;

	seed = s;
	lb_rng_seed(&g, s);
	max_nr = 1 + lb_rng_below(&g, 8);
	cr_assert(eq(int, backend_setup(NR_SLOTS, max_nr), 0));
	backend_fixture.on_after = maybe_yield;
	for (i = 0; i < ADDERS; i++)
		for (j = 0; j < OBJS; j++)
			backend_obj_init(&objs[i][j], i * OBJS + j);
	__atomic_store_n(&stop_run, 0, __ATOMIC_RELEASE);
	for (i = 0; i < FLUSHERS; i++) {
		w[i].idx = i;
		lb_rng_seed(&w[i].g, s ^ (0x9e37ull * (i + 1)));
		cr_assert(eq(int, pthread_create(&w[i].t, NULL,
						 i < ADDERS ? adder : drainer,
						 &w[i]), 0));
	}
	for (i = 0; i < FORKS; i++) {
		struct timespec ts = { 0, 100000 + lb_rng_below(&g, 2000000) };
		int bad;

		nanosleep(&ts, NULL);
		bad = fork_child_run(child, &g);
		if (bad & 64)
			forks_abandoned++;
		bad &= ~64;
		cr_assert(eq(int, bad, 0), "fork %u: child identities broken "
			  "(bits %#x) " LB_SEED_FMT, i, bad, LB_SEED_ARGS(s));
	}
	__atomic_store_n(&stop_run, 1, __ATOMIC_RELEASE);
	for (i = 0; i < FLUSHERS; i++)
		cr_assert(eq(int, pthread_join(w[i].t, NULL), 0));
	cr_assert(ge(int, lb_cpubatch_drain_all_forced(backend_fixture.pc), 0));
	cr_assert(eq(int, identities(backend_fixture.pc, true), 0),
		  "parent " LB_SEED_FMT, LB_SEED_ARGS(s));
	for (i = 0; i < ADDERS; i++)
		for (j = 0; j < OBJS; j++)
			cr_assert(eq(u32, backend_commits(&objs[i][j]),
				     objs[i][j].adds), LB_SEED_FMT,
				  LB_SEED_ARGS(s));
	cr_assert(eq(u64, backend_teardown(), 0), LB_SEED_FMT, LB_SEED_ARGS(s));
}

Test(cpubatch_fork_prop, child_identities_after_drain_all, .timeout = 120)
{
	static const uint64_t seeds[] = { 0x1, 0xf0c, 0x5eed0027, 0xabad1dea };

	/* Once per process, before the first instance (backend.h). */
	cr_assert(eq(int, backend_fork_safe(), 0));
	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run);
	cr_log_info("%u children inherited abandoned flushes", forks_abandoned);
}
