// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pagecache's LRU order error: how far each inserted entry lands in the
 * LRU from its exact position. The exact order is the order of the stamps
 * taken just before lb_lru_add(); the landing order is the order the
 * batch's commit links entries, counted by a wrapper
 * around lb_lru's commit. error = commit position - stamp: positive is
 * late (entries inserted after it were linked first), negative early.
 * The bounds are in <lockbatch/cpubatch_wait.h>.
 *
 * One cache per process (the program and the stress test make one), so
 * the wrapper's state is static.
 */
#include <pthread.h>
#include <stdint.h>

#include "pagecache.h"

static void (*lru_commit)(void *backend, void **objs, unsigned int n);
static struct lb_backend_ops order_ops;
static uint64_t next_stamp;		/* atomic */
/*
 * lb_lru's commit takes the LRU lock itself, only around its O(1) splice
 * (the chain is prepared unlocked), so two flushes' wrappers run at once:
 * order_lock, a lock of the measurement only, keeps the numbering exact.
 */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_pos;		/* under order_lock, as below */
static struct pc_order_stats order;

static unsigned int log2_bucket(uint64_t v)
{
	unsigned int b = 0;

	while (v && b < PC_ORDER_BUCKETS - 1) {
		v >>= 1;
		b++;
	}
	return b;
}

/* Link the run, then number it as linked (order_lock). */
static void order_commit(void *backend, void **objs, unsigned int n)
{
	unsigned int i;

	lru_commit(backend, objs, n);
	pthread_mutex_lock(&order_lock);
	for (i = 0; i < n; i++) {
		const struct pc_entry *e = objs[i];
		int64_t err = (int64_t)(next_pos++ - e->order_stamp);
		uint64_t mag = err < 0 ? (uint64_t)-err : (uint64_t)err;

		if (err < 0 && mag > order.worst_early)
			order.worst_early = mag;
		if (err > 0 && mag > order.worst_late)
			order.worst_late = mag;
		order.sum_abs += mag;
		order.hist[log2_bucket(mag)]++;
		order.entries++;
	}
	pthread_mutex_unlock(&order_lock);
}

void pc_order_wrap(struct lb_cpubatch_conf *pconf)
{
	order_ops = *pconf->ops;
	lru_commit = order_ops.commit;
	order_ops.commit = order_commit;
	pconf->ops = &order_ops;
}

void pc_order_stamp(struct pc_entry *e)
{
	e->order_stamp = __atomic_fetch_add(&next_stamp, 1, __ATOMIC_RELAXED);
}

/* The smallest 2^k - 1 that at least @frac of the entries are within. */
static uint64_t quantile(const struct pc_order_stats *s, double frac)
{
	uint64_t want = (uint64_t)(frac * (double)s->entries), seen = 0;
	unsigned int b;

	for (b = 0; b < PC_ORDER_BUCKETS; b++) {
		seen += s->hist[b];
		if (seen >= want)
			return b ? (1ull << b) - 1 : 0;
	}
	return UINT64_MAX;
}

void pc_order_stats(struct lb_lru *lru, struct pc_order_stats *out)
{
	(void)lru;
	pthread_mutex_lock(&order_lock);
	*out = order;
	pthread_mutex_unlock(&order_lock);
	out->p50_within = quantile(out, 0.5);
	out->p99_within = quantile(out, 0.99);
}
