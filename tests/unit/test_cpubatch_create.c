// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch_create() refuses every configuration that could not deliver
 * an object to a back-end, one test per combination, and leaves *pcp
 * alone; the ones that can deliver are accepted and do deliver, a NULL
 * that @backend_of returns included (the hooks are given it, as for a
 * single back-end).
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>

static int backend;
static unsigned int committed, applied;
static void *seen_be;

static void nolock(void *be)
{
	(void)be;
}

static void commit(void *be, void **objs, unsigned int n)
{
	(void)objs;
	seen_be = be;
	committed += n;
}

static void apply(void *be, enum lb_op_step step, void **objs, unsigned int n)
{
	(void)step;
	(void)objs;
	seen_be = be;
	applied += n;
}

static void ref(void *obj)
{
	(void)obj;
}

static void *to_null(void *obj)
{
	(void)obj;
	return NULL;
}

static const struct lb_backend_ops good = {
	.lock = nolock, .unlock = nolock, .commit = commit, .apply = apply,
};

static void refused(const struct lb_backend_ops *ops, void *be,
		    unsigned int flags)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(ops, be);
	struct lb_cpubatch *pc = (struct lb_cpubatch *)&backend;

	conf.flags = flags;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &conf), -EINVAL));
	cr_assert(eq(ptr, pc, (struct lb_cpubatch *)&backend), "*pcp untouched");
}

Test(create, no_backend_and_no_backend_of)
{
	refused(&good, NULL, 0);
	refused(&good, NULL, LB_CPUBATCH_F_CALLER_REFS);
}

Test(create, no_ops)
{
	refused(NULL, &backend, 0);
}

Test(create, no_lock_unlock_or_commit)
{
	struct lb_backend_ops o = good;

	o.lock = NULL;
	refused(&o, &backend, 0);
	o = good;
	o.unlock = NULL;
	refused(&o, &backend, 0);
	o = good;
	o.commit = NULL;
	refused(&o, &backend, 0);
}

Test(create, caller_refs_with_get_or_put)
{
	struct lb_backend_ops o = good;

	o.get = ref;
	refused(&o, &backend, LB_CPUBATCH_F_CALLER_REFS);
	o = good;
	o.put = ref;
	refused(&o, &backend, LB_CPUBATCH_F_CALLER_REFS);
}

/* Accepted: an add and a queued operation reach @commit and @apply. */
static void delivers(const struct lb_backend_ops *ops, void *be,
		     unsigned int flags, void *want_be)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(ops, be);
	struct lb_cpubatch *pc = NULL;
	struct lb_node n = LB_NODE_INIT;
	int obj;

	committed = applied = 0;
	seen_be = &committed;
	conf.flags = flags;
	conf.nr_slots = 1;
	cr_assert(eq(int, lb_cpubatch_create(&pc, &conf), 0));
	cr_assert(eq(int, lb_cpubatch_add(pc, &obj, &n, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	cr_assert(eq(uint, committed, 1));
	cr_assert(eq(ptr, seen_be, want_be));
	cr_assert(eq(int, lb_cpubatch_queue(pc, &obj, &n, LB_OP_ROTATE, 1),
		     LB_OP_QUEUED));
	seen_be = &committed;
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	cr_assert(eq(uint, applied, 1), "the rotation was applied, not lost");
	cr_assert(eq(ptr, seen_be, want_be));
	cr_assert(eq(int, lb_cpubatch_destroy(pc), 0));
}

Test(create, a_single_backend_delivers)
{
	delivers(&good, &backend, 0, &backend);
	delivers(&good, &backend, LB_CPUBATCH_F_CALLER_REFS, &backend);
}

Test(create, backend_of_delivers_even_null)
{
	struct lb_backend_ops o = good;

	o.backend_of = to_null;
	delivers(&o, NULL, 0, NULL);
	delivers(&o, NULL, LB_CPUBATCH_F_CALLER_REFS, NULL);
}
