// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp unit tests: creation and bad input, the LINUX refill and free
 * rules on hand-computed numbers, drains, the injected clock and the decay
 * thread, sizing.
 */
#include <errno.h>
#include <sched.h>

#include <lockbatch/pcp.h>
#include "../common/pcp_fixture.h"



static uint64_t cached_units(void)
{
	struct lb_pcp_stats st;

	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	return (uint64_t)st.total.count;
}

TestSuite(pcp, .init = setup, .fini = teardown);

Test(pcp, create_rejects_bad_conf)
{
	struct lb_pcp_conf c;
	struct lb_pcp *q = NULL;
	struct lb_pcp_tune_state ts;

	/* Batch 0 is sized for the caller (test_conf.c); the highs stay. */
	tb_conf(&c, &pcp_pool, &pcp_env, LB_PCP_TUNE_LINUX, 0, 10, 100);
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "batch 0: default");
	cr_assert(eq(int, lb_pcp_slot_state(q, 0, &ts), 0));
	cr_assert(eq(int, ts.batch, 63));
	cr_assert(eq(int, ts.high_max, 100));
	lb_pcp_destroy(q);
	q = NULL;
	c.batch = -1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "negative batch");
	c.batch = LB_PCP_BATCH_MAX + 1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "batch too big");
	c.batch = 8;
	c.high_min = 200;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "high_min > high_max");
	c.high_min = -1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "negative high_min");
	c.high_min = 10;
	c.max_order = LB_PCP_MAX_ORDER + 1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "max_order");
	c.max_order = 3;
	c.tuner = LB_PCP_TUNE_NR;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "tuner");
	c.tuner = LB_PCP_TUNE_LINUX;
	c.flags = 0x100;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "flags");
	c.flags = 0;
	c.backend.free_bulk = NULL;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "no free_bulk");
	cr_assert(eq(int, lb_pcp_create(NULL, &c), -EINVAL));
	cr_assert(eq(int, lb_pcp_create(&q, NULL), -EINVAL));
	cr_assert(eq(ptr, q, NULL), "*p set on failure");
	cr_assert(eq(int, lb_pcp_destroy(NULL), -EINVAL));
}

Test(pcp, bad_input_loses_nothing)
{
	void *o = NULL, *x;
	uint64_t before;

	make(LB_PCP_TUNE_LINUX, 8, 32, 256);
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o), 0));
	before = cached_units();
	x = o;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 4, &x), -EINVAL),
		  "order above max");
	cr_assert(eq(ptr, x, o), "*out touched on error");
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_alloc(NULL, 0, &x), -EINVAL));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, NULL, 0), -EINVAL),
		  "free NULL");
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 4), -EINVAL),
		  "free order above max");
	cr_assert(eq(int, lb_pcp_free(NULL, o, 0), -EINVAL));
	cr_assert(eq(u64, cached_units(), before), "state changed on error");
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 0), 0));
	cr_assert(eq(long, lb_pcp_drain(pcp_cache, -1), -EINVAL));
	cr_assert(eq(long, lb_pcp_drain_all(NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_decay(NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_stats(pcp_cache, NULL, NULL, 1), -EINVAL));
	lb_pcp_drain_all(pcp_cache);
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0), "objects lost");
}

Test(pcp, debug_double_free_is_refused)
{
	struct lb_pcp_conf c;
	void *o;

	tb_conf(&c, &pcp_pool, &pcp_env, LB_PCP_TUNE_LINUX, 8, 32, 256);
	c.flags = LB_PCP_F_DEBUG;
	cr_assert(eq(int, lb_pcp_create(&pcp_cache, &c), 0));
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 1, &o), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 1), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 1), -EEXIST),
		  "double free accepted");
	pcp_env.cpu = 1;
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 1), -EEXIST),
		  "double free from another slot accepted");
	cr_assert(eq(int, state(0).count + state(1).count, 8),
		  "count changed by refused free");
	lb_pcp_drain_all(pcp_cache);
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
}

/* kernel-6.12 notes §3.5: batch 63, high_min 640, high_max 16384. */
Test(pcp, linux_refill_grows_high_and_factor)
{
	struct lb_pcp_tune_state s;
	void *o[200];
	int i;

	make(LB_PCP_TUNE_LINUX, 63, 640, 16384);
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[0]), 0));
	s = state(0);
	cr_assert(eq(int, s.high, 703), "high after first refill");
	cr_assert(eq(int, s.alloc_factor, 1));
	cr_assert(eq(int, s.count, 62));
	for (i = 1; i < 64; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	s = state(0);
	cr_assert(eq(int, s.high, 829), "second refill adds batch << 1");
	cr_assert(eq(int, s.count, 126 - 1));
	cr_assert(eq(u64, pcp_pool.alloc_calls, 2));
	for (i = 0; i < 64; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	cr_assert(eq(int, state(0).alloc_factor, 0), "frees halve alloc_factor");
}

Test(pcp, fixed_keeps_high_and_flushes_a_batch)
{
	void *o[64];
	int i;

	make(LB_PCP_TUNE_FIXED, 8, 32, 256);
	for (i = 0; i < 64; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	cr_assert(eq(u64, pcp_pool.alloc_calls, 8), "refills of exactly batch");
	for (i = 0; i < 64; i++) {
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
		cr_assert(lt(int, state(0).count, 32));
		cr_assert(eq(int, state(0).high, 32));
	}
}

Test(pcp, order_weights_count_in_base_units)
{
	void *o;

	make(LB_PCP_TUNE_LINUX, 16, 64, 1024);
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 3, &o), 0));
	/* 16 >> 3 = 2 objects of 8 units, one handed out. */
	cr_assert(eq(int, state(0).count, 8));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 3), 0));
	cr_assert(eq(int, state(0).count, 16));
	cr_assert(eq(int, state(0).flags & LB_PCP_TS_PREV_FREE_HIGH_ORDER,
		     LB_PCP_TS_PREV_FREE_HIGH_ORDER));
}

Test(pcp, backend_empty_gives_enomem_after_one_retry)
{
	struct lb_pcp_stats st;
	void *o = NULL;

	make(LB_PCP_TUNE_LINUX, 8, 32, 256);
	pcp_pool.fail_next = 1;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o), 0), "no retry");
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 0), 0));
	lb_pcp_drain_all(pcp_cache);
	o = NULL;
	pcp_pool.fail_next = 2;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o), -ENOMEM));
	cr_assert(eq(ptr, o, NULL));
	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	cr_assert(eq(u64, st.total.retries, 2));
	cr_assert(eq(u64, st.total.refills, 4), "empty refills are holds too");
	cr_assert(eq(u64, st.total.refills + st.total.flushes +
		     st.total.decay_drains + st.total.drains, st.backend_locks));
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 0), 0));
}

/*
 * Every field of struct lb_pcp_conf: its default for 0, its limits, the
 * error of each violation (pcp.h documents them field by field).
 */
Test(pcp, conf_fields_limits_and_defaults)
{
	struct lb_pcp_conf c;
	struct lb_pcp_stats st;
	struct lb_pcp *q = NULL;

	tb_conf(&c, &pcp_pool, &pcp_env, LB_PCP_TUNE_LINUX, 8, 32, 256);
	c.nr_slots = LB_PCP_MAX_SLOTS + 1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "nr_slots");
	c.nr_slots = 0;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "nr_slots 0");
	lb_pcp_stats(q, &st, NULL, 0);
	cr_assert(eq(u32, st.nr_slots, lb_cpu_count() < LB_PCP_MAX_SLOTS ?
		     lb_cpu_count() : LB_PCP_MAX_SLOTS), "nr_slots default");
	lb_pcp_destroy(q);
	c.nr_slots = LB_PCP_MAX_SLOTS;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "nr_slots max");
	lb_pcp_destroy(q);
	c.nr_slots = 4;
	c.max_order = 0;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "max_order 0");
	lb_pcp_destroy(q);
	c.max_order = LB_PCP_MAX_ORDER;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "max_order max");
	lb_pcp_destroy(q);
	c.max_order = 3;
	c.batch = LB_PCP_BATCH_MAX;
	c.high_max = LB_PCP_HIGH_MAX;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "batch and high_max max");
	lb_pcp_destroy(q);
	c.high_max = LB_PCP_HIGH_MAX + 1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "high_max");
	c.batch = 8;
	c.high_min = 0;
	c.high_max = 0;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "high 0");
	lb_pcp_destroy(q);
	c.high_min = 8;
	c.high_max = 8;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "high_max == batch");
	lb_pcp_destroy(q);
	c.high_max = 256;
	c.lock_kind = (enum lb_lock_kind)99;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "lock_kind");
	c.lock_kind = LB_LOCK_MUTEX;
	c.backend.alloc_bulk = NULL;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "no alloc_bulk");
	c.backend = tb_ops(&pcp_pool);
	c.expire = LB_PCP_EXPIRE_MAX + 1;
	cr_assert(eq(int, lb_pcp_create(&q, &c), -EINVAL), "expire");
	c.expire = LB_PCP_EXPIRE_MAX;
	c.cpu_fn = NULL;
	c.clock_fn = NULL;
	c.decay_interval_ns = 0;
	cr_assert(eq(int, lb_pcp_create(&q, &c), 0), "defaults for NULL and 0");
	cr_assert(eq(int, lb_pcp_tick(q), 0), "default interval is 1 s");
	lb_pcp_destroy(q);
}

/*
 * One order of checks (pcp.h, "Errors"): the instance first, then the
 * other pointers, then ranges, then object state, then resources. A call
 * with several faults reports the first; none changes anything.
 */
Test(pcp, error_precedence)
{
	struct lb_pcp_conf c;
	struct lb_pcp_tune_state s;
	uint64_t before;
	void *o, *x = NULL;
	char buf[64] __attribute__((aligned(16)));

	tb_conf(&c, &pcp_pool, &pcp_env, LB_PCP_TUNE_LINUX, 8, 32, 256);
	c.flags = LB_PCP_F_DEBUG;
	cr_assert(eq(int, lb_pcp_create(&pcp_cache, &c), 0));
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 0), 0));
	before = cached_units();
	/* o is cached: -EEXIST only once the arguments are valid. */
	cr_assert(eq(int, lb_pcp_free(NULL, o, 0), -EINVAL));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 4), -EINVAL),
		  "range before state");
	cr_assert(eq(int, lb_pcp_free(pcp_cache, buf + 1, 0), -EINVAL),
		  "misaligned");
	cr_assert(eq(int, lb_pcp_free(NULL, NULL, 99), -EINVAL));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, o, 0), -EEXIST));
	cr_assert(eq(int, lb_pcp_alloc(NULL, 99, NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 99, &x), -EINVAL));
	cr_assert(eq(ptr, x, NULL));
	cr_assert(eq(u64, cached_units(), before), "state changed on error");
	cr_assert(eq(long, lb_pcp_drain(NULL, -1), -EINVAL));
	cr_assert(eq(int, lb_pcp_stats(NULL, NULL, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_pcp_slot_state(NULL, 99, NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_slot_state(pcp_cache, 99, &s), -EINVAL));
	/* The instance before the thread's state. */
	cr_assert(eq(int, lb_pcp_decay_thread_stop(NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_decay_thread_stop(pcp_cache), -ENOENT));
	cr_assert(eq(int, lb_pcp_decay_thread_start(pcp_cache), 0));
	cr_assert(eq(int, lb_pcp_decay_thread_start(NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_decay_thread_start(pcp_cache), -EEXIST));
	cr_assert(eq(int, lb_pcp_decay_thread_stop(pcp_cache), 0));
	/* create: @p, @conf, then the fields in declaration order. */
	c.batch = 0;
	c.backend.alloc_bulk = NULL;
	cr_assert(eq(int, lb_pcp_create(NULL, NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_create(NULL, &c), -EINVAL));
	cr_assert(eq(int, lb_pcp_tune_init(NULL, 0, -1, -2, false), -EINVAL));
	cr_assert(eq(int, lb_pcp_tune_init(&s, 8, 0, LB_PCP_HIGH_MAX + 1, false),
		     -EINVAL), "tune_init has create's limits");
	cr_assert(eq(int, lb_pcp_size(0, 0, 0, 0, NULL), -EINVAL));
}

/* Case I of the kernel notes: one tick from high 16384, count 16000. */
Test(pcp, decay_tick_batches_its_drain)
{
	struct lb_pcp_stats st;
	struct lb_pcp_slot_stats ss[4];
	struct lb_pcp_tune_state s;
	static void *o[16000];
	int i, d;

	cr_assert(eq(int, lb_pcp_tune_init(&s, 63, 640, 16384, false), 0));
	s.high = 16384;
	s.count = 16000;
	cr_assert(lb_pcp_tune_decay_step(LB_PCP_TUNE_LINUX, &s, &d));
	cr_assert(eq(int, s.high, 14336));
	cr_assert(eq(int, d, 1664));

	make(LB_PCP_TUNE_LINUX, 63, 640, 16384);
	pcp_env.cpu = 1;
	for (i = 0; i < 16000; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	for (i = 0; i < 16000; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	lb_pcp_stats(pcp_cache, NULL, ss, 4);
	s = state(1);
	lb_pcp_decay(pcp_cache);
	lb_pcp_stats(pcp_cache, &st, ss, 4);
	cr_assert(gt(u64, ss[1].decay_units, 0), "nothing to decay: count %d high %d",
		  s.count, s.high);
	cr_assert(le(u64, st.total.max_hold_units, 63 << 5));
	cr_assert(eq(u64, ss[1].decay_units,
		     (uint64_t)(s.count - state(1).count)));
	cr_assert(eq(u64, ss[1].decay_drains,
		     (ss[1].decay_units + 62) / 63), "holds of <= batch units");
}

Test(pcp, drain_returns_everything_in_chunks)
{
	struct lb_pcp_slot_stats ss[4];
	static void *o[5000];
	int i, n;

	make(LB_PCP_TUNE_LINUX, 16, 64, 100000);
	pcp_env.cpu = 3;
	for (i = 0; i < 5000; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	for (i = 0; i < 5000; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	n = state(3).count;
	cr_assert(gt(int, n, 512), "setup left %d", n);
	cr_assert(eq(long, lb_pcp_drain(pcp_cache, 7), n), "7 folds to 3");
	lb_pcp_stats(pcp_cache, NULL, ss, 4);
	cr_assert(eq(int, state(3).count, 0));
	cr_assert(le(u64, ss[3].max_hold_units, 16 << 5));
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
}

Test(pcp, tick_follows_the_injected_clock)
{
	struct lb_pcp_stats st;

	make(LB_PCP_TUNE_LINUX, 8, 32, 256);
	cr_assert(eq(int, lb_pcp_tick(pcp_cache), 0),
		  "decayed before an interval");
	pcp_env.now = 999999999ull;
	cr_assert(eq(int, lb_pcp_tick(pcp_cache), 0));
	pcp_env.now = 1000000000ull;
	cr_assert(eq(int, lb_pcp_tick(pcp_cache), 1));
	cr_assert(eq(int, lb_pcp_tick(pcp_cache), 0),
		  "two decays in one interval");
	pcp_env.now = 5000000000ull;
	cr_assert(eq(int, lb_pcp_tick(pcp_cache), 1), "one decay per call");
	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	cr_assert(eq(u64, st.ticks, 2));
}

Test(pcp, decay_thread_runs_on_the_injected_clock)
{
	struct lb_pcp_stats st;
	int i;

	make(LB_PCP_TUNE_LINUX, 8, 32, 256);
	cr_assert(eq(int, lb_pcp_decay_thread_start(pcp_cache), 0));
	cr_assert(eq(int, lb_pcp_decay_thread_start(pcp_cache), -EEXIST));
	for (i = 1; i <= 3; i++) {
		__atomic_store_n(&pcp_env.now, i * 1000000000ull,
				 __ATOMIC_RELEASE);
		do {
			sched_yield();
			lb_pcp_stats(pcp_cache, &st, NULL, 0);
		} while (st.ticks < (uint64_t)i);
		cr_assert(eq(u64, st.ticks, (uint64_t)i), "one tick per interval");
	}
	cr_assert(eq(int, lb_pcp_decay_thread_stop(pcp_cache), 0));
	cr_assert(eq(int, lb_pcp_decay_thread_stop(pcp_cache), -ENOENT));
}

Test(pcp, size_like_zone_batchsize_and_highsize)
{
	struct lb_pcp_size z;

	/* 1 GiB of 4 KiB pages, low watermark 1280, 2 CPUs (notes §3.5). */
	cr_assert(eq(int, lb_pcp_size(262144, 1280, 2, 256, &z), 0));
	cr_assert(eq(int, z.batch, 63));
	cr_assert(eq(int, z.high_min, 640));
	cr_assert(eq(int, z.high_max, 16384));
	/* This machine's Normal zone (/proc/zoneinfo): 6630 / 81920. */
	cr_assert(eq(int, lb_pcp_size(1310720, 13261, 2, 256, &z), 0));
	cr_assert(eq(int, z.batch, 63));
	cr_assert(eq(int, z.high_min, 6630));
	cr_assert(eq(int, z.high_max, 81920));
	/* Tiny pool: batch 1, high at least 4 batches. */
	cr_assert(eq(int, lb_pcp_size(100, 0, 4, 256, &z), 0));
	cr_assert(eq(int, z.batch, 1));
	cr_assert(eq(int, z.high_min, 4));
	cr_assert(eq(int, lb_pcp_size(100, 0, 0, 256, &z), -EINVAL));
	cr_assert(eq(int, lb_pcp_size(100, 0, 1, 256, NULL), -EINVAL));
}

Test(pcp, tuner_names_round_trip)
{
	int t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++)
		cr_assert(eq(int, lb_pcp_tuner_parse(lb_pcp_tuner_name(t)), t));
	cr_assert(eq(int, lb_pcp_tuner_parse("nope"), -EINVAL));
	cr_assert(eq(int, lb_pcp_tuner_parse(NULL), -EINVAL));
	cr_assert(eq(str, (char *)lb_pcp_tuner_name(LB_PCP_TUNE_NR), "invalid"));
}

Test(pcp, count_min_decays_only_idle_units)
{
	struct lb_pcp_tune_state l, c;
	int d;

	lb_pcp_tune_init(&l, 63, 640, 16384, false);
	l.high = 10000;
	l.count = 5000;
	l.count_min = 300;	/* the slot went down to 300 units this tick */
	c = l;
	lb_pcp_tune_decay_step(LB_PCP_TUNE_LINUX, &l, &d);
	cr_assert(eq(int, l.high, 10000 - 1250));
	lb_pcp_tune_decay_step(LB_PCP_TUNE_COUNT_MIN, &c, &d);
	cr_assert(eq(int, c.high, 10000 - 300), "decrease = min(count_min, high/5)");
	cr_assert(eq(int, c.count_min, c.count), "count_min restarts at count");
	c.count_min = 100000;
	lb_pcp_tune_decay_step(LB_PCP_TUNE_COUNT_MIN, &c, &d);
	cr_assert(eq(int, c.high, 9700 - 9700 / 5));
}

/*
 * LINUX_618: a high-order free run flushes at batch + high_min / 2, not at
 * batch; with the zone below its high watermark, every free above
 * high_min flushes free_count (at least batch) and high sheds as much.
 */
Test(pcp, linux618_free_high_threshold_and_below_high)
{
	struct lb_pcp_tune_state l, n;
	int i, fl = 0, fn = 0;

	lb_pcp_tune_init(&l, 63, 640, 16384, false);
	n = l;
	/* 40 order-1 frees: free_count reaches 80 > 63, not 63 + 320. */
	for (i = 0; i < 40; i++) {
		fl += lb_pcp_tune_free(LB_PCP_TUNE_LINUX, &l, 1);
		fn += lb_pcp_tune_free(LB_PCP_TUNE_LINUX_618, &n, 1);
	}
	cr_assert(gt(int, fl, 0), "6.12 flushes once free_count >= batch");
	cr_assert(eq(int, fn, 0), "6.18 waits for batch + high_min / 2");
	for (i = 0; i < 200 && !fn; i++)
		fn = lb_pcp_tune_free(LB_PCP_TUNE_LINUX_618, &n, 1);
	cr_assert(gt(int, fn, 0));
	cr_assert(ge(int, n.free_count, 63 + 640 / 2));

	lb_pcp_tune_init(&l, 63, 640, 16384, false);
	l.high = 10000;
	l.count = 5000;
	l.flags |= LB_PCP_TS_ZONE_BELOW_HIGH;
	n = l;
	cr_assert(eq(int, lb_pcp_tune_free(LB_PCP_TUNE_LINUX, &l, 0), 0),
		  "6.12's tuner never reads the zone flag");
	cr_assert(eq(int, lb_pcp_tune_free(LB_PCP_TUNE_LINUX_618, &n, 0), 63));
	cr_assert(eq(int, n.high, 10000 - 63));
	n.count = 600;	/* below high_min: nothing to flush */
	cr_assert(eq(int, lb_pcp_tune_free(LB_PCP_TUNE_LINUX_618, &n, 0), 0));
	/* A refill below the watermark does not raise high; 6.12's does. */
	n.high = l.high = 5000;
	n.count = l.count = 0;
	lb_pcp_tune_refill(LB_PCP_TUNE_LINUX_618, &n, 0);
	lb_pcp_tune_refill(LB_PCP_TUNE_LINUX, &l, 0);
	cr_assert(eq(int, n.high, 5000));
	cr_assert(gt(int, l.high, 5000));
}

/* ADAPTIVE refills from a peer's surplus before the back-end. */
Test(pcp, adaptive_refills_from_peer_slot)
{
	struct lb_pcp_stats st;
	struct lb_pcp_slot_stats ss[4];
	struct lb_lock_stats ls;
	static void *o[600];
	void *x;
	int i;

	make(LB_PCP_TUNE_ADAPTIVE, 8, 1024, 4096);
	pcp_env.cpu = 1;
	for (i = 0; i < 600; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	for (i = 0; i < 600; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	cr_assert(gt(int, state(1).count, 8), "setup: slot 1 holds %d",
		  state(1).count);
	lb_lock_stats(lb_pcp_backend_lock(pcp_cache), &ls);
	pcp_env.cpu = 2;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	lb_pcp_stats(pcp_cache, &st, ss, 4);
	cr_assert(eq(u64, st.backend_locks, ls.acquisitions),
		  "refill went to the back-end");
	cr_assert(eq(u64, ss[2].steals, 1));
	cr_assert(ge(int, state(1).count, 8), "peer left below one batch");
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	/* LINUX never steals. */
	lb_pcp_destroy(pcp_cache);
	make(LB_PCP_TUNE_LINUX, 8, 1024, 4096);
	pcp_env.cpu = 1;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	pcp_env.cpu = 2;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	lb_pcp_stats(pcp_cache, &st, ss, 4);
	cr_assert(eq(u64, ss[2].steals, 0));
	cr_assert(eq(u64, ss[2].refills, 1));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
}

/*
 * ADAPTIVE takes at most half of a peer's surplus over one batch, even
 * when the refill asks for more: a steal that left the peer one batch
 * made it steal straight back whenever objects flow both ways.
 */
Test(pcp, adaptive_steal_takes_half_the_peer_surplus)
{
	struct lb_pcp_slot_stats ss[4];
	void *o[9], *x;
	int i, before, want;

	make(LB_PCP_TUNE_ADAPTIVE, 8, 1024, 4096);
	pcp_env.cpu = 1;
	for (i = 0; i < 9; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &o[i]), 0));
	for (i = 0; i < 3; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
	before = state(1).count;
	want = (before - 8 + 1) / 2;
	cr_assert(gt(int, want, 0), "setup: slot 1 holds %d", before);
	cr_assert(lt(int, want, 8), "setup: the refill (one batch) must ask "
		  "for more than half the surplus; slot 1 holds %d", before);
	pcp_env.cpu = 2;
	cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &x), 0));
	lb_pcp_stats(pcp_cache, NULL, ss, 4);
	cr_assert(eq(u64, ss[2].steals, 1));
	cr_assert(eq(u64, ss[2].steal_units, (uint64_t)want));
	cr_assert(eq(u64, ss[2].refills, 0), "went to the back-end");
	cr_assert(eq(int, state(1).count, before - want));
	cr_assert(eq(int, state(2).count, want - 1));
	cr_assert(eq(int, lb_pcp_free(pcp_cache, x, 0), 0));
	pcp_env.cpu = 1;
	for (i = 3; i < 9; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, o[i], 0), 0));
}
