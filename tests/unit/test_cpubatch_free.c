// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The free points of lb_cpubatch: an object freed (here: poisoned) in the
 * last callback its flush runs for it is never touched by the library
 * again, in both reference modes, for every operation, with and without
 * its memory reused at once by a new object of the same or another
 * instance; and a side-table entry released in @commit and reused at once
 * is not written by the flush that released it.
 *
 * Poisoning stands in for free(): the library's node stores are ck
 * inline-assembly stores, which AddressSanitizer does not see in a build
 * of the caller, so a write after the free point shows as a poison byte
 * overwritten (the node's @slot reading 0), or, after reuse, as the new
 * object's node reading "not cached" while it waits in a batch.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/nodetab.h>

#define NSLOTS 2
#define POISON 0xa5

/* One object: its node, the back-end it is linked in, its poison. */
struct pobj {
	struct lb_node node;
	unsigned int be;	/* 0 or 1: which back-end it is on or enters */
	bool linked;
	unsigned char pad[16];
};

static struct lb_cpubatch *pc, *pc2;
static struct lb_nodetab *tab;
static int cpu;
static unsigned int linked[2];	/* per back-end, as the callbacks see it */
static int backends[2];

/* Where each test frees: the operation's last step, or @put. */
static enum { AT_COMMIT, AT_AFTER, AT_APPLY, AT_PUT } free_at;
static int free_step = -1;	/* for AT_APPLY: which step frees */
static struct pobj *victim;	/* the object freed at the free point */
static bool reuse;		/* re-create an object in its memory at once */
static bool freed;

static int inject_cpu(void *arg)
{
	(void)arg;
	return cpu;
}

static void *backend_of(void *obj)
{
	return &backends[((struct pobj *)obj)->be];
}

static void *target_of(void *obj)
{
	return &backends[!((struct pobj *)obj)->be];
}

static void nolock(void *be)
{
	(void)be;
}

/*
 * free() at the free point: poison every byte, then (with @reuse) put a
 * new object in the same memory and add it to slot 1 of the same instance,
 * as an allocator handing the address straight back would. The flush
 * under test is slot 0's alone (lb_cpubatch_drain_local()), so the new
 * object stays in slot 1's batch for expect_free_kept() to find.
 */
static void free_victim(struct pobj *o)
{
	struct lb_node z = LB_NODE_INIT;
	int saved = cpu;

	if (o != victim || freed)
		return;
	freed = true;
	memset(o, POISON, sizeof(*o));
	if (!reuse)
		return;
	o->node = z;
	o->be = 1;
	o->linked = false;
	cpu = 1;
	cr_assert(eq(int, lb_cpubatch_add(pc, o, &o->node, 1), 0));
	cpu = saved;
}

static unsigned int be_idx(void *be)
{
	return (unsigned int)((int *)be - backends);
}

static void commit(void *be, void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct pobj *o = objs[i];

		o->linked = true;
		linked[be_idx(be)]++;
		if (free_at == AT_COMMIT)
			free_victim(o);
	}
}

static void after(void *be, void **objs, unsigned int n)
{
	unsigned int i;

	(void)be;
	if (free_at == AT_AFTER)
		for (i = 0; i < n; i++)
			free_victim(objs[i]);
}

static void apply(void *be, enum lb_op_step step, void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct pobj *o = objs[i];

		if (step == LB_STEP_UNLINK) {
			o->linked = false;
			linked[be_idx(be)]--;
		} else if (step == LB_STEP_LINK) {
			o->be = be_idx(be);
			o->linked = true;
			linked[o->be]++;
		}
		if (free_at == AT_APPLY && (int)step == free_step)
			free_victim(o);
	}
}

static void get(void *obj)
{
	(void)obj;
}

static void put(void *obj)
{
	if (free_at == AT_PUT)
		free_victim(obj);
}

static struct lb_backend_ops ops;

/* The callbacks above, in @ops; the caller-protected mode unless @counted. */
static void set_ops(bool counted, bool with_after)
{
	memset(&ops, 0, sizeof(ops));
	ops.backend_of = backend_of;
	ops.target_of = target_of;
	ops.lock = nolock;
	ops.unlock = nolock;
	ops.commit = commit;
	ops.apply = apply;
	if (with_after)
		ops.after = after;
	if (counted) {
		ops.get = get;
		ops.put = put;
	}
}

/* An instance over @ops as they are now (copied at creation). */
static struct lb_cpubatch *make_ops(void)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&ops, NULL);
	struct lb_cpubatch *b = NULL;

	if (!ops.put)
		conf.flags = LB_CPUBATCH_F_CALLER_REFS;
	conf.nr_slots = NSLOTS;
	conf.cpu_fn = inject_cpu;
	cr_assert(eq(int, lb_cpubatch_create(&b, &conf), 0));
	return b;
}

static struct lb_cpubatch *make(bool counted, bool with_after)
{
	set_ops(counted, with_after);
	return make_ops();
}

static void reset(void)
{
	pc = pc2 = NULL;
	tab = NULL;
	cpu = 0;
	linked[0] = linked[1] = 0;
	victim = NULL;
	reuse = false;
	freed = false;
	free_step = -1;
}

static void fini(void)
{
	if (pc) {
		cr_expect(eq(int, lb_cpubatch_drain_all(pc), 0));
		cr_expect(eq(int, lb_cpubatch_destroy(pc), 0));
	}
}

TestSuite(free_point, .init = reset, .fini = fini, .timeout = 10);

/* Every byte still poison: nothing wrote into the object after its free. */
static void expect_poisoned(const struct pobj *o)
{
	const unsigned char *p = (const unsigned char *)o;
	size_t i;

	for (i = 0; i < sizeof(*o); i++)
		cr_assert(eq(u8, p[i], POISON),
			  "byte %zu of the freed object is 0x%02x", i, p[i]);
}

/*
 * The object freed at its free point: untouched since, or (with @reuse)
 * the new object in its memory waits in slot 1's batch, as its node says.
 */
static void expect_free_kept(struct pobj *o)
{
	cr_assert(freed, "the free point was reached");
	if (!reuse) {
		expect_poisoned(o);
		return;
	}
	cr_assert(eq(u32, o->node.slot, 2), "the new object's node names slot 1");
	cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &o->node), 1),
		  "drain_obj finds the new object in its batch");
	cr_assert(o->linked);
}

/* An add, freed in @commit or @after (caller-protected) or @put. */
static void run_add(bool counted, bool with_after)
{
	static struct pobj o;

	pc = make(counted, with_after);
	memset(&o, 0, sizeof(o));
	victim = &o;
	cr_assert(eq(int, lb_cpubatch_add(pc, &o, &o.node, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
	expect_free_kept(&o);
}

/* An object added and committed, then @op queued and flushed, freed at @step. */
static void run_op(bool counted, enum lb_op op, int step)
{
	static struct pobj o;

	pc = make(counted, true);
	memset(&o, 0, sizeof(o));
	cr_assert(eq(int, lb_cpubatch_add(pc, &o, &o.node, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	victim = &o;
	free_step = step;
	cr_assert(eq(int, lb_cpubatch_queue(pc, &o, &o.node, op, 1),
		     LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
	expect_free_kept(&o);
}

#define BOTH(name, body)						\
	Test(free_point, name) { body; }				\
	Test(free_point, name##_reused) { reuse = true; body; }

/* Caller-protected: the last callback of the object's last step. */
BOTH(caller_add_in_commit, (free_at = AT_COMMIT, run_add(false, false)))
BOTH(caller_add_in_after, (free_at = AT_AFTER, run_add(false, true)))
BOTH(caller_del_in_unlink,
     (free_at = AT_APPLY, run_op(false, LB_OP_DEL, LB_STEP_UNLINK)))
BOTH(caller_move_in_link,
     (free_at = AT_APPLY, run_op(false, LB_OP_MOVE, LB_STEP_LINK)))
BOTH(caller_rotate_in_rotate,
     (free_at = AT_APPLY, run_op(false, LB_OP_ROTATE, LB_STEP_ROTATE)))
/* Counted: @put. */
BOTH(counted_add_in_put, (free_at = AT_PUT, run_add(true, true)))
BOTH(counted_del_in_put, (free_at = AT_PUT, run_op(true, LB_OP_DEL, -1)))
BOTH(counted_move_in_put, (free_at = AT_PUT, run_op(true, LB_OP_MOVE, -1)))
BOTH(counted_rotate_in_put,
     (free_at = AT_PUT, run_op(true, LB_OP_ROTATE, -1)))

/*
 * A move within one back-end (no @target_of) is one step, %LB_STEP_MOVE:
 * its free point is that step.
 */
Test(free_point, caller_local_move_in_move)
{
	static struct pobj o;

	set_ops(false, true);
	ops.target_of = NULL;
	pc = make_ops();
	memset(&o, 0, sizeof(o));
	cr_assert(eq(int, lb_cpubatch_add(pc, &o, &o.node, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	free_at = AT_APPLY;
	free_step = LB_STEP_MOVE;
	victim = &o;
	cr_assert(eq(int, lb_cpubatch_queue(pc, &o, &o.node, LB_OP_MOVE, 1),
		     LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
	expect_free_kept(&o);
}

/*
 * The side table (memcached's shape): instance P's @commit releases the
 * entry of the object it commits, and a new object B of instance Q takes
 * the same entry at once (one bucket: the released entry is the next one
 * handed out). The drain of P must not write into what is now B's node:
 * Q still holds B, and lb_nodetab_drain_obj() must find it there.
 */
static struct pobj *tab_b;

static void tab_commit(void *be, void **objs, unsigned int n)
{
	unsigned int i;

	commit(be, objs, n);
	for (i = 0; i < n; i++) {
		if (objs[i] != victim)
			continue;
		cr_assert(eq(int, lb_nodetab_release(tab, objs[i]), 0));
		cr_assert(eq(int, lb_nodetab_add(tab, pc2, tab_b, 1), 0));
	}
}

static void tab_run(bool with_after)
{
	static struct pobj a, b;
	struct lb_nodetab_stats st;

	free_at = AT_COMMIT;
	set_ops(false, with_after);
	ops.commit = tab_commit;
	pc = make_ops();
	ops.commit = commit;	/* Q commits plainly */
	pc2 = make_ops();
	cr_assert(eq(int, lb_nodetab_create(&tab, 1), 0));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	victim = &a;
	tab_b = &b;
	cr_assert(eq(int, lb_nodetab_add(tab, pc, &a, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	/* B took A's entry: one live entry, none left free. */
	cr_assert(eq(int, lb_nodetab_stats(tab, &st), 0));
	cr_assert(eq(u64, st.adds, 2));
	cr_assert(eq(u64, st.entries, 1));
	cr_assert(eq(u64, st.free, 0));
	cr_assert(eq(int, lb_nodetab_drain_obj(tab, pc2, &b), 1),
		  "Q still held B when P's drain returned");
	cr_assert(b.linked);
	cr_assert(eq(int, lb_nodetab_release(tab, &b), 0));
	cr_assert(eq(int, lb_cpubatch_destroy(pc2), 0));
	cr_assert(eq(int, lb_nodetab_destroy(tab), 0));
}

Test(free_point, side_table_entry_released_in_commit)
{
	tab_run(false);
}

Test(free_point, side_table_entry_released_in_commit_with_after)
{
	tab_run(true);
}
