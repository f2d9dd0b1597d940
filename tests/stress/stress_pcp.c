// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp stress (plain pthreads, TAP; runs under TSan and ASan): workers
 * allocate and free mixed orders while hopping between slots (as migrated
 * threads do), one thread decays and drains single slots and all slots,
 * and the decay thread ticks every millisecond (slots expire after one
 * idle tick). The pool is small enough to run dry, so allocations also
 * take the drain-and-retry path. At the end every back-end hold was
 * counted under one cause and every object is back in the pool exactly
 * once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <lockbatch/pcp.h>
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"
#include "../common/pcp_backend.h"

#define NR_WORKERS 3
#define NR_SLOTS 2
#define LIVE_MAX 512

static struct lb_pcp *p;
static struct tb b;
static unsigned long iters;
static int stop_drainer;
static __thread int my_cpu;

static int thread_cpu(void *arg)
{
	return my_cpu;
}

struct worker {
	pthread_t th;
	uint64_t seed;
	unsigned long errors;
	void *live[LIVE_MAX];
	unsigned int order[LIVE_MAX];
	unsigned int nr;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct lb_rng g;
	unsigned long i;

	lb_rng_seed(&g, w->seed);
	for (i = 0; i < iters; i++) {
		unsigned int x = lb_rng_below(&g, 100);

		if (x < 3)
			my_cpu = (int)lb_rng_below(&g, NR_SLOTS + 1);	/* migrate */
		if ((x & 1) && w->nr < LIVE_MAX) {
			unsigned int o = lb_rng_below(&g, 8) < 6 ? 0 :
					 lb_rng_below(&g, 4);
			void *obj;
			int err = lb_pcp_alloc(p, o, &obj);

			if (!err) {
				w->live[w->nr] = obj;
				w->order[w->nr++] = o;
			} else if (err != -ENOMEM) {
				w->errors++;
			}
		} else if (w->nr) {
			unsigned int k = lb_rng_below(&g, w->nr);

			if (lb_pcp_free(p, w->live[k], w->order[k]))
				w->errors++;
			w->nr--;
			w->live[k] = w->live[w->nr];
			w->order[k] = w->order[w->nr];
		}
	}
	while (w->nr) {
		w->nr--;
		if (lb_pcp_free(p, w->live[w->nr], w->order[w->nr]))
			w->errors++;
	}
	return NULL;
}

static void *drainer(void *arg)
{
	unsigned int n = 0;

	while (!__atomic_load_n(&stop_drainer, __ATOMIC_ACQUIRE)) {
		switch (n++ % 3) {
		case 0:
			lb_pcp_decay(p);
			break;
		case 1:
			lb_pcp_drain(p, (int)(n % NR_SLOTS));
			break;
		default:
			lb_pcp_drain_all(p);
			break;
		}
	}
	return NULL;
}

static int run(enum lb_pcp_tuner t)
{
	struct worker w[NR_WORKERS];
	struct lb_pcp_conf c;
	struct lb_pcp_stats st;
	pthread_t d;
	unsigned long errors = 0;
	int i, ok = 1;

	if (tb_init(&b, 4, 150))
		return 0;
	tb_conf(&c, &b, NULL, t, 8, 32, 1024);
	c.nr_slots = NR_SLOTS;
	c.cpu_fn = thread_cpu;
	c.cpu_arg = NULL;
	c.clock_fn = NULL;
	c.decay_interval_ns = 1000000;
	c.lock_kind = t == LB_PCP_TUNE_LINUX ? LB_LOCK_MUTEX : LB_LOCK_SPIN;
	c.expire = 1;
	c.flags = t == LB_PCP_TUNE_COUNT_MIN ? LB_PCP_F_DEBUG : 0;
	if (lb_pcp_create(&p, &c))
		return 0;
	lb_pcp_decay_thread_start(p);
	stop_drainer = 0;
	pthread_create(&d, NULL, drainer, NULL);
	for (i = 0; i < NR_WORKERS; i++) {
		w[i].seed = lb_test_seed(0x57e55 + (uint64_t)i * 7919 + t);
		w[i].errors = 0;
		w[i].nr = 0;
		pthread_create(&w[i].th, NULL, work, &w[i]);
	}
	for (i = 0; i < NR_WORKERS; i++) {
		pthread_join(w[i].th, NULL);
		errors += w[i].errors;
	}
	__atomic_store_n(&stop_drainer, 1, __ATOMIC_RELEASE);
	pthread_join(d, NULL);
	lb_pcp_decay_thread_stop(p);
	lb_pcp_stats(p, &st, NULL, 0);
	ok &= lb_tap_ok(st.total.refills + st.total.flushes +
			st.total.decay_drains + st.total.drains ==
			st.backend_locks && st.total.refills == b.alloc_calls,
			"%s: holds add up (%llu refills, %llu flushes, %llu decay, "
			"%llu drains, %llu holds)", lb_pcp_tuner_name(t),
			(unsigned long long)st.total.refills,
			(unsigned long long)st.total.flushes,
			(unsigned long long)st.total.decay_drains,
			(unsigned long long)st.total.drains,
			(unsigned long long)st.backend_locks);
	ok &= lb_tap_ok(errors == 0, "%s: no call failed (%lu)",
			lb_pcp_tuner_name(t), errors);
	ok &= lb_tap_ok(st.total.max_hold_units <= (8u << 5) + 7,
			"%s: largest hold %llu units", lb_pcp_tuner_name(t),
			(unsigned long long)st.total.max_hold_units);
	lb_pcp_drain_all(p);
	lb_pcp_stats(p, &st, NULL, 0);
	ok &= lb_tap_ok(st.total.count == 0 && tb_units_out(&b) == 0 &&
			b.errors == 0,
			"%s: conserved (cached %lld, out %llu, bad returns %llu)",
			lb_pcp_tuner_name(t), (long long)st.total.count,
			(unsigned long long)tb_units_out(&b),
			(unsigned long long)b.errors);
	lb_tap_diag("%s: %llu allocs, %llu back-end holds, %llu ticks, "
		    "%llu retries, %llu expiries", lb_pcp_tuner_name(t),
		    (unsigned long long)st.total.allocs,
		    (unsigned long long)st.backend_locks,
		    (unsigned long long)st.ticks,
		    (unsigned long long)st.total.retries,
		    (unsigned long long)st.total.expiries);
	lb_pcp_destroy(p);
	tb_fini(&b);
	return ok;
}

int main(void)
{
	enum lb_pcp_tuner t;

	iters = lb_stress_iters(20000, 2000000);
	lb_tap_plan(4 * LB_PCP_TUNE_NR);
	for (t = 0; t < LB_PCP_TUNE_NR; t++)
		run(t);
	return lb_tap_done();
}
