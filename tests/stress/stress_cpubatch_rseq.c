// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Stress for lb_cpubatch's owner path on the real CPU: adders move between
 * CPUs (sched_setaffinity() flipping) and take signals while they add;
 * one thread drains other threads' objects (drain_obj, drain_objs),
 * drain_all (plain and forced) and disables and re-enables batching. On
 * the rseq path every add that does not flush is a restartable sequence
 * and every remote access stops and fences the slot.
 *
 * Checked: every accepted add committed exactly once (conservation), @get
 * and @put balanced, nodes left "not cached" after destroy, nothing cached
 * while batching is disabled, the callback order of tests/common/backend.h
 * (in the parent and in fork() children), and which path the instance
 * used; then conservation again for an instance without @get (whose
 * section runs inline in lb_cpubatch_add(), not behind the @get call). Run by `make check` as it is (rseq path where the machine has it)
 * and with LB_RSEQ=0 (tests/cpubatch_paths.sh).
 *
 * Built again as a negative control with the library's cpubatch sources
 * compiled with LBI_RSEQ_BROKEN_NO_STOP_CHECK: sections no longer check
 * the stop flag, a remote swap-out races with them, and the program
 * passes only when conservation is seen broken within its time bound, on
 * an instance with @get and again on one without (the inline section); the
 * back-end's order checks are then reported, not judged.
 * Plain pthreads and TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lockbatch/cpubatch.h>
#include <lockbatch/lock.h>
#include "../common/affinity.h"
#include "../common/backend.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"

#define ADDERS 3
#define OBJS 48			/* per adder */

static struct test_obj objs[ADDERS][OBJS];
static struct lb_cpubatch *pc;	/* backend_fixture.pc */
static int stop_run;		/* atomic */
static int disabled_now;	/* drainer-owned */
static uint64_t errors, sigs, drains, cached_while_off;	/* atomic */
static uint64_t forks, forks_bad;			/* drainer-owned */
static struct test_obj fork_obj;
static uint64_t seed;
static int nr_cpus;

static void inc(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static void on_signal(int sig)
{
	(void)sig;
	inc(&sigs);
}

/* Pin to one CPU, or let the scheduler choose (every CPU allowed). */
static void flip(struct lb_rng *r)
{
	int c = (int)lb_rng_below(r, (uint32_t)nr_cpus + 1);

	lb_test_pin(c == nr_cpus ? -1 : c, nr_cpus);
}

static void *adder(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed + me);
	for (i = 0; !__atomic_load_n(&stop_run, __ATOMIC_RELAXED); i++) {
		struct test_obj *o = &objs[me][lb_rng_below(&r, OBJS)];
		int rc = backend_add_to(pc, o, 1 + lb_rng_below(&r, 4));

		if (rc < 0 && rc != -EEXIST)
			inc(&errors);
		if (i % 4096 == 0)
			flip(&r);
	}
	return NULL;
}

static void drain_some(struct lb_rng *r)
{
	struct lb_node *nodes[3];
	unsigned int i;
	int rc;

	switch (lb_rng_below(r, 16)) {
	case 0:
		rc = lb_cpubatch_drain_all(pc);
		break;
	case 1:
		rc = lb_cpubatch_drain_all_forced(pc);
		break;
	case 2:
		for (i = 0; i < 3; i++)
			nodes[i] = &objs[lb_rng_below(r, ADDERS)]
					[lb_rng_below(r, OBJS)].node;
		rc = lb_cpubatch_drain_objs(pc, nodes, 3);
		break;
	default:
		rc = lb_cpubatch_drain_obj(pc, &objs[lb_rng_below(r, ADDERS)]
						    [lb_rng_below(r, OBJS)].node);
		break;
	}
	/* -ENOENT never: drain_obj reports "never added" as 0. */
	if (rc < 0)
		inc(&errors);
	inc(&drains);
}

/* While disabled, an add flushes before it returns: nothing stays cached. */
static void toggle_disable(void)
{
	struct lb_cpubatch_stats st;

	if (!disabled_now) {
		if (lb_cpubatch_disable(pc))
			inc(&errors);
		disabled_now = 1;
		lb_cpubatch_stats(pc, &st, NULL, 0);
		if (st.total.nr_cached)
			inc(&cached_while_off);
		return;
	}
	if (lb_cpubatch_enable(pc) < 0)
		inc(&errors);
	disabled_now = 0;
}

/*
 * fork() while adders add and flush: the child has the forking thread
 * only, every slot lock free and every slot running (fork hooks), the
 * back-end unlocked (backend_fork_safe()); it adds on its own CPU, drains
 * everything and checks the commit and the callback order.
 */
static void fork_check(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		inc(&errors);
		return;
	}
	if (!pid) {
		int ok = backend_add_to(pc, &fork_obj, 1) >= 0 &&
			 lb_cpubatch_drain_all_forced(pc) >= 0 &&
			 backend_commits(&fork_obj) == 1 &&
			 backend_batch_refs(&fork_obj) == 0 &&
			 !backend_fixture.errors;

		_exit(ok ? 0 : 1);
	}
	forks++;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		forks_bad++;
}

static void *drainer(void *arg)
{
	pthread_t *adders = arg;
	struct lb_rng r;
	unsigned long i;

	lb_rng_seed(&r, seed ^ 0x5eed);
	for (i = 0; !__atomic_load_n(&stop_run, __ATOMIC_RELAXED); i++) {
		drain_some(&r);
		if (i % 64 == 0)
			toggle_disable();
		if (i % 8 == 0)
			pthread_kill(adders[lb_rng_below(&r, ADDERS)], SIGUSR1);
		if (i % 1024 == 0)
			flip(&r);
		/* Early too: a TSan build may drain only a few hundred times. */
		if (i % 4096 == 64)
			fork_check();
	}
	if (disabled_now)
		toggle_disable();
	return NULL;
}

struct tally {
	uint64_t adds, commits, off, refs, cached;
};

static void run(double secs)
{
	pthread_t a[ADDERS], d;
	struct timespec ts = { (time_t)secs,
			       (long)((secs - (double)(time_t)secs) * 1e9) };
	unsigned int i;

	__atomic_store_n(&stop_run, 0, __ATOMIC_RELAXED);
	for (i = 0; i < ADDERS; i++)
		pthread_create(&a[i], NULL, adder, (void *)(uintptr_t)i);
	pthread_create(&d, NULL, drainer, a);
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop_run, 1, __ATOMIC_RELAXED);
	for (i = 0; i < ADDERS; i++)
		pthread_join(a[i], NULL);
	pthread_join(d, NULL);
}

static void tally(struct tally *t)
{
	unsigned int i, j;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < ADDERS; i++)
		for (j = 0; j < OBJS; j++) {
			struct test_obj *o = &objs[i][j];

			t->adds += o->adds;
			t->commits += o->commits;
			t->off += o->adds != o->commits;
			t->refs += backend_batch_refs(o) != 0;
			t->cached += o->node.slot != 0;
		}
}

static int fork_safe_done;

/* Without @get the add's section is inline in lb_cpubatch_add(). */
static const struct lb_backend_ops ops_noget = {
	.lock = backend_lock, .unlock = backend_unlock,
	.commit = backend_commit, .after = backend_after,
};

/* One slot per CPU and no CPU-id injection: the real CPU's slot. */
static int setup(struct lb_cpubatch_stats *st,
		 const struct lb_backend_ops *ops)
{
	struct lb_cpubatch_conf conf = backend_conf(0, LB_CPUBATCH_WEIGHTED, 8,
						    16, ops);
	struct sigaction sa;
	unsigned int i, j;

	conf.cpu_fn = NULL;
	for (i = 0; i < ADDERS; i++)
		for (j = 0; j < OBJS; j++)
			backend_obj_init(&objs[i][j], i * OBJS + j);
	backend_obj_init(&fork_obj, ADDERS * OBJS);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	/* The fork handlers are registered once: twice would lock twice. */
	if ((!fork_safe_done++ && backend_fork_safe()) || backend_init() ||
	    lb_cpubatch_create(&backend_fixture.pc, &conf))
		return -1;
	pc = backend_fixture.pc;
	return lb_cpubatch_stats(pc, st, NULL, 0) < 0 ? -1 : 0;
}

/* The back-end's order checks: a test, or (@judged 0) a diagnostic. */
static void report_order(int judged)
{
	unsigned long broken = backend_teardown();
	const char *first = backend_fixture.first_error;

	if (judged)
		lb_tap_ok(!broken, "callbacks in order (%lu broken, first: %s)",
			  broken, first ? first : "none");
	else
		lb_tap_diag("back-end order checks broken: %lu (first: %s)",
			    broken, first ? first : "none");
}

#ifdef LBI_RSEQ_BROKEN_NO_STOP_CHECK
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Rounds on a fresh instance with @ops until the damage shows, at most a
 * bounded time each. Return: 1 caught, 0 not caught, -1 no rseq path.
 */
static int catch_damage(const struct lb_backend_ops *ops, const char *what)
{
	struct lb_cpubatch_stats st;
	struct tally t;
	double t0 = now_s(), limit = (double)lb_stress_iters(30, 60);
	int rounds = 0;

	errors = 0;
	if (setup(&st, ops) || st.path != LB_CPU_PATH_RSEQ || nr_cpus < 2) {
		report_order(0);
		return -1;
	}
	do {
		run(0.5);
		rounds++;
		lb_cpubatch_drain_all_forced(pc);
		tally(&t);
	} while (!t.off && now_s() - t0 < limit);
	lb_tap_ok(t.off > 0,
		  "%s: without the stop check the test catches it: %" PRIu64
		  " objects off (%" PRIu64 " adds, %" PRIu64
		  " commits) after %d rounds (%.1f s)", what,
		  t.off, t.adds, t.commits, rounds, now_s() - t0);
	report_order(0);
	return t.off > 0;
}

/*
 * Both owner sections lose the stop check: the one behind the @get call
 * (add_rseq_slow()) and the one inline in lb_cpubatch_add() (no @get);
 * each must be caught on its own.
 */
static int negative_control(void)
{
	lb_tap_plan(2);
	if (catch_damage(&backend_ops, "with @get") < 0) {
		lb_tap_ok(1, "# SKIP needs the rseq path and 2 CPUs (%s)",
			  lb_cpu_path_name());
		lb_tap_ok(1, "# SKIP needs the rseq path and 2 CPUs");
		return 0;
	}
	if (catch_damage(&ops_noget, "without @get, inline section") < 0)
		lb_tap_ok(0, "without @get: the instance left the rseq path");
	return lb_tap_done();
}
#endif

int main(void)
{
	struct lb_cpubatch_stats st;
	struct tally t;
	double secs = (double)lb_stress_iters(2, 20);
	int rc;

	nr_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nr_cpus < 1)
		nr_cpus = 1;
	seed = lb_test_seed(0xc0ffee);
#ifdef LBI_RSEQ_BROKEN_NO_STOP_CHECK
	return negative_control();
#endif
	lb_tap_plan(12);
	lb_tap_diag(LB_SEED_FMT, LB_SEED_ARGS(seed));
	if (!lb_tap_ok(setup(&st, &backend_ops) == 0, "create"))
		return lb_tap_done();
	lb_tap_diag("instance path: %s (process: %s)",
		    st.path == LB_CPU_PATH_RSEQ ? "rseq" : "lock",
		    lb_cpu_path_name());
	lb_tap_ok(st.path == lb_cpu_path(),
		  "the instance takes the process's path");
	run(secs / 2);
	lb_tap_ok(lb_cpubatch_destroy(pc) == 0, "destroy");
	backend_fixture.pc = NULL;
	tally(&t);
	lb_tap_diag("%" PRIu64 " adds, %" PRIu64 " drains, %" PRIu64
		    " signals", t.adds, drains, sigs);
	lb_tap_ok(!errors, "no unexpected errors (%" PRIu64 ")", errors);
	lb_tap_ok(!t.off && t.adds == t.commits,
		  "every accepted add committed exactly once (%" PRIu64
		  " adds, %" PRIu64 " commits, %" PRIu64 " objects off)",
		  t.adds, t.commits, t.off);
	lb_tap_ok(!t.refs && !t.cached,
		  "get/put balanced, every node not cached (%" PRIu64
		  " with refs, %" PRIu64 " cached)", t.refs, t.cached);
	lb_tap_ok(!cached_while_off,
		  "nothing cached while disabled (%" PRIu64 " times)",
		  cached_while_off);
	lb_tap_ok(sigs > 0 && drains > 0, "signals and drains ran");
	lb_tap_ok(forks > 0 && !forks_bad,
		  "fork() children add and drain (%" PRIu64 " forks, %" PRIu64
		  " failed)", forks, forks_bad);
	report_order(1);

	errors = 0;
	if (!lb_tap_ok(setup(&st, &ops_noget) == 0 &&
			       st.path == lb_cpu_path(),
		       "without @get: create, the process's path"))
		return lb_tap_done();
	run(secs / 2);
	rc = lb_cpubatch_destroy(pc);
	backend_fixture.pc = NULL;
	tally(&t);
	lb_tap_ok(rc == 0 && !errors && !t.off && t.adds == t.commits &&
			  !t.cached,
		  "without @get: destroy, every accepted add committed "
		  "exactly once (%" PRIu64 " adds, %" PRIu64 " commits, %"
		  PRIu64 " objects off, %" PRIu64 " errors)",
		  t.adds, t.commits, t.off, errors);
	return lb_tap_done();
}
