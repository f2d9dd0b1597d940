// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpubatch's flush: swap a slot's batch out, commit it to the back-end
 * outside every slot lock, and the per-thread state that keeps flushes
 * from nesting back-end locks (deferred batches, the nesting bound). Every
 * path that empties a slot (add, drain, drain_all, settle, disable,
 * destroy) ends in lbi_flush_locked().
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

/*
 * What this thread is doing inside flushes, for every instance at once.
 * frames: the instances whose flush runs its callbacks on this thread,
 * innermost last; locked: how many of those are inside @commit (their
 * back-end lock is held); deferred: batches that adds made while a back-end
 * lock was held had to flush, each with the instance it belongs to. They
 * are committed as soon as this thread holds no back-end lock, so a
 * back-end lock is never taken under another by an add, and the outermost
 * flush returns with the queue empty.
 */
struct lbi_deferred {
	struct lb_cpubatch *pc;
	struct lbi_flushbuf buf;
};

struct lbi_thread {
	const struct lb_cpubatch *frames[LB_CPUBATCH_NEST_MAX];
	struct lbi_flushbuf *bufs[LB_CPUBATCH_NEST_MAX];	/* frames' */
	unsigned int depth;
	unsigned int locked;
	/* Instances whose drain mutex this thread holds (one per depth). */
	const struct lb_cpubatch *drains[LB_CPUBATCH_NEST_MAX + 1];
	unsigned int nr_drains;
	unsigned int nr_deferred;
	struct lbi_deferred deferred[LB_CPUBATCH_DEFER_MAX];
};
static __thread struct lbi_thread cur;

/* In-flight protocol (A) (cpubatch/cpubatch.h). Called under the slot lock. */
static void swap_out(struct lb_cpubatch *pc, unsigned int idx,
		     struct lbi_flushbuf *buf, enum lb_flush_cause cause)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	uint64_t word = s->hdr.rseq.word;
	unsigned int i, nr = lbi_rseq_count(word);

	lbi_slot_assert_held(&s->hdr);
	buf->epoch = s->epoch & 1;
	ck_pr_inc_32(&s->inflight);
	ck_pr_inc_32(&s->epoch_inflight[buf->epoch]);
	ck_pr_fence_store();
	buf->slot = idx;
	buf->nr = nr;
	buf->ops = 0;
	buf->pending = 0;
	memcpy(buf->objs, s->objs, nr * sizeof(buf->objs[0]));
	if (lbi_likely(!s->has_ops && !pc->caller_refs)) {
		/* Adds only, counted: the nodes go as before. */
		for (i = 0; i < nr; i++) {
			/* Queued here: in this slot's batch, nowhere else. */
			lbi_assert_debug(lbi_node_slot(s->nodes[i]) == idx + 1);
			lbi_node_set_slot(s->nodes[i], 0);
		}
		s->st.ops_flushed[LB_OP_ADD] += nr;
	} else {
		memcpy(buf->nodes, s->nodes, nr * sizeof(buf->nodes[0]));
		for (i = 0; i < nr; i++) {
			unsigned int op = lbi_ent_op(s->nodes[i]);
			bool busy = op != LB_OP_ADD || pc->caller_refs;

			/* Busy until its last step (LBI_SLOT_BUSY, (G)). */
			lbi_assert_debug(lbi_node_slot(lbi_ent_node(
					 s->nodes[i])) == idx + 1);
			lbi_node_set_slot(lbi_ent_node(s->nodes[i]),
					  busy ? LBI_SLOT_BUSY : 0);
			if (busy) {
				buf->ops |= op == LB_OP_ADD ?
					LBI_OPS_BUSY_ADDS : 1u << (op - 1);
				buf->pending |= 1u << i;
			}
			s->st.ops_flushed[op]++;
		}
		s->has_ops = false;
	}
	s->st.flushes[cause]++;
	s->st.objs_flushed += nr;
	s->st.weight_flushed += lbi_rseq_weight(word);
	ck_pr_store_64(&s->hdr.rseq.word, 0);
}

static void *backend_of(const struct lb_cpubatch *pc, void *obj)
{
	return pc->ops.backend_of ? pc->ops.backend_of(obj) : pc->backend;
}

static void run_deferred(void);

/* The back-end lock around a callback of @pc's, with the nesting state. */
static void backend_lock(struct lb_cpubatch *pc, void *be)
{
	pc->ops.lock(be);
	cur.locked++;
}

static void backend_unlock(struct lb_cpubatch *pc, void *be)
{
	cur.locked--;
	pc->ops.unlock(be);
	/* What the callbacks queued, now that no back-end lock is held. */
	run_deferred();
}

/* Which half of an entry a phase of an operation batch's commit applies. */
enum lbi_phase { LBI_LEAVE, LBI_ENTER };

/*
 * A move within its own back-end (no @target_of, or one that names the
 * object's back-end) is one step in phase 1, %LB_STEP_MOVE, under one
 * hold: nothing is gained by leaving and entering the same lock twice.
 * The tag of such an entry in @buf->nodes says %LB_OP_MOVE still; this
 * bit of @local (per entry) says it is local, decided in phase 1.
 */
static bool move_is_local(const struct lb_cpubatch *pc, void *obj, void *src)
{
	return !pc->ops.target_of || pc->ops.target_of(obj) == src;
}

/*
 * Whether entry @i has work in phase @ph, and in @be the back-end it works
 * on there (any value backend_of() or target_of() returns, NULL included,
 * is passed on to the hooks, as for a batch of adds): phase 1 (leave)
 * unlinks deletions and moves (or moves a local move whole) and rotates
 * rotations in their own back-end; phase 2 (enter) commits adds to theirs
 * and links the other moves into their target. @local: bit i set by
 * phase 1 for a local move.
 */
static bool phase_backend(const struct lb_cpubatch *pc,
			  const struct lbi_flushbuf *buf, unsigned int i,
			  enum lbi_phase ph, uint32_t *local, void **be)
{
	unsigned int op = lbi_ent_op(buf->nodes[i]);
	void *obj = buf->objs[i];

	if (ph == LBI_LEAVE) {
		if (op == LB_OP_ADD)
			return false;
		*be = backend_of(pc, obj);
		if (op == LB_OP_MOVE && move_is_local(pc, obj, *be))
			*local |= 1u << i;
		return true;
	}
	if (op == LB_OP_ADD) {
		*be = backend_of(pc, obj);
		return true;
	}
	if (op != LB_OP_MOVE || (*local & (1u << i)))
		return false;
	*be = pc->ops.target_of(obj);
	return true;
}

/* The step entry @i asks in phase @ph (adds: -1, for @commit). */
static int phase_step(const struct lbi_flushbuf *buf, unsigned int i,
		      enum lbi_phase ph, uint32_t local)
{
	unsigned int op = lbi_ent_op(buf->nodes[i]);

	if (op == LB_OP_ADD)
		return -1;
	if (op == LB_OP_ROTATE)
		return LB_STEP_ROTATE;
	if (op == LB_OP_MOVE && (local & (1u << i)))
		return LB_STEP_MOVE;
	return ph == LBI_LEAVE || op == LB_OP_DEL ? LB_STEP_UNLINK :
						    LB_STEP_LINK;
}

/*
 * The entries of @idx[0..@k) (a run of phase @ph) whose last step this
 * phase holds, as a mask of entry bits: all but a move that still has its
 * link to make in phase 2.
 */
static uint32_t phase_last(const struct lbi_flushbuf *buf,
			   const unsigned char *idx, unsigned int k,
			   enum lbi_phase ph, uint32_t local)
{
	uint32_t last = 0;
	unsigned int i;

	for (i = 0; i < k; i++)
		if (ph == LBI_ENTER ||
		    lbi_ent_op(buf->nodes[idx[i]]) != LB_OP_MOVE ||
		    (local & (1u << idx[i])))
			last |= 1u << idx[i];
	return last;
}

/*
 * (G), before the first callback of the run: the busy marks of the
 * entries in @last go. No ordering is asked of these stores: a reader
 * that sees one cleared finds the entry on its slot's @flushing list
 * until the callbacks return (lbi_node_pending()).
 */
static void last_touch(const struct lbi_flushbuf *buf, uint32_t last)
{
	uint32_t m;

	for (m = last & buf->pending; m; m &= m - 1) {
		struct lb_node *n = lbi_ent_node(buf->nodes[__builtin_ctz(m)]);

		/* Busy since swap-out, in no batch from now on. */
		lbi_assert_debug(lbi_node_slot(n) == LBI_SLOT_BUSY);
		lbi_node_set_slot(n, 0);
	}
}

/* (G), after the callbacks of the run: the entries in @last are done. */
static void last_done(struct lbi_slot *s, struct lbi_flushbuf *buf,
		      uint32_t last)
{
	if (!(buf->pending & last))
		return;
	lbi_spin_lock(&s->tail);
	buf->pending &= ~last;
	lbi_spin_unlock(&s->tail);
}

/*
 * Under @be's lock: the entries @idx[0..@k) in order, as one callback call
 * per run of the same step (adds: @commit, the others: @apply).
 */
static void apply_run(struct lb_cpubatch *pc, void *be,
		      const struct lbi_flushbuf *buf, const unsigned char *idx,
		      unsigned int k, enum lbi_phase ph, uint32_t local)
{
	void *objs[LB_WBATCH_MAX];
	unsigned int i = 0, j;

	while (i < k) {
		int step = phase_step(buf, idx[i], ph, local);

		for (j = i; j < k; j++) {
			if (phase_step(buf, idx[j], ph, local) != step)
				break;
			objs[j - i] = buf->objs[idx[j]];
		}
		if (step < 0)
			pc->ops.commit(be, objs, j - i);
		else
			pc->ops.apply(be, (enum lb_op_step)step, objs, j - i);
		i = j;
	}
}

/* After the run's unlock: @after for the objects the run added. */
static void after_run(struct lb_cpubatch *pc, void *be,
		      const struct lbi_flushbuf *buf, const unsigned char *idx,
		      unsigned int k)
{
	void *added[LB_WBATCH_MAX];
	unsigned int i, nadd = 0;

	if (!pc->ops.after)
		return;
	for (i = 0; i < k; i++)
		if (lbi_ent_op(buf->nodes[idx[i]]) == LB_OP_ADD)
			added[nadd++] = buf->objs[idx[i]];
	if (nadd)
		pc->ops.after(be, added, nadd);
}

/*
 * A batch holding operations other than adds, or busy adds: phase 1
 * (leave) for every entry, then phase 2 (enter), each in queue order and
 * in runs of consecutive entries (of those the phase works on) that share
 * a back-end, one lock hold per run. Returns the lock holds.
 */
static unsigned int commit_ops(struct lb_cpubatch *pc, struct lbi_flushbuf *buf)
{
	struct lbi_slot *s = lbi_cb_slot(pc, buf->slot);
	unsigned char idx[LB_WBATCH_MAX];
	void *bes[LB_WBATCH_MAX];
	unsigned int i, k, runs = 0, nr;
	uint32_t local = 0, last;
	enum lbi_phase ph;

	_Static_assert(LB_WBATCH_MAX <= 32, "a bit per entry in local");
	for (ph = LBI_LEAVE; ph <= LBI_ENTER; ph++) {
		/* backend_of() and target_of() once per entry and phase. */
		for (i = 0, nr = 0; i < buf->nr; i++)
			if (phase_backend(pc, buf, i, ph, &local, &bes[nr]))
				idx[nr++] = (unsigned char)i;
		for (i = 0; i < nr; i = k) {
			for (k = i + 1; k < nr && bes[k] == bes[i]; k++)
				;
			last = phase_last(buf, idx + i, k - i, ph, local);
			backend_lock(pc, bes[i]);
			last_touch(buf, last);
			apply_run(pc, bes[i], buf, idx + i, k - i, ph, local);
			backend_unlock(pc, bes[i]);
			after_run(pc, bes[i], buf, idx + i, k - i);
			last_done(s, buf, last);
			runs++;
		}
	}
	return runs;
}

static void commit_runs(struct lb_cpubatch *pc, struct lbi_flushbuf *buf)
{
	struct lbi_slot *s = lbi_cb_slot(pc, buf->slot);
	unsigned int i = 0, j, runs = 0;
	void *be, *next = NULL;

	cur.bufs[cur.depth] = buf;
	cur.frames[cur.depth++] = pc;
	if (lbi_unlikely(buf->ops)) {
		/* (G): on the list before the first callback. */
		lbi_spin_lock(&s->tail);
		cds_list_add(&buf->link, &s->flushing);
		lbi_spin_unlock(&s->tail);
		runs = commit_ops(pc, buf);
		goto put;
	}
	be = buf->nr ? backend_of(pc, buf->objs[0]) : NULL;
	while (i < buf->nr) {
		/* One lock hold per run of objects sharing a back-end. */
		for (j = i + 1; j < buf->nr; j++) {
			next = backend_of(pc, buf->objs[j]);
			if (next != be)
				break;
		}
		backend_lock(pc, be);
		pc->ops.commit(be, buf->objs + i, j - i);
		backend_unlock(pc, be);
		if (pc->ops.after)
			pc->ops.after(be, buf->objs + i, j - i);
		runs++;
		i = j;
		be = next;	/* backend_of() is asked once per object */
	}
put:
	if (pc->ops.put)
		for (i = 0; i < buf->nr; i++)
			pc->ops.put(buf->objs[i]);
	lbi_spin_lock(&s->tail);	/* one step for fork() */
	if (buf->ops)
		cds_list_del(&buf->link);
	ck_pr_add_64(&s->backend_locks, runs);
	ck_pr_add_64(&s->objs_committed, buf->nr);
	ck_pr_inc_64(&s->flushes_committed);
	/* (C) */
	lbi_tsan_release(&s->epoch_inflight[buf->epoch]);
	lbi_tsan_release(&s->inflight);
	ck_pr_fence_release();
	/* Raised at swap-out (A), so never below zero here. */
	lbi_assert_debug(ck_pr_load_32(&s->inflight) > 0 &&
			 ck_pr_load_32(&s->epoch_inflight[buf->epoch]) > 0);
	ck_pr_dec_32(&s->epoch_inflight[buf->epoch]);
	ck_pr_dec_32(&s->inflight);
	lbi_spin_unlock(&s->tail);
	cur.depth--;
}

/*
 * Whether this thread may wait for, or flush, @pc now: not from inside a
 * flush of @pc (its back-end lock may be held, and a wait would wait for
 * this very flush), nor while this thread owes @pc a deferred batch (its
 * in-flight count cannot drop before the outer flush returns) or holds its
 * drain mutex (a callback of a drain_all pass), nor one frame deeper than
 * the documented bound. A NULL @pc is -EINVAL, checked first.
 */
int lbi_context_check(const struct lb_cpubatch *pc)
{
	unsigned int i;

	if (!pc)
		return -EINVAL;
	for (i = 0; i < cur.depth; i++)
		if (cur.frames[i] == pc)
			return -EDEADLK;
	for (i = 0; i < cur.nr_drains; i++)
		if (cur.drains[i] == pc)
			return -EDEADLK;
	for (i = 0; i < cur.nr_deferred; i++)
		if (cur.deferred[i].pc == pc)
			return -EDEADLK;
	return cur.depth < LB_CPUBATCH_NEST_MAX ? 0 : -ELOOP;
}

static void count_again(struct lb_cpubatch *pc, struct lbi_flushbuf *buf,
			bool listed)
{
	struct lbi_slot *s = lbi_cb_slot(pc, buf->slot);

	if (listed && buf->ops)
		cds_list_add(&buf->link, &s->flushing);
	s->inflight++;
	s->epoch_inflight[buf->epoch]++;
	s->st.flushes_abandoned--;
	s->st.objs_abandoned -= buf->nr;
}

/*
 * fork() child, on the thread that forked: the in-flight counts start from
 * zero and every flush that was in flight counts as abandoned (fork_child()
 * in cpubatch/create.c), but a flush of @pc that this thread runs or owes (it
 * forked from a callback) goes on in the child, and its (C) will drop
 * them: count it in flight again, and not abandoned, so that the child's
 * drains wait for it, the counts never wrap, and it ends up committed. One
 * it is committing goes back on its slot's @flushing list (G), which
 * lbi_flushing_reset() emptied of the other threads' buffers.
 */
void lbi_fork_own_flushes(struct lb_cpubatch *pc)
{
	unsigned int i;

	for (i = 0; i < cur.depth; i++)
		if (cur.frames[i] == pc)
			count_again(pc, cur.bufs[i], true);
	for (i = 0; i < cur.nr_deferred; i++)
		if (cur.deferred[i].pc == pc)
			count_again(pc, &cur.deferred[i].buf, false);
}

/*
 * Every slot's @flushing list empty: at creation, and in a fork() child,
 * where the buffers other threads had on it are gone with their stacks.
 */
void lbi_flushing_reset(struct lb_cpubatch *pc)
{
	unsigned int i;

	for (i = 0; i < pc->slots.nr; i++)
		CDS_INIT_LIST_HEAD(&lbi_cb_slot(pc, i)->flushing);
}

/* The drain mutex, remembered per thread for lbi_context_check(). */
void lbi_drain_lock(struct lb_cpubatch *pc)
{
	pthread_mutex_lock(&pc->drain.lock);
	cur.drains[cur.nr_drains++] = pc;
}

void lbi_drain_unlock(struct lb_cpubatch *pc)
{
	cur.nr_drains--;
	pthread_mutex_unlock(&pc->drain.lock);
}

/* Commit the deferred batches this thread may commit now, newest first. */
static void run_deferred(void)
{
	struct lbi_deferred d;

	while (cur.nr_deferred && !cur.locked &&
	       cur.depth < LB_CPUBATCH_NEST_MAX) {
		d = cur.deferred[--cur.nr_deferred];
		commit_runs(d.pc, &d.buf);
	}
}

/*
 * Commit a swapped-out batch, then the batches its callbacks deferred.
 * Runs with no lock of ours held; the caller checked the nesting bound.
 */
static void flush_buf(struct lb_cpubatch *pc, struct lbi_flushbuf *buf)
{
	commit_runs(pc, buf);
	run_deferred();
}

/*
 * The one flush tail: swap the locked slot @idx out, unlock it, commit.
 * Returns the number of objects flushed.
 */
unsigned int lbi_flush_locked(struct lb_cpubatch *pc, unsigned int idx,
			      enum lb_flush_cause cause)
{
	struct lbi_flushbuf buf;

	swap_out(pc, idx, &buf, cause);
	lbi_slot_unlock_remote(&pc->slots, idx);
	flush_buf(pc, &buf);
	return buf.nr;
}

/*
 * The add asked for a flush: swap the batch out and commit it, or, for an
 * add made while this thread holds a back-end lock (from some @commit) or
 * at the nesting bound, defer it to the enclosing flush. Out of line so
 * the no-flush path keeps a small frame (the flush buffer is 270 bytes).
 * @cause: what add_decide() (cpubatch/create.c) chose.
 */
int lbi_add_flush(struct lb_cpubatch *pc, unsigned int idx, void *obj,
		  struct lb_node *n, uint32_t weight, enum lb_flush_cause cause)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	struct lbi_deferred *d;

	if (lbi_likely(!cur.locked && cur.depth < LB_CPUBATCH_NEST_MAX)) {
		lbi_flush_locked(pc, idx, cause);
		return 1;
	}
	if (cur.nr_deferred == LB_CPUBATCH_DEFER_MAX) {
		unsigned int op = lbi_ent_op(
			s->nodes[lbi_rseq_count(s->hdr.rseq.word) - 1]);

		/* Undo the append: the entry is the batch's last. */
		if (op != LB_OP_ADD)
			s->st.ops[op]--;
		ck_pr_store_64(&s->hdr.rseq.word, s->hdr.rseq.word -
						     lbi_rseq_word(1, weight));
		lbi_node_set_slot(n, 0);
		lbi_cb_unlock_own(pc, idx);
		if (pc->ops.put)
			pc->ops.put(obj);
		return -EAGAIN;
	}
	d = &cur.deferred[cur.nr_deferred++];
	d->pc = pc;
	swap_out(pc, idx, &d->buf, cause);
	lbi_cb_unlock_own(pc, idx);
	return 1;
}

/*
 * R1-R2 for a drain of slot @idx: lock and stop, then fence only when the
 * slot holds objects or @fence_empty. Returns whether the caller may write
 * the batch: false (rseq path, slot seen empty, not fenced) leaves only
 * the epoch and counters to the caller, as a section already past its
 * stop check may still commit there.
 */
bool lbi_cb_lock_remote(struct lb_cpubatch *pc, unsigned int idx,
			bool fence_empty)
{
	lbi_slot_lock_remote(&pc->slots, idx, true);
	if (!pc->slots.rseq)
		return true;
	if (!fence_empty && !lbi_cb_nr(lbi_cb_slot(pc, idx)))
		return false;
	lbi_rseq_fence((int)idx);
	return true;
}

/*
 * Flush slot @idx if its batch holds anything. Returns the number of
 * objects flushed, and in @home (if not NULL) what lbi_wait_home() needs
 * to wait for every flush that may hold them: this slot, or every slot
 * when a node of the batch carries the "moved" mark (an earlier flush of
 * that object, from another slot, may still be in flight). The nodes are
 * read under the lock: after @put they are not ours to read.
 */
int lbi_drain_slot(struct lb_cpubatch *pc, unsigned int idx,
		   enum lb_flush_cause cause, uint32_t *home)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	unsigned int i, nr;

	if (home)
		*home = idx + 1;
	if (!lbi_cb_lock_remote(pc, idx, false) || !(nr = lbi_cb_nr(s))) {
		lbi_slot_unlock_remote(&pc->slots, idx);
		return 0;
	}
	for (i = 0; home && i < nr; i++)
		if (lbi_node_home(lbi_ent_node(s->nodes[i])) & LBI_HOME_MOVED) {
			*home = LBI_HOME_MOVED;
			break;
		}
	return (int)lbi_flush_locked(pc, idx, cause);
}
