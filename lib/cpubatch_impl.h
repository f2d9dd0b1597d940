/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_cpubatch internals shared by the add/flush core (cpubatch.c) and the drain
 * paths.
 */
#ifndef LOCKBATCH_CPUBATCH_IMPL_H
#define LOCKBATCH_CPUBATCH_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include <ck_backoff.h>
#include <ck_md.h>
#include <ck_spinlock.h>

#include <lockbatch/cpubatch.h>
#include "slots.h"
#include "wbatch_impl.h"

/*
 * One per CPU, on its own cache lines: the owner CPU's adds touch only
 * this slot's lines, so slots never share a line with each other.
 */
struct lbi_slot {
	struct lbi_slot_hdr hdr;	/* first: the slot core's part */
	uint32_t inflight;		/* swapped out, not yet put; atomic */
	/*
	 * The same flushes split in two epochs, so that a drain pass can wait
	 * for the flushes that started before it without chasing new ones
	 * (SRCU's two counters): swap-out counts into epoch_inflight[epoch & 1]
	 * and a pass flips epoch under the lock, then waits for the old one.
	 */
	uint32_t epoch;			/* under lock; flipped by drain passes */
	uint32_t epoch_inflight[2];	/* atomic */
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
void lbi_wait_step(ck_backoff_t *b, unsigned int *spins);
void lbi_wait_flushes(struct lb_cpubatch *pc, unsigned int idx);
void lbi_wait_node_flush(struct lb_cpubatch *pc, const struct lb_node *n);
int lbi_drain_init(struct lb_cpubatch *pc);
void lbi_drain_fini(struct lb_cpubatch *pc);
void lbi_drain_stats(struct lb_cpubatch *pc, struct lb_cpubatch_drain_stats *out);

#endif /* LOCKBATCH_CPUBATCH_IMPL_H */
