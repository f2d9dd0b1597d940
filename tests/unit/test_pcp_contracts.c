// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario cases C24-C26 (tests/cases.md) on lb_pcp: the per-hold unit
 * bound at every order up to LB_PCP_MAX_ORDER, and what decay does and
 * reports on a slot that went idle, for every tuner.
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/pcp.h>
#include "../common/pcp_backend.h"

#define NR_SLOTS 4
#define PER_ORDER 700

static struct tb pool;
static struct tb_env env;
static struct lb_pcp *cache;
static void *objs[PER_ORDER];

static void fini(void)
{
	if (cache)
		cr_assert(eq(int, lb_pcp_destroy(cache), 0));
	cache = NULL;
	cr_assert(eq(u64, pool.errors, 0), "back-end saw a double return");
	tb_fini(&pool);
}

static void make(enum lb_pcp_tuner t, int batch, int high_min, int high_max)
{
	struct lb_pcp_conf c;

	cr_assert(eq(int, tb_init(&pool, LB_PCP_MAX_ORDER + 1, PER_ORDER), 0));
	memset(&env, 0, sizeof(env));
	tb_conf(&c, &pool, &env, t, batch, high_min, high_max);
	c.nr_slots = NR_SLOTS;
	c.max_order = LB_PCP_MAX_ORDER;
	c.expire = 3;
	cr_assert(eq(int, lb_pcp_create(&cache, &c), 0));
}

static void allocs(int cpu, unsigned int order, int n)
{
	int i;

	env.cpu = cpu;
	for (i = 0; i < n; i++)
		cr_assert(eq(int, lb_pcp_alloc(cache, order, &objs[i]), 0),
			  "order %u alloc %d", order, i);
}

static void frees(int cpu, unsigned int order, int n)
{
	int i;

	env.cpu = cpu;
	for (i = 0; i < n; i++)
		cr_assert(eq(int, lb_pcp_free(cache, objs[i], order), 0));
}

/*
 * C24: every path that holds the back-end lock, at one order: refills
 * (slot 0 allocates), flushes (slot 1 frees them), steals (ADAPTIVE: slot
 * 0 again), decay drains and expiry (idle ticks), drains. pcp.h: no hold
 * moves more than batch << 5 units, plus less than one object; a refill,
 * one @alloc_bulk call, at most max(batch << 5, one object).
 */
static void c24(enum lb_pcp_tuner t, int batch, unsigned int order)
{
	uint64_t chunk = (uint64_t)batch << LB_PCP_BATCH_SCALE_MAX;
	uint64_t w = 1ull << order;
	struct lb_pcp_stats st;
	int i;

	make(t, batch, batch * 4, 1 << 24);
	allocs(0, order, 300);
	frees(1, order, 300);
	allocs(0, order, 100);
	frees(0, order, 100);
	lb_pcp_decay(cache);
	allocs(2, order, 50);
	frees(2, order, 50);
	for (i = 0; i < 5; i++)
		lb_pcp_decay(cache);
	allocs(3, order, 40);
	frees(3, order, 40);
	cr_assert(ge(long, lb_pcp_drain(cache, 3), 0));
	cr_assert(ge(long, lb_pcp_drain_all(cache), 0));
	lb_pcp_stats(cache, &st, NULL, 0);
	cr_assert(le(u64, st.total.max_hold_units, chunk + w - 1),
		  "%s batch %d order %u: a hold of %llu units, bound %llu",
		  lb_pcp_tuner_name(t), batch, order,
		  (unsigned long long)st.total.max_hold_units,
		  (unsigned long long)(chunk + w - 1));
	cr_assert(le(u64, pool.max_call_units, chunk > w ? chunk : w),
		  "%s batch %d order %u: a refill of %llu units",
		  lb_pcp_tuner_name(t), batch, order,
		  (unsigned long long)pool.max_call_units);
	cr_assert(gt(u64, st.total.refills, 0));
	cr_assert(gt(u64, st.total.flushes + st.total.decay_drains, 0));
	cr_assert(eq(u64, tb_units_out(&pool), 0), "objects lost");
	fini();
}

Test(pcp_contracts, c24_every_hold_bounded_in_units_at_every_order)
{
	static const int batches[] = { 1, 4, 16, 31, 63 };
	enum lb_pcp_tuner t;
	unsigned int b, o;

	for (t = 0; t < LB_PCP_TUNE_NR; t++)
		for (b = 0; b < sizeof(batches) / sizeof(batches[0]); b++)
			for (o = 0; o <= LB_PCP_MAX_ORDER; o++)
				c24(t, batches[b], o);
}

/* Every slot's count and high; true when all are at 0 and high_min. */
static bool all_settled(struct lb_pcp_tune_state *s)
{
	bool settled = true;
	unsigned int i;

	for (i = 0; i < NR_SLOTS; i++) {
		cr_assert(eq(int, lb_pcp_slot_state(cache, i, &s[i]), 0));
		settled &= s[i].count == 0 && s[i].high == s[i].high_min;
	}
	return settled;
}

/*
 * C25: slot 1 grows high with a burst of allocations and frees (and one
 * tick while in use), then nobody calls. Rule (B): within expire + 1
 * ticks of the last call every slot holds nothing and its high is back
 * at high_min (COUNT_MIN's decrement min(count_min, high / 5) is 0 on an
 * empty slot, so only expiry can bring it down), and the tick that gets
 * there returns 0, as does every tick after it.
 */
static void c25(enum lb_pcp_tuner t)
{
	struct lb_pcp_tune_state s[NR_SLOTS];
	int tick, rc;

	make(t, 16, 64, 4096);
	allocs(1, 0, 600);
	frees(1, 0, 600);
	lb_pcp_decay(cache);
	allocs(1, 0, 300);
	frees(1, 0, 300);
	allocs(2, 0, 1);
	frees(2, 0, 1);
	for (tick = 1; tick <= 3 + 1; tick++) {
		rc = lb_pcp_decay(cache);
		if (tick <= 3)
			cr_assert(eq(int, rc, 1), "%s tick %d: objects cached",
				  lb_pcp_tuner_name(t), tick);
	}
	cr_assert(all_settled(s), "%s: after %d idle ticks slot 1 count %d high "
		  "%d (high_min %d)", lb_pcp_tuner_name(t), 3 + 1, s[1].count,
		  s[1].high, s[1].high_min);
	cr_assert(eq(int, rc, 0), "%s: decay reports work once all settled",
		  lb_pcp_tuner_name(t));
	for (tick = 0; tick < 300; tick++)
		cr_assert(eq(int, lb_pcp_decay(cache), 0), "%s idle tick %d",
			  lb_pcp_tuner_name(t), tick);
	cr_assert(all_settled(s));
	fini();
}

Test(pcp_contracts, c25_idle_slot_high_back_at_high_min_every_tuner)
{
	enum lb_pcp_tuner t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++)
		c25(t);
}

/* The slots' states as decay leaves them, for "nothing changed". */
static void snap(struct lb_pcp_tune_state *s)
{
	unsigned int i;

	for (i = 0; i < NR_SLOTS; i++)
		cr_assert(eq(int, lb_pcp_slot_state(cache, i, &s[i]), 0));
}

/*
 * C26: a slot holding fewer objects than high_min (one allocation refilled
 * a batch), with tuning off and on. Once lb_pcp_decay() returns 0, no
 * later tick may change anything; the expiry still to come must keep it
 * at 1 until the slot is empty.
 */
static void c26(enum lb_pcp_tuner t, int high_max)
{
	struct lb_pcp_tune_state s0[NR_SLOTS], s1[NR_SLOTS];
	int tick, rc, zero_at = -1;
	unsigned int i;

	make(t, 8, 64, high_max);
	allocs(0, 0, 1);
	for (tick = 0; tick < 12; tick++) {
		rc = lb_pcp_decay(cache);
		snap(s1);
		if (zero_at >= 0) {
			cr_assert(eq(int, rc, 0));
			for (i = 0; i < NR_SLOTS; i++)
				cr_assert(s1[i].count == s0[i].count &&
					  s1[i].high == s0[i].high,
					  "%s high_max %d: slot %u changed (count "
					  "%d -> %d) %d ticks after decay "
					  "returned 0", lb_pcp_tuner_name(t),
					  high_max, i, s0[i].count, s1[i].count,
					  tick - zero_at);
		} else if (!rc) {
			zero_at = tick;
			snap(s0);
		}
	}
	cr_assert(ge(int, zero_at, 0), "%s: decay never returned 0",
		  lb_pcp_tuner_name(t));
	cr_assert(eq(int, s1[0].count, 0), "%s: the idle slot kept %d units",
		  lb_pcp_tuner_name(t), s1[0].count);
	frees(0, 0, 1);
	fini();
}

Test(pcp_contracts, c26_decay_returns_0_only_when_no_tick_changes_anything)
{
	enum lb_pcp_tuner t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		c26(t, 64);
		c26(t, 4096);
	}
}
