/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_cpubatch internals shared by the add/flush core (cpubatch.c) and the drain
 * paths.
 */
#ifndef LOCKBATCH_CPUBATCH_IMPL_H
#define LOCKBATCH_CPUBATCH_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include <ck_md.h>
#include <ck_spinlock.h>

#include <lockbatch/cpubatch.h>
#include "backoff.h"
#include "slots.h"
#include "wbatch_impl.h"

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
 */

/*
 * One per CPU, on its own cache lines: the owner CPU's adds touch only
 * this slot's lines, so slots never share a line with each other.
 */
struct lbi_slot {
	struct lbi_slot_hdr hdr;	/* first: the slot core's part */
	uint32_t inflight;		/* (A)-(C); atomic */
	uint32_t epoch;			/* (F); under lock */
	uint32_t epoch_inflight[2];	/* (A)-(C), by epoch; atomic */
	uint64_t backend_locks;		/* back-end lock holds by flushes; atomic */
	uint64_t flushes_committed;	/* flushes past @put; atomic */
	uint64_t objs_committed;	/* their objects; atomic */
	struct lb_wbatch batch;		/* under lock */
	struct lb_node *nodes[LB_WBATCH_MAX];	/* under lock, parallel to batch */
	struct lb_cpubatch_slot_stats st;	/* under lock */
} __attribute__((aligned(CK_MD_CACHELINE)));

/* drain_all coalescing and the drain-path counters (cpubatch_drain.c). */
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

struct lb_cpubatch {
	struct lbi_slots slots;		/* of struct lbi_slot */
	enum lb_cpubatch_mode mode;
	uint32_t disabled;		/* lb_cpubatch_disable() nesting; atomic */
	uint32_t bypass_above;		/* weights above this never wait */
	uint32_t id;
	void *backend;
	struct lb_backend_ops ops;
	/* Keeps the drain counters off the line the add path reads. */
	char pad[CK_MD_CACHELINE];
	struct lbi_drain drain;
};

static inline struct lbi_slot *lbi_cb_slot(const struct lb_cpubatch *pc,
					   unsigned int idx)
{
	return (struct lbi_slot *)pc->slots.base + idx;
}

/* A batch swapped out of its slot, on its way to the back-end. */
struct lbi_flushbuf {
	unsigned int slot;
	unsigned int epoch;		/* which epoch_inflight counts it */
	unsigned int nr;
	void *objs[LB_WBATCH_MAX];	/* nodes are not kept: after @put they may be gone */
};

/* cpubatch_flush.c */
int lbi_add_flush(struct lb_cpubatch *pc, unsigned int idx, void *obj,
		  struct lb_node *n, uint32_t weight, enum lb_flush_cause cause);
unsigned int lbi_flush_locked(struct lb_cpubatch *pc, unsigned int idx,
			      enum lb_flush_cause cause);
int lbi_drain_slot(struct lb_cpubatch *pc, unsigned int idx,
		   enum lb_flush_cause cause);
int lbi_context_check(const struct lb_cpubatch *pc);
void lbi_drain_lock(struct lb_cpubatch *pc);
void lbi_drain_unlock(struct lb_cpubatch *pc);

/* How often a drain or settle follows a node that moved before giving up. */
#define LBI_CHASE_MAX 8

/* cpubatch_drain.c */
int lbi_node_check(const struct lb_cpubatch *pc, const struct lb_node *n);
int lbi_lock_node_slot(struct lb_cpubatch *pc, struct lb_node *n);
void lbi_wait_flushes(struct lb_cpubatch *pc, unsigned int idx);
void lbi_wait_node_flush(struct lb_cpubatch *pc, const struct lb_node *n);
int lbi_drain_init(struct lb_cpubatch *pc);
void lbi_drain_fini(struct lb_cpubatch *pc);
void lbi_drain_stats(struct lb_cpubatch *pc, struct lb_cpubatch_drain_stats *out);

#endif /* LOCKBATCH_CPUBATCH_IMPL_H */
