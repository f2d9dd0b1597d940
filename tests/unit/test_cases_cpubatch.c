// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Scenario cases C15, C20 and C23 of tests/cases.md (second set), and
 * the order in which lb_cpubatch calls report errors. Several instances here,
 * instance i batching into the fixture's back-end i.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <stdint.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "../common/affinity.h"
#include "../common/backend.h"

#define NBE 2

struct be;
typedef void (*be_hook)(struct be *b, void **objs, unsigned int n);

/* Instance i and what its back-end (the fixture's be[i]) committed. */
struct be {
	struct lb_cpubatch *pc;
	unsigned long commits;		/* under the back-end lock */
	be_hook on_commit;
};

/* A fixture object (first member: the callbacks get its address). */
struct obj {
	struct test_obj t;
	unsigned int adds[NBE];		/* adds to be[i] that returned >= 0 */
	unsigned int commits[NBE];	/* atomic: commits by be[i] */
	unsigned int readds;		/* re-adds B's commit still owes */
};

static struct be be[NBE];

/* The fixture's on_commit: count per instance, then its own hook. */
static void be_commit(struct backend_fixture *f, struct test_backend *tb,
		      void **objs, unsigned int n)
{
	struct be *b = &be[tb->idx];
	unsigned int i;

	(void)f;
	for (i = 0; i < n; i++)
		__atomic_add_fetch(&((struct obj *)objs[i])->commits[tb->idx],
				   1,
				   __ATOMIC_RELAXED);
	b->commits += n;
	if (b->on_commit)
		b->on_commit(b, objs, n);
}

/*
 * The fixture's callbacks less after/get/put: these cases are about a
 * batch that holds no reference, with and without @refcount.
 */
static struct lb_backend_ops ops_of(void (*commit)(void *, void **,
						   unsigned int),
				    bool refcount)
{
	struct lb_backend_ops ops = backend_ops;

	ops.commit = commit;
	ops.after = NULL;
	ops.get = NULL;
	ops.put = NULL;
	if (!refcount)
		ops.refcount = NULL;
	return ops;
}

static void setup(void)
{
	cr_assert(eq(int, backend_init(), 0));
	backend_fixture.on_commit = be_commit;
	memset(be, 0, sizeof(be));
}

/* Callback-order errors already failed the test that made them. */
static void teardown(void)
{
	backend_teardown();
}

TestSuite(cases2, .init = setup, .fini = teardown);

static void obj_init(struct obj *o, unsigned int readds)
{
	memset(o, 0, sizeof(*o));
	backend_obj_init(&o->t, 0);
	o->readds = readds;
}

static struct lb_cpubatch *be_create(unsigned int i, unsigned int nr_slots,
				 unsigned int max_nr,
				 const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = backend_conf(nr_slots,
						    LB_CPUBATCH_WEIGHTED,
						    max_nr, 0, ops);

	conf.backend = &backend_fixture.be[i];
	cr_assert(eq(int, lb_cpubatch_create(&be[i].pc, &conf), 0));
	return be[i].pc;
}

static void be_destroy_all(void)
{
	unsigned int i;

	for (i = 0; i < NBE; i++) {
		cr_assert(eq(int, lb_cpubatch_destroy(be[i].pc), 0), "destroy %u", i);
	}
}

static int obj_add(struct obj *o, unsigned int i)
{
	int rc;

	o->t.be = i;
	rc = lb_cpubatch_add(be[i].pc, o, &o->t.node, 1);

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
	struct lb_backend_ops ops = ops_of(backend_commit, false);
	struct obj o;
	unsigned int i;

	obj_init(&o, 1);
	be_create(0, nr_slots, 0, &ops);
	be_create(1, nr_slots, 1, &ops);
	be[0].on_commit = a_commit_adds_to_b;
	be[1].on_commit = b_commit_readds;
	backend_set_cpu(cpu);
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

static struct test_obj *c20_mailbox;	/* atomic: handed from commit to drainer */
static unsigned int c20_taken;		/* atomic: the drainer has it */
static unsigned int c20_done;		/* atomic */
static unsigned int c20_early;		/* drain_obj returned before commit */
static unsigned int c20_errors;		/* calls that failed */
static int c20_by_settle;		/* drain by settle, not drain_obj */

static void c20_commit(void *bp, void **objs, unsigned int n)
{
	struct test_obj *o = objs[0];
	volatile unsigned int spin;
	unsigned int i;

	__atomic_store_n(&c20_taken, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c20_mailbox, o, __ATOMIC_RELEASE);
	for (i = 0; i < 100000 && !__atomic_load_n(&c20_taken, __ATOMIC_ACQUIRE);
	     i++)
		sched_yield();
	for (spin = 0; spin < 20000; spin++)
		;
	/* The fixture's commit reads and counts each object: ASan checks it. */
	backend_commit(bp, objs, n);
}


static void *c20_adder(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int r;

	backend_set_cpu(0);
	for (r = 0; r < C20_ROUNDS; r++) {
		/* A whole struct obj: the commit hook counts into it. */
		struct obj *o = malloc(sizeof(*o));

		if (o)	/* only the owner's reference: no get/put */
			obj_init(o, 0);
		if (!o || lb_cpubatch_add(pc, o, &o->t.node, 1) != 0) {
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
	struct test_obj *o;

	backend_set_cpu(1);
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
		if (backend_commits(o) != 1)
			c20_early++;
		free(o);
		__atomic_store_n(&c20_mailbox, NULL, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void c20_run(void)
{
	struct lb_backend_ops c20_ops = ops_of(c20_commit, true);
	struct lb_backend_ops plain = ops_of(backend_commit, false);
	struct lb_cpubatch *pc = be_create(0, 2, 0, &c20_ops);
	pthread_t a, b;

	be_create(1, 1, 0, &plain);
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
 * C23: an object re-added while an earlier flush of it is still in flight
 * (swapped out, committed, @after and @put not yet run). Thread B flushes
 * slot 0 and stays in that flush's @after; meanwhile the object goes back
 * into a batch, of slot 0 or of slot 1, and the test drains it. The drain
 * must wait for B's flush too: that flush still references the object.
 */
enum c23_drain { C23_DRAIN_OBJ, C23_DRAIN_OBJS, C23_FLUSHED_FIRST,
		 C23_SETTLE, C23_DRAIN_LOCAL, C23_OTHER_INSTANCE,
		 C23_OTHER_INSTANCE_DRAINED };

static int c23_real;			/* the real CPU, pinned: rseq path */
static unsigned int c23_armed;		/* atomic: B's @after blocks once */
static unsigned int c23_in_after;	/* atomic */
static unsigned int c23_after_done;	/* atomic */

static void c23_after(struct backend_fixture *f, struct test_backend *tb,
		      void **objs, unsigned int n)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	(void)f;
	(void)tb;
	(void)objs;
	(void)n;
	if (!__atomic_exchange_n(&c23_armed, 0, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&c23_in_after, 1, __ATOMIC_RELEASE);
	/* Long enough that a drain that does not wait returns first. */
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&c23_after_done, 1, __ATOMIC_RELEASE);
}

/* This thread on slot @cpu: injected, or pinned to that CPU. */
static void c23_on(int cpu)
{
	if (c23_real)
		cr_assert(eq(int, lb_test_pin(cpu, 0), 0));
	backend_set_cpu(cpu);	/* instance 1 always takes it */
}

static void *c23_flusher(void *arg)
{
	c23_on(0);
	return (void *)(intptr_t)lb_cpubatch_drain_local(arg);
}

/*
 * The object, out of instance 0's slot 0 by B's flush, goes through
 * instance 1's slot @slot (drained there, and with @drained also drained
 * by node once more, as a user of instance 1 would) and back into instance
 * 0's slot 1: neither move read instance 0's slot 0, and instance 0's home
 * slot is the same as before the detour.
 */
static void c23_via_other(struct lb_cpubatch *pc, struct obj *o, bool drained)
{
	cr_assert(eq(int, obj_add(o, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(be[1].pc, &o->t.node), 1));
	if (drained)
		cr_assert(eq(int, lb_cpubatch_drain_obj(be[1].pc, &o->t.node),
			     0));
	cr_assert(eq(int, obj_add(o, 0), 0));
	cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &o->t.node), 1));
}

static void c23_run(int slot, enum c23_drain how, bool put)
{
	struct lb_backend_ops ops = backend_ops, plain = ops_of(backend_commit,
								false);
	struct lb_cpubatch *pc;
	struct lb_node *nodes[1];
	struct obj o;
	pthread_t b;
	void *brc;
	int rc;

	if (!put) {
		ops.get = NULL;
		ops.put = NULL;
	}
	if (c23_real) {
		struct lb_cpubatch_conf conf = backend_conf(0,
							    LB_CPUBATCH_WEIGHTED,
							    0, 0, &ops);

		conf.cpu_fn = NULL;
		cr_assert(eq(int, lb_cpubatch_create(&be[0].pc, &conf), 0));
		pc = be[0].pc;
	} else {
		pc = be_create(0, 2, 0, &ops);
	}
	if (how == C23_OTHER_INSTANCE || how == C23_OTHER_INSTANCE_DRAINED)
		be_create(1, 2, 0, &ops);	/* slot @slot, as instance 0 */
	else
		be_create(1, 1, 0, &plain);
	obj_init(&o, 0);
	nodes[0] = &o.t.node;
	backend_fixture.on_after = c23_after;
	c23_armed = 1;
	c23_on(0);
	cr_assert(eq(int, obj_add(&o, 0), 0));
	cr_assert(eq(int, pthread_create(&b, NULL, c23_flusher, pc), 0));
	while (!__atomic_load_n(&c23_in_after, __ATOMIC_ACQUIRE))
		sched_yield();
	/* Swapped out and committed: the object may go into a batch again. */
	c23_on(slot);
	if (how != C23_OTHER_INSTANCE && how != C23_OTHER_INSTANCE_DRAINED)
		cr_assert(eq(int, obj_add(&o, 0), 0));
	switch (how) {
	case C23_DRAIN_OBJ:
		rc = lb_cpubatch_drain_obj(pc, &o.t.node);
		cr_assert(eq(int, rc, 1));
		break;
	case C23_DRAIN_OBJS:
		rc = lb_cpubatch_drain_objs(pc, nodes, 1);
		cr_assert(eq(int, rc, 1));
		break;
	case C23_FLUSHED_FIRST:
		/* Slot 1's own flush ends here; B's is still in flight. */
		cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
		cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &o.t.node), 0));
		break;
	case C23_SETTLE:
		cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
		rc = lb_cpubatch_settle(pc, &o, &o.t.node, 1);
		cr_assert(eq(int, rc, LB_SETTLED));
		break;
	case C23_DRAIN_LOCAL:
		/* The slot's own batch holds the object: drained, B's too. */
		cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
		break;
	case C23_OTHER_INSTANCE:
	case C23_OTHER_INSTANCE_DRAINED:
		c23_via_other(pc, &o, how == C23_OTHER_INSTANCE_DRAINED);
		break;
	}
	cr_assert(eq(u32, __atomic_load_n(&c23_after_done, __ATOMIC_ACQUIRE),
		     1), "returned while B's flush still held the object");
	cr_assert(eq(u32, o.commits[0], 2));
	if (put)
		cr_assert(eq(long, backend_batch_refs(&o.t), 0),
			  "a batch reference is still held");
	cr_assert(eq(int, pthread_join(b, &brc), 0));
	cr_assert(eq(long, (long)(intptr_t)brc, 1));
	backend_fixture.on_after = NULL;
	be_destroy_all();
}

Test(cases2, c23_readd_same_slot_drain_obj, .timeout = 10)
{
	c23_run(0, C23_DRAIN_OBJ, true);
}

Test(cases2, c23_readd_other_slot_drain_obj, .timeout = 10)
{
	c23_run(1, C23_DRAIN_OBJ, true);
}

Test(cases2, c23_readd_other_slot_drain_objs, .timeout = 10)
{
	c23_run(1, C23_DRAIN_OBJS, true);
}

Test(cases2, c23_readd_other_slot_flushed_then_drain_obj, .timeout = 10)
{
	c23_run(1, C23_FLUSHED_FIRST, true);
}

Test(cases2, c23_readd_other_slot_settled_without_put, .timeout = 10)
{
	c23_run(1, C23_SETTLE, false);
}

Test(cases2, c23_readd_other_slot_drain_local, .timeout = 10)
{
	c23_run(1, C23_DRAIN_LOCAL, true);
}

Test(cases2, c23_readd_via_other_instance_drain_obj, .timeout = 10)
{
	c23_run(1, C23_OTHER_INSTANCE, true);
}

Test(cases2, c23_readd_via_other_instance_drained_there, .timeout = 10)
{
	c23_run(1, C23_OTHER_INSTANCE_DRAINED, true);
}

/* The same on the real CPU (the rseq path where the process has it). */
static void c23_real_run(enum c23_drain how)
{
	cpu_set_t orig;

	cr_assert(eq(int, sched_getaffinity(0, sizeof(orig), &orig), 0));
	if (!CPU_ISSET(0, &orig) || !CPU_ISSET(1, &orig) ||
	    lb_cpu_count() < 2)
		cr_skip_test("needs CPUs 0 and 1");
	c23_real = 1;
	c23_run(1, how, true);
	sched_setaffinity(0, sizeof(orig), &orig);
}

Test(cases2, c23_real_cpu_readd_drain_obj, .timeout = 10)
{
	c23_real_run(C23_DRAIN_OBJ);
}

Test(cases2, c23_real_cpu_readd_flushed_then_drain_obj, .timeout = 10)
{
	c23_real_run(C23_FLUSHED_FIRST);
}

Test(cases2, c23_real_cpu_readd_drain_local, .timeout = 10)
{
	c23_real_run(C23_DRAIN_LOCAL);
}

Test(cases2, c23_real_cpu_readd_via_other_instance, .timeout = 10)
{
	c23_real_run(C23_OTHER_INSTANCE);
}

/*
 * C23 across fork(): the flush whose @after forks goes on in the child
 * too. The child's in-flight counts must count it until its @put, not
 * start from zero and wrap when it ends (a child whose drains then hang
 * and whose destroy reports -EBUSY forever).
 */
static pid_t c23_child = -1;

static void c23_fork_after(struct backend_fixture *f, struct test_backend *tb,
			   void **objs, unsigned int n)
{
	(void)f;
	(void)tb;
	(void)objs;
	(void)n;
	if (!__atomic_exchange_n(&c23_armed, 0, __ATOMIC_ACQ_REL))
		return;
	c23_child = fork();
	if (c23_child == 0)
		alarm(5);	/* a wait for a wrapped count never ends */
}

/* In the child: what its instance says once the forked flush ended. */
static int c23_child_checks(struct lb_cpubatch *pc, struct obj *o, int rc)
{
	struct lb_cpubatch_stats st;
	int bad = 0;

	if (rc != 1)
		bad |= 1;
	if (lb_cpubatch_stats(pc, &st, NULL, 0) < 0 || st.flushes_inflight)
		bad |= 2;
	if (obj_add(o, 0) != 0 || lb_cpubatch_drain_local(pc) != 1)
		bad |= 4;
	if (lb_cpubatch_destroy(pc) != 0)
		bad |= 8;
	return bad;
}

Test(cases2, c23_fork_from_after, .timeout = 10)
{
	struct lb_backend_ops ops = backend_ops, plain = ops_of(backend_commit,
								false);
	struct lb_cpubatch *pc = be_create(0, 2, 0, &ops);
	struct obj o;
	int rc, status, exited;

	be_create(1, 1, 0, &plain);
	obj_init(&o, 0);
	backend_fixture.on_after = c23_fork_after;
	c23_armed = 1;
	backend_set_cpu(0);
	cr_assert(eq(int, obj_add(&o, 0), 0));
	rc = lb_cpubatch_drain_obj(pc, &o.t.node);
	if (c23_child == 0)
		_exit(c23_child_checks(pc, &o, rc));
	cr_assert(eq(int, rc, 1));
	cr_assert(gt(int, c23_child, 0));
	cr_assert(eq(int, waitpid(c23_child, &status, 0), c23_child));
	exited = WIFEXITED(status) != 0;
	cr_assert(eq(int, exited, 1), "child killed by signal %d",
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	status = WEXITSTATUS(status);
	cr_assert(eq(int, status, 0),
		  "child: 1 drain, 2 in-flight count, 4 drain_local, 8 destroy");
	backend_fixture.on_after = NULL;
	be_destroy_all();
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
	prec_rc[0] = lb_cpubatch_settle(b->pc, o, &o->t.node, 1);
	prec_rc[1] = lb_cpubatch_drain_obj(b->pc, &o->t.node);
}

Test(cases2, error_precedence_ownership_first, .timeout = 10)
{
	struct lb_backend_ops with_rc = ops_of(backend_commit, true);
	struct lb_backend_ops plain = ops_of(backend_commit, false);
	struct obj a, x;
	struct lb_node *nodes[2];

	obj_init(&a, 0);
	obj_init(&x, 0);
	be_create(0, 2, 0, &with_rc);
	be_create(1, 2, 1, &plain);	/* no refcount op */
	backend_set_cpu(0);
	cr_assert(eq(int, obj_add(&a, 0), 0));
	/* A node of A given to B, which has no @refcount: -EXDEV. */
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &a, &a.t.node, 1),
		     -EXDEV));
	cr_assert(eq(int, lb_cpubatch_settle_held(be[1].pc, &a, &a.t.node, 1,
						  0),
		     -EXDEV));
	/* Argument errors come before ownership. */
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &a, &a.t.node, -1),
		     -EINVAL));
	nodes[0] = &a.t.node;
	nodes[1] = NULL;
	cr_assert(eq(int, lb_cpubatch_drain_objs(be[1].pc, nodes, 2), -EINVAL),
		  "a NULL entry anywhere is an argument error");
	/* Never added: -ENOENT before -EOPNOTSUPP. */
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &x, &x.t.node, 1),
		     -ENOENT));
	/* Own node, no @refcount: -EOPNOTSUPP. */
	cr_assert(eq(int, obj_add(&x, 1), 1));
	cr_assert(eq(int, lb_cpubatch_settle(be[1].pc, &x, &x.t.node, 1),
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
