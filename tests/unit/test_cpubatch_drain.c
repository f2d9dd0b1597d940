// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch_drain_obj(), lb_cpubatch_drain_objs(), lb_cpubatch_drain_all() (plain,
 * coalesced, forced) and lb_cpubatch_disable()/lb_cpubatch_enable().
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"

#define NSLOTS 8

static void setup(void)
{
	cr_assert(eq(int, backend_setup(NSLOTS, 0), 0));
}

static void teardown(void)
{
	backend_teardown();
}

static uint64_t flushes_total(enum lb_flush_cause c)
{
	return backend_stats().total.flushes[c];
}

TestSuite(drain_obj, .init = setup, .fini = teardown, .timeout = 10);
TestSuite(drain_objs, .init = setup, .fini = teardown, .timeout = 10);
TestSuite(drain_all, .init = setup, .fini = teardown, .timeout = 10);
TestSuite(disable, .init = setup, .fini = teardown, .timeout = 10);

Test(drain_obj, flushes_only_the_holding_slot)
{
	struct test_obj a, b, c;
	unsigned int i;

	backend_obj_init(&a, 0);
	backend_obj_init(&b, 1);
	backend_obj_init(&c, 2);
	cr_assert(eq(int, backend_add(&a, 1, 1), 0));
	cr_assert(eq(int, backend_add(&b, 1, 1), 0));
	cr_assert(eq(int, backend_add(&c, 2, 1), 0));
	cr_assert(eq(u32, a.node.slot, 2));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     1));
	cr_assert(eq(uint, backend_commits(&a), 1));
	cr_assert(eq(uint, backend_commits(&b), 1),
		  "the whole batch of slot 1 goes");
	cr_assert(eq(uint, backend_commits(&c), 0), "slot 2 is not touched");
	cr_assert(eq(u32, a.node.slot, 0));
	cr_assert(eq(u32, LB_NODE_HOME_SLOT(a.node.home), 2));
	cr_assert(eq(long, a.ref, 1), "the batch's reference was dropped");
	for (i = 0; i < NSLOTS; i++)
		cr_assert(eq(u64, backend_slot_flushes(i, LB_FLUSH_DRAIN_OBJ),
			     i == 1 ? 1 : 0), "slot %u", i);
	lb_cpubatch_drain_all(backend_fixture.pc);
	cr_assert(eq(uint, backend_commits(&c), 1));
}

Test(drain_obj, not_cached_returns_zero)
{
	struct test_obj a, never;

	backend_obj_init(&a, 0);
	backend_obj_init(&never, 1);
	cr_assert(eq(int, backend_add(&a, 3, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     1));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc,
						&never.node), 0));
	cr_assert(eq(u64, flushes_total(LB_FLUSH_DRAIN_OBJ), 1));
	/* Re-added to another slot: the drain follows it. */
	cr_assert(eq(int, backend_add(&a, 5, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     1));
	cr_assert(eq(u64, backend_slot_flushes(5, LB_FLUSH_DRAIN_OBJ), 1));
	cr_assert(eq(uint, backend_commits(&a), 2));
}

Test(drain_obj, bad_input)
{
	struct lb_cpubatch *other;
	struct test_obj a, f;
	uint32_t saved;

	backend_obj_init(&a, 0);
	backend_obj_init(&f, 1);
	cr_assert(eq(int, lb_cpubatch_drain_obj(NULL, &a.node), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, NULL),
		     -EINVAL));
	other = backend_other(&backend_ops);
	cr_assert(ne(ptr, other, NULL));
	backend_set_cpu(1);
	cr_assert(eq(int, lb_cpubatch_add(other, &f, &f.node, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &f.node),
		     -EXDEV));
	cr_assert(eq(uint, backend_commits(&f), 0), "nothing flushed");
	/* A node whose slot number this object cannot have written. */
	cr_assert(eq(int, backend_add(&a, 0, 1), 0));
	saved = a.node.slot;
	a.node.slot = NSLOTS + 7;
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     -EINVAL));
	a.node.slot = saved;
	cr_assert(eq(uint, backend_commits(&a), 0));
	cr_assert(eq(u64, flushes_total(LB_FLUSH_DRAIN_OBJ), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(other), 0));
	cr_assert(eq(uint, backend_commits(&f), 1), "nothing lost");
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     1));
	cr_assert(eq(uint, backend_commits(&a), 1));
}

/* Every drain call made from inside a callback refuses with -EDEADLK. */
static int cb_rc[6];

static void call_drains(struct backend_fixture *f, struct test_backend *be,
			void **objs, unsigned int n)
{
	struct test_obj *o = objs[0];
	struct lb_node *np = &o->node;

	cb_rc[0] = lb_cpubatch_drain_obj(f->pc, np);
	cb_rc[1] = lb_cpubatch_drain_objs(f->pc, &np, 1);
	cb_rc[2] = lb_cpubatch_drain_all(f->pc);
	cb_rc[3] = lb_cpubatch_drain_all_forced(f->pc);
	cb_rc[4] = lb_cpubatch_settle(f->pc, o, np, 1);
	cb_rc[5] = lb_cpubatch_disable(f->pc);
}

static void check_edeadlk(const char *where)
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		cr_assert(eq(int, cb_rc[i], -EDEADLK), "%s: call %u", where, i);
	cr_assert(eq(u32, backend_stats().drain.disable_depth, 0));
}

Test(drain_obj, refused_from_callbacks)
{
	struct test_obj a, b;

	backend_obj_init(&a, 0);
	backend_obj_init(&b, 1);
	backend_fixture.on_commit = call_drains;
	cr_assert(eq(int, backend_add(&a, 0, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc, &a.node),
		     1));
	check_edeadlk("commit");
	backend_fixture.on_commit = NULL;
	backend_fixture.on_after = call_drains;
	cr_assert(eq(int, backend_add(&b, 0, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc), 1));
	check_edeadlk("after");
	backend_fixture.on_after = NULL;
	cr_assert(eq(uint, backend_commits(&a) + backend_commits(&b), 2));
}

Test(drain_objs, each_distinct_slot_once)
{
	struct test_obj o[6];
	struct lb_node *nodes[8];
	unsigned int i;

	for (i = 0; i < 6; i++)
		backend_obj_init(&o[i], i);
	backend_add(&o[0], 0, 1);
	backend_add(&o[1], 0, 1);
	backend_add(&o[2], 2, 1);
	backend_add(&o[3], 2, 1);
	backend_add(&o[4], 6, 1);	/* not in the list: slot 6 stays */
	nodes[0] = &o[0].node;
	nodes[1] = &o[2].node;
	nodes[2] = &o[1].node;	/* same slot as o[0] */
	nodes[3] = &o[0].node;	/* duplicate */
	nodes[4] = &o[5].node;	/* never added */
	nodes[5] = &o[3].node;
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, 6),
		     2));
	for (i = 0; i < NSLOTS; i++)
		cr_assert(eq(u64, backend_slot_flushes(i, LB_FLUSH_DRAIN_OBJS),
			     i == 0 || i == 2 ? 1 : 0), "slot %u", i);
	for (i = 0; i < 4; i++)
		cr_assert(eq(uint, backend_commits(&o[i]), 1), "obj %u", i);
	cr_assert(eq(uint, backend_commits(&o[4]), 0));
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, 6),
		     0));
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, NULL, 0),
		     0));
	lb_cpubatch_drain_all(backend_fixture.pc);
	cr_assert(eq(uint, backend_commits(&o[4]), 1));
}

Test(drain_objs, validates_every_node_first)
{
	struct lb_cpubatch *other;
	struct test_obj a, f;
	struct lb_node *nodes[2];

	backend_obj_init(&a, 0);
	backend_obj_init(&f, 1);
	backend_add(&a, 1, 1);
	nodes[0] = &a.node;
	nodes[1] = NULL;
	cr_assert(eq(int, lb_cpubatch_drain_objs(NULL, nodes, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, NULL, 1),
		     -EINVAL));
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, 2),
		     -EINVAL));
	other = backend_other(&backend_ops);
	cr_assert(ne(ptr, other, NULL));
	backend_set_cpu(0);
	cr_assert(eq(int, lb_cpubatch_add(other, &f, &f.node, 1), 0));
	nodes[1] = &f.node;
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, 2),
		     -EXDEV));
	cr_assert(eq(uint, backend_commits(&a), 0), "nothing flushed");
	cr_assert(eq(u32, a.node.slot, 2));
	cr_assert(eq(int, lb_cpubatch_destroy(other), 0));
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, 1),
		     1));
	cr_assert(eq(uint, backend_commits(&a) + backend_commits(&f), 2));
}

Test(drain_objs, many_slots_use_a_heap_bitmap)
{
	struct test_obj o[3];
	struct lb_node *nodes[3];
	unsigned int i;

	backend_teardown();
	cr_assert(eq(int, backend_setup(2048, 0), 0));
	for (i = 0; i < 3; i++) {
		backend_obj_init(&o[i], i);
		nodes[i] = &o[i].node;
	}
	backend_add(&o[0], 1500, 1);
	backend_add(&o[1], 2047, 1);
	backend_add(&o[2], 1500, 1);
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, 3),
		     2));
	for (i = 0; i < 3; i++)
		cr_assert(eq(uint, backend_commits(&o[i]), 1));
}

Test(drain_all, skips_empty_slots)
{
	struct test_obj o[5];
	struct lb_cpubatch_stats st;
	unsigned int i;
	static const int slot[5] = { 0, 2, 2, 5, 5 };

	for (i = 0; i < 5; i++) {
		backend_obj_init(&o[i], i);
		backend_add(&o[i], slot[i], 1);
	}
	cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc), 5));
	st = backend_stats();
	cr_assert(eq(u64, st.total.nr_cached, 0));
	cr_assert(eq(u64, st.drain.drain_all_passes, 1));
	cr_assert(eq(u64, st.drain.drain_all_slots_touched, 3),
		  "only the three non-empty slots are locked");
	cr_assert(eq(u64, st.drain.drain_all_slots_max, 3));
	cr_assert(eq(u64, st.total.flushes[LB_FLUSH_DRAIN_ALL], 3));
	for (i = 0; i < 5; i++)
		cr_assert(eq(uint, backend_commits(&o[i]), 1));
	cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	st = backend_stats();
	cr_assert(eq(u64, st.drain.drain_all_slots_touched, 3));
	cr_assert(eq(int, lb_cpubatch_drain_all(NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_drain_all_forced(NULL), -EINVAL));
}

Test(drain_all, forced_visits_every_slot)
{
	struct test_obj a;
	struct lb_cpubatch_stats st;

	backend_obj_init(&a, 0);
	backend_add(&a, 4, 1);
	cr_assert(eq(int, lb_cpubatch_drain_all_forced(backend_fixture.pc), 1));
	st = backend_stats();
	cr_assert(eq(u64, st.drain.drain_all_slots_touched, NSLOTS));
	cr_assert(eq(u64, st.drain.drain_all_forced, 1));
	cr_assert(eq(uint, backend_commits(&a), 1));
}

/*
 * Coalescing: a pass is held inside commit; four callers arrive meanwhile
 * and wait for the mutex. The first of them to get it runs one pass, the
 * other three see the generation move and share it.
 */
static int gate_open, in_commit;

static void hold_commit(struct backend_fixture *f, struct test_backend *be,
			void **objs, unsigned int n)
{
	__atomic_store_n(&in_commit, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void *drain_all_thread(void *arg)
{
	*(int *)arg = lb_cpubatch_drain_all(backend_fixture.pc);
	return NULL;
}

static void wait_flag(int *flag)
{
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
		sched_yield();
}

Test(drain_all, concurrent_callers_share_a_pass)
{
	pthread_t t[5];
	int rc[5];
	struct test_obj a;
	struct lb_cpubatch_stats st;
	unsigned int i;

	gate_open = in_commit = 0;
	backend_obj_init(&a, 0);
	backend_add(&a, 3, 1);
	backend_fixture.on_commit = hold_commit;
	pthread_create(&t[0], NULL, drain_all_thread, &rc[0]);
	wait_flag(&in_commit);
	for (i = 1; i < 5; i++)
		pthread_create(&t[i], NULL, drain_all_thread, &rc[i]);
	/* Every caller has sampled the generation once it is counted. */
	do {
		sched_yield();
		st = backend_stats();
	} while (st.drain.drain_all_calls < 5);
	__atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	st = backend_stats();
	cr_assert(eq(int, rc[0], 1));
	cr_assert(eq(u64, st.drain.drain_all_calls, 5));
	cr_assert(eq(u64, st.drain.drain_all_passes, 2));
	cr_assert(eq(u64, st.drain.drain_all_coalesced, 3));
	cr_assert(eq(uint, backend_commits(&a), 1));
	backend_fixture.on_commit = NULL;
}

/* A pass does not return while another thread's flush of a slot is in flight. */
static int drained_flag;

static void *drain_obj_thread(void *arg)
{
	lb_cpubatch_drain_obj(backend_fixture.pc, arg);
	return NULL;
}

static void *drain_all_flag_thread(void *arg)
{
	lb_cpubatch_drain_all(backend_fixture.pc);
	__atomic_store_n(&drained_flag, 1, __ATOMIC_RELEASE);
	return NULL;
}

Test(drain_all, waits_for_flushes_in_flight)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	struct test_obj a;
	pthread_t t, d;

	gate_open = in_commit = drained_flag = 0;
	backend_obj_init(&a, 0);
	backend_add(&a, 2, 1);
	backend_fixture.on_commit = hold_commit;
	pthread_create(&t, NULL, drain_obj_thread, &a.node);
	wait_flag(&in_commit);
	pthread_create(&d, NULL, drain_all_flag_thread, NULL);
	nanosleep(&ts, NULL);
	cr_assert(eq(int, __atomic_load_n(&drained_flag, __ATOMIC_ACQUIRE), 0),
		  "drain_all returned while a swapped-out batch was uncommitted");
	__atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	pthread_join(d, NULL);
	cr_assert(eq(uint, backend_commits(&a), 1));
	backend_fixture.on_commit = NULL;
}

Test(disable, drains_then_adds_go_straight_through)
{
	struct test_obj o[6];
	struct lb_cpubatch_stats st;
	unsigned int i;

	for (i = 0; i < 6; i++)
		backend_obj_init(&o[i], i);
	backend_add(&o[0], 0, 1);
	backend_add(&o[1], 1, 1);
	backend_add(&o[2], 1, 1);
	cr_assert(eq(int, lb_cpubatch_disable(backend_fixture.pc), 0));
	st = backend_stats();
	cr_assert(eq(u64, st.total.nr_cached, 0));
	cr_assert(eq(u64, st.total.flushes[LB_FLUSH_DISABLE], 2));
	cr_assert(eq(u64, st.drain.drain_all_slots_touched, NSLOTS),
		  "the disable pass is forced");
	cr_assert(eq(u32, st.drain.disable_depth, 1));
	for (i = 0; i < 3; i++)
		cr_assert(eq(uint, backend_commits(&o[i]), 1));
	cr_assert(eq(int, backend_add(&o[3], 5, 1), 1), "committed by the add");
	cr_assert(eq(uint, backend_commits(&o[3]), 1));
	cr_assert(eq(u64, backend_stats().total.flushes[LB_FLUSH_DISABLE], 3));
	cr_assert(eq(int, lb_cpubatch_disable(backend_fixture.pc), 0));
	cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc), 1),
		  "still nested");
	cr_assert(eq(int, backend_add(&o[4], 5, 1), 1));
	cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc), 0));
	cr_assert(eq(int, backend_add(&o[5], 5, 1), 0), "batched again");
	cr_assert(eq(u64, backend_stats().total.nr_cached, 1));
	cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc), -EINVAL),
		  "unbalanced");
	cr_assert(eq(u32, backend_stats().drain.disable_depth, 0));
	lb_cpubatch_drain_all(backend_fixture.pc);
	for (i = 0; i < 6; i++)
		cr_assert(eq(uint, backend_commits(&o[i]), 1), "obj %u", i);
}

Test(disable, weight_bypass_keeps_its_cause)
{
	struct test_obj big;

	backend_obj_init(&big, 0);
	cr_assert(eq(int, lb_cpubatch_disable(backend_fixture.pc), 0));
	cr_assert(eq(int, backend_add(&big, 0, 31), 1));
	cr_assert(eq(u64, backend_stats().total.flushes[LB_FLUSH_BYPASS], 1));
	cr_assert(eq(u64, backend_stats().total.flushes[LB_FLUSH_DISABLE], 0));
	cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc), 0));
}

Test(disable, bad_input)
{
	cr_assert(eq(int, lb_cpubatch_disable(NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_enable(NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc), -EINVAL));
}
