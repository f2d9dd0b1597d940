/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_cpubatch internals shared by the add/flush core (cpubatch/create.c) and the drain
 * paths.
 */
#ifndef LOCKBATCH_CPUBATCH_IMPL_H
#define LOCKBATCH_CPUBATCH_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include <ck_md.h>
#include <ck_spinlock.h>
#include <urcu/list.h>

#include <lockbatch/cpubatch.h>
#include "cpubatch/node.h"
#include "slots/slots.h"
#include "wbatch/wbatch.h"

/*
 * The in-flight protocol. A flush empties a slot long before its objects
 * reach the back-end; drains, settle, destroy and stats must still know
 * about it. The steps, referred to as (A)-(F) everywhere else:
 *
 *   (A) Swap-out, under the slot lock: raise inflight and
 *       epoch_inflight[epoch & 1], store fence, then copy the batch out,
 *       mark each node "not cached" (n->slot = 0) and empty the batch.
 *       The nodes are cleared here, not later: once @put runs the object
 *       may be freed and its node must not be touched again.
 *   (B) Unlock, then commit the copy outside every slot lock: back-end
 *       lock, @commit, unlock, @after; then @put for each object.
 *   (C) Release fence, then drop epoch_inflight and inflight.
 *   (D) A lock-free reader that saw a node "not cached" or a batch empty
 *       issues a load fence and reads inflight: by (A)'s order a flush that
 *       emptied them is counted until (C). Non-zero: a flush is in flight.
 *   (E) A waiter that reads a count at 0 issues an acquire fence (pairs
 *       with (C)): the commit and @put of every flush it counted are
 *       visible, and the caller may free the objects.
 *   (F) Epochs (SRCU's two counters): a drain pass flips epoch under the
 *       slot lock, holding the drain mutex so flips are one at a time, and
 *       waits only for the old epoch's count; flushes swapped out after
 *       the flip are not chased.
 *   (G) The last touch. An entry whose node (A) marked busy
 *       (LBI_SLOT_BUSY) has its mark cleared right before the callbacks
 *       of its last step, under that step's back-end lock, never after:
 *       any of those callbacks may free the object or release its
 *       side-table entry, and the node may then belong to somebody else.
 *       What the mark said from then until the callbacks return is kept
 *       in memory the library owns: the flush buffer is on its slot's
 *       @flushing list (under @tail) from before its first callback to
 *       (C), and its @pending bit for the entry goes, under @tail, once
 *       those callbacks have returned. A reader that finds the node
 *       "not cached" while the home slot has a flush in flight (D) looks
 *       there (lbi_node_pending()); @tail orders the callbacks' stores
 *       before what it reads after.
 */

/*
 * One per CPU, on its own cache lines: the owner CPU's adds touch only
 * this slot's lines, so slots never share a line with each other.
 *
 * The batch is hdr.rseq.word (count in the low half, weight in the high
 * half: one store commits both), objs[] and nodes[] below it, right after
 * the header: a pair slot of lbi_rseq_arch_push_pair() (lib/rseq/rseq.h), so
 * that one register addresses the word and both arrays. On the rseq path
 * the owner appends in a section (both arrays above the committed count,
 * then the word); everything else writes the batch under the slot lock
 * with the slot stopped (lib/rseq/rseq.h, R1-R5).
 */
struct lbi_slot {
	struct lbi_slot_hdr hdr;	/* first: the slot core's part */
	void *objs[LB_WBATCH_MAX];	/* the batch, below the count */
	struct lb_node *nodes[LB_WBATCH_MAX];	/* parallel to objs */
	uint32_t inflight;		/* (A)-(C); atomic */
	uint32_t epoch;			/* (F); under lock */
	uint32_t epoch_inflight[2];	/* (A)-(C), by epoch; atomic */
	uint64_t backend_locks;		/* back-end lock holds by flushes; atomic */
	uint64_t flushes_committed;	/* flushes past @put; atomic */
	uint64_t objs_committed;	/* their objects; atomic */
	/*
	 * A flush's final accounting (backend_locks, the committed counters,
	 * (C)) runs under it, and fork() takes it: a child sees each flush
	 * either finished or not started finishing (fork_prepare(), cpubatch/create.c).
	 */
	ck_spinlock_t tail;
	/* (G): flush buffers holding busy entries, under @tail. */
	struct cds_list_head flushing;
	struct lb_cpubatch_slot_stats st;	/* under lock; adds derived */
	uint64_t weight_cancelled;	/* under lock: cancelled entries' */
	/*
	 * Under lock: the batch may hold an entry other than an add (set by
	 * their append, cleared by swap-out), so a flush of adds only
	 * reads no tag.
	 */
	bool has_ops;
} __attribute__((aligned(CK_MD_CACHELINE)));

_Static_assert(LB_WBATCH_MAX == LBI_RSEQ_PAIR_MAX, "pair slot size");
_Static_assert(offsetof(struct lbi_slot, objs) ==
	       offsetof(struct lbi_slot, hdr.rseq) + LBI_RSEQ_PAIR_A,
	       "objs[] is the pair slot's first array");
_Static_assert(offsetof(struct lbi_slot, nodes) ==
	       offsetof(struct lbi_slot, hdr.rseq) + LBI_RSEQ_PAIR_B,
	       "nodes[] is the pair slot's second array");

static inline uint32_t lbi_cb_nr(const struct lbi_slot *s)
{
	return lbi_rseq_count(ck_pr_load_64(&s->hdr.rseq.word));
}

static inline uint32_t lbi_cb_weight(const struct lbi_slot *s)
{
	return lbi_rseq_weight(ck_pr_load_64(&s->hdr.rseq.word));
}

/* drain_all coalescing and the drain-path counters (cpubatch/drain.c). */
struct lbi_drain {
	pthread_mutex_t lock;		/* serialises drain_all passes */
	uint64_t gen;			/* passes started; atomic */
	uint64_t calls;			/* atomic, as every counter below */
	uint64_t passes;
	uint64_t forced;
	uint64_t coalesced;
	uint64_t slots_touched;
	uint64_t slots_max;		/* under lock */
	uint64_t settle[3];		/* by outcome - LB_SETTLED */
	uint64_t settle_waits;
};

/*
 * enum lbi_cb_path - How lb_cpubatch_add() runs: the slot core's owner
 * path (enum lbi_owner_path), with the rseq path split by whether there is
 * a @get callback, so that the add tests one field instead of the
 * per-instance constants behind it.
 * @LBI_CB_RSEQ: rseq path, no @get: the section inline in the entry.
 * @LBI_CB_LOCK: lock path, no TSan runtime in the process: the slot lock
 *               without annotations (lbi_slot_trylock_bare()).
 * @LBI_CB_LOCK_CHECKED: lock path with the annotations (a TSan build of
 *                       the library, or a TSan-built client).
 * @LBI_CB_RSEQ_GET: rseq path with a @get callback (called before the
 *                   section, so the entry keeps a frame for it).
 */
enum lbi_cb_path {
	LBI_CB_RSEQ = LBI_OWNER_RSEQ,
	LBI_CB_LOCK = LBI_OWNER_LOCK,
	LBI_CB_LOCK_CHECKED = LBI_OWNER_LOCK_CHECKED,
	LBI_CB_RSEQ_GET,
};

struct lb_cpubatch {
	struct lbi_slots slots;		/* of struct lbi_slot */
	enum lb_cpubatch_mode mode;
	uint32_t max_nr;		/* batch caps, as lb_wbatch's */
	uint32_t max_weight;
	/*
	 * Both paths: an add of a weight up to rseq_wmax whose new batch word
	 * is within the limit word rseq_lim (count max_nr - 1, weight
	 * max_weight) does not flush (add_fits(), cpubatch/create.c). rseq path: the
	 * section checks the same limit, and the add that would flush gets
	 * "full" and takes the lock path.
	 */
	uint32_t rseq_wmax;
	uint32_t path;			/* enum lbi_cb_path */
	uint64_t rseq_lim;
	/*
	 * For the inline %LBI_CB_RSEQ add only (else 0 and NULL): rseq_wmax,
	 * __rseq_offset, and slot 0's &struct lbi_rseq_hdr.
	 */
	uint32_t rseq_fast_wmax;
	ptrdiff_t rseq_off;
	char *rseq_h0;
	uint32_t disabled;		/* lb_cpubatch_disable() nesting; atomic */
	bool caller_refs;		/* %LB_CPUBATCH_F_CALLER_REFS */
	uint32_t bypass_above;		/* weights above this never wait */
	uint16_t id;			/* owner id, lbi_cb_id_get() */
	void *backend;
	struct lb_backend_ops ops;
	struct lbi_fork_hook fork;	/* drain mutex and in-flight counts */
	/* Keeps the drain counters off the line the add path reads. */
	char pad[CK_MD_CACHELINE];
	struct lbi_drain drain;
};

static inline struct lbi_slot *lbi_cb_slot(const struct lb_cpubatch *pc,
					   unsigned int idx)
{
	return (struct lbi_slot *)lbi_slot_at(&pc->slots, idx);
}

/*
 * The owner's lock path on slot @idx: R1 and, on the rseq path, R2 (the
 * fence is a no-op unless the thread migrated since choosing @idx).
 * Inline so that the lock path pays no call for the rseq test.
 */
static inline void lbi_cb_lock_own(struct lb_cpubatch *pc, unsigned int idx)
{
	if (pc->slots.rseq)
		lbi_slot_lock_remote(&pc->slots, idx, false);
	else
		lbi_slot_lock(&lbi_cb_slot(pc, idx)->hdr);
}

/* R4 (rseq path) and R5, for a hold taken by lbi_cb_lock_own(). */
static inline void lbi_cb_unlock_own(struct lb_cpubatch *pc, unsigned int idx)
{
	struct lbi_slot_hdr *h = &lbi_cb_slot(pc, idx)->hdr;

	if (pc->slots.rseq)
		lbi_rseq_start(&h->rseq);
	lbi_slot_unlock(h);
}

/*
 * lb_node.home: the slot index + 1 in the low bits (LB_NODE_HOME_SLOT()),
 * a generation that every change of home advances, and the top bit,
 * "moved": the object entered the batch of a slot other than its home
 * while the home still had a flush in flight, so a flush holding it may be
 * counted in a slot other than the one @home names (the add cannot tell
 * whose flush it was). Waits for the object's flushes then read every
 * slot (lbi_wait_home()); one that finds the node not cached clears the
 * mark if @home did not change meanwhile, which the generation tells
 * (lbi_wait_node_flush()).
 */
#define LBI_HOME_MOVED (1u << 31)
#define LBI_HOME_GEN_ONE (LB_NODE_HOME_SLOT_MASK + 1)
#define LBI_HOME_GEN_MASK (LBI_HOME_MOVED - LBI_HOME_GEN_ONE)
#define LBI_HOME_SLOT(home) LB_NODE_HOME_SLOT(home)

_Static_assert(LB_CPU_SLOTS_MAX <= LB_NODE_HOME_SLOT_MASK,
	       "slot index + 1 fits below the generation");

/*
 * An add entering slot @idx records it as @n's home and @pc as its owner.
 * The common case, the same slot of the same instance as last time, stores
 * nothing. Otherwise the old home's in-flight count tells
 * whether a flush there may still hold the object: the caller saw
 * n->slot == 0 first, so the old batch is swapped out and counted (A).
 * An object coming from another instance is marked whatever it finds: a
 * flush of ours from before it left may still hold it, and neither the
 * other instance's slots nor its drains (which may have cleared the mark)
 * tell. No call: the add paths keep no frame for it.
 */
static inline void lbi_set_home(const struct lb_cpubatch *pc, struct lb_node *n,
				unsigned int idx)
{
	uint32_t old, slot, moved;
	uint16_t owner = lbi_node_owner(n);

	/* The move reads @home again rather than keep a copy of it. */
	if (lbi_likely(!LBI_HOME_SLOT(lbi_node_home(n) ^ (idx + 1))) &&
	    lbi_likely(owner == pc->id))
		return;
	old = lbi_node_home(n);
	slot = LBI_HOME_SLOT(old);
	moved = old & LBI_HOME_MOVED;
	ck_pr_fence_load();	/* (D) */
	if (owner && owner != pc->id)
		moved = LBI_HOME_MOVED;
	else if (slot && slot <= pc->slots.nr &&
		 ck_pr_load_32(&lbi_cb_slot(pc, slot - 1)->inflight))
		moved = LBI_HOME_MOVED;
	lbi_node_set_home(n, ((old + LBI_HOME_GEN_ONE) & LBI_HOME_GEN_MASK) |
				 moved | (idx + 1));
	if (owner != pc->id)
		lbi_node_set_owner(n, pc->id);
}

/*
 * Operation batches (cpubatch_op.h): an entry's &enum lb_op is kept in
 * the two low bits of its nodes[] pointer, so an add stores what it always
 * stored (tag 0) and the rseq section is unchanged.
 */
#define LBI_OP_MASK ((uintptr_t)3)
_Static_assert(_Alignof(struct lb_node) >= 4, "two tag bits in a node pointer");
_Static_assert(LB_OP_NR <= LBI_OP_MASK + 1, "every operation fits the tag");

static inline struct lb_node *lbi_ent_node(const struct lb_node *t)
{
	return (struct lb_node *)((uintptr_t)t & ~LBI_OP_MASK);
}

static inline unsigned int lbi_ent_op(const struct lb_node *t)
{
	return (unsigned int)((uintptr_t)t & LBI_OP_MASK);
}

static inline struct lb_node *lbi_ent_tag(struct lb_node *n, unsigned int op)
{
	return (struct lb_node *)((uintptr_t)n | op);
}

/*
 * lb_node.slot of an object whose operation other than an add a flush has
 * swapped out and not applied yet (in the caller-protected mode, also an
 * add's: no reference keeps the object alive, so the caller must be able
 * to see the flush): "in no batch", but not free to be queued again, so
 * the next operation on it waits (cpubatch/op.c) and lb_cpubatch_add()
 * refuses it. Cleared by the flush right before the callbacks of the
 * entry's last step (G), whose end the slot's @flushing list tells from
 * then on (lbi_node_busy()). Above every slot index + 1.
 */
#define LBI_SLOT_BUSY 0xffffu
/* lbi_flushbuf.ops: the batch's adds are marked busy too (caller refs). */
#define LBI_OPS_BUSY_ADDS 0x8u
_Static_assert(LB_CPU_SLOTS_MAX < LBI_SLOT_BUSY, "busy is no slot");

/* A batch swapped out of its slot, on its way to the back-end. */
struct lbi_flushbuf {
	unsigned int slot;
	unsigned int epoch;		/* which epoch_inflight counts it */
	unsigned int nr;
	unsigned int ops;		/* bit per &enum lb_op other than add,
					 * LBI_OPS_BUSY_ADDS */
	/*
	 * (G): bit i set while entry i is busy and the callbacks of its
	 * last step have not returned; written under the slot's @tail while
	 * @link is on its @flushing list.
	 */
	uint32_t pending;
	struct cds_list_head link;
	void *objs[LB_WBATCH_MAX];
	/*
	 * Tagged, as the slot's. Only the nodes of busy entries are touched,
	 * their mark cleared before the callbacks of their last step (G):
	 * from then on the nodes may be gone, and are only compared.
	 */
	struct lb_node *nodes[LB_WBATCH_MAX];
};

/* cpubatch/create.c: queue an entry of operation @op on the lock path. */
int lbi_cb_queue(struct lb_cpubatch *pc, void *obj, struct lb_node *n,
		 uint32_t weight, unsigned int op);

/* cpubatch/flush.c */
bool lbi_cb_lock_remote(struct lb_cpubatch *pc, unsigned int idx,
			bool fence_empty);
int lbi_add_flush(struct lb_cpubatch *pc, unsigned int idx, void *obj,
		  struct lb_node *n, uint32_t weight, enum lb_flush_cause cause);
unsigned int lbi_flush_locked(struct lb_cpubatch *pc, unsigned int idx,
			      enum lb_flush_cause cause);
int lbi_drain_slot(struct lb_cpubatch *pc, unsigned int idx,
		   enum lb_flush_cause cause, uint32_t *home);
int lbi_context_check(const struct lb_cpubatch *pc);
void lbi_fork_own_flushes(struct lb_cpubatch *pc);
void lbi_flushing_reset(struct lb_cpubatch *pc);
void lbi_drain_lock(struct lb_cpubatch *pc);
void lbi_drain_unlock(struct lb_cpubatch *pc);

/* How often a drain or settle follows a node that moved before giving up. */
#define LBI_CHASE_MAX 8

/* cpubatch/drain.c */
int lbi_node_check(const struct lb_cpubatch *pc, const struct lb_node *n);
int lbi_lock_node_slot(struct lb_cpubatch *pc, struct lb_node *n);
void lbi_wait_flushes(struct lb_cpubatch *pc, unsigned int idx);
void lbi_wait_home(struct lb_cpubatch *pc, uint32_t home);
bool lbi_home_in_flight(const struct lb_cpubatch *pc, uint32_t home);
bool lbi_node_pending(struct lb_cpubatch *pc, const struct lb_node *n);
bool lbi_node_busy(struct lb_cpubatch *pc, const struct lb_node *n);
void lbi_wait_node_flush(struct lb_cpubatch *pc, struct lb_node *n);
int lbi_drain_init(struct lb_cpubatch *pc);
void lbi_drain_fini(struct lb_cpubatch *pc);
void lbi_drain_stats(struct lb_cpubatch *pc, struct lb_cpubatch_drain_stats *out);

#endif /* LOCKBATCH_CPUBATCH_IMPL_H */
