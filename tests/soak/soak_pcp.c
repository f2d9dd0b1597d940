// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Soak part: lb_pcp. Threads allocate objects of mixed orders, free their
 * own or swap them through a shared exchange (remote frees), drain one
 * slot or all of them, while the decay thread ticks every millisecond.
 * The back-end is the tests' pool, which counts objects handed out twice
 * or returned twice. Checked at pauses: pool + held + cached = total.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <lockbatch/pcp.h>
#include "../unit/test_pcp_backend.h"
#include "soak.h"

#define HELD 64		/* objects a thread holds at most */
#define XCHG 64		/* exchange cells */

struct held {
	void *obj[HELD];
	unsigned int order[HELD];
	unsigned int nr;
};

static struct lb_pcp *p;
static struct tb pool;
static struct held *held;
static void *xchg[XCHG];	/* atomic; order is in the object */
static unsigned int nr_thr;

int soak_pcp_setup(unsigned int nr_threads)
{
	struct lb_pcp_conf c;

	nr_thr = nr_threads;
	held = calloc(nr_threads, sizeof(*held));
	if (!held || tb_init(&pool, 4, 4096))
		return -1;
	memset(&c, 0, sizeof(c));
	c.max_order = 3;
	c.batch = 8;
	c.high_min = 16;
	c.high_max = 256;
	c.tuner = LB_PCP_TUNE_LINUX;
	c.lock_kind = LB_LOCK_SPIN;
	c.backend = tb_ops(&pool);
	c.decay_interval_ns = 1000000;
	if (lb_pcp_create(&p, &c))
		return -1;
	return lb_pcp_decay_thread_start(p);
}

static void take(struct held *h, void *obj, unsigned int order)
{
	h->obj[h->nr] = obj;
	h->order[h->nr++] = order;
}

static void give_back(struct held *h, unsigned int k)
{
	int rc = lb_pcp_free(p, h->obj[k], h->order[k]);

	SOAK_CHECK(rc == 0, "free: %d", rc);
	h->nr--;
	h->obj[k] = h->obj[h->nr];
	h->order[k] = h->order[h->nr];
}

void soak_pcp_op(unsigned int t, struct lb_rng *g)
{
	struct held *h = &held[t];
	unsigned int x = lb_rng_below(g, 1000);

	if (x < 450 && h->nr < HELD) {
		unsigned int order = lb_rng_below(g, 4) ? 0 : lb_rng_below(g, 4);
		void *obj;
		int rc = lb_pcp_alloc(p, order, &obj);

		SOAK_CHECK(rc == 0 || rc == -ENOMEM, "alloc: %d", rc);
		if (!rc) {
			SOAK_CHECK(((struct tb_obj *)obj)->order == order,
				   "alloc handed out order %u for %u",
				   ((struct tb_obj *)obj)->order, order);
			take(h, obj, order);
		}
	} else if (x < 900 && h->nr) {
		give_back(h, lb_rng_below(g, h->nr));
	} else if (x < 990 && h->nr) {
		/* A remote free: whoever takes it from the cell frees it. */
		unsigned int k = lb_rng_below(g, h->nr);
		struct tb_obj *in = __atomic_exchange_n(&xchg[lb_rng_below(g, XCHG)],
							h->obj[k], __ATOMIC_ACQ_REL);

		h->nr--;
		h->obj[k] = h->obj[h->nr];
		h->order[k] = h->order[h->nr];
		if (in)
			take(h, in, in->order);
	} else if (x < 998) {
		SOAK_CHECK(lb_pcp_drain(p, (int)lb_rng_below(g, 64)) >= 0, "drain");
	} else {
		SOAK_CHECK(lb_pcp_drain_all(p) >= 0, "drain_all");
	}
}

void soak_pcp_check(void)
{
	struct lb_pcp_stats st;
	uint64_t units = 0;
	unsigned int t, k;

	for (t = 0; t < nr_thr; t++)
		for (k = 0; k < held[t].nr; k++)
			units += 1u << held[t].order[k];
	for (k = 0; k < XCHG; k++)
		if (xchg[k])
			units += 1u << ((struct tb_obj *)xchg[k])->order;
	/* Workers are paused; the decay thread too while the pool is read. */
	SOAK_CHECK(lb_pcp_decay_thread_stop(p) == 0, "decay thread stop");
	lb_pcp_stats(p, &st, NULL, 0);
	SOAK_CHECK(tb_units_out(&pool) == units + (uint64_t)st.total.count,
		   "pcp conservation: %llu out of the pool, %llu held + %lld cached",
		   (unsigned long long)tb_units_out(&pool),
		   (unsigned long long)units, (long long)st.total.count);
	SOAK_CHECK(pool.errors == 0, "pcp: %llu objects handed out or "
		   "returned twice", (unsigned long long)pool.errors);
	SOAK_CHECK(lb_pcp_decay_thread_start(p) == 0, "decay thread start");
}

void soak_pcp_teardown(void)
{
	unsigned int t, k;

	SOAK_CHECK(lb_pcp_decay_thread_stop(p) == 0, "decay thread stop");
	for (t = 0; t < nr_thr; t++)
		while (held[t].nr)
			give_back(&held[t], 0);
	for (k = 0; k < XCHG; k++)
		if (xchg[k])
			SOAK_CHECK(lb_pcp_free(p, xchg[k],
					       ((struct tb_obj *)xchg[k])->order) == 0,
				   "free");
	lb_pcp_drain_all(p);
	SOAK_CHECK(tb_units_out(&pool) == 0, "pcp: %llu units lost",
		   (unsigned long long)tb_units_out(&pool));
	SOAK_CHECK(lb_pcp_destroy(p) == 0, "destroy");
	tb_fini(&pool);
	free(held);
}
