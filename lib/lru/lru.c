// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lru: lifetime, the splice commit behind lb_cpubatch, and the per-path
 * accounting of the LRU lock.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "lock/lock.h"
#include "cpubatch/cpubatch.h"
#include "lru/lru.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>

/*
 * Hold times are short (tens of ns for a splice): the TSC costs about half
 * a vDSO clock_gettime() here, so it disturbs the measured hold less.
 * Converted to ns with a rate calibrated once against the monotonic clock,
 * after subtracting the fastest back-to-back pair of reads (the timer's own
 * share of every measured hold).
 */
static double ns_per_tick = 1.0;
static uint64_t empty_ticks;	/* two back-to-back reads, at their fastest */
static pthread_once_t calib_once = PTHREAD_ONCE_INIT;

static void calibrate(void)
{
	uint64_t t0 = lbi_now_ns(), c0 = __rdtsc(), t1, c1, d, best = UINT64_MAX;
	int i;

	do
		t1 = lbi_now_ns();
	while (t1 - t0 < 2000000);
	c1 = __rdtsc();
	if (c1 > c0)
		ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
	for (i = 0; i < 1000; i++) {
		c0 = __rdtsc();
		d = __rdtsc() - c0;
		if (d < best)
			best = d;
	}
	empty_ticks = best;
}

static uint64_t ticks(void)
{
	return __rdtsc();
}

/* A hold's length, without the cost of reading the clock itself. */
static uint64_t ticks_to_ns(uint64_t t)
{
	return t > empty_ticks ? (uint64_t)((double)(t - empty_ticks) *
					    ns_per_tick) : 0;
}

static void clock_init(void)
{
	pthread_once(&calib_once, calibrate);
}
#else
static uint64_t ticks(void)
{
	return lbi_now_ns();
}

static uint64_t ticks_to_ns(uint64_t t)
{
	return t;
}

static void clock_init(void)
{
}
#endif

#if defined(__x86_64__)
/* CPUID 0x80000001 ECX bit 8: PREFETCHW (AMD's 3DNowPrefetch, Intel's PRFCHW). */
bool lbi_lru_has_prefetchw(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 8));
}
#else
bool lbi_lru_has_prefetchw(void)
{
	return false;
}
#endif

/*
 * The block of the CPU the caller runs on, chosen before the lock is
 * taken. A stale choice only charges another CPU's block, under the lock.
 */
static struct lbi_lru_cpu *cpu_here(struct lb_lru *lru)
{
	int cpu = lb_cpu_current();

	return &lru->cpu[cpu < 0 ? 0 : (unsigned int)cpu % lru->nr_cpus];
}

/*
 * Take the LRU lock and charge the acquisition to @path. The lock says
 * whether this acquisition waited and for how long, so the charge needs no
 * look at the lock's totals: a hold writes the lock's line, the list's,
 * and its CPU's counters, which no other CPU writes.
 */
void lbi_lru_lock(struct lb_lru *lru, enum lb_lru_path path,
		  struct lbi_lru_hold *h)
{
	struct lbi_lru_cpu *c = cpu_here(lru);
	struct lbi_lru_path *ps = &c->path[path];
	uint64_t wait, yield;
	bool contended;

	/*
	 * Most holds write the lists' line (an add always), last written by
	 * the previous holder, most likely on another CPU: ask for it now, so
	 * that it travels while the lock word does instead of inside the hold.
	 */
	lbi_lru_prefetch_w(lru, &lru->lists);
	lbi_lock_acquire_wait(&lru->lock, &contended, &wait, &yield);
	ps->acquisitions++;
	if (contended) {
		ps->contentions++;
		ps->wait_ns_total += wait;
		if (wait > ps->wait_ns_max)
			ps->wait_ns_max = wait;
		if (wait >= LB_LRU_HOLD_LONG_NS) {
			ps->waits_long++;
			ps->wait_ns_long += wait;
		}
		ps->wait_ns_yield += yield;
	}
	h->c = c;
	h->ps = ps;
	h->start = (lru->flags & LB_LRU_HOLD_TIME) ? ticks() : 0;
}

/*
 * The hold is timed from the end of lbi_lru_lock()'s bookkeeping to the
 * start of this one's: the path's own work under the lock, not the cost of
 * counting it.
 */
void lbi_lru_unlock(struct lb_lru *lru, struct lbi_lru_hold *h, uint64_t objs)
{
	struct lbi_lru_path *ps = h->ps;

	if (lru->flags & LB_LRU_HOLD_TIME) {
		uint64_t hold = ticks_to_ns(ticks() - h->start);

		ps->hold_ns_total += hold;
		if (hold > ps->hold_ns_max)
			ps->hold_ns_max = hold;
		if (hold >= LB_LRU_HOLD_LONG_NS) {
			ps->holds_long++;
			ps->hold_ns_long += hold;
		}
	}
	ps->objs += objs;
	lb_lock_release(&lru->lock);
}

/*
 * An object counts as on the LRU from the hold that links it: lb_lru_del()
 * may be handed one whose batch is being committed, and must skip it
 * until then. So the flag is set under the lock, by a store to each node
 * whose line the prepare phase just wrote (the links), not by walking the
 * chain, unless some objects were refused and the array holds them too.
 */
static void mark_listed(struct lb_lru *lru, void *const *objs, unsigned int n,
			struct cds_list_head *first, struct cds_list_head *last,
			unsigned int bad)
{
	struct cds_list_head *pos;
	unsigned int i;

	if (lbi_likely(!bad)) {
		for (i = 0; i < n; i++)
			lbi_lru_node(lru, objs[i])->flags = LB_LRU_NODE_ON_LRU;
		return;
	}
	for (pos = first;; pos = pos->next) {
		cds_list_entry(pos, struct lb_lru_node, link)->flags =
			LB_LRU_NODE_ON_LRU;
		if (pos == last)
			break;
	}
}

/*
 * The commit of a flushed batch. Prepare: link the objects into a private
 * chain with no lock held (each goes to the chain's head, so the last one
 * added ends nearest the list head, as lru_add() in a loop would leave
 * them), and point the chain's first node back at the list head, which
 * does not move. Then splice the chain under the lock: three pointer
 * writes, the flags, and the counters.
 */
static unsigned int commit_splice(struct lb_lru *lru, void *const *objs,
				  unsigned int n)
{
	struct lbi_lru_list *list = &lru->lists[LB_LRU_INACTIVE];
	struct cds_list_head chain, *head = &list->head;
	struct cds_list_head *first, *last;
	struct lbi_lru_hold h;
	uint64_t weight = 0;
	unsigned int i, nr = 0, bad = 0;

	CDS_INIT_LIST_HEAD(&chain);
	for (i = 0; i < n; i++) {
		struct lb_lru_node *node = lbi_lru_node(lru, objs[i]);

		if (lbi_unlikely(node->flags & LB_LRU_NODE_ON_LRU)) {
			bad++;
			continue;
		}
		cds_list_add(&node->link, &chain);
		weight += node->weight;
		nr++;
	}
	first = chain.next;
	last = chain.prev;
	if (nr)
		first->prev = head;
	lbi_lru_lock(lru, LB_LRU_PATH_ADD, &h);
	if (nr) {
		last->next = head->next;
		head->next->prev = last;
		head->next = first;
		mark_listed(lru, objs, n, first, last, bad);
	}
	h.c->nr[LB_LRU_INACTIVE] += nr;
	h.c->weight[LB_LRU_INACTIVE] += weight;
	if (lbi_unlikely(bad))
		lru->errors += bad;
	lbi_lru_unlock(lru, &h, nr);
	return nr;
}

/* 6.12's lru_add() loop: every insertion under the lock. */
static unsigned int commit_each(struct lb_lru *lru, void *const *objs,
				unsigned int n)
{
	struct lbi_lru_hold h;
	unsigned int i, nr = 0;

	lbi_lru_lock(lru, LB_LRU_PATH_ADD, &h);
	for (i = 0; i < n; i++) {
		struct lb_lru_node *node = lbi_lru_node(lru, objs[i]);

		if (lbi_unlikely(node->flags & LB_LRU_NODE_ON_LRU)) {
			lru->errors++;
			continue;
		}
		node->flags = 0;
		lbi_lru_link(lru, &h, node);
		nr++;
	}
	lbi_lru_unlock(lru, &h, nr);
	return nr;
}

static unsigned int commit(struct lb_lru *lru, void *const *objs,
			   unsigned int n)
{
	if (lru->flags & LB_LRU_NO_SPLICE)
		return commit_each(lru, objs, n);
	return commit_splice(lru, objs, n);
}

int lb_lru_commit(struct lb_lru *lru, void *const *objs, unsigned int n)
{
	if (!lru || (!objs && n))
		return -EINVAL;
	if (!n)
		return 0;
	return (int)commit(lru, objs, n);
}

/*
 * lb_cpubatch's hooks. The LRU lock is taken inside commit, around the splice
 * only, so lock and unlock have nothing to do; lb_cpubatch still calls them
 * once per run, which keeps its back-end lock count meaningful.
 */
static void op_nolock(void *be)
{
	(void)be;
}

static void op_commit(void *be, void **objs, unsigned int n)
{
	commit(be, objs, n);
}

int lb_lru_create(struct lb_lru **plru, const struct lb_lru_conf *conf)
{
	struct lb_lru *lru;
	int rc, i;

	if (!plru || !conf || (conf->flags & ~LB_LRU_CONF_FLAGS) ||
	    (conf->flags & LB_LRU_NO_PREFETCH &&
	     conf->flags & LB_LRU_PREFETCH_READ) ||
	    (unsigned int)conf->lock_kind >= LB_LOCK_NR_KINDS)
		return -EINVAL;
	lru = aligned_alloc(LBI_LRU_LINE, sizeof(*lru));
	if (!lru)
		return -ENOMEM;
	memset(lru, 0, sizeof(*lru));
	lru->nr_cpus = lb_cpu_count();
	lru->cpu = aligned_alloc(LBI_LRU_LINE,
				 lru->nr_cpus * sizeof(*lru->cpu));
	if (!lru->cpu) {
		free(lru);
		return -ENOMEM;
	}
	memset(lru->cpu, 0, lru->nr_cpus * sizeof(*lru->cpu));
	rc = lb_lock_init(&lru->lock, conf->lock_kind,
			  conf->name ? conf->name : "lru");
	if (rc) {
		free(lru->cpu);
		free(lru);
		return rc;
	}
	for (i = 0; i < LB_LRU_NR_LISTS; i++)
		CDS_INIT_LIST_HEAD(&lru->lists[i].head);
	lru->node_offset = conf->node_offset;
	lru->flags = conf->flags;
	lru->has_prefetchw = lbi_lru_has_prefetchw();
	if (conf->flags & LB_LRU_NO_PREFETCH)
		lru->prefetch = LBI_LRU_PREFETCH_NONE;
	else if (conf->flags & LB_LRU_PREFETCH_READ)
		lru->prefetch = LBI_LRU_PREFETCH_READ;
	else
		lru->prefetch = LBI_LRU_PREFETCH_WRITE;
	if (conf->ops)
		lru->ops = *conf->ops;
	lru->arg = conf->arg;
	lru->bops.lock = op_nolock;
	lru->bops.unlock = op_nolock;
	lru->bops.commit = op_commit;
	lru->bops.apply = lbi_lru_apply;	/* lru/op.c */
	/* Same signatures as lb_backend_ops: handed over as they are. */
	lru->bops.get = lru->ops.get;
	lru->bops.put = lru->ops.put;
	lru->bops.refcount = lru->ops.refcount;
	if (lru->flags & LB_LRU_HOLD_TIME)
		clock_init();
	*plru = lru;
	return 0;
}

int lb_lru_destroy(struct lb_lru *lru)
{
	if (!lru)
		return -EINVAL;
	if (!cds_list_empty(&lru->lists[LB_LRU_INACTIVE].head) ||
	    !cds_list_empty(&lru->lists[LB_LRU_ACTIVE].head))
		return -EBUSY;
	if (lb_lock_destroy(&lru->lock))
		return -EBUSY;
	free(lru->cpu);
	free(lru);
	return 0;
}

int lb_lru_cpubatch_conf(struct lb_lru *lru, struct lb_cpubatch_conf *conf)
{
	if (!lru || !conf)
		return -EINVAL;
	conf->ops = &lru->bops;
	conf->backend = lru;
	return 0;
}

int lb_lru_node_init(struct lb_lru_node *n, uint32_t weight)
{
	if (!n || weight == 0 || weight > LB_WBATCH_WEIGHT_MAX)
		return -EINVAL;
	memset(n, 0, sizeof(*n));
	CDS_INIT_LIST_HEAD(&n->link);
	n->weight = weight;
	return 0;
}

int lb_lru_add(struct lb_cpubatch *pc, struct lb_lru *lru, void *obj)
{
	struct lb_lru_node *n;

	/*
	 * A batch set made for another LRU would commit the object there,
	 * through that LRU's node offset.
	 */
	if (!pc || !lru || !obj || pc->backend != lru)
		return -EINVAL;
	n = lbi_lru_node(lru, obj);
	return lb_cpubatch_add(pc, obj, &n->batch, n->weight);
}

int lb_lru_node_set_active(struct lb_lru_node *n, bool active)
{
	uint32_t fl;

	if (!n || ((fl = n->flags) & LB_LRU_NODE_ON_LRU))
		return -EINVAL;
	/* One store: a flush's lbi_lru_apply() may read it (lru/op.c). */
	ck_pr_store_32(&n->flags, active ? fl | LB_LRU_NODE_ACTIVE :
					   fl & ~LB_LRU_NODE_ACTIVE);
	return 0;
}

#define LBI_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Add one CPU's counters of a path to @o: sums, and maxima for the max. */
static void path_add(const struct lbi_lru_path *p, struct lb_lru_path_stats *o)
{
	o->acquisitions += p->acquisitions;
	o->contentions += p->contentions;
	o->wait_ns_total += p->wait_ns_total;
	o->wait_ns_max = LBI_MAX(o->wait_ns_max, p->wait_ns_max);
	o->waits_long += p->waits_long;
	o->wait_ns_long += p->wait_ns_long;
	o->hold_ns_total += p->hold_ns_total;
	o->hold_ns_max = LBI_MAX(o->hold_ns_max, p->hold_ns_max);
	o->holds_long += p->holds_long;
	o->hold_ns_long += p->hold_ns_long;
	o->objs += p->objs;
	o->wait_ns_yield += p->wait_ns_yield;
}

int lb_lru_stats(struct lb_lru *lru, struct lb_lru_stats *out)
{
	unsigned int c;
	int i;

	if (!lru || !out)
		return -EINVAL;
	/* Not through lbi_lru_lock(): a snapshot is no path's acquisition. */
	lb_lock_acquire(&lru->lock);
	for (i = 0; i < LB_LRU_NR_LISTS; i++) {
		out->nr[i] = lbi_lru_size(lru, i, false);
		out->weight[i] = lbi_lru_size(lru, i, true);
	}
	memset(out->path, 0, sizeof(out->path));
	for (c = 0; c < lru->nr_cpus; c++)
		for (i = 0; i < LB_LRU_NR_PATHS; i++)
			path_add(&lru->cpu[c].path[i], &out->path[i]);
	out->scanned = lru->scanned;
	out->rotated = lru->rotated;
	out->activated = lru->activated;
	out->released = lru->released;
	out->snapshots = lru->snapshots++;
	out->errors = lru->errors;
	lb_lock_release(&lru->lock);
	return 0;
}

struct lb_lock *lb_lru_lock(struct lb_lru *lru)
{
	return lru ? &lru->lock : NULL;
}

struct lb_lru_node *lb_lru_node_of(const struct lb_lru *lru, void *obj)
{
	return lru && obj ? lbi_lru_node(lru, obj) : NULL;
}

void *lb_lru_obj_of(const struct lb_lru *lru, struct lb_lru_node *n)
{
	return lru && n ? lbi_lru_obj(lru, n) : NULL;
}

const char *lb_lru_path_name(enum lb_lru_path path)
{
	static const char *const names[LB_LRU_NR_PATHS] = {
		[LB_LRU_PATH_ADD] = "add",
		[LB_LRU_PATH_ISOLATE] = "isolate",
		[LB_LRU_PATH_PUTBACK] = "putback",
		[LB_LRU_PATH_DEL] = "del",
		[LB_LRU_PATH_OP] = "op",
	};

	if ((unsigned int)path >= LB_LRU_NR_PATHS)
		return "invalid";
	return names[path];
}
