// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp property test of the statistics in fork() children (pcp.h,
 * fork()): two threads allocate and free order-0 objects at random on the
 * CPUs they run on (the owner path where the machine has it) while the
 * decay thread ticks every millisecond and a third thread drains slots;
 * the main thread forks at random times. Each child drains every slot and
 * checks that every back-end hold is counted under exactly one cause
 * (refills + flushes + decay drains + drains == back-end lock holds) and
 * that the pool agrees with the counters (units out == allocs - frees,
 * nothing cached). Every tuner; seeds fixed, LB_SEED replays one.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/pcp.h>
#include "../common/fork_child.h"
#include "../common/pcp_backend.h"
#include "../common/prng.h"

#define WORKERS 3		/* two allocate and free, one drains */
#define LIVE 256
#define FORKS 6

static struct tb pool;
static struct lb_pcp *cache;
static int stop_run;		/* atomic */

struct worker {
	pthread_t t;
	struct lb_rng g;
	void *live[LIVE];
	unsigned int nr;
};

static void *churn(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(&stop_run, __ATOMIC_ACQUIRE)) {
		if (w->nr < LIVE && lb_rng_below(&w->g, 2)) {
			if (!lb_pcp_alloc(cache, 0, &w->live[w->nr]))
				w->nr++;
		} else if (w->nr) {
			unsigned int i = lb_rng_below(&w->g, w->nr);

			lb_pcp_free(cache, w->live[i], 0);
			w->live[i] = w->live[--w->nr];
		}
	}
	while (w->nr)
		lb_pcp_free(cache, w->live[--w->nr], 0);
	return NULL;
}

static void *drainer(void *arg)
{
	struct worker *w = arg;
	struct timespec ts = { 0, 50000 };

	while (!__atomic_load_n(&stop_run, __ATOMIC_ACQUIRE)) {
		lb_pcp_drain(cache, (int)lb_rng_below(&w->g, 8));
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* 0 when the counters agree with each other and with the pool. */
static int child_check(void *arg)
{
	struct lb_pcp_stats st;
	const struct lb_pcp_slot_stats *t = &st.total;
	int bad = 0;

	(void)arg;
	if (lb_pcp_drain_all(cache) < 0 || lb_pcp_stats(cache, &st, NULL, 0) < 0)
		return 1;
	if (t->refills + t->flushes + t->decay_drains + t->drains !=
	    st.backend_locks)
		bad |= 2;
	if (t->count != 0)
		bad |= 4;
	if (tb_units_out(&pool) != t->allocs - t->frees)
		bad |= 8;
	if (pool.errors)
		bad |= 16;
	return bad;
}

static void run(enum lb_pcp_tuner t, uint64_t seed)
{
	struct worker w[WORKERS];
	struct lb_pcp_conf c;
	struct lb_pcp_stats st;
	struct lb_rng g;
	unsigned int i;

	lb_rng_seed(&g, seed);
	cr_assert(eq(int, tb_init(&pool, 1, 20000), 0));
	tb_conf(&c, &pool, NULL, t, 8, 32, 2048);
	c.nr_slots = 0;
	c.max_order = 0;
	c.cpu_fn = NULL;
	c.clock_fn = NULL;
	c.decay_interval_ns = 1000000;
	c.expire = 1 + lb_rng_below(&g, 3);
	cr_assert(eq(int, lb_pcp_create(&cache, &c), 0));
	cr_assert(eq(int, lb_pcp_decay_thread_start(cache), 0));
	__atomic_store_n(&stop_run, 0, __ATOMIC_RELEASE);
	for (i = 0; i < WORKERS; i++) {
		w[i].nr = 0;
		lb_rng_seed(&w[i].g, seed ^ (0x51ull * (i + 1)));
		cr_assert(eq(int, pthread_create(&w[i].t, NULL, i < 2 ? churn :
						 drainer, &w[i]), 0));
	}
	for (i = 0; i < FORKS; i++) {
		struct timespec ts = { 0, 200000 + lb_rng_below(&g, 2000000) };
		int bad;

		nanosleep(&ts, NULL);
		bad = fork_child_run(child_check, NULL);
		cr_assert(eq(int, bad, 0), "%s fork %u: child counters broken "
			  "(bits %#x) " LB_SEED_FMT, lb_pcp_tuner_name(t), i, bad,
			  LB_SEED_ARGS(seed));
	}
	__atomic_store_n(&stop_run, 1, __ATOMIC_RELEASE);
	for (i = 0; i < WORKERS; i++)
		cr_assert(eq(int, pthread_join(w[i].t, NULL), 0));
	cr_assert(eq(int, lb_pcp_decay_thread_stop(cache), 0));
	cr_assert(ge(long, lb_pcp_drain_all(cache), 0));
	lb_pcp_stats(cache, &st, NULL, 0);
	cr_assert(eq(u64, st.total.refills + st.total.flushes +
		     st.total.decay_drains + st.total.drains, st.backend_locks));
	cr_assert(eq(u64, tb_units_out(&pool), 0), "objects lost " LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(int, lb_pcp_destroy(cache), 0));
	cr_assert(eq(u64, pool.errors, 0));
	tb_fini(&pool);
}

Test(pcp_fork_prop, child_counters_agree_every_tuner, .timeout = 120)
{
	static const uint64_t seeds[] = { 0x1, 0xf00d };
	enum lb_pcp_tuner t;
	unsigned int i;
	uint64_t s;

	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		if (lb_seed_from_env(&s)) {
			run(t, s);
			continue;
		}
		for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
			run(t, seeds[i]);
	}
}
