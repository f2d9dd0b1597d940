// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario cases C05, C06, C08, C11 and C12 (tests/cases.md) on lb_pcp.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>

#include <lockbatch/pcp.h>
#include "../common/pcp_fixture.h"

static __thread int my_cpu = -1;

/* The thread's own slot when set, else the shared injected one. */
static int case_cpu(void *arg)
{
	return my_cpu >= 0 ? my_cpu : tb_cpu(arg);
}

static void cases_setup(void)
{
	setup();
	fixture_cpu_fn = case_cpu;
}

static struct lb_pcp_slot_stats slot_stats(unsigned int slot)
{
	struct lb_pcp_slot_stats ss[4];

	lb_pcp_stats(pcp_cache, NULL, ss, 4);
	return ss[slot];
}

TestSuite(pcp_cases, .init = cases_setup, .fini = teardown);

static void *objs[60000];

/*
 * C05: slot 2 full to high, then only the decay thread runs. high loses at
 * least an eighth (a fifth for count_min) of itself per tick or reaches
 * high_min, so count <= high_min within log(high/high_min)/log(8/7) + 1
 * ticks.
 */
static void c05(enum lb_pcp_tuner t)
{
	struct lb_pcp_stats st;
	struct lb_pcp_tune_state s;
	int i, n = 3000, tick, bound;

	make(t, 16, 256, 4096);
	pcp_env.cpu = 2;
	for (i = 0; i < n; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &objs[i]), 0));
	for (i = 0; i < n; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, objs[i], 0), 0));
	s = state(2);
	cr_assert(gt(int, s.count, s.high_min), "%s: setup count %d",
		  lb_pcp_tuner_name(t), s.count);
	bound = (int)ceil(log((double)s.high / s.high_min) / log(8.0 / 7)) + 2;
	cr_assert(eq(int, lb_pcp_decay_thread_start(pcp_cache), 0));
	for (tick = 1; tick <= bound; tick++) {
		__atomic_store_n(&pcp_env.now, tick * 1000000000ull,
				 __ATOMIC_RELEASE);
		do {
			sched_yield();
			lb_pcp_stats(pcp_cache, &st, NULL, 0);
		} while (st.ticks < (uint64_t)tick);
		s = state(2);
		cr_assert(ge(int, s.high, s.high_min), "%s: tick %d high %d",
			  lb_pcp_tuner_name(t), tick, s.high);
		if (s.count <= s.high_min)
			break;
	}
	lb_pcp_decay_thread_stop(pcp_cache);
	cr_assert(le(int, s.count, s.high_min), "%s: count %d after %d ticks",
		  lb_pcp_tuner_name(t), s.count, bound);
}

Test(pcp_cases, c05_decay_thread_returns_idle_slot_to_high_min_linux)
{
	c05(LB_PCP_TUNE_LINUX);
}

Test(pcp_cases, c05_decay_thread_returns_idle_slot_to_high_min_count_min)
{
	c05(LB_PCP_TUNE_COUNT_MIN);
}

Test(pcp_cases, c05_decay_thread_returns_idle_slot_to_high_min_adaptive)
{
	c05(LB_PCP_TUNE_ADAPTIVE);
}

struct c06_arg {
	void **objs;
	int n;
};

static void *c06_freer(void *arg)
{
	struct c06_arg *a = arg;
	int i;

	my_cpu = 1;
	for (i = 0; i < a->n; i++)
		if (lb_pcp_free(pcp_cache, a->objs[i], 0))
			return (void *)1;
	return NULL;
}

/* C06: a thread that never allocates frees > high objects and exits. */
Test(pcp_cases, c06_free_only_thread_then_drain_all)
{
	struct c06_arg a = { objs, 5000 };
	pthread_t th;
	void *ret;
	int got;

	make(LB_PCP_TUNE_LINUX, 16, 256, 2048);
	/* Objects come from the back-end directly: the thread only frees. */
	got = tb_alloc_bulk(&pcp_pool, 0, objs, 5000);
	cr_assert(eq(int, got, 5000));
	cr_assert(eq(int, pthread_create(&th, NULL, c06_freer, &a), 0));
	pthread_join(th, &ret);
	cr_assert(eq(ptr, ret, NULL));
	cr_assert(gt(int, state(1).count, 0));
	cr_assert(ge(long, lb_pcp_drain_all(pcp_cache), 1));
	for (got = 0; got < 4; got++)
		cr_assert(eq(int, state((unsigned)got).count, 0));
	/* allocated = freed + live: nothing live, nothing cached. */
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
}

/*
 * C08: slot 0 only allocates, slot 1 only frees. Every back-end hold moves
 * at least batch objects, and the freeing slot's high rises.
 */
static void c08(enum lb_pcp_tuner t)
{
	struct lb_pcp_stats st;
	int round, i, k = 300;

	make(t, 16, 64, 8192);
	for (round = 0; round < 40; round++) {
		pcp_env.cpu = 0;
		for (i = 0; i < k; i++)
			cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &objs[i]),
				     0));
		pcp_env.cpu = 1;
		for (i = 0; i < k; i++)
			cr_assert(eq(int, lb_pcp_free(pcp_cache, objs[i], 0),
				     0));
	}
	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	cr_assert(ge(u64, st.total.refill_units + st.total.flush_units,
		     16 * st.backend_locks), "%s: %llu units in %llu holds",
		  lb_pcp_tuner_name(t),
		  (unsigned long long)(st.total.refill_units +
				       st.total.flush_units),
		  (unsigned long long)st.backend_locks);
	cr_assert(gt(int, state(1).high, state(1).high_min),
		  "%s: freeing slot's high stayed at %d", lb_pcp_tuner_name(t),
		  state(1).high);
}

Test(pcp_cases, c08_producer_consumer_moves_batches_linux)
{
	c08(LB_PCP_TUNE_LINUX);
}

Test(pcp_cases, c08_producer_consumer_moves_batches_count_min)
{
	c08(LB_PCP_TUNE_COUNT_MIN);
}

Test(pcp_cases, c08_producer_consumer_moves_batches_adaptive)
{
	c08(LB_PCP_TUNE_ADAPTIVE);
}

/*
 * C11: free n / alloc n around the flush threshold. A flush leaves at least
 * a batch behind and the next allocations do not refill: at most one
 * back-end trip per free/alloc cycle once warm.
 */
static void c11(enum lb_pcp_tuner t, int n)
{
	struct lb_pcp_slot_stats s0, s1;
	int i, cyc, ops = 0, batch = 16;

	make(t, batch, 128, 4096);
	/* Warm: take enough objects to cross high when returned. */
	for (i = 0; i < 2000; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &objs[i]), 0));
	for (i = 0; i < 1000; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, objs[1000 + i], 0),
			     0));
	s0 = slot_stats(0);
	for (cyc = 0; ops < 10000; cyc++) {
		for (i = 0; i < n; i++, ops++) {
			cr_assert(eq(int, lb_pcp_free(pcp_cache, objs[i], 0),
				     0));
			cr_assert(gt(int, state(0).count, 0),
				  "%s n=%d: flushed to empty", lb_pcp_tuner_name(t), n);
		}
		for (i = 0; i < n; i++, ops++)
			cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &objs[i]),
				     0));
	}
	s1 = slot_stats(0);
	cr_assert(eq(u64, s1.refills, s0.refills), "%s n=%d: %llu refills",
		  lb_pcp_tuner_name(t), n,
		  (unsigned long long)(s1.refills - s0.refills));
	cr_assert(le(u64, s1.flushes - s0.flushes, (uint64_t)cyc + 1),
		  "%s n=%d: %llu flushes in %d cycles", lb_pcp_tuner_name(t), n,
		  (unsigned long long)(s1.flushes - s0.flushes), cyc);
	for (i = 0; i < n; i++)
		lb_pcp_free(pcp_cache, objs[i], 0);
	for (i = n; i < 1000; i++)
		lb_pcp_free(pcp_cache, objs[i], 0);
}

Test(pcp_cases, c11_alternating_free_alloc_has_hysteresis)
{
	static const int ns[] = { 1, 15, 16, 17, 64, 300 };
	enum lb_pcp_tuner t;
	unsigned int i;

	for (t = LB_PCP_TUNE_LINUX; t < LB_PCP_TUNE_NR; t++) {
		for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
			c11(t, ns[i]);
			lb_pcp_destroy(pcp_cache);
			pcp_cache = NULL;
			cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
		}
	}
}

/* C12: a free burst far above high: no hold moves more than batch << 5. */
static void c12(enum lb_pcp_tuner t)
{
	struct lb_pcp_stats st;
	int i, n = 40000;

	make(t, 8, 32, 100000);
	pcp_env.cpu = 0;
	for (i = 0; i < n; i++)
		cr_assert(eq(int, lb_pcp_alloc(pcp_cache, 0, &objs[i]), 0));
	lb_pcp_decay(pcp_cache);
	pcp_env.cpu = 1;
	for (i = 0; i < n; i++)
		cr_assert(eq(int, lb_pcp_free(pcp_cache, objs[i], 0), 0));
	lb_pcp_decay(pcp_cache);
	lb_pcp_drain_all(pcp_cache);
	lb_pcp_stats(pcp_cache, &st, NULL, 0);
	cr_assert(le(u64, st.total.max_hold_units, 8 << 5), "%s: %llu",
		  lb_pcp_tuner_name(t),
		  (unsigned long long)st.total.max_hold_units);
	cr_assert(le(u64, pcp_pool.max_call_units, 8 << 5));
	cr_assert(eq(u64, tb_units_out(&pcp_pool), 0));
}

Test(pcp_cases, c12_free_burst_holds_at_most_batch_shl5)
{
	enum lb_pcp_tuner t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		c12(t);
		lb_pcp_destroy(pcp_cache);
		pcp_cache = NULL;
	}
}
