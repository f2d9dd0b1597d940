// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Configuration defaults and static initializers, lb_pcp over the caller's
 * lock, and the free_bulk contract: a zeroed configuration with a back-end
 * is a working cache sized like lb_pcp_size(); every *_CONF_INIT macro
 * creates; a caller's lock guards the back-end and stays the caller's; one
 * back-end hold may call free_bulk once per order.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>

#include <lockbatch/lockbatch.h>

static int slot0(void *arg)
{
	(void)arg;
	return 0;
}

/* A pool of 64-byte cells; counts calls and holds (the lock is the caller's). */
struct pool {
	unsigned char cells[4096][64];
	void *free[4096];
	unsigned int nr, free_calls, alloc_calls;
	struct lb_lock *lock;	/* checked held in every call, when set */
	int unlocked_calls;
};

static int pool_alloc(void *ctx, unsigned int order, void **out, unsigned int n)
{
	struct pool *p = ctx;
	unsigned int i;

	(void)order;
	p->alloc_calls++;
	if (p->lock && lb_lock_is_held(p->lock) != 1)
		p->unlocked_calls++;
	for (i = 0; i < n && p->nr; i++)
		out[i] = p->free[--p->nr];
	return (int)i;
}

static void pool_free(void *ctx, unsigned int order, void **objs, unsigned int n)
{
	struct pool *p = ctx;

	(void)order;
	p->free_calls++;
	if (p->lock && lb_lock_is_held(p->lock) != 1)
		p->unlocked_calls++;
	for (unsigned int i = 0; i < n; i++)
		p->free[p->nr++] = objs[i];
}

static struct pool *pool_new(void)
{
	static struct pool pl;

	memset(&pl, 0, sizeof(pl));
	for (pl.nr = 0; pl.nr < 4096; pl.nr++)
		pl.free[pl.nr] = pl.cells[pl.nr];
	return &pl;
}

Test(conf, zero_pcp_conf_with_a_backend_is_sized_like_lb_pcp_size)
{
	struct pool *pl = pool_new();
	struct lb_pcp_conf c;
	struct lb_pcp_tune_state ts;
	struct lb_pcp_size sz;
	struct lb_pcp *p;
	void *o;

	memset(&c, 0, sizeof(c));
	c.nr_slots = 2;
	c.backend.alloc_bulk = pool_alloc;
	c.backend.free_bulk = pool_free;
	c.backend.ctx = pl;
	c.cpu_fn = slot0;
	cr_assert_eq(lb_pcp_create(&p, &c), 0);
	cr_assert_eq(lb_pcp_size(LB_PCP_DEFAULT_POOL_UNITS, 0, 2, 256, &sz), 0);
	cr_assert_eq(lb_pcp_slot_state(p, 0, &ts), 0);
	cr_assert_eq(ts.batch, sz.batch);
	cr_assert_eq(ts.batch, 63);
	cr_assert_eq(ts.high_min, sz.high_min);
	cr_assert_eq(ts.high_max, sz.high_max);
	cr_assert_eq(lb_pcp_alloc(p, 0, &o), 0);
	cr_assert_eq(lb_pcp_free(p, o, 0), 0);
	cr_assert_eq(lb_pcp_destroy(p), 0);
	cr_assert_eq(pl->nr, 4096);

	/* The smallest configuration a caller writes: a tuner and the back-end. */
	c.tuner = LB_PCP_TUNE_ADAPTIVE;
	cr_assert_eq(lb_pcp_create(&p, &c), 0);
	cr_assert_eq(lb_pcp_destroy(p), 0);
}

Test(conf, explicit_batch_keeps_high_zero_and_bad_values_still_fail)
{
	struct pool *pl = pool_new();
	struct lb_pcp_conf c;
	struct lb_pcp_tune_state ts;
	struct lb_pcp *p;

	memset(&c, 0, sizeof(c));
	c.nr_slots = 1;
	c.batch = 8;
	c.backend.alloc_bulk = pool_alloc;
	c.backend.free_bulk = pool_free;
	c.backend.ctx = pl;
	cr_assert_eq(lb_pcp_create(&p, &c), 0);
	cr_assert_eq(lb_pcp_slot_state(p, 0, &ts), 0);
	cr_assert_eq(ts.high_max, 0, "batch set: high 0 means cache nothing");
	cr_assert_eq(lb_pcp_destroy(p), 0);
	c.batch = -1;
	cr_assert_eq(lb_pcp_create(&p, &c), -EINVAL);
	c.batch = 0;
	c.high_min = 10;	/* a default batch, the caller's highs: checked */
	c.high_max = 5;
	cr_assert_eq(lb_pcp_create(&p, &c), -EINVAL);
	c.backend.free_bulk = NULL;	/* no default for the back-end */
	c.high_min = c.high_max = 0;
	cr_assert_eq(lb_pcp_create(&p, &c), -EINVAL);
}

struct item {
	struct lb_lru_node node;
	int id;
};

static void commit(void *be, void **objs, unsigned int n)
{
	(void)be;
	(void)objs;
	(void)n;
}

static const struct lb_backend_ops ops = {
	.lock = lb_lock_op_acquire, .unlock = lb_lock_op_release,
	.commit = commit,
};

Test(conf, every_static_initializer_creates)
{
	static struct pool *pl;
	struct lb_pcp_conf pc = LB_PCP_CONF_INIT(pool_alloc, pool_free, NULL);
	struct lb_freelist_conf fc = LB_FREELIST_CONF_INIT(64, 1u << 16);
	struct lb_lru_conf lc = LB_LRU_CONF_INIT(struct item, node);
	struct lb_cpubatch_conf bc = LB_CPUBATCH_CONF_INIT(&ops, NULL);
	struct lb_wbatch wb = LB_WBATCH_INIT(31, 31);
	struct lb_freelist *fl;
	struct lb_cpubatch *cb;
	struct lb_lock lock;
	struct lb_lru *lru;
	struct lb_pcp *p;

	pl = pool_new();
	pc.backend.ctx = pl;
	cr_assert_eq(lb_pcp_create(&p, &pc), 0);
	cr_assert_eq(lb_pcp_destroy(p), 0);
	cr_assert_eq(lb_freelist_create(&fl, &fc), 0);
	cr_assert_eq(lb_freelist_destroy(fl), 0);
	cr_assert_eq(lc.node_offset, offsetof(struct item, node));
	cr_assert_eq(lb_lru_create(&lru, &lc), 0);
	cr_assert_eq(lb_lru_destroy(lru), 0);
	cr_assert_eq(bc.mode, LB_CPUBATCH_WEIGHTED);
	cr_assert_eq(lb_lock_init(&lock, LB_LOCK_DEFAULT, "be"), 0);
	bc.backend = &lock;
	cr_assert_eq(lb_cpubatch_create(&cb, &bc), 0);
	cr_assert_eq(lb_cpubatch_destroy(cb), 0);
	cr_assert_eq(lb_lock_destroy(&lock), 0);
	cr_assert_eq(lb_wbatch_add(&wb, &wb, 1), 0);
}

Test(conf, pcp_over_the_callers_lock)
{
	struct pool *pl = pool_new();
	struct lb_pcp_conf c = LB_PCP_CONF_INIT(pool_alloc, pool_free, pl);
	struct lb_lock_stats ls;
	struct lb_lock mine;
	struct lb_pcp_stats st;
	struct lb_pcp *p;
	void *o[100];

	cr_assert_eq(lb_lock_init(&mine, LB_LOCK_SPIN, "pool"), 0);
	pl->lock = &mine;
	c.lock = &mine;
	c.lock_kind = (enum lb_lock_kind)99;	/* ignored with a lock */
	c.nr_slots = 1;
	c.cpu_fn = slot0;
	cr_assert_eq(lb_pcp_create(&p, &c), 0);
	cr_assert_eq(lb_pcp_backend_lock(p), &mine);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(lb_pcp_alloc(p, 0, &o[i]), 0);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(lb_pcp_free(p, o[i], 0), 0);
	cr_assert_geq(lb_pcp_drain_all(p), 0);
	cr_assert_eq(pl->unlocked_calls, 0, "every back-end call under our lock");
	cr_assert_eq(lb_pcp_stats(p, &st, NULL, 0), 1);
	cr_assert_eq(lb_lock_stats(&mine, &ls), 0);
	cr_assert_eq(st.backend_locks, ls.acquisitions);
	cr_assert_gt(ls.acquisitions, 0);
	cr_assert_eq(lb_pcp_destroy(p), 0);
	/* Still ours, still usable. */
	lb_lock_acquire(&mine);
	lb_lock_release(&mine);
	cr_assert_eq(lb_lock_destroy(&mine), 0);
	cr_assert_eq(pl->nr, 4096);
}

Test(conf, one_hold_may_call_free_bulk_once_per_order)
{
	struct pool *pl = pool_new();
	struct lb_pcp_conf c = LB_PCP_CONF_INIT(pool_alloc, pool_free, pl);
	struct lb_pcp_stats before, after;
	struct lb_pcp *p;
	void *a[4], *b[4];

	c.nr_slots = 1;
	c.max_order = 1;
	c.batch = 4;
	c.high_min = 64;
	c.high_max = 64;
	c.cpu_fn = slot0;
	cr_assert_eq(lb_pcp_create(&p, &c), 0);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(lb_pcp_alloc(p, 0, &a[i]), 0);
		cr_assert_eq(lb_pcp_alloc(p, 1, &b[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(lb_pcp_free(p, a[i], 0), 0);
		cr_assert_eq(lb_pcp_free(p, b[i], 1), 0);
	}
	lb_pcp_stats(p, &before, NULL, 0);
	pl->free_calls = 0;
	cr_assert_geq(lb_pcp_drain_all(p), 0);
	lb_pcp_stats(p, &after, NULL, 0);
	/* Both orders went back in one hold of the back-end lock... */
	cr_assert_eq(after.backend_locks - before.backend_locks, 1);
	/* ...with one free_bulk call per order, as pcp.h says. */
	cr_assert_eq(pl->free_calls, 2);
	cr_assert_eq(lb_pcp_destroy(p), 0);
}
