// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Side table of lb_cpubatch nodes, keyed by object address: buckets of
 * chained entries, each bucket behind a ck spinlock (why not cds_lfht: see
 * the DOC block of <lockbatch/nodetab.h>).
 *
 * An entry's @holds counts the adds whose flush has not released it yet,
 * plus the drains and settles using it. It is unlinked when @holds reaches
 * 0, under the bucket lock; a lookup takes its hold under the same lock,
 * so nobody can find an entry that is being freed. The node of a reused
 * entry is zeroed: no flush holds its previous object (holds was 0).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ck_md.h>
#include <urcu/list.h>

#include <lockbatch/nodetab.h>
#include "core/core.h"
#include "cpubatch/cpubatch.h"

/* Free entries a bucket keeps; beyond, released entries are freed. */
#define LBI_NODETAB_FREE_MAX 4

struct lbi_ent {
	struct cds_list_head link;	/* in the bucket's chain or free list */
	void *obj;
	uint32_t holds;			/* under the bucket lock */
	struct lb_node node;
};

struct lbi_bucket {
	ck_spinlock_fas_t lock;
	uint32_t nr_free;
	struct cds_list_head chain;
	struct cds_list_head free;
	uint64_t entries;		/* all counters under the lock */
	uint64_t adds;
	uint64_t reuses;
	uint64_t releases;
} __attribute__((aligned(CK_MD_CACHELINE)));

struct lb_nodetab {
	struct lbi_bucket *b;
	unsigned int shift;		/* 64 - log2(bucket count) */
	unsigned int nr;
};

int lb_nodetab_create(struct lb_nodetab **tp, unsigned int nr_buckets)
{
	struct lb_nodetab *t;
	unsigned int i, bits = 0;

	if (!tp)
		return -EINVAL;
	if (!nr_buckets)
		nr_buckets = LB_NODETAB_BUCKETS;
	if (nr_buckets > LB_NODETAB_BUCKETS_MAX ||
	    (nr_buckets & (nr_buckets - 1)))
		return -EINVAL;
	while ((1u << bits) < nr_buckets)
		bits++;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->b = aligned_alloc(CK_MD_CACHELINE, nr_buckets * sizeof(*t->b));
	if (!t->b) {
		free(t);
		return -ENOMEM;
	}
	memset(t->b, 0, nr_buckets * sizeof(*t->b));
	for (i = 0; i < nr_buckets; i++) {
		lbi_spin_init(&t->b[i].lock);
		CDS_INIT_LIST_HEAD(&t->b[i].chain);
		CDS_INIT_LIST_HEAD(&t->b[i].free);
	}
	t->nr = nr_buckets;
	t->shift = 64 - bits;
	*tp = t;
	return 0;
}

int lb_nodetab_destroy(struct lb_nodetab *t)
{
	struct lbi_ent *e, *tmp;
	unsigned int i;

	if (!t)
		return -EINVAL;
	for (i = 0; i < t->nr; i++)
		if (!cds_list_empty(&t->b[i].chain))
			return -EBUSY;
	for (i = 0; i < t->nr; i++)
		cds_list_for_each_entry_safe(e, tmp, &t->b[i].free, link)
			free(e);
	free(t->b);
	free(t);
	return 0;
}

/* Multiplicative hash of the address (the kernel's hash_64()). */
static struct lbi_bucket *bucket_of(const struct lb_nodetab *t, const void *obj)
{
	uint64_t h = (uint64_t)(uintptr_t)obj * 0x61c8864680b583ebull;

	return &t->b[t->shift == 64 ? 0 : h >> t->shift];
}

/* Under @b's lock. */
static struct lbi_ent *find(struct lbi_bucket *b, const void *obj)
{
	struct lbi_ent *e;

	cds_list_for_each_entry(e, &b->chain, link)
		if (e->obj == obj)
			return e;
	return NULL;
}

/* Under @b's lock: drop one hold; the last one unlinks the entry. */
static struct lbi_ent *unhold(struct lbi_bucket *b, struct lbi_ent *e)
{
	if (--e->holds)
		return NULL;
	cds_list_del(&e->link);
	b->entries--;
	if (b->nr_free < LBI_NODETAB_FREE_MAX) {
		cds_list_add(&e->link, &b->free);
		b->nr_free++;
		return NULL;
	}
	return e;	/* the caller frees it after unlocking */
}

static void unhold_locked(struct lbi_bucket *b, struct lbi_ent *e)
{
	struct lbi_ent *gone;

	lbi_spin_lock(&b->lock);
	gone = unhold(b, e);
	lbi_spin_unlock(&b->lock);
	free(gone);
}

/* Under @b's lock: a held entry for @obj, from the free list if any. */
static struct lbi_ent *insert(struct lbi_bucket *b, void *obj,
			      struct lbi_ent *spare)
{
	struct lbi_ent *e = spare;

	if (!cds_list_empty(&b->free)) {
		e = cds_list_first_entry(&b->free, struct lbi_ent, link);
		cds_list_del(&e->link);
		b->nr_free--;
	}
	if (!e)
		return NULL;
	memset(&e->node, 0, sizeof(e->node));
	e->obj = obj;
	e->holds = 1;
	cds_list_add(&e->link, &b->chain);
	b->entries++;
	b->adds++;
	return e;
}

/*
 * The held entry of @obj, created if @create: found (a flush of the object
 * still holds it), else taken from the free list, else allocated with the
 * lock dropped. *@spare returns an allocation the call did not use.
 */
static struct lbi_ent *hold(struct lbi_bucket *b, void *obj, bool create,
			    struct lbi_ent **spare)
{
	struct lbi_ent *e;

	lbi_spin_lock(&b->lock);
	e = find(b, obj);
	if (e) {
		e->holds++;
		if (create)
			b->reuses++;
	} else if (create) {
		e = insert(b, obj, *spare);
		if (e && e == *spare)
			*spare = NULL;
	}
	lbi_spin_unlock(&b->lock);
	return e;
}

static struct lbi_ent *hold_new(struct lbi_bucket *b, void *obj)
{
	struct lbi_ent *spare = NULL, *e;

	e = hold(b, obj, true, &spare);
	if (e)
		return e;
	/* Nothing free in the bucket: allocate without the lock, look again. */
	spare = malloc(sizeof(*spare));
	if (!spare)
		return NULL;
	e = hold(b, obj, true, &spare);
	free(spare);
	return e;
}

int lb_nodetab_add(struct lb_nodetab *t, struct lb_cpubatch *pc, void *obj,
		   uint32_t weight)
{
	struct lbi_bucket *b;
	struct lbi_ent *e;
	int rc;

	if (!t || !pc || !obj || !weight || weight > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	if (pc->ops.get)
		return -EOPNOTSUPP;
	b = bucket_of(t, obj);
	e = hold_new(b, obj);
	if (!e)
		return -ENOMEM;
	rc = lb_cpubatch_add(pc, obj, &e->node, weight);
	/*
	 * A committed add is released by the caller's callback. An add queued
	 * and refused (-EAGAIN) runs @put, which releases; without @put, and
	 * for every other refusal, nothing will: the hold goes here.
	 */
	if (rc < 0 && !(rc == -EAGAIN && pc->ops.put))
		unhold_locked(b, e);
	return rc;
}

int lb_nodetab_release(struct lb_nodetab *t, void *obj)
{
	struct lbi_bucket *b;
	struct lbi_ent *e, *gone = NULL;

	if (!t || !obj)
		return -EINVAL;
	b = bucket_of(t, obj);
	lbi_spin_lock(&b->lock);
	e = find(b, obj);
	if (e) {
		b->releases++;
		gone = unhold(b, e);
	}
	lbi_spin_unlock(&b->lock);
	free(gone);
	return e ? 0 : -ENOENT;
}

int lb_nodetab_drain_obj(struct lb_nodetab *t, struct lb_cpubatch *pc,
			 void *obj)
{
	struct lbi_bucket *b;
	struct lbi_ent *e, *none = NULL;
	int rc;

	if (!t || !pc || !obj)
		return -EINVAL;
	b = bucket_of(t, obj);
	e = hold(b, obj, false, &none);
	if (!e)
		return 0;
	rc = lb_cpubatch_drain_obj(pc, &e->node);
	unhold_locked(b, e);
	return rc;
}

/*
 * No entry: in no batch, held by no flush. The checks of
 * lb_cpubatch_settle() in its order, then the count alone decides.
 */
static int settle_absent(struct lb_cpubatch *pc, void *obj, long expected)
{
	long r;
	int rc;

	rc = lbi_context_check(pc);
	if (rc)
		return rc;
	if (!pc->ops.refcount)
		return -EOPNOTSUPP;
	r = pc->ops.refcount(obj);
	if (r < expected)
		return -ERANGE;
	rc = r == expected ? LB_SETTLED : LB_BUSY;
	ck_pr_inc_64(&pc->drain.settle[rc - LB_SETTLED]);
	return rc;
}

int lb_nodetab_settle(struct lb_nodetab *t, struct lb_cpubatch *pc, void *obj,
		      long expected)
{
	struct lbi_bucket *b;
	struct lbi_ent *e, *none = NULL;
	int rc;

	if (!t || !pc || !obj || expected < 0)
		return -EINVAL;
	b = bucket_of(t, obj);
	e = hold(b, obj, false, &none);
	if (!e)
		return settle_absent(pc, obj, expected);
	rc = lb_cpubatch_settle(pc, obj, &e->node, expected);
	/* An entry whose add has not reached the batch yet: as no entry. */
	if (rc == -ENOENT)
		rc = settle_absent(pc, obj, expected);
	unhold_locked(b, e);
	return rc;
}

int lb_nodetab_stats(struct lb_nodetab *t, struct lb_nodetab_stats *out)
{
	unsigned int i;

	if (!t || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < t->nr; i++) {
		struct lbi_bucket *b = &t->b[i];

		lbi_spin_lock(&b->lock);
		out->entries += b->entries;
		out->free += b->nr_free;
		out->adds += b->adds;
		out->reuses += b->reuses;
		out->releases += b->releases;
		lbi_spin_unlock(&b->lock);
	}
	return 0;
}
