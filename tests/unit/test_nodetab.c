// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_nodetab: argument errors, an entry living exactly while its object
 * waits or is in flight (add, flush, release from @put or from @commit),
 * the errors of the embedded-node calls passed through (-EEXIST, -EXDEV),
 * an object re-added from inside @commit while its flush holds the entry,
 * settle with and without an entry, and destroy refusing while entries
 * exist. Slots come from the injected per-thread CPU id.
 */
#include "config.h"

#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/nodetab.h>
#include "../common/nodetab_ops.h"

#define NOBJ 64

static struct test_obj O[NOBJ];
static struct lb_cpubatch *pc;

static struct lb_cpubatch *make(const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf c = backend_conf(4, LB_CPUBATCH_WEIGHTED, 8, 0,
						 ops);
	struct lb_cpubatch *p = NULL;

	cr_assert(eq(int, lb_cpubatch_create(&p, &c), 0));
	return p;
}

static void setup(void)
{
	unsigned int i;

	cr_assert(eq(int, backend_init(), 0));
	for (i = 0; i < NOBJ; i++)
		backend_obj_init_at(&O[i], i, 0, 1);
	backend_fixture.one_thread = true;
	cr_assert(eq(int, lb_nodetab_create(&nodetab, 64), 0));
	pc = make(&nodetab_ops);
	backend_fixture.pc = pc;
}

static void teardown(void)
{
	cr_assert(eq(ulong, backend_teardown(), 0));
	cr_assert(eq(u64, nodetab_entries(), 0), "entries left after destroy");
	cr_assert(eq(int, lb_nodetab_destroy(nodetab), 0));
	cr_assert(eq(ulong, nodetab_release_errors, 0));
}

TestSuite(nodetab, .init = setup, .fini = teardown, .timeout = 10);

Test(nodetab, argument_errors)
{
	struct lb_nodetab *t = NULL;
	struct lb_nodetab_stats st;

	cr_assert(eq(int, lb_nodetab_create(NULL, 0), -EINVAL));
	cr_assert(eq(int, lb_nodetab_create(&t, 3), -EINVAL));
	cr_assert(eq(int, lb_nodetab_create(&t, LB_NODETAB_BUCKETS_MAX * 2),
		     -EINVAL));
	cr_assert(t == NULL, "*tp set only on success");
	cr_assert(eq(int, lb_nodetab_destroy(NULL), -EINVAL));
	cr_assert(eq(int, lb_nodetab_add(NULL, pc, &O[0], 1), -EINVAL));
	cr_assert(eq(int, lb_nodetab_add(nodetab, NULL, &O[0], 1), -EINVAL));
	cr_assert(eq(int, lb_nodetab_add(nodetab, pc, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_nodetab_add(nodetab, pc, &O[0], 0), -EINVAL));
	cr_assert(eq(int, lb_nodetab_add(nodetab, pc, &O[0],
					 LB_WBATCH_WEIGHT_MAX + 1), -EINVAL));
	cr_assert(eq(int, lb_nodetab_release(NULL, &O[0]), -EINVAL));
	cr_assert(eq(int, lb_nodetab_release(nodetab, NULL), -EINVAL));
	cr_assert(eq(int, lb_nodetab_release(nodetab, &O[0]), -ENOENT));
	cr_assert(eq(int, lb_nodetab_drain_obj(NULL, pc, &O[0]), -EINVAL));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, NULL, &O[0]), -EINVAL));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, NULL), -EINVAL));
	cr_assert(eq(int, lb_nodetab_settle(nodetab, pc, &O[0], -1), -EINVAL));
	cr_assert(eq(int, lb_nodetab_settle(NULL, pc, &O[0], 1), -EINVAL));
	cr_assert(eq(int, lb_nodetab_stats(nodetab, NULL), -EINVAL));
	cr_assert(eq(int, lb_nodetab_stats(NULL, &st), -EINVAL));
	cr_assert(eq(u64, nodetab_entries(), 0), "nothing created");
}

Test(nodetab, get_is_refused)
{
	struct lb_cpubatch *p = make(&backend_ops);

	cr_assert(eq(int, lb_nodetab_add(nodetab, p, &O[0], 1), -EOPNOTSUPP));
	cr_assert(eq(u64, nodetab_entries(), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(p), 0));
}

/* An entry per waiting object; the flush's @put frees them all. */
Test(nodetab, entry_lives_while_waiting)
{
	unsigned int i;

	backend_set_cpu(1);
	for (i = 0; i < 5; i++) {
		cr_assert(eq(int, nodetab_add(pc, &O[i], 1, true), 0));
		cr_assert(eq(u64, nodetab_entries(), i + 1));
	}
	cr_assert(eq(int, nodetab_add(pc, &O[0], 1, true), -EEXIST));
	cr_assert(eq(long, backend_batch_refs(&O[0]), 1), "refused add undone");
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[2]), 1));
	cr_assert(eq(u64, nodetab_entries(), 0), "released by @put");
	for (i = 0; i < 5; i++) {
		cr_assert(eq(uint, backend_commits(&O[i]), 1));
		cr_assert(eq(long, backend_batch_refs(&O[i]), 0));
	}
	/* No entry: nothing waits, nothing to drain. */
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[2]), 0));
	cr_assert(eq(int, lb_nodetab_release(nodetab, &O[2]), -ENOENT));
}

/* The 8th add fills the 8-entry batch and commits inside the add. */
Test(nodetab, flush_inside_add_releases)
{
	struct lb_nodetab_stats st;
	unsigned int i;

	backend_set_cpu(0);
	for (i = 0; i < 7; i++)
		cr_assert(eq(int, nodetab_add(pc, &O[i], 1, true), 0));
	cr_assert(eq(int, nodetab_add(pc, &O[7], 1, true), 1));
	cr_assert(eq(int, lb_nodetab_stats(nodetab, &st), 0));
	cr_assert(eq(u64, st.entries, 0));
	cr_assert(eq(u64, st.adds, 8));
	cr_assert(eq(u64, st.releases, 8));
	cr_assert(le(u64, st.free, 8), "freed entries kept for reuse");
	/* Reused entries start with a clean node. */
	cr_assert(eq(int, nodetab_add(pc, &O[8], 1, true), 0));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[8]), 1));
}

Test(nodetab, other_instance_is_exdev)
{
	struct lb_cpubatch *q = make(&nodetab_ops);

	backend_set_cpu(2);
	cr_assert(eq(int, nodetab_add(pc, &O[0], 1, true), 0));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, q, &O[0]), -EXDEV));
	cr_assert(eq(int, lb_nodetab_settle(nodetab, q, &O[0], 1), -EXDEV));
	cr_assert(eq(int, nodetab_add(q, &O[0], 1, true), -EEXIST));
	cr_assert(eq(u64, nodetab_entries(), 1));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[0]), 1));
	/* Committed by @pc: @q may take it now, and sees its own node. */
	cr_assert(eq(int, nodetab_add(q, &O[0], 1, true), 0));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, q, &O[0]), 1));
	cr_assert(eq(uint, backend_commits(&O[0]), 2));
	cr_assert(eq(int, lb_cpubatch_destroy(q), 0));
}

/* @commit re-adds the object it commits: its entry is still held. */
static void readd_in_commit(struct backend_fixture *f, struct test_backend *be,
			    void **objs, unsigned int n)
{
	struct test_obj *o = objs[0];

	if (o->id != 0 || o->adds > 1)
		return;
	backend_set_cpu(3);
	cr_assert(eq(int, nodetab_add(f->pc, o, 1, true), 0));
}

Test(nodetab, readd_while_in_flight_reuses_entry)
{
	struct lb_nodetab_stats st;

	backend_fixture.one_thread = false;	/* re-added before its commit ends */
	backend_fixture.on_commit = readd_in_commit;
	backend_set_cpu(1);
	cr_assert(eq(int, nodetab_add(pc, &O[0], 1, true), 0));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[0]), 1));
	backend_fixture.on_commit = NULL;
	cr_assert(eq(int, lb_nodetab_stats(nodetab, &st), 0));
	cr_assert(eq(u64, st.reuses, 1), "the in-flight flush's entry");
	cr_assert(eq(u64, st.entries, 1), "held by the second add");
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[0]), 1));
	cr_assert(eq(u64, nodetab_entries(), 0));
	cr_assert(eq(uint, backend_commits(&O[0]), 2));
}

Test(nodetab, release_from_commit_only)
{
	struct lb_cpubatch *q = make(&nodetab_ops_commit_only);

	backend_set_cpu(0);
	cr_assert(eq(int, nodetab_add(q, &O[0], 1, false), 0));
	cr_assert(eq(int, nodetab_add(q, &O[1], 1, false), 0));
	cr_assert(eq(u64, nodetab_entries(), 2));
	cr_assert(eq(int, lb_cpubatch_drain_all(q), 2));
	cr_assert(eq(u64, nodetab_entries(), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(q), 0));
}

Test(nodetab, settle_with_and_without_entry)
{
	struct lb_cpubatch *q = make(&nodetab_ops_commit_only);

	/* No entry: the count alone. */
	cr_assert(eq(int, lb_nodetab_settle(nodetab, pc, &O[0], 1), LB_SETTLED));
	cr_assert(eq(int, lb_nodetab_settle(nodetab, pc, &O[0], 0), LB_BUSY));
	cr_assert(eq(int, lb_nodetab_settle(nodetab, pc, &O[0], 2), -ERANGE));
	/* Cached: the batch's reference is the surplus. */
	backend_set_cpu(1);
	cr_assert(eq(int, nodetab_add(pc, &O[0], 1, true), 0));
	cr_assert(eq(int, lb_nodetab_settle(nodetab, pc, &O[0], 1), LB_DRAINED));
	cr_assert(eq(u64, nodetab_entries(), 0));
	cr_assert(eq(int, lb_nodetab_settle(nodetab, pc, &O[0], 1), LB_SETTLED));
	/* Without @refcount the back-end offers no settle. */
	{
		struct lb_backend_ops nr = nodetab_ops_commit_only;
		struct lb_cpubatch *r;

		nr.refcount = NULL;
		r = make(&nr);
		cr_assert(eq(int, lb_nodetab_settle(nodetab, r, &O[1], 1),
			     -EOPNOTSUPP));
		cr_assert(eq(int, lb_cpubatch_destroy(r), 0));
	}
	cr_assert(eq(int, lb_cpubatch_destroy(q), 0));
}

Test(nodetab, destroy_refused_while_entries_exist)
{
	backend_set_cpu(1);
	cr_assert(eq(int, nodetab_add(pc, &O[0], 1, true), 0));
	cr_assert(eq(int, lb_nodetab_destroy(nodetab), -EBUSY));
	cr_assert(eq(int, lb_nodetab_drain_obj(nodetab, pc, &O[0]), 1));
}
