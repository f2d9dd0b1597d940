/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A recording back-end for single-threaded lb_cpubatch tests. It logs every
 * committed object in commit order, counts lock calls per back-end, and
 * notes every broken rule (after() with the back-end lock held, a put()
 * before the object was committed, an unbalanced lock) in counters the
 * tests assert are zero. The lock is a real lb_lock, so a path that took
 * it twice would hang and trip the test's timeout instead of passing.
 */
#ifndef LB_TEST_REC_BACKEND_H
#define LB_TEST_REC_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

#define REC_MAX_BACKENDS 4
#define REC_LOG_MAX 65536

struct rec;

struct rec_obj {
	struct lb_node node;
	struct rec *r;
	unsigned int id;
	unsigned int be;	/* index of the back-end it belongs to */
	uint32_t weight;
	int refs;		/* batch references: get() - put() */
	unsigned int commits;	/* times committed */
	unsigned int afters;	/* times seen by after() */
};

struct rec_backend {
	struct rec *r;
	unsigned int idx;
	struct lb_lock lock;
	bool held;
	unsigned long locks;	/* lock() calls on this back-end */
	unsigned long runs;	/* commit() calls */
};

typedef void (*rec_hook)(struct rec *r, struct rec_backend *be, void **objs,
			 unsigned int n);

struct rec {
	struct rec_backend be[REC_MAX_BACKENDS];
	unsigned long locks;		/* lock() calls, all back-ends */
	unsigned long gets, puts;
	unsigned long after_calls;
	unsigned long after_objs;
	unsigned long errors;		/* broken rules; must stay 0 */
	const char *first_error;
	unsigned int max_run;		/* longest commit() run seen */
	unsigned long nr_log;
	unsigned int log[REC_LOG_MAX];	/* committed object ids, in order */
	rec_hook on_commit;		/* called inside commit(), lock held */
	rec_hook on_after;		/* called inside after() */
	void (*on_get)(struct rec *r, struct rec_obj *o); /* slot lock held */
	bool put_uncommitted_ok;	/* a rejected add puts its reference */
	void *arg;
};

static inline void rec_error(struct rec *r, const char *what)
{
	if (!r->errors++)
		r->first_error = what;
}

static inline void rec_init(struct rec *r)
{
	unsigned int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < REC_MAX_BACKENDS; i++) {
		r->be[i].r = r;
		r->be[i].idx = i;
		lb_lock_init(&r->be[i].lock, LB_LOCK_SPIN, "rec");
	}
}

static inline void rec_obj_init(struct rec_obj *o, struct rec *r,
				unsigned int id, unsigned int be,
				uint32_t weight)
{
	memset(o, 0, sizeof(*o));
	o->r = r;
	o->id = id;
	o->be = be;
	o->weight = weight;
}

static inline void *rec_backend_of(void *obj)
{
	struct rec_obj *o = obj;

	return &o->r->be[o->be];
}

static inline void rec_lock(void *backend)
{
	struct rec_backend *be = backend;

	lb_lock_acquire(&be->lock);
	if (be->held)
		rec_error(be->r, "back-end locked twice");
	be->held = true;
	be->locks++;
	be->r->locks++;
}

static inline void rec_unlock(void *backend)
{
	struct rec_backend *be = backend;

	if (!be->held)
		rec_error(be->r, "back-end unlocked while not held");
	be->held = false;
	lb_lock_release(&be->lock);
}

static inline void rec_commit(void *backend, void **objs, unsigned int n)
{
	struct rec_backend *be = backend;
	struct rec *r = be->r;
	unsigned int i;

	if (!be->held)
		rec_error(r, "commit without the back-end lock");
	if (n == 0)
		rec_error(r, "empty commit");
	be->runs++;
	if (n > r->max_run)
		r->max_run = n;
	for (i = 0; i < n; i++) {
		struct rec_obj *o = objs[i];

		if (&r->be[o->be] != be)
			rec_error(r, "object committed to the wrong back-end");
		if (o->node.slot != 0)
			rec_error(r, "committed object still marked cached");
		o->commits++;
		if (r->nr_log < REC_LOG_MAX)
			r->log[r->nr_log] = o->id;
		r->nr_log++;
	}
	if (r->on_commit)
		r->on_commit(r, be, objs, n);
}

static inline void rec_after(void *backend, void **objs, unsigned int n)
{
	struct rec_backend *be = backend;
	struct rec *r = be->r;
	unsigned int i;

	if (be->held)
		rec_error(r, "after() ran under the back-end lock");
	r->after_calls++;
	r->after_objs += n;
	for (i = 0; i < n; i++) {
		struct rec_obj *o = objs[i];

		if (o->afters >= o->commits)
			rec_error(r, "after() before commit");
		o->afters++;
	}
	if (r->on_after)
		r->on_after(r, be, objs, n);
}

static inline void rec_get(void *obj)
{
	struct rec_obj *o = obj;

	o->refs++;
	o->r->gets++;
	if (o->r->on_get)
		o->r->on_get(o->r, o);
}

static inline void rec_put(void *obj)
{
	struct rec_obj *o = obj;

	if (o->refs <= 0)
		rec_error(o->r, "put() without get()");
	if (!o->r->put_uncommitted_ok &&
	    (o->commits == 0 || (o->r->after_calls && o->afters != o->commits)))
		rec_error(o->r, "put() before commit and after()");
	o->refs--;
	o->r->puts++;
}

/* Every callback; tests clear the ones they do without. */
static inline struct lb_backend_ops rec_ops(void)
{
	struct lb_backend_ops ops = {
		.backend_of = rec_backend_of,
		.lock = rec_lock,
		.unlock = rec_unlock,
		.commit = rec_commit,
		.after = rec_after,
		.get = rec_get,
		.put = rec_put,
	};

	return ops;
}

/* CPU-id injection: the test writes the id the next call returns. */
static inline int rec_cpu_fn(void *arg)
{
	return *(const int *)arg;
}

#endif /* LB_TEST_REC_BACKEND_H */
