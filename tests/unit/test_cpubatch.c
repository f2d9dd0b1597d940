// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch add/flush core: creation, the three modes, flush causes,
 * per-slot statistics, runs split by back-end, after() outside the lock,
 * get/put balance, re-entrant adds from commit, local drain and destroy.
 * Slots are chosen through the injected CPU-id function, except in the
 * real_cpu_* tests (the process's owner path). "Nothing lost" is checked
 * by counting what the recording back-end received.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include "../common/backend.h"

#define NOBJ 256

static struct test_obj O[NOBJ];
static struct lb_backend_ops ops;
static int cpu_id;

static void setup(void)
{
	unsigned int i;

	cr_assert(eq(int, backend_init(), 0));
	for (i = 0; i < NOBJ; i++)
		backend_obj_init_at(&O[i], i, 0, 1);
	backend_fixture.one_thread = true;
	ops = backend_ops;
	ops.backend_of = backend_of;
	cpu_id = 0;
}

/* Callback-order errors already failed the test that made them. */
static void teardown(void)
{
	backend_teardown();
}

TestSuite(cpubatch, .init = setup, .fini = teardown, .timeout = 10);

static struct lb_cpubatch_conf conf_of(enum lb_cpubatch_mode mode, unsigned int slots,
				   unsigned int max_nr, uint32_t max_weight)
{
	struct lb_cpubatch_conf c = {
		.nr_slots = slots,
		.mode = mode,
		.max_nr = max_nr,
		.max_weight = max_weight,
		.ops = &ops,
		.backend = &backend_fixture.be[0],
		.cpu_fn = backend_cpu_of_arg,
		.cpu_arg = &cpu_id,
	};

	return c;
}

static struct lb_cpubatch *mk(enum lb_cpubatch_mode mode, unsigned int slots,
			  unsigned int max_nr, uint32_t max_weight)
{
	struct lb_cpubatch_conf c = conf_of(mode, slots, max_nr, max_weight);
	struct lb_cpubatch *pc = NULL;

	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(not(eq(ptr, pc, NULL)));
	return pc;
}

static int add(struct lb_cpubatch *pc, unsigned int i, uint32_t weight)
{
	O[i].weight = weight;
	return lb_cpubatch_add(pc, &O[i], &O[i].node, weight);
}

static struct lb_cpubatch_slot_stats slot_st(struct lb_cpubatch *pc, unsigned int idx)
{
	struct lb_cpubatch_slot_stats s[64];
	int n = lb_cpubatch_stats(pc, NULL, s, 64);

	cr_assert(gt(int, n, (int)idx));
	return s[idx];
}

static struct lb_cpubatch_stats total_st(struct lb_cpubatch *pc)
{
	struct lb_cpubatch_stats t;

	cr_assert(gt(int, lb_cpubatch_stats(pc, &t, NULL, 0), 0));
	return t;
}

/* Destroy (drains), then check every one of objects [0, n) arrived once. */
static void destroy_and_check(struct lb_cpubatch *pc, unsigned int n)
{
	unsigned int i;

	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
	for (i = 0; i < n; i++) {
		cr_assert(eq(u32, O[i].commits, 1), "object %u committed %u times",
			  i, O[i].commits);
		cr_assert(eq(long, backend_batch_refs(&O[i]), 0),
			  "object %u refs %ld", i, backend_batch_refs(&O[i]));
		cr_assert(eq(u32, O[i].node.slot, 0));
	}
	cr_assert(eq(u64, backend_fixture.nr_log, n));
	cr_assert(eq(u64, backend_fixture.gets, backend_fixture.puts));
	cr_assert(eq(u64, backend_fixture.errors, 0), "%s",
		  backend_fixture.first_error);
}

Test(cpubatch, create_rejects_bad_input)
{
	struct lb_cpubatch *const sentinel = (struct lb_cpubatch *)&backend_fixture;
	struct lb_cpubatch *pc = sentinel;
	struct lb_backend_ops bad;
	struct lb_cpubatch_conf c;

	c = conf_of(LB_CPUBATCH_WEIGHTED, 2, 0, 0);
	cr_assert(eq(int, lb_cpubatch_create(NULL, &c), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_create(&pc, NULL), -EINVAL));
	c.ops = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	c.ops = &bad;
	bad = backend_ops;
	bad.lock = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	bad = backend_ops;
	bad.unlock = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	bad = backend_ops;
	bad.commit = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));

	c = conf_of((enum lb_cpubatch_mode)3, 2, 0, 0);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	c = conf_of((enum lb_cpubatch_mode)-1, 2, 0, 0);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	c = conf_of(LB_CPUBATCH_WEIGHTED, LB_CPUBATCH_MAX_SLOTS + 1, 0, 0);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	c = conf_of(LB_CPUBATCH_WEIGHTED, UINT_MAX, 0, 0);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	c = conf_of(LB_CPUBATCH_WEIGHTED, 2, LB_WBATCH_MAX + 1, 0);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	c = conf_of(LB_CPUBATCH_WEIGHTED, 2, 0, LB_WBATCH_WEIGHT_MAX + 1);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	cr_assert(eq(ptr, pc, sentinel), "*pcp written on failure");
}

/* Slot count 0 = one per CPU; caps 0 = 31 entries, 31 units. */
Test(cpubatch, create_defaults)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 0, 0, 0);
	struct lb_cpubatch_stats t = total_st(pc);
	unsigned int i;

	cr_assert(eq(uint, t.nr_slots, lb_cpu_count()));
	cr_assert(eq(int, t.cpu_src, LB_CPU_SRC_INJECTED));
	for (i = 0; i < 30; i++)
		cr_assert(eq(int, add(pc, i, 1), 0));
	cr_assert(eq(int, add(pc, 30, 1), 1), "default entry cap is 31");
	cr_assert(eq(u64, slot_st(pc, 0).flushes[LB_FLUSH_FULL], 1));
	for (i = 31; i < 38; i++)
		cr_assert(eq(int, add(pc, i, 4), 0));
	cr_assert(eq(int, add(pc, 38, 4), 1), "default weight cap is 31");
	cr_assert(eq(u64, slot_st(pc, 0).flushes[LB_FLUSH_WEIGHT], 1));
	destroy_and_check(pc, 39);
}

Test(cpubatch, create_accepts_max_slots)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, LB_CPUBATCH_MAX_SLOTS, 0, 0);

	cpu_id = (int)LB_CPUBATCH_MAX_SLOTS - 1;
	cr_assert(eq(int, add(pc, 0, 1), 0));
	cpu_id = (int)LB_CPUBATCH_MAX_SLOTS;	/* folds to slot 0 */
	cr_assert(eq(int, add(pc, 1, 1), 0));
	cr_assert(eq(u32, O[0].node.slot, LB_CPUBATCH_MAX_SLOTS));
	cr_assert(eq(u32, O[1].node.slot, 1));
	destroy_and_check(pc, 2);
}

Test(cpubatch, add_rejects_bad_input_nothing_changed)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 2, 0, 0);
	struct lb_cpubatch_stats t;

	cr_assert(eq(int, lb_cpubatch_add(NULL, &O[0], &O[0].node, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, NULL, &O[0].node, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node, 0), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node,
				      LB_WBATCH_WEIGHT_MAX + 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node, UINT32_MAX),
		     -EINVAL));
	t = total_st(pc);
	cr_assert(eq(u64, t.total.adds, 0));
	cr_assert(eq(u64, t.total.nr_cached, 0));
	cr_assert(eq(u32, O[0].node.slot, 0));
	cr_assert(eq(u32, O[0].node.owner, 0));
	cr_assert(eq(u64, backend_fixture.gets, 0));
	/* The largest weight is accepted and never waits. */
	cr_assert(eq(int, add(pc, 0, LB_WBATCH_WEIGHT_MAX), 1));
	destroy_and_check(pc, 1);
}

Test(cpubatch, add_same_node_twice_eexist_nothing_changed)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 0);
	struct lb_cpubatch *other = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 0);
	struct lb_cpubatch_stats t;

	cpu_id = 1;
	cr_assert(eq(int, add(pc, 0, 3), 0));
	cr_assert(eq(int, add(pc, 0, 3), -EEXIST), "same slot");
	cpu_id = 2;
	cr_assert(eq(int, add(pc, 0, 1), -EEXIST), "another slot");
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[1], &O[0].node, 1), -EEXIST),
		  "another object, same node");
	cr_assert(eq(int, add(other, 0, 1), -EEXIST), "another lb_cpubatch");
	t = total_st(pc);
	cr_assert(eq(u64, t.total.adds, 1));
	cr_assert(eq(u64, t.total.weight_added, 3));
	cr_assert(eq(u64, t.total.nr_cached, 1));
	cr_assert(eq(u64, slot_st(pc, 1).nr_cached, 1));
	cr_assert(eq(u64, slot_st(pc, 2).nr_cached, 0));
	cr_assert(eq(u64, total_st(other).total.adds, 0));
	cr_assert(eq(u32, O[0].node.slot, 2));
	cr_assert(eq(u64, backend_fixture.gets, 1),
		  "a rejected add took a reference");
	cr_assert(eq(int, lb_cpubatch_destroy(other), 0));
	destroy_and_check(pc, 1);
	cr_assert(eq(u32, O[1].commits, 0));
}

Test(cpubatch, node_tracks_slot_home_owner)
{
	struct lb_cpubatch *a = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 0);
	struct lb_cpubatch *b = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 0);
	uint32_t owner_a;

	cpu_id = 3;
	add(a, 0, 1);
	cr_assert(eq(u32, O[0].node.slot, 4));
	cr_assert(eq(u32, LB_NODE_HOME_SLOT(O[0].node.home), 4));
	cr_assert(ne(u32, O[0].node.owner, 0));
	owner_a = O[0].node.owner;
	cr_assert(eq(int, lb_cpubatch_drain_local(a), 1));
	cr_assert(eq(u32, O[0].node.slot, 0), "not cached after the flush");
	cr_assert(eq(u32, LB_NODE_HOME_SLOT(O[0].node.home), 4),
		  "home is never cleared");
	/* Committed objects may be added again, here to another lb_cpubatch. */
	cpu_id = 1;
	cr_assert(eq(int, add(b, 0, 1), 0));
	cr_assert(eq(u32, LB_NODE_HOME_SLOT(O[0].node.home), 2));
	cr_assert(ne(u32, O[0].node.owner, owner_a));
	cr_assert(eq(int, lb_cpubatch_destroy(a), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(b), 0));
	cr_assert(eq(u32, O[0].commits, 2));
	cr_assert(eq(long, backend_batch_refs(&O[0]), 0));
}

Test(cpubatch, baseline_locks_per_object)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_BASELINE, 2, 0, 0);
	unsigned int i;

	for (i = 0; i < 20; i++)
		cr_assert(eq(int, add(pc, i, 1 + i % 30), 1), "add %u", i);
	cr_assert(eq(u64, backend_fixture.nr_log, 20));
	cr_assert(eq(u64, backend_fixture.locks, 20));
	cr_assert(eq(u64, total_st(pc).backend_locks, 20));
	cr_assert(eq(u64, slot_st(pc, 0).flushes[LB_FLUSH_FULL], 20));
	cr_assert(eq(u64, slot_st(pc, 0).nr_cached, 0));
	/* Even the largest weight is an ordinary per-object commit here. */
	cr_assert(eq(int, add(pc, 20, LB_WBATCH_WEIGHT_MAX), 1));
	cr_assert(eq(u64, slot_st(pc, 0).flushes[LB_FLUSH_FULL], 21));
	cr_assert(eq(u64, slot_st(pc, 0).flushes[LB_FLUSH_BYPASS], 0));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 0));
	destroy_and_check(pc, 21);
	cr_assert(eq(u64, backend_fixture.locks, 21),
		  "nothing left for destroy");
}

Test(cpubatch, bypass_large_flushes_on_any_large)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_BYPASS_LARGE, 2, 0, 0);
	struct lb_cpubatch_slot_stats s;
	unsigned int i;

	for (i = 0; i < 30; i++)
		cr_assert(eq(int, add(pc, i, 1), 0));
	cr_assert(eq(int, add(pc, 30, 1), 1), "31st single-unit add");
	for (i = 31; i < 34; i++)
		cr_assert(eq(int, add(pc, i, 1), 0));
	cr_assert(eq(int, add(pc, 34, 2), 1), "weight 2 flushes at once");
	s = slot_st(pc, 0);
	cr_assert(eq(u64, s.flushes[LB_FLUSH_FULL], 1));
	cr_assert(eq(u64, s.flushes[LB_FLUSH_BYPASS], 1));
	cr_assert(eq(u64, s.objs_flushed, 35));
	cr_assert(eq(u64, s.weight_flushed, 36));
	cr_assert(eq(u64, backend_fixture.locks, 2));
	for (i = 0; i < 35; i++)
		cr_assert(eq(u32, backend_fixture.log[i], i),
			  "commit order at %u", i);
	destroy_and_check(pc, 35);
}

Test(cpubatch, weighted_flushes_by_entries_weight_and_bypass)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 2, 0, 0);
	struct lb_cpubatch_slot_stats s;
	unsigned int i;

	/* 16K objects: 7 wait (28 units), the 8th takes it to 32 > 31. */
	for (i = 0; i < 7; i++)
		cr_assert(eq(int, add(pc, i, 4), 0));
	cr_assert(eq(int, add(pc, 7, 4), 1));
	/* Single units: exactly folio_batch, a flush every 31st. */
	for (i = 8; i < 38; i++)
		cr_assert(eq(int, add(pc, i, 1), 0));
	cr_assert(eq(int, add(pc, 38, 1), 1));
	/* 128K: reaches the cap alone, never waits, even in an empty batch. */
	cr_assert(eq(int, add(pc, 39, 32), 1));
	s = slot_st(pc, 0);
	cr_assert(eq(u64, s.flushes[LB_FLUSH_WEIGHT], 1));
	cr_assert(eq(u64, s.flushes[LB_FLUSH_FULL], 1));
	cr_assert(eq(u64, s.flushes[LB_FLUSH_BYPASS], 1));
	cr_assert(eq(u64, s.objs_flushed, 40));
	cr_assert(eq(u64, s.weight_flushed, 32 + 31 + 32));
	cr_assert(eq(u64, s.adds, 40));
	cr_assert(eq(u64, s.weight_added, 32 + 31 + 32));
	cr_assert(eq(u64, backend_fixture.locks, 3));
	destroy_and_check(pc, 40);
}

/* C13 through lb_cpubatch: the same flush points, with their causes. */
Test(cpubatch, c13_weight_boundaries)
{
	static const uint32_t w[] = { 1, 4, 16, 4, 4, 2, 31, 30, 32 };
	static const int flushed[] = { 0, 0, 0, 0, 0, 0, 1, 0, 1 };
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 1, 31, 31);
	struct lb_cpubatch_slot_stats s;
	unsigned int i;

	for (i = 0; i < 9; i++) {
		cr_assert(eq(int, add(pc, i, w[i]), flushed[i]),
			  "C13 add %u (weight %u)", i, w[i]);
		s = slot_st(pc, 0);
		cr_assert(le(u64, s.weight_cached, 31),
			  "a waiting batch holds at most 31 units");
		if (i == 5)
			cr_assert(eq(u64, s.weight_cached, 31));
		if (i == 6) {
			cr_assert(eq(u64, backend_fixture.nr_log, 7));
			cr_assert(eq(u64, s.flushes[LB_FLUSH_BYPASS], 1));
			cr_assert(eq(u64, s.weight_flushed, 62));
		}
		if (i == 7)
			cr_assert(eq(u64, s.weight_cached, 30));
	}
	s = slot_st(pc, 0);
	cr_assert(eq(u64, s.flushes[LB_FLUSH_BYPASS], 2));
	cr_assert(eq(u64, s.flushes[LB_FLUSH_FULL] + s.flushes[LB_FLUSH_WEIGHT],
		     0));
	cr_assert(eq(u64, s.objs_flushed, 9));
	cr_assert(eq(u64, s.weight_flushed, 124));
	cr_assert(eq(u64, backend_fixture.locks, 2));
	for (i = 0; i < 9; i++)
		cr_assert(eq(u32, backend_fixture.log[i], i));
	destroy_and_check(pc, 9);
}

Test(cpubatch, drain_local_flushes_only_current_slot)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 3, 0, 0);
	unsigned int i;

	cr_assert(eq(int, lb_cpubatch_drain_local(NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 0), "empty slot");
	cr_assert(eq(u64, backend_fixture.locks, 0),
		  "an empty drain takes no lock");
	for (i = 0; i < 9; i++) {
		cpu_id = (int)(i % 3);
		add(pc, i, 2);
	}
	cpu_id = 1;
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 3));
	cr_assert(eq(u64, backend_fixture.nr_log, 3));
	cr_assert(eq(u32, backend_fixture.log[0], 1));
	cr_assert(eq(u32, backend_fixture.log[1], 4));
	cr_assert(eq(u32, backend_fixture.log[2], 7));
	cr_assert(eq(u64, slot_st(pc, 1).flushes[LB_FLUSH_DRAIN_LOCAL], 1));
	cr_assert(eq(u64, slot_st(pc, 1).nr_cached, 0));
	cr_assert(eq(u64, slot_st(pc, 0).flushes[LB_FLUSH_DRAIN_LOCAL], 0));
	cr_assert(eq(u64, slot_st(pc, 0).nr_cached, 3));
	cr_assert(eq(u64, slot_st(pc, 2).nr_cached, 3));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 0), "drained already");
	cpu_id = 5;	/* folds to slot 2 */
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 3));
	destroy_and_check(pc, 9);
}

Test(cpubatch, stats_rejects_bad_input)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 3, 0, 0);
	struct lb_cpubatch_stats t;

	cr_assert(eq(int, lb_cpubatch_stats(NULL, &t, NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_stats(pc, &t, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_stats(pc, NULL, NULL, 0), 3));
	destroy_and_check(pc, 0);
}

Test(cpubatch, stats_per_slot_and_total)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 8);
	struct lb_cpubatch_slot_stats s[4];
	struct lb_cpubatch_stats t;

	memset(s, 0xa5, sizeof(s));
	cpu_id = 0;
	add(pc, 0, 3);
	add(pc, 1, 3);
	add(pc, 2, 3);		/* 9 > 8: weight flush of 3 objects */
	add(pc, 3, 2);
	cpu_id = 2;
	add(pc, 4, 8);		/* bypass */
	add(pc, 5, 1);
	cr_assert(eq(int, lb_cpubatch_stats(pc, &t, s, 3), 4));
	cr_assert(eq(u64, s[0].adds, 4));
	cr_assert(eq(u64, s[0].weight_added, 11));
	cr_assert(eq(u64, s[0].flushes[LB_FLUSH_WEIGHT], 1));
	cr_assert(eq(u64, s[0].objs_flushed, 3));
	cr_assert(eq(u64, s[0].weight_flushed, 9));
	cr_assert(eq(u64, s[0].nr_cached, 1));
	cr_assert(eq(u64, s[0].weight_cached, 2));
	cr_assert(eq(u64, s[1].adds, 0));
	cr_assert(eq(u64, s[2].adds, 2));
	cr_assert(eq(u64, s[2].flushes[LB_FLUSH_BYPASS], 1));
	cr_assert(eq(u64, s[2].nr_cached, 1));
	cr_assert(eq(u64, t.total.adds, 6));
	cr_assert(eq(u64, t.total.weight_added, 20));
	cr_assert(eq(u64, t.total.objs_flushed, 4));
	cr_assert(eq(u64, t.total.weight_flushed, 17));
	cr_assert(eq(u64, t.total.nr_cached, 2));
	cr_assert(eq(u64, t.total.weight_cached, 3));
	cr_assert(eq(u64, t.backend_locks, 2));
	cr_assert(eq(uint, t.nr_slots, 4));
	cr_assert(eq(int, t.cpu_src, LB_CPU_SRC_INJECTED));
	/* Slot 3 was summed into the total, never written to s[3]. */
	cpu_id = 3;
	add(pc, 6, 5);
	memset(&s[3], 0xa5, sizeof(s[3]));
	lb_cpubatch_stats(pc, &t, s, 3);
	cr_assert(eq(u64, t.total.adds, 7));
	cr_assert(eq(u64, s[3].adds, 0xa5a5a5a5a5a5a5a5ull));
	destroy_and_check(pc, 7);
}

Test(cpubatch, stats_report_real_cpu_source)
{
	struct lb_cpubatch_conf c = conf_of(LB_CPUBATCH_WEIGHTED, 2, 0, 0);
	struct lb_cpubatch *pc;

	c.cpu_fn = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, total_st(pc).cpu_src, lb_cpu_source()));
	lb_cpubatch_destroy(pc);
}

/* Without an injected source the slot is the current CPU's. */
Test(cpubatch, real_cpu_picks_current_slot)
{
	struct lb_cpubatch_conf c = conf_of(LB_CPUBATCH_WEIGHTED, 3, 0, 0);
	struct lb_cpubatch *pc;
	cpu_set_t orig, one;
	int cpu, i = 0;

	c.cpu_fn = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, sched_getaffinity(0, sizeof(orig), &orig), 0));
	for (cpu = 0; cpu < CPU_SETSIZE && i < 4; cpu++) {
		if (!CPU_ISSET(cpu, &orig))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		cr_assert(eq(int, sched_setaffinity(0, sizeof(one), &one), 0));
		cr_assert(eq(int, add(pc, (unsigned int)i, 1), 0));
		cr_assert(eq(u32, O[i].node.slot, (uint32_t)(cpu % 3) + 1),
			  "cpu %d", cpu);
		i++;
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	destroy_and_check(pc, (unsigned int)i);
}

Test(cpubatch, flush_cause_names)
{
	static const char *const names[LB_FLUSH_NR] = {
		"full", "weight", "bypass", "drain_local", "drain_obj",
		"drain_objs", "drain_all", "disable", "destroy",
	};
	int c;

	for (c = 0; c < LB_FLUSH_NR; c++)
		cr_assert(eq(str, (char *)lb_cpubatch_flush_cause_name(c),
			     (char *)names[c]));
	cr_assert(eq(str, (char *)lb_cpubatch_flush_cause_name(LB_FLUSH_NR),
		     "invalid"));
	cr_assert(eq(str, (char *)lb_cpubatch_flush_cause_name(-1), "invalid"));
}

/* C10: ids at or above the slot count fold; negative ids select slot 0. */
Test(cpubatch, c10_cpu_ids_out_of_range)
{
	static const int ids[] = { 0, 3, 4, 7, 1003, INT_MAX, -1, INT_MIN,
				   -ENOSYS };
	static const unsigned int slot[] = { 0, 3, 0, 3, 3, INT_MAX % 4, 0, 0,
					     0 };
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 0);
	uint64_t want[4] = { 0 };
	unsigned int i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		cpu_id = ids[i];
		cr_assert(eq(int, add(pc, i, 1), 0));
		cr_assert(eq(u32, O[i].node.slot, slot[i] + 1), "cpu id %d",
			  ids[i]);
		want[slot[i]]++;
	}
	for (i = 0; i < 4; i++)
		cr_assert(eq(u64, slot_st(pc, i).nr_cached, want[i]),
			  "slot %u", i);
	cpu_id = -1;
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), (int)want[0]));
	destroy_and_check(pc, sizeof(ids) / sizeof(ids[0]));
}

/* A CPU id that changes on every call spreads adds but loses nothing. */
static int cpu_rotating(void *arg)
{
	int *n = arg;

	return (*n)++ * 7 - 5;
}

Test(cpubatch, c10_cpu_id_changing_between_calls)
{
	struct lb_cpubatch_conf c = conf_of(LB_CPUBATCH_WEIGHTED, 3, 4, 6);
	struct lb_cpubatch *pc;
	int calls = 0;
	unsigned int i;

	c.cpu_fn = cpu_rotating;
	c.cpu_arg = &calls;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	for (i = 0; i < 200; i++) {
		cr_assert(ge(int, add(pc, i, 1 + i % 5), 0));
		if (i % 17 == 0)
			cr_assert(ge(int, lb_cpubatch_drain_local(pc), 0));
	}
	cr_assert(eq(u64, total_st(pc).total.adds, 200));
	destroy_and_check(pc, 200);
}

/*
 * One batch holding objects of three back-ends: committed in runs, the
 * lock taken again only where the back-end changes.
 */
Test(cpubatch, runs_split_by_backend)
{
	static const unsigned int be[] = { 0, 0, 1, 1, 1, 0, 2, 2 };
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 1, 8, 0);
	unsigned int i;

	for (i = 0; i < 8; i++) {
		O[i].be = be[i];
		cr_assert(eq(int, add(pc, i, 1), i == 7));
	}
	cr_assert(eq(u64, backend_fixture.locks, 4));
	cr_assert(eq(u64, backend_fixture.be[0].locks, 2));
	cr_assert(eq(u64, backend_fixture.be[1].locks, 1));
	cr_assert(eq(u64, backend_fixture.be[2].locks, 1));
	cr_assert(eq(u64, backend_fixture.be[0].runs, 2));
	cr_assert(eq(u32, backend_fixture.max_run, 3));
	cr_assert(eq(u64, total_st(pc).backend_locks, 4));
	for (i = 0; i < 8; i++)
		cr_assert(eq(u32, backend_fixture.log[i], i), "commit order");
	cr_assert(eq(u64, backend_fixture.after_calls, 4),
		  "after() once per run");
	cr_assert(eq(u64, backend_fixture.after_objs, 8));
	/* All of one back-end: one lock for the whole batch. */
	for (i = 8; i < 16; i++)
		add(pc, i, 1);
	cr_assert(eq(u64, backend_fixture.locks, 5));
	destroy_and_check(pc, 16);
}

Test(cpubatch, single_backend_without_backend_of)
{
	struct lb_cpubatch *pc;
	unsigned int i;

	ops.backend_of = NULL;
	pc = mk(LB_CPUBATCH_WEIGHTED, 1, 8, 0);
	for (i = 0; i < 8; i++)
		O[i].be = 0;
	for (i = 0; i < 8; i++)
		add(pc, i, 1);
	cr_assert(eq(u64, backend_fixture.be[0].locks, 1));
	destroy_and_check(pc, 8);
}

/* after() sees the back-end unlocked (backend_after counts a violation). */
static void after_checks_lock(struct backend_fixture *f,
			      struct test_backend *be,
			      void **objs, unsigned int n)
{
	/* A spinlock we can take here is not held by anyone. */
	lb_lock_acquire(&be->lock);
	lb_lock_release(&be->lock);
	f->arg = be;
}

Test(cpubatch, after_runs_outside_backend_lock)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 2, 4, 0);
	unsigned int i;

	backend_fixture.on_after = after_checks_lock;
	for (i = 0; i < 12; i++) {
		O[i].be = i / 2 % 2;
		add(pc, i, 1);
	}
	cr_assert(eq(u64, backend_fixture.after_objs, 12));
	cr_assert(eq(u64, backend_fixture.after_calls, 6));
	cr_assert(not(eq(ptr, backend_fixture.arg, NULL)));
	destroy_and_check(pc, 12);
}

Test(cpubatch, optional_callbacks_may_be_null)
{
	struct lb_cpubatch *pc;
	unsigned int i;

	ops.after = NULL;
	ops.get = NULL;
	ops.put = NULL;
	ops.backend_of = NULL;
	pc = mk(LB_CPUBATCH_BYPASS_LARGE, 2, 0, 0);
	for (i = 0; i < 40; i++)
		add(pc, i, 1 + (i % 9 == 0));
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
	for (i = 0; i < 40; i++)
		cr_assert(eq(u32, O[i].commits, 1));
	cr_assert(eq(u64,
		     backend_fixture.gets + backend_fixture.puts + backend_fixture.after_calls, 0));
	cr_assert(eq(u64, backend_fixture.errors, 0), "%s",
		  backend_fixture.first_error);
}

/* The batch holds exactly one reference per cached object. */
Test(cpubatch, get_put_balance)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 3, 0, 0);
	struct lb_cpubatch_stats t;
	unsigned int i, held;

	for (i = 0; i < 150; i++) {
		cpu_id = (int)(i % 3);
		add(pc, i, 1 + i % 7);
		t = total_st(pc);
		cr_assert(eq(u64, backend_fixture.gets - backend_fixture.puts,
			     t.total.nr_cached),
			  "after add %u", i);
	}
	for (i = 0, held = 0; i < 150; i++) {
		cr_assert(eq(long, backend_batch_refs(&O[i]),
			     O[i].node.slot ? 1 : 0));
		held += backend_batch_refs(&O[i]);
	}
	cr_assert(eq(u64, held, total_st(pc).total.nr_cached));
	destroy_and_check(pc, 150);
}

/*
 * C07: commit adds more objects to the same lb_cpubatch, enough to flush the
 * slot again from inside commit. The back-end lock is a real spinlock:
 * taking it again would hang until the timeout.
 */
static unsigned int reentrant_next;
static unsigned int reentrant_end;
static int reentrant_rc[NOBJ];

static void commit_adds(struct backend_fixture *f, struct test_backend *be,
			void **objs,
			unsigned int n)
{
	struct lb_cpubatch *pc = f->arg;
	unsigned int k;

	/* Each commit adds up to 3 more, until the supply runs out. */
	for (k = 0; k < 3 && reentrant_next < reentrant_end; k++) {
		unsigned int i = reentrant_next++;

		O[i].weight = 1;
		reentrant_rc[i] = lb_cpubatch_add(pc, &O[i], &O[i].node, 1);
		if (reentrant_rc[i] == -EAGAIN)
			reentrant_next--;	/* retried by a later commit */
	}
}

Test(cpubatch, c07_reentrant_add_from_commit, .timeout = 5)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 2, 4, 0);
	unsigned int i;

	backend_fixture.arg = pc;
	backend_fixture.on_commit = commit_adds;
	backend_fixture.put_uncommitted_ok = true;	/* an -EAGAIN add is put back */
	reentrant_next = 8;
	reentrant_end = 60;
	for (i = 0; i < 8; i++)
		cr_assert(ge(int, add(pc, i, 1), 0));
	while (reentrant_next < reentrant_end)
		cr_assert(ge(int, lb_cpubatch_drain_local(pc), 0));
	for (i = 8; i < 60; i++)
		cr_assert(ge(int, reentrant_rc[i], 0), "object %u rc %d", i,
			  reentrant_rc[i]);
	backend_fixture.on_commit = NULL;
	cr_assert(eq(u64, total_st(pc).total.adds, 60));
	destroy_and_check(pc, 60);
	cr_assert(eq(u64, backend_fixture.gets, 60));
}

/*
 * A re-entrant add that finds too many batches queued is refused with
 * -EAGAIN and changes nothing (BASELINE: every re-entrant add flushes).
 */
static int eagain_at = -1;

static void commit_adds_until_eagain(struct backend_fixture *f,
				     struct test_backend *be,
				     void **objs, unsigned int n)
{
	struct lb_cpubatch *pc = f->arg;
	unsigned int i;
	int rc;

	if (eagain_at >= 0 || ((struct test_obj *)objs[0])->id != 0)
		return;
	for (i = 1; i < 64; i++) {
		O[i].weight = 1;
		rc = lb_cpubatch_add(pc, &O[i], &O[i].node, 1);
		if (rc == -EAGAIN) {
			eagain_at = (int)i;
			return;
		}
		cr_assert(eq(int, rc, 1), "queued behind the outer flush");
	}
}

Test(cpubatch, reentrant_add_eagain_nothing_changed, .timeout = 5)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_BASELINE, 1, 0, 0);
	struct lb_cpubatch_stats t;
	unsigned int i;

	backend_fixture.arg = pc;
	backend_fixture.on_commit = commit_adds_until_eagain;
	backend_fixture.put_uncommitted_ok = true;
	cr_assert(eq(int, add(pc, 0, 1), 1));
	cr_assert(gt(int, eagain_at, 1), "at least one batch was queued");
	cr_assert(eq(u32, O[eagain_at].node.slot, 0));
	cr_assert(eq(u32, O[eagain_at].commits, 0));
	cr_assert(eq(long, backend_batch_refs(&O[eagain_at]), 0),
		  "its reference was put");
	t = total_st(pc);
	cr_assert(eq(u64, t.total.adds, (uint64_t)eagain_at));
	cr_assert(eq(u64, backend_fixture.nr_log, (uint64_t)eagain_at),
		  "every accepted add committed by the outer flush");
	for (i = 0; i < (unsigned int)eagain_at; i++)
		cr_assert(eq(u32, O[i].commits, 1));
	/* Refused, not lost: the caller can add it again later. */
	backend_fixture.on_commit = NULL;
	cr_assert(eq(int, add(pc, (unsigned int)eagain_at, 1), 1));
	destroy_and_check(pc, (unsigned int)eagain_at + 1);
}

Test(cpubatch, destroy_rejects_null)
{
	cr_assert(eq(int, lb_cpubatch_destroy(NULL), -EINVAL));
}

/* Destroy drains every slot first: the back-end receives everything. */
Test(cpubatch, destroy_drains_everything)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 5, 0, 0);
	unsigned int i;

	for (i = 0; i < 100; i++) {
		cpu_id = (int)(i * 3 % 5);
		O[i].be = i % 3;
		add(pc, i, 1 + i % 6);
	}
	cr_assert(gt(u64, total_st(pc).total.nr_cached, 0));
	destroy_and_check(pc, 100);
}

/*
 * Destroy while this thread holds a slot lock (get() runs under it): the
 * call fails with -EBUSY and nothing is drained, freed or left locked.
 */
static int destroy_rc = 1;

static void destroy_once(struct backend_fixture *f)
{
	if (destroy_rc == 1)
		destroy_rc = lb_cpubatch_destroy(f->arg);
}

static void get_destroys(struct backend_fixture *f, struct test_obj *o)
{
	destroy_once(f);
}

Test(cpubatch, destroy_with_slot_lock_held_ebusy, .timeout = 5)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 4, 0, 0);
	unsigned int i;

	backend_fixture.arg = pc;
	for (i = 0; i < 6; i++) {
		cpu_id = (int)(i % 2);
		add(pc, i, 2);
	}
	backend_fixture.on_get = get_destroys;
	cpu_id = 2;
	cr_assert(eq(int, add(pc, 6, 2), 0));
	backend_fixture.on_get = NULL;
	cr_assert(eq(int, destroy_rc, -EBUSY));
	cr_assert(eq(u64, backend_fixture.nr_log, 0), "nothing drained");
	cr_assert(eq(u64, total_st(pc).total.nr_cached, 7));
	/* Slots 0 and 1 were trylocked by destroy: they must be free again. */
	for (i = 7; i < 11; i++) {
		cpu_id = (int)(i % 4);
		cr_assert(eq(int, add(pc, i, 2), 0));
	}
	destroy_and_check(pc, 11);
}

/*
 * Destroy from after(): its own flush is still in flight. The calling
 * context is checked before the slots: -EDEADLK, nothing changed.
 */
static void after_destroys(struct backend_fixture *f, struct test_backend *be,
			   void **objs,
			   unsigned int n)
{
	destroy_once(f);
}

Test(cpubatch, destroy_from_own_callback_edeadlk, .timeout = 5)
{
	struct lb_cpubatch *pc = mk(LB_CPUBATCH_WEIGHTED, 2, 4, 0);
	unsigned int i;

	backend_fixture.arg = pc;
	backend_fixture.on_after = after_destroys;
	cpu_id = 1;
	add(pc, 0, 1);
	for (i = 1; i < 4; i++)
		add(pc, i, 1);
	backend_fixture.on_after = NULL;
	cr_assert(eq(int, destroy_rc, -EDEADLK));
	cr_assert(eq(u64, backend_fixture.nr_log, 4));
	cpu_id = 0;
	add(pc, 4, 1);
	destroy_and_check(pc, 5);
}

/* The owner path is fixed per instance and reported in its stats. */
Test(cpubatch, owner_path_per_instance)
{
	struct lb_cpubatch_conf c = conf_of(LB_CPUBATCH_WEIGHTED, 0, 0, 0);
	struct lb_cpubatch *pc = NULL;

	c.flags = ~LB_CPUBATCH_F_ALL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), -EINVAL));
	cr_assert(eq(ptr, pc, NULL));
	c.flags = LB_CPUBATCH_F_LOCK_PATH;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, total_st(pc).path, LB_CPU_PATH_LOCK), "conf flag");
	lb_cpubatch_destroy(pc);
	c.flags = 0;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, total_st(pc).path, LB_CPU_PATH_LOCK), "injected CPU");
	lb_cpubatch_destroy(pc);
	c.cpu_fn = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, total_st(pc).path, lb_cpu_path()), "real CPU");
	lb_cpubatch_destroy(pc);
	c.nr_slots = 1;	/* fewer slots than CPU ids where there are 2+ */
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	if (lb_cpu_count() > 1)
		cr_assert(eq(int, total_st(pc).path, LB_CPU_PATH_LOCK),
			  "one slot");
	lb_cpubatch_destroy(pc);
}

/*
 * Real CPU, whichever path the process has: each add lands in the slot of
 * the CPU it is pinned to, with node tracking as on the lock path; an add
 * that fills the batch flushes; a drain from another CPU finds the node.
 */
Test(cpubatch, real_cpu_node_tracking_and_remote_drain)
{
	struct lb_cpubatch_conf c = conf_of(LB_CPUBATCH_WEIGHTED, 0, 4, 8);
	struct lb_cpubatch *pc;
	cpu_set_t orig, one;
	int cpu, first = -1, n = 0;

	c.cpu_fn = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, sched_getaffinity(0, sizeof(orig), &orig), 0));
	for (cpu = 0; cpu < CPU_SETSIZE && n < 12; cpu++) {
		if (!CPU_ISSET(cpu, &orig) || cpu >= (int)lb_cpu_count())
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		cr_assert(eq(int, sched_setaffinity(0, sizeof(one), &one), 0));
		if (first < 0)
			first = cpu;
		for (; n % 6 != 5; n++) {
			cr_assert(eq(int, add(pc, (unsigned int)n, 1),
				     n % 6 == 3 ? 1 : 0));
			if (n % 6 == 3)	/* 4th of the slot: flushed */
				continue;
			cr_assert(eq(u32, O[n].node.slot, (uint32_t)cpu + 1));
			cr_assert(eq(u32, LB_NODE_HOME_SLOT(O[n].node.home),
				     (uint32_t)cpu + 1));
			cr_assert(ne(u32, O[n].node.owner, 0));
			cr_assert(eq(int, add(pc, (unsigned int)n, 1), -EEXIST));
		}
		n++;	/* object n % 6 == 5 stays unused */
	}
	cr_assert(ge(int, first, 0));
	cr_assert(eq(u32, O[0].commits, 1), "flushed by the 4th add");
	/* O[4] is cached in first's slot; drain it from the last CPU. */
	cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &O[4].node), 1));
	cr_assert(eq(u32, O[4].commits, 1));
	cr_assert(eq(u32, O[4].node.slot, 0));
	sched_setaffinity(0, sizeof(orig), &orig);
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
	for (cpu = 0; cpu < n; cpu++)
		if (cpu % 6 != 5)
			cr_assert(eq(u32, O[cpu].commits, 1), "object %d", cpu);
}

/*
 * Real CPU without @get, whichever path the process has (on the rseq path
 * that add's section runs inline in lb_cpubatch_add(), whose weight limit
 * test is also the weight's validation): bad input is refused with nothing
 * changed, adds within the caps wait, a cached node is refused, the add
 * that reaches the count cap flushes, a weight at the weight cap bypasses,
 * and every object arrives once.
 */
Test(cpubatch, real_cpu_without_get)
{
	struct lb_cpubatch_conf c = conf_of(LB_CPUBATCH_WEIGHTED, 0, 4, 8);
	struct lb_cpubatch *pc;
	struct lb_cpubatch_stats t;
	cpu_set_t orig, one;
	int cpu = lb_cpu_current();

	ops.get = NULL;
	ops.put = NULL;
	c.cpu_fn = NULL;
	cr_assert(eq(int, sched_getaffinity(0, sizeof(orig), &orig), 0));
	cr_assert(ge(int, cpu, 0));
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);	/* one slot: the flush below is the count's */
	cr_assert(eq(int, sched_setaffinity(0, sizeof(one), &one), 0));
	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	cr_assert(eq(int, total_st(pc).path, lb_cpu_path()));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node, 0), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node,
				      LB_WBATCH_WEIGHT_MAX + 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node, UINT32_MAX),
		     -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, NULL, &O[0].node, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], NULL, 1), -EINVAL));
	cr_assert(eq(u32, O[0].node.slot, 0));
	cr_assert(eq(u32, O[0].node.owner, 0));
	cr_assert(eq(u64, total_st(pc).total.nr_cached, 0));

	cr_assert(eq(int, add(pc, 0, 1), 0));
	cr_assert(eq(int, add(pc, 0, 1), -EEXIST));
	cr_assert(eq(int, add(pc, 1, 2), 0));
	cr_assert(eq(int, add(pc, 2, 3), 0));
	cr_assert(eq(u32, O[2].node.slot, (uint32_t)cpu + 1));
	cr_assert(eq(u32, LB_NODE_HOME_SLOT(O[2].node.home), (uint32_t)cpu + 1));
	t = total_st(pc);
	cr_assert(eq(u64, t.total.nr_cached, 3));
	cr_assert(eq(u64, t.total.weight_cached, 6));
	cr_assert(eq(int, add(pc, 3, 2), 1), "4th entry: the count cap");
	cr_assert(eq(int, add(pc, 4, 8), 1), "weight at the cap: bypass");
	t = total_st(pc);
	cr_assert(eq(u64, t.total.flushes[LB_FLUSH_FULL], 1));
	cr_assert(eq(u64, t.total.flushes[LB_FLUSH_BYPASS], 1));
	cr_assert(eq(u64, t.total.adds, 5));
	cr_assert(eq(u64, t.total.weight_added, 16));
	sched_setaffinity(0, sizeof(orig), &orig);
	destroy_and_check(pc, 5);
	cr_assert(eq(u64, backend_fixture.gets, 0));
}
