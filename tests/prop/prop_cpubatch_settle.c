// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Property test: random sequences of adds (from random, often out-of-range
 * CPU ids), settles with right and wrong expectations, third-party
 * references, targeted drains, drain_all, drain_local and disable/enable,
 * checked step by step against a reference model of the slots.
 *
 * Properties: every object is committed exactly once per add; the library's
 * node, reference count and commit count agree with the model after every
 * step; a settle flushes at most one slot, only the one the model says
 * held the object, and only when it reports DRAINED (per-slot flush
 * counters).
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"
#include "../common/prng.h"

#define MAXS 8
#define NOBJ 48
#define STEPS 3000

struct model {
	unsigned int nr_slots, max_nr;
	uint32_t max_weight;
	int slot_of[NOBJ];		/* -1: not cached */
	unsigned int nr[MAXS];
	uint32_t weight[MAXS];
	int order[MAXS][LB_WBATCH_MAX];
	unsigned int commits[NOBJ];
	uint32_t w[NOBJ];
	long third[NOBJ];
	unsigned int disabled;
	uint64_t settles;		/* settle calls that returned an outcome */
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
	m.nr[s] = 0;
	m.weight[s] = 0;
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
	return 1 + m.third[x] + (m.slot_of[x] >= 0);
}

static void flush_counts(uint64_t *out)
{
	backend_all_flushes(out, m.nr_slots);
}

/* The stats identities of cpubatch.h, exact with nothing in flight. */
static void check_stats(unsigned int step)
{
	struct lb_cpubatch_stats t;
	uint64_t flushes = 0, adds = 0;
	unsigned int x, c;

	cr_assert(ge(int, lb_cpubatch_stats(backend_fixture.pc, &t, NULL, 0),
		     0));
	for (c = 0; c < LB_FLUSH_NR; c++)
		flushes += t.total.flushes[c];
	for (x = 0; x < NOBJ; x++)
		adds += m.commits[x] + (m.slot_of[x] >= 0);
	cr_assert(eq(u64, t.flushes_inflight, 0));
	cr_assert(eq(u64, t.total.adds, adds), "step %u adds " LB_SEED_FMT,
		  step, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, t.total.adds,
		     t.total.objs_committed + t.total.nr_cached),
		  "step %u " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, flushes, t.total.flushes_committed));
	cr_assert(eq(u64, t.backend_locks, flushes),
		  "step %u: one back-end, one lock hold per flush " LB_SEED_FMT,
		  step, LB_SEED_ARGS(seed));
	cr_assert(eq(u64, t.drain.settled + t.drain.drained + t.drain.busy,
		     m.settles), "step %u settles " LB_SEED_FMT, step,
		  LB_SEED_ARGS(seed));
}

static void check_all(unsigned int step)
{
	unsigned int x;

	check_stats(step);

	for (x = 0; x < NOBJ; x++) {
		cr_assert(eq(u32, obj[x].node.slot,
			     m.slot_of[x] < 0 ? 0 : (uint32_t)m.slot_of[x] + 1),
			  "step %u obj %u slot " LB_SEED_FMT, step, x, LB_SEED_ARGS(seed));
		cr_assert(eq(uint, backend_commits(&obj[x]), m.commits[x]),
			  "step %u obj %u commits " LB_SEED_FMT, step, x,
			  LB_SEED_ARGS(seed));
		cr_assert(eq(long, backend_refcount(&obj[x]), model_ref(x)),
			  "step %u obj %u ref " LB_SEED_FMT, step, x, LB_SEED_ARGS(seed));
	}
}

static void do_add(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ), s;
	int cpu = random_cpu(r), rc, want;

	rc = backend_add(&obj[x], cpu, m.w[x]);
	if (m.slot_of[x] >= 0) {
		cr_assert(eq(int, rc, -EEXIST), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		return;
	}
	s = model_slot(cpu);
	m.order[s][m.nr[s]++] = (int)x;
	m.weight[s] += m.w[x];
	m.slot_of[x] = (int)s;
	want = m.w[x] >= m.max_weight || m.weight[s] > m.max_weight ||
	       m.nr[s] == m.max_nr || m.disabled;
	if (want)
		model_flush(s);
	cr_assert(eq(int, rc, want), "step %u add obj %u slot %u " LB_SEED_FMT,
		  step, x, s, LB_SEED_ARGS(seed));
}

static void do_settle(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ), i;
	long exp = 1 + m.third[x] + (long)lb_rng_below(r, 3) - 1;
	long ref = model_ref(x);
	uint64_t before[MAXS], after[MAXS];
	int held = m.slot_of[x], rc, want;

	if (exp < 0)
		exp = 0;
	flush_counts(before);
	if (lb_rng_below(r, 2))
		rc = lb_cpubatch_settle(backend_fixture.pc, &obj[x],
					&obj[x].node, exp);
	else
		rc = lb_cpubatch_settle_held(backend_fixture.pc, &obj[x],
					     &obj[x].node,
					 exp > 0 ? exp - 1 : 0, exp > 0);
	if (!obj[x].adds)
		want = -ENOENT;
	else if (held >= 0)
		want = ref <= exp ? -ERANGE : ref - 1 > exp ? LB_BUSY : LB_DRAINED;
	else
		want = ref < exp ? -ERANGE : ref == exp ? LB_SETTLED : LB_BUSY;
	if (rc > 0)
		m.settles++;
	cr_assert(eq(int, rc, want), "step %u settle obj %u ref %ld exp %ld "
		  LB_SEED_FMT, step, x, ref, exp, LB_SEED_ARGS(seed));
	flush_counts(after);
	for (i = 0; i < m.nr_slots; i++)
		cr_assert(eq(u64, after[i] - before[i],
			     rc == LB_DRAINED && (int)i == held ? 1 : 0),
			  "step %u settle flushed slot %u (held %d) " LB_SEED_FMT,
			  step, i, held, LB_SEED_ARGS(seed));
	if (rc == LB_DRAINED)
		model_flush((unsigned int)held);
}

static void do_drain_objs(struct lb_rng *r, unsigned int step)
{
	struct lb_node *nodes[5];
	unsigned int k = 1 + lb_rng_below(r, 5), i, want = 0;
	bool hit[MAXS] = { false };

	for (i = 0; i < k; i++) {
		unsigned int x = lb_rng_below(r, NOBJ);

		nodes[i] = &obj[x].node;
		if (m.slot_of[x] >= 0 && !hit[m.slot_of[x]]) {
			hit[m.slot_of[x]] = true;
			want++;
		}
	}
	cr_assert(eq(int, lb_cpubatch_drain_objs(backend_fixture.pc, nodes, k),
		     (int)want),
		  "step %u " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
	for (i = 0; i < m.nr_slots; i++)
		if (hit[i])
			model_flush(i);
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

static void step_once(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ), want;
	int cpu, rc;

	switch (lb_rng_below(r, 20)) {
	case 0 ... 7:
		do_add(r, step);
		break;
	case 8 ... 11:
		do_settle(r, step);
		break;
	case 12:
	case 13:
		rc = lb_cpubatch_drain_obj(backend_fixture.pc, &obj[x].node);
		cr_assert(eq(int, rc, m.slot_of[x] >= 0), "step %u " LB_SEED_FMT,
			  step, LB_SEED_ARGS(seed));
		if (m.slot_of[x] >= 0)
			model_flush((unsigned int)m.slot_of[x]);
		break;
	case 14:
		do_drain_objs(r, step);
		break;
	case 15:
		want = model_drain_all();
		rc = lb_rng_below(r,
				  2) ? lb_cpubatch_drain_all(backend_fixture.pc) :
					  lb_cpubatch_drain_all_forced(backend_fixture.pc);
		cr_assert(eq(int, rc, (int)want), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		break;
	case 16:
		cpu = random_cpu(r);
		backend_set_cpu(cpu);
		want = m.nr[model_slot(cpu)];
		model_flush(model_slot(cpu));
		cr_assert(eq(int, lb_cpubatch_drain_local(backend_fixture.pc),
			     (int)want),
			  "step %u " LB_SEED_FMT, step, LB_SEED_ARGS(seed));
		break;
	case 17:
		if (m.third[x] < 3) {
			test_obj_hold(&obj[x]);
			m.third[x]++;
		}
		break;
	case 18:
		if (m.third[x] > 0) {
			test_obj_release(&obj[x]);
			m.third[x]--;
		}
		break;
	default:
		if (m.disabled && lb_rng_below(r, 4)) {
			cr_assert(eq(int,
				     lb_cpubatch_enable(backend_fixture.pc), (int)--m.disabled));
		} else if (m.disabled < 3 && lb_rng_below(r, 4) == 0) {
			cr_assert(eq(int,
				     lb_cpubatch_disable(backend_fixture.pc), 0));
			m.disabled++;
			model_drain_all();
		}
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
	cr_assert(eq(int, backend_setup_ops(m.nr_slots, LB_CPUBATCH_WEIGHTED,
					    m.max_nr,
				       m.max_weight, &backend_ops), 0));
	for (i = 0; i < NOBJ; i++) {
		backend_obj_init(&obj[i], i);
		m.slot_of[i] = -1;
		/* Mostly small, some at or above the weight cap. */
		m.w[i] = lb_rng_below(&r, 8) ? 1 + lb_rng_below(&r, 4) :
					       m.max_weight + lb_rng_below(&r, 3) - 1;
	}
	for (i = 0; i < STEPS; i++)
		step_once(&r, i);
	while (m.disabled) {
		cr_assert(eq(int, lb_cpubatch_enable(backend_fixture.pc),
			     (int)--m.disabled));
	}
	model_drain_all();
	cr_assert(ge(int, lb_cpubatch_drain_all(backend_fixture.pc), 0));
	check_all(STEPS);
	for (i = 0; i < NOBJ; i++)
		cr_assert(eq(uint, backend_commits(&obj[i]), obj[i].adds),
			  "obj %u committed once per add " LB_SEED_FMT, i,
			  LB_SEED_ARGS(seed));
	cr_assert(eq(ulong, backend_teardown(), 0),
		  "commit() under the back-end lock, after() outside it "
		  LB_SEED_FMT, LB_SEED_ARGS(seed));
}

Test(prop_settle, random_sequences_match_the_model, .timeout = 60)
{
	static const uint64_t seeds[] = {
		1, 2, 3, 0x5e771e, 0xdeadbeef, 0x0123456789abcdefull,
		0xfeedface, 42,
	};
	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run_seed);
}
