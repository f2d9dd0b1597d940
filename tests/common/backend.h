/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The lb_cpubatch back-end every test uses: up to BACKEND_MAX back-ends,
 * each with a real lb_lock (a path that took it twice hangs and trips the
 * test's timeout), reference-counted objects, a log of committed object
 * ids in commit order, and a check of the callback order on every call:
 *
 *  - commit() runs with the back-end lock held by the calling thread,
 *    never with an empty run or one longer than LB_WBATCH_MAX, only with
 *    objects of that back-end (and, single-threaded, no longer cached);
 *  - after() runs with that back-end's lock not held by the caller, and
 *    only for an object committed at least as often as it was seen there;
 *  - put() drops a reference get() took, and only once the object was
 *    committed for it (and seen by after() when the back-end has one):
 *    the object's puts never outnumber its commits (or afters);
 *  - lock() is not taken twice, unlock() only by the holder;
 *  - no callback at all after backend_teardown().
 *
 * Every broken rule counts in backend_fixture.errors; backend_teardown()
 * returns the count and the tests assert it is 0. Criterion 2.4.1 reports
 * a failed check in .fini as a warning and still passes the test, so in a
 * Criterion program each violation also fails the running test on the spot
 * (cr_expect: it records and returns). A program that defines
 * BACKEND_ERROR_ABORT before including this file (a fuzz harness) aborts
 * at the first one instead, where the stack shows it. Safe to use from
 * many threads: the counters are atomic, the per-back-end ones are written
 * under its lock.
 *
 * Around fork(): backend_fork_safe() (before the first instance is made)
 * holds every back-end lock across fork(), so a child finds the back-ends
 * consistent and unlocked. The signal handlers of the tests do not call
 * into the fixture; its callbacks are not async-signal-safe.
 *
 * Each object starts with one reference (its owner's); the batch takes one
 * more through @get and drops it through @put. Commits are counted per
 * object, so "committed exactly once" is commits == successful adds.
 */
#ifndef LB_TEST_BACKEND_H
#define LB_TEST_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

#define BACKEND_MAX 4
#define BACKEND_LOG_MAX 65536

struct backend_fixture;

struct test_obj {
	struct lb_node node;
	unsigned int id;
	unsigned int be;		/* index of its back-end (backend_of) */
	uint32_t weight;
	long ref;			/* atomic: owner's 1 + batch refs */
	unsigned int commits;		/* atomic */
	unsigned int afters;		/* atomic: times seen by after() */
	unsigned int puts;		/* atomic */
	unsigned int adds;		/* atomic: adds that returned >= 0 */
};

struct test_backend {
	struct backend_fixture *f;
	unsigned int idx;
	struct lb_lock lock;
	const void *holder;		/* thread holding @lock, or NULL */
	unsigned long locks;		/* under @lock: lock() calls */
	unsigned long runs;		/* under @lock: commit() calls */
	unsigned long objs;		/* under @lock: objects committed */
};

typedef void (*backend_hook)(struct backend_fixture *f, struct test_backend *be,
			     void **objs, unsigned int n);

struct backend_fixture {
	struct test_backend be[BACKEND_MAX];
	struct lb_cpubatch *pc;		/* made by backend_setup*() */
	/* All atomic. */
	unsigned long locks;		/* lock() calls, all back-ends */
	unsigned long commits;		/* objects committed */
	unsigned long commit_calls;
	unsigned long gets, puts;
	unsigned long after_calls;
	unsigned long after_objs;
	unsigned long errors;		/* broken rules; must stay 0 */
	const char *first_error;
	unsigned int max_run;		/* longest commit() run seen */
	unsigned long nr_log;		/* may exceed BACKEND_LOG_MAX */
	bool torn_down;
	/* Set by the test while no callback runs. */
	backend_hook on_commit;		/* inside commit(), lock held */
	backend_hook on_after;		/* inside after(), before the puts */
	void (*on_get)(struct backend_fixture *f, struct test_obj *o);
	bool put_uncommitted_ok;	/* a rejected add puts its reference */
	/*
	 * No other thread adds: commit() also checks each object is no longer
	 * marked cached (another thread may already have added it again).
	 */
	bool one_thread;
	void *arg;
	/* Last: backend_init() clears what is above, not the whole log. */
	unsigned int log[BACKEND_LOG_MAX]; /* committed ids, in order */
};

/* One fixture per test program: the callbacks reach it through the objects. */
static struct backend_fixture backend_fixture;
static __thread int backend_tls_cpu;
/* Its address names the calling thread in test_backend.holder. */
static __thread char backend_tls_self;

static inline void backend_error(struct backend_fixture *f, const char *what)
{
	const char *none = NULL;

	__atomic_add_fetch(&f->errors, 1, __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&f->first_error, &none, what, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#ifdef CRITERION_H_
	cr_expect(0, "back-end callback out of order: %s", what);
#endif
#ifdef BACKEND_ERROR_ABORT
	fprintf(stderr, "back-end callback out of order: %s\n", what);
	abort();
#endif
}

static inline void backend_count(unsigned long *c, unsigned long n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

static inline bool backend_holds(const struct test_backend *be)
{
	return __atomic_load_n(&be->holder, __ATOMIC_RELAXED) ==
	       &backend_tls_self;
}

static inline void backend_check_open(struct backend_fixture *f)
{
	if (__atomic_load_n(&f->torn_down, __ATOMIC_RELAXED))
		backend_error(f, "callback after teardown");
}

/* Reset the fixture: BACKEND_MAX unlocked back-ends, nothing counted. */
static inline int backend_init_kind(enum lb_lock_kind kind)
{
	struct backend_fixture *f = &backend_fixture;
	unsigned int i;
	int rc;

	memset(f, 0, offsetof(struct backend_fixture, log));
	backend_tls_cpu = 0;
	for (i = 0; i < BACKEND_MAX; i++) {
		f->be[i].f = f;
		f->be[i].idx = i;
		rc = lb_lock_init(&f->be[i].lock, kind, "backend");
		if (rc)
			return rc;
	}
	return 0;
}

static inline int backend_init(void)
{
	return backend_init_kind(LB_LOCK_SPIN);
}

static inline void backend_obj_init_at(struct test_obj *o, unsigned int id,
				       unsigned int be, uint32_t weight)
{
	memset(o, 0, sizeof(*o));
	o->ref = 1;
	o->id = id;
	o->be = be;
	o->weight = weight;
}

static inline void backend_obj_init(struct test_obj *o, unsigned int id)
{
	backend_obj_init_at(o, id, 0, 0);
}

/* CPU-id injection, per thread: the next add from this thread uses @cpu. */
static inline int backend_cpu(void *arg)
{
	(void)arg;
	return backend_tls_cpu;
}

static inline void backend_set_cpu(int cpu)
{
	backend_tls_cpu = cpu;
}

/* CPU-id injection through cpu_arg: the test writes the id in *@arg. */
static inline int backend_cpu_of_arg(void *arg)
{
	return *(const int *)arg;
}

static inline void *backend_of(void *obj)
{
	return &backend_fixture.be[((struct test_obj *)obj)->be];
}

static inline void backend_lock(void *backend)
{
	struct test_backend *be = backend;

	backend_check_open(be->f);
	/* Before acquiring: a thread taking it again would hang in there. */
	if (backend_holds(be))
		backend_error(be->f, "back-end locked twice by one thread");
	lb_lock_acquire(&be->lock);
	if (be->holder)
		backend_error(be->f, "back-end locked twice");
	__atomic_store_n(&be->holder, &backend_tls_self, __ATOMIC_RELAXED);
	be->locks++;
	backend_count(&be->f->locks, 1);
}

static inline void backend_unlock(void *backend)
{
	struct test_backend *be = backend;

	if (!backend_holds(be))
		backend_error(be->f, "back-end unlocked by a non-holder");
	__atomic_store_n(&be->holder, NULL, __ATOMIC_RELAXED);
	lb_lock_release(&be->lock);
}

/* Under the back-end lock: the run's objects, counted and logged. */
static inline void backend_log_run(struct test_backend *be, void **objs,
				   unsigned int n)
{
	struct backend_fixture *f = be->f;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct test_obj *o = objs[i];
		unsigned long at;

		if (&f->be[o->be] != be)
			backend_error(f,
				      "object committed to the wrong back-end");
		if (f->one_thread && o->node.slot != 0)
			backend_error(f,
				      "committed object still marked cached");
		__atomic_add_fetch(&o->commits, 1, __ATOMIC_SEQ_CST);
		at = __atomic_fetch_add(&f->nr_log, 1, __ATOMIC_RELAXED);
		if (at < BACKEND_LOG_MAX)
			f->log[at] = o->id;
	}
}

static inline void backend_commit(void *backend, void **objs, unsigned int n)
{
	struct test_backend *be = backend;
	struct backend_fixture *f = be->f;
	unsigned int max = __atomic_load_n(&f->max_run, __ATOMIC_RELAXED);

	backend_check_open(f);
	if (!backend_holds(be))
		backend_error(f, "commit without the back-end lock");
	if (n == 0 || n > LB_WBATCH_MAX)
		backend_error(f, "commit of an empty or oversized run");
	while (n > max && !__atomic_compare_exchange_n(&f->max_run, &max, n,
						       false, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	be->runs++;
	be->objs += n;
	backend_log_run(be, objs, n);
	backend_count(&f->commits, n);
	backend_count(&f->commit_calls, 1);
	if (f->on_commit)
		f->on_commit(f, be, objs, n);
}

static inline void backend_after(void *backend, void **objs, unsigned int n)
{
	struct test_backend *be = backend;
	struct backend_fixture *f = be->f;
	unsigned int i;

	backend_check_open(f);
	if (backend_holds(be))
		backend_error(f, "after() ran under the back-end lock");
	backend_count(&f->after_calls, 1);
	backend_count(&f->after_objs, n);
	for (i = 0; i < n; i++) {
		struct test_obj *o = objs[i];

		if (__atomic_add_fetch(&o->afters, 1, __ATOMIC_SEQ_CST) >
		    __atomic_load_n(&o->commits, __ATOMIC_SEQ_CST))
			backend_error(f, "after() before commit");
	}
	if (f->on_after)
		f->on_after(f, be, objs, n);
}

static inline void backend_get(void *obj)
{
	struct test_obj *o = obj;
	struct backend_fixture *f = &backend_fixture;

	backend_check_open(f);
	__atomic_add_fetch(&o->ref, 1, __ATOMIC_RELAXED);
	backend_count(&f->gets, 1);
	if (f->on_get)
		f->on_get(f, o);
}

static inline void backend_put(void *obj)
{
	struct test_obj *o = obj;
	struct backend_fixture *f = &backend_fixture;
	unsigned int puts = __atomic_load_n(&o->puts, __ATOMIC_SEQ_CST);

	backend_check_open(f);
	if (__atomic_load_n(&o->ref, __ATOMIC_RELAXED) <= 1)
		backend_error(f, "put() without get()");
	/* A rejected add's reference has no commit to match: not counted. */
	if (!f->put_uncommitted_ok ||
	    puts < __atomic_load_n(&o->commits, __ATOMIC_SEQ_CST)) {
		puts = __atomic_add_fetch(&o->puts, 1, __ATOMIC_SEQ_CST);
		if (puts > __atomic_load_n(&o->commits, __ATOMIC_SEQ_CST) ||
		    (__atomic_load_n(&f->after_calls, __ATOMIC_RELAXED) &&
		     puts > __atomic_load_n(&o->afters, __ATOMIC_SEQ_CST)))
			backend_error(f, "put() before commit and after()");
	}
	__atomic_sub_fetch(&o->ref, 1, __ATOMIC_RELEASE);
	backend_count(&f->puts, 1);
}

static inline long backend_refcount(void *obj)
{
	return __atomic_load_n(&((struct test_obj *)obj)->ref,
			       __ATOMIC_ACQUIRE);
}

/* A reference the test itself takes or drops (a third party's, a mapping). */
static inline void test_obj_hold(struct test_obj *o)
{
	__atomic_add_fetch(&o->ref, 1, __ATOMIC_RELAXED);
}

static inline void test_obj_release(struct test_obj *o)
{
	__atomic_sub_fetch(&o->ref, 1, __ATOMIC_RELEASE);
}

/* References the batch holds on @o (get() minus put()). */
static inline long backend_batch_refs(const struct test_obj *o)
{
	return __atomic_load_n(&o->ref, __ATOMIC_ACQUIRE) - 1;
}

/*
 * Every callback but @backend_of: objects go to conf.backend. Tests that
 * route objects to several back-ends set .backend_of = backend_of; tests
 * that do without a callback clear it in their copy.
 */
static const struct lb_backend_ops backend_ops = {
	.lock = backend_lock,
	.unlock = backend_unlock,
	.commit = backend_commit,
	.after = backend_after,
	.get = backend_get,
	.put = backend_put,
	.refcount = backend_refcount,
};

/* lb_cpubatch_conf for back-end 0 with @ops and the per-thread CPU id. */
static inline struct lb_cpubatch_conf backend_conf(unsigned int nr_slots,
						   enum lb_cpubatch_mode mode,
						   unsigned int max_nr,
						   uint32_t max_weight,
						   const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = {
		.nr_slots = nr_slots,
		.mode = mode,
		.max_nr = max_nr,
		.max_weight = max_weight,
		.ops = ops,
		.backend = &backend_fixture.be[0],
		.cpu_fn = backend_cpu,
	};

	return conf;
}

/* backend_init(), then backend_fixture.pc: @nr_slots slots, caps as given. */
static inline int backend_setup_ops(unsigned int nr_slots,
				    enum lb_cpubatch_mode mode,
				    unsigned int max_nr, uint32_t max_weight,
				    const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = backend_conf(nr_slots, mode, max_nr,
						    max_weight, ops);
	int rc = backend_init();

	if (rc)
		return rc;
	return lb_cpubatch_create(&backend_fixture.pc, &conf);
}

static inline int backend_setup(unsigned int nr_slots, unsigned int max_nr)
{
	return backend_setup_ops(nr_slots, LB_CPUBATCH_WEIGHTED, max_nr, 0,
				 &backend_ops);
}

/* A second lb_cpubatch on back-end 0, for "node of another lb_cpubatch". */
static inline struct lb_cpubatch *backend_other(const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = backend_conf(2, LB_CPUBATCH_WEIGHTED, 0,
						    0, ops);
	struct lb_cpubatch *pc;

	return lb_cpubatch_create(&pc, &conf) ? NULL : pc;
}

/*
 * Destroy backend_fixture.pc (the test destroys any other lb_cpubatch
 * first); from here on every callback is an error. Returns the broken
 * rules seen (want 0).
 */
static inline unsigned long backend_teardown(void)
{
	struct backend_fixture *f = &backend_fixture;
	unsigned int i;

	if (f->pc)
		lb_cpubatch_destroy(f->pc);
	f->pc = NULL;
	__atomic_store_n(&f->torn_down, true, __ATOMIC_RELAXED);
	for (i = 0; i < BACKEND_MAX; i++) {
		if (f->be[i].holder)
			backend_error(f, "back-end still locked at teardown");
		lb_lock_destroy(&f->be[i].lock);
	}
	return __atomic_load_n(&f->errors, __ATOMIC_RELAXED);
}

static inline void backend_fork_prepare(void)
{
	unsigned int i;

	for (i = 0; i < BACKEND_MAX; i++)
		lb_lock_acquire(&backend_fixture.be[i].lock);
}

static inline void backend_fork_release(void)
{
	unsigned int i;

	for (i = BACKEND_MAX; i-- > 0;)
		lb_lock_release(&backend_fixture.be[i].lock);
}

/*
 * Hold every back-end lock across fork(), as an application does with the
 * locks its callbacks take. Call it once, before the first lb_cpubatch is
 * made: prepare handlers run in the reverse order of registration, so the
 * library's (the slot locks) run before it. Not counted in any statistic.
 */
static inline int backend_fork_safe(void)
{
	return pthread_atfork(backend_fork_prepare, backend_fork_release,
			      backend_fork_release);
}

/* Add @o of weight @w to @pc; counts the add when it succeeded. */
static inline int backend_add_to(struct lb_cpubatch *pc, struct test_obj *o,
				 uint32_t w)
{
	int rc = lb_cpubatch_add(pc, o, &o->node, w);

	if (rc >= 0)
		__atomic_add_fetch(&o->adds, 1, __ATOMIC_RELAXED);
	return rc;
}

/* Add @o of weight @w from slot @cpu; counts the add when it succeeded. */
static inline int backend_add(struct test_obj *o, int cpu, uint32_t w)
{
	backend_set_cpu(cpu);
	return backend_add_to(backend_fixture.pc, o, w);
}

static inline unsigned int backend_commits(const struct test_obj *o)
{
	return __atomic_load_n(&o->commits, __ATOMIC_RELAXED);
}

/* Per-slot flush count of @cause, read through lb_cpubatch_stats(). */
static inline uint64_t backend_slot_flushes(unsigned int slot,
					    enum lb_flush_cause cause)
{
	struct lb_cpubatch_slot_stats st[64];

	if (slot >= 64 ||
	    lb_cpubatch_stats(backend_fixture.pc, NULL, st, 64) < 0)
		return UINT64_MAX;
	return st[slot].flushes[cause];
}

/* Sum over causes of every slot's flushes, into @out[nr_slots]. */
static inline void backend_all_flushes(uint64_t *out, unsigned int nr_slots)
{
	struct lb_cpubatch_slot_stats st[64];
	unsigned int i, c;

	lb_cpubatch_stats(backend_fixture.pc, NULL, st,
			  nr_slots < 64 ? nr_slots : 64);
	for (i = 0; i < nr_slots && i < 64; i++) {
		out[i] = 0;
		for (c = 0; c < LB_FLUSH_NR; c++)
			out[i] += st[i].flushes[c];
	}
}

static inline struct lb_cpubatch_stats backend_stats(void)
{
	struct lb_cpubatch_stats st;

	lb_cpubatch_stats(backend_fixture.pc, &st, NULL, 0);
	return st;
}

#endif /* LB_TEST_BACKEND_H */
