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

#define SM_MAXS 8
#define SM_NOBJ 40
#define NOBJ SM_NOBJ
#define STEPS 2500

#include "../common/slot_model.h"

static struct slot_model m;
static bool counted;			/* @put holds the batch's reference */
static struct test_obj obj[NOBJ];
static uint64_t seed;

static long model_ref(unsigned int x)
{
	return 1 + (counted && m.slot_of[x] >= 0);
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
	unsigned int x = lb_rng_below(r, NOBJ);
	int cpu = sm_random_cpu(&m, r), rc, want;

	backend_set_cpu(cpu);
	rc = nodetab_add(backend_fixture.pc, &obj[x], m.w[x], counted);
	if (m.slot_of[x] >= 0) {
		cr_assert(eq(int, rc, -EEXIST), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		return;
	}
	want = sm_add(&m, x, cpu);
	cr_assert(eq(int, rc, want), "step %u add obj %u cpu %d " LB_SEED_FMT,
		  step, x, cpu, LB_SEED_ARGS(seed));
}

static void do_settle(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ);
	long exp = (long)lb_rng_below(r, 3), ref = model_ref(x);
	int held = m.slot_of[x], rc, want;

	rc = lb_nodetab_settle(nodetab, backend_fixture.pc, &obj[x], exp);
	if (held >= 0 && counted)
		want = ref <= exp ? -ERANGE : ref - 1 > exp ? LB_BUSY : LB_DRAINED;
	else if (held >= 0)	/* no @put: the batch's hold is not in R */
		want = ref < exp ? -ERANGE : ref == exp ? LB_DRAINED : LB_BUSY;
	else
		want = ref < exp ? -ERANGE : ref == exp ? LB_SETTLED : LB_BUSY;
	cr_assert(eq(int, rc, want), "step %u settle obj %u ref %ld exp %ld "
		  LB_SEED_FMT, step, x, ref, exp, LB_SEED_ARGS(seed));
	if (rc == LB_DRAINED)
		sm_flush(&m, (unsigned int)held);
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
			sm_flush(&m, (unsigned int)m.slot_of[x]);
		break;
	case 10:
		want = sm_drain_all(&m);
		cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc),
			     (int)want), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		break;
	default:
		cpu = sm_random_cpu(&m, r);
		backend_set_cpu(cpu);
		want = m.nr[sm_slot(&m, cpu)];
		sm_flush(&m, sm_slot(&m, cpu));
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
	sm_init(&m, &r);
	counted = lb_rng_below(&r, 2);
	nodetab_release_errors = 0;
	/* Few buckets: chains of several entries, reuse from the free lists. */
	cr_assert(eq(int, lb_nodetab_create(&nodetab, 1u << lb_rng_below(&r, 4)),
		     0));
	cr_assert(eq(int, backend_setup_ops(m.nr_slots, LB_CPUBATCH_WEIGHTED,
					    m.max_nr, m.max_weight,
					    counted ? &nodetab_ops :
							&nodetab_ops_commit_only),
		     0));
	backend_fixture.one_thread = true;
	for (i = 0; i < NOBJ; i++)
		backend_obj_init(&obj[i], i);
	for (i = 0; i < STEPS; i++)
		step_once(&r, i);
	sm_drain_all(&m);
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
