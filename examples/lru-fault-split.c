// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lru-fault --split-every N: every N-th object a worker maps is split by
 * another thread while it may still sit in the worker's lb_cpubatch batch, as
 * a THP split or a long-term pin finds a folio in some CPU's LRU cache.
 *
 * The settler (one thread) holds one reference of its own on each object
 * it is handed, and the object stays mapped (the worker waits for its
 * splits before it unmaps), so it accounts for exactly two references:
 * lb_cpubatch_settle(pc, obj, node, 2). Every other split also finds a third
 * party's pin on the object (taken with the settler's, dropped after the
 * settle), which draining cannot remove: BUSY. The others are DRAINED
 * when the batch still held the object, SETTLED when it had been flushed.
 *
 * Slots flushed per settle are counted from the lb_cpubatch's drain_obj flush
 * counter around each call: only the settler drains objects here. Goal:
 * 1 for every DRAINED settle, 0 for every BUSY and SETTLED one, and no
 * drain_all pass at all (the fallback Linux takes).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <ck_pr.h>

#include "lru-fault.h"

#define LF_SPLIT_RING 4096u

struct lf_split_item {
	struct lf_obj *obj;
	uint32_t *pending;	/* the worker's count of splits not yet done */
	bool pinned;
};

struct lf_split {
	unsigned int every;
	struct lb_cpubatch *pc;
	struct lf_lru *lru;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* items queued, room freed, or stop */
	unsigned int head, tail;	/* under lock */
	bool stop;			/* under lock */
	struct lf_split_item ring[LF_SPLIT_RING];
	struct lf_split_stats st;	/* settler only until joined */
};

static __thread unsigned int tls_added, tls_splits;
static __thread uint32_t tls_pending;	/* atomic: the settler decrements */

static uint64_t drain_obj_flushes(struct lb_cpubatch *pc)
{
	struct lb_cpubatch_stats ps;

	lb_cpubatch_stats(pc, &ps, NULL, 0);
	return ps.total.flushes[LB_FLUSH_DRAIN_OBJ];
}

static void settle_one(struct lf_split *sp, const struct lf_split_item *it)
{
	uint64_t before = drain_obj_flushes(sp->pc), slots;
	int rc;

	rc = lb_cpubatch_settle(sp->pc, it->obj, &it->obj->lru.batch, 2);
	slots = drain_obj_flushes(sp->pc) - before;
	sp->st.settles++;
	if (rc >= LB_SETTLED && rc <= LB_BUSY) {
		sp->st.outcome[rc - LB_SETTLED]++;
		sp->st.slots[rc - LB_SETTLED] += slots;
	} else {
		sp->st.errors++;
	}
	if (slots > sp->st.slots_max)
		sp->st.slots_max = slots;
	if (it->pinned)
		lf_obj_put(it->obj);
	lf_obj_put(it->obj);
	/* The worker may unmap (drop the mapping's reference) from here. */
	ck_pr_fence_release();
	ck_pr_dec_32(it->pending);
}

static void *settler_main(void *arg)
{
	struct lf_split *sp = arg;
	struct lf_split_item it;
	struct lf_relq q;

	lf_relq_attach(&q, sp->lru);
	pthread_mutex_lock(&sp->lock);
	for (;;) {
		while (sp->head == sp->tail && !sp->stop)
			pthread_cond_wait(&sp->cond, &sp->lock);
		if (sp->head == sp->tail)
			break;
		it = sp->ring[sp->head++ % LF_SPLIT_RING];
		pthread_cond_broadcast(&sp->cond);
		pthread_mutex_unlock(&sp->lock);
		settle_one(sp, &it);
		pthread_mutex_lock(&sp->lock);
	}
	pthread_mutex_unlock(&sp->lock);
	lf_relq_detach(&q);
	return NULL;
}

static void split_added(struct lf_run *run, struct lf_obj *obj, void *arg)
{
	struct lf_split *sp = arg;
	struct lf_split_item it = { .obj = obj, .pending = &tls_pending };

	if (++tls_added % sp->every)
		return;
	it.pinned = tls_splits++ & 1;
	ck_pr_inc_32(&obj->ref);		/* the splitter's own */
	if (it.pinned)
		ck_pr_inc_32(&obj->ref);	/* somebody else's pin */
	ck_pr_inc_32(&tls_pending);
	pthread_mutex_lock(&sp->lock);
	while (sp->tail - sp->head == LF_SPLIT_RING)
		pthread_cond_wait(&sp->cond, &sp->lock);
	sp->ring[sp->tail++ % LF_SPLIT_RING] = it;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
}

/* The object must stay mapped while it is split: wait for this worker's. */
static void split_unmapping(struct lf_run *run, void *arg)
{
	while (ck_pr_load_32(&tls_pending))
		sched_yield();
	ck_pr_fence_acquire();
}

static int split_start(struct lf_run *run, void *arg)
{
	struct lf_split *sp = arg;

	sp->pc = lf_run_cpubatch(run);
	sp->lru = lf_run_lru(run);
	sp->head = sp->tail = 0;
	sp->stop = false;
	memset(&sp->st, 0, sizeof(sp->st));
	return -pthread_create(&sp->tid, NULL, settler_main, sp);
}

static void split_stop(struct lf_run *run, struct lf_result *res, void *arg)
{
	struct lf_split *sp = arg;
	struct lb_cpubatch_stats ps;

	pthread_mutex_lock(&sp->lock);
	sp->stop = true;
	pthread_cond_broadcast(&sp->cond);
	pthread_mutex_unlock(&sp->lock);
	pthread_join(sp->tid, NULL);
	lb_cpubatch_stats(sp->pc, &ps, NULL, 0);
	sp->st.drain_all_passes = ps.drain.drain_all_passes;
	res->split_every = sp->every;
	res->split = sp->st;
}

struct lf_split *lf_split_new(unsigned int every)
{
	struct lf_split *sp;

	if (!every)
		return NULL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return NULL;
	sp->every = every;
	if (pthread_mutex_init(&sp->lock, NULL)) {
		free(sp);
		return NULL;
	}
	if (pthread_cond_init(&sp->cond, NULL)) {
		pthread_mutex_destroy(&sp->lock);
		free(sp);
		return NULL;
	}
	return sp;
}

void lf_split_free(struct lf_split *sp)
{
	if (!sp)
		return;
	pthread_cond_destroy(&sp->cond);
	pthread_mutex_destroy(&sp->lock);
	free(sp);
}

void lf_split_hooks(struct lf_split *sp, struct lf_hooks *hooks)
{
	memset(hooks, 0, sizeof(*hooks));
	hooks->added = split_added;
	hooks->start = split_start;
	hooks->unmapping = split_unmapping;
	hooks->stop = split_stop;
	hooks->arg = sp;
}
