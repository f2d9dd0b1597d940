// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch_settle() and lb_cpubatch_settle_held(): outcomes, the one slot they
 * may flush, the in-flight window, bad input.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"

#define NSLOTS 6

static void setup(void)
{
	cr_assert(eq(int, backend_setup(NSLOTS, 0), 0));
}

static void teardown(void)
{
	backend_teardown();
}

TestSuite(settle, .init = setup, .fini = teardown, .timeout = 10);

/* Flush counters of every slot, to prove what a call did not touch. */
static void snap(uint64_t *f)
{
	backend_all_flushes(f, NSLOTS);
}

static void assert_unchanged(const uint64_t *before, const char *what)
{
	uint64_t now[NSLOTS];
	unsigned int i;

	snap(now);
	for (i = 0; i < NSLOTS; i++)
		cr_assert(eq(u64, now[i], before[i]), "%s: slot %u flushed", what, i);
}

Test(settle, drained_flushes_the_one_slot)
{
	struct test_obj o, other, far;
	uint64_t before[NSLOTS], after[NSLOTS];
	unsigned int i;

	backend_obj_init(&o, 0);
	backend_obj_init(&other, 1);
	backend_obj_init(&far, 2);
	backend_add(&o, 4, 1);
	backend_add(&other, 4, 1);
	backend_add(&far, 1, 1);
	snap(before);
	/* The caller holds the owner's reference: expected 1, count 2. */
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_DRAINED));
	cr_assert(eq(long, backend_refcount(&o), 1));
	cr_assert(eq(uint, backend_commits(&o), 1));
	cr_assert(eq(uint, backend_commits(&other), 1));
	cr_assert(eq(uint, backend_commits(&far), 0));
	snap(after);
	for (i = 0; i < NSLOTS; i++)
		cr_assert(eq(u64, after[i] - before[i], i == 4 ? 1 : 0), "slot %u", i);
	cr_assert(eq(u64, backend_slot_flushes(4, LB_FLUSH_DRAIN_OBJ), 1));
	cr_assert(eq(u64, backend_stats().drain.drained, 1));
	/* Now nothing is cached and the count is exact. */
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_SETTLED));
	cr_assert(eq(u64, backend_stats().drain.settled, 1));
}

Test(settle, busy_never_flushes)
{
	struct test_obj o;
	uint64_t before[NSLOTS];

	backend_obj_init(&o, 0);
	backend_add(&o, 2, 1);
	test_obj_hold(&o);	/* a third party */
	test_obj_hold(&o);	/* and another */
	snap(before);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_BUSY));
	assert_unchanged(before, "cached, surplus 3");
	cr_assert(eq(u32, o.node.slot, 3), "still cached");
	lb_cpubatch_drain_obj(backend_fixture.pc, &o.node);
	snap(before);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_BUSY));
	assert_unchanged(before, "not cached, surplus 2");
	test_obj_release(&o);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_BUSY),
		  "surplus 1, nothing in flight: someone else's");
	cr_assert(eq(u64, backend_stats().drain.settle_waits, 0));
	test_obj_release(&o);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_SETTLED));
	cr_assert(eq(u64, backend_stats().drain.busy, 3));
}

/*
 * A pin of 3 of the 4 units of a cached object holds 3 references. The
 * object's state explains 1 (a mapping). With held = 3 the batch's is the
 * only surplus: one slot drained. With held = 1 (the "+ 1" formula) the
 * surplus looks like 3: BUSY, and nothing is drained anywhere.
 */
Test(settle, held_counts_every_pinned_unit)
{
	struct test_obj o;
	uint64_t before[NSLOTS];

	backend_obj_init(&o, 0);	/* ref 1: the mapping */
	backend_add(&o, 5, 4);
	test_obj_hold(&o);
	test_obj_hold(&o);
	test_obj_hold(&o);		/* 3 pinned units */
	snap(before);
	cr_assert(eq(int, lb_cpubatch_settle_held(backend_fixture.pc, &o,
						  &o.node, 1, 1), LB_BUSY));
	assert_unchanged(before, "held too small");
	cr_assert(eq(int, lb_cpubatch_settle_held(backend_fixture.pc, &o,
						  &o.node, 1, 3), LB_DRAINED));
	cr_assert(eq(long, backend_refcount(&o), 4));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     4), LB_SETTLED),
		  "settle(e + k) is settle_held(e, k)");
}

Test(settle, count_below_expectation)
{
	struct test_obj o;
	uint64_t before[NSLOTS];

	backend_obj_init(&o, 0);
	backend_add(&o, 0, 1);
	snap(before);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     2), -ERANGE),
		  "the caller counted the batch's reference");
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     5), -ERANGE));
	assert_unchanged(before, "cached");
	lb_cpubatch_drain_obj(backend_fixture.pc, &o.node);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     2), -ERANGE));
}

Test(settle, bad_input_changes_nothing)
{
	struct lb_backend_ops norc = backend_ops;
	struct lb_cpubatch *other, *blind;
	struct test_obj o, f, never, b;
	uint64_t before[NSLOTS];

	backend_obj_init(&o, 0);
	backend_obj_init(&f, 1);
	backend_obj_init(&never, 2);
	backend_obj_init(&b, 3);
	backend_add(&o, 3, 1);
	other = backend_other(&backend_ops);
	cr_assert(ne(ptr, other, NULL));
	norc.refcount = NULL;
	blind = backend_other(&norc);
	cr_assert(ne(ptr, blind, NULL));
	backend_set_cpu(1);
	cr_assert(eq(int, lb_cpubatch_add(other, &f, &f.node, 1), 0));
	cr_assert(eq(int, lb_cpubatch_add(blind, &b, &b.node, 1), 0));
	snap(before);
	cr_assert(eq(int, lb_cpubatch_settle(NULL, &o, &o.node, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, NULL, &o.node,
					     1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, NULL, 1),
		     -EINVAL));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     -1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     LONG_MIN), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_settle_held(backend_fixture.pc, &o,
						  &o.node, 1, -3), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_settle_held(backend_fixture.pc, &o,
						  &o.node, LONG_MAX, 1),
		     -EINVAL), "overflow");
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &never,
					     &never.node, 1), -ENOENT));
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &f, &f.node,
					     1), -EXDEV));
	cr_assert(eq(int, lb_cpubatch_settle(blind, &b, &b.node, 1), -EOPNOTSUPP));
	assert_unchanged(before, "bad input");
	cr_assert(eq(u32, o.node.slot, 4), "still cached");
	cr_assert(eq(u64,
		     backend_stats().drain.settled + backend_stats().drain.drained +
		     backend_stats().drain.busy, 0), "no outcome counted");
	cr_assert(eq(uint, backend_commits(&f) + backend_commits(&b), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(other), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(blind), 0));
	lb_cpubatch_drain_all(backend_fixture.pc);
	cr_assert(eq(uint, backend_commits(&o), 1), "nothing lost");
	cr_assert(eq(uint, backend_commits(&f), 1));
	cr_assert(eq(uint, backend_commits(&b), 1));
	cr_assert(eq(long,
		     backend_refcount(&o) + backend_refcount(&f) + backend_refcount(&b), 3));
}

/*
 * The in-flight window: another thread has swapped the object's batch out
 * and is still in @after, so the batch's reference is held but the node
 * reads "not cached". Settle must wait for that flush rather than call the
 * surplus someone else's.
 */
static int in_after, release_after;

static void hold_after(struct backend_fixture *f, struct test_backend *be,
		       void **objs, unsigned int n)
{
	__atomic_store_n(&in_after, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&release_after, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *flush_thread(void *arg)
{
	lb_cpubatch_drain_obj(backend_fixture.pc, arg);
	return NULL;
}

static void start_in_flight(struct test_obj *o, pthread_t *t)
{
	in_after = release_after = 0;
	backend_add(o, 1, 1);
	backend_fixture.on_after = hold_after;
	pthread_create(t, NULL, flush_thread, &o->node);
	while (!__atomic_load_n(&in_after, __ATOMIC_ACQUIRE))
		sched_yield();
	cr_assert(eq(u32, o->node.slot, 0));
	cr_assert(eq(long, backend_refcount(o), 2),
		  "the batch's reference is in flight");
}

/*
 * A handshake, no time bound: settle reads the reference count on every
 * pass of its wait. Once it has started waiting (settle_waits counted),
 * that read releases the flusher and returns only after the flush's @put,
 * so settle's next decision sees the flush done whatever the scheduling.
 * A settle that did not wait would return BUSY before any release.
 */
static struct test_obj *wait_obj;

static long refcount_releasing(void *obj)
{
	if (obj == wait_obj && backend_stats().drain.settle_waits > 0) {
		__atomic_store_n(&release_after, 1, __ATOMIC_RELEASE);
		while (backend_refcount(obj) > 1)
			sched_yield();
	}
	return backend_refcount(obj);
}

Test(settle, waits_for_the_flush_in_flight)
{
	static struct lb_backend_ops ops;
	struct test_obj o;
	pthread_t t;

	ops = backend_ops;
	ops.refcount = refcount_releasing;
	backend_teardown();
	cr_assert(eq(int, backend_setup_ops(NSLOTS, LB_CPUBATCH_WEIGHTED, 0, 0,
					    &ops), 0));
	backend_obj_init(&o, 0);
	start_in_flight(&o, &t);
	wait_obj = &o;
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node, 1),
		     LB_SETTLED));
	wait_obj = NULL;
	pthread_join(t, NULL);
	backend_fixture.on_after = NULL;
	cr_assert(eq(u64, backend_stats().drain.settle_waits, 1),
		  "settle waited once, for the flush");
	cr_assert(eq(u64, backend_stats().total.flushes[LB_FLUSH_DRAIN_OBJ], 1),
		  "the only flush is the other thread's");
	cr_assert(eq(uint, backend_commits(&o), 1));
	cr_assert(eq(long, backend_refcount(&o), 1));
}

Test(settle, gives_up_after_the_bound)
{
	struct test_obj o;
	pthread_t t;
	uint64_t t0;
	struct timespec ts;

	backend_obj_init(&o, 0);
	start_in_flight(&o, &t);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_BUSY));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	cr_assert(ge(u64, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - t0,
		     LB_CPUBATCH_SETTLE_WAIT_NS), "BUSY only after the full wait");
	cr_assert(eq(u64, backend_stats().drain.settle_waits, 1));
	__atomic_store_n(&release_after, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	cr_assert(eq(int, lb_cpubatch_settle(backend_fixture.pc, &o, &o.node,
					     1), LB_SETTLED),
		  "the retry succeeds once the flush is done");
	cr_assert(eq(u64, backend_stats().total.flushes[LB_FLUSH_DRAIN_OBJ],
		     1));
	backend_fixture.on_after = NULL;
}

/*
 * Without @put the batch's hold is not in R: R == expected while cached
 * means the hold is the whole surplus, so the slot is flushed; a count
 * above it is someone else's, and nothing is flushed.
 */
Test(settle, without_put_the_hold_is_the_surplus)
{
	struct lb_backend_ops ops = backend_ops;
	struct lb_cpubatch *pc;
	struct test_obj o;

	ops.get = NULL;
	ops.put = NULL;
	pc = backend_other(&ops);
	cr_assert(ne(ptr, pc, NULL));
	backend_obj_init(&o, 0);
	backend_set_cpu(1);
	cr_assert(eq(int, backend_add_to(pc, &o, 1), 0));
	cr_assert(eq(long, backend_refcount(&o), 1), "no get: R is the owner's");
	cr_assert(eq(int, lb_cpubatch_settle(pc, &o, &o.node, 2), -ERANGE));
	test_obj_hold(&o);
	cr_assert(eq(int, lb_cpubatch_settle(pc, &o, &o.node, 1), LB_BUSY),
		  "the second reference is not the batch's");
	cr_assert(eq(uint, backend_commits(&o), 0), "BUSY flushed");
	test_obj_release(&o);
	cr_assert(eq(int, lb_cpubatch_settle(pc, &o, &o.node, 1), LB_DRAINED));
	cr_assert(eq(uint, backend_commits(&o), 1));
	cr_assert(eq(int, lb_cpubatch_settle(pc, &o, &o.node, 1), LB_SETTLED));
	cr_assert(eq(uint, backend_commits(&o), 1));
	lb_cpubatch_destroy(pc);
}
