// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Operation batches (lb_cpubatch_queue(), lb_cpubatch_unqueue()) and the
 * caller-protected mode (LB_CPUBATCH_F_CALLER_REFS, lb_cpubatch_settle_fn())
 * on real intrusive lists: what each operation does to the lists, when,
 * under which lock, the compositions, the flush of another slot that keeps
 * an object's operations in order, the busy mark of a flush in progress,
 * and the statistics identities.
 */
#include <errno.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../common/op_backend.h"

#define NSLOTS 3
#define NOBJ 8

static struct lb_cpubatch *pc;
static struct lb_backend_ops ops;
static struct opb_obj O[NOBJ];
static int cpu;

static int inject_cpu(void *arg)
{
	(void)arg;
	return cpu;
}

static void make(bool counted, unsigned int flags, unsigned int max_nr)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&ops, NULL);
	unsigned int i;

	opb_init(2);
	opb_hook = NULL;
	ops = opb_ops(counted);
	conf.nr_slots = NSLOTS;
	conf.max_nr = max_nr;
	conf.cpu_fn = inject_cpu;
	conf.flags = flags;
	cpu = 0;
	for (i = 0; i < NOBJ; i++)
		opb_obj_init(&O[i], i, 0);
	cr_assert(eq(int, lb_cpubatch_create(&pc, &conf), 0));
}

static void setup(void)
{
	make(true, 0, 8);
}

static void teardown(void)
{
	cr_expect(eq(int, lb_cpubatch_destroy(pc), 0));
	cr_expect(eq(uint, opb.errors, 0), "list rules broken");
	opb_fini();
}

TestSuite(op, .init = setup, .fini = teardown, .timeout = 10);

static int q(unsigned int i, enum lb_op op)
{
	return lb_cpubatch_queue(pc, &O[i], &O[i].node, op, 1);
}

/* List @l, head first, must read exactly @want (@nr ids). */
static void expect_list(unsigned int l, const unsigned int *want,
			unsigned int nr)
{
	unsigned int ids[NOBJ], k, i;

	k = opb_ids(l, ids, NOBJ);
	cr_assert(eq(uint, k, nr), "list %u holds %u objects, want %u", l, k, nr);
	for (i = 0; i < nr; i++)
		cr_assert(eq(uint, ids[i], want[i]), "list %u position %u", l, i);
}

/* Objects 0..nr-1 added to list 0 and committed: list 0 is nr-1 .. 0. */
static void add_committed(unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		int rc = q(i, LB_OP_ADD);

		cr_assert(rc == LB_OP_QUEUED || rc == LB_OP_FLUSHED);
	}
	cr_assert(ge(int, lb_cpubatch_drain_all(pc), 0));
	cr_assert(eq(uint, opb_ids(0, NULL, 0), nr));
}

static void check_identities(void)
{
	struct lb_cpubatch_stats st;
	uint64_t ops_sum = 0, fl_sum = 0;
	unsigned int i;

	cr_assert(eq(int, lb_cpubatch_stats(pc, &st, NULL, 0), NSLOTS));
	for (i = 0; i < LB_OP_NR; i++) {
		ops_sum += st.total.ops[i];
		fl_sum += st.total.ops_flushed[i];
	}
	cr_assert(eq(u64, ops_sum, st.total.objs_flushed + st.total.nr_cached +
				   st.total.merged + st.total.cancelled));
	cr_assert(eq(u64, fl_sum, st.total.objs_flushed));
	cr_assert(eq(u64, st.total.ops[LB_OP_ADD], st.total.adds));
	cr_assert(eq(u64, st.total.objs_flushed, st.total.objs_committed));
}

Test(op, move_waits_then_leaves_before_it_enters)
{
	unsigned int l0[] = { 2, 0 }, l1[] = { 1 }, all[] = { 2, 1, 0 };
	struct lb_cpubatch_stats st;
	uint64_t locks;

	add_committed(3);
	expect_list(0, all, 3);
	cr_assert(eq(int, lb_cpubatch_stats(pc, &st, NULL, 0), NSLOTS));
	locks = st.backend_locks;
	cr_assert(eq(int, q(1, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(1, LB_OP_MOVE), -EEXIST), "the waiting move does it");
	expect_list(0, all, 3);		/* waiting: nothing moved yet */
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	expect_list(0, l0, 2);
	expect_list(1, l1, 1);
	cr_assert(eq(uint, O[1].cur, 1));
	/* One hold of the source, one of the target. */
	cr_assert(eq(int, lb_cpubatch_stats(pc, &st, NULL, 0), NSLOTS));
	cr_assert(eq(u64, st.backend_locks - locks, 2));
	cr_assert(eq(u64, st.total.ops[LB_OP_MOVE], 1));
	cr_assert(eq(u64, st.total.ops_flushed[LB_OP_MOVE], 1));
	check_identities();
}

Test(op, rotate_moves_to_the_tail)
{
	unsigned int want[] = { 3, 1, 0, 2 };

	add_committed(4);	/* 3 2 1 0 */
	cr_assert(eq(int, q(2, LB_OP_ROTATE), LB_OP_QUEUED));
	cr_assert(eq(int, q(2, LB_OP_ROTATE), LB_OP_MERGED));
	cr_assert(eq(int, lb_cpubatch_drain_obj(pc, &O[2].node), 1));
	expect_list(0, want, 4);
	check_identities();
}

Test(op, del_of_a_waiting_add_cancels_it)
{
	struct lb_cpubatch_stats st;

	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
	cr_assert(eq(int, O[0].ref, 2));
	cr_assert(eq(int, q(0, LB_OP_DEL), LB_OP_CANCELLED));
	cr_assert(eq(int, O[0].ref, 1), "the batch's reference was dropped");
	cr_assert(eq(u32, O[0].node.slot, 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 0));
	expect_list(0, NULL, 0);
	cr_assert(eq(int, lb_cpubatch_stats(pc, &st, NULL, 0), NSLOTS));
	cr_assert(eq(u64, st.total.cancelled, 1));
	cr_assert(eq(u64, st.total.merged, 1));
	cr_assert(eq(u64, st.total.adds, 1));
	cr_assert(eq(u64, st.total.weight_added, 1));
	cr_assert(eq(u64, st.total.nr_cached, 0));
	check_identities();
	/* And it can be added again. */
	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
}

Test(op, del_of_a_committed_object_unlinks_at_flush)
{
	unsigned int want[] = { 1 };

	add_committed(2);
	cr_assert(eq(int, q(0, LB_OP_DEL), LB_OP_QUEUED));
	cr_assert(eq(int, q(0, LB_OP_DEL), -EEXIST));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 1));
	expect_list(0, want, 1);
	cr_assert(not(O[0].linked));
	check_identities();
}

Test(op, del_after_move_deletes_from_the_source)
{
	unsigned int want[] = { 1 };

	add_committed(2);
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(0, LB_OP_DEL), LB_OP_MERGED));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	expect_list(0, want, 1);
	expect_list(1, NULL, 0);
	check_identities();
}

Test(op, add_on_a_waiting_entry_is_refused)
{
	add_committed(1);
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(0, LB_OP_ADD), -EEXIST));
	cr_assert(eq(int, lb_cpubatch_add(pc, &O[0], &O[0].node, 1), -EEXIST));
	cr_assert(eq(int, q(1, LB_OP_ADD), LB_OP_QUEUED));
	cr_assert(eq(int, q(1, LB_OP_ADD), -EEXIST));
	check_identities();
}

Test(op, second_op_in_another_slot_flushes_the_first)
{
	unsigned int want[] = { 0 };
	struct lb_cpubatch_slot_stats s[NSLOTS];

	cpu = 0;
	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
	cpu = 1;
	/* Rotate cannot compose with a waiting add: slot 0 goes first. */
	cr_assert(eq(int, q(0, LB_OP_ROTATE), LB_OP_QUEUED));
	expect_list(0, want, 1);
	cr_assert(eq(u32, O[0].node.slot, 2), "now waiting in slot 1");
	cr_assert(eq(int, lb_cpubatch_stats(pc, NULL, s, NSLOTS), NSLOTS));
	cr_assert(eq(u64, s[0].flushes[LB_FLUSH_DRAIN_OBJ], 1));
	cr_assert(eq(u64, s[1].ops[LB_OP_ROTATE], 1));
	/* Delete then re-add from slot 2: the delete is applied first. */
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	cpu = 2;
	cr_assert(eq(int, q(0, LB_OP_DEL), LB_OP_QUEUED));
	cpu = 0;
	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
	expect_list(0, NULL, 0);
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	expect_list(0, want, 1);
	check_identities();
}

Test(op, flush_full_of_mixed_ops_keeps_queue_order)
{
	unsigned int l0[] = { 5, 4, 1 }, l1[] = { 2, 0 };

	add_committed(4);		/* list 0: 3 2 1 0 */
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(3, LB_OP_DEL), LB_OP_QUEUED));
	cr_assert(eq(int, q(4, LB_OP_ADD), LB_OP_QUEUED));
	cr_assert(eq(int, q(2, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(5, LB_OP_ADD), LB_OP_QUEUED));
	cr_assert(eq(int, q(1, LB_OP_ROTATE), LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_drain_local(pc), 6));
	/* Leave: 0, 3, 2 off list 0, 1 to its tail; enter: 4, 0, 2, 5. */
	expect_list(0, l0, 3);
	expect_list(1, l1, 2);
	check_identities();
}

Test(op, a_full_batch_flushes_at_the_queue)
{
	unsigned int i;

	add_committed(8);
	for (i = 0; i < 7; i++)
		cr_assert(eq(int, q(i, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(7, LB_OP_MOVE), LB_OP_FLUSHED));
	cr_assert(eq(uint, opb_ids(1, NULL, 0), 8));
	check_identities();
}

Test(op, errors_change_nothing)
{
	struct lb_cpubatch *plain;
	struct lb_backend_ops noapply = opb_ops(true);
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&noapply, NULL);

	cr_assert(eq(int, lb_cpubatch_queue(NULL, &O[0], &O[0].node, LB_OP_ADD, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_queue(pc, NULL, &O[0].node, LB_OP_ADD, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_queue(pc, &O[0], NULL, LB_OP_ADD, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_queue(pc, &O[0], &O[0].node, LB_OP_NR, 1), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_queue(pc, &O[0], &O[0].node, LB_OP_ADD, 0), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_unqueue(NULL, &O[0].node, 1, NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 0, NULL), -EINVAL));
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 1, NULL), 0));
	/* A cancelling delete with more weight than its batch holds. */
	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_queue(pc, &O[0], &O[0].node, LB_OP_DEL, 2), -EINVAL));
	cr_assert(eq(u32, O[0].node.slot, 1), "still waiting");
	noapply.apply = NULL;
	cr_assert(eq(int, lb_cpubatch_create(&plain, &conf), 0));
	cr_assert(eq(int, lb_cpubatch_queue(plain, &O[1], &O[1].node, LB_OP_MOVE, 1), -EOPNOTSUPP));
	cr_assert(eq(u32, O[1].node.slot, 0));
	/* O[0] waits in pc: another instance may not queue it. */
	cr_assert(eq(int, lb_cpubatch_queue(plain, &O[0], &O[0].node, LB_OP_ADD, 1), -EXDEV));
	cr_assert(eq(int, lb_cpubatch_destroy(plain), 0));
	cr_assert(eq(str, (char *)lb_cpubatch_op_name(LB_OP_ROTATE), "rotate"));
	cr_assert(eq(str, (char *)lb_cpubatch_op_name(LB_OP_NR), "invalid"));
	check_identities();
}

Test(op, unqueue_removes_and_tells_the_operation)
{
	enum lb_op op = LB_OP_NR;
	unsigned int want[] = { 0, 1 };

	add_committed(2);
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, q(1, LB_OP_ROTATE), LB_OP_QUEUED));
	cr_assert(eq(int, O[0].ref, 2));
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 1, &op), 1));
	cr_assert(eq(int, op, LB_OP_MOVE));
	cr_assert(eq(int, O[0].ref, 1));
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 1, &op), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	/* 0 stayed where it was (the head); 1 went to the tail. */
	expect_list(0, want, 2);
	check_identities();
}

/* From inside the flush that is applying O[0]'s deletion. */
static int busy_unqueue, busy_queue;

/*
 * From inside the flush, during each step: in the last step of an
 * operation the node's busy mark has gone (the callback may free the
 * object) and what it said is the flush's own record, so unqueue answers
 * busy and a queued add would have to wait for this very flush.
 */
static void busy_hook(struct opb_obj *o, enum lb_op_step step)
{
	if (o != &O[0])
		return;
	busy_unqueue = lb_cpubatch_unqueue(pc, &o->node, 1, NULL);
	busy_queue = lb_cpubatch_queue(pc, o, &o->node, LB_OP_ADD, 1);
}

Test(op, a_flush_in_progress_marks_the_object_busy)
{
	add_committed(1);
	cr_assert(eq(int, q(0, LB_OP_DEL), LB_OP_QUEUED));
	opb_hook = busy_hook;
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	opb_hook = NULL;
	cr_assert(eq(int, busy_unqueue, -EBUSY));
	cr_assert(eq(int, busy_queue, -EDEADLK));
	cr_assert(eq(u32, O[0].node.slot, 0), "the mark goes before the last step");
	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
	check_identities();
}

Test(op, a_move_is_busy_until_its_link_returns)
{
	add_committed(1);
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	opb_hook = busy_hook;
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	opb_hook = NULL;
	/* Last seen from the link, the move's last step. */
	cr_assert(eq(int, busy_unqueue, -EBUSY));
	cr_assert(eq(int, busy_queue, -EDEADLK));
	cr_assert(eq(u32, O[0].cur, 1));
	cr_assert(eq(u32, O[0].node.slot, 0));
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 1, NULL), 0));
	check_identities();
}

/* The unlink half of a move: the busy mark still stands. */
static int unlink_add;

static void unlink_hook(struct opb_obj *o, enum lb_op_step step)
{
	if (o == &O[0] && step == LB_STEP_UNLINK)
		unlink_add = lb_cpubatch_add(pc, o, &o->node, 1);
}

Test(op, a_move_keeps_its_mark_between_its_steps)
{
	add_committed(1);
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	opb_hook = unlink_hook;
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	opb_hook = NULL;
	cr_assert(eq(int, unlink_add, -EEXIST));
	cr_assert(eq(u32, O[0].cur, 1));
	check_identities();
}

/* The caller-protected mode. */
static void caller_setup(void)
{
	make(false, LB_CPUBATCH_F_CALLER_REFS, 8);
}

TestSuite(caller, .init = caller_setup, .fini = teardown, .timeout = 10);

Test(caller, refuses_get_and_put)
{
	struct lb_backend_ops counted = opb_ops(true);
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&counted, NULL);
	struct lb_cpubatch *bad = NULL;

	conf.flags = LB_CPUBATCH_F_CALLER_REFS;
	cr_assert(eq(int, lb_cpubatch_create(&bad, &conf), -EINVAL));
	cr_assert(eq(ptr, bad, NULL));
}

Test(caller, settle_fn_is_the_refcount_two_check)
{
	/* Object 0: linked, "refcount 2" = linked + this thread. */
	add_committed(2);
	O[0].ref = 2;
	cr_assert(eq(int, lb_cpubatch_settle_fn(pc, &O[0], &O[0].node, 2, opb_count, NULL),
		     LB_SETTLED));
	/* A waiting bump is the only thing in the way: its slot is flushed. */
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_settle_fn(pc, &O[0], &O[0].node, 2, opb_count, NULL),
		     LB_DRAINED));
	cr_assert(eq(uint, O[0].cur, 1));
	cr_assert(eq(u32, O[0].node.slot, 0));
	/* Someone else holds it: busy, nothing flushed. */
	cr_assert(eq(int, q(1, LB_OP_MOVE), LB_OP_QUEUED));
	O[1].ref = 3;
	cr_assert(eq(int, lb_cpubatch_settle_fn(pc, &O[1], &O[1].node, 2, opb_count, NULL),
		     LB_BUSY));
	cr_assert(eq(u32, O[1].node.slot, 1));
	cr_assert(eq(int, lb_cpubatch_settle_fn(pc, &O[1], &O[1].node, 4, opb_count, NULL),
		     -ERANGE));
	cr_assert(eq(int, lb_cpubatch_settle_fn(pc, &O[1], &O[1].node, 2, NULL, NULL),
		     -EINVAL));
	/* Without @refcount the plain settle has nothing to read. */
	cr_assert(eq(int, lb_cpubatch_settle(pc, &O[1], &O[1].node, 2), -EOPNOTSUPP));
	check_identities();
}

Test(caller, pull_tail_unqueues_under_the_list_lock)
{
	enum lb_op op;
	unsigned int want[] = { 1 };

	add_committed(2);
	cr_assert(eq(int, q(0, LB_OP_MOVE), LB_OP_QUEUED));
	/* lru_pull_tail(): list lock held, evict object 0 now. */
	opb_lock(&opb.l[0]);
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 1, &op), 1));
	cr_assert(eq(int, op, LB_OP_MOVE));
	opb_unlink(&opb.l[0], &O[0]);
	opb_unlock(&opb.l[0]);
	O[0].freed = true;
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 0));
	expect_list(0, want, 1);
	expect_list(1, NULL, 0);
	check_identities();
}

/* From inside the flush committing O[0]'s add (caller-protected). */
static int add_busy_unqueue;

static void add_busy_hook(struct opb_obj *o, enum lb_op_step step)
{
	if (o == &O[0] && step == LB_STEP_LINK)
		add_busy_unqueue = lb_cpubatch_unqueue(pc, &o->node, 1, NULL);
}

Test(caller, an_add_being_committed_is_busy)
{
	cr_assert(eq(int, q(0, LB_OP_ADD), LB_OP_QUEUED));
	opb_hook = add_busy_hook;
	cr_assert(eq(int, lb_cpubatch_drain_all(pc), 1));
	opb_hook = NULL;
	/* No reference keeps it: the caller must see the flush. */
	cr_assert(eq(int, add_busy_unqueue, -EBUSY));
	cr_assert(eq(u32, O[0].node.slot, 0), "the mark goes before the commit");
	cr_assert(eq(int, lb_cpubatch_unqueue(pc, &O[0].node, 1, NULL), 0));
	check_identities();
}

Test(op, a_move_within_one_back_end_is_one_step)
{
	struct lb_backend_ops local = opb_ops(true);
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&local, NULL);
	struct lb_cpubatch *one;
	struct lb_cpubatch_stats st;
	unsigned int want[] = { 0, 2, 1 };
	uint64_t locks;

	/* No target_of: every move stays in its own list, to the head. */
	local.target_of = NULL;
	conf.nr_slots = 1;
	cr_assert(eq(int, lb_cpubatch_create(&one, &conf), 0));
	cr_assert(ge(int, lb_cpubatch_add(one, &O[0], &O[0].node, 1), 0));
	cr_assert(ge(int, lb_cpubatch_add(one, &O[1], &O[1].node, 1), 0));
	cr_assert(ge(int, lb_cpubatch_add(one, &O[2], &O[2].node, 1), 0));
	cr_assert(eq(int, lb_cpubatch_drain_all(one), 3));
	cr_assert(eq(int, lb_cpubatch_queue(one, &O[0], &O[0].node, LB_OP_MOVE, 1),
		     LB_OP_QUEUED));
	cr_assert(eq(int, lb_cpubatch_stats(one, &st, NULL, 0), 1));
	locks = st.backend_locks;
	cr_assert(eq(int, lb_cpubatch_drain_all(one), 1));
	expect_list(0, want, 3);
	cr_assert(eq(int, lb_cpubatch_stats(one, &st, NULL, 0), 1));
	cr_assert(eq(u64, st.backend_locks - locks, 1), "one hold, not two");
	cr_assert(eq(int, lb_cpubatch_destroy(one), 0));
}

