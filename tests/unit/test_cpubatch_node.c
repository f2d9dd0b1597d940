// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * struct lb_node in 8 bytes, through the public API: its size, the widest
 * slot number (LB_CPUBATCH_MAX_SLOTS) in the 16-bit field, owner ids that
 * differ between live instances and are not handed straight back after a
 * destroy (so a node left by a destroyed instance still reads -EXDEV for
 * the next one), and an object moving between instances.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include "../common/backend.h"

#define NINST 64

static struct test_obj O[NINST];

static void setup(void)
{
	unsigned int i;

	cr_assert(eq(int, backend_init(), 0));
	for (i = 0; i < NINST; i++)
		backend_obj_init_at(&O[i], i, 0, 1);
	backend_fixture.one_thread = true;
}

static void teardown(void)
{
	cr_assert(eq(ulong, backend_teardown(), 0));
}

TestSuite(cpubatch_node, .init = setup, .fini = teardown, .timeout = 20);

static struct lb_cpubatch *make(unsigned int slots)
{
	struct lb_cpubatch_conf c = backend_conf(slots, LB_CPUBATCH_WEIGHTED, 0,
						 0, &backend_ops);
	struct lb_cpubatch *pc = NULL;

	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	return pc;
}

Test(cpubatch_node, eight_bytes)
{
	struct lb_node n = LB_NODE_INIT;

	cr_assert(le(sz, sizeof(struct lb_node), 8));
	cr_assert(eq(u32, n.slot, 0));
	cr_assert(eq(u32, n.home, 0));
	cr_assert(eq(u32, n.owner, 0));
}

/* The last slot of the largest instance: slot index + 1 == 4096. */
Test(cpubatch_node, widest_slot_number)
{
	struct lb_cpubatch *pc = make(LB_CPUBATCH_MAX_SLOTS);

	backend_set_cpu(LB_CPUBATCH_MAX_SLOTS - 1);
	cr_assert(eq(int, backend_add_to(pc, &O[0], 1), 0));
	cr_assert(eq(u32, O[0].node.slot, LB_CPUBATCH_MAX_SLOTS));
	cr_assert(eq(u32, LB_NODE_HOME_SLOT(O[0].node.home),
		     LB_CPUBATCH_MAX_SLOTS));
	cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &O[0].node), 1));
	cr_assert(eq(u32, O[0].node.slot, 0));
	cr_assert(eq(uint, backend_commits(&O[0]), 1));
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
}

Test(cpubatch_node, live_instances_have_distinct_owners)
{
	struct lb_cpubatch *pc[NINST];
	unsigned int i, k;

	for (i = 0; i < NINST; i++) {
		pc[i] = make(2);
		cr_assert(eq(int, backend_add_to(pc[i], &O[i], 1), 0));
		cr_assert(ne(u32, O[i].node.owner, 0));
	}
	for (i = 0; i < NINST; i++)
		for (k = 0; k < i; k++)
			cr_assert(ne(u32, O[i].node.owner, O[k].node.owner),
				  "instances %u and %u share an owner id", i, k);
	/* Each instance sees only its own node; another's is -EXDEV. */
	for (i = 0; i < NINST; i++) {
		cr_assert(eq(int, lb_cpubatch_drain_obj(pc[i],
				  &O[(i + 1) % NINST].node), -EXDEV));
		cr_assert(eq(int, lb_cpubatch_drain_obj(pc[i], &O[i].node), 1));
	}
	for (i = 0; i < NINST; i++)
		cr_assert(eq(int, lb_cpubatch_destroy(pc[i]), 0));
}

Test(cpubatch_node, destroyed_id_not_handed_straight_back)
{
	struct lb_cpubatch *a = make(2), *b;
	uint32_t owner_a;

	cr_assert(eq(int, backend_add_to(a, &O[0], 1), 0));
	owner_a = O[0].node.owner;
	cr_assert(eq(int, lb_cpubatch_destroy(a), 0));
	cr_assert(eq(uint, backend_commits(&O[0]), 1), "destroy committed it");
	b = make(2);
	cr_assert(eq(int, backend_add_to(b, &O[1], 1), 0));
	cr_assert(ne(u32, O[1].node.owner, owner_a));
	cr_assert(eq(int, lb_cpubatch_drain_obj(b, &O[0].node), -EXDEV));
	/* The node moves over to @b with an add. */
	backend_set_cpu(1);
	cr_assert(eq(int, backend_add_to(b, &O[0], 1), 0));
	cr_assert(eq(u32, O[0].node.owner, O[1].node.owner));
	cr_assert(eq(u32, O[0].node.slot, 2));
	cr_assert(eq(int, lb_cpubatch_drain_obj(b, &O[0].node), 1));
	cr_assert(eq(uint, backend_commits(&O[0]), 2));
	cr_assert(eq(int, lb_cpubatch_destroy(b), 0));
}
