// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Operation batches: queue a move, rotation or deletion of an object in
 * the current CPU's batch, composing it with the object's waiting entry or
 * flushing that entry first, so that one object's operations apply in the
 * order they were queued; and take a waiting entry out of its batch
 * without waiting (lb_cpubatch_unqueue()). The flush side (two phases,
 * leave before enter) is commit_ops() in cpubatch/flush.c.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

const char *lb_cpubatch_op_name(enum lb_op op)
{
	static const char *const names[LB_OP_NR] = {
		[LB_OP_ADD] = "add",
		[LB_OP_MOVE] = "move",
		[LB_OP_ROTATE] = "rotate",
		[LB_OP_DEL] = "del",
	};

	if ((unsigned int)op >= LB_OP_NR)
		return "invalid";
	return names[op];
}

/*
 * The entry of @n in locked slot @s, or the batch's count when it is not
 * there: the node names the slot of an rseq add whose section has not
 * committed yet (its attempt marks the node first), so the add is not
 * done and there is no entry to compose with.
 */
static unsigned int find_entry(const struct lbi_slot *s, const struct lb_node *n)
{
	unsigned int i, nr = lbi_cb_nr(s);

	for (i = 0; i < nr; i++)
		if (lbi_ent_node(s->nodes[i]) == n)
			break;
	return i;
}

/*
 * Remove entry @k of locked, stopped slot @s, whose weight the caller gives
 * (entries do not keep theirs). Later entries move down one place, so the
 * slot keeps its queue order. Returns the object, or NULL when @weight is
 * more than the batch holds (nothing changed).
 */
static void *remove_entry(struct lbi_slot *s, unsigned int k, uint32_t weight)
{
	uint64_t word = s->hdr.rseq.word;
	unsigned int nr = lbi_rseq_count(word);
	void *obj = s->objs[k];

	if (weight > lbi_rseq_weight(word))
		return NULL;
	lbi_node_set_slot(lbi_ent_node(s->nodes[k]), 0);
	memmove(&s->objs[k], &s->objs[k + 1], (nr - k - 1) * sizeof(s->objs[0]));
	memmove(&s->nodes[k], &s->nodes[k + 1],
		(nr - k - 1) * sizeof(s->nodes[0]));
	ck_pr_store_64(&s->hdr.rseq.word, word - lbi_rseq_word(1, weight));
	s->st.cancelled++;
	s->weight_cancelled += weight;
	return obj;
}

/*
 * What a new operation @op does to the waiting entry @w of the same
 * object: one of the results below, or -EEXIST (the entry does it
 * already), or 0 (no composition: flush the entry's slot first).
 */
static int compose(unsigned int w, unsigned int op)
{
	if (op == LB_OP_DEL) {
		if (w == LB_OP_DEL)
			return -EEXIST;
		return w == LB_OP_ADD ? LB_OP_CANCELLED : LB_OP_MERGED;
	}
	if (op == LB_OP_ADD)
		return w == LB_OP_DEL ? 0 : -EEXIST;
	/* A second bump of an item whose bump waits: that one does it. */
	if (op == LB_OP_MOVE && w == LB_OP_MOVE)
		return -EEXIST;
	if (op == LB_OP_ROTATE && w == LB_OP_ROTATE)
		return LB_OP_MERGED;
	return 0;
}

/*
 * @n waits in slot @idx, whose lock is held: compose @op with its entry,
 * or flush the slot (-EAGAIN back to the caller: queue again, the entry
 * is applied). Always unlocks.
 */
static int op_waiting(struct lb_cpubatch *pc, unsigned int idx,
		      struct lb_node *n, unsigned int op, uint32_t weight)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	unsigned int k = find_entry(s, n), w;
	uint32_t home;
	void *obj;
	int rc, ctx;

	if (k == lbi_cb_nr(s)) {
		/* An add of it is under way on that CPU: decide again. */
		lbi_slot_unlock_remote(&pc->slots, idx);
		return -EAGAIN;
	}
	w = lbi_ent_op(s->nodes[k]);
	rc = compose(w, op);
	if (rc == LB_OP_CANCELLED) {
		obj = remove_entry(s, k, weight);
		if (!obj) {
			lbi_slot_unlock_remote(&pc->slots, idx);
			return -EINVAL;
		}
		s->st.ops[op]++;
		s->st.merged++;
		lbi_slot_unlock_remote(&pc->slots, idx);
		if (pc->ops.put)
			pc->ops.put(obj);
		return rc;
	}
	if (rc == LB_OP_MERGED) {
		s->nodes[k] = lbi_ent_tag(n, op);
		s->st.ops[op]++;
		s->st.merged++;
		lbi_slot_unlock_remote(&pc->slots, idx);
		return rc;
	}
	if (rc < 0) {
		lbi_slot_unlock_remote(&pc->slots, idx);
		return rc;
	}
	/* No composition: the waiting entry is applied first. */
	ctx = lbi_context_check(pc);
	if (ctx) {
		lbi_slot_unlock_remote(&pc->slots, idx);
		return ctx;
	}
	home = lbi_node_home(n);	/* as drain_obj */
	lbi_flush_locked(pc, idx, LB_FLUSH_DRAIN_OBJ);
	lbi_wait_home(pc, home);
	return -EAGAIN;
}

/*
 * @n is in no batch: wait for a flush still applying an earlier operation
 * to it (busy mark), or, for an operation other than an add, still
 * committing an earlier add (its home slot's in-flight count), so that
 * the new one cannot be applied first. Returns 0 (go on) or -EDEADLK
 * (from a callback of @pc, where the wait could be for this thread).
 */
static int op_wait_prior(struct lb_cpubatch *pc, struct lb_node *n,
			 unsigned int op)
{
	if (lbi_node_slot(n) != LBI_SLOT_BUSY) {
		if (op == LB_OP_ADD) {
			if (!lbi_node_pending(pc, n))
				return 0;
		} else {
			ck_pr_fence_load();	/* (D) */
			if (!lbi_home_in_flight(pc, lbi_node_home(n)))
				return 0;
		}
	}
	if (lbi_context_check(pc))
		return -EDEADLK;
	lbi_wait_node_flush(pc, n);
	return 0;
}

/* Arguments, then ownership (a node waiting in another instance). */
static int op_check(const struct lb_cpubatch *pc, const void *obj,
		    const struct lb_node *n, unsigned int op, uint32_t weight)
{
	uint32_t owner, slot;

	if (!pc || !obj || !n || op >= LB_OP_NR || weight == 0 ||
	    weight > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	owner = lbi_node_owner(n);
	slot = lbi_node_slot(n);
	if (slot > pc->slots.nr && slot != LBI_SLOT_BUSY)
		return -EINVAL;
	if (slot && owner && owner != pc->id)
		return -EXDEV;
	return 0;
}

int lb_cpubatch_queue(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		   enum lb_op op, uint32_t weight)
{
	unsigned int tries;
	int rc;

	rc = op_check(pc, obj, n, (unsigned int)op, weight);
	if (rc)
		return rc;
	if (op != LB_OP_ADD && !pc->ops.apply)
		return -EOPNOTSUPP;
	for (tries = 0; tries < LBI_CHASE_MAX; tries++) {
		rc = lbi_lock_node_slot(pc, n);
		if (rc < 0)
			return rc;
		if (rc > 0) {
			rc = op_waiting(pc, (unsigned int)rc - 1, n, op, weight);
			if (rc == -EAGAIN)
				continue;	/* flushed: queue it now */
			return rc;
		}
		rc = op_wait_prior(pc, n, op);
		if (rc)
			return rc;
		if (op == LB_OP_ADD)
			rc = lb_cpubatch_add(pc, obj, n, weight);
		else
			rc = lbi_cb_queue(pc, obj, n, weight, op);
		/* -EEXIST: queued or marked meanwhile; decide again. */
		if (rc != -EEXIST)
			return rc;
	}
	return -EAGAIN;
}

int lb_cpubatch_unqueue(struct lb_cpubatch *pc, struct lb_node *n,
			uint32_t weight, enum lb_op *op)
{
	struct lbi_slot *s;
	unsigned int idx, k, w;
	void *obj;
	int rc;

	if (!pc || !n || weight == 0)
		return -EINVAL;
	rc = lbi_node_check(pc, n);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	rc = lbi_lock_node_slot(pc, n);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return lbi_node_busy(pc, n) ? -EBUSY : 0;
	idx = (unsigned int)rc - 1;
	s = lbi_cb_slot(pc, idx);
	k = find_entry(s, n);
	if (k == lbi_cb_nr(s)) {
		/* An add of it is under way on that CPU (find_entry()). */
		lbi_slot_unlock_remote(&pc->slots, idx);
		return -EBUSY;
	}
	w = lbi_ent_op(s->nodes[k]);
	obj = remove_entry(s, k, weight);
	lbi_slot_unlock_remote(&pc->slots, idx);
	if (!obj)
		return -EINVAL;
	if (op)
		*op = (enum lb_op)w;
	if (pc->ops.put)
		pc->ops.put(obj);
	return 1;
}
