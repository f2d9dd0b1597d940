// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Per-CPU size-weighted batches in front of a locked back-end.
 *
 * mm/swap.c keeps one folio_batch per CPU behind a local_lock that only
 * the owning CPU may take, which costs no more than disabling preemption.
 * The rseq path gets the same here: an add that does not flush is one
 * restartable sequence on the current CPU's slot (no lock, no atomic
 * instruction), and every other access to a slot takes its ck spinlock
 * and stops the slot (lib/rseq.h, R1-R5). Where sections cannot run (the
 * lock path: see lb_cpubatch_create()) the owner takes the slot lock too;
 * it is uncontended unless a thread migrated between choosing and locking
 * its slot, or another thread drains the slot remotely, which is what
 * lets a drain target one slot instead of all of them.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/cpubatch.h>
#include "internal.h"
#include "cpubatch_impl.h"

const char *lb_cpubatch_flush_cause_name(enum lb_flush_cause cause)
{
	static const char *const names[LB_FLUSH_NR] = {
		[LB_FLUSH_FULL] = "full",
		[LB_FLUSH_WEIGHT] = "weight",
		[LB_FLUSH_BYPASS] = "bypass",
		[LB_FLUSH_DRAIN_LOCAL] = "drain_local",
		[LB_FLUSH_DRAIN_OBJ] = "drain_obj",
		[LB_FLUSH_DRAIN_OBJS] = "drain_objs",
		[LB_FLUSH_DRAIN_ALL] = "drain_all",
		[LB_FLUSH_DISABLE] = "disable",
		[LB_FLUSH_DESTROY] = "destroy",
	};

	if ((unsigned int)cause >= LB_FLUSH_NR)
		return "invalid";
	return names[cause];
}

/*
 * fork(): the prepare hooks run in registration order, so this one (made
 * before the slot core's) takes the drain mutex before every slot lock, as
 * a drain pass does, then every slot's tail lock, which only a flush's
 * last few counter updates take, so each flush is either counted done or
 * not at all. In the child, flushes that other threads had swapped out
 * will never finish: their objects stay the parent's, they move from in
 * flight to abandoned (cpubatch.h, fork()), and the child's in-flight
 * counts start from zero so that its drains do not wait for them. Those
 * of the forking thread itself (a fork() from a callback) do finish, and
 * are counted in flight again. So are drain_all callers: those waiting
 * for the mutex are gone.
 */
static void fork_prepare(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	pthread_mutex_lock(&pc->drain.lock);
	for (i = 0; i < pc->slots.nr; i++)
		ck_spinlock_lock(&lbi_cb_slot(pc, i)->tail);
}

static void fork_parent(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	for (i = 0; i < pc->slots.nr; i++)
		ck_spinlock_unlock(&lbi_cb_slot(pc, i)->tail);
	pthread_mutex_unlock(&pc->drain.lock);
}

static void fork_child(void *arg)
{
	struct lb_cpubatch *pc = arg;
	unsigned int i;

	for (i = 0; i < pc->slots.nr; i++) {
		struct lbi_slot *s = lbi_cb_slot(pc, i);

		/*
		 * Swapped out (under the slot lock) and not counted done: the
		 * objects of those and of the flushes an ancestor abandoned.
		 */
		s->st.flushes_abandoned += s->inflight;
		s->st.objs_abandoned = s->st.objs_flushed - s->objs_committed;
		s->inflight = 0;
		s->epoch_inflight[0] = s->epoch_inflight[1] = 0;
		ck_spinlock_unlock(&s->tail);
	}
	lbi_flushing_reset(pc);
	lbi_fork_own_flushes(pc);
	/*
	 * A drain_all caller counts itself before it waits for the drain
	 * mutex; the ones waiting at fork() are not the child's threads.
	 */
	pc->drain.calls = pc->drain.passes + pc->drain.coalesced;
	pthread_mutex_unlock(&pc->drain.lock);
}

static int create_fork_hook(struct lb_cpubatch *pc)
{
	if (lbi_drain_init(pc))
		return -ENOMEM;
	pc->fork.prepare = fork_prepare;
	pc->fork.parent = fork_parent;
	pc->fork.child = fork_child;
	pc->fork.arg = pc;
	if (lbi_rseq_fork_register(&pc->fork)) {
		lbi_drain_fini(pc);
		return -EINVAL;
	}
	return 0;
}

static void destroy_fork_hook(struct lb_cpubatch *pc)
{
	lbi_rseq_fork_unregister(&pc->fork);
	lbi_drain_fini(pc);
}

/*
 * The owner path, once (enum lbi_cb_path). Injected CPU sources stay on
 * the lock path: the id a test chooses is not the cpu_id the section
 * checks. So does a batch of one, and a process with a TSan runtime: TSan
 * sees no ordering made by a section and a fence, only the annotated
 * slot lock.
 */
static void choose_path(struct lb_cpubatch *pc,
			const struct lb_cpubatch_conf *conf)
{
	bool tsan = lbi_tsan_active();

	pc->slots.rseq = !conf->cpu_fn && pc->max_nr > 1 && !tsan &&
			 lbi_rseq_usable(conf->flags & LB_CPUBATCH_F_LOCK_PATH,
					 pc->slots.nr);
	if (tsan)
		pc->path = LBI_CB_LOCK_TSAN;
	else if (!pc->slots.rseq)
		pc->path = LBI_CB_LOCK;
	else
		pc->path = pc->ops.get ? LBI_CB_RSEQ_GET : LBI_CB_RSEQ;
#if LBI_RSEQ_ARCH
	pc->rseq_off = __rseq_offset;
	pc->rseq_h0 = (char *)&lbi_cb_slot(pc, 0)->hdr.rseq;
	if (pc->path == LBI_CB_RSEQ)
		pc->rseq_fast_wmax = pc->rseq_wmax;
#endif
}

int lb_cpubatch_create(struct lb_cpubatch **pcp, const struct lb_cpubatch_conf *conf)
{
	unsigned int max_nr;
	uint32_t max_weight;
	struct lb_cpubatch *pc;
	int rc;

	if (!pcp || !conf || !conf->ops || !conf->ops->lock ||
	    !conf->ops->unlock || !conf->ops->commit ||
	    (conf->flags & ~LB_CPUBATCH_F_ALL))
		return -EINVAL;
	/* Caller-protected references: the batch takes none. */
	if ((conf->flags & LB_CPUBATCH_F_CALLER_REFS) &&
	    (conf->ops->get || conf->ops->put))
		return -EINVAL;
	/* A flush must have somewhere to deliver every object. */
	if (!conf->backend && !conf->ops->backend_of)
		return -EINVAL;
	max_nr = conf->max_nr ? conf->max_nr : LB_WBATCH_MAX;
	max_weight = conf->max_weight ? conf->max_weight : LB_WBATCH_MAX;
	if (max_nr > LB_WBATCH_MAX ||
	    max_weight > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;

	switch (conf->mode) {
	case LB_CPUBATCH_BASELINE:
		/* A batch of one: every add is committed on its own. */
		max_nr = 1;
		max_weight = LB_WBATCH_WEIGHT_MAX;
		break;
	case LB_CPUBATCH_BYPASS_LARGE:
		max_weight = LB_WBATCH_WEIGHT_MAX;
		break;
	case LB_CPUBATCH_WEIGHTED:
		break;
	default:
		return -EINVAL;
	}

	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	rc = create_fork_hook(pc);
	if (rc) {
		free(pc);
		return rc;
	}
	rc = lbi_slots_init(&pc->slots, conf->nr_slots, sizeof(struct lbi_slot),
			    conf->cpu_fn, conf->cpu_arg);
	if (rc) {
		destroy_fork_hook(pc);
		free(pc);
		return rc;
	}
	/* Nodes record it: unique among live instances (cpubatch_id.c). */
	rc = lbi_cb_id_get(&pc->id);
	if (rc) {
		lbi_slots_fini(&pc->slots);
		destroy_fork_hook(pc);
		free(pc);
		return rc;
	}
	pc->mode = conf->mode;
	pc->max_nr = max_nr;
	pc->max_weight = max_weight;
	pc->bypass_above = conf->mode == LB_CPUBATCH_BYPASS_LARGE ? 1 : UINT32_MAX;
	pc->ops = *conf->ops;
	pc->backend = conf->backend;
	pc->caller_refs = conf->flags & LB_CPUBATCH_F_CALLER_REFS;
	pc->rseq_wmax = pc->bypass_above < max_weight - 1 ? pc->bypass_above :
							    max_weight - 1;
	pc->rseq_lim = lbi_rseq_word(max_nr - 1, max_weight);
	lbi_flushing_reset(pc);
	choose_path(pc, conf);
	*pcp = pc;
	return 0;
}

/* add_decide()'s "keep batching". */
#define LBI_NO_FLUSH LB_FLUSH_NR

/*
 * add_decide()'s "keep batching", from the limits set at creation (the
 * lock paths test it first, inline): @word is the batch's word with the
 * object appended. rseq_wmax is the weight rule, and the count within
 * rseq_lim's low half with the whole word within rseq_lim is "count below
 * max_nr, weight within max_weight" (the test the rseq section makes,
 * lbi_rseq_arch_push_pair()). disabled is read under the slot lock (see
 * add_decide()).
 */
static inline bool add_fits(const struct lb_cpubatch *pc, uint64_t word,
			    uint32_t weight)
{
	return weight <= pc->rseq_wmax &&
	       lbi_rseq_count(word) <= lbi_rseq_count(pc->rseq_lim) &&
	       word <= pc->rseq_lim && !ck_pr_load_32(&pc->disabled);
}

/*
 * The one flush decision of an add: whether the batch goes now, and why.
 * The object is appended already: @word holds the batch's count and
 * weight with it. disabled is read under the slot lock:
 * lb_cpubatch_disable() raises it and then takes every slot lock, so an
 * add either runs before the disable's pass reaches this slot (and is
 * flushed by it) or sees the raised count here and flushes at once. The
 * rseq section reads it too (add_rseq()), and disable fences every slot.
 */
static enum lb_flush_cause add_decide(const struct lb_cpubatch *pc,
				      uint64_t word, uint32_t weight)
{
	uint32_t nr = lbi_rseq_count(word), bw = lbi_rseq_weight(word);
	bool heavy = weight >= pc->max_weight || bw > pc->max_weight;

	if (add_fits(pc, word, weight))
		return LBI_NO_FLUSH;
	/* BASELINE commits every add on its own: "full", whatever the weight. */
	if (pc->mode == LB_CPUBATCH_BASELINE)
		return LB_FLUSH_FULL;
	if (weight > pc->bypass_above || weight >= pc->max_weight)
		return LB_FLUSH_BYPASS;
	if (!heavy && nr < pc->max_nr)
		return LB_FLUSH_DISABLE;
	if (nr >= pc->max_nr)
		return LB_FLUSH_FULL;
	return LB_FLUSH_WEIGHT;
}

/* Under the slot lock: append @obj to slot @s; returns the new word. */
static inline uint64_t append(struct lbi_slot *s, void *obj, struct lb_node *n,
			      uint32_t weight)
{
	uint64_t word = s->hdr.rseq.word + lbi_rseq_word(1, weight);
	uint32_t nr = lbi_rseq_count(word);

	s->objs[nr - 1] = obj;
	s->nodes[nr - 1] = n;
	ck_pr_store_64(&s->hdr.rseq.word, word);
	return word;
}

/*
 * An add that appended @word to locked slot @idx and did not fit: flush,
 * or, when add_decide() keeps batching after all (an enable between its
 * two reads of disabled), unlock.
 */
static int add_flush(struct lb_cpubatch *pc, unsigned int idx, void *obj,
		     struct lb_node *n, uint32_t weight, uint64_t word)
{
	enum lb_flush_cause cause;

	cause = add_decide(pc, word, weight);
	if (cause == LBI_NO_FLUSH) {
		lbi_cb_unlock_own(pc, idx);
		return 0;
	}
	return lbi_add_flush(pc, idx, obj, n, weight, cause);
}

/*
 * The lock path for every case: R1-R5 on the calling CPU's slot (the stop
 * flag only on the rseq path), append, decide; @got: @get already ran for
 * this add. The rseq path falls back to it, and so do the other paths for
 * what their fast code leaves out (a contended slot lock, TSan), and
 * every operation batch entry (@op, an &enum lb_op, in the node's tag).
 */
static __attribute__((noinline)) int
add_locked_op(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
	      uint32_t weight, bool got, unsigned int op)
{
	unsigned int idx = lbi_slots_this(&pc->slots);
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	uint64_t word;

	lbi_cb_lock_own(pc, idx);
	/* CAS, not a plain test: two racing adds of one node must not both win. */
	if (lbi_unlikely(!lbi_node_claim(n, idx + 1))) {
		lbi_cb_unlock_own(pc, idx);
		if (got && pc->ops.put)
			pc->ops.put(obj);
		return -EEXIST;
	}
	/* Read without the slot lock by settle: single-copy atomic stores. */
	lbi_set_home(pc, n, idx);
	if (!got && pc->ops.get)
		pc->ops.get(obj);
	word = append(s, obj, lbi_ent_tag(n, op), weight);
	/* Adds are derived (read_slot()); the others are counted here. */
	if (op != LB_OP_ADD) {
		s->st.ops[op]++;
		s->has_ops = true;
	}
	if (lbi_likely(add_fits(pc, word, weight))) {
		lbi_cb_unlock_own(pc, idx);
		return 0;
	}
	return add_flush(pc, idx, obj, n, weight, word);
}

static int add_locked(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		      uint32_t weight, bool got)
{
	return add_locked_op(pc, obj, n, weight, got, LB_OP_ADD);
}

int lbi_cb_queue(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		 uint32_t weight, unsigned int op)
{
	return add_locked_op(pc, obj, n, weight, false, op);
}

/*
 * %LBI_CB_LOCK, for what add_lock() leaves out of its frame: @get, then
 * the append and the decision, on locked slot @idx.
 */
static __attribute__((noinline)) int
add_lock_get(struct lb_cpubatch *pc, unsigned int idx, void *obj,
	     struct lb_node *n, uint32_t weight)
{
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	uint64_t word;

	pc->ops.get(obj);
	word = append(s, obj, n, weight);
	if (lbi_likely(add_fits(pc, word, weight))) {
		lbi_slot_unlock_bare(&s->hdr);
		return 0;
	}
	return add_flush(pc, idx, obj, n, weight, word);
}

/*
 * %LBI_CB_LOCK: add_locked() with every per-instance constant decided at
 * creation: no stop flag, no TSan annotation test, one exchange for the
 * slot lock. Everything that calls out after the CPU id (a contended lock,
 * @get, a flush) is a tail call, so only the CPU source's call needs
 * saved registers.
 */
static __attribute__((noinline)) int
add_lock(struct lb_cpubatch *pc, void *obj, struct lb_node *n, uint32_t weight)
{
	unsigned int idx = lbi_slots_this(&pc->slots);
	struct lbi_slot *s = lbi_cb_slot(pc, idx);
	uint64_t word;

	if (lbi_unlikely(!lbi_slot_trylock_bare(&s->hdr)))
		return add_locked(pc, obj, n, weight, false);
	if (lbi_unlikely(!lbi_node_claim(n, idx + 1))) {
		lbi_slot_unlock_bare(&s->hdr);
		return -EEXIST;
	}
	lbi_set_home(pc, n, idx);
	if (pc->ops.get)
		return add_lock_get(pc, idx, obj, n, weight);
	word = append(s, obj, n, weight);
	if (lbi_likely(add_fits(pc, word, weight))) {
		lbi_slot_unlock_bare(&s->hdr);
		return 0;
	}
	return add_flush(pc, idx, obj, n, weight, word);
}

#if LBI_RSEQ_ARCH
/* add_section(): the object's home changes; not an &enum lbi_rseq_rc. */
#define LBI_CB_RSEQ_MOVE (LBI_RSEQ_RESTART + 1)

/*
 * The rseq path (lib/rseq.h), one attempt: the node is marked for the
 * slot of the attempt before the section, which stores the object and
 * node above the committed count and commits count and weight in one
 * store. An attempt that aborts (%LBI_RSEQ_RESTART) is retried from the
 * CPU id, its marks overwritten; a drain that follows such a mark finds
 * the node not in the slot's batch and flushes what is there (the add is
 * not done, so nothing is owed). %LBI_RSEQ_LOCK or %LBI_RSEQ_FULL: the
 * lock path takes the add (a stopped slot, a disabled instance, an add
 * that would flush, a CPU id without a slot), the marks cleared first.
 * Without @may_move (the entry's first attempt) a CPU other than the
 * object's home returns %LBI_CB_RSEQ_MOVE before any mark, so that the
 * entry keeps no frame for lbi_set_home(): add_rseq_retry() records it.
 */
static inline __attribute__((always_inline)) int
add_section(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
	    uint64_t inc, bool may_move)
{
	ptrdiff_t off = pc->rseq_off;
	unsigned int cpu = (unsigned int)lbi_rseq_arch_cpu_id(off);
	struct lbi_rseq_hdr *h;

	if (lbi_unlikely(cpu >= pc->slots.nr))
		return LBI_RSEQ_LOCK;
	if (!may_move) {
		/*
		 * The entry's attempt: a new home, or an object last cached by
		 * another instance, is add_rseq_retry()'s work. "Home slot is
		 * not cpu + 1" in one scratch register, before h takes another.
		 */
		if (lbi_unlikely(LBI_HOME_SLOT(lbi_node_home(n) - cpu -
					       1)) ||
		    lbi_unlikely(lbi_node_owner(n) != pc->id))
			return LBI_CB_RSEQ_MOVE;
	} else {
		lbi_set_home(pc, n, cpu);
	}
	h = (struct lbi_rseq_hdr *)(pc->rseq_h0 + cpu * pc->slots.stride);
	lbi_node_set_slot(n, cpu + 1);
	return lbi_rseq_arch_push_pair((int)cpu, off, h, obj, n, inc,
				       &pc->rseq_lim, &pc->disabled);
}

/*
 * After a first attempt that did not commit (@rc): retry while sections
 * abort, else the lock path (@got: @get ran). Out of line, so that the
 * first attempt is straight code in the entry.
 */
static __attribute__((noinline)) int
add_rseq_retry(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
	       uint64_t inc, int rc, bool got)
{
	while (rc == LBI_RSEQ_RESTART || rc == LBI_CB_RSEQ_MOVE)
		rc = add_section(pc, obj, n, inc, true);
	if (rc == LBI_RSEQ_OK)
		return 0;
	lbi_node_set_slot(n, 0);
	return add_locked(pc, obj, n, lbi_rseq_weight(inc), got);
}

/*
 * %LBI_CB_RSEQ, inline in lb_cpubatch_add() for a weight the section
 * takes (1..rseq_wmax): no call before the section, so the entry reaches
 * it with no frame.
 */
static inline __attribute__((always_inline)) int
add_rseq(struct lb_cpubatch *pc, void *obj, struct lb_node *n, uint32_t weight)
{
	/* The weight travels in inc from here: one register less. */
	uint64_t inc = lbi_rseq_word(1, weight);
	int rc;

	/* A plain test: a concurrent add of one node is the caller's bug. */
	if (lbi_unlikely(lbi_node_slot(n)))
		return -EEXIST;
	rc = add_section(pc, obj, n, inc, false);
	if (lbi_likely(rc == LBI_RSEQ_OK))
		return 0;
	return add_rseq_retry(pc, obj, n, inc, rc, false);
}

/*
 * The rseq path for the rest: a @get callback (%LBI_CB_RSEQ_GET, the
 * batch's reference taken before the section), or a weight the section
 * never takes (a bypass, or one that flushes on its own: lock path).
 */
static __attribute__((noinline)) int
add_rseq_slow(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
	      uint32_t weight)
{
	bool got = pc->ops.get != NULL;

	if (lbi_unlikely(lbi_node_slot(n)))
		return -EEXIST;
	if (weight > pc->rseq_wmax)
		return add_locked(pc, obj, n, weight, false);
	if (got)
		pc->ops.get(obj);
	return add_rseq_retry(pc, obj, n, lbi_rseq_word(1, weight),
			      LBI_RSEQ_RESTART, got);
}
#endif

/*
 * One test of the path chosen at creation, then a tail call, or on the
 * rseq path without @get the section itself: no frame on either path.
 */
int lb_cpubatch_add(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		uint32_t weight)
{
	if (lbi_unlikely(!pc || !n))
		return -EINVAL;
#if LBI_RSEQ_ARCH
	/*
	 * The path test and the weight's validation in one: rseq_fast_wmax is
	 * 0 but on %LBI_CB_RSEQ, where it is rseq_wmax (below
	 * %LB_WBATCH_WEIGHT_MAX).
	 */
	if (lbi_likely(weight - 1 < pc->rseq_fast_wmax) && lbi_likely(obj))
		return add_rseq(pc, obj, n, weight);
#endif
	if (lbi_unlikely(!obj || weight == 0 || weight > LB_WBATCH_WEIGHT_MAX))
		return -EINVAL;
	if (lbi_likely(pc->path == LBI_CB_LOCK))
		return add_lock(pc, obj, n, weight);
#if LBI_RSEQ_ARCH
	if (pc->path != LBI_CB_LOCK_TSAN)
		return add_rseq_slow(pc, obj, n, weight);
#endif
	return add_locked(pc, obj, n, weight, false);
}

int lb_cpubatch_drain_local(struct lb_cpubatch *pc)
{
	unsigned int idx;
	uint32_t home;
	int rc;

	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	idx = lbi_slots_this(&pc->slots);
	rc = lbi_drain_slot(pc, idx, LB_FLUSH_DRAIN_LOCAL, &home);
	/*
	 * Objects other threads swapped out of this slot before us, too, and
	 * earlier flushes of moved objects of the batch, from any slot.
	 */
	lbi_wait_home(pc, home);
	return rc;
}

/* A flush between swap-out and @put still reads the instance. */
static bool slot_busy(void *slot)
{
	return ck_pr_load_32(&((struct lbi_slot *)slot)->inflight) != 0;
}

int lb_cpubatch_destroy(struct lb_cpubatch *pc)
{
	unsigned int i;
	int rc;

	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	/* A slot in use means a concurrent user: refuse, change nothing. */
	rc = lbi_slots_lock_idle(&pc->slots, slot_busy);
	if (rc)
		return rc;
	lbi_slots_unlock_all(&pc->slots);
	for (i = 0; i < pc->slots.nr; i++)
		lbi_drain_slot(pc, i, LB_FLUSH_DESTROY, NULL);
	lbi_slots_fini(&pc->slots);
	destroy_fork_hook(pc);
	/* Every flush is done: no node of ours is read or written any more. */
	lbi_cb_id_put(pc->id);
	free(pc);
	return 0;
}

static void sum_stats(struct lb_cpubatch_slot_stats *t,
		      const struct lb_cpubatch_slot_stats *s)
{
	unsigned int c;

	t->adds += s->adds;
	t->weight_added += s->weight_added;
	for (c = 0; c < LB_FLUSH_NR; c++)
		t->flushes[c] += s->flushes[c];
	t->flushes_committed += s->flushes_committed;
	t->objs_committed += s->objs_committed;
	t->objs_flushed += s->objs_flushed;
	t->weight_flushed += s->weight_flushed;
	t->nr_cached += s->nr_cached;
	t->weight_cached += s->weight_cached;
	t->flushes_abandoned += s->flushes_abandoned;
	t->objs_abandoned += s->objs_abandoned;
	for (c = 0; c < LB_OP_NR; c++) {
		t->ops[c] += s->ops[c];
		t->ops_flushed[c] += s->ops_flushed[c];
	}
	t->merged += s->merged;
	t->cancelled += s->cancelled;
}

/*
 * One slot, under its lock (lbi_slots_stats()). The committed counters are
 * read after the in-flight count (D): a flush is never seen done only.
 */
static void read_slot(void *slot, void *onep, void *outp)
{
	struct lb_cpubatch_stats *out = outp;
	struct lb_cpubatch_slot_stats *one = onep;
	struct lbi_slot *s = slot;
	unsigned int inflight;

	*one = s->st;
	one->nr_cached = lbi_cb_nr(s);
	one->weight_cached = lbi_cb_weight(s);
	/*
	 * Every entry leaves its slot by a swap-out or a cancellation, and
	 * every operation but a merged one made an entry; only the adds
	 * (the rseq path's among them) are not counted as they happen.
	 */
	one->adds = one->objs_flushed + one->nr_cached + one->merged +
		    one->cancelled - one->ops[LB_OP_MOVE] -
		    one->ops[LB_OP_ROTATE] - one->ops[LB_OP_DEL];
	one->ops[LB_OP_ADD] = one->adds;
	one->weight_added = one->weight_flushed + one->weight_cached +
			    s->weight_cancelled;
	ck_pr_fence_load();
	inflight = ck_pr_load_32(&s->inflight);
	ck_pr_fence_load();
	one->flushes_committed = ck_pr_load_64(&s->flushes_committed);
	one->objs_committed = ck_pr_load_64(&s->objs_committed);
	if (out) {
		sum_stats(&out->total, one);
		out->backend_locks += ck_pr_load_64(&s->backend_locks);
		out->flushes_inflight += inflight;
	}
}

int lb_cpubatch_stats(struct lb_cpubatch *pc, struct lb_cpubatch_stats *out,
		      struct lb_cpubatch_slot_stats *slots, unsigned int nr)
{
	struct lb_cpubatch_slot_stats scratch;

	if (!pc || (!slots && nr))
		return -EINVAL;
	if (out) {
		memset(out, 0, sizeof(*out));
		out->nr_slots = pc->slots.nr;
		out->cpu_src = pc->slots.cpu_fn ? LB_CPU_SRC_INJECTED :
						  lb_cpu_source();
		out->path = pc->slots.rseq ? LB_CPU_PATH_RSEQ : LB_CPU_PATH_LOCK;
		lbi_drain_stats(pc, &out->drain);
	}
	lbi_slots_stats(&pc->slots, read_slot, out, slots, nr, sizeof(*slots),
			&scratch);
	return (int)pc->slots.nr;
}
