// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Soak part: lb_cpubatch. Each thread owns its objects and adds, drains and
 * settles them; any thread drains everything, disables and enables. The
 * back-end is an lb_lock. Checked at once: a commit sees an object in a
 * batch (never twice), drain_obj and SETTLED leave no batch reference,
 * drain_all leaves the caller's earlier adds committed. Checked at
 * pauses: after a drain_all, every add has been committed exactly once
 * and every reference put.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "soak.h"

#define OBJS 32		/* per thread */

struct sobj {
	struct lb_node node;
	uint32_t in_batch;	/* atomic: 1 from add to commit */
	int refs;		/* atomic: the owner's one + the batch's */
	uint64_t adds;		/* owner thread only */
	uint64_t commits;	/* atomic */
};

static struct lb_cpubatch *pc;
static struct lb_lock be_lock;
static struct sobj *objs;
static unsigned int nr_thr;
/* LB_SOAK_NO_DRAIN_WAIT=1: skip the drain_obj in-flight check (issue 8, C20). */
static int no_drain_wait;

static void lock(void *be) { lb_lock_acquire(be); }
static void unlock(void *be) { lb_lock_release(be); }
static void get(void *o) { __atomic_add_fetch(&((struct sobj *)o)->refs, 1, __ATOMIC_RELAXED); }

static void put(void *obj)
{
	struct sobj *o = obj;

	SOAK_CHECK(__atomic_sub_fetch(&o->refs, 1, __ATOMIC_RELEASE) >= 1,
		   "put without get");
}

static long refcount(void *o)
{
	return __atomic_load_n(&((struct sobj *)o)->refs, __ATOMIC_ACQUIRE);
}

static void commit(void *be, void **v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct sobj *o = v[i];

		SOAK_CHECK(__atomic_exchange_n(&o->in_batch, 0, __ATOMIC_ACQ_REL) == 1,
			   "object %ld committed twice", (long)(o - objs));
		__atomic_add_fetch(&o->commits, 1, __ATOMIC_RELAXED);
	}
}

static const struct lb_backend_ops ops = {
	.lock = lock, .unlock = unlock, .commit = commit,
	.get = get, .put = put, .refcount = refcount,
};

int soak_cpubatch_setup(unsigned int nr_threads)
{
	struct lb_cpubatch_conf c = { .mode = LB_CPUBATCH_WEIGHTED, .ops = &ops,
				  .backend = &be_lock };
	unsigned int i;

	nr_thr = nr_threads;
	no_drain_wait = getenv("LB_SOAK_NO_DRAIN_WAIT") != NULL;
	objs = calloc((size_t)nr_threads * OBJS, sizeof(*objs));
	if (!objs || lb_lock_init(&be_lock, LB_LOCK_SPIN, "soak-cpubatch"))
		return -1;
	for (i = 0; i < nr_threads * OBJS; i++)
		objs[i].refs = 1;
	return lb_cpubatch_create(&pc, &c);
}

/* Nothing of this object in a batch, nor in flight. */
static int unheld(struct sobj *o)
{
	return !__atomic_load_n(&o->in_batch, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&o->refs, __ATOMIC_ACQUIRE) == 1;
}

static void add(struct sobj *o, struct lb_rng *g)
{
	int rc;

	if (__atomic_load_n(&o->in_batch, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&o->in_batch, 1, __ATOMIC_RELEASE);
	rc = lb_cpubatch_add(pc, o, &o->node, 1 + lb_rng_below(g, 12));
	if (rc == -EEXIST) {	/* swapped out, commit not yet run */
		__atomic_store_n(&o->in_batch, 0, __ATOMIC_RELEASE);
		return;
	}
	SOAK_CHECK(rc == 0 || rc == 1, "add: %d", rc);
	o->adds++;
}

void soak_cpubatch_op(unsigned int t, struct lb_rng *g)
{
	struct sobj *o = &objs[t * OBJS + lb_rng_below(g, OBJS)];
	unsigned int x = lb_rng_below(g, 1000);
	int rc;

	if (x < 800) {
		add(o, g);
	} else if (x < 900) {
		rc = lb_cpubatch_drain_obj(pc, &o->node);
		SOAK_CHECK(rc >= 0, "drain_obj: %d", rc);
		SOAK_CHECK(no_drain_wait || unheld(o), "drain_obj returned "
			   "while object %ld was in a batch or in flight",
			   (long)(o - objs));
	} else if (x < 980) {
		rc = lb_cpubatch_settle(pc, o, &o->node, 1);
		SOAK_CHECK(rc >= LB_SETTLED || rc == -EAGAIN || rc == -ENOENT,
			   "settle: %d", rc);
		if (rc == LB_SETTLED)
			SOAK_CHECK(unheld(o), "SETTLED while a batch holds "
				   "object %ld", (long)(o - objs));
	} else if (x < 995) {
		int was = __atomic_load_n(&o->in_batch, __ATOMIC_ACQUIRE);

		SOAK_CHECK(lb_cpubatch_drain_all(pc) >= 0, "drain_all");
		SOAK_CHECK(!was || unheld(o), "drain_all left an earlier add");
	} else {
		SOAK_CHECK(lb_cpubatch_disable(pc) == 0, "disable");
		SOAK_CHECK(lb_cpubatch_enable(pc) >= 0, "enable");
	}
}

void soak_cpubatch_check(void)
{
	struct lb_cpubatch_stats st;
	unsigned int i;

	SOAK_CHECK(lb_cpubatch_drain_all(pc) >= 0, "drain_all");
	lb_cpubatch_stats(pc, &st, NULL, 0);
	SOAK_CHECK(st.total.nr_cached == 0, "%llu cached after drain_all",
		   (unsigned long long)st.total.nr_cached);
	for (i = 0; i < nr_thr * OBJS; i++) {
		struct sobj *o = &objs[i];

		SOAK_CHECK(o->adds == o->commits && unheld(o),
			   "object %u: %llu adds, %llu commits, %d refs", i,
			   (unsigned long long)o->adds,
			   (unsigned long long)o->commits, o->refs);
	}
}

void soak_cpubatch_teardown(void)
{
	SOAK_CHECK(lb_cpubatch_destroy(pc) == 0, "destroy");
	lb_lock_destroy(&be_lock);
	free(objs);
}
