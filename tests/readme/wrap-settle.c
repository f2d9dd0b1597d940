// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Runs README.md's "Draining on demand" fragment (block-settle.c, written
 * by tests/readme/extract.sh): @pc is a batch set whose back-end counts
 * references, @p an object with two references of its caller and one of
 * the batch that holds it.
 */
#include <lockbatch/lockbatch.h>

struct page {
	struct lb_node node;
	long refs;
};

static void get(void *obj) { ((struct page *)obj)->refs++; }
static void put(void *obj) { ((struct page *)obj)->refs--; }
static long refcount(void *obj) { return ((struct page *)obj)->refs; }
static void commit(void *be, void **objs, unsigned int n)
{
	(void)be;
	(void)objs;
	(void)n;
}

static const struct lb_backend_ops ops = {
	.lock = lb_lock_op_acquire, .unlock = lb_lock_op_release,
	.commit = commit,
	.get = get, .put = put, .refcount = refcount,
};

static void settle_example(struct lb_cpubatch *pc, struct page *p)
{
#include "block-settle.c"
}

int main(void)
{
	static struct lb_lock lock;
	struct page pg = { .node = LB_NODE_INIT, .refs = 2 };
	struct lb_cpubatch_conf conf = { .mode = LB_CPUBATCH_WEIGHTED,
					 .ops = &ops, .backend = &lock };
	struct lb_cpubatch *pc;

	if (lb_lock_init(&lock, LB_LOCK_DEFAULT, "settle") ||
	    lb_cpubatch_create(&pc, &conf) ||
	    lb_cpubatch_add(pc, &pg, &pg.node, 1) < 0 || pg.refs != 3)
		return 1;
	settle_example(pc, &pg);
	/* The batch's reference is gone: the caller's two are all that is left. */
	if (pg.refs != 2 || lb_cpubatch_destroy(pc))
		return 1;
	return lb_lock_destroy(&lock) ? 1 : 0;
}
