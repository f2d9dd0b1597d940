// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp's decay thread against its own callbacks and fork().
 *
 *  1. A back-end callback on the decay thread (a decay drain) calls
 *     lb_pcp_decay_thread_stop() and lb_pcp_destroy(): both return
 *     -EDEADLK, change nothing, and the thread keeps running.
 *  2. fork() while the decay thread is inside a tick, deterministically:
 *     the tick's first drain waits in the back-end until fork() has begun
 *     (a prepare handler registered after the cache, so it runs before the
 *     library's), and the slots after it are still to be decayed. The
 *     child stops (-ENOENT), ticks, decays, allocates, frees, starts and
 *     stops a decay thread of its own, destroys, and finds every object.
 *     Without lib/pcp/fork.c the child's tick mutex is copied held and the
 *     child hangs (its alarm fails it).
 *  3. fork() again and again while the decay thread ticks on the real
 *     clock and a worker allocates and frees on its real CPU: every child
 *     decays, allocates, frees and destroys.
 *
 * Plain pthreads and TAP; run under ASan by the sanitizer build. A child
 * of a threaded process under ThreadSanitizer may not create threads:
 * there it skips its own decay thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lockbatch/pcp.h>
#include "../common/env.h"
#include "../common/pcp_backend.h"
#include "../common/prng.h"
#include "../common/tap.h"

#if defined(__SANITIZE_THREAD__)
#define TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN 1
#endif
#endif
#ifndef TSAN
#define TSAN 0
#endif

#define INTERVAL_NS 1000000ull	/* injected clock: one tick per step */
#define NLIVE 16
#define WORKER_MAX 64

enum on_decay { ON_DECAY_NONE, ON_DECAY_STOP, ON_DECAY_HOLD };

static struct tb pool;
static struct tb_env env;
static struct lb_pcp *cache;
static pthread_t main_thread;
/* All atomic: set by main, read by the decay thread's callback. */
static int on_decay;
static int stop_rc, destroy_rc, called_back;
static int in_tick, fork_started;

static int load(const int *v)
{
	return __atomic_load_n(v, __ATOMIC_ACQUIRE);
}

static void store(int *v, int x)
{
	__atomic_store_n(v, x, __ATOMIC_RELEASE);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Until *@v becomes nonzero or @secs pass; the value seen. */
static int wait_for(const int *v, double secs)
{
	double end = now_s() + secs;

	while (!load(v) && now_s() < end)
		sched_yield();
	return load(v);
}

/* The pool's free_bulk, plus what a test arms for the decay thread. */
static void free_bulk(void *ctx, unsigned int order, void **objs,
		      unsigned int n)
{
	if (!pthread_equal(pthread_self(), main_thread)) {
		switch (load(&on_decay)) {
		case ON_DECAY_STOP:
			store(&on_decay, ON_DECAY_NONE);
			store(&stop_rc, lb_pcp_decay_thread_stop(cache));
			store(&destroy_rc, lb_pcp_destroy(cache));
			store(&called_back, 1);
			break;
		case ON_DECAY_HOLD:
			store(&on_decay, ON_DECAY_NONE);
			store(&in_tick, 1);
			wait_for(&fork_started, 10);
			break;
		}
	}
	tb_free_bulk(ctx, order, objs, n);
}

/* Runs before the library's prepare handlers (registered after them). */
static void note_fork(void)
{
	store(&fork_started, 1);
}

/* Four slots on the injected CPU and clock; expire after one idle tick. */
static int make_cache(void)
{
	struct lb_pcp_conf c;

	if (tb_init(&pool, 1, 256))
		return -ENOMEM;
	tb_conf(&c, &pool, &env, LB_PCP_TUNE_FIXED, 4, 16, 16);
	c.max_order = 0;
	c.backend.free_bulk = free_bulk;
	c.decay_interval_ns = INTERVAL_NS;
	c.expire = 1;
	env.cpu = 0;
	env.now = 0;
	return lb_pcp_create(&cache, &c);
}

/* Allocate @n on @slot and free them there: cached in the slot. */
static int fill(int slot, unsigned int n)
{
	void *o[16];
	unsigned int i;
	int ok = 1;

	env.cpu = slot;
	for (i = 0; i < n; i++)
		ok &= lb_pcp_alloc(cache, 0, &o[i]) == 0;
	for (i = 0; i < n; i++)
		ok &= lb_pcp_free(cache, o[i], 0) == 0;
	return ok;
}

/* Move the injected clock a tick at a time until *@flag is set. */
static int tick_until(const int *flag)
{
	double end = now_s() + 20;

	while (!load(flag) && now_s() < end) {
		__atomic_add_fetch(&env.now, INTERVAL_NS, __ATOMIC_RELEASE);
		wait_for(flag, 0.002);
	}
	return load(flag);
}

/* The cache is gone and the pool has every object back. */
static int cache_end(void)
{
	int ok = lb_pcp_destroy(cache) == 0 && tb_units_out(&pool) == 0 &&
		 pool.errors == 0;

	tb_fini(&pool);
	return ok;
}

static void test_stop_on_decay_thread(void)
{
	int ok = make_cache() == 0 && lb_pcp_decay_thread_start(cache) == 0 &&
		 fill(0, 8);

	store(&called_back, 0);
	store(&on_decay, ON_DECAY_STOP);
	ok &= tick_until(&called_back);
	lb_tap_ok(ok && load(&stop_rc) == -EDEADLK &&
		  load(&destroy_rc) == -EDEADLK,
		  "decay_thread_stop and destroy from a callback on the decay "
		  "thread: -EDEADLK (%d, %d)", load(&stop_rc), load(&destroy_rc));
	ok = lb_pcp_decay_thread_start(cache) == -EEXIST &&
	     lb_pcp_decay_thread_stop(cache) == 0 &&
	     lb_pcp_decay_thread_stop(cache) == -ENOENT;
	lb_tap_ok(ok && cache_end(), "the thread ran on; stopped from outside, "
		  "the cache destroys with nothing lost");
}

/* Wait for the child; true if it exited with status 0. */
static int child_ok(pid_t pid, const char *what)
{
	int st = -1;

	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 0;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	lb_tap_diag("%s: child status %#x", what, st);
	return 0;
}

/* Its own decay thread in the child: starts, ticks, stops. */
static int child_thread(void)
{
	struct lb_pcp_stats st;
	uint64_t t0;
	double end = now_s() + 5;

	if (TSAN)
		return 1;
	lb_pcp_stats(cache, &st, NULL, 0);
	t0 = st.ticks;
	if (lb_pcp_decay_thread_start(cache))
		return 0;
	do {
		__atomic_add_fetch(&env.now, INTERVAL_NS, __ATOMIC_RELEASE);
		usleep(1000);
		lb_pcp_stats(cache, &st, NULL, 0);
	} while (st.ticks == t0 && now_s() < end);
	return lb_pcp_decay_thread_stop(cache) == 0 && st.ticks > t0;
}

/* The child of a fork() inside a tick: every call works. */
static int child_in_tick(void **live)
{
	void *o;
	unsigned int i;
	int ok;

	alarm(20);
	ok = lb_pcp_decay_thread_stop(cache) == -ENOENT;
	env.now += INTERVAL_NS;
	ok &= lb_pcp_tick(cache) == 1 && lb_pcp_decay(cache) >= 0;
	env.cpu = 3;
	ok &= lb_pcp_alloc(cache, 0, &o) == 0 && lb_pcp_free(cache, o, 0) == 0;
	for (i = 0; i < NLIVE; i++)
		ok &= lb_pcp_free(cache, live[i], 0) == 0;
	ok &= child_thread();
	return ok && cache_end();
}

static void test_fork_in_tick(void)
{
	static int registered;
	void *live[NLIVE];
	unsigned int i;
	pid_t pid;
	int ok = make_cache() == 0 && lb_pcp_decay_thread_start(cache) == 0;

	/* After the library's hooks exist, so it runs before them. */
	if (!registered++)
		ok &= pthread_atfork(note_fork, NULL, NULL) == 0;
	env.cpu = 1;
	for (i = 0; i < NLIVE; i++)	/* held by the user across fork() */
		ok &= lb_pcp_alloc(cache, 0, &live[i]) == 0;
	ok &= fill(0, 8) && fill(2, 8);
	store(&in_tick, 0);
	store(&fork_started, 0);
	store(&on_decay, ON_DECAY_HOLD);
	ok &= tick_until(&in_tick);
	pid = fork();
	if (pid == 0)
		_exit(child_in_tick(live) ? 0 : 1);
	ok &= child_ok(pid, "fork in a tick");
	lb_tap_ok(ok, "fork() while the decay thread is inside a tick: the "
		  "child ticks, allocates, frees, runs a decay thread and "
		  "destroys");
	ok = lb_pcp_decay_thread_stop(cache) == 0;
	for (i = 0; i < NLIVE; i++)
		ok &= lb_pcp_free(cache, live[i], 0) == 0;
	lb_tap_ok(ok && cache_end(), "the parent after it: nothing lost");
}

/* Real CPU and clock: allocates and frees in bursts until told to stop. */
static int worker_stop;
static void *live_w[WORKER_MAX];
static unsigned int nr_live_w;	/* atomic: objects in live_w */

static void *worker(void *arg)
{
	struct lb_rng r;

	lb_rng_seed(&r, *(uint64_t *)arg);
	while (!load(&worker_stop)) {
		unsigned int n = __atomic_load_n(&nr_live_w, __ATOMIC_RELAXED);
		void *o;

		if (n < WORKER_MAX && (n == 0 || lb_rng_below(&r, 2))) {
			if (lb_pcp_alloc(cache, 0, &o))
				continue;
			live_w[n] = o;
			__atomic_store_n(&nr_live_w, n + 1, __ATOMIC_RELEASE);
		} else {
			__atomic_store_n(&nr_live_w, n - 1, __ATOMIC_RELEASE);
			lb_pcp_free(cache, live_w[n - 1], 0);
		}
	}
	return NULL;
}

/*
 * The worker may hold one object between its alloc and its count (or its
 * count and its free) at the fork: the child frees what the count says.
 */
static int child_busy(void)
{
	unsigned int i, n = __atomic_load_n(&nr_live_w, __ATOMIC_ACQUIRE);
	void *o;
	int ok;

	alarm(20);
	ok = lb_pcp_decay(cache) >= 0 && lb_pcp_tick(cache) >= 0;
	ok &= lb_pcp_alloc(cache, 0, &o) == 0 && lb_pcp_free(cache, o, 0) == 0;
	for (i = 0; i < n; i++)
		ok &= lb_pcp_free(cache, live_w[i], 0) == 0;
	ok &= lb_pcp_destroy(cache) == 0 && tb_units_out(&pool) <= 1 &&
	      pool.errors == 0;
	return ok;
}

static void test_fork_busy(uint64_t seed)
{
	struct lb_pcp_conf c;
	unsigned long i, forks = lb_stress_iters(20, 400), bad = 0;
	pthread_t w;
	int ok = tb_init(&pool, 1, 1024) == 0;

	tb_conf(&c, &pool, &env, LB_PCP_TUNE_LINUX, 8, 32, 128);
	c.nr_slots = 0;			/* one per CPU: the real CPU */
	c.max_order = 0;
	c.cpu_fn = NULL;
	c.clock_fn = NULL;		/* the real clock */
	c.decay_interval_ns = 100000;
	c.expire = 1;
	ok &= lb_pcp_create(&cache, &c) == 0 &&
	      lb_pcp_decay_thread_start(cache) == 0;
	store(&worker_stop, 0);
	nr_live_w = 0;
	ok &= pthread_create(&w, NULL, worker, &seed) == 0;
	for (i = 0; ok && i < forks; i++) {
		pid_t pid;

		usleep(500);
		pid = fork();
		if (pid == 0)
			_exit(child_busy() ? 0 : 1);
		bad += !child_ok(pid, "fork under load");
	}
	store(&worker_stop, 1);
	pthread_join(w, NULL);
	lb_tap_ok(ok && !bad, "fork() while the decay thread ticks and a "
		  "worker allocates: every child decays, frees and destroys "
		  "(%lu forks, %lu failed)", i, bad);
	ok = lb_pcp_decay_thread_stop(cache) == 0;
	for (i = 0; i < nr_live_w; i++)
		ok &= lb_pcp_free(cache, live_w[i], 0) == 0;
	lb_tap_ok(ok && cache_end(), "the parent after them: nothing lost");
}

int main(void)
{
	uint64_t seed = lb_test_seed(0xdeca7);

	main_thread = pthread_self();
	lb_tap_plan(6);
	lb_tap_diag(LB_SEED_FMT, LB_SEED_ARGS(seed));
	test_stop_on_decay_thread();
	test_fork_in_tick();
	test_fork_busy(seed);
	return lb_tap_done();
}
