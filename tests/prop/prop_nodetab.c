// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Property test of lb_nodetab: random adds (random, often out-of-range CPU
 * ids), targeted drains, settles, drain_all and drain_local through a side
 * table, checked step by step against a model of the slots. The back-end
 * releases from @put (the batch holds a counted reference) or, by seed,
 * from @commit (no @put, no @after).
 *
 * Properties: the table holds exactly one entry per object the model has
 * waiting, after every step; each object is committed once per add; add,
 * drain and settle return what the embedded-node calls would (settle of an
 * object without an entry: what a committed node gives); the library's
 * statistics agree with the model.
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/nodetab_ops.h"
#include "../common/prng.h"

#define MAXS 8
#define NOBJ 40
#define STEPS 2500

struct model {
	unsigned int nr_slots, max_nr;
	uint32_t max_weight;
	bool counted;			/* @put holds the batch's reference */
	int slot_of[NOBJ];		/* -1: not cached */
	unsigned int nr[MAXS];
	uint32_t weight[MAXS];
	int order[MAXS][LB_WBATCH_MAX];
	unsigned int commits[NOBJ];
	uint32_t w[NOBJ];
	unsigned int waiting;
};

static struct model m;
static struct test_obj obj[NOBJ];
static uint64_t seed;

static void model_flush(unsigned int s)
{
	unsigned int i;

	for (i = 0; i < m.nr[s]; i++) {
		m.commits[m.order[s][i]]++;
		m.slot_of[m.order[s][i]] = -1;
	}
	m.waiting -= m.nr[s];
	m.nr[s] = 0;
	m.weight[s] = 0;
}

static unsigned int model_drain_all(void)
{
	unsigned int s, n = 0;

	for (s = 0; s < m.nr_slots; s++) {
		n += m.nr[s];
		model_flush(s);
	}
	return n;
}

static unsigned int model_slot(int cpu)
{
	return cpu < 0 ? 0 : (unsigned int)cpu % m.nr_slots;
}

static int random_cpu(struct lb_rng *r)
{
	switch (lb_rng_below(r, 4)) {
	case 0:
		return -1 - (int)lb_rng_below(r, 100);
	case 1:
		return (int)(m.nr_slots + lb_rng_below(r, 1000));
	default:
		return (int)lb_rng_below(r, m.nr_slots);
	}
}

static long model_ref(unsigned int x)
{
	return 1 + (m.counted && m.slot_of[x] >= 0);
}

static void check_all(unsigned int step)
{
	struct lb_cpubatch_stats t;
	unsigned int x;

	cr_assert(eq(u64, nodetab_entries(), m.waiting),
		  "step %u entries " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	cr_assert(ge(int, lb_cpubatch_stats(backend_fixture.pc, &t, NULL, 0), 0));
	cr_assert(eq(u64, t.total.nr_cached, m.waiting),
		  "step %u cached " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, t.flushes_inflight, 0));
	for (x = 0; x < NOBJ; x++) {
		cr_assert(eq(uint, backend_commits(&obj[x]), m.commits[x]),
			  "step %u obj %u commits " LB_SEED_FMT, step, x,
			  LB_SEED_ARGS(seed));
		cr_assert(eq(long, backend_refcount(&obj[x]), model_ref(x)),
			  "step %u obj %u ref " LB_SEED_FMT, step, x,
			  LB_SEED_ARGS(seed));
	}
	cr_assert(eq(ulong, nodetab_release_errors, 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
}

static void do_add(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ), s;
	int cpu = random_cpu(r), rc, want;

	backend_set_cpu(cpu);
	rc = nodetab_add(backend_fixture.pc, &obj[x], m.w[x], m.counted);
	if (m.slot_of[x] >= 0) {
		cr_assert(eq(int, rc, -EEXIST), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		return;
	}
	s = model_slot(cpu);
	m.order[s][m.nr[s]++] = (int)x;
	m.weight[s] += m.w[x];
	m.slot_of[x] = (int)s;
	m.waiting++;
	want = m.w[x] >= m.max_weight || m.weight[s] > m.max_weight ||
	       m.nr[s] == m.max_nr;
	if (want)
		model_flush(s);
	cr_assert(eq(int, rc, want), "step %u add obj %u slot %u " LB_SEED_FMT,
		  step, x, s, LB_SEED_ARGS(seed));
}

static void do_settle(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ);
	long exp = (long)lb_rng_below(r, 3), ref = model_ref(x);
	int held = m.slot_of[x], rc, want;

	rc = lb_nodetab_settle(nodetab, backend_fixture.pc, &obj[x], exp);
	if (held >= 0 && m.counted)
		want = ref <= exp ? -ERANGE : ref - 1 > exp ? LB_BUSY : LB_DRAINED;
	else if (held >= 0)	/* no @put: the batch's hold is not in R */
		want = ref < exp ? -ERANGE : ref == exp ? LB_DRAINED : LB_BUSY;
	else
		want = ref < exp ? -ERANGE : ref == exp ? LB_SETTLED : LB_BUSY;
	cr_assert(eq(int, rc, want), "step %u settle obj %u ref %ld exp %ld "
		  LB_SEED_FMT, step, x, ref, exp, LB_SEED_ARGS(seed));
	if (rc == LB_DRAINED)
		model_flush((unsigned int)held);
}

static void step_once(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ), want;
	int cpu, rc;

	switch (lb_rng_below(r, 12)) {
	case 0 ... 5:
		do_add(r, step);
		break;
	case 6:
	case 7:
		do_settle(r, step);
		break;
	case 8:
	case 9:
		rc = lb_nodetab_drain_obj(nodetab, backend_fixture.pc, &obj[x]);
		cr_assert(eq(int, rc, m.slot_of[x] >= 0), "step %u " LB_SEED_FMT,
			  step, LB_SEED_ARGS(seed));
		if (m.slot_of[x] >= 0)
			model_flush((unsigned int)m.slot_of[x]);
		break;
	case 10:
		want = model_drain_all();
		cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc),
			     (int)want), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		break;
	default:
		cpu = random_cpu(r);
		backend_set_cpu(cpu);
		want = m.nr[model_slot(cpu)];
		model_flush(model_slot(cpu));
		cr_assert(eq(int, lb_cpubatch_drain_local(backend_fixture.pc),
			     (int)want), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		break;
	}
	check_all(step);
}

static void run_seed(uint64_t s)
{
	struct lb_rng r;
	unsigned int i;

	seed = s;
	lb_rng_seed(&r, s);
	memset(&m, 0, sizeof(m));
	m.nr_slots = 1 + lb_rng_below(&r, MAXS);
	m.max_nr = 2 + lb_rng_below(&r, 7);
	m.max_weight = 4 + lb_rng_below(&r, 13);
	m.counted = lb_rng_below(&r, 2);
	nodetab_release_errors = 0;
	/* Few buckets: chains of several entries, reuse from the free lists. */
	cr_assert(eq(int, lb_nodetab_create(&nodetab, 1u << lb_rng_below(&r, 4)),
		     0));
	cr_assert(eq(int, backend_setup_ops(m.nr_slots, LB_CPUBATCH_WEIGHTED,
					    m.max_nr, m.max_weight,
					    m.counted ? &nodetab_ops :
							&nodetab_ops_commit_only),
		     0));
	backend_fixture.one_thread = true;
	for (i = 0; i < NOBJ; i++) {
		backend_obj_init(&obj[i], i);
		m.slot_of[i] = -1;
		m.w[i] = lb_rng_below(&r, 8) ? 1 + lb_rng_below(&r, 4) :
					       m.max_weight + lb_rng_below(&r, 3) - 1;
	}
	for (i = 0; i < STEPS; i++)
		step_once(&r, i);
	model_drain_all();
	cr_assert(ge(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	check_all(STEPS);
	for (i = 0; i < NOBJ; i++)
		cr_assert(eq(uint, backend_commits(&obj[i]), obj[i].adds),
			  "obj %u committed once per add " LB_SEED_FMT, i,
			  LB_SEED_ARGS(seed));
	cr_assert(eq(ulong, backend_teardown(), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
	cr_assert(eq(int, lb_nodetab_destroy(nodetab), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
}

Test(prop_nodetab, random_sequences_match_the_model, .timeout = 60)
{
	static const uint64_t seeds[] = {
		1, 2, 3, 0x5eed, 0xdeadbeef, 0x123456789abcdefull,
		0xfeedface, 42, 77, 0xa5a5a5a5a5a5a5a5ull,
	};

	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run_seed);
}
