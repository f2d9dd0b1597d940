// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The rseq owner path under fire: workers push and pop numbered tokens on
 * a per-CPU stack (tests/common/rseq_stack.h) while their affinity flips
 * between CPUs, a signaller interrupts them with handlers that pop and
 * push too, a drainer stops, fences and empties remote slots, and a forker
 * checks that a child finds every slot unlocked and running. Every token
 * must come out exactly once, and no slot may change while it is stopped.
 * Runs on the rseq path and on the lock path (the conf flag), and again
 * under LB_RSEQ=0 and GLIBC_TUNABLES=glibc.pthread.rseq=0 from the shell
 * tests.
 *
 * Built twice more as negative controls, with LBI_RSEQ_BROKEN_NO_STOP_CHECK
 * (the sections skip the stop check) and with LB_RS_NO_FENCE (remote
 * drains stop without fencing): each must see a slot change while stopped,
 * or a token lost or duplicated, within its time bound.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/affinity.h"
#include "../common/env.h"
#include "../common/prng.h"
#include "../common/rseq_stack.h"
#include "../common/tap.h"

#define NR_WORKERS 4
#define NR_TOKENS 4096
#define STASH 64

static struct lb_rs_stack st;
static int stop_workers, stop_helpers;
static uint64_t sig_ops, signals_sent, owner_ops, drains;
static int drain_changes, fence_errors;
static unsigned int hold_spins;
static pthread_t workers[NR_WORKERS];
static int nr_cpus;

static void on_signal(int sig)
{
	void *p = lb_rs_pop(&st);

	(void)sig;
	if (p)
		lb_rs_push(&st, p);
	ck_pr_inc_64(&sig_ops);
}

static void *worker(void *arg)
{
	struct lb_rng rng;
	void *stash[STASH];
	unsigned int n = 0, k = 0;
	unsigned long ops = 0;

	lb_rng_seed(&rng, 0x5eed + (uintptr_t)arg);
	while (!ck_pr_load_int(&stop_workers)) {
		if (n && (n == STASH || lb_rng_below(&rng, 2))) {
			lb_rs_push(&st, stash[--n]);
		} else {
			void *p = lb_rs_pop(&st);

			if (p)
				stash[n++] = p;
		}
		/* Flip between single CPUs and the whole machine. */
		if (++ops % 512 == 0) {
			k++;
			lb_test_pin(k % 3 == 2 ? -1 : (int)(k % (unsigned)nr_cpus),
				    nr_cpus);
		}
	}
	while (n)
		lb_rs_push(&st, stash[--n]);
	ck_pr_add_64(&owner_ops, ops);
	return NULL;
}

static void *drainer(void *arg)
{
	int cpu, c;

	(void)arg;
	while (!ck_pr_load_int(&stop_helpers)) {
		for (cpu = 0; cpu < (int)st.l.nr_slots; cpu++) {
			c = lb_rs_drain(&st, cpu, hold_spins);
			ck_pr_inc_64(&drains);
			if (c < 0)
				ck_pr_inc_int(&fence_errors);
			else
				ck_pr_add_int(&drain_changes, c);
		}
		sched_yield();
	}
	return NULL;
}

static void *signaller(void *arg)
{
	struct timespec ts = { 0, 50000 };
	int i;

	(void)arg;
	while (!ck_pr_load_int(&stop_helpers)) {
		for (i = 0; i < NR_WORKERS; i++)
			if (pthread_kill(workers[i], SIGUSR1) == 0)
				ck_pr_inc_64(&signals_sent);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Child of a fork in mid-run: every slot free and running, stack usable. */
static int fork_check(void)
{
	pid_t pid = fork();
	int status, i;

	if (pid < 0)
		return 0;
	if (pid == 0) {
		void *p;

		for (i = 0; i < (int)st.l.nr_slots; i++)
			if (st.slots[i].hdr.stop ||
			    ck_spinlock_fas_locked(&st.slots[i].lock))
				_exit(1);
		/* The inherited registrations still work in the child. */
		p = lb_rs_pop(&st);
		if (p)
			lb_rs_push(&st, p);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Every token exactly once; empties the stack. */
static int conserved(unsigned int *lost, unsigned int *dup)
{
	static unsigned char seen[NR_TOKENS + 1];
	uint32_t cpu;
	size_t i;

	for (cpu = 0; cpu < st.l.nr_slots; cpu++)
		lb_rs_drain(&st, (int)cpu, 0);
	memset(seen, 0, sizeof(seen));
	*lost = 0;
	*dup = (unsigned int)st.be_overflow;
	for (i = 0; i < st.be_n; i++) {
		uintptr_t id = (uintptr_t)st.be[i];

		if (id == 0 || id > NR_TOKENS || seen[id]++)
			(*dup)++;
	}
	for (i = 1; i <= NR_TOKENS; i++)
		if (!seen[i])
			(*lost)++;
	return *lost == 0 && *dup == 0;
}

struct round {
	int fork_ok;
	unsigned int lost, dup;
};

static void run_round(double secs, struct round *r)
{
	pthread_t d, s;
	struct timespec half = { 0, 0 };
	int i;

	half.tv_sec = (time_t)(secs / 2);
	half.tv_nsec = (long)((secs / 2 - (double)half.tv_sec) * 1e9);
	stop_workers = stop_helpers = 0;
	for (i = 0; i < NR_WORKERS; i++)
		pthread_create(&workers[i], NULL, worker, (void *)(uintptr_t)i);
	pthread_create(&d, NULL, drainer, NULL);
	pthread_create(&s, NULL, signaller, NULL);
	nanosleep(&half, NULL);
	r->fork_ok = fork_check();
	nanosleep(&half, NULL);
	ck_pr_store_int(&stop_helpers, 1);
	pthread_join(s, NULL);
	pthread_join(d, NULL);
	ck_pr_store_int(&stop_workers, 1);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(workers[i], NULL);
	conserved(&r->lost, &r->dup);
}

static void fill(void)
{
	uintptr_t id;

	for (id = 1; id <= NR_TOKENS; id++)
		lb_rs_push(&st, (void *)id);
}

static void setup(bool force_lock)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (lb_rs_init(&st, force_lock, true, NR_TOKENS + LB_RS_CAP)) {
		printf("Bail out! lb_rs_init\n");
		exit(1);
	}
	sig_ops = signals_sent = owner_ops = drains = 0;
	drain_changes = fence_errors = 0;
	st.lock_ops = 0;
	fill();
}

static void run_mode(const char *name, bool force_lock)
{
	struct round r;
	double secs = lb_stress_iters(1, 20);

	setup(force_lock);
	hold_spins = 1000;
	run_round(secs, &r);
	lb_tap_diag("%s: path %s, %" PRIu64 " owner ops (%" PRIu64 " on the lock path), %" PRIu64 " remote drains, %" PRIu64 " signals sent, %" PRIu64 " handler ops",
		    name, st.rseq ? "rseq" : "lock", owner_ops, st.lock_ops,
		    drains, signals_sent, sig_ops);
	lb_tap_ok(r.lost == 0 && r.dup == 0,
		  "%s: every token once (%u lost, %u duplicated)", name,
		  r.lost, r.dup);
	lb_tap_ok(drain_changes == 0 && fence_errors == 0,
		  "%s: no slot changed while stopped (%d changes, %d fence errors)",
		  name, drain_changes, fence_errors);
	lb_tap_ok(r.fork_ok, "%s: fork child finds every slot free and running",
		  name);
	lb_tap_ok(sig_ops > 0, "%s: signal handlers used the stack (%" PRIu64 ")",
		  name, sig_ops);
	lb_rs_fini(&st);
}

#if defined(LBI_RSEQ_BROKEN_NO_STOP_CHECK) || LB_RS_NO_FENCE
/* Rounds until the broken sections are caught, at most @limit seconds. */
static void negative_control(void)
{
	struct timespec t0, t;
	struct round r;
	int rounds = 0, caught = 0;
	double limit = lb_stress_iters(30, 60), el = 0;

	lb_tap_plan(1);
	setup(false);
	if (!st.rseq || nr_cpus < 2) {
		lb_tap_ok(1, "# SKIP needs the rseq path and 2 CPUs (%s)",
			  lb_cpu_path_name());
		exit(0);
	}
	hold_spins = 20000;	/* a wide stopped window */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!caught && el < limit) {
		run_round(0.5, &r);
		rounds++;
		caught = drain_changes > 0 || r.lost || r.dup;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (double)(t.tv_sec - t0.tv_sec) +
		     (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
		if (!caught) {	/* next round starts from a full set */
			st.be_n = st.be_overflow = 0;
			fill();
		}
	}
	lb_tap_ok(caught,
		  "without the %s the test catches it: %d changes while stopped, %u lost, %u duplicated, after %d rounds (%.1f s)",
		  LB_RS_NO_FENCE ? "fence" : "stop check", drain_changes,
		  r.lost, r.dup, rounds, el);
	exit(lb_tap_done());
}
#endif

int main(void)
{
	nr_cpus = (int)lb_cpu_count();
#if defined(LBI_RSEQ_BROKEN_NO_STOP_CHECK) || LB_RS_NO_FENCE
	negative_control();
#endif
	lb_tap_plan(8);
	lb_tap_diag("process path: %s", lb_cpu_path_name());
	run_mode("owner path", false);
	run_mode("lock path (conf flag)", true);
	return lb_tap_done();
}
