// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_pcp on its real owner path (plain pthreads, TAP): workers allocate
 * and free mixed orders (mostly order 0, the magazine's) while their
 * affinity flips between single CPUs and the whole machine; a signaller
 * interrupts them with a handler that allocates and frees too (from a
 * second cache, which the interrupted code never uses, so the handler
 * cannot meet its own thread's lock-path hold; DOC: Owner path); a
 * drainer runs drains of single slots, drain_all, decay and stats; the
 * decay thread ticks every millisecond; a forker forks and the child uses
 * the cache. Every object must be handed out to one holder at a time, the
 * back-end must never get an object twice, every back-end hold is counted
 * under one cause, and after the final drain every object is back.
 *
 * Runs with the rseq path where the machine has it and with the lock path
 * forced by LB_PCP_F_LOCK_PATH. Built once more with
 * LBI_RSEQ_BROKEN_NO_STOP_CHECK (the sections skip the stop check) as a
 * negative control: it passes when the same checks catch the damage within
 * its time bound.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lockbatch/cpu.h>
#include <lockbatch/pcp.h>
#include "../common/affinity.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/tap.h"
#include "../common/pcp_backend.h"

#define NR_WORKERS 3
#define PER_ORDER 600
#define LIVE_MAX 128
#define NR_SLOTS 256	/* at least one per possible CPU id */

static struct lb_pcp *p, *sig_p;
static struct tb b, sig_b;
static unsigned char held[4 * PER_ORDER];
static uint64_t dups, errors, sig_ops, signals_sent, drains, forks_bad;
static int stop_workers, stop_helpers, nr_cpus;
static pthread_t workers[NR_WORKERS];

static void take(void *obj)
{
	struct tb_obj *o = obj;

	if (__atomic_exchange_n(&held[o->id], 1, __ATOMIC_ACQ_REL))
		__atomic_add_fetch(&dups, 1, __ATOMIC_RELAXED);
}

static void give(void *obj)
{
	__atomic_store_n(&held[((struct tb_obj *)obj)->id], 0,
			 __ATOMIC_RELEASE);
}

static void on_signal(int sig)
{
	void *obj;
	int e = errno;

	(void)sig;
	if (!lb_pcp_alloc(sig_p, 0, &obj)) {
		lb_pcp_free(sig_p, obj, 0);
		__atomic_add_fetch(&sig_ops, 1, __ATOMIC_RELAXED);
	}
	errno = e;
}

static void *work(void *arg)
{
	void *live[LIVE_MAX];
	unsigned int order[LIVE_MAX], nr = 0, k = 0;
	unsigned long ops = 0;
	struct lb_rng g;

	lb_rng_seed(&g, lb_test_seed(0x9c9 + (uintptr_t)arg));
	while (!__atomic_load_n(&stop_workers, __ATOMIC_ACQUIRE)) {
		if (nr < LIVE_MAX && (!nr || lb_rng_below(&g, 2))) {
			unsigned int o = lb_rng_below(&g, 8) < 7 ? 0 :
					 lb_rng_below(&g, 4);
			int err = lb_pcp_alloc(p, o, &live[nr]);

			if (!err) {
				take(live[nr]);
				order[nr++] = o;
			} else if (err != -ENOMEM) {
				__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
			}
		} else {
			unsigned int i = lb_rng_below(&g, nr);
			void *obj = live[i];

			give(obj);
			if (lb_pcp_free(p, obj, order[i]))
				__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
			live[i] = live[--nr];
			order[i] = order[nr];
		}
		if (++ops % 256 == 0) {
			k++;
			lb_test_pin(k % 3 == 2 ? -1 : (int)(k % (unsigned)nr_cpus),
				    nr_cpus);
		}
	}
	while (nr) {
		nr--;
		give(live[nr]);
		lb_pcp_free(p, live[nr], order[nr]);
	}
	return NULL;
}

/* The child of a fork in mid-run: every slot unlocked and running. */
static void fork_once(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return;
	if (!pid) {
		void *obj;

		alarm(10);
		if (lb_pcp_alloc(p, 0, &obj) == 0)
			lb_pcp_free(p, obj, 0);
		lb_pcp_drain_all(p);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		__atomic_add_fetch(&forks_bad, 1, __ATOMIC_RELAXED);
}

static void *drainer(void *arg)
{
	struct lb_pcp_stats st;
	unsigned int n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop_helpers, __ATOMIC_ACQUIRE)) {
		switch (n++ % 5) {
		case 0:
			lb_pcp_decay(p);
			break;
		case 1:
			lb_pcp_drain_all(p);
			break;
		case 2:
			lb_pcp_stats(p, &st, NULL, 0);
			break;
		case 3:
			if (n % 64 == 3)
				fork_once();
			break;
		default:
			lb_pcp_drain(p, (int)(n / 5 % (unsigned)nr_cpus));
			break;
		}
		__atomic_add_fetch(&drains, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *signaller(void *arg)
{
	struct timespec ts = { 0, 100000 };
	int i;

	(void)arg;
	while (!__atomic_load_n(&stop_helpers, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < NR_WORKERS; i++)
			if (pthread_kill(workers[i], SIGUSR1) == 0)
				__atomic_add_fetch(&signals_sent, 1,
						   __ATOMIC_RELAXED);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static struct lb_pcp *make(struct tb *tb, enum lb_pcp_tuner t, bool lock)
{
	struct lb_pcp_conf c;
	struct lb_pcp *q;

	if (tb_init(tb, 4, PER_ORDER))
		return NULL;
	tb_conf(&c, tb, NULL, t, 16, 32, 1024);
	c.nr_slots = NR_SLOTS;
	c.cpu_fn = NULL;
	c.clock_fn = NULL;
	c.decay_interval_ns = 1000000;
	c.expire = 1;
	c.lock_kind = LB_LOCK_SPIN;
	c.flags = lock ? LB_PCP_F_LOCK_PATH : 0;
	return lb_pcp_create(&q, &c) ? NULL : q;
}

/* One round of @secs; returns whether the cache ran the rseq path. */
static bool round_run(enum lb_pcp_tuner t, bool lock, double secs,
		      struct lb_pcp_stats *st)
{
	struct timespec ts = { (time_t)secs,
			       (long)((secs - (double)(time_t)secs) * 1e9) };
	pthread_t d, s;
	int i;

	p = make(&b, t, lock);
	sig_p = make(&sig_b, t, lock);
	if (!p || !sig_p) {
		printf("Bail out! cache creation\n");
		exit(1);
	}
	memset(held, 0, sizeof(held));
	dups = errors = sig_ops = signals_sent = drains = forks_bad = 0;
	stop_workers = stop_helpers = 0;
	lb_pcp_decay_thread_start(p);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_create(&workers[i], NULL, work, (void *)(uintptr_t)i);
	pthread_create(&d, NULL, drainer, NULL);
	pthread_create(&s, NULL, signaller, NULL);
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop_helpers, 1, __ATOMIC_RELEASE);
	pthread_join(s, NULL);
	pthread_join(d, NULL);
	__atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i], NULL);
	lb_pcp_decay_thread_stop(p);
	lb_pcp_stats(p, st, NULL, 0);
	lb_pcp_drain_all(p);
	lb_pcp_drain_all(sig_p);
	return st->rseq;
}

#ifdef LBI_RSEQ_BROKEN_NO_STOP_CHECK
/* Damage the checks see; 0 on a clean round. */
static uint64_t damage(const struct lb_pcp_stats *st)
{
	uint64_t holds = st->total.refills + st->total.flushes +
			 st->total.decay_drains + st->total.drains;

	return dups + b.errors + sig_b.errors + tb_units_out(&b) +
	       tb_units_out(&sig_b) + (holds != st->backend_locks);
}
#endif

static void round_end(void)
{
	lb_pcp_destroy(p);
	lb_pcp_destroy(sig_p);
	tb_fini(&b);
	tb_fini(&sig_b);
}

static void run_mode(enum lb_pcp_tuner t, bool lock)
{
	const char *name = lb_pcp_tuner_name(t);
	const char *path = lock ? "lock path (conf flag)" : "owner path";
	struct lb_pcp_stats st;
	bool rseq = round_run(t, lock, lb_stress_iters(1, 10) * 0.2, &st);
	uint64_t holds = st.total.refills + st.total.flushes +
			 st.total.decay_drains + st.total.drains;

	/* Steals (ADAPTIVE) run beside the peer's sections, unfenced. */
	lb_tap_diag("%s, %s: runs %s; %" PRIu64 " allocs, %" PRIu64
		    " remote calls, %" PRIu64 " steals, %" PRIu64 " signals, %"
		    PRIu64 " handler pairs", name, path, rseq ? "rseq" : "lock",
		    st.total.allocs, drains, st.total.steals, signals_sent,
		    sig_ops);
	lb_tap_ok(dups == 0 && errors == 0,
		  "%s, %s: one holder per object (%" PRIu64
		  " handed out twice, %" PRIu64 " failed calls)", name, path,
		  dups, errors);
	lb_tap_ok(holds == st.backend_locks,
		  "%s, %s: holds add up (%" PRIu64 " causes, %" PRIu64
		  " holds)", name, path, holds, st.backend_locks);
	lb_tap_ok(!tb_units_out(&b) && !b.errors && !tb_units_out(&sig_b) &&
		  !sig_b.errors,
		  "%s, %s: conserved (out %" PRIu64 "+%" PRIu64
		  ", double returns %" PRIu64 "+%" PRIu64 ")", name, path,
		  tb_units_out(&b), tb_units_out(&sig_b), b.errors,
		  sig_b.errors);
	lb_tap_ok(!forks_bad && (lock || !rseq || sig_ops > 0),
		  "%s, %s: fork children ran, handlers used the cache (%"
		  PRIu64 " bad children, %" PRIu64 " handler pairs)", name,
		  path, forks_bad, sig_ops);
	round_end();
}

#ifdef LBI_RSEQ_BROKEN_NO_STOP_CHECK
/*
 * One round in a child: 0 clean, 2 damage the checks saw, 3 no rseq path;
 * a damaged cache may also loop on a corrupted list (killed by the alarm)
 * or crash.
 */
static int child_round(void)
{
	struct lb_pcp_stats st;
	pid_t pid = fork();
	int status;

	if (!pid) {
		alarm(5);
		if (!round_run(LB_PCP_TUNE_LINUX, false, 0.5, &st))
			_exit(3);
		_exit(damage(&st) ? 2 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 3;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void negative_control(void)
{
	double limit = lb_stress_iters(30, 60), el = 0;
	struct timespec t0, t;
	int rounds = 0, rc = 0;

	lb_tap_plan(1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!rc && el < limit) {
		rc = child_round();
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (double)(t.tv_sec - t0.tv_sec) +
		     (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	if (rc == 3 || nr_cpus < 2) {
		lb_tap_ok(1, "# SKIP needs the rseq path and 2 CPUs (%s)",
			  lb_cpu_path_name());
		exit(0);
	}
	lb_tap_ok(rc != 0,
		  "without the stop check the test catches it: %s, after %d rounds (%.1f s)",
		  rc == 2 ? "objects handed out twice, returned twice or missing" :
		  rc == 128 + SIGALRM ? "a corrupted list wedged the cache" :
		  rc ? "the cache crashed" : "nothing", rounds, el);
	exit(lb_tap_done());
}
#endif

int main(void)
{
	struct sigaction sa;
	enum lb_pcp_tuner t;

	nr_cpus = (int)lb_cpu_count();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
#ifdef LBI_RSEQ_BROKEN_NO_STOP_CHECK
	negative_control();
#endif
	lb_tap_plan(8 * LB_PCP_TUNE_NR);
	lb_tap_diag("process path: %s", lb_cpu_path_name());
	for (t = 0; t < LB_PCP_TUNE_NR; t++) {
		run_mode(t, false);
		run_mode(t, true);
	}
	return lb_tap_done();
}
