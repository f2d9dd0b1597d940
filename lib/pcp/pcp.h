/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_pcp's types and inline steps, the module's one face: below every
 * other file of lib/pcp/ (the slot holds and the magazine: mag.h).
 */
#ifndef LOCKBATCH_PCP_IMPL_H
#define LOCKBATCH_PCP_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ck_md.h>
#include <ck_pr.h>
#include <ck_spinlock.h>
#include <urcu/list.h>

#include <lockbatch/pcp.h>
#include "slots/slots.h"

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
/*
 * The sections' changes to the magazine word: a push adds 1 to the count
 * and to the weight; a pop takes 1 from the (nonzero) count and adds 1 to
 * the weight, i.e. adds 2^32 - 1 to the word.
 */
#define LBI_PCP_MAG_PUSH_ADD LBI_RSEQ_WORD(1, 1)
#define LBI_PCP_MAG_PUSH_LIM LBI_RSEQ_WORD(UINT32_MAX, LBI_PCP_MAG_OPS_MAX)
#define LBI_PCP_MAG_POP_ADD 0xffffffffull

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
 * while the slot is running (lib/rseq/rseq.h); the back-end lock nests inside
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
	/*
	 * Read by every alloc and free: first, on one cache line. The slot
	 * core's choice (lbi_pcp_mag_setup()): on %LBI_OWNER_RSEQ order 0
	 * goes through the magazine (DOC: Owner path); %LBI_OWNER_LOCK_CHECKED
	 * also serves the debug set.
	 */
	enum lbi_owner_path path;
	unsigned int max_order;
	/* Every call but an order-0 one on the rseq path, per path. */
	int (*alloc_path)(struct lb_pcp *p, unsigned int order, void **out);
	int (*free_path)(struct lb_pcp *p, void *obj, unsigned int order);
	uint32_t mag_nr;		/* rseq: CPU ids below it have a magazine */
	long rseq_off;			/* rseq: __rseq_offset */
	char *mag_hdr;			/* rseq: slot 0's hdr.rseq */

	struct lbi_slots slots;		/* of struct lbi_pcp_slot */
	unsigned int mag_cap;		/* 0: lock path */
	enum lb_pcp_tuner tuner;
	unsigned int flags;
	int chunk;			/* batch << LB_PCP_BATCH_SCALE_MAX */
	unsigned int expire;		/* idle ticks before a slot is drained */
	struct lb_pcp_backend be;
	struct lb_lock lock;		/* the back-end lock, unless the caller's */
	struct lb_lock *bl;		/* the one in use: &lock or the caller's */
	struct lbi_pcp_dbg *dbg;	/* LB_PCP_F_DEBUG only */
	/*
	 * membarrier() calls made by this cache's slot holds, atomic: all of
	 * them, and those made inside owner calls (&lb_pcp_stats.fences).
	 */
	uint64_t fences;
	uint64_t owner_fences;

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

	struct lbi_fork_hook fork;	/* tick and decay-thread mutexes (fork.c) */
};

static inline struct lbi_pcp_slot *lbi_pcp_slot_at(const struct lb_pcp *p,
					     unsigned int idx)
{
	/* By the stride (== sizeof): one multiply, not a shift sequence. */
	return (struct lbi_pcp_slot *)lbi_slot_at(&p->slots, idx);
}

static inline void lbi_pcp_note_hold(struct lbi_pcp_slot *sl, int units)
{
	if ((uint64_t)units > sl->st.max_hold_units)
		sl->st.max_hold_units = (uint64_t)units;
}

/* The magazine's displacement from a slot's hdr.rseq, for the sections. */
#define LBI_PCP_MAG_DISP							\
	((long)(offsetof(struct lbi_pcp_slot, mag) -			\
		offsetof(struct lbi_pcp_slot, hdr.rseq)))

#if LBI_RSEQ_ARCH
static inline __attribute__((always_inline)) struct lbi_rseq_hdr *
lbi_pcp_mag_hdr(const struct lb_pcp *p, uint32_t cpu)
{
	return (struct lbi_rseq_hdr *)(p->mag_hdr + (size_t)cpu *
				       p->slots.stride);
}
#endif

/*
 * The owner path's entry points (LBI_OWNER_RSEQ, order 0): one section on
 * the calling CPU's magazine. Inline, so that lb_pcp_alloc() and
 * lb_pcp_free() reach the section with no call and no saved register.
 * *@cpup is the CPU the last attempt indexed, or -1 for an id that has no
 * magazine (negative, or not below mag_nr): the slot of the lock path.
 * Return: %LBI_RSEQ_OK; else %LBI_RSEQ_EMPTY, %LBI_RSEQ_FULL or
 * %LBI_RSEQ_LOCK, nothing changed, for the lock path.
 */
static inline __attribute__((always_inline)) int
lbi_pcp_mag_pop(const struct lb_pcp *p, void **out, int *cpup)
{
#if LBI_RSEQ_ARCH
	int rc;

	do {
		uint32_t cpu = (uint32_t)lbi_rseq_arch_cpu_id(p->rseq_off);

		*cpup = -1;
		if (lbi_unlikely(cpu >= p->mag_nr))
			return LBI_RSEQ_LOCK;
		*cpup = (int)cpu;
		rc = lbi_rseq_arch_pcp_pop(cpu, p->rseq_off,
					   lbi_pcp_mag_hdr(p, cpu),
					   LBI_PCP_MAG_DISP, out,
					   LBI_PCP_MAG_POP_ADD);
	} while (lbi_unlikely(rc == LBI_RSEQ_RESTART));
	return rc;
#else
	(void)p;
	(void)out;
	*cpup = -1;
	return LBI_RSEQ_LOCK;
#endif
}

static inline __attribute__((always_inline)) int
lbi_pcp_mag_push(const struct lb_pcp *p, void *obj, int *cpup)
{
#if LBI_RSEQ_ARCH
	int rc;

	do {
		uint32_t cpu = (uint32_t)lbi_rseq_arch_cpu_id(p->rseq_off);

		*cpup = -1;
		if (lbi_unlikely(cpu >= p->mag_nr))
			return LBI_RSEQ_LOCK;
		*cpup = (int)cpu;
		rc = lbi_rseq_arch_pcp_push(cpu, p->rseq_off,
					    lbi_pcp_mag_hdr(p, cpu),
					    LBI_PCP_MAG_DISP, obj,
					    LBI_PCP_MAG_PUSH_ADD,
					    LBI_PCP_MAG_PUSH_LIM);
	} while (lbi_unlikely(rc == LBI_RSEQ_RESTART));
	return rc;
#else
	(void)p;
	(void)obj;
	*cpup = -1;
	return LBI_RSEQ_LOCK;
#endif
}

/* pcp/release.c */
static inline unsigned int lbi_pcp_slot_idx(const struct lb_pcp *p,
					   const struct lbi_pcp_slot *sl)
{
	return (unsigned int)(sl - (const struct lbi_pcp_slot *)p->slots.base);
}

long lbi_pcp_release(struct lb_pcp *p, struct lbi_pcp_slot *sl, int units,
		     unsigned int start_order, int chunk,
		     enum lbi_pcp_cause cause);
long lbi_pcp_drain_slot(struct lb_pcp *p, struct lbi_pcp_slot *sl);

/* owner.c: the alloc and free entry points of the path mag.c chose. */
void lbi_pcp_set_path_ops(struct lb_pcp *p);

/* drain.c */
uint64_t lbi_pcp_now(struct lb_pcp *p);

/* pcp/fork.c: settle @p's tick and decay-thread mutexes around fork(). */
void lbi_pcp_fork_add(struct lb_pcp *p);
void lbi_pcp_fork_del(struct lb_pcp *p);

/* pcp/held_set.c */
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
