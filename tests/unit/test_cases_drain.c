// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario cases C01-C04, C07, C10 and C14 of tests/cases.md,
 * one test each, named after the case.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"
#include "../common/prng.h"

#define NSLOTS 4

static void setup(void)
{
	cr_assert(eq(int, backend_setup(NSLOTS, 0), 0));
}

static void teardown(void)
{
	backend_teardown();
}

TestSuite(cases, .init = setup, .fini = teardown, .timeout = 30);

/* Every flush counter of every slot, all causes apart. */
static void all_counters(struct lb_cpubatch_slot_stats *st)
{
	cr_assert(eq(int, lb_cpubatch_stats(backend_fixture.pc, NULL, st,
					    NSLOTS), NSLOTS));
}

/* O in slot 1, caller on slot 0 accounts for E = 3, count E + 1. */
Test(cases, c01_settle_drains_only_the_holding_slot)
{
	struct lb_cpubatch_slot_stats before[NSLOTS], after[NSLOTS];
	/* Static: still batched when the teardown's destroy commits them. */
	static struct test_obj o, n0, n2;
	unsigned int i, c;

	backend_obj_init(&o, 0);
	backend_obj_init(&n0, 1);
	backend_obj_init(&n2, 2);
	test_obj_hold(&o);
	test_obj_hold(&o);		/* E = 3: the caller's and two mappings */
	backend_add(&o, 1, 1);
	backend_add(&n0, 0, 1);
	backend_add(&n2, 2, 1);
	all_counters(before);
	backend_set_cpu(0);
	cr_assert(eq(long, backend_refcount(&o), 4));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     3), LB_DRAINED));
	cr_assert(eq(long, backend_refcount(&o), 3), "count is now E");
	all_counters(after);
	for (i = 0; i < NSLOTS; i++)
		for (c = 0; c < LB_FLUSH_NR; c++)
			cr_assert(eq(u64, after[i].flushes[c] - before[i].flushes[c],
				     i == 1 && c == LB_FLUSH_DRAIN_OBJ ? 1 : 0),
				  "slot %u cause %s", i, lb_cpubatch_flush_cause_name(c));
	cr_assert(eq(u64, after[0].nr_cached, 1), "slot 0 keeps its batch");
	cr_assert(eq(u64, after[2].nr_cached, 1));
}

/* O in slot 1, and a third party holds one more reference: E + 2. */
Test(cases, c02_settle_busy_flushes_nothing)
{
	struct lb_cpubatch_slot_stats before[NSLOTS], after[NSLOTS];
	static struct test_obj o;	/* committed by the teardown */
	unsigned int i, c;

	backend_obj_init(&o, 0);
	test_obj_hold(&o);		/* E = 2 */
	backend_add(&o, 1, 1);
	test_obj_hold(&o);		/* the third party */
	all_counters(before);
	backend_set_cpu(0);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     2), LB_BUSY));
	all_counters(after);
	for (i = 0; i < NSLOTS; i++) {
		for (c = 0; c < LB_FLUSH_NR; c++)
			cr_assert(eq(u64, after[i].flushes[c], before[i].flushes[c]),
				  "slot %u cause %s", i, lb_cpubatch_flush_cause_name(c));
		cr_assert(eq(u64, after[i].nr_cached, before[i].nr_cached));
	}
	cr_assert(eq(u64, backend_stats().drain.drain_all_passes, 0));
	cr_assert(eq(long, backend_refcount(&o), 4));
}

/* O already committed, count E. */
Test(cases, c03_settle_committed_object)
{
	struct lb_cpubatch_slot_stats before[NSLOTS], after[NSLOTS];
	struct test_obj o;
	unsigned int i, c;

	backend_obj_init(&o, 0);
	backend_add(&o, 1, 1);
	cr_assert(eq(int, lb_cpubatch_drain_local(backend_fixture.pc), 1));
	cr_assert(eq(uint, backend_commits(&o), 1));
	all_counters(before);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_SETTLED));
	all_counters(after);
	for (i = 0; i < NSLOTS; i++)
		for (c = 0; c < LB_FLUSH_NR; c++)
			cr_assert(eq(u64, after[i].flushes[c], before[i].flushes[c]));
	cr_assert(eq(u64, backend_stats().drain.settled, 1));
}

/*
 * Thread A adds on slot 3 without pause; B disables batching, then drains
 * every slot. From then until B enables again, A's adds must be committed
 * by the add itself and slot 3 must read empty.
 */
#define C04_OBJS 20000
static struct test_obj c04_objs[C04_OBJS];
static int c04_phase;		/* 0 before disable returned, 1 disabled, 2 enabling */
static int c04_stop;
static unsigned int c04_added, c04_straight_violations;

static void *c04_adder(void *arg)
{
	unsigned int i;

	backend_set_cpu(3);
	for (i = 0; i < C04_OBJS; i++) {
		int phase = __atomic_load_n(&c04_phase, __ATOMIC_ACQUIRE);
		int rc;

		if (__atomic_load_n(&c04_stop, __ATOMIC_ACQUIRE))
			break;
		rc = backend_add(&c04_objs[i], 3, 1);
		if (phase == 1 && rc != 1)
			c04_straight_violations++;
		__atomic_store_n(&c04_added, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void c04_wait_added(unsigned int n)
{
	while (__atomic_load_n(&c04_added, __ATOMIC_ACQUIRE) < n &&
	       __atomic_load_n(&c04_added, __ATOMIC_ACQUIRE) < C04_OBJS)
		sched_yield();
}

Test(cases, c04_disable_then_drain_all_while_adding)
{
	struct lb_cpubatch_slot_stats st[NSLOTS];
	unsigned int i, added, mark;
	uint64_t disable_flushes;
	pthread_t a;

	for (i = 0; i < C04_OBJS; i++)
		backend_obj_init(&c04_objs[i], i);
	c04_phase = c04_stop = 0;
	c04_added = c04_straight_violations = 0;
	pthread_create(&a, NULL, c04_adder, NULL);
	c04_wait_added(200);
	cr_assert(eq(int, lb_cpubatch_disable(backend_fixture.pc), 0));
	__atomic_store_n(&c04_phase, 1, __ATOMIC_RELEASE);
	cr_assert(ge(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	all_counters(st);
	cr_assert(eq(u64, st[3].nr_cached, 0), "slot 3 empty after the drain");
	disable_flushes = st[3].flushes[LB_FLUSH_DISABLE];
	/* Later adds go straight through: the slot keeps reading empty. */
	mark = __atomic_load_n(&c04_added, __ATOMIC_ACQUIRE);
	for (i = 0; i < 50; i++) {
		all_counters(st);
		cr_assert(eq(u64, st[3].nr_cached, 0), "sample %u", i);
		sched_yield();
	}
	c04_wait_added(mark + 300);
	__atomic_store_n(&c04_phase, 2, __ATOMIC_RELEASE);
	all_counters(st);
	added = __atomic_load_n(&c04_added, __ATOMIC_ACQUIRE);
	if (added < C04_OBJS)
		cr_assert(gt(u64, st[3].flushes[LB_FLUSH_DISABLE], disable_flushes),
			  "adds while disabled flush with cause disable");
	cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc), 0));
	__atomic_store_n(&c04_stop, 1, __ATOMIC_RELEASE);
	pthread_join(a, NULL);
	cr_assert(eq(uint, c04_straight_violations, 0),
		  "an add while disabled left its object in a batch");
	lb_cpubatch_drain_all(backend_fixture.pc);
	added = c04_added;
	for (i = 0; i < added; i++)
		cr_assert(eq(uint, backend_commits(&c04_objs[i]), 1), "obj %u",
			  i);
	for (; i < C04_OBJS; i++)
		cr_assert(eq(uint, backend_commits(&c04_objs[i]), 0));
}

/*
 * The back-end's commit adds an object to the same lb_cpubatch (a commit that
 * moves a companion object onto the list, say). Every flush path is
 * exercised: full batches, drain_obj, settle, drain_all, and adds while
 * disabled. No deadlock (the suite timeout), and every object reaches the
 * back-end exactly once.
 */
#define C07_PARENTS 400
static struct test_obj c07_parent[C07_PARENTS], c07_child[C07_PARENTS];
static unsigned int c07_child_adds, c07_eagain;

static void c07_commit_adds(struct backend_fixture *f, struct test_backend *be,
			    void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct test_obj *o = objs[i];
		struct test_obj *c;
		int rc;

		if (o < c07_parent || o >= c07_parent + C07_PARENTS)
			continue;
		c = &c07_child[o - c07_parent];
		if (c->adds)
			continue;
		rc = lb_cpubatch_add(f->pc, c, &c->node, 1);
		if (rc >= 0) {
			c->adds++;
			c07_child_adds++;
		} else {
			cr_assert(eq(int, rc, -EAGAIN), "re-entrant add: %d", rc);
			c07_eagain++;
		}
	}
}

Test(cases, c07_commit_reenters_add)
{
	unsigned int i, lost = 0;

	for (i = 0; i < C07_PARENTS; i++) {
		backend_obj_init(&c07_parent[i], i);
		backend_obj_init(&c07_child[i], C07_PARENTS + i);
	}
	c07_child_adds = c07_eagain = 0;
	backend_fixture.on_commit = c07_commit_adds;
	for (i = 0; i < C07_PARENTS; i++) {
		struct test_obj *p = &c07_parent[i];

		cr_assert(ge(int, backend_add(p, (int)(i % NSLOTS), 1), 0));
		switch (i % 5) {
		case 1:
			cr_assert(ge(int,
				     lb_cpubatch_drain_obj(backend_fixture.pc,
							   &p->node), 0));
			break;
		case 2:
			cr_assert(ge(int, lb_cpubatch_settle(backend_fixture.pc,
							     p, &p->node, 1),
				     LB_SETTLED));
			break;
		case 3:
			if (i % 15 == 3)
				cr_assert(ge(int,
					     lb_cpubatch_drain_all(backend_fixture.pc), 0));
			break;
		case 4:
			if (i == 199)
				cr_assert(eq(int,
					     lb_cpubatch_disable(backend_fixture.pc), 0));
			if (i == 299)
				cr_assert(eq(int,
					     lb_cpubatch_enable(backend_fixture.pc), 0));
			break;
		}
	}
	/* Children refused with -EAGAIN are added again from here. */
	backend_fixture.on_commit = NULL;
	for (i = 0; i < C07_PARENTS; i++)
		if (!c07_child[i].adds)
			cr_assert(ge(int, backend_add(&c07_child[i], 0, 1), 0));
	cr_assert(ge(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	for (i = 0; i < C07_PARENTS; i++) {
		lost += backend_commits(&c07_parent[i]) != 1;
		lost += backend_commits(&c07_child[i]) != 1;
		cr_assert(eq(long, backend_refcount(&c07_child[i]), 1));
	}
	cr_assert(eq(uint, lost, 0), "objects not committed exactly once");
	cr_assert(eq(ulong, backend_fixture.commits, 2 * C07_PARENTS));
	cr_assert(gt(uint, c07_child_adds, 0));
}

/*
 * The CPU-id source returns ids at and far above the slot count, negative
 * errors, and a different id on every call. Run under ASan this proves no
 * slot is indexed out of bounds; the counts prove conservation.
 */
static int c10_cpu(void *arg)
{
	static const int odd[] = { NSLOTS, NSLOTS + 1, 4 * NSLOTS + 3, INT_MAX,
				   -1, -ENOSYS, INT_MIN, 65535, 65536, 3 };
	struct lb_rng *r = arg;
	uint32_t k = lb_rng_below(r, 14);

	return k < 10 ? odd[k] : (int)lb_rng_next(r);
}

Test(cases, c10_wild_cpu_ids)
{
	struct lb_backend_ops ops = backend_ops;
	struct lb_cpubatch_conf conf = {
		.nr_slots = NSLOTS, .mode = LB_CPUBATCH_WEIGHTED, .max_nr = 5,
		.ops = &ops, .backend = &backend_fixture.be[0], .cpu_fn = c10_cpu,
	};
	uint64_t seed = lb_test_seed(0xc10c10c10ull);
	struct lb_rng rng, pick;
	static struct test_obj o[64];
	struct lb_node *nodes[4];
	struct lb_cpubatch_stats st;
	unsigned long adds = 0, commits = 0;
	unsigned int i, k;

	lb_cpubatch_destroy(backend_fixture.pc);
	lb_rng_seed(&rng, seed);
	lb_rng_seed(&pick, seed ^ 0x5555);
	conf.cpu_arg = &rng;
	cr_assert(eq(int, lb_cpubatch_create(&backend_fixture.pc, &conf), 0));
	for (i = 0; i < 64; i++)
		backend_obj_init(&o[i], i);
	for (i = 0; i < 5000; i++) {
		struct test_obj *x = &o[lb_rng_below(&pick, 64)];
		int rc;

		switch (lb_rng_below(&pick, 6)) {
		case 0:
		case 1:
			rc = lb_cpubatch_add(backend_fixture.pc, x, &x->node,
					 1 + lb_rng_below(&pick, 6));
			cr_assert(rc == 0 || rc == 1 || rc == -EEXIST,
				  "add %d " LB_SEED_FMT, rc, LB_SEED_ARGS(seed));
			if (rc >= 0)
				x->adds++;
			break;
		case 2:
			cr_assert(ge(int,
				     lb_cpubatch_drain_local(backend_fixture.pc), 0));
			break;
		case 3:
			cr_assert(ge(int,
				     lb_cpubatch_drain_obj(backend_fixture.pc,
							   &x->node), 0),
				  LB_SEED_FMT, LB_SEED_ARGS(seed));
			break;
		case 4:
			rc = lb_cpubatch_settle(backend_fixture.pc, x, &x->node,
						1);
			cr_assert(rc == -ENOENT || (rc >= LB_SETTLED && rc <= LB_BUSY),
				  "settle %d " LB_SEED_FMT, rc, LB_SEED_ARGS(seed));
			break;
		default:
			for (k = 0; k < 4; k++)
				nodes[k] = &o[lb_rng_below(&pick, 64)].node;
			cr_assert(ge(int,
				     lb_cpubatch_drain_objs(backend_fixture.pc,
							    nodes, 4), 0));
			break;
		}
	}
	lb_cpubatch_stats(backend_fixture.pc, &st, NULL, 0);
	for (i = 0; i < 64; i++) {
		adds += o[i].adds;
		commits += backend_commits(&o[i]);
	}
	cr_assert(eq(ulong, adds, commits + st.total.nr_cached),
		  "conserved before the final drain " LB_SEED_FMT, LB_SEED_ARGS(seed));
	lb_cpubatch_drain_all(backend_fixture.pc);
	for (i = 0; i < 64; i++) {
		cr_assert(eq(uint, backend_commits(&o[i]), o[i].adds),
			  "obj %u " LB_SEED_FMT, i, LB_SEED_ARGS(seed));
		cr_assert(eq(long, backend_refcount(&o[i]), 1));
	}
}

/*
 * 10,000 short-lived threads each add a few objects on whatever CPU they
 * run and exit, leaving them in the slots. A monitor checks the cached
 * total against slots x cap the whole time; a final drain commits all.
 */
#define C14_THREADS 10000
#define C14_PER 3
#define C14_WAVE 16
#define C14_CAP 8
static struct test_obj *c14_objs;
static int c14_done;
static uint64_t c14_max_cached;
static unsigned int c14_over;

static void *c14_worker(void *arg)
{
	struct test_obj *o = arg;
	unsigned int i;

	for (i = 0; i < C14_PER; i++)
		if (lb_cpubatch_add(backend_fixture.pc, &o[i], &o[i].node,
				    1) >= 0)
			o[i].adds++;
	return NULL;
}

static void *c14_monitor(void *arg)
{
	struct timespec nap = { 0, 20 * 1000 };
	unsigned int nr_slots = *(unsigned int *)arg;
	struct lb_cpubatch_stats st;

	while (!__atomic_load_n(&c14_done, __ATOMIC_ACQUIRE)) {
		lb_cpubatch_stats(backend_fixture.pc, &st, NULL, 0);
		if (st.total.nr_cached > c14_max_cached)
			c14_max_cached = st.total.nr_cached;
		if (st.total.nr_cached > (uint64_t)nr_slots * C14_CAP)
			c14_over++;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

Test(cases, c14_short_lived_threads)
{
	struct lb_cpubatch_conf conf = {
		.mode = LB_CPUBATCH_WEIGHTED, .max_nr = C14_CAP,
		.ops = &backend_ops, .backend = &backend_fixture.be[0],
	};
	pthread_t t[C14_WAVE], mon;
	pthread_attr_t small;
	struct lb_cpubatch_stats st;
	unsigned int i, j, nr_slots;
	unsigned long adds = 0, commits = 0;

	lb_cpubatch_destroy(backend_fixture.pc);
	cr_assert(eq(int, lb_cpubatch_create(&backend_fixture.pc, &conf), 0));
	lb_cpubatch_stats(backend_fixture.pc, &st, NULL, 0);
	nr_slots = st.nr_slots;
	c14_objs = calloc((size_t)C14_THREADS * C14_PER, sizeof(*c14_objs));
	cr_assert(ne(ptr, c14_objs, NULL));
	for (i = 0; i < C14_THREADS * C14_PER; i++)
		backend_obj_init(&c14_objs[i], i);
	c14_done = 0;
	c14_max_cached = 0;
	c14_over = 0;
	pthread_create(&mon, NULL, c14_monitor, &nr_slots);
	/* Small stacks: the test is about thread exit, not stack mapping. */
	pthread_attr_init(&small);
	pthread_attr_setstacksize(&small, 64 * 1024);
	for (i = 0; i < C14_THREADS; i += C14_WAVE) {
		for (j = 0; j < C14_WAVE; j++)
			cr_assert(eq(int, pthread_create(&t[j], &small, c14_worker,
						     &c14_objs[(i + j) * C14_PER]), 0));
		for (j = 0; j < C14_WAVE; j++)
			pthread_join(t[j], NULL);
	}
	pthread_attr_destroy(&small);
	__atomic_store_n(&c14_done, 1, __ATOMIC_RELEASE);
	pthread_join(mon, NULL);
	cr_assert(eq(uint, c14_over, 0), "cached above slots x cap (max %llu)",
		  (unsigned long long)c14_max_cached);
	lb_cpubatch_stats(backend_fixture.pc, &st, NULL, 0);
	for (i = 0; i < C14_THREADS * C14_PER; i++) {
		adds += c14_objs[i].adds;
		commits += backend_commits(&c14_objs[i]);
	}
	cr_assert(eq(ulong, adds, (unsigned long)C14_THREADS * C14_PER));
	cr_assert(eq(ulong, adds, commits + st.total.nr_cached),
		  "objects left by exited threads are still in their slots");
	lb_cpubatch_drain_all(backend_fixture.pc);
	for (i = 0; i < C14_THREADS * C14_PER; i++)
		cr_assert(eq(uint, backend_commits(&c14_objs[i]), 1), "obj %u",
			  i);
	free(c14_objs);
}
