// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Free points and "safe" returns under threads. Two threads, each on its
 * own slot, run a small LRU cache on operation batches: set (add), hit
 * (move to the other list), delete (a batched %LB_OP_DEL, the object freed
 * by whichever thread's flush applies it), evict (unqueue, then unlink and
 * free by the caller), and the checks a cache makes before it touches an
 * object itself (drain_obj, settle_fn). Each thread also drains everything
 * now and then, so one thread's objects are flushed by the other.
 *
 * Freeing is poisoning: a freed object is filled with POISON and pushed on
 * a shared free stack, and an allocation pops it and checks every byte
 * before it reuses the memory. A store the library makes after the free
 * point (the last callback of the object's last step, or @put in the
 * counted mode) shows as a poison byte overwritten. After every return
 * the headers call safe (unqueue 0 or 1, drain_obj, settle_fn SETTLED or
 * DRAINED), the owner reads, with plain loads, the fields the callbacks
 * wrote: under ThreadSanitizer a return without acquire ordering against
 * the flush that wrote them is a reported race; in every build, what it
 * reads must be the state the operations left.
 *
 * Both reference modes run: caller-protected (the caller's ownership
 * orders everything) and counted (@get/@put, freed by the last @put).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu/list.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/lock.h>
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#ifndef THREADS
#define THREADS 2
#endif
#define LIVE 8		/* objects each thread keeps */
#define POISON 0xa5

struct sobj {
	struct lb_node node;
	struct cds_list_head link;
	unsigned int list;	/* plain: the list it is on or enters */
	unsigned int steps;	/* plain: callbacks' count of what they did */
	bool linked;		/* plain, under the list's lock */
	bool dying;		/* atomic: a deletion is queued */
	int refs;		/* atomic: counted mode only */
	unsigned char pad[8];
};

struct slist {
	struct lb_lock lock;
	struct cds_list_head head;
};

static struct slist lists[2];
static struct lb_cpubatch *pc;
static bool counted;
static __thread int my_cpu;

/* The free stack: poisoned objects, shared by both threads. */
static struct lb_lock pool_lock;
static struct sobj *pool[THREADS * LIVE * 4];
static unsigned int pool_nr;
static unsigned long reuses, overwritten, wrong, errors;	/* atomic */
static unsigned long allocs, frees;	/* atomic */

static void count(unsigned long *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static int thread_cpu(void *arg)
{
	(void)arg;
	return my_cpu;
}

static void obj_free(struct sobj *o)
{
	count(&frees);
	memset(o, POISON, sizeof(*o));
	lb_lock_acquire(&pool_lock);
	if (pool_nr < sizeof(pool) / sizeof(pool[0])) {
		pool[pool_nr++] = o;
		o = NULL;
	}
	lb_lock_release(&pool_lock);
	free(o);
}

/* A new object: reused memory whose poison is checked, or fresh. */
static struct sobj *obj_alloc(void)
{
	struct lb_node z = LB_NODE_INIT;
	struct sobj *o = NULL;
	unsigned char *p;
	size_t i;

	lb_lock_acquire(&pool_lock);
	if (pool_nr)
		o = pool[--pool_nr];
	lb_lock_release(&pool_lock);
	if (o) {
		p = (unsigned char *)o;
		for (i = 0; i < sizeof(*o); i++)
			if (p[i] != POISON) {
				count(&overwritten);
				break;
			}
		count(&reuses);
	} else {
		o = malloc(sizeof(*o));
		if (!o)
			return NULL;
	}
	count(&allocs);
	memset(o, 0, sizeof(*o));
	o->node = z;
	CDS_INIT_LIST_HEAD(&o->link);
	o->refs = 1;
	return o;
}

static void *backend_of(void *obj)
{
	return &lists[((struct sobj *)obj)->list];
}

static void *target_of(void *obj)
{
	return &lists[!((struct sobj *)obj)->list];
}

static void be_lock(void *be)
{
	lb_lock_acquire(&((struct slist *)be)->lock);
}

static void be_unlock(void *be)
{
	lb_lock_release(&((struct slist *)be)->lock);
}

static void commit(void *be, void **objs, unsigned int n)
{
	struct slist *l = be;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct sobj *o = objs[i];

		cds_list_add(&o->link, &l->head);
		o->linked = true;
		o->steps++;
	}
}

static void put(void *obj)
{
	struct sobj *o = obj;

	if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0)
		obj_free(o);
}

static void get(void *obj)
{
	__atomic_add_fetch(&((struct sobj *)obj)->refs, 1, __ATOMIC_RELAXED);
}

static void apply(void *be, enum lb_op_step step, void **objs, unsigned int n)
{
	struct slist *l = be;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct sobj *o = objs[i];

		switch (step) {
		case LB_STEP_UNLINK:
			cds_list_del(&o->link);
			o->linked = false;
			o->steps++;
			/* A deletion's free point (caller-protected). */
			if (!counted && __atomic_load_n(&o->dying,
							__ATOMIC_RELAXED))
				obj_free(o);
			break;
		case LB_STEP_LINK:
			o->list = (unsigned int)(l - lists);
			cds_list_add(&o->link, &l->head);
			o->linked = true;
			o->steps++;
			break;
		default:
			o->steps++;
			break;
		}
	}
}

static long count_one(void *obj, void *arg)
{
	(void)obj;
	(void)arg;
	return 1;
}

/*
 * One object a thread keeps: @o, and what the owner expects the
 * callbacks to have done once no batch holds it.
 */
struct slot {
	struct sobj *o;
	unsigned int list;	/* where it ends up */
	unsigned int steps;	/* how many steps its operations make */
};

/* After a safe return: plain reads of what the callbacks wrote. */
static void check_settled(const struct slot *s)
{
	struct slist *l = &lists[s->list];
	bool linked;

	if (s->o->steps != s->steps || s->o->list != s->list)
		count(&wrong);
	lb_lock_acquire(&l->lock);
	linked = s->o->linked;
	lb_lock_release(&l->lock);
	if (!linked)
		count(&wrong);
}

static void release_obj(struct sobj *o)
{
	if (counted)
		put(o);
	else
		obj_free(o);
}

/*
 * Evict: make sure no batch holds the object, then unlink and free it by
 * hand. Caller-protected: unqueue, as lru_pull_tail() does (never waits;
 * -EBUSY: try later). Counted: drain_obj, since there unqueue does not
 * report an add being committed (its reference shows in the count).
 */
static bool evict(struct slot *s)
{
	struct slist *l;
	enum lb_op op = LB_OP_ADD;
	int rc;

	if (counted)
		rc = lb_cpubatch_drain_obj(pc, &s->o->node) < 0 ? -EIO : 0;
	else
		rc = lb_cpubatch_unqueue(pc, &s->o->node, 1, &op);
	if (rc == -EBUSY)
		return false;
	if (rc < 0) {
		count(&errors);
		return false;
	}
	if (rc == 1) {
		/* The entry will not be applied: neither will its steps. */
		if (op == LB_OP_MOVE) {
			s->steps -= 2;
			s->list = !s->list;
		} else {
			s->steps--;
		}
		if (op == LB_OP_ADD) {
			/* Never linked. */
			if (s->o->steps != s->steps)
				count(&wrong);
			release_obj(s->o);
			return true;
		}
	}
	check_settled(s);
	l = &lists[s->list];
	lb_lock_acquire(&l->lock);
	cds_list_del(&s->o->link);
	s->o->linked = false;
	lb_lock_release(&l->lock);
	release_obj(s->o);
	return true;
}

/*
 * Delete through the batch: the flush frees it in its unlink (or its
 * last @put frees it). The object is drained first, so that the unlink of
 * a bump still in flight is never taken for the deletion's.
 */
static bool del(struct slot *s)
{
	int rc;

	if (lb_cpubatch_drain_obj(pc, &s->o->node) < 0) {
		count(&errors);
		return false;
	}
	check_settled(s);
	__atomic_store_n(&s->o->dying, true, __ATOMIC_RELAXED);
	rc = lb_cpubatch_queue(pc, s->o, &s->o->node, LB_OP_DEL, 1);
	/* FLUSHED: applied already, and so perhaps freed: hands off. */
	if (rc == LB_OP_QUEUED || rc == LB_OP_FLUSHED) {
		if (counted)
			put(s->o);	/* the owner's reference */
		return true;
	}
	count(&errors);
	__atomic_store_n(&s->o->dying, false, __ATOMIC_RELAXED);
	return false;
}

static void *worker(void *arg)
{
	struct slot live[LIVE] = { { NULL, 0, 0 } };
	unsigned long i, iters = (unsigned long)(uintptr_t)arg >> 8;
	struct lb_rng r;
	unsigned int k;
	int rc;

	my_cpu = (int)((uintptr_t)arg & 0xff);
	lb_rng_seed(&r, lb_test_seed(0xf4ee) + (unsigned int)my_cpu);
	for (i = 0; i < iters; i++) {
		struct slot *s = &live[lb_rng_below(&r, LIVE)];

		if (!s->o) {
			s->o = obj_alloc();
			if (!s->o) {
				count(&errors);
				break;
			}
			s->list = lb_rng_below(&r, 2);
			s->o->list = s->list;
			s->steps = 1;
			rc = lb_cpubatch_add(pc, s->o, &s->o->node, 1);
			if (rc < 0) {
				count(&errors);
				release_obj(s->o);
				s->o = NULL;
			}
			continue;
		}
		switch (lb_rng_below(&r, 16)) {
		case 0: case 1: case 2: case 3:	/* hit: bump */
			rc = lb_cpubatch_queue(pc, s->o, &s->o->node,
					       LB_OP_MOVE, 1);
			if (rc == LB_OP_QUEUED || rc == LB_OP_FLUSHED) {
				s->steps += 2;
				s->list = !s->list;
			} else if (rc != -EEXIST && rc != -EAGAIN) {
				count(&errors);
			}
			break;
		case 4: case 5:
			if (del(s))
				s->o = NULL;
			break;
		case 6: case 7:
			if (evict(s))
				s->o = NULL;
			break;
		case 8:
			rc = lb_cpubatch_drain_obj(pc, &s->o->node);
			if (rc < 0)
				count(&errors);
			else
				check_settled(s);
			break;
		case 9:
			rc = lb_cpubatch_settle_fn(pc, s->o, &s->o->node,
						   counted ? 2 : 1, count_one,
						   NULL);
			if (counted)
				break;	/* count_one is no counted count */
			if (rc == LB_SETTLED || rc == LB_DRAINED)
				check_settled(s);
			else
				count(&errors);
			break;
		case 10:
			if (lb_cpubatch_drain_all(pc) < 0)
				count(&errors);
			break;
		default:
			break;
		}
	}
	/* Everything this thread holds goes. */
	for (k = 0; k < LIVE; k++) {
		while (live[k].o && !evict(&live[k]))
			if (lb_cpubatch_drain_all(pc) < 0)
				count(&errors);
		live[k].o = NULL;
	}
	return NULL;
}

static void run(bool mode_counted, unsigned long iters)
{
	struct lb_backend_ops ops;
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&ops, NULL);
	pthread_t t[THREADS];
	unsigned long before = reuses;
	struct cds_list_head *pos;
	unsigned int i, linked = 0;
	int left;

	memset(&ops, 0, sizeof(ops));
	ops.backend_of = backend_of;
	ops.target_of = target_of;
	ops.lock = be_lock;
	ops.unlock = be_unlock;
	ops.commit = commit;
	ops.apply = apply;
	counted = mode_counted;
	if (counted) {
		ops.get = get;
		ops.put = put;
	} else {
		conf.flags = LB_CPUBATCH_F_CALLER_REFS;
	}
	conf.nr_slots = THREADS;
	conf.max_nr = 4;
	conf.cpu_fn = thread_cpu;
	errors = wrong = overwritten = allocs = frees = 0;
	if (lb_cpubatch_create(&pc, &conf)) {
		lb_tap_ok(0, "create");
		return;
	}
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker,
			       (void *)(uintptr_t)((iters << 8) | i));
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	lb_tap_ok(overwritten == 0,
		  "%s: no freed object written after its free point (%lu "
		  "reuses, %lu overwritten)",
		  counted ? "counted" : "caller-protected", reuses - before,
		  overwritten);
	lb_tap_ok(wrong == 0 && errors == 0,
		  "%s: every safe return shows what the callbacks did (%lu "
		  "wrong, %lu errors)", counted ? "counted" : "caller-protected",
		  wrong, errors);
	/* What waits now is deletions: applied, they free the last objects. */
	if (lb_cpubatch_drain_all(pc) < 0)
		count(&errors);
	left = lb_cpubatch_drain_all(pc);
	for (i = 0; i < 2; i++)
		cds_list_for_each(pos, &lists[i].head)
			linked++;
	lb_tap_ok(left == 0 && linked == 0 && allocs == frees &&
		  lb_cpubatch_destroy(pc) == 0,
		  "%s: every object freed once (%lu allocated, %lu freed), none "
		  "left on the lists (%u) or in a batch (%d)",
		  counted ? "counted" : "caller-protected", allocs, frees,
		  linked, left);
	/* The next run starts from fresh memory. */
	while (pool_nr)
		free(pool[--pool_nr]);
}

int main(void)
{
	unsigned long iters = lb_stress_iters(200000, 3000000);
	unsigned int i;

	lb_tap_plan(6);
	lb_tap_diag(LB_SEED_FMT ", %lu operations per thread",
		    LB_SEED_ARGS(lb_test_seed(0xf4ee)), iters);
	lb_lock_init(&pool_lock, LB_LOCK_SPIN, "pool");
	for (i = 0; i < 2; i++) {
		lb_lock_init(&lists[i].lock, LB_LOCK_SPIN, "list");
		CDS_INIT_LIST_HEAD(&lists[i].head);
	}
	run(false, iters);
	run(true, iters);
	return lb_tap_done();
}
