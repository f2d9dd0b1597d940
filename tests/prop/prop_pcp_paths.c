// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp on its real owner path, property style: a thread pinned to one
 * CPU runs random sequences of allocs and frees of orders 0-2, drains,
 * decays and stats against a reference model (the objects it holds), on
 * the default path (rseq where the machine has it) and on the lock path
 * (LB_PCP_F_LOCK_PATH). What the paths must agree on (DOC: Owner path):
 * allocs and frees counted exactly, count equal to the units the cache
 * holds, no slot above high after a free or a decay (rule (C)), every
 * back-end hold counted under one cause, and every object back after the
 * final drain. Plus which path each configuration reports.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpu.h>
#include <lockbatch/pcp.h>
#include "../common/affinity.h"
#include "../common/prng.h"
#include "../common/pcp_backend.h"

#define ROUNDS 40
#define OPS 3000
#define LIVE 256

struct model {
	void *obj[LIVE];
	unsigned int order[LIVE];
	unsigned int nr;
	uint64_t allocs, frees, live_units;
};

static struct lb_pcp *make(struct tb *b, enum lb_pcp_tuner t, int batch,
			   int high_min, int high_max, unsigned int flags)
{
	struct lb_pcp_conf c;
	struct lb_pcp *p;

	tb_conf(&c, b, NULL, t, batch, high_min, high_max);
	c.nr_slots = 256;
	c.cpu_fn = NULL;
	c.clock_fn = NULL;
	c.flags = flags;
	cr_assert(eq(int, lb_pcp_create(&p, &c), 0));
	return p;
}

/* The slot of CPU @cpu against the model; after a free or decay, @high. */
static void check(struct lb_pcp *p, struct tb *b, const struct model *m,
		  int cpu, bool high, uint64_t seed, int step)
{
	struct lb_pcp_slot_stats sl[256];
	struct lb_pcp_stats st;
	uint64_t holds;

	lb_pcp_stats(p, &st, sl, 256);
	holds = st.total.refills + st.total.flushes + st.total.decay_drains +
		st.total.drains;
	cr_assert(eq(u64, st.total.allocs, m->allocs), "allocs, step %d "
		  LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, st.total.frees, m->frees), "frees, step %d "
		  LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, (uint64_t)st.total.count,
		     tb_units_out(b) - m->live_units),
		  "cached units, step %d " LB_SEED_FMT, step,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(u64, holds, st.backend_locks), "holds, step %d "
		  LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	if (high)
		cr_assert(le(i64, sl[cpu].count, sl[cpu].high),
			  "count above high, step %d " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
}

static void step_alloc(struct lb_pcp *p, struct model *m, struct lb_rng *g)
{
	unsigned int o = lb_rng_below(g, 4) ? 0 : 1 + lb_rng_below(g, 2);
	void *obj;

	if (m->nr == LIVE || lb_pcp_alloc(p, o, &obj))
		return;
	m->obj[m->nr] = obj;
	m->order[m->nr++] = o;
	m->allocs++;
	m->live_units += 1u << o;
}

static bool step_free(struct lb_pcp *p, struct model *m, struct lb_rng *g)
{
	unsigned int k;

	if (!m->nr)
		return false;
	k = lb_rng_below(g, m->nr);
	cr_assert(eq(int, lb_pcp_free(p, m->obj[k], m->order[k]), 0));
	m->frees++;
	m->live_units -= 1u << m->order[k];
	m->nr--;
	m->obj[k] = m->obj[m->nr];
	m->order[k] = m->order[m->nr];
	return true;
}

static void one_round(enum lb_pcp_tuner t, unsigned int flags, int cpu,
		      uint64_t seed)
{
	struct model m = { 0 };
	struct lb_rng g;
	struct lb_pcp *p;
	struct tb b;
	int i, batch;

	lb_rng_seed(&g, seed);
	batch = 1 + (int)lb_rng_below(&g, 40);
	cr_assert(eq(int, tb_init(&b, 3, 2000), 0));
	p = make(&b, t, batch, (int)lb_rng_below(&g, 3u * batch + 1),
		 3 * batch + batch * (int)lb_rng_below(&g, 32), flags);
	for (i = 0; i < OPS; i++) {
		unsigned int x = lb_rng_below(&g, 100);
		bool high = false;

		if (x < 2) {
			lb_pcp_decay(p);
			high = true;
		} else if (x < 3) {
			lb_pcp_drain(p, cpu);
		} else if (x < 52u + (unsigned int)(i / 500 % 2) * 20) {
			step_alloc(p, &m, &g);
		} else {
			high = step_free(p, &m, &g);
		}
		if (x < 4 || i % 16 == 0 || high)
			check(p, &b, &m, cpu, high, seed, i);
	}
	while (step_free(p, &m, &g))
		;
	lb_pcp_drain_all(p);
	check(p, &b, &m, cpu, false, seed, OPS);
	cr_assert(eq(u64, tb_units_out(&b), 0), "lost " LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(u64, b.errors, 0), "double return " LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(int, lb_pcp_destroy(p), 0));
	tb_fini(&b);
}

static int pin(void)
{
	int cpu = lb_test_pin_here();

	cr_assert(ge(int, cpu, 0));
	return cpu;
}

static void rounds(unsigned int flags)
{
	uint64_t base = lb_test_seed(0x9a7b5);
	int cpu = pin(), r, t;

	for (t = 0; t < LB_PCP_TUNE_NR; t++)
		for (r = 0; r < ROUNDS; r++)
			one_round((enum lb_pcp_tuner)t, flags, cpu,
				  base + (uint64_t)(t * ROUNDS + r));
}

Test(pcp_paths, rseq_path_matches_the_model)
{
	rounds(0);
}

Test(pcp_paths, lock_path_matches_the_model)
{
	rounds(LB_PCP_F_LOCK_PATH);
}

static unsigned int path_of(unsigned int nr_slots, unsigned int flags,
			    lb_cpu_fn fn)
{
	struct lb_pcp_conf c;
	struct lb_pcp_stats st;
	struct lb_pcp *p;
	struct tb b;

	cr_assert(eq(int, tb_init(&b, 1, 64), 0));
	tb_conf(&c, &b, NULL, LB_PCP_TUNE_LINUX, 8, 16, 64);
	c.max_order = 0;
	c.nr_slots = nr_slots;
	c.cpu_fn = fn;
	c.clock_fn = NULL;
	c.flags = flags;
	cr_assert(eq(int, lb_pcp_create(&p, &c), 0));
	lb_pcp_stats(p, &st, NULL, 0);
	lb_pcp_destroy(p);
	tb_fini(&b);
	return st.rseq;
}

static int cpu_zero(void *arg)
{
	(void)arg;
	return 0;
}

Test(pcp_paths, each_configuration_reports_its_path)
{
	unsigned int rseq = lb_cpu_path() == LB_CPU_PATH_RSEQ;

	cr_expect(eq(u32, path_of(256, 0, NULL), rseq), "%s",
		  lb_cpu_path_name());
	cr_expect(eq(u32, path_of(256, LB_PCP_F_LOCK_PATH, NULL), 0));
	cr_expect(eq(u32, path_of(256, LB_PCP_F_DEBUG, NULL), 0));
	cr_expect(eq(u32, path_of(256, 0, cpu_zero), 0));
	/* Fewer slots than CPU ids: ids above the count share by modulo. */
	if (lb_cpu_count() > 1)
		cr_expect(eq(u32, path_of(1, 0, NULL), 0));
}

/*
 * Each path has its own entry into lb_pcp_alloc() and lb_pcp_free() (the
 * rseq section, the plain lock, the annotated lock with the debug set):
 * every one refuses a NULL cache, out or object, an order above max_order
 * and a misaligned object with -EINVAL before touching anything, on a
 * warm cache whose magazine holds objects.
 */
static void bad_input_on(unsigned int flags)
{
	char buf[64] __attribute__((aligned(16)));
	struct lb_pcp_stats st0, st1;
	void *o[4], *x;
	struct lb_pcp *p;
	struct tb b;
	int i;

	cr_assert(eq(int, tb_init(&b, 1, 64), 0));
	p = make(&b, LB_PCP_TUNE_LINUX, 8, 16, 64, flags);
	for (i = 0; i < 4; i++)
		cr_assert(eq(int, lb_pcp_alloc(p, 0, &o[i]), 0));
	for (i = 0; i < 3; i++)
		cr_assert(eq(int, lb_pcp_free(p, o[i], 0), 0));
	lb_pcp_stats(p, &st0, NULL, 0);
	x = o[3];
	cr_assert(eq(int, lb_pcp_alloc(NULL, 0, &x), -EINVAL));
	cr_assert(eq(int, lb_pcp_alloc(p, 0, NULL), -EINVAL));
	cr_assert(eq(int, lb_pcp_alloc(p, 4, &x), -EINVAL), "order above max");
	cr_assert(eq(ptr, x, o[3]), "*out touched on error");
	cr_assert(eq(int, lb_pcp_free(NULL, o[3], 0), -EINVAL));
	cr_assert(eq(int, lb_pcp_free(p, NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_pcp_free(p, buf + 1, 0), -EINVAL), "misaligned");
	cr_assert(eq(int, lb_pcp_free(p, o[3], 4), -EINVAL), "order above max");
	lb_pcp_stats(p, &st1, NULL, 0);
	cr_assert(eq(u64, st1.total.allocs, st0.total.allocs));
	cr_assert(eq(u64, st1.total.frees, st0.total.frees));
	cr_assert(eq(i64, st1.total.count, st0.total.count),
		  "state changed on error");
	cr_assert(eq(int, lb_pcp_free(p, o[3], 0), 0));
	cr_assert(eq(int, lb_pcp_destroy(p), 0));
	cr_assert(eq(u64, tb_units_out(&b), 0), "objects lost");
	tb_fini(&b);
}

Test(pcp_paths, bad_input_refused_on_every_path)
{
	bad_input_on(0);
	bad_input_on(LB_PCP_F_LOCK_PATH);
	bad_input_on(LB_PCP_F_DEBUG);
}

/*
 * Two CPUs this thread may run on, @b right after @a, or false: a refill
 * on @a tries the slots of the next CPU ids as peers.
 */
static bool adjacent_cpus(int *a, int *b)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	for (cpu = 0; cpu + 1 < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && CPU_ISSET(cpu + 1, &set)) {
			*a = cpu;
			*b = cpu + 1;
			return true;
		}
	return false;
}

/*
 * ADAPTIVE's steal on the rseq path takes from a peer's lists only: what
 * the peer's owner freed into its magazine stays there (no fence, no
 * fold), so the thief, finding the peer's lists empty, refills from the
 * back-end. high_min == high_max keeps the magazine's room fixed: every
 * reload empties the list, and 40 frees fit.
 */
Test(pcp_paths, adaptive_steal_leaves_the_peer_magazine)
{
	struct lb_pcp_slot_stats sl[256];
	struct lb_pcp *p;
	struct tb b;
	void *o[40], *x;
	int a, c, i;
	int64_t before;

	/* The thief on CPU c, its peer (the next id) on CPU a. */
	if (lb_cpu_path() != LB_CPU_PATH_RSEQ || !adjacent_cpus(&c, &a))
		cr_skip_test("needs the rseq path and two adjacent CPUs (%s)",
			     lb_cpu_path_name());
	cr_assert(eq(int, tb_init(&b, 1, 200), 0));
	p = make(&b, LB_PCP_TUNE_ADAPTIVE, 8, 512, 512, 0);
	cr_assert(eq(int, lb_test_pin(a, 0), 0));
	for (i = 0; i < 40; i++)
		cr_assert(eq(int, lb_pcp_alloc(p, 0, &o[i]), 0));
	for (i = 0; i < 40; i++)
		cr_assert(eq(int, lb_pcp_free(p, o[i], 0), 0));
	lb_pcp_stats(p, NULL, sl, 256);
	before = sl[a].count;
	cr_assert(gt(i64, before, 8), "setup: CPU %d's slot holds %lld", a,
		  (long long)before);
	cr_assert(eq(int, lb_test_pin(c, 0), 0));
	cr_assert(eq(int, lb_pcp_alloc(p, 0, &x), 0));
	lb_pcp_stats(p, NULL, sl, 256);
	cr_assert(eq(u64, sl[c].steals, 0), "stole from the magazine");
	cr_assert(eq(u64, sl[c].refills, 1));
	cr_assert(eq(i64, sl[a].count, before));
	cr_assert(eq(int, lb_pcp_free(p, x, 0), 0));
	cr_assert(eq(int, lb_pcp_destroy(p), 0));
	cr_assert(eq(u64, tb_units_out(&b), 0), "objects lost");
	tb_fini(&b);
}
