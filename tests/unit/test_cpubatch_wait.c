// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch_waiting() and lb_cpubatch_drain_backend(): argument and
 * context errors, counts for the instance and per back-end (objects,
 * weight, slots), the weight rule without @backend_of, and a drain of one
 * back-end flushing exactly the slots that hold its objects.
 */
#include "config.h"

#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/cpubatch_wait.h>
#include "../common/backend.h"

#define NOBJ 16

static struct test_obj O[NOBJ];
static struct lb_backend_ops ops;

static uint32_t weight_of(void *obj)
{
	return ((struct test_obj *)obj)->weight;
}

static void setup(void)
{
	unsigned int i;

	ops = backend_ops;
	ops.backend_of = backend_of;
	/* Object i: back-end i % 3, weight 1 + i % 4. */
	for (i = 0; i < NOBJ; i++)
		backend_obj_init_at(&O[i], i, i % 3, 1 + i % 4);
	cr_assert(eq(int, backend_setup_ops(4, LB_CPUBATCH_WEIGHTED, 16, 64,
					    &ops), 0));
	backend_fixture.one_thread = true;
}

static void teardown(void)
{
	cr_assert(eq(ulong, backend_teardown(), 0));
}

TestSuite(cpubatch_wait, .init = setup, .fini = teardown, .timeout = 10);

static struct lb_cpubatch_waiting waiting(void *be)
{
	struct lb_cpubatch_waiting w;

	cr_assert(eq(int, lb_cpubatch_waiting(backend_fixture.pc, be,
					      weight_of, &w), 0));
	return w;
}

Test(cpubatch_wait, errors)
{
	struct lb_cpubatch_waiting w;
	void *be0 = &backend_fixture.be[0];

	cr_assert(eq(int, lb_cpubatch_waiting(NULL, NULL, NULL, &w), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_waiting(backend_fixture.pc, NULL, NULL,
					      NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_waiting(backend_fixture.pc, be0, NULL,
					      &w), -EINVAL),
		  "one back-end's weight needs weight_of");
	cr_assert(eq(int, lb_cpubatch_drain_backend(NULL, be0), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_drain_backend(backend_fixture.pc, NULL),
		     -EINVAL));
}

Test(cpubatch_wait, counts_per_instance_and_backend)
{
	struct lb_cpubatch_waiting w;
	unsigned int i;

	/* Objects 0..7 from slots 0..3 in turn. */
	for (i = 0; i < 8; i++)
		cr_assert(eq(int, backend_add(&O[i], (int)i % 4, O[i].weight), 0));
	w = waiting(NULL);
	cr_assert(eq(u64, w.nr, 8));
	cr_assert(eq(u64, w.weight, 1 + 2 + 3 + 4 + 1 + 2 + 3 + 4));
	cr_assert(eq(u32, w.slots, 4));
	cr_assert(eq(u64, w.inflight, 0));
	/* Back-end 0: objects 0, 3, 6 (slots 0, 3, 2), weights 1, 4, 3. */
	w = waiting(&backend_fixture.be[0]);
	cr_assert(eq(u64, w.nr, 3));
	cr_assert(eq(u64, w.weight, 8));
	cr_assert(eq(u32, w.slots, 3));
	/* Back-end 3 has nothing. */
	w = waiting(&backend_fixture.be[3]);
	cr_assert(eq(u64, w.nr, 0));
	cr_assert(eq(u32, w.slots, 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(backend_fixture.pc), 8));
	w = waiting(NULL);
	cr_assert(eq(u64, w.nr, 0));
	cr_assert(eq(u64, w.weight, 0));
}

Test(cpubatch_wait, drain_backend_flushes_only_its_slots)
{
	uint64_t before[4], after[4];
	unsigned int i;

	/* Back-end 1's objects (1, 4, 7) wait in slots 1 and 3 only. */
	cr_assert(eq(int, backend_add(&O[0], 0, 1), 0));
	cr_assert(eq(int, backend_add(&O[1], 1, 1), 0));
	cr_assert(eq(int, backend_add(&O[2], 2, 1), 0));
	cr_assert(eq(int, backend_add(&O[4], 3, 1), 0));
	cr_assert(eq(int, backend_add(&O[7], 3, 1), 0));
	cr_assert(eq(int, backend_add(&O[5], 3, 1), 0));
	backend_all_flushes(before, 4);
	cr_assert(eq(int, lb_cpubatch_drain_backend(backend_fixture.pc,
						    &backend_fixture.be[1]), 4),
		  "slot 1 (one object) and slot 3 (three)");
	backend_all_flushes(after, 4);
	for (i = 0; i < 4; i++)
		cr_assert(eq(u64, after[i] - before[i], i == 1 || i == 3),
			  "slot %u", i);
	cr_assert(eq(uint, backend_commits(&O[1]) + backend_commits(&O[4]) +
		     backend_commits(&O[7]), 3));
	cr_assert(eq(uint, backend_commits(&O[5]), 1), "its slot went too");
	cr_assert(eq(uint, backend_commits(&O[0]) + backend_commits(&O[2]), 0));
	cr_assert(eq(u64, waiting(&backend_fixture.be[1]).nr, 0));
	cr_assert(eq(u64, waiting(NULL).nr, 2));
	cr_assert(eq(int, lb_cpubatch_drain_backend(backend_fixture.pc,
						    &backend_fixture.be[1]), 0));
}

/* Without @backend_of every object is conf.backend's: weights are exact. */
Test(cpubatch_wait, single_backend_instance)
{
	struct lb_backend_ops one = backend_ops;
	struct lb_cpubatch_conf c = backend_conf(2, LB_CPUBATCH_WEIGHTED, 16,
						 64, &one);
	struct lb_cpubatch_waiting w;
	struct lb_cpubatch *pc;

	cr_assert(eq(int, lb_cpubatch_create(&pc, &c), 0));
	backend_set_cpu(1);
	cr_assert(eq(int, backend_add_to(pc, &O[3], O[3].weight), 0));
	cr_assert(eq(int, lb_cpubatch_waiting(pc, &backend_fixture.be[0], NULL,
					      &w), 0));
	cr_assert(eq(u64, w.nr, 1));
	cr_assert(eq(u64, w.weight, 4));
	cr_assert(eq(int, lb_cpubatch_waiting(pc, &backend_fixture.be[2], NULL,
					      &w), 0));
	cr_assert(eq(u64, w.nr, 0), "another back-end: nothing of it waits");
	cr_assert(eq(int, lb_cpubatch_drain_backend(pc, &backend_fixture.be[2]),
		     0));
	cr_assert(eq(int, lb_cpubatch_drain_backend(pc, &backend_fixture.be[0]),
		     1));
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
}

/* From inside @commit: the instance's own calls refuse. */
static int in_commit_rc[2];

static void call_in_commit(struct backend_fixture *f, struct test_backend *be,
			   void **objs, unsigned int n)
{
	struct lb_cpubatch_waiting w;

	in_commit_rc[0] = lb_cpubatch_waiting(f->pc, NULL, NULL, &w);
	in_commit_rc[1] = lb_cpubatch_drain_backend(f->pc, be);
}

Test(cpubatch_wait, refused_from_a_callback)
{
	backend_fixture.on_commit = call_in_commit;
	cr_assert(eq(int, backend_add(&O[0], 0, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_local(backend_fixture.pc), 1));
	backend_fixture.on_commit = NULL;
	cr_assert(eq(int, in_commit_rc[0], -EDEADLK));
	cr_assert(eq(int, in_commit_rc[1], -EDEADLK));
}
