// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Property test of the 8-byte node's owner ids: random creation and
 * destruction of up to eight instances (ids come and go), adds of objects
 * to random live instances, and targeted drains through random live
 * instances, against a model of which instance each object was last
 * cached by and whether it still waits.
 *
 * Properties, after every step: live instances have distinct owner ids
 * (seen through the nodes of objects they cached); a drain through the
 * instance that cached the object last returns 1 if it waits, else 0;
 * through another live instance -EXDEV (also for an object whose instance
 * was destroyed, as long as ids are not reused: fewer than 65535
 * creations); each object is committed once per add.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/backend.h"
#include "../common/prng.h"

#define NINST 8
#define NOBJ 32
#define STEPS 3000

static struct lb_cpubatch *inst[NINST];	/* NULL: not alive */
static unsigned int gen[NINST];		/* creations of that index */
static int last_inst[NOBJ];		/* -1: never added */
static unsigned int last_gen[NOBJ];
static bool waiting[NOBJ];
static int slot_of[NOBJ];		/* its slot while it waits */
static unsigned int nr[NINST][3];	/* objects waiting per slot */
static struct test_obj obj[NOBJ];
static uint64_t seed;

static void create(unsigned int i)
{
	struct lb_cpubatch_conf c = backend_conf(3, LB_CPUBATCH_WEIGHTED, 4, 0,
						 &backend_ops);

	cr_assert(eq(int, lb_cpubatch_create(&inst[i], &c), 0));
	gen[i]++;
}

static void destroy(unsigned int i)
{
	unsigned int x;

	cr_assert(eq(int, lb_cpubatch_destroy(inst[i]), 0));
	inst[i] = NULL;
	for (x = 0; x < NOBJ; x++)
		if (last_inst[x] == (int)i)
			waiting[x] = false;	/* destroy committed it */
	memset(nr[i], 0, sizeof(nr[i]));
}

/* Slot @s of instance @i is flushed: everything waiting there is committed. */
static void flush(unsigned int i, int s)
{
	unsigned int y;

	for (y = 0; y < NOBJ; y++)
		if (waiting[y] && last_inst[y] == (int)i && slot_of[y] == s)
			waiting[y] = false;
	nr[i][s] = 0;
}

/* Whether @x's node was last cached by the live instance @i, this life. */
static bool owned_by(unsigned int x, unsigned int i)
{
	return last_inst[x] == (int)i && last_gen[x] == gen[i] && inst[i];
}

static void check_owners(unsigned int step)
{
	unsigned int x, y;

	for (x = 0; x < NOBJ; x++)
		for (y = 0; y < x; y++) {
			if (last_inst[x] < 0 || last_inst[y] < 0 ||
			    !inst[last_inst[x]] || !inst[last_inst[y]])
				continue;
			if (!owned_by(x, (unsigned int)last_inst[x]) ||
			    !owned_by(y, (unsigned int)last_inst[y]))
				continue;
			cr_assert(eq(int, obj[x].node.owner == obj[y].node.owner,
				     last_inst[x] == last_inst[y]),
				  "step %u objs %u %u " LB_SEED_FMT, step, x, y,
				  LB_SEED_ARGS(seed));
		}
}

static void step_once(struct lb_rng *r, unsigned int step)
{
	unsigned int i = lb_rng_below(r, NINST), x = lb_rng_below(r, NOBJ);
	int rc, want, cpu;

	switch (lb_rng_below(r, 10)) {
	case 0:
		if (inst[i])
			destroy(i);
		else
			create(i);
		break;
	case 1 ... 5:
		if (!inst[i])
			break;
		if (waiting[x]) {
			/* One instance at a time holds a waiting object. */
			i = (unsigned int)last_inst[x];
		}
		cpu = (int)lb_rng_below(r, 3);
		backend_set_cpu(cpu);
		rc = backend_add_to(inst[i], &obj[x], 1);
		if (waiting[x]) {
			cr_assert(eq(int, rc, -EEXIST));
			break;
		}
		/* Entry cap 4: the fourth object in a slot flushes it. */
		want = ++nr[i][cpu] == 4;
		cr_assert(eq(int, rc, want), "step %u " LB_SEED_FMT, step,
			  LB_SEED_ARGS(seed));
		last_inst[x] = (int)i;
		last_gen[x] = gen[i];
		slot_of[x] = cpu;
		waiting[x] = true;
		if (rc == 1)
			flush(i, cpu);
		break;
	default:
		if (!inst[i])
			break;
		rc = lb_cpubatch_drain_obj(inst[i], &obj[x].node);
		if (last_inst[x] < 0)
			want = 0;
		else if (owned_by(x, i))
			want = waiting[x];
		else
			want = -EXDEV;
		cr_assert(eq(int, rc, want), "step %u drain obj %u inst %u "
			  LB_SEED_FMT, step, x, i, LB_SEED_ARGS(seed));
		if (rc == 1)
			flush(i, slot_of[x]);
		break;
	}
	for (x = 0; x < NOBJ; x++)
		cr_assert(eq(int, obj[x].node.slot != 0, waiting[x]),
			  "step %u obj %u waits " LB_SEED_FMT, step, x,
			  LB_SEED_ARGS(seed));
	check_owners(step);
}

static void run_seed(uint64_t s)
{
	struct lb_rng r;
	unsigned int i;

	seed = s;
	lb_rng_seed(&r, s);
	cr_assert(eq(int, backend_init(), 0));
	for (i = 0; i < NOBJ; i++) {
		backend_obj_init(&obj[i], i);
		last_inst[i] = -1;
		waiting[i] = false;
	}
	for (i = 0; i < NINST; i++) {
		inst[i] = NULL;
		gen[i] = 0;
	}
	memset(nr, 0, sizeof(nr));
	for (i = 0; i < STEPS; i++)
		step_once(&r, i);
	for (i = 0; i < NINST; i++)
		if (inst[i])
			destroy(i);
	for (i = 0; i < NOBJ; i++)
		cr_assert(eq(uint, backend_commits(&obj[i]), obj[i].adds),
			  "obj %u " LB_SEED_FMT, i, LB_SEED_ARGS(seed));
	cr_assert(eq(ulong, backend_teardown(), 0), LB_SEED_FMT,
		  LB_SEED_ARGS(seed));
}

Test(prop_cpubatch_node, owners_match_the_model, .timeout = 60)
{
	static const uint64_t seeds[] = { 1, 2, 3, 0x5eed, 0xdeadbeef, 42 };

	lb_each_seed(seeds, sizeof(seeds) / sizeof(seeds[0]), run_seed);
}
