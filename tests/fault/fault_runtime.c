// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Fault injection at run time (plain TAP):
 *  - lb_pcp's back-end alloc_bulk failing, then returning short;
 *  - the CPU-id source returning errors, out-of-range ids and a different
 *    id on every call, for lb_cpubatch and lb_pcp;
 *  - a thread exiting with objects in its slot;
 *  - fork() with a decay thread running and slots full: what the child
 *    may do (pcp.h, "fork()") works in the child and the parent.
 * Each checks conservation: nothing lost, nothing handed out or committed
 * twice.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/pcp.h>
#include "../common/backend.h"
#include "../common/tap.h"
#include "../common/pcp_backend.h"

#define NOBJ 64

static struct tb b;
static struct tb_env env;
static int short_refill;	/* alloc_bulk brings one object at most */

static int bulk(void *ctx, unsigned int order, void **out, unsigned int n)
{
	return tb_alloc_bulk(ctx, order, out, short_refill && n > 1 ? 1 : n);
}

/* The CPU-id source: a fixed id, or (cpu_step) a new one on every call. */
static int cpu_step;
static int cpu_id(void *arg)
{
	static int n;

	(void)arg;
	return cpu_step ? __atomic_add_fetch(&n, 7, __ATOMIC_RELAXED) : env.cpu;
}

static struct lb_pcp *pcp_new(unsigned int objs, int decay)
{
	struct lb_pcp_conf c;
	struct lb_pcp *p;

	if (tb_init(&b, 4, objs))
		return NULL;
	tb_conf(&c, &b, &env, LB_PCP_TUNE_LINUX, 4, 16, 64);
	c.backend.alloc_bulk = bulk;
	c.cpu_fn = cpu_id;
	if (decay) {		/* the real clock, a tick every millisecond */
		c.clock_fn = NULL;
		c.decay_interval_ns = 1000000;
	}
	return lb_pcp_create(&p, &c) ? NULL : p;
}

/* Free every live object, drain, destroy: all back in the pool. */
static int pcp_end(struct lb_pcp *p, void **live, unsigned int n)
{
	unsigned int i;
	int ok = 1;

	for (i = 0; i < n; i++)
		ok &= lb_pcp_free(p, live[i], 0) == 0;
	ok &= lb_pcp_drain_all(p) >= 0 && tb_units_out(&b) == 0 && b.errors == 0;
	ok &= lb_pcp_destroy(p) == 0;
	tb_fini(&b);
	return ok;
}

/* Conservation: out of the pool = live + cached. */
static int pcp_conserved(struct lb_pcp *p, unsigned int live)
{
	struct lb_pcp_stats st;

	return lb_pcp_stats(p, &st, NULL, 0) > 0 &&
	       tb_units_out(&b) == live + (uint64_t)st.total.count &&
	       b.errors == 0;
}

static void test_backend(void)
{
	void *live[NOBJ];
	unsigned int n = 0;
	struct lb_pcp *p = pcp_new(NOBJ, 0);
	void *x;
	int rc, ok;

	env.cpu = 0;
	b.fail_next = 2;	/* the refill and the retry after drain */
	rc = lb_pcp_alloc(p, 0, &live[0]);
	lb_tap_ok(rc == -ENOMEM && pcp_conserved(p, 0),
		  "alloc_bulk failing: alloc returns -ENOMEM (%d), nothing lost", rc);
	short_refill = 1;
	for (ok = 1; n < NOBJ && (rc = lb_pcp_alloc(p, 0, &live[n])) == 0; n++)
		ok &= pcp_conserved(p, n + 1);
	lb_tap_ok(ok && rc == 0 && n == NOBJ,
		  "alloc_bulk returning short: %u allocations served, conserved", n);
	rc = lb_pcp_alloc(p, 0, &x);
	lb_tap_ok(rc == -ENOMEM && pcp_conserved(p, n),
		  "pool empty: -ENOMEM after the drain-and-retry (%d)", rc);
	short_refill = 0;
	lb_tap_ok(pcp_end(p, live, n), "alloc_bulk faults: everything returned");
}

static const int odd_ids[] = { -1, -EINVAL, INT_MIN, 4, 1000, INT_MAX };

static void test_cpu_pcp(void)
{
	void *live[NOBJ];
	unsigned int n = 0, k;
	struct lb_pcp *p = pcp_new(4 * NOBJ, 0);
	int ok = 1;

	for (k = 0; k < 4000; k++) {
		cpu_step = k % 7 == 6;
		env.cpu = odd_ids[k % 6];
		if ((k * 2654435761u >> 7) % 3 && n < NOBJ)
			ok &= lb_pcp_alloc(p, 0, &live[n++]) == 0;
		else if (n)
			ok &= lb_pcp_free(p, live[--n], 0) == 0;
		if (k % 500 == 0)
			ok &= lb_pcp_drain(p, env.cpu) >= 0 || env.cpu < 0;
		ok &= pcp_conserved(p, n);
	}
	cpu_step = 0;
	lb_tap_ok(ok && pcp_end(p, live, n), "lb_pcp: CPU ids negative, "
		  "out of range and new on every call: conserved, all returned");
}

/*
 * lb_cpubatch over the common back-end (tests/common/backend.h), which
 * checks the callback order on every call; an object is cached while its
 * accepted adds outnumber its commits.
 */
static struct test_obj cobj[NOBJ];

static struct lb_cpubatch *cb_new(unsigned int slots)
{
	struct lb_cpubatch_conf c = backend_conf(slots, LB_CPUBATCH_WEIGHTED,
						 31, 0, &backend_ops);
	unsigned int i;

	c.cpu_fn = cpu_id;
	for (i = 0; i < NOBJ; i++)
		backend_obj_init(&cobj[i], i);
	if (backend_init() || lb_cpubatch_create(&backend_fixture.pc, &c))
		return NULL;
	return backend_fixture.pc;
}

static int cb_add(struct lb_cpubatch *pc, unsigned int i)
{
	int rc;

	if (cobj[i].adds != backend_commits(&cobj[i]))
		return 1;
	rc = backend_add_to(pc, &cobj[i], 1 + i % 5);
	return rc == 0 || rc == 1;
}

static unsigned int cb_cached(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < NOBJ; i++)
		n += cobj[i].adds != backend_commits(&cobj[i]);
	return n;
}

/* Objects committed more often than added. */
static unsigned int cb_twice(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < NOBJ; i++)
		n += backend_commits(&cobj[i]) > cobj[i].adds;
	return n;
}

/* Destroy @pc: nothing left cached, committed once, callbacks in order. */
static int cb_end(struct lb_cpubatch *pc)
{
	int ok = lb_cpubatch_destroy(pc) == 0 && cb_cached() == 0 &&
		 cb_twice() == 0;

	backend_fixture.pc = NULL;
	return !backend_teardown() && ok;
}

static void test_cpu_cpubatch(void)
{
	struct lb_cpubatch *pc = cb_new(3);
	struct lb_cpubatch_stats st;
	unsigned int k;
	int ok = 1;

	for (k = 0; k < 4000; k++) {
		cpu_step = k % 7 == 6;
		env.cpu = odd_ids[k % 6];
		ok &= cb_add(pc, (k * 40503u >> 3) % NOBJ);
		if (k % 97 == 0)
			ok &= lb_cpubatch_drain_obj(pc,
						    &cobj[k % NOBJ].node) >= 0;
		ok &= lb_cpubatch_stats(pc, &st, NULL, 0) > 0 &&
		      st.total.nr_cached == cb_cached();
	}
	cpu_step = 0;
	ok &= cb_end(pc);
	lb_tap_ok(ok, "lb_cpubatch: CPU ids negative, out of range and new on "
		  "every call: stats agree, destroy commits all once");
}

/* A thread that caches objects in its slot and exits. */
static struct lb_cpubatch *ex_pc;
static struct lb_pcp *ex_pcp;
static void *leave_objects(void *arg)
{
	void *o[8];
	unsigned int i;

	(void)arg;
	for (i = 0; i < 8; i++)
		cb_add(ex_pc, i);
	for (i = 0; i < 8; i++)
		lb_pcp_alloc(ex_pcp, 0, &o[i]);
	for (i = 0; i < 8; i++)
		lb_pcp_free(ex_pcp, o[i], 0);
	return NULL;
}

static void test_thread_exit(void)
{
	struct lb_cpubatch_stats cst;
	struct lb_pcp_stats pst;
	pthread_t t;
	int ok;

	env.cpu = 1;
	ex_pc = cb_new(2);
	ex_pcp = pcp_new(NOBJ, 0);
	ok = pthread_create(&t, NULL, leave_objects, NULL) == 0 &&
	     pthread_join(t, NULL) == 0;
	ok &= lb_cpubatch_stats(ex_pc, &cst, NULL, 0) > 0 && cst.total.nr_cached == 8;
	ok &= lb_pcp_stats(ex_pcp, &pst, NULL, 0) > 0 && pst.total.count > 0 &&
	      pcp_conserved(ex_pcp, 0);
	lb_tap_ok(ok, "a thread exits with 8 objects in its cpubatch slot and "
		  "%lld units in its pcp slot: they stay there, counted",
		  (long long)pst.total.count);
	ok = lb_cpubatch_drain_all(ex_pc) >= 0 && cb_cached() == 0 &&
	     backend_fixture.commits == 8 && cb_end(ex_pc);
	ok &= pcp_end(ex_pcp, NULL, 0);
	lb_tap_ok(ok, "another thread's drain_all commits and returns them");
}

/* The child: what pcp.h allows after fork(). Exit status 0 when fine. */
static int child(struct lb_pcp *p, struct lb_cpubatch *pc, void **live,
		 unsigned int n)
{
	void *o;
	unsigned int i;
	int ok = pcp_conserved(p, n);

	for (i = 0; i < 32; i++)
		ok &= cb_add(pc, i);
	ok &= lb_cpubatch_drain_all(pc) >= 0 && cb_cached() == 0 &&
	      cb_twice() == 0 && !backend_fixture.errors;
	ok &= lb_pcp_alloc(p, 0, &o) == 0 && lb_pcp_free(p, o, 0) == 0;
	for (i = 0; i < n; i++)
		ok &= lb_pcp_free(p, live[i], 0) == 0;
	ok &= lb_pcp_drain_all(p) >= 0 && tb_units_out(&b) == 0 && b.errors == 0;
	/* The parent's decay thread may have been ticking: the child's is not. */
	ok &= lb_pcp_decay_thread_stop(p) == -ENOENT && lb_pcp_decay(p) >= 0 &&
	      lb_pcp_destroy(p) == 0;
	return ok ? 0 : 1;
}

static void test_fork(void)
{
	void *live[NOBJ];
	struct lb_cpubatch *pc = cb_new(4);
	struct lb_pcp *p = pcp_new(4 * NOBJ, 1);
	unsigned int n, s, i;
	int st = -1, ok;
	pid_t pid;

	ok = p && pc && lb_pcp_decay_thread_start(p) == 0;
	for (n = 0, s = 0; s < 4; s++) {	/* every slot: count up to high */
		env.cpu = (int)s;
		for (i = 0; i < 12; i++)
			ok &= lb_pcp_alloc(p, 0, &live[n + i]) == 0;
		for (i = 0; i < 6; i++)
			ok &= lb_pcp_free(p, live[n + 6 + i], 0) == 0;
		n += 6;
		for (i = 0; i < 8; i++)
			ok &= cb_add(pc, s * 8 + i);
	}
	usleep(3000);		/* a few ticks while the slots are full */
	pid = fork();
	if (pid == 0) {
		alarm(20);
		_exit(child(p, pc, live, n));
	}
	ok &= pid > 0 && waitpid(pid, &st, 0) == pid;
	lb_tap_ok(ok && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "fork() with a decay thread running and full slots: the child "
		  "allocates, frees, drains, commits and destroys (status %#x)", st);
	ok = lb_pcp_decay_thread_stop(p) == 0 && pcp_conserved(p, n);
	ok &= cb_end(pc);
	lb_tap_ok(ok && pcp_end(p, live, n), "the parent after fork(): decay "
		  "thread stops, nothing lost");
}

int main(void)
{
	lb_tap_plan(10);
	/* Before the first slot array: its fork hook then runs first. */
	if (backend_fork_safe())
		lb_tap_diag("pthread_atfork failed: the back-end may be copied held");
	test_backend();
	test_cpu_pcp();
	test_cpu_cpubatch();
	test_thread_exit();
	test_fork();
	return lb_tap_done();
}
