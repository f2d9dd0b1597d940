// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario cases C15 and C20 of tests/cases.md (second set), and
 * the order in which lb_cpubatch calls report errors. Several instances here,
 * each with its own back-end, so the drain fixture's single global back-end
 * does not fit.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

#define NBE 2

struct be;
typedef void (*be_hook)(struct be *b, void **objs, unsigned int n);

struct be {
	struct lb_lock lock;
	struct lb_cpubatch *pc;
	unsigned int idx;
	unsigned long commits;		/* under lock */
	be_hook on_commit;
};

struct obj {
	struct lb_node node;
	unsigned int adds[NBE];		/* adds to be[i] that returned >= 0 */
	unsigned int commits[NBE];	/* atomic: commits by be[i] */
	unsigned int readds;		/* re-adds B's commit still owes */
	long ref;
};

static struct be be[NBE];
static __thread int tls_cpu;

static int cpu_of_thread(void *arg)
{
	(void)arg;
	return tls_cpu;
}

static void be_lock(void *b)
{
	lb_lock_acquire(&((struct be *)b)->lock);
}

static void be_unlock(void *b)
{
	lb_lock_release(&((struct be *)b)->lock);
}

static void be_commit(void *bp, void **objs, unsigned int n)
{
	struct be *b = bp;
	unsigned int i;

	for (i = 0; i < n; i++)
		__atomic_add_fetch(&((struct obj *)objs[i])->commits[b->idx], 1,
				   __ATOMIC_RELAXED);
	b->commits += n;
	if (b->on_commit)
		b->on_commit(b, objs, n);
}

static long obj_refcount(void *o)
{
	return __atomic_load_n(&((struct obj *)o)->ref, __ATOMIC_ACQUIRE);
}

static const struct lb_backend_ops ops_plain = {
	.lock = be_lock,
	.unlock = be_unlock,
	.commit = be_commit,
};

static const struct lb_backend_ops ops_refcount = {
	.lock = be_lock,
	.unlock = be_unlock,
	.commit = be_commit,
	.refcount = obj_refcount,
};

static struct lb_cpubatch *be_create(unsigned int i, unsigned int nr_slots,
				 unsigned int max_nr,
				 const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = {
		.nr_slots = nr_slots,
		.mode = LB_CPUBATCH_WEIGHTED,
		.max_nr = max_nr,
		.ops = ops,
		.backend = &be[i],
		.cpu_fn = cpu_of_thread,
	};

	memset(&be[i], 0, sizeof(be[i]));
	be[i].idx = i;
	cr_assert(eq(int, lb_lock_init(&be[i].lock, LB_LOCK_SPIN, "case"), 0));
	cr_assert(eq(int, lb_cpubatch_create(&be[i].pc, &conf), 0));
	return be[i].pc;
}

static void be_destroy_all(void)
{
	unsigned int i;

	for (i = 0; i < NBE; i++) {
		cr_assert(eq(int, lb_cpubatch_destroy(be[i].pc), 0), "destroy %u", i);
		lb_lock_destroy(&be[i].lock);
	}
}

static int obj_add(struct obj *o, unsigned int i)
{
	int rc = lb_cpubatch_add(be[i].pc, o, &o->node, 1);

	if (rc >= 0)
		o->adds[i]++;
	return rc;
}

/* C15: A's commit adds to B; B (one entry per batch) re-adds to itself. */
static void a_commit_adds_to_b(struct be *b, void **objs, unsigned int n)
{
	unsigned int i;

	(void)b;
	for (i = 0; i < n; i++)
		cr_assert(ge(int, obj_add(objs[i], 1), 0));
}

static void b_commit_readds(struct be *b, void **objs, unsigned int n)
{
	unsigned int i;

	(void)b;
	for (i = 0; i < n; i++) {
		struct obj *o = objs[i];

		if (o->readds) {
			o->readds--;
			cr_assert(ge(int, obj_add(o, 1), 0));
		}
	}
}

static void c15_run(unsigned int nr_slots, int cpu)
{
	struct lb_cpubatch_stats st;
	struct obj o = { .readds = 1 };
	unsigned int i;

	be_create(0, nr_slots, 0, &ops_plain);
	be_create(1, nr_slots, 1, &ops_plain);
	be[0].on_commit = a_commit_adds_to_b;
	be[1].on_commit = b_commit_readds;
	tls_cpu = cpu;
	cr_assert(eq(int, obj_add(&o, 0), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(be[0].pc), 1));
	cr_assert(ge(int, lb_cpubatch_drain_all(be[1].pc), 0));
	cr_assert(eq(u32, o.commits[0], 1), "A commits it once");
	cr_assert(eq(u32, o.adds[1], 2), "added to B by A's commit and B's");
	cr_assert(eq(u32, o.commits[1], o.adds[1]),
		  "B commits it as often as it was added there");
	cr_assert(eq(u64, be[0].commits, 1));
	cr_assert(eq(u64, be[1].commits, 2));
	for (i = 0; i < NBE; i++) {
		cr_assert(eq(int, lb_cpubatch_stats(be[i].pc, &st, NULL, 0),
			     (int)nr_slots));
		cr_assert(eq(u64, st.flushes_inflight, 0), "instance %u", i);
		cr_assert(eq(u64, st.total.objs_committed, be[i].commits));
		cr_assert(eq(u64, st.total.nr_cached, 0));
	}
	be_destroy_all();
}

Test(cases2, c15_nested_instances_one_slot, .timeout = 10)
{
	c15_run(1, 0);
}

Test(cases2, c15_nested_instances_1000_slots, .timeout = 10)
{
	c15_run(1000, 999);
}

/*
 * C20: no get/put hooks. One thread adds objects and flushes them; the
 * other drains each object while its flush is between swap-out and commit
 * (the commit hands the object over at that moment, then waits until it is
 * taken) and frees it as soon as drain_obj returns. A drain_obj that does
 * not wait for the flush makes the commit's access a use-after-free.
 */
#define C20_ROUNDS 2000

struct c20_obj {
	struct lb_node node;
	unsigned int committed;
};

static struct c20_obj *c20_mailbox;	/* atomic: handed from commit to drainer */
static unsigned int c20_taken;		/* atomic: the drainer has it */
static unsigned int c20_done;		/* atomic */
static unsigned int c20_early;		/* drain_obj returned before commit */
static unsigned int c20_errors;		/* calls that failed */
static int c20_by_settle;		/* drain by settle, not drain_obj */

static void c20_commit(void *bp, void **objs, unsigned int n)
{
	struct c20_obj *o = objs[0];
	volatile unsigned int spin;
	unsigned int i;

	(void)bp;
	__atomic_store_n(&c20_taken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c20_mailbox, o, __ATOMIC_RELEASE);
	for (i = 0; i < 100000 && !__atomic_load_n(&c20_taken, __ATOMIC_ACQUIRE);
	     i++)
		sched_yield();
	for (spin = 0; spin < 20000; spin++)
		;
	/* A plain access, which ASan checks (the lock orders the writers). */
	for (i = 0; i < n; i++) {
		volatile unsigned int *c = &((struct c20_obj *)objs[i])->committed;

		*c = *c + 1;
	}
}

/* Only the owner's reference: the batch takes none (no get/put). */
static long c20_refcount(void *o)
{
	(void)o;
	return 1;
}

static const struct lb_backend_ops c20_ops = {
	.lock = be_lock,
	.unlock = be_unlock,
	.commit = c20_commit,
	.refcount = c20_refcount,
};

static void *c20_adder(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int r;

	tls_cpu = 0;
	for (r = 0; r < C20_ROUNDS; r++) {
		struct c20_obj *o = calloc(1, sizeof(*o));

		if (!o || lb_cpubatch_add(pc, o, &o->node, 1) != 0) {
			c20_errors++;
			free(o);
			break;
		}
		/* The commit hands o to the drainer, which frees it. */
		if (lb_cpubatch_drain_local(pc) != 1)
			c20_errors++;
		while (__atomic_load_n(&c20_mailbox, __ATOMIC_ACQUIRE))
			sched_yield();
	}
	__atomic_store_n(&c20_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *c20_drainer(void *arg)
{
	struct lb_cpubatch *pc = arg;
	struct c20_obj *o;

	tls_cpu = 1;
	while (!__atomic_load_n(&c20_done, __ATOMIC_ACQUIRE)) {
		o = __atomic_load_n(&c20_mailbox, __ATOMIC_ACQUIRE);
		if (!o) {
			sched_yield();
			continue;
		}
		__atomic_store_n(&c20_taken, 1, __ATOMIC_RELEASE);
		if (c20_by_settle ? lb_cpubatch_settle(pc, o, &o->node, 1) !=
					    LB_SETTLED :
				    lb_cpubatch_drain_obj(pc, &o->node) < 0)
			c20_errors++;
		/* "Drained": no batch and no flush references it any more. */
		if (*(volatile unsigned int *)&o->committed != 1)
			c20_early++;
		free(o);
		__atomic_store_n(&c20_mailbox, NULL, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void c20_run(void)
{
	struct lb_cpubatch *pc = be_create(0, 2, 0, &c20_ops);
	pthread_t a, b;

	be_create(1, 1, 0, &ops_plain);
	cr_assert(eq(int, pthread_create(&b, NULL, c20_drainer, pc), 0));
	cr_assert(eq(int, pthread_create(&a, NULL, c20_adder, pc), 0));
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	cr_assert(eq(u32, c20_errors, 0));
	cr_assert(eq(u32, c20_early, 0), "drain_obj returned before the commit");
	be_destroy_all();
}

Test(cases2, c20_drain_obj_then_free, .timeout = 60)
{
	c20_run();
}

/* The same for settle: LB_SETTLED without @put also means "no flush". */
Test(cases2, c20_settled_then_free, .timeout = 60)
{
	c20_by_settle = 1;
	c20_run();
}

/*
 * Error precedence: ownership is checked before the calling context and
 * before what the back-end supports.
 */
static int prec_rc[2];
static struct obj *prec_foreign;

static void prec_commit(struct be *b, void **objs, unsigned int n)
{
	struct obj *o = prec_foreign;

	(void)objs;
	(void)n;
	/* From B's commit, on a node of A: ownership (EXDEV) comes first. */
	prec_rc[0] = lb_cpubatch_settle(b->pc, o, &o->node, 1);
	prec_rc[1] = lb_cpubatch_drain_obj(b->pc, &o->node);
}

Test(cases2, error_precedence_ownership_first, .timeout = 10)
{
	struct obj a = { .ref = 1 }, x = { .ref = 1 };
	struct lb_node *nodes[2];

	be_create(0, 2, 0, &ops_refcount);
	be_create(1, 2, 1, &ops_plain);	/* no refcount op */
	tls_cpu = 0;
	cr_assert(eq(int, obj_add(&a, 0), 0));
	/* A node of A given to B, which has no @refcount: -EXDEV. */
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &a, &a.node, 1), -EXDEV));
	cr_assert(eq(int, lb_cpubatch_settle_held(be[1].pc, &a, &a.node, 1, 0),
		     -EXDEV));
	/* Argument errors come before ownership. */
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &a, &a.node, -1), -EINVAL));
	nodes[0] = &a.node;
	nodes[1] = NULL;
	cr_assert(eq(int, lb_cpubatch_drain_objs(be[1].pc, nodes, 2), -EINVAL),
		  "a NULL entry anywhere is an argument error");
	/* Never added: -ENOENT before -EOPNOTSUPP. */
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &x, &x.node, 1), -ENOENT));
	/* Own node, no @refcount: -EOPNOTSUPP. */
	cr_assert(eq(int, obj_add(&x, 1), 1));
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &x, &x.node, 1),
		     -EOPNOTSUPP));
	/* Called from B's own commit on A's node: -EXDEV, not -EDEADLK. */
	be[1].on_commit = prec_commit;
	prec_foreign = &a;
	cr_assert(eq(int, obj_add(&x, 1), 1), "B flushes: prec_commit runs");
	cr_assert(eq(int, prec_rc[0], -EXDEV));
	cr_assert(eq(int, prec_rc[1], -EXDEV));
	be[1].on_commit = NULL;
	be_destroy_all();
}
