// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The owner never enters the kernel (DOC: System calls, lockbatch/cpu.h):
 * owner calls of lb_pcp (order-0 allocs and frees, with the refills,
 * flushes, magazine reloads and spills they make themselves, and higher
 * orders, which always take the lock path) and of lb_cpubatch (adds, with
 * a flush every 31st entry or weight, and bypassing adds) run in a thread
 * whose every system call is trapped by a seccomp filter. The trap's
 * handler counts each one and records its number, and the call is skipped
 * (-ENOSYS), so one slipping into an owner path fails this test whatever
 * the call was (membarrier, futex, sched_yield, an mmap of a malloc, a
 * clock without vDSO).
 *
 * Why seccomp: it needs no privilege (PR_SET_NO_NEW_PRIVS), no tracer
 * and no tool installed (strace -c or perf would be one), applies to the
 * one thread that installs it, and sees every entry into the kernel. A
 * positive control (a getpid() made on purpose inside the filter) shows
 * the trap is live. Sanitizer builds skip it (see main(): their runtimes
 * make or defer calls of their own). Where the kernel or a sandbox refuses
 * filters the seccomp checks are skipped and the library's own counter
 * (&lb_pcp_stats.owner_fences) is still checked.
 *
 * The owner's thread is pinned to one CPU, so no migration between a
 * section and its lock path (the one owner fence DOC: System calls allows)
 * can happen. Then the main thread, on another CPU, drains the owner's
 * slot: a remote access, which must fence (&lb_pcp_stats.fences goes up
 * on the rseq path) while owner_fences stays 0. Both paths run: the
 * default (rseq where registered) and the lock path forced.
 */
#include "config.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <lockbatch/cpu.h>
#include <lockbatch/cpubatch.h>
#include <lockbatch/lock.h>
#include <lockbatch/pcp.h>
#include "../common/affinity.h"
#include "../common/pcp_backend.h"
#include "../common/tap.h"

#define PER_ORDER 4096		/* objects per order in the back-end */
#define BURST 2000		/* beyond the magazine: refills and spills */
#define ROUNDS 20
#define NR_ITEMS 512
#define MAX_SEEN 16

/* What the trap saw: counted in the handler, read after the join. */
static volatile sig_atomic_t trapping;
static uint64_t trapped;
static long seen_nr[MAX_SEEN];

/*
 * SIGSYS from the filter: count the call, remember its number, skip it
 * (the kernel did not run it; the caller sees -ENOSYS). Only while
 * @trapping: the thread's exit path makes calls of its own after the
 * measured part.
 */
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t n;

	(void)sig;
	if (trapping) {
		n = __atomic_fetch_add(&trapped, 1, __ATOMIC_RELAXED);
		if (n < MAX_SEEN)
			seen_nr[n] = si->si_syscall;
	}
#ifdef __x86_64__
	uc->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
	(void)uc;
#endif
}

/*
 * Trap every system call of the calling thread but those the trap and
 * the thread's end need (rt_sigreturn, exit, exit_group). A foreign
 * architecture's calls are trapped too. Return: 0, or -errno when the
 * kernel refuses filters.
 */
static int trap_all_syscalls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(f) / sizeof(f[0])),
		.filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}

/* lb_cpubatch's back-end: a count under an lb_lock (a ck spinlock). */
static struct lb_lock be_lock;
static uint64_t committed;

static void cb_lock(void *b)
{
	(void)b;
	lb_lock_acquire(&be_lock);
}

static void cb_unlock(void *b)
{
	(void)b;
	lb_lock_release(&be_lock);
}

static void cb_commit(void *b, void **objs, unsigned int n)
{
	(void)b;
	(void)objs;
	committed += n;
}

static const struct lb_backend_ops cb_ops = {
	.lock = cb_lock,
	.unlock = cb_unlock,
	.commit = cb_commit,
};

struct item {
	struct lb_node node;
};

struct owner {
	struct lb_pcp *p;
	struct lb_cpubatch *pc;
	struct item *items;
	void **held;
	int cpu;		/* pinned to it, or -1 */
	int filter_err;		/* trap_all_syscalls() */
	uint64_t errors;	/* failed owner calls */
	uint64_t control;	/* syscalls trapped by the positive control */
};

/* The measured part: owner calls only. */
static void owner_calls(struct owner *o)
{
	unsigned int r, i, ord;
	void *obj;

	for (r = 0; r < ROUNDS; r++) {
		/* Pairs on the warm magazine. */
		for (i = 0; i < 1000; i++) {
			if (lb_pcp_alloc(o->p, 0, &obj) ||
			    lb_pcp_free(o->p, obj, 0))
				o->errors++;
		}
		/* A burst past the magazine and high: refills, then flushes. */
		for (i = 0; i < BURST; i++)
			if (lb_pcp_alloc(o->p, 0, &o->held[i]))
				o->errors++;
		for (i = 0; i < BURST; i++)
			if (lb_pcp_free(o->p, o->held[i], 0))
				o->errors++;
		/* Higher orders: the lock path of the same owner. */
		for (ord = 1; ord <= 2; ord++)
			for (i = 0; i < 64; i++) {
				if (lb_pcp_alloc(o->p, ord, &obj) ||
				    lb_pcp_free(o->p, obj, ord))
					o->errors++;
			}
		/* Adds: a flush every 31st, and large ones that bypass. */
		for (i = 0; i < NR_ITEMS; i++)
			if (lb_cpubatch_add(o->pc, &o->items[i],
					    &o->items[i].node,
					    i % 17 ? 1 : 64) < 0)
				o->errors++;
		lb_cpubatch_drain_local(o->pc);
	}
	/* Leave objects in the slot for the remote drain. */
	for (i = 0; i < 8; i++)
		if (lb_pcp_alloc(o->p, 0, &o->held[i]))
			o->errors++;
	for (i = 0; i < 8; i++)
		if (lb_pcp_free(o->p, o->held[i], 0))
			o->errors++;
}

static void *owner_main(void *arg)
{
	struct owner *o = arg;
	uint64_t before;

	/* Warm: first refill, first flush, the thread's first use. */
	owner_calls(o);
	o->filter_err = trap_all_syscalls();
	if (o->filter_err)
		return NULL;
	trapping = 1;
	owner_calls(o);
	before = __atomic_load_n(&trapped, __ATOMIC_RELAXED);
	(void)syscall(__NR_getpid);	/* the positive control */
	o->control = __atomic_load_n(&trapped, __ATOMIC_RELAXED) - before;
	trapping = 0;
	__atomic_fetch_sub(&trapped, o->control, __ATOMIC_RELAXED);
	return NULL;
}

static int run_path(int force_lock, int nr_cpus)
{
	static int backend;
	struct lb_cpubatch_conf cc = {
		.mode = LB_CPUBATCH_WEIGHTED,
		.ops = &cb_ops,
		.backend = &backend,
	};
	struct lb_pcp_conf c;
	struct lb_pcp_stats st, st2;
	const char *path = force_lock ? "lock path forced" : "default path";
	struct owner o = { .cpu = -1 };
	static struct tb b;
	pthread_t t;
	long drained;
	unsigned int k;

	trapped = 0;
	memset(seen_nr, 0, sizeof(seen_nr));
	if (tb_init(&b, 3, PER_ORDER))
		return -1;
	memset(&c, 0, sizeof(c));
	c.max_order = 2;
	c.tuner = LB_PCP_TUNE_ADAPTIVE;
	c.lock_kind = LB_LOCK_SPIN;
	c.backend = tb_ops(&b);
	c.batch = 16;
	c.high_min = 64;
	c.high_max = 512;
	c.flags = force_lock ? LB_PCP_F_LOCK_PATH : 0;
	cc.flags = force_lock ? LB_CPUBATCH_F_LOCK_PATH : 0;
	o.items = calloc(NR_ITEMS, sizeof(*o.items));
	o.held = calloc(BURST, sizeof(*o.held));
	if (!o.items || !o.held || lb_pcp_create(&o.p, &c) ||
	    lb_cpubatch_create(&o.pc, &cc))
		return -1;
	/* The owner on CPU 0, this thread (the remote) elsewhere. */
	if (nr_cpus > 1 && lb_test_pin(0, nr_cpus) == 0)
		o.cpu = 0;
	if (pthread_create(&t, NULL, owner_main, &o))
		return -1;
	pthread_join(t, NULL);

	lb_pcp_stats(o.p, &st, NULL, 0);
	lb_tap_ok(o.errors == 0, "%s: every owner call succeeded (%llu failed)",
		  path, (unsigned long long)o.errors);
	if (o.filter_err) {
		lb_tap_ok(1, "%s: no syscall on the owner path # SKIP no seccomp filter: %s",
			  path, strerror(-o.filter_err));
		lb_tap_ok(1, "%s: the trap is live # SKIP no filter", path);
	} else {
		lb_tap_ok(trapped == 0,
			  "%s: no syscall on the owner path (%llu trapped)",
			  path, (unsigned long long)trapped);
		for (k = 0; k < trapped && k < 4; k++)
			lb_tap_diag("trapped syscall %ld", seen_nr[k]);
		lb_tap_ok(o.control == 1,
			  "%s: the trap is live (getpid trapped %llu times)",
			  path, (unsigned long long)o.control);
	}
	lb_tap_ok(st.owner_fences == 0 && st.total.refills > 0 &&
		  st.total.flushes > 0,
		  "%s: owner_fences 0 over %llu refills and %llu flushes",
		  path, (unsigned long long)st.total.refills,
		  (unsigned long long)st.total.flushes);

	/*
	 * A remote drain of the owner's slot, from another CPU, while it
	 * holds objects: that one must fence on the rseq path.
	 */
	if (o.cpu >= 0 && lb_test_pin(1, nr_cpus))
		o.cpu = -1;
	drained = o.cpu >= 0 ? lb_pcp_drain(o.p, o.cpu) : 0;
	lb_test_pin(-1, nr_cpus);
	lb_pcp_stats(o.p, &st2, NULL, 0);
	if (o.cpu < 0 || drained <= 0)
		lb_tap_ok(1, "%s: a remote drain fences # SKIP %s", path,
			  o.cpu < 0 ? "one CPU" : "slot empty");
	else
		/* Two calls where the per-CPU command falls back. */
		lb_tap_ok(st2.owner_fences == 0 &&
			  (st.rseq ? st2.fences > st.fences : st2.fences == 0),
			  "%s: a remote drain fences (%llu -> %llu fences, rseq %u), owner_fences %llu",
			  path, (unsigned long long)st.fences,
			  (unsigned long long)st2.fences, st.rseq,
			  (unsigned long long)st2.owner_fences);
	lb_cpubatch_destroy(o.pc);
	lb_pcp_destroy(o.p);
	tb_fini(&b);
	free(o.items);
	free(o.held);
	return 0;
}

int main(void)
{
	struct sigaction sa;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int nr_cpus = n > 0 ? (int)n : 1;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	/*
	 * ThreadSanitizer defers signals to its own safe points, so a trapped
	 * call cannot be skipped from the handler (the process was seen killed
	 * by SIGSYS); a TSan process is on the lock path anyway. ASan's runtime
	 * makes calls of its own in the trapped thread (the run was seen to
	 * die with no output). The plain build runs the trap.
	 */
	printf("1..0 # SKIP sanitizer runtimes make or defer system calls\n");
	return 0;
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSYS, &sa, NULL);
	lb_lock_init(&be_lock, LB_LOCK_SPIN, "backend");
	lb_tap_plan(10);
	lb_tap_diag("process path: %s", lb_cpu_path_name());
	if (run_path(0, nr_cpus) || run_path(1, nr_cpus)) {
		lb_tap_ok(0, "setup failed");
		return 1;
	}
	lb_lock_destroy(&be_lock);
	return lb_tap_done();
}
