// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario cases C16-C19 (tests/cases.md, second set) on lb_pcp: objects
 * stranded in other slots, idle slots, configurations that never flush,
 * and a double free handed out twice in debug mode.
 */
#include <errno.h>
#include <pthread.h>

#include <lockbatch/pcp.h>
#include "../common/pcp_fixture.h"

static __thread int my_cpu = -1;

/* The thread's own slot when set, else the shared injected one. */
static int strand_cpu(void *arg)
{
	return my_cpu >= 0 ? my_cpu : tb_cpu(arg);
}

static void strand_setup(void)
{
	setup();
	fixture_cpu_fn = strand_cpu;
}

TestSuite(pcp_strand, .init = strand_setup, .fini = teardown);

static struct lb_pcp_slot_stats slot_stats(unsigned int slot)
{
	struct lb_pcp_slot_stats ss[LB_PCP_MAX_SLOTS];

	lb_pcp_stats(pcp_cache, NULL, ss, LB_PCP_MAX_SLOTS);
	return ss[slot];
}

static uint64_t cached_units(void)
{
	struct lb_pcp_stats st;

	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	return (uint64_t)st.total.count;
}

/* refills + flushes + decay drains + drains == back-end lock holds. */
static void assert_holds_add_up(void)
{
	struct lb_pcp_stats st;
	const struct lb_pcp_slot_stats *t = &st.total;

	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	cr_assert(eq(u64, t->refills + t->flushes + t->decay_drains + t->drains,
		     st.backend_locks));
}

/* A cache over a pool of @per_order objects of order 0. */
static void make_small(enum lb_pcp_tuner t, unsigned int per_order,
		       unsigned int nr_slots, int batch, int high_min,
		       int high_max, unsigned int flags)
{
	struct lb_pcp_conf c;

	tb_fini(&pcp_pool);
	cr_assert(eq(int, tb_init(&pcp_pool, 1, per_order), 0));
	tb_conf(&c, &pcp_pool, &pcp_env, t, batch, high_min, high_max);
	c.nr_slots = nr_slots;
	c.max_order = 0;
	c.flags = flags;
	c.cpu_fn = strand_cpu;
	cr_assert(eq(int, lb_pcp_create(&pcp_cache, &c), 0));
}

static void *c16_alloc_and_exit(void *arg)
{
	my_cpu = 1;
	return lb_pcp_alloc(pcp_cache, 0, arg) ? NULL : arg;
}

/*
 * C16: a pool of one object, 3 slots. Slot 1 allocates it in a thread that
 * exits, slot 2 frees it, slot 3 allocates with no tick in between: the
 * empty back-end makes slot 3 drain the others and retry.
 */
static void c16(enum lb_pcp_tuner t)
{
	struct lb_pcp_slot_stats s3;
	pthread_t th;
	void *x = NULL, *y = NULL, *ret;

	make_small(t, 1, 4, 1, 4, 64, 0);
	cr_assert(eq(int, pthread_create(&th, NULL, c16_alloc_and_exit, &x), 0));
	pthread_join(th, &ret);
	cr_assert(eq(ptr, ret, &x), "%s: slot 1 allocation", lb_pcp_tuner_name(t));
	pcp_env.cpu = 2;
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	cr_assert(eq(int, state(2).count, 1), "setup: slot 2 caches it");
	pcp_env.cpu = 3;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &y), 0),
		  "%s: stranded in slot 2",
		  lb_pcp_tuner_name(t));
	cr_assert(eq(ptr, y, x));
	s3 = slot_stats(3);
	cr_assert(eq(u64, s3.retries, 1), "%s: retry not counted",
		  lb_pcp_tuner_name(t));
	cr_assert(eq(u64, s3.refills, 2), "empty refill and its retry");
	cr_assert(eq(u64, slot_stats(2).drains, 1));
	assert_holds_add_up();
	/* Nothing anywhere now: -ENOMEM after one retry, *out untouched. */
	pcp_env.cpu = 0;
	y = NULL;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &y), -ENOMEM));
	cr_assert(eq(ptr, y, NULL));
	cr_assert(eq(u64, slot_stats(0).retries, 1));
	assert_holds_add_up();
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
}

Test(pcp_strand, c16_empty_backend_drains_other_slots_and_retries)
{
	enum lb_pcp_tuner t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		c16(t);
		lb_pcp_destroy(pcp_cache);
		pcp_cache = NULL;
		cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
	}
}

/*
 * C16, ADAPTIVE: a steal leaves the peer at least one batch. With a pool
 * of three batches all cached in slot 1, slot 2 still gets every object:
 * steals take halves of the surplus, the retry drains what they left.
 */
Test(pcp_strand, c16_adaptive_steal_leftover_is_reachable)
{
	static void *o[24];
	int i;

	make_small(LB_PCP_TUNE_ADAPTIVE, 24, 4, 8, 64, 64, 0);
	pcp_env.cpu = 1;
	for (i = 0; i < 24; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	for (i = 0; i < 24; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	cr_assert(eq(int, state(1).count, 24), "setup: slot 1 holds the pool");
	pcp_env.cpu = 2;
	for (i = 0; i < 24; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0),
			  "object %d", i);
	cr_assert(ge(u64, slot_stats(2).steals, 1));
	cr_assert(eq(u64, slot_stats(2).retries, 1));
	assert_holds_add_up();
	for (i = 0; i < 24; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
}

/* One decay tick, with the owner of slot 0 still at work. */
static void tick_with_slot0_busy(void)
{
	void *x;

	pcp_env.cpu = 0;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	lb_pcp_decay(pcp_cache);
}

/*
 * C17: a thread works a little on @visited slots in turn, then stays on
 * slot 0 while decay runs. Return what is cached after expire + 1 ticks.
 */
static uint64_t c17(enum lb_pcp_tuner t, unsigned int visited,
		    unsigned int expire)
{
	struct lb_pcp_conf c;
	void *o[5];
	unsigned int s, tick, periods = expire ? expire : LB_PCP_EXPIRE_DEFAULT;
	int i;

	tb_conf(&c, &pcp_pool, &pcp_env, t, 8, 32, 256);
	c.nr_slots = 8;
	c.expire = expire;
	c.cpu_fn = strand_cpu;
	cr_assert(eq(int, lb_pcp_create(&pcp_cache, &c), 0));
	for (s = visited; s-- > 0;) {
		pcp_env.cpu = (int)s;
		for (i = 0; i < 5; i++)
			cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]),
				     0));
		for (i = 0; i < 5; i++)
			cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	}
	for (s = 1; s < visited; s++)
		cr_assert(gt(int, state(s).count, 0), "setup: slot %u", s);
	for (tick = 1; tick <= periods; tick++)
		tick_with_slot0_busy();
	/* Still inside the expiry: only expire idle periods so far. */
	for (s = 1; s < visited; s++)
		cr_assert(gt(int, state(s).count, 0), "%s: slot %u expired early",
			  lb_pcp_tuner_name(t), s);
	tick_with_slot0_busy();
	for (s = 1; s < 8; s++)
		cr_assert(eq(int, state(s).count, 0), "%s: slot %u holds %d "
			  "after %u ticks", lb_pcp_tuner_name(t), s,
			  state(s).count, periods + 1);
	cr_assert(eq(u64, slot_stats(0).expiries, 0), "busy slot expired");
	assert_holds_add_up();
	return cached_units();
}

Test(pcp_strand, c17_idle_slots_expire_total_does_not_grow)
{
	enum lb_pcp_tuner t;
	uint64_t one, eight;

	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		one = c17(t, 1, LB_PCP_EXPIRE_DEFAULT);
		lb_pcp_destroy(pcp_cache);
		eight = c17(t, 8, 0);	/* 0: the default */
		lb_pcp_destroy(pcp_cache);
		pcp_cache = NULL;
		cr_assert(eq(u64, eight, one), "%s: cached %llu after 8 slots, "
			  "%llu after 1", lb_pcp_tuner_name(t),
			  (unsigned long long)eight, (unsigned long long)one);
		eight = c17(t, 8, 7);
		lb_pcp_destroy(pcp_cache);
		pcp_cache = NULL;
		cr_assert(eq(u64, eight, one), "%s: expire 7",
			  lb_pcp_tuner_name(t));
		cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
	}
}

/* C17: frees from threads passing through a slot nobody allocates from. */
Test(pcp_strand, c17_remote_frees_expire_too)
{
	static void *o[300];
	int i, tick;

	make(LB_PCP_TUNE_LINUX, 8, 32, 256);
	cr_assert(eq(int, tb_alloc_bulk(&pcp_pool, 0, o, 300), 300));
	pcp_env.cpu = 3;
	for (i = 0; i < 300; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	cr_assert(gt(int, state(3).count, 0));
	for (tick = 0; tick <= (int)LB_PCP_EXPIRE_DEFAULT; tick++)
		lb_pcp_decay(pcp_cache);
	cr_assert(eq(int, state(3).count, 0));
	cr_assert(eq(u64, slot_stats(3).expiries, 1));
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0), "nothing stranded");
	assert_holds_add_up();
}

/* C18: alloc 3, free 3; after every free the slot holds at most high. */
static void c18_frees(enum lb_pcp_tuner t, int batch, int lo, int hi)
{
	void *o[3];
	int i;

	make(t, batch, lo, hi);
	for (i = 0; i < 3; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	for (i = 0; i < 3; i++) {
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
		cr_assert(le(int, state(0).count, state(0).high),
			  "%s batch %d high %d..%d: count %d after free %d",
			  lb_pcp_tuner_name(t), batch, lo, hi, state(0).count, i);
	}
	assert_holds_add_up();
	lb_pcp_destroy(pcp_cache);
	pcp_cache = NULL;
}

/* C18: 10,000 frees into a slot with high == batch leave at most high. */
static void c18_burst(enum lb_pcp_tuner t)
{
	static void *o[10000];
	int i;

	make(t, 16, 16, 16);
	cr_assert(eq(int, tb_alloc_bulk(&pcp_pool, 0, o, 10000), 10000));
	for (i = 0; i < 10000; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	cr_assert(le(int, state(0).count, 16), "%s: %d cached",
		  lb_pcp_tuner_name(t), state(0).count);
	lb_pcp_destroy(pcp_cache);
	pcp_cache = NULL;
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
}

/* C18: decay of tiny highs, mixed orders: never above high_max. */
static void c18_decay(enum lb_pcp_tuner t, int lo, int hi)
{
	static const unsigned int orders[] = { 0, 3, 1, 0, 2, 3, 0 };
	void *o[7];
	int i, tick;

	make(t, 2, lo, hi);
	for (i = 0; i < 7; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, orders[i], &o[i]),
			     0));
	for (i = 0; i < 7; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], orders[i]), 0));
	for (tick = 0; tick < 6; tick++) {
		lb_pcp_decay(pcp_cache);
		cr_assert(le(int, state(0).count, hi), "%s high %d..%d: tick %d "
			  "left %d", lb_pcp_tuner_name(t), lo, hi, tick,
			  state(0).count);
		cr_assert(le(int, state(0).high, hi));
	}
	assert_holds_add_up();
	lb_pcp_destroy(pcp_cache);
	pcp_cache = NULL;
}

Test(pcp_strand, c18_configs_that_never_flushed_stay_at_high)
{
	enum lb_pcp_tuner t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		c18_frees(t, 1, 1, 1);
		c18_frees(t, 16, 8, 16);
		c18_frees(t, 16, 0, 0);
		c18_burst(t);
		c18_decay(t, 1, 1);
		c18_decay(t, 1, 2);
		c18_decay(t, 2, 2);
		cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
	}
}

/*
 * C19: debug mode, 2 slots, batch 1. X is freed twice: the first copy
 * reaches the back-end, the second stays cached in slot 1. Slot 0 then
 * refills and receives X from the back-end.
 */
Test(pcp_strand, c19_debug_refill_never_hands_out_a_cached_object)
{
	struct lb_pcp_conf c;
	void *x, *y, *z;

	tb_conf(&c, &pcp_pool, &pcp_env, LB_PCP_TUNE_LINUX, 1, 4, 4);
	c.nr_slots = 2;
	c.flags = LB_PCP_F_DEBUG;
	c.cpu_fn = strand_cpu;
	cr_assert(eq(int, lb_pcp_create(&pcp_cache, &c), 0));
	pcp_env.cpu = 1;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	cr_assert(eq(long, lb_pcp_drain(pcp_cache, 1), 1),
		  "first copy to the back-end");
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0),
		  "second copy cached");
	cr_assert(eq(int, state(1).count, 1));
	pcp_env.cpu = 0;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &y), 0));
	cr_assert(eq(u64, slot_stats(0).double_frees, 1), "not reported");
	/* The refilled copy was dropped; the retry drained slot 1's copy. */
	cr_assert(eq(int, state(1).count, 0));
	cr_assert(eq(ptr, y, x));
	/* X has one owner: no later allocation returns it while it is live. */
	pcp_env.cpu = 1;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &z), 0));
	cr_assert(ne(ptr, z, x), "X handed to a second owner");
	/* Conserved: X and Z live, nothing else out of the pool. */
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 2 + cached_units()));
	assert_holds_add_up();
	cr_assert(eq(int, lb_pcp_free(pcp_cache, z, 0), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	lb_pcp_drain_all(pcp_cache);
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
}

/* C19 kind: a free refused as a double free is counted the same way. */
Test(pcp_strand, c19_refused_double_free_is_counted)
{
	struct lb_pcp_conf c;
	void *x;

	tb_conf(&c, &pcp_pool, &pcp_env, LB_PCP_TUNE_LINUX, 8, 32, 256);
	c.flags = LB_PCP_F_DEBUG;
	cr_assert(eq(int, lb_pcp_create(&pcp_cache, &c), 0));
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), -EEXIST));
	cr_assert(eq(u64, slot_stats(0).double_frees, 1));
	cr_assert(eq(u64, slot_stats(0).frees, 1), "refused free counted as a free");
}
