// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp property tests of two contracts of pcp.h, for every tuner, on
 * random operation sequences from fixed seeds (LB_SEED replays one):
 *  - the per-hold unit bound at every order up to LB_PCP_MAX_ORDER: each
 *    sequence mixes order 0 with one higher order o (1..10) and checks,
 *    after every operation, that no back-end hold moved more than
 *    batch << 5 units plus less than one order-o object, and no refill
 *    (one alloc_bulk call) more than max(batch << 5, 1 << o) units;
 *  - idle slots: after expire + 1 ticks with no call every slot holds
 *    nothing with high at high_min and lb_pcp_decay() has returned 0; and
 *    whenever lb_pcp_decay() returns 0, another tick changes nothing.
 * Conservation (every unit out of the pool is live or cached) throughout.
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/pcp.h>
#include "../common/prng.h"
#include "../common/pcp_backend.h"

#define NR_SLOTS 3
#define MAX_LIVE 400
#define PER_ORDER 3000

struct live {
	void *obj;
	unsigned int order;
};

struct run {
	struct tb b;
	struct tb_env env;
	struct lb_pcp *p;
	enum lb_pcp_tuner t;
	struct live live[MAX_LIVE];
	unsigned int nr_live;
	uint64_t live_units;
	unsigned int order;		/* the high order of this sequence */
	int batch;
	unsigned int expire;
	uint64_t seed;
};

static void start(struct run *r, enum lb_pcp_tuner t, unsigned int order,
		  uint64_t seed, struct lb_rng *g)
{
	static const int batches[] = { 1, 2, 4, 7, 16, 31, 63 };
	struct lb_pcp_conf c;
	int high_min, high_max;

	memset(r, 0, sizeof(*r));
	r->t = t;
	r->order = order;
	r->seed = seed;
	r->batch = batches[lb_rng_below(g, 7)];
	high_min = (int)lb_rng_below(g, 8u * (unsigned)r->batch + 1);
	high_max = lb_rng_below(g, 5) == 0 ? high_min :
		   high_min + r->batch * (int)lb_rng_below(g, 64) +
		   (int)lb_rng_below(g, 1u << (order + 2));
	r->expire = 1 + lb_rng_below(g, 4);
	cr_assert(eq(int, tb_init(&r->b, LB_PCP_MAX_ORDER + 1, PER_ORDER), 0));
	tb_conf(&c, &r->b, &r->env, t, r->batch, high_min, high_max);
	c.nr_slots = NR_SLOTS;
	c.max_order = LB_PCP_MAX_ORDER;
	c.expire = r->expire;
	cr_assert(eq(int, lb_pcp_create(&r->p, &c), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
}

static void check(struct run *r, int step, const char *op)
{
	uint64_t chunk = (uint64_t)r->batch << LB_PCP_BATCH_SCALE_MAX;
	uint64_t w = 1ull << r->order;
	struct lb_pcp_stats st;

	lb_pcp_stats(r->p, &st, NULL, 0);
	cr_assert(le(u64, st.total.max_hold_units, chunk + w - 1),
		  "%s order %u batch %d step %d %s: a hold of %llu units "
		  LB_SEED_FMT, lb_pcp_tuner_name(r->t), r->order, r->batch,
		  step, op, (unsigned long long)st.total.max_hold_units,
		  LB_SEED_ARGS(r->seed));
	cr_assert(le(u64, r->b.max_call_units, chunk > w ? chunk : w),
		  "%s order %u batch %d step %d %s: a refill of %llu units "
		  LB_SEED_FMT, lb_pcp_tuner_name(r->t), r->order, r->batch,
		  step, op, (unsigned long long)r->b.max_call_units,
		  LB_SEED_ARGS(r->seed));
	cr_assert(eq(u64, tb_units_out(&r->b),
		     r->live_units + (uint64_t)st.total.count),
		  "step %d %s: conservation " LB_SEED_FMT, step, op,
		  LB_SEED_ARGS(r->seed));
}

static void snap(struct run *r, struct lb_pcp_tune_state *s)
{
	unsigned int i;

	for (i = 0; i < NR_SLOTS; i++)
		cr_assert(eq(int, lb_pcp_slot_state(r->p, i, &s[i]), 0));
}

/* A tick; when it returns 0, the next one must change nothing. */
static int decay(struct run *r, int step)
{
	struct lb_pcp_tune_state s0[NR_SLOTS], s1[NR_SLOTS];
	unsigned int i;
	int rc = lb_pcp_decay(r->p);

	cr_assert(rc == 0 || rc == 1, LB_SEED_FMT, LB_SEED_ARGS(r->seed));
	if (rc)
		return rc;
	snap(r, s0);
	cr_assert(eq(int, lb_pcp_decay(r->p), 0), "%s step %d: 0 then 1 "
		  LB_SEED_FMT, lb_pcp_tuner_name(r->t), step,
		  LB_SEED_ARGS(r->seed));
	snap(r, s1);
	for (i = 0; i < NR_SLOTS; i++)
		cr_assert(s0[i].count == s1[i].count && s0[i].high == s1[i].high,
			  "%s step %d slot %u: decay returned 0, then the next "
			  "tick moved count %d -> %d, high %d -> %d " LB_SEED_FMT,
			  lb_pcp_tuner_name(r->t), step, i, s0[i].count,
			  s1[i].count, s0[i].high, s1[i].high,
			  LB_SEED_ARGS(r->seed));
	return rc;
}

/*
 * No call for expire + 1 ticks (rule (B)): every slot empty, high back
 * at high_min, and the last tick returned 0.
 */
static void idle(struct run *r, int step)
{
	struct lb_pcp_tune_state s[NR_SLOTS];
	unsigned int k, i;
	int rc = 1;

	for (k = 0; k <= r->expire; k++)
		rc = decay(r, step);
	snap(r, s);
	for (i = 0; i < NR_SLOTS; i++)
		cr_assert(s[i].count == 0 && s[i].high == s[i].high_min,
			  "%s step %d slot %u after %u idle ticks: count %d "
			  "high %d high_min %d " LB_SEED_FMT,
			  lb_pcp_tuner_name(r->t), step, i, r->expire + 1,
			  s[i].count, s[i].high, s[i].high_min,
			  LB_SEED_ARGS(r->seed));
	cr_assert(eq(int, rc, 0), "%s step %d: decay still reports work "
		  LB_SEED_FMT, lb_pcp_tuner_name(r->t), step,
		  LB_SEED_ARGS(r->seed));
}

static void do_alloc(struct run *r, struct lb_rng *g)
{
	unsigned int o = lb_rng_below(g, 3) ? 0 : r->order;
	void *obj;

	cr_assert(eq(int, lb_pcp_alloc(r->p, o, &obj), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(r->seed));
	r->live[r->nr_live].obj = obj;
	r->live[r->nr_live++].order = o;
	r->live_units += 1ull << o;
}

static void do_free(struct run *r, struct lb_rng *g)
{
	unsigned int i = lb_rng_below(g, r->nr_live);
	struct live l = r->live[i];

	r->live[i] = r->live[--r->nr_live];
	r->live_units -= 1ull << l.order;
	cr_assert(eq(int, lb_pcp_free(r->p, l.obj, l.order), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(r->seed));
}

static void run_seq(enum lb_pcp_tuner t, unsigned int order, uint64_t seed)
{
	static struct run r;
	struct lb_rng g;
	unsigned int bias = 50, i;
	int step;

	lb_rng_seed(&g, seed ^ ((uint64_t)order << 40) ^ ((uint64_t)t << 48));
	start(&r, t, order, seed, &g);
	for (step = 0; step < 1500; step++) {
		unsigned int x = lb_rng_below(&g, 100);
		const char *op;

		if (step % 300 == 0)
			bias = 20 + lb_rng_below(&g, 60);
		r.env.cpu = (int)lb_rng_below(&g, NR_SLOTS);
		if (x < 3) {
			op = "decay";
			decay(&r, step);
		} else if (x < 4) {
			op = "idle";
			idle(&r, step);
		} else if (x < 5) {
			op = "drain";
			cr_assert(ge(long, lb_pcp_drain(r.p, r.env.cpu), 0));
		} else if (x < 5 + bias && r.nr_live < MAX_LIVE) {
			op = "alloc";
			do_alloc(&r, &g);
		} else if (r.nr_live) {
			op = "free";
			do_free(&r, &g);
		} else {
			continue;
		}
		check(&r, step, op);
	}
	for (i = 0; i < r.nr_live; i++)
		cr_assert(eq(int, lb_pcp_free(r.p, r.live[i].obj,
					      r.live[i].order), 0));
	r.nr_live = 0;
	r.live_units = 0;
	idle(&r, step);
	check(&r, step, "end");
	cr_assert(eq(u64, tb_units_out(&r.b), 0), "objects lost " LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(int, lb_pcp_destroy(r.p), 0));
	cr_assert(eq(u64, r.b.errors, 0), "double return " LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	tb_fini(&r.b);
}

static const uint64_t seeds[] = { 0x1, 0xb0d, 0x5eed0022, 0xc0ffee };

static void run_tuner(enum lb_pcp_tuner t)
{
	unsigned int o, i;
	uint64_t s;

	for (o = 1; o <= LB_PCP_MAX_ORDER; o++) {
		if (lb_seed_from_env(&s)) {
			run_seq(t, o, s);
			continue;
		}
		for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
			run_seq(t, o, seeds[i]);
	}
}

Test(pcp_bounds_prop, fixed)
{
	run_tuner(LB_PCP_TUNE_FIXED);
}

Test(pcp_bounds_prop, linux612)
{
	run_tuner(LB_PCP_TUNE_LINUX);
}

Test(pcp_bounds_prop, count_min)
{
	run_tuner(LB_PCP_TUNE_COUNT_MIN);
}

Test(pcp_bounds_prop, adaptive)
{
	run_tuner(LB_PCP_TUNE_ADAPTIVE);
}

Test(pcp_bounds_prop, linux618)
{
	run_tuner(LB_PCP_TUNE_LINUX_618);
}
