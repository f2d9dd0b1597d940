// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The per-CPU slot core (lib/slots/slots.h): allocation, remote access, fork
 * hooks, the destroy rule and the stats walk for both caches.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ck_md.h>

#include "slots/slots.h"

static void lock_all(void *arg)
{
	struct lbi_slots *s = arg;
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		lbi_slot_lock(lbi_slot_hdr(s, i));
}

static void unlock_all(void *arg)
{
	lbi_slots_unlock_all(arg);
}

enum lbi_owner_path lbi_slots_choose_path(struct lbi_slots *s, bool checked,
					  bool force_lock)
{
	s->rseq = false;
	if (checked || lbi_tsan_active())
		return LBI_OWNER_LOCK_CHECKED;
	if (s->cpu_fn || !lbi_rseq_usable(force_lock, s->nr))
		return LBI_OWNER_LOCK;
	s->rseq = true;
	return LBI_OWNER_RSEQ;
}

int lbi_slots_init(struct lbi_slots *s, unsigned int nr, size_t size,
		   lb_cpu_fn cpu_fn, void *cpu_arg)
{
	unsigned int i;
	void *mem;

	if (nr > LBI_SLOTS_MAX || size < sizeof(struct lbi_slot_hdr) ||
	    size % CK_MD_CACHELINE)
		return -EINVAL;
	if (!nr) {
		nr = lb_cpu_count();
		if (nr > LBI_SLOTS_MAX)
			nr = LBI_SLOTS_MAX;
	}
	if (posix_memalign(&mem, CK_MD_CACHELINE, (size_t)nr * size))
		return -ENOMEM;
	memset(mem, 0, (size_t)nr * size);
	s->base = mem;
	s->stride = size;
	s->nr = nr;
	s->rseq = false;
	s->cpu_fn = cpu_fn;
	s->cpu_arg = cpu_arg;
	for (i = 0; i < nr; i++)
		lbi_spin_init(&lbi_slot_hdr(s, i)->lock);
	s->fork.prepare = lock_all;
	s->fork.parent = unlock_all;
	s->fork.child = unlock_all;
	s->fork.arg = s;
	if (lbi_fork_register(&s->fork)) {
		free(mem);
		return -EINVAL;
	}
	return 0;
}

void lbi_slots_fini(struct lbi_slots *s)
{
	lbi_fork_unregister(&s->fork);
	free(s->base);
	s->base = NULL;
}

void lbi_slot_lock_remote(struct lbi_slots *s, unsigned int idx, bool empty)
{
	struct lbi_slot_hdr *h = lbi_slot_hdr(s, idx);

	lbi_slot_lock(h);
	/*
	 * The fence retries what can pass; what it still returns means the
	 * kernel refused the registration it accepted at init, which no
	 * caller here could repair.
	 */
	if (s->rseq)
		(void)lbi_rseq_stop(&h->rseq, (int)idx, empty);
}

int lbi_slot_trylock_remote(struct lbi_slots *s, unsigned int idx)
{
	struct lbi_slot_hdr *h = lbi_slot_hdr(s, idx);

	if (!lbi_slot_trylock(h))
		return 0;
	if (s->rseq)
		lbi_rseq_stop(&h->rseq, (int)idx, false);
	return 1;
}

void lbi_slot_unlock_remote(struct lbi_slots *s, unsigned int idx)
{
	struct lbi_slot_hdr *h = lbi_slot_hdr(s, idx);

	if (s->rseq)
		lbi_rseq_start(&h->rseq);
	lbi_slot_unlock(h);
}

int lbi_slots_lock_idle(struct lbi_slots *s, bool (*busy)(void *slot))
{
	unsigned int i;

	for (i = 0; i < s->nr; i++) {
		struct lbi_slot_hdr *h = lbi_slot_hdr(s, i);

		if (lbi_slot_trylock(h)) {
			if (!busy || !busy(h))
				continue;
			lbi_slot_unlock(h);
		}
		while (i--)
			lbi_slot_unlock(lbi_slot_hdr(s, i));
		return -EBUSY;
	}
	return 0;
}

void lbi_slots_unlock_all(struct lbi_slots *s)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++)
		lbi_slot_unlock(lbi_slot_hdr(s, i));
}

void lbi_slots_stats(struct lbi_slots *s,
		     void (*read)(void *slot, void *one, void *out), void *out,
		     void *per_slot, unsigned int nr, size_t size,
		     void *scratch)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++) {
		void *one = i < nr ? (char *)per_slot + (size_t)i * size :
				     scratch;

		lbi_slot_lock_remote(s, i, true);
		read(lbi_slot_at(s, i), one, out);
		lbi_slot_unlock_remote(s, i);
	}
}
