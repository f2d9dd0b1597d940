// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Seeing what waits in batches: counts per instance or per back-end, and
 * a drain of the slots holding one back-end's objects. Both read a slot's
 * batch under its lock without stopping the owner's sections: the objects
 * below the committed count do not change until a flush, which needs the
 * lock we hold; a section may only append above it.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <lockbatch/cpubatch_wait.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

static void *backend_of(const struct lb_cpubatch *pc, void *obj)
{
	return pc->ops.backend_of ? pc->ops.backend_of(obj) : pc->backend;
}

/*
 * Under slot @s's lock: objects of @backend (NULL: all) and, with
 * @weight_of or when the whole batch counts, their weight.
 */
static uint32_t count_slot(const struct lb_cpubatch *pc, struct lbi_slot *s,
			   void *backend, uint32_t (*weight_of)(void *obj),
			   uint64_t *weight)
{
	uint64_t word = ck_pr_load_64(&s->hdr.rseq.word);
	uint32_t i, nr = lbi_rseq_count(word), found = 0;

	ck_pr_fence_load();	/* the entries below the count, after it */
	if (!backend || !pc->ops.backend_of) {
		if (backend && backend != pc->backend)
			return 0;
		*weight += lbi_rseq_weight(word);
		return nr;
	}
	for (i = 0; i < nr; i++) {
		void *obj = ck_pr_load_ptr(&s->objs[i]);

		if (backend_of(pc, obj) != backend)
			continue;
		found++;
		if (weight_of)
			*weight += weight_of(obj);
	}
	return found;
}

int lb_cpubatch_waiting(struct lb_cpubatch *pc, void *backend,
			uint32_t (*weight_of)(void *obj),
			struct lb_cpubatch_waiting *out)
{
	unsigned int i;
	int rc;

	if (!pc || !out || (backend && pc->ops.backend_of && !weight_of))
		return -EINVAL;
	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < pc->slots.nr; i++) {
		struct lbi_slot *s = lbi_cb_slot(pc, i);
		uint64_t committed;
		uint32_t nr;

		lbi_slot_lock_remote(&pc->slots, i, true);
		nr = count_slot(pc, s, backend, weight_of, &out->weight);
		out->nr += nr;
		out->slots += nr != 0;
		/* As lb_cpubatch_stats(): committed read after flushed (D). */
		out->inflight += s->st.objs_flushed;
		lbi_slot_unlock_remote(&pc->slots, i);
		ck_pr_fence_load();
		committed = ck_pr_load_64(&s->objs_committed);
		out->inflight -= committed;
	}
	return 0;
}

/* Under slot @s's lock: whether its batch holds an object of @backend. */
static bool holds_backend(const struct lb_cpubatch *pc, struct lbi_slot *s,
			  void *backend)
{
	uint64_t weight = 0;

	if (!pc->ops.backend_of)
		return lbi_cb_nr(s) && backend == pc->backend;
	return count_slot(pc, s, backend, NULL, &weight) != 0;
}

int lb_cpubatch_drain_backend(struct lb_cpubatch *pc, void *backend)
{
	unsigned int i;
	int rc, objs = 0;

	if (!pc || !backend)
		return -EINVAL;
	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	for (i = 0; i < pc->slots.nr; i++) {
		struct lbi_slot *s = lbi_cb_slot(pc, i);

		lbi_slot_lock_remote(&pc->slots, i, true);
		if (!holds_backend(pc, s, backend)) {
			lbi_slot_unlock_remote(&pc->slots, i);
			continue;
		}
		lbi_slot_unlock_remote(&pc->slots, i);
		/* Flushing writes the batch: R1-R2 with the fence (rseq/rseq.h). */
		if (lbi_cb_lock_remote(pc, i, false) && lbi_cb_nr(s))
			objs += (int)lbi_flush_locked(pc, i, LB_FLUSH_DRAIN_OBJS);
		else
			lbi_slot_unlock_remote(&pc->slots, i);
	}
	/* Flushes of other threads may hold objects of @backend, any slot. */
	for (i = 0; i < pc->slots.nr; i++)
		lbi_wait_flushes(pc, i);
	return objs;
}
