/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The test back-end (backend.h) used through an lb_nodetab: no @get (the
 * table refuses it), so nodetab_add() takes the batch's reference itself
 * before the add, and @put drops it (backend_put(), with its checks) and
 * then releases the table's hold, as the table's lifetime rule asks.
 * nodetab_ops_commit_only is the other shape the rule allows: no @after
 * and no @put, the release made by @commit.
 */
#ifndef LB_TEST_NODETAB_OPS_H
#define LB_TEST_NODETAB_OPS_H

#include <errno.h>

#include <lockbatch/nodetab.h>
#include "backend.h"

static struct lb_nodetab *nodetab;
static unsigned long nodetab_release_errors;	/* atomic */

static inline void nodetab_release_obj(void *obj)
{
	if (lb_nodetab_release(nodetab, obj))
		__atomic_add_fetch(&nodetab_release_errors, 1, __ATOMIC_RELAXED);
}

static inline void nodetab_put(void *obj)
{
	backend_put(obj);
	nodetab_release_obj(obj);
}

static inline void nodetab_commit_release(void *backend, void **objs,
					  unsigned int n)
{
	unsigned int i;

	backend_commit(backend, objs, n);
	for (i = 0; i < n; i++)
		nodetab_release_obj(objs[i]);
}

static const struct lb_backend_ops nodetab_ops = {
	.lock = backend_lock,
	.unlock = backend_unlock,
	.commit = backend_commit,
	.after = backend_after,
	.put = nodetab_put,
	.refcount = backend_refcount,
};

static const struct lb_backend_ops nodetab_ops_commit_only = {
	.lock = backend_lock,
	.unlock = backend_unlock,
	.commit = nodetab_commit_release,
	.refcount = backend_refcount,
};

/*
 * Add @o through the table; with @counted (an instance with @put) the
 * batch's reference is taken first and dropped again when the add fails
 * without calling @put. Counts the add when it succeeded.
 */
static inline int nodetab_add(struct lb_cpubatch *pc, struct test_obj *o,
			      uint32_t w, bool counted)
{
	int rc;

	if (counted)
		test_obj_hold(o);
	rc = lb_nodetab_add(nodetab, pc, o, w);
	if (rc >= 0)
		__atomic_add_fetch(&o->adds, 1, __ATOMIC_RELAXED);
	else if (counted && rc != -EAGAIN)
		test_obj_release(o);
	return rc;
}

static inline uint64_t nodetab_entries(void)
{
	struct lb_nodetab_stats st;

	return lb_nodetab_stats(nodetab, &st) ? UINT64_MAX : st.entries;
}

#endif /* LB_TEST_NODETAB_OPS_H */
