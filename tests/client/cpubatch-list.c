// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A client of the installed library (tests/staged-install.sh): per-CPU
 * size-weighted batches in front of the client's own mutex-protected
 * list, with its own back-end ops. Four threads add objects of 1..8
 * units; every third object is freed at once, after lb_cpubatch_settle()
 * or lb_cpubatch_drain_obj() made sure no batch holds it. Written from
 * the README and the header comments only. Exit 0 when every object
 * allocated was committed once and freed once.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lockbatch/lockbatch.h>

#define NTHREADS 4
#define PER_THREAD 5000

struct obj {
	struct obj *prev, *next;	/* on the client's list once committed */
	struct lb_node node;
	atomic_long ref;
	int on_list;
};

struct objlist {
	pthread_mutex_t mu;
	struct obj head;
	long nr, commits;
};

static struct objlist list;
static struct lb_cpubatch *pc;
static atomic_long allocated, freed, bad;

static void be_lock(void *b)
{
	pthread_mutex_lock(&((struct objlist *)b)->mu);
}

static void be_unlock(void *b)
{
	pthread_mutex_unlock(&((struct objlist *)b)->mu);
}

static void be_commit(void *b, void **objs, unsigned int n)
{
	struct objlist *l = b;

	for (unsigned int i = 0; i < n; i++) {
		struct obj *o = objs[i];

		if (o->on_list)
			atomic_fetch_add(&bad, 1);	/* committed twice */
		o->next = &l->head;
		o->prev = l->head.prev;
		l->head.prev->next = o;
		l->head.prev = o;
		o->on_list = 1;
		l->nr++;
		l->commits++;
	}
}

static void obj_get(void *o) { atomic_fetch_add(&((struct obj *)o)->ref, 1); }
static void obj_put(void *o) { atomic_fetch_sub(&((struct obj *)o)->ref, 1); }
static long obj_ref(void *o) { return atomic_load(&((struct obj *)o)->ref); }

static const struct lb_backend_ops ops = {
	.lock = be_lock, .unlock = be_unlock, .commit = be_commit,
	.get = obj_get, .put = obj_put, .refcount = obj_ref,
};

/* Unlink and free an object no batch holds any more; drop our reference. */
static void obj_free(struct obj *o)
{
	pthread_mutex_lock(&list.mu);
	if (!o->on_list)
		atomic_fetch_add(&bad, 1);	/* still in a batch: would be lost */
	o->prev->next = o->next;
	o->next->prev = o->prev;
	list.nr--;
	pthread_mutex_unlock(&list.mu);
	if (atomic_fetch_sub(&o->ref, 1) != 1)
		atomic_fetch_add(&bad, 1);	/* a batch reference outlived it */
	free(o);
	atomic_fetch_add(&freed, 1);
}

/* Make @o's count exact: settle (our one reference) or a targeted drain. */
static int obj_release(struct obj *o, int use_settle)
{
	int r;

	if (!use_settle)
		return lb_cpubatch_drain_obj(pc, &o->node) < 0 ? -1 : 0;
	r = lb_cpubatch_settle(pc, o, &o->node, 1);
	return r == LB_SETTLED || r == LB_DRAINED ? 0 : -1;
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	for (int i = 0; i < PER_THREAD; i++) {
		struct obj *o = calloc(1, sizeof(*o));

		if (!o)
			return (void *)1;
		atomic_init(&o->ref, 1);		/* the creator's */
		atomic_fetch_add(&allocated, 1);
		if (lb_cpubatch_add(pc, o, &o->node, 1 + rand_r(&seed) % 8) < 0)
			return (void *)1;
		if (i % 3)
			continue;
		if (obj_release(o, i % 2))
			return (void *)1;
		obj_free(o);
	}
	return NULL;
}

int main(void)
{
	struct lb_cpubatch_conf conf = LB_CPUBATCH_CONF_INIT(&ops, &list);
	pthread_t t[NTHREADS];
	void *ret;
	int err = 0;

	pthread_mutex_init(&list.mu, NULL);
	list.head.next = list.head.prev = &list.head;
	conf.max_weight = 16;
	if (lb_cpubatch_create(&pc, &conf))
		return 1;
	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &ret);
		err |= ret != NULL;
	}
	if (lb_cpubatch_destroy(pc))		/* commits what the batches hold */
		return 1;
	while (list.head.next != &list.head)
		obj_free(list.head.next);
	printf("allocated %ld committed %ld freed %ld errors %ld\n",
	       atomic_load(&allocated), list.commits, atomic_load(&freed),
	       atomic_load(&bad) + err);
	return err || atomic_load(&bad) || list.nr ||
	       list.commits != atomic_load(&allocated) ||
	       atomic_load(&freed) != atomic_load(&allocated);
}
