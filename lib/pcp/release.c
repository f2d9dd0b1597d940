// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp's bulk release (free_pcppages_bulk()) and the drain of one slot
 * (drain_pages_zone()): what the free path, decay, drains and a failed
 * refill share.
 */
#include "config.h"

#include "pcp/mag.h"

/* Each back-end hold is counted once, under the cause that took it. */
static void count_hold(struct lbi_pcp_slot *sl, enum lbi_pcp_cause cause,
		       int freed)
{
	switch (cause) {
	case LBI_PCP_FLUSH:
		sl->st.flushes++;
		sl->st.flush_units += (uint64_t)freed;
		break;
	case LBI_PCP_DECAY:
		sl->st.decay_drains++;
		sl->st.decay_units += (uint64_t)freed;
		break;
	case LBI_PCP_DRAIN:
		sl->st.drains++;
		sl->st.drain_units += (uint64_t)freed;
		break;
	}
	lbi_pcp_note_hold(sl, freed);
}

/*
 * free_pcppages_bulk() for one back-end hold: whole objects from the cold
 * ends of the lists, round-robin over orders starting at @order, until
 * @units are freed (the last object may overshoot, as in the kernel).
 */
static int release_hold(struct lb_pcp *p, struct lbi_pcp_slot *sl, int units,
			unsigned int order, enum lbi_pcp_cause cause)
{
	int freed = 0, o = (int)order - 1, nr_lists = (int)p->max_order + 1;

	if (units > sl->ts.count)
		units = sl->ts.count;
	if (units <= 0)
		return 0;
	lb_lock_acquire(p->bl);
	while (units > 0) {
		struct cds_list_head *head;
		unsigned int nr = 0;
		int w;

		do {
			if (++o >= nr_lists)
				o = 0;
			head = &sl->lists[o];
		} while (cds_list_empty(head));
		w = 1 << o;
		do {
			struct cds_list_head *node = head->prev;

			cds_list_del(node);
			/* Cannot fail: every cached object was added. */
			if (p->dbg)
				lbi_pcp_dbg_del(p->dbg, node);
			sl->buf[nr++] = node;
			units -= w;
			freed += w;
		} while (units > 0 && !cds_list_empty(head));
		sl->ts.count -= (int)nr << o;
		lbi_assert_debug(sl->ts.count >= 0);
		p->be.free_bulk(p->be.ctx, (unsigned int)o, sl->buf, nr);
	}
	lb_lock_release(p->bl);
	count_hold(sl, cause, freed);
	return freed;
}

/*
 * Return @units to the back-end in holds of at most @chunk requested
 * units each, as decay_pcp_high() (chunk = batch) and the free and drain
 * paths (chunk = batch << 5) do. Called with the slot lock held.
 */
long lbi_pcp_release(struct lb_pcp *p, struct lbi_pcp_slot *sl, int units,
		     unsigned int order, int chunk, enum lbi_pcp_cause cause)
{
	long total = 0;

	lbi_slot_assert_held(&sl->hdr);
	while (units > 0 && sl->ts.count > 0) {
		int n = units < chunk ? units : chunk;
		total += release_hold(p, sl, n, order, cause);
		units -= n;
	}
	return total;
}

/*
 * drain_pages_zone(): the count is re-read under the slot lock for every
 * chunk, so objects freed while the drain runs are drained too and the
 * loop ends only when the slot was seen empty.
 */
long lbi_pcp_drain_slot(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	long total = 0;
	int count;

	do {
		count = lbi_pcp_lock_nonempty(p, sl) ? sl->ts.count : 0;
		if (count) {
			int n = count < p->chunk ? count : p->chunk;

			total += lbi_pcp_release(p, sl, n, 0, n, LBI_PCP_DRAIN);
		}
		lbi_pcp_unlock(p, sl);
	} while (count);
	return total;
}
