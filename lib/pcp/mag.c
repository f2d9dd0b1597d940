// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp's owner path (DOC: Owner path in lockbatch/pcp.h): the order-0
 * magazine in front of every slot's list, and the slot holds that fold it
 * into the slot before the lock holder reads or changes the slot.
 *
 * The magazine word (lib/rseq/rseq.h) holds the magazine's object count and, in
 * its weight half, the number of owner sections since the last fold: a
 * push adds 1 to both halves, a pop takes 1 from the count and adds 1 to
 * the weight (LBI_PCP_MAG_PUSH_ADD, LBI_PCP_MAG_POP_ADD). So the allocs and
 * frees stay exact without a second store per call
 * (lbi_pcp_mag_account()). The sections themselves are
 * lbi_pcp_mag_pop() and lbi_pcp_mag_push() (pcp/pcp.h).
 */
#include "config.h"

#include <stddef.h>

#include <ck_pr.h>

#include "pcp/mag.h"

/*
 * The largest transfer (batch << 5, p->chunk): lb_pcp_size() sizes batch
 * in bytes (a quarter of 1 MiB of units, rounded), so this is a few MiB of
 * objects whatever their size, as TCMalloc bounds its per-CPU cache in
 * bytes. A burst of that size never takes the lock path; the room below
 * high (mag_reload()) still bounds what the magazine holds.
 */
static inline unsigned int mag_capacity(int batch)
{
	unsigned int cap = (unsigned int)batch << LB_PCP_BATCH_SCALE_MAX;

	return cap < LBI_PCP_MAG_MAX ? cap : LBI_PCP_MAG_MAX;
}

void lbi_pcp_mag_setup(struct lb_pcp *p, int batch, bool force_lock)
{
	p->mag_cap = 0;
	p->mag_nr = 0;
	/* The debug set checks every call. */
	p->path = lbi_slots_choose_path(&p->slots, p->dbg != NULL, force_lock);
	if (p->path != LBI_OWNER_RSEQ)
		return;
#if LBI_RSEQ_ARCH
	p->mag_nr = p->slots.nr;
	p->rseq_off = (long)__rseq_offset;
	p->mag_hdr = (char *)&lbi_pcp_slot_at(p, 0)->hdr.rseq;
	p->mag_cap = mag_capacity(batch);
#else
	(void)batch;
#endif
}

/*
 * Count the sections committed since the last account into the slot: a
 * read of the magazine word, so it needs the slot lock but not the fence
 * (a section committing later is counted by the next account). P pushes
 * and Q pops moved the weight by P + Q and the count by P - Q. The
 * magazine may have run empty in between: the list is count_min's floor.
 */
void lbi_pcp_mag_account(struct lbi_pcp_slot *sl)
{
	uint64_t w = ck_pr_load_64(&sl->hdr.rseq.word);
	uint32_t c = lbi_rseq_count(w);
	int64_t dc = (int64_t)c - (int64_t)sl->mag_seen;
	int64_t ops = (int64_t)(uint32_t)(lbi_rseq_weight(w) - sl->ops_seen);
	uint64_t allocs = (uint64_t)((ops - dc) / 2);

	lbi_slot_assert_held(&sl->hdr);
	sl->st.allocs += allocs;
	sl->st.frees += (uint64_t)((ops + dc) / 2);
	sl->ts.count += (int)dc;
	lbi_assert_debug(sl->ts.count >= 0);
	sl->mag_seen = c;
	sl->ops_seen = lbi_rseq_weight(w);
	if (allocs && sl->ts.count - (int)c < sl->ts.count_min)
		sl->ts.count_min = sl->ts.count - (int)c;
}

/*
 * Make the slot exact and the magazine empty: account, move the magazine
 * to the hot end of the order-0 list (its top ends first), and leave no
 * room, so the owner's next free takes the lock path and sets the room
 * from the high watermark in force then. Slot stopped and fenced (or its
 * owner's own lock path).
 */
void lbi_pcp_mag_fold(struct lbi_pcp_slot *sl)
{
	uint32_t i;

	lbi_pcp_mag_account(sl);
	for (i = 0; i < sl->mag_seen; i++)
		cds_list_add((struct cds_list_head *)sl->mag[i], &sl->lists[0]);
	sl->mag_spilled = sl->mag_seen;
	sl->mag_seen = 0;
	sl->ops_seen = 0;
	sl->hdr.rseq.word = 0;
	sl->hdr.rseq.cap = 0;
}

/*
 * How many objects the owner's reload takes: what the fold of this hold
 * left room for, within [capacity / 4, 3 * capacity / 4]. An alloc that
 * found the magazine empty reloads three quarters (a run of allocs takes
 * the lock path every 3/4 capacity calls, not every half); a free that
 * found it full keeps one quarter, so a run of frees spills each object
 * once instead of spilling a full magazine and reading half of it back.
 * Either way an alternating caller has a quarter of the capacity of
 * slack on both sides before the next lock path.
 */
static unsigned int mag_reload_target(const struct lb_pcp *p,
				      const struct lbi_pcp_slot *sl)
{
	unsigned int c = p->mag_cap;
	unsigned int t = sl->mag_spilled < c ? c - sl->mag_spilled : 0;

	if (t < c / 4)
		t = c / 4;
	if (t > c - c / 4)
		t = c - c / 4;
	return t ? t : 1;
}

/*
 * The objects a reload will unlink are, after a fold in this hold, the
 * ones the fold spilled, top first: their addresses are still in the
 * array. Prefetch them so the reload's walk, one dependent load per node
 * (4 KiB objects share a few cache sets), does not wait on each in turn.
 * A wrong guess (the hold changed the hot end) costs a useless prefetch.
 */
static void mag_prefetch(const struct lbi_pcp_slot *sl, unsigned int n)
{
	unsigned int i, f = sl->mag_spilled;

	for (i = 0; i < n && i < f; i++)
		__builtin_prefetch(sl->mag[f - 1 - i], 1);
}

/*
 * Owner's lock path, before unlocking: refill the magazine from the hot
 * end of the order-0 list (hottest on top; mag_reload_target() says how
 * many) and give frees the room that keeps count below high
 * (lbi_tune_free_fast()).
 */
static void mag_reload(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	struct cds_list_head *head = &sl->lists[0];
	unsigned int target = mag_reload_target(p, sl), n = 0, i, cap;
	int room = sl->ts.high - 1 - sl->ts.count;

	mag_prefetch(sl, target);
	while (n < target && !cds_list_empty(head)) {
		struct cds_list_head *node = head->next;

		cds_list_del(node);
		sl->mag[n++] = node;
	}
	for (i = 0; i < n / 2; i++) {
		void *t = sl->mag[i];

		sl->mag[i] = sl->mag[n - 1 - i];
		sl->mag[n - 1 - i] = t;
	}
	/*
	 * A free may take the magazine to n + room objects; room < 0 (count
	 * above high after a refill) lets allocs pop first.
	 */
	cap = (int)n + room > 0 ? (unsigned int)((int)n + room) : 0;
	sl->mag_seen = n;
	sl->ops_seen = 0;
	sl->hdr.rseq.word = lbi_rseq_word(n, 0);
	sl->hdr.rseq.cap = cap < p->mag_cap ? cap : p->mag_cap;
}

/* lbi_pcp_lock() on the rseq path. */
void lbi_pcp_lock_rseq(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	uint64_t m0 = lbi_rseq_membarriers;

	lbi_slot_lock_remote(&p->slots, lbi_pcp_slot_idx(p, sl), false);
	lbi_pcp_count_fences(&p->fences, m0);
	lbi_pcp_mag_fold(sl);
}

/*
 * As lbi_pcp_lock() for a caller that has nothing to do on an empty slot
 * but its tuner state (drain, decay): such a slot is accounted but neither
 * fenced nor folded (a free committing meanwhile is counted by the next
 * hold), and its room is withdrawn. Return: whether the slot holds objects.
 */
bool lbi_pcp_lock_nonempty(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	unsigned int idx = lbi_pcp_slot_idx(p, sl);
	uint64_t m0;

	if (!p->slots.rseq) {
		lbi_slot_lock(&sl->hdr);
		return sl->ts.count != 0;
	}
	lbi_slot_lock_remote(&p->slots, idx, true);
	lbi_pcp_mag_account(sl);
	if (!sl->ts.count) {
		ck_pr_store_32(&sl->hdr.rseq.cap, 0);
		return false;
	}
	m0 = lbi_rseq_membarriers;
	lbi_rseq_fence((int)idx);
	lbi_pcp_count_fences(&p->fences, m0);
	lbi_pcp_mag_fold(sl);
	return true;
}

/* lbi_pcp_unlock() and, @owner, lbi_pcp_unlock_owner() on the rseq path. */
void lbi_pcp_unlock_rseq(struct lb_pcp *p, struct lbi_pcp_slot *sl,
			 bool owner)
{
	if (owner)
		mag_reload(p, sl);
	lbi_slot_unlock_remote(&p->slots, lbi_pcp_slot_idx(p, sl));
}

void lbi_pcp_fence_stats(struct lb_pcp *p, struct lb_pcp_stats *out)
{
	out->fences = ck_pr_load_64(&p->fences);
	out->owner_fences = ck_pr_load_64(&p->owner_fences);
}
