// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp: drains, the periodic decay (decay_pcp_high() from
 * refresh_cpu_vm_stats()), the decay thread and statistics.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <lockbatch/pcp.h>
#include "core/core.h"
#include "pcp/mag.h"
#include "tune/tune.h"

uint64_t lbi_pcp_now(struct lb_pcp *p)
{
	return p->clock_fn ? p->clock_fn(p->clock_arg) : lbi_now_ns();
}

long lb_pcp_drain(struct lb_pcp *p, int cpu)
{
	if (!p || cpu < 0)
		return -EINVAL;
	return lbi_pcp_drain_slot(p, lbi_pcp_slot_at(p, (unsigned int)cpu % p->slots.nr));
}

long lb_pcp_drain_all(struct lb_pcp *p)
{
	long total = 0;
	unsigned int i;

	if (!p)
		return -EINVAL;
	for (i = 0; i < p->slots.nr; i++)
		total += lbi_pcp_drain_slot(p, lbi_pcp_slot_at(p, i));
	return total;
}

/*
 * Slot expiry (refresh_cpu_vm_stats()'s pcp->expire): true once nobody
 * allocated from or freed into the slot for p->expire whole periods. The
 * allocs and frees counters tell, so the hot paths pay nothing for it.
 */
static bool slot_expired(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	uint64_t ops = sl->st.allocs + sl->st.frees;

	if (ops != sl->last_ops) {
		sl->last_ops = ops;
		sl->idle = 0;
		return false;
	}
	if (sl->idle < p->expire)
		sl->idle++;
	return sl->idle >= p->expire;
}

/*
 * decay_pcp_high() with the 2025 batching: decide under the slot lock,
 * then free to_drain in chunks of batch, taking the slot lock (and one
 * back-end hold) per chunk so the owner is never held off for long.
 * lb_pcp adds two bounds: high never stays above high_max (the kernel's
 * max3() can leave it at count - (batch << 5)), and an expired slot
 * drains to zero with high back at high_min (rule (B)): COUNT_MIN lowers
 * high by count_min, which is 0 on a slot holding nothing, so an idle
 * slot's high would otherwise stay where its last use left it.
 *
 * Returns whether another tick, with no call in between, may change the
 * slot: high above high_min, or objects cached (a slot in use now expires
 * if it goes idle). decay_pcp_high()'s todo (the tuner's) promises
 * neither: COUNT_MIN with count_min 0 and LINUX with high below 8 keep
 * high above high_min for ever, and a slot at or below high_min with
 * objects reports nothing though its expiry is still to come.
 */
static bool decay_slot(struct lb_pcp *p, struct lbi_pcp_slot *sl)
{
	int to_drain, batch;
	bool todo;

	lbi_pcp_lock_nonempty(p, sl);
	lbi_tune_decay(p->tuner, &sl->ts, &to_drain);
	if (sl->ts.high > sl->ts.high_max) {
		sl->ts.high = sl->ts.high_max;
		to_drain = sl->ts.count - sl->ts.high;
	}
	if (slot_expired(p, sl)) {
		sl->ts.high = sl->ts.high_min;
		if (sl->ts.count > 0) {
			to_drain = sl->ts.count;
			sl->st.expiries++;
		}
	}
	batch = sl->ts.batch;
	while (to_drain > 0) {
		int n = to_drain < batch ? to_drain : batch;

		lbi_pcp_release(p, sl, n, 0, n, LBI_PCP_DECAY);
		to_drain -= n;
		if (to_drain > 0) {
			lbi_pcp_unlock(p, sl);
			lbi_pcp_lock(p, sl);
		}
	}
	lbi_tune_tick_end(p->tuner, &sl->ts);
	todo = sl->ts.count > 0 || sl->ts.high > sl->ts.high_min;
	lbi_pcp_unlock(p, sl);
	return todo;
}

static int decay_locked(struct lb_pcp *p)
{
	unsigned int i;
	int todo = 0;

	for (i = 0; i < p->slots.nr; i++)
		if (decay_slot(p, lbi_pcp_slot_at(p, i)))
			todo = 1;
	/* Read without the tick mutex by lb_pcp_stats(), which a fork child may call. */
	ck_pr_store_64(&p->ticks, p->ticks + 1);
	return todo;
}

int lb_pcp_decay(struct lb_pcp *p)
{
	int todo;

	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&p->tick_mutex);
	todo = decay_locked(p);
	pthread_mutex_unlock(&p->tick_mutex);
	return todo;
}

int lb_pcp_tick(struct lb_pcp *p)
{
	uint64_t now;
	int ran = 0;

	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&p->tick_mutex);
	now = lbi_pcp_now(p);
	if (now - p->last_tick_ns >= p->interval_ns) {
		p->last_tick_ns = now;
		decay_locked(p);
		ran = 1;
	}
	pthread_mutex_unlock(&p->tick_mutex);
	return ran;
}

static void *decay_thread(void *arg)
{
	struct lb_pcp *p = arg;
	/* An injected clock moves on its own schedule: poll it often. */
	uint64_t step = p->clock_fn && p->interval_ns > 1000000 ? 1000000 :
								   p->interval_ns;

	pthread_mutex_lock(&p->thr_mutex);
	while (!p->thr_stop) {
		struct timespec ts;
		uint64_t ns;

		clock_gettime(CLOCK_REALTIME, &ts);
		ns = (uint64_t)ts.tv_nsec + step;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&p->thr_cond, &p->thr_mutex, &ts);
		if (p->thr_stop)
			break;
		pthread_mutex_unlock(&p->thr_mutex);
		lb_pcp_tick(p);
		pthread_mutex_lock(&p->thr_mutex);
	}
	pthread_mutex_unlock(&p->thr_mutex);
	return NULL;
}

int lb_pcp_decay_thread_start(struct lb_pcp *p)
{
	int err = 0;

	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&p->thr_mutex);
	if (p->thr_running) {
		err = -EEXIST;
	} else {
		p->thr_stop = false;
		err = -pthread_create(&p->thread, NULL, decay_thread, p);
		if (!err)
			p->thr_running = true;
	}
	pthread_mutex_unlock(&p->thr_mutex);
	return err;
}

int lb_pcp_decay_thread_stop(struct lb_pcp *p)
{
	pthread_t t;

	if (!p)
		return -EINVAL;
	pthread_mutex_lock(&p->thr_mutex);
	if (!p->thr_running || pthread_equal(p->thread, pthread_self())) {
		/* From a callback on the decay thread: it cannot join itself. */
		int err = p->thr_running ? -EDEADLK : -ENOENT;

		pthread_mutex_unlock(&p->thr_mutex);
		return err;
	}
	p->thr_stop = true;
	p->thr_running = false;
	t = p->thread;
	pthread_cond_signal(&p->thr_cond);
	pthread_mutex_unlock(&p->thr_mutex);
	pthread_join(t, NULL);
	return 0;
}

static void add_stats(struct lb_pcp_slot_stats *t,
		      const struct lb_pcp_slot_stats *s)
{
	t->allocs += s->allocs;
	t->frees += s->frees;
	t->refills += s->refills;
	t->refill_units += s->refill_units;
	t->flushes += s->flushes;
	t->flush_units += s->flush_units;
	t->decay_drains += s->decay_drains;
	t->decay_units += s->decay_units;
	t->drains += s->drains;
	t->drain_units += s->drain_units;
	t->steals += s->steals;
	t->steal_units += s->steal_units;
	t->retries += s->retries;
	t->expiries += s->expiries;
	t->double_frees += s->double_frees;
	if (s->max_hold_units > t->max_hold_units)
		t->max_hold_units = s->max_hold_units;
	t->count += s->count;
	t->high += s->high;
}

/* One slot, under its lock (lbi_slots_stats()). */
static void read_slot(void *slot, void *onep, void *outp)
{
	struct lb_pcp_stats *out = outp;
	struct lb_pcp_slot_stats *one = onep;
	struct lbi_pcp_slot *sl = slot;

	/* Stopped but not fenced: the sections' figures as last committed. */
	lbi_pcp_mag_account(sl);
	*one = sl->st;
	one->count = sl->ts.count;
	one->high = sl->ts.high;
	if (out)
		add_stats(&out->total, one);
}

int lb_pcp_stats(struct lb_pcp *p, struct lb_pcp_stats *out,
		 struct lb_pcp_slot_stats *slots, unsigned int nr)
{
	struct lb_pcp_slot_stats scratch;
	struct lb_lock_stats ls;

	if (!p || (!slots && nr))
		return -EINVAL;
	if (out)
		memset(out, 0, sizeof(*out));
	lbi_slots_stats(&p->slots, read_slot, out, slots, nr, sizeof(*slots),
			&scratch);
	if (out) {
		/*
		 * No tick mutex: it may be copied held into a fork child
		 * (see DOC: Per-CPU object cache), and stats must work there.
		 */
		out->ticks = ck_pr_load_64(&p->ticks);
		lb_lock_stats(p->bl, &ls);
		out->backend_locks = ls.acquisitions;
		out->nr_slots = p->slots.nr;
		out->rseq = p->slots.rseq;
		lbi_pcp_fence_stats(p, out);
	}
	return (int)p->slots.nr;
}
