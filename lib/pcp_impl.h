/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_pcp internals shared by the hot paths (pcp.c), the drain and decay
 * paths (pcp_drain.c) and the debug object set (pcp_debug.c).
 */
#ifndef LOCKBATCH_PCP_IMPL_H
#define LOCKBATCH_PCP_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include <ck_md.h>
#include <ck_spinlock.h>
#include <urcu/list.h>

#include <lockbatch/pcp.h>
#include "slots.h"

/*
 * Largest magazine (order-0 objects in front of the list, DOC: Owner path):
 * a slot's magazine holds min(batch << LB_PCP_BATCH_SCALE_MAX, this).
 */
#define LBI_PCP_MAG_MAX 1024u
/*
 * The magazine word's weight counts owner sections (pushes and pops) since
 * the last fold; a push above this many folds on the lock path first.
 */
#define LBI_PCP_MAG_OPS_MAX (1u << 30)
/* A pop's weight: adds 1 to the weight half while taking 1 from the count. */
#define LBI_PCP_MAG_POP_W UINT32_MAX

/* Peer slots an ADAPTIVE refill tries before the back-end. */
#define LBI_PCP_STEAL_PEERS 3

/* Why a back-end hold happened; selects the statistics it feeds. */
enum lbi_pcp_cause {
	LBI_PCP_FLUSH,
	LBI_PCP_DECAY,
	LBI_PCP_DRAIN,
};

/*
 * One per CPU, on its own cache lines. Everything is under the slot lock,
 * except @mag and hdr.rseq.word, which the owner's rseq sections change
 * while the slot is running (lib/rseq.h); the back-end lock nests inside
 * the slot lock. ts.count counts the magazine as of the last fold
 * (@mag_seen objects) or account.
 */
struct lbi_pcp_slot {
	struct lbi_slot_hdr hdr;	/* first: the slot core's part */
	void *mag[LBI_PCP_MAG_MAX];	/* order-0 objects, hottest on top */
	uint32_t mag_seen;	/* magazine count at the last account */
	uint32_t ops_seen;	/* and its section count (word's weight) */
	uint32_t mag_spilled;	/* objects the last fold spilled */
	struct lb_pcp_tune_state ts;
	struct cds_list_head lists[LB_PCP_MAX_ORDER + 1];	/* hot at head */
	void **buf;		/* transfer buffer, batch << 5 entries */
	struct lb_pcp_slot_stats st;
	uint64_t last_ops;	/* st.allocs + st.frees at the last tick */
	unsigned int idle;	/* ticks since then without either */
} __attribute__((aligned(CK_MD_CACHELINE)));

struct lbi_pcp_dbg;

struct lb_pcp {
	struct lbi_slots slots;		/* of struct lbi_pcp_slot */
	struct lbi_rseq_layout lay;	/* the magazines, for the sections */
	unsigned int mag_cap;		/* 0: lock path */
	unsigned int max_order;
	enum lb_pcp_tuner tuner;
	unsigned int flags;
	int chunk;			/* batch << LB_PCP_BATCH_SCALE_MAX */
	unsigned int expire;		/* idle ticks before a slot is drained */
	struct lb_pcp_backend be;
	struct lb_lock lock;		/* the back-end lock, unless the caller's */
	struct lb_lock *bl;		/* the one in use: &lock or the caller's */
	struct lbi_pcp_dbg *dbg;	/* LB_PCP_F_DEBUG only */

	/* Ticks: lb_pcp_tick() and the decay thread, under tick_mutex. */
	pthread_mutex_t tick_mutex;
	lb_clock_fn clock_fn;
	void *clock_arg;
	uint64_t interval_ns;
	uint64_t last_tick_ns;
	uint64_t ticks;

	/* Decay thread, under thr_mutex. */
	pthread_mutex_t thr_mutex;
	pthread_cond_t thr_cond;
	pthread_t thread;
	bool thr_running;
	bool thr_stop;
};

static inline struct lbi_pcp_slot *lbi_pcp_slot_at(const struct lb_pcp *p,
					     unsigned int idx)
{
	return (struct lbi_pcp_slot *)p->slots.base + idx;
}

static inline void lbi_pcp_note_hold(struct lbi_pcp_slot *sl, int units)
{
	if ((uint64_t)units > sl->st.max_hold_units)
		sl->st.max_hold_units = (uint64_t)units;
}

/* pcp_release.c */
static inline unsigned int lbi_pcp_slot_idx(const struct lb_pcp *p,
					   const struct lbi_pcp_slot *sl)
{
	return (unsigned int)(sl - (const struct lbi_pcp_slot *)p->slots.base);
}

long lbi_pcp_release(struct lb_pcp *p, struct lbi_pcp_slot *sl, int units,
		     unsigned int start_order, int chunk,
		     enum lbi_pcp_cause cause);
long lbi_pcp_drain_slot(struct lb_pcp *p, struct lbi_pcp_slot *sl);

/* pcp_mag.c: the owner path and every slot hold (DOC: Owner path) */
void lbi_pcp_mag_setup(struct lb_pcp *p, int batch, bool force_lock);
void lbi_pcp_mag_fold(struct lbi_pcp_slot *sl);
void lbi_pcp_mag_account(struct lbi_pcp_slot *sl);
void lbi_pcp_lock_rseq(struct lb_pcp *p, struct lbi_pcp_slot *sl);
bool lbi_pcp_lock_nonempty(struct lb_pcp *p, struct lbi_pcp_slot *sl);
void lbi_pcp_unlock_rseq(struct lb_pcp *p, struct lbi_pcp_slot *sl,
			 bool owner);

/* R1-R2 then the fold: any slot, from any thread (owner or remote). */
static inline void lbi_pcp_lock(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	if (p->slots.rseq)
		lbi_pcp_lock_rseq(p, sl);
	else
		lbi_slot_lock(&sl->hdr);
}

/* R4-R5 after a remote hold (the magazine stays empty). */
static inline void lbi_pcp_unlock(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	if (p->slots.rseq)
		lbi_pcp_unlock_rseq(p, sl, false);
	else
		lbi_slot_unlock(&sl->hdr);
}

/* R4-R5 after the owner's lock path, which reloads its magazine first. */
static inline void lbi_pcp_unlock_owner(struct lb_pcp *p,
					struct lbi_pcp_slot *sl)
{
	if (p->slots.rseq)
		lbi_pcp_unlock_rseq(p, sl, true);
	else
		lbi_slot_unlock(&sl->hdr);
}

/* pcp_drain.c */
uint64_t lbi_pcp_now(struct lb_pcp *p);

/* pcp_debug.c */
int lbi_pcp_dbg_create(struct lbi_pcp_dbg **d);
void lbi_pcp_dbg_destroy(struct lbi_pcp_dbg *d);
/*
 * 0 if added; -EEXIST if @obj is already cached (checked first, nothing
 * changes); -ENOMEM if the set could not grow.
 */
int lbi_pcp_dbg_add(struct lbi_pcp_dbg *d, const void *obj);
/*
 * A refill's adds must not fail for want of memory once the back-end has
 * handed the objects over: reserve room for @n before the back-end hold
 * (0 or -ENOMEM), add each object against the reservation (0 or -EEXIST),
 * then give back what was not used.
 */
int lbi_pcp_dbg_reserve(struct lbi_pcp_dbg *d, unsigned int n);
int lbi_pcp_dbg_add_reserved(struct lbi_pcp_dbg *d, const void *obj);
void lbi_pcp_dbg_unreserve(struct lbi_pcp_dbg *d, unsigned int n);
/* 0 if removed, -ENOENT if @obj was not cached. */
int lbi_pcp_dbg_del(struct lbi_pcp_dbg *d, const void *obj);

#endif /* LOCKBATCH_PCP_IMPL_H */
