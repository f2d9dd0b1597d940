/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lb_pcp's slot holds and magazine (mag.c): how the owner and remote
 * callers lock a slot on either owner path. Above pcp.h (the cache's
 * types), below every file that holds a slot.
 */
#ifndef LOCKBATCH_PCP_MAG_H
#define LOCKBATCH_PCP_MAG_H

#include "pcp/pcp.h"

/* mag.c: the owner path and every slot hold (DOC: Owner path, pcp.h) */
void lbi_pcp_mag_setup(struct lb_pcp *p, int batch, bool force_lock);
void lbi_pcp_mag_fold(struct lbi_pcp_slot *sl);
void lbi_pcp_mag_account(struct lbi_pcp_slot *sl);
void lbi_pcp_lock_rseq(struct lb_pcp *p, struct lbi_pcp_slot *sl);
bool lbi_pcp_lock_nonempty(struct lb_pcp *p, struct lbi_pcp_slot *sl);
void lbi_pcp_unlock_rseq(struct lb_pcp *p, struct lbi_pcp_slot *sl,
			 bool owner);
/* The fence counters into &lb_pcp_stats (lb_pcp_stats()). */
void lbi_pcp_fence_stats(struct lb_pcp *p, struct lb_pcp_stats *out);

/*
 * Charge the membarrier() calls this thread made since it read @before
 * (lbi_rseq_membarriers) to @counter. Cheap when none was made, the
 * usual case: one thread-local load and a compare.
 */
static inline void lbi_pcp_count_fences(uint64_t *counter, uint64_t before)
{
	uint64_t made = lbi_rseq_membarriers - before;

	if (lbi_unlikely(made))
		ck_pr_add_64(counter, made);
}

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

#endif /* LOCKBATCH_PCP_MAG_H */
