// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp property tests: random operation sequences from fixed seeds
 * (LB_SEED replays one), checked after every operation against
 *  - the test-only transcription of the 6.12 kernel code (prop_pcp_ref.h)
 *    for the LINUX and COUNT_MIN tuners: same count, high, alloc_factor,
 *    free_count, flags (and count_min) and the same number of back-end
 *    lock holds;
 *  - invariants for every tuner: high_min <= high <= high_max, a free
 *    leaves count <= high, decay leaves count <= high <= high_max and never
 *    frees below its own high, no back-end hold above batch << 5 units,
 *    conservation, and every back-end hold counted under exactly one
 *    cause (refills + flushes + decay drains + drains == lock holds);
 *  - with a small pool that runs dry (and alloc_bulk failures injected):
 *    an allocation fails only when every object of its order is live, as
 *    the drain-and-retry rule promises.
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/pcp.h>
#include "../common/prng.h"
#include "../common/pcp_backend.h"
#include "prop_pcp_ref.h"

#define NR_SLOTS 2
#define MAX_LIVE 6000

struct live {
	void *obj;
	unsigned int order;
};

struct run {
	struct tb b;
	struct tb_env env;
	struct lb_pcp *p;
	enum lb_pcp_tuner t;
	struct per_cpu_pages ref[NR_SLOTS];
	struct live live[MAX_LIVE];
	unsigned int nr_live;
	uint64_t live_units;
	unsigned int live_of[4];	/* live objects per order */
	uint64_t nr_allocs, nr_frees;	/* successful calls */
	int batch, high_min, high_max;
	unsigned int expire;
	unsigned int per_order;		/* pool objects per order */
	bool dry;			/* small pool, injected failures */
	uint64_t seed;
};

static void pick_sizes(struct run *r, struct lb_rng *g)
{
	static const int batches[] = { 1, 2, 7, 8, 31, 63 };

	r->batch = batches[lb_rng_below(g, 6)];
	r->high_min = r->batch * (int)(1 + lb_rng_below(g, 8));
	if (lb_rng_below(g, 5) == 0)
		r->high_min = (int)lb_rng_below(g, 3u * (unsigned)r->batch + 1);
	r->high_max = lb_rng_below(g, 6) == 0 ? r->high_min :
		      r->high_min + r->batch * (int)lb_rng_below(g, 64);
	r->expire = 1 + lb_rng_below(g, 4);
}

static void start(struct run *r, enum lb_pcp_tuner t, uint64_t seed,
		  struct lb_rng *g, bool dry)
{
	struct lb_pcp_conf c;
	int i;

	memset(r, 0, sizeof(*r));
	r->t = t;
	r->seed = seed;
	r->dry = dry;
	pick_sizes(r, g);
	r->per_order = dry ? 8 + lb_rng_below(g, 120) : 20000;
	cr_assert(eq(int, tb_init(&r->b, 4, r->per_order), 0));
	tb_conf(&c, &r->b, &r->env, t, r->batch, r->high_min, r->high_max);
	c.nr_slots = NR_SLOTS;
	c.expire = r->expire;
	cr_assert(eq(int, lb_pcp_create(&r->p, &c), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	for (i = 0; i < NR_SLOTS; i++) {
		struct per_cpu_pages *m = &r->ref[i];

		m->batch = r->batch;
		m->high_min = r->high_min;
		m->high_max = r->high_max;
		m->high = r->high_min;
		m->nr_lists = 4;
		m->count_min_patch = t == LB_PCP_TUNE_COUNT_MIN;
		m->free_high_618 = t == LB_PCP_TUNE_LINUX_618;
		m->expire = r->expire;
		m->lb_rules = true;
	}
}

static void finish(struct run *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_live; i++)
		lb_pcp_free(r->p, r->live[i].obj, r->live[i].order);
	lb_pcp_drain_all(r->p);
	cr_assert(eq(u64, tb_units_out(&r->b), 0), "objects lost " LB_SEED_FMT,
		  LB_SEED_ARGS(r->seed));
	cr_assert(eq(u64, r->b.errors, 0), "double return " LB_SEED_FMT,
		  LB_SEED_ARGS(r->seed));
	lb_pcp_destroy(r->p);
	tb_fini(&r->b);
}

static bool models_kernel(const struct run *r)
{
	return !r->dry && (r->t == LB_PCP_TUNE_LINUX ||
			   r->t == LB_PCP_TUNE_COUNT_MIN ||
			   r->t == LB_PCP_TUNE_LINUX_618);
}

/* C22: each back-end hold is counted under exactly one cause. */
static void check_holds(struct run *r, const struct lb_pcp_stats *st,
			int step, const char *op)
{
	const struct lb_pcp_slot_stats *t = &st->total;

	cr_assert(eq(u64, t->refills + t->flushes + t->decay_drains + t->drains,
		     st->backend_locks),
		  "step %d %s: refills %llu + flushes %llu + decay %llu + "
		  "drains %llu != %llu holds " LB_SEED_FMT, step, op,
		  (unsigned long long)t->refills,
		  (unsigned long long)t->flushes,
		  (unsigned long long)t->decay_drains,
		  (unsigned long long)t->drains,
		  (unsigned long long)st->backend_locks, LB_SEED_ARGS(r->seed));
	cr_assert(eq(u64, t->refills, r->b.alloc_calls),
		  "step %d %s: refills vs alloc_bulk calls " LB_SEED_FMT, step,
		  op, LB_SEED_ARGS(r->seed));
	cr_assert(eq(u64, t->allocs, r->nr_allocs), "step %d %s: allocs "
		  LB_SEED_FMT, step, op, LB_SEED_ARGS(r->seed));
	cr_assert(eq(u64, t->frees, r->nr_frees), "step %d %s: frees "
		  LB_SEED_FMT, step, op, LB_SEED_ARGS(r->seed));
}

static void check(struct run *r, int step, const char *op, bool was_free)
{
	struct lb_pcp_stats st;
	long holds = 0;
	int i;

	lb_pcp_stats(r->p, &st, NULL, 0);
	check_holds(r, &st, step, op);
	for (i = 0; i < NR_SLOTS; i++) {
		struct lb_pcp_tune_state s;
		struct per_cpu_pages *m = &r->ref[i];

		lb_pcp_slot_state(r->p, (unsigned int)i, &s);
		cr_assert(s.high >= s.high_min && s.high <= s.high_max,
			  "step %d %s slot %d: high %d outside [%d, %d] "
			  LB_SEED_FMT, step, op, i, s.high, s.high_min,
			  s.high_max, LB_SEED_ARGS(r->seed));
		/* Rule (C): a free or a decay never leaves count above high. */
		if (was_free && i == r->env.cpu)
			cr_assert(le(int, s.count, s.high),
				  "step %d %s slot %d " LB_SEED_FMT, step, op, i,
				  LB_SEED_ARGS(r->seed));
		if (!strcmp(op, "decay"))
			cr_assert(le(int, s.count, s.high),
				  "step %d decay slot %d: count %d high %d "
				  LB_SEED_FMT, step, i, s.count, s.high,
				  LB_SEED_ARGS(r->seed));
		cr_assert(ge(int, s.count, 0), LB_SEED_FMT, LB_SEED_ARGS(r->seed));
		if (!models_kernel(r))
			continue;
		cr_assert(s.count == m->count && s.high == m->high &&
			  s.alloc_factor == m->alloc_factor &&
			  s.free_count == m->free_count && s.flags == m->flags,
			  "step %d %s slot %d: cache count %d high %d af %d fc %d "
			  "fl %d, kernel %d %d %d %d %d (batch %d, %d..%d) "
			  LB_SEED_FMT, step, op, i, s.count, s.high,
			  s.alloc_factor, s.free_count, s.flags, m->count,
			  m->high, m->alloc_factor, m->free_count, m->flags,
			  r->batch, r->high_min, r->high_max,
			  LB_SEED_ARGS(r->seed));
		if (m->count_min_patch)
			cr_assert(eq(int, s.count_min, m->count_min),
				  "step %d count_min " LB_SEED_FMT, step,
				  LB_SEED_ARGS(r->seed));
		holds += m->zone_lock_holds;
	}
	if (models_kernel(r))
		cr_assert(eq(i64, (int64_t)st.backend_locks, holds),
			  "step %d %s: back-end holds " LB_SEED_FMT, step, op,
			  LB_SEED_ARGS(r->seed));
	/* A hold may overshoot by less than one order-3 object, as the kernel. */
	cr_assert(le(u64, st.total.max_hold_units, ((uint64_t)r->batch << 5) + 7),
		  "step %d: hold of %llu units " LB_SEED_FMT, step,
		  (unsigned long long)st.total.max_hold_units,
		  LB_SEED_ARGS(r->seed));
	/* Conservation: every unit out of the pool is live or cached. */
	cr_assert(eq(u64, tb_units_out(&r->b), r->live_units + (uint64_t)st.total.count),
		  "step %d %s: conservation " LB_SEED_FMT, step, op,
		  LB_SEED_ARGS(r->seed));
}

static unsigned int pick_order(struct lb_rng *g, bool mixed)
{
	unsigned int x;

	if (!mixed)
		return 0;
	x = lb_rng_below(g, 16);
	return x < 10 ? 0 : x < 12 ? 1 : x < 14 ? 2 : 3;
}

/*
 * One allocation. On a dry pool -ENOMEM is allowed only when every object
 * of the order is live (rule (A) drained the slots and retried) or two
 * back-end failures were injected (the attempt and its retry).
 */
static void do_alloc(struct run *r, struct lb_rng *g, bool mixed)
{
	unsigned int o = pick_order(g, mixed);
	int pending = r->b.fail_next, err;
	void *obj;

	rmqueue_pcplist(&r->ref[r->env.cpu], (int)o);
	err = lb_pcp_alloc(r->p, o, &obj);
	if (err) {
		cr_assert(r->dry && err == -ENOMEM, "alloc %d " LB_SEED_FMT, err,
			  LB_SEED_ARGS(r->seed));
		cr_assert(pending >= 2 || r->live_of[o] == r->per_order,
			  "-ENOMEM with %u of %u order-%u objects live "
			  LB_SEED_FMT, r->live_of[o], r->per_order, o,
			  LB_SEED_ARGS(r->seed));
		return;
	}
	r->nr_allocs++;
	r->live_of[o]++;
	r->live[r->nr_live].obj = obj;
	r->live[r->nr_live++].order = o;
	r->live_units += 1u << o;
}

/*
 * ADAPTIVE (DOC: Adaptive tuner, 1): an allocation whose refill a peer
 * served took at most half of what the peer's lists held above one batch
 * (injected CPU ids: the lock path, so no magazine), and the thief gained
 * exactly what the peer lost.
 */
static void alloc_checking_steal(struct run *r, struct lb_rng *g, bool mixed,
				 int step)
{
	struct lb_pcp_slot_stats s0[NR_SLOTS], s1[NR_SLOTS];
	int self = r->env.cpu, peer = (self + 1) % NR_SLOTS;
	int64_t lost;

	lb_pcp_stats(r->p, NULL, s0, NR_SLOTS);
	do_alloc(r, g, mixed);
	lb_pcp_stats(r->p, NULL, s1, NR_SLOTS);
	if (s1[self].steals == s0[self].steals)
		return;
	cr_assert(eq(u64, s1[self].steals, s0[self].steals + 1), "step %d "
		  LB_SEED_FMT, step, LB_SEED_ARGS(r->seed));
	lost = s0[peer].count - s1[peer].count;
	cr_assert(eq(u64, (uint64_t)lost,
		     s1[self].steal_units - s0[self].steal_units),
		  "step %d: peer lost %lld " LB_SEED_FMT, step, (long long)lost,
		  LB_SEED_ARGS(r->seed));
	cr_assert(lost > 0 && lost <= (s0[peer].count - r->batch + 1) / 2,
		  "step %d: stole %lld of a peer holding %lld (batch %d) "
		  LB_SEED_FMT, step, (long long)lost, (long long)s0[peer].count,
		  r->batch, LB_SEED_ARGS(r->seed));
}

static void do_free(struct run *r, struct lb_rng *g)
{
	unsigned int i = lb_rng_below(g, r->nr_live);
	struct live l = r->live[i];

	r->live[i] = r->live[--r->nr_live];
	r->live_units -= 1u << l.order;
	r->live_of[l.order]--;
	free_unref_page_commit(&r->ref[r->env.cpu], (int)l.order);
	cr_assert(eq(int, lb_pcp_free(r->p, l.obj, l.order), 0));
	r->nr_frees++;
}

static void run_seq(enum lb_pcp_tuner t, uint64_t seed, bool mixed, int steps,
		    bool dry)
{
	static struct run r;
	struct lb_rng g;
	int step;
	/* Phases: bias toward allocating or freeing so high moves both ways. */
	unsigned int bias = 50;

	lb_rng_seed(&g, seed);
	start(&r, t, seed, &g, dry);
	for (step = 0; step < steps; step++) {
		unsigned int x = lb_rng_below(&g, 100);
		int slot = (int)lb_rng_below(&g, NR_SLOTS);
		const char *op;
		bool was_free = false;

		if (step % 500 == 0)
			bias = 20 + lb_rng_below(&g, 60);
		r.env.cpu = slot;
		if (x < 2) {
			struct lb_pcp_tune_state s0[NR_SLOTS], s1;
			struct lb_pcp_slot_stats ss0[NR_SLOTS], ss1[NR_SLOTS];
			int todo_ref = 0, todo, i;

			op = "decay";
			for (i = 0; i < NR_SLOTS; i++) {
				todo_ref |= decay_pcp_high(&r.ref[i]);
				lb_pcp_slot_state(r.p, (unsigned)i, &s0[i]);
			}
			lb_pcp_stats(r.p, NULL, ss0, NR_SLOTS);
			todo = lb_pcp_decay(r.p);
			lb_pcp_stats(r.p, NULL, ss1, NR_SLOTS);
			if (models_kernel(&r))
				cr_assert(eq(int, todo, todo_ref), "decay todo "
					  LB_SEED_FMT, LB_SEED_ARGS(seed));
			/*
			 * Decay frees only what is above its new high; each
			 * chunk may overshoot by less than one order-3 object,
			 * as free_pcppages_bulk() does.
			 */
			for (i = 0; i < NR_SLOTS; i++) {
				int over;

				lb_pcp_slot_state(r.p, (unsigned)i, &s1);
				/* Rule (B): an expired slot drains to zero. */
				if (ss1[i].expiries != ss0[i].expiries) {
					cr_assert(eq(int, s1.count, 0), LB_SEED_FMT,
						  LB_SEED_ARGS(seed));
					continue;
				}
				over = s0[i].count > s1.high ?
				       7 * ((s0[i].count - s1.high + r.batch - 1) /
					    r.batch) : 0;
				cr_assert(ge(int, s1.count,
					     (s0[i].count < s1.high ? s0[i].count :
					      s1.high) - over),
					  "decay freed too much: %d -> %d, high %d "
					  LB_SEED_FMT, s0[i].count, s1.count,
					  s1.high, LB_SEED_ARGS(seed));
			}
		} else if (x < 3) {
			op = "drain";
			drain_pages_zone(&r.ref[slot]);
			{
				struct lb_pcp_tune_state s1;

				lb_pcp_drain(r.p, slot);
				lb_pcp_slot_state(r.p, (unsigned)slot, &s1);
				cr_assert(eq(int, s1.count, 0), "drain left %d "
					  LB_SEED_FMT, s1.count, LB_SEED_ARGS(seed));
			}
		} else if (x < 3 + bias && r.nr_live < MAX_LIVE) {
			op = "alloc";
			if (dry && lb_rng_below(&g, 30) == 0)
				r.b.fail_next = 1 + (int)lb_rng_below(&g, 2);
			if (t == LB_PCP_TUNE_ADAPTIVE)
				alloc_checking_steal(&r, &g, mixed, step);
			else
				do_alloc(&r, &g, mixed);
		} else if (r.nr_live) {
			op = "free";
			do_free(&r, &g);
			was_free = true;
		} else {
			continue;
		}
		check(&r, step, op, was_free);
	}
	finish(&r);
}

static const uint64_t seeds[] = {
	0x1, 0x5eed0004, 0xdecaf, 0xbadc0ffee, 0x600df00d, 0x12345678,
	0xfeedface, 0x31415926,
};

static void run_all(enum lb_pcp_tuner t, bool mixed, bool dry)
{
	uint64_t s;
	unsigned int i;

	if (lb_seed_from_env(&s)) {
		run_seq(t, s, mixed, 3000, dry);
		return;
	}
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		run_seq(t, seeds[i], mixed, 3000, dry);
}

Test(pcp_prop, linux_matches_kernel_order0)
{
	run_all(LB_PCP_TUNE_LINUX, false, false);
}

Test(pcp_prop, linux_matches_kernel_mixed_orders)
{
	run_all(LB_PCP_TUNE_LINUX, true, false);
}

Test(pcp_prop, linux618_matches_kernel_618_mixed_orders)
{
	run_all(LB_PCP_TUNE_LINUX_618, true, false);
}

Test(pcp_prop, count_min_matches_patched_kernel)
{
	run_all(LB_PCP_TUNE_COUNT_MIN, true, false);
}

Test(pcp_prop, fixed_invariants)
{
	run_all(LB_PCP_TUNE_FIXED, true, false);
}

Test(pcp_prop, adaptive_invariants)
{
	run_all(LB_PCP_TUNE_ADAPTIVE, true, false);
}

/*
 * C22: a back-end that runs dry (a small pool, alloc_bulk failures
 * injected) and fills again as objects come back: the stats identity and
 * the -ENOMEM rule after every operation, for every tuner.
 */
Test(pcp_prop, c22_holds_identity_with_dry_backend)
{
	enum lb_pcp_tuner t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++)
		run_all(t, true, true);
}

/*
 * The pure per-tick decision on random bare states, as a differential test
 * against a kernel would call it: lb_pcp_tune_decay_step() must leave the
 * state the transcribed decay_pcp_high() leaves (order-0 lists, so the
 * drain is exact).
 */
static void decay_step_vs_kernel(enum lb_pcp_tuner t, uint64_t seed)
{
	struct lb_rng g;
	int i;

	lb_rng_seed(&g, seed);
	for (i = 0; i < 20000; i++) {
		struct lb_pcp_tune_state s;
		struct per_cpu_pages m = { 0 };
		int batch = 1 + (int)lb_rng_below(&g, 127);
		int lo = (int)lb_rng_below(&g, 20000);
		int hi = lo + (int)lb_rng_below(&g, 100000);
		int drained;
		bool todo;

		lb_pcp_tune_init(&s, batch, lo, hi, false);
		s.high = lo + (int)lb_rng_below(&g, (uint32_t)(hi - lo + 1));
		s.count = (int)lb_rng_below(&g, (uint32_t)hi + 5000);
		s.count_min = (int)lb_rng_below(&g, (uint32_t)s.count + 1);
		m.batch = batch;
		m.high_min = lo;
		m.high_max = hi;
		m.high = s.high;
		m.count = s.count;
		m.count_min = s.count_min;
		m.lists[0] = s.count;
		m.nr_lists = 1;
		m.count_min_patch = t == LB_PCP_TUNE_COUNT_MIN;
		todo = lb_pcp_tune_decay_step(t, &s, &drained);
		cr_assert(todo == decay_pcp_high(&m) && s.high == m.high &&
			  s.count == m.count,
			  "%s case %d: high %d count %d, kernel %d %d "
			  LB_SEED_FMT, lb_pcp_tuner_name(t), i, s.high, s.count,
			  m.high, m.count, LB_SEED_ARGS(seed));
		if (m.count_min_patch)
			cr_assert(eq(int, s.count_min, m.count_min), LB_SEED_FMT,
				  LB_SEED_ARGS(seed));
	}
}

Test(pcp_prop, decay_step_matches_kernel_decay_pcp_high)
{
	uint64_t s = lb_test_seed(0xdeca7);

	decay_step_vs_kernel(LB_PCP_TUNE_LINUX, s);
	decay_step_vs_kernel(LB_PCP_TUNE_COUNT_MIN, s);
}
