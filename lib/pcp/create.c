// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp: configuration checks, creation and destruction, and the two
 * small queries of a live cache. The top of the module: it calls the
 * owner paths (owner.c), drain and decay (drain.c) and every file below.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/pcp.h>
#include "core/core.h"
#include "pcp/mag.h"
#include "tune/tune.h"

/*
 * lb_lock owns the list of lock kinds: ask it rather than copy the list,
 * and only for the kind. A kind whose trial lock cannot be had (a CLH
 * lock without memory) is a valid kind: the lb_lock_init() of create
 * reports that failure as it is, not as -EINVAL.
 */
static int check_lock_kind(enum lb_lock_kind kind)
{
	struct lb_lock l;
	int err = lb_lock_init(&l, kind, NULL);

	if (!err)
		lb_lock_destroy(&l);
	return err == -EINVAL ? err : 0;
}

/* The fields in declaration order; &struct lb_pcp_conf documents each. */
static int check_conf(const struct lb_pcp_conf *c)
{
	if (c->max_order > LB_PCP_MAX_ORDER)
		return -EINVAL;
	if (c->batch < 1 || c->batch > LB_PCP_BATCH_MAX)
		return -EINVAL;
	if (c->high_min < 0 || c->high_min > c->high_max ||
	    c->high_max > LB_PCP_HIGH_MAX)
		return -EINVAL;
	if ((unsigned int)c->tuner >= LB_PCP_TUNE_NR ||
	    (c->flags & ~(LB_PCP_F_DEBUG | LB_PCP_F_FREE_HIGH_BATCH |
			  LB_PCP_F_LOCK_PATH)))
		return -EINVAL;
	if (!c->lock && check_lock_kind(c->lock_kind))
		return -EINVAL;
	if (!c->backend.alloc_bulk || !c->backend.free_bulk)
		return -EINVAL;
	if (c->expire > LB_PCP_EXPIRE_MAX)
		return -EINVAL;
	return 0;
}

static void free_slots(struct lb_pcp *p)
{
	unsigned int i;

	for (i = 0; i < p->slots.nr; i++)
		free(lbi_pcp_slot_at(p, i)->buf);
	lbi_slots_fini(&p->slots);
}

static int init_slots(struct lb_pcp *p, const struct lb_pcp_conf *c)
{
	unsigned int i, o;
	int err;

	err = lbi_slots_init(&p->slots, c->nr_slots, sizeof(struct lbi_pcp_slot),
			     c->cpu_fn, c->cpu_arg);
	if (err)
		return err;
	for (i = 0; i < p->slots.nr; i++) {
		struct lbi_pcp_slot *sl = lbi_pcp_slot_at(p, i);

		lb_pcp_tune_init(&sl->ts, c->batch, c->high_min, c->high_max,
				 c->flags & LB_PCP_F_FREE_HIGH_BATCH);
		for (o = 0; o <= LB_PCP_MAX_ORDER; o++)
			CDS_INIT_LIST_HEAD(&sl->lists[o]);
		sl->buf = malloc((size_t)p->chunk * sizeof(void *));
		if (!sl->buf) {
			free_slots(p);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * Zero batch: size the cache as lb_pcp_size() sizes one for a pool of
 * %LB_PCP_DEFAULT_POOL_UNITS on the slot count; zero high_min and high_max
 * with it take the sizing too. A batch set by the caller keeps every
 * field as given (there high 0 means "cache nothing").
 */
static void apply_defaults(struct lb_pcp_conf *c)
{
	unsigned int n = c->nr_slots ? c->nr_slots : lb_cpu_count();
	struct lb_pcp_size sz;

	if (c->batch)
		return;
	if (n > LB_PCP_MAX_SLOTS)
		n = LB_PCP_MAX_SLOTS;
	if (lb_pcp_size(LB_PCP_DEFAULT_POOL_UNITS, 0, n ? n : 1, 256, &sz))
		return;
	c->batch = sz.batch;
	if (!c->high_min && !c->high_max) {
		c->high_min = sz.high_min;
		c->high_max = sz.high_max;
	}
}

int lb_pcp_create(struct lb_pcp **pp, const struct lb_pcp_conf *conf)
{
	struct lb_pcp_conf cc, *c = &cc;
	struct lb_pcp *p;
	int err;

	if (!pp || !conf)
		return -EINVAL;
	cc = *conf;
	apply_defaults(c);
	err = check_conf(c);
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->max_order = c->max_order;
	p->tuner = c->tuner;
	p->flags = c->flags;
	p->chunk = c->batch << LB_PCP_BATCH_SCALE_MAX;
	p->be = c->backend;
	p->clock_fn = c->clock_fn;
	p->clock_arg = c->clock_arg;
	p->interval_ns = c->decay_interval_ns ? c->decay_interval_ns :
						LB_PCP_DECAY_INTERVAL_NS;
	p->expire = c->expire ? c->expire : LB_PCP_EXPIRE_DEFAULT;
	/* The caller's lock, or one of our own. */
	p->bl = c->lock ? c->lock : &p->lock;
	err = c->lock ? 0 : lb_lock_init(&p->lock, c->lock_kind, "pcp-backend");
	if (err)
		goto out_free;
	err = init_slots(p, c);
	if (err)
		goto out_lock;
	if (c->flags & LB_PCP_F_DEBUG) {
		err = lbi_pcp_dbg_create(&p->dbg);
		if (err)
			goto out_slots;
	}
	lbi_pcp_mag_setup(p, c->batch, c->flags & LB_PCP_F_LOCK_PATH);
	lbi_pcp_set_path_ops(p);
	pthread_mutex_init(&p->tick_mutex, NULL);
	pthread_mutex_init(&p->thr_mutex, NULL);
	pthread_cond_init(&p->thr_cond, NULL);
	p->last_tick_ns = lbi_pcp_now(p);
	lbi_pcp_fork_add(p);
	*pp = p;
	return 0;

out_slots:
	free_slots(p);
out_lock:
	if (p->bl == &p->lock)
		lb_lock_destroy(&p->lock);
out_free:
	free(p);
	return err;
}

int lb_pcp_destroy(struct lb_pcp *p)
{
	int err;

	if (!p)
		return -EINVAL;
	if (lb_pcp_decay_thread_stop(p) == -EDEADLK)
		return -EDEADLK;
	/* A slot in use means a concurrent user: refuse, change nothing. */
	err = lbi_slots_lock_idle(&p->slots, NULL);
	if (err)
		return err;
	lbi_slots_unlock_all(&p->slots);
	lb_pcp_drain_all(p);
	lbi_pcp_fork_del(p);
	pthread_cond_destroy(&p->thr_cond);
	pthread_mutex_destroy(&p->thr_mutex);
	pthread_mutex_destroy(&p->tick_mutex);
	if (p->dbg)
		lbi_pcp_dbg_destroy(p->dbg);
	free_slots(p);
	if (p->bl == &p->lock)		/* the caller's lock stays theirs */
		lb_lock_destroy(&p->lock);
	free(p);
	return 0;
}

int lb_pcp_slot_state(struct lb_pcp *p, unsigned int slot,
		      struct lb_pcp_tune_state *out)
{
	struct lbi_pcp_slot *sl;

	if (!p || !out || slot >= p->slots.nr)
		return -EINVAL;
	sl = lbi_pcp_slot_at(p, slot);
	lbi_pcp_lock(p, sl);
	*out = sl->ts;
	lbi_pcp_unlock(p, sl);
	return 0;
}

struct lb_lock *lb_pcp_backend_lock(struct lb_pcp *p)
{
	return p ? p->bl : NULL;
}
