// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Property test of the waiting counts and lb_cpubatch_drain_backend():
 * random adds (random, often out-of-range CPU ids) of objects spread over
 * four back-ends, targeted drains, drains of one back-end, drain_local and
 * drain_all, against a model of the slots.
 *
 * Properties, after every step: lb_cpubatch_waiting() for the instance and
 * for each back-end equals the model's objects, weight and slots; nothing
 * is in flight; drain_backend returns the objects of the slots the model
 * says hold that back-end, flushes exactly those slots, and leaves none of
 * the back-end's objects waiting; each object is committed once per add.
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch_wait.h>
#include "../common/backend.h"
#include "../common/prng.h"

#define SM_MAXS 8
#define SM_NOBJ 48
#define NOBJ SM_NOBJ
#define NBE 4
#define STEPS 2500

#include "../common/slot_model.h"

static struct slot_model m;
static struct test_obj obj[NOBJ];
static struct lb_backend_ops ops;
static uint64_t seed;

static uint32_t weight_of(void *o)
{
	return ((struct test_obj *)o)->weight;
}

/* What the model has waiting for back-end @be (-1: every back-end). */
static struct lb_cpubatch_waiting model_waiting(int be)
{
	struct lb_cpubatch_waiting w = { 0 };
	unsigned int s, i;

	for (s = 0; s < m.nr_slots; s++) {
		unsigned int here = 0;

		for (i = 0; i < m.nr[s]; i++) {
			struct test_obj *o = &obj[m.order[s][i]];

			if (be >= 0 && o->be != (unsigned int)be)
				continue;
			here++;
			w.weight += o->weight;
		}
		w.nr += here;
		w.slots += here != 0;
	}
	return w;
}

static void check_all(unsigned int step)
{
	struct lb_cpubatch_waiting got, want;
	unsigned int x;
	int be;

	for (be = -1; be < NBE; be++) {
		cr_assert(eq(int, lb_cpubatch_waiting(backend_fixture.pc,
				  be < 0 ? NULL : &backend_fixture.be[be],
				  weight_of, &got), 0));
		want = model_waiting(be);
		cr_assert(eq(u64, got.nr, want.nr), "step %u be %d nr "
			  LB_SEED_FMT, step, be, LB_SEED_ARGS(seed));
		cr_assert(eq(u64, got.weight, want.weight), "step %u be %d weight "
			  LB_SEED_FMT, step, be, LB_SEED_ARGS(seed));
		cr_assert(eq(u32, got.slots, want.slots), "step %u be %d slots "
			  LB_SEED_FMT, step, be, LB_SEED_ARGS(seed));
		cr_assert(eq(u64, got.inflight, 0));
	}
	for (x = 0; x < NOBJ; x++)
		cr_assert(eq(uint, backend_commits(&obj[x]), m.commits[x]),
			  "step %u obj %u commits " LB_SEED_FMT, step, x,
			  LB_SEED_ARGS(seed));
}

static void do_drain_backend(unsigned int be, unsigned int step)
{
	uint64_t before[SM_MAXS], after[SM_MAXS];
	bool hit[SM_MAXS] = { false };
	unsigned int s, i, want = 0;

	for (s = 0; s < m.nr_slots; s++)
		for (i = 0; i < m.nr[s]; i++)
			hit[s] |= obj[m.order[s][i]].be == be;
	for (s = 0; s < m.nr_slots; s++)
		if (hit[s])
			want += m.nr[s];
	backend_all_flushes(before, m.nr_slots);
	cr_assert(eq(int, lb_cpubatch_drain_backend(backend_fixture.pc,
						    &backend_fixture.be[be]),
		     (int)want), "step %u be %u " LB_SEED_FMT, step, be,
		  LB_SEED_ARGS(seed));
	backend_all_flushes(after, m.nr_slots);
	for (s = 0; s < m.nr_slots; s++) {
		cr_assert(eq(u64, after[s] - before[s], hit[s]),
			  "step %u slot %u " LB_SEED_FMT, step, s,
			  LB_SEED_ARGS(seed));
		if (hit[s])
			sm_flush(&m, s);
	}
}

static void step_once(struct lb_rng *r, unsigned int step)
{
	unsigned int x = lb_rng_below(r, NOBJ), want;
	int cpu = sm_random_cpu(&m, r), rc;

	switch (lb_rng_below(r, 10)) {
	case 0 ... 5:
		rc = backend_add(&obj[x], cpu, obj[x].weight);
		if (m.slot_of[x] >= 0)
			cr_assert(eq(int, rc, -EEXIST));
		else
			cr_assert(eq(int, rc, sm_add(&m, x, cpu)),
				  "step %u " LB_SEED_FMT, step,
				  LB_SEED_ARGS(seed));
		break;
	case 6:
		do_drain_backend(lb_rng_below(r, NBE), step);
		break;
	case 7:
		cr_assert(eq(int, lb_cpubatch_drain_obj(backend_fixture.pc,
							&obj[x].node),
			     m.slot_of[x] >= 0));
		if (m.slot_of[x] >= 0)
			sm_flush(&m, (unsigned int)m.slot_of[x]);
		break;
	case 8:
		backend_set_cpu(cpu);
		want = m.nr[sm_slot(&m, cpu)];
		sm_flush(&m, sm_slot(&m, cpu));
		cr_assert(eq(int, lb_cpubatch_drain_local(backend_fixture.pc),
			     (int)want));
		break;
	default:
		if (lb_rng_below(r, 4) == 0)
			cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc),
				     (int)sm_drain_all(&m)));
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
	ops = backend_ops;
	ops.backend_of = backend_of;
	cr_assert(eq(int, backend_setup_ops(m.nr_slots, LB_CPUBATCH_WEIGHTED,
					    m.max_nr, m.max_weight, &ops), 0));
	backend_fixture.one_thread = true;
	for (i = 0; i < NOBJ; i++)
		backend_obj_init_at(&obj[i], i, lb_rng_below(&r, NBE), m.w[i]);
	for (i = 0; i < STEPS; i++)
		step_once(&r, i);
	cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc),
		     (int)sm_drain_all(&m)));
	check_all(STEPS);
	for (i = 0; i < NOBJ; i++)
		cr_assert(eq(uint, backend_commits(&obj[i]), obj[i].adds),
			  "obj %u " LB_SEED_FMT, i, LB_SEED_ARGS(seed));
	cr_assert(eq(ulong, backend_teardown(), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
}

Test(prop_cpubatch_wait, counts_match_the_model, .timeout = 60)
{
	static const uint64_t seeds[] = {
		1, 2, 3, 0x5eed, 0xdeadbeef, 0x123456789abcdefull,
		0xfeedface, 42, 77, 0xa5a5a5a5a5a5a5a5ull,
	};

	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run_seed);
}
