// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Owner-CPU fast path: which path the process runs, membarrier
 * registration and fences, the fork() hook registry. The sections
 * themselves are inline (rseq/rseq.h, rseq-<arch>.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/membarrier.h>

#include <lockbatch/cpu.h>
#include "rseq/rseq.h"

static pthread_once_t lbi_rseq_once = PTHREAD_ONCE_INIT;
static enum lbi_rseq_why lbi_rseq_state = LBI_RSEQ_WHY_ARCH;

_Thread_local uint64_t lbi_rseq_membarriers;

static long lbi_membarrier(int cmd, unsigned int flags, int cpu)
{
	lbi_rseq_membarriers++;
	return syscall(__NR_membarrier, cmd, flags, cpu);
}

#if LBI_RSEQ_ARCH
/* LB_RSEQ=0 (or "off", "no") forces the lock path. */
static bool lbi_rseq_env_off(void)
{
	const char *e = getenv("LB_RSEQ");

	return e && (!strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "no"));
}
#endif

static enum lbi_rseq_why lbi_rseq_decide(void)
{
#if !LBI_RSEQ_ARCH
#ifdef LB_TSAN
	return LBI_RSEQ_WHY_TSAN;
#elif LB_HAVE_RSEQ && defined(__x86_64__)
	return LBI_RSEQ_WHY_GLIBC;
#else
	return LBI_RSEQ_WHY_ARCH;
#endif
#else
	/* Every instance takes the annotated lock path then (lbi_tsan_active()). */
	if (lbi_tsan_active())
		return LBI_RSEQ_WHY_TSAN_CLIENT;
	if (lbi_rseq_env_off())
		return LBI_RSEQ_WHY_ENV;
	/* 20 on glibc 2.36, 32 later: a feature size, not the area's. */
	if (__rseq_size == 0 || lbi_rseq_cpu_id() < 0)
		return LBI_RSEQ_WHY_GLIBC;
	/* Without it the fence fails with EPERM: remote access unsafe. */
	if (lbi_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ,
			   0, 0) != 0)
		return LBI_RSEQ_WHY_MEMBARRIER;
	return LBI_RSEQ_WHY_ACTIVE;
#endif
}

static void lbi_rseq_init_once(void)
{
	lbi_rseq_state = lbi_rseq_decide();
}

enum lbi_rseq_why lbi_rseq_init(void)
{
	pthread_once(&lbi_rseq_once, lbi_rseq_init_once);
	return lbi_rseq_state;
}

/* Early, while the process is most likely single-threaded. */
__attribute__((constructor)) static void lbi_rseq_ctor(void)
{
	lbi_rseq_init();
}

const char *lbi_rseq_why_name(enum lbi_rseq_why why)
{
	switch (why) {
	case LBI_RSEQ_WHY_ACTIVE:
		return "rseq";
	case LBI_RSEQ_WHY_ARCH:
		return "lock (no rseq sections for this architecture)";
	case LBI_RSEQ_WHY_TSAN:
		return "lock (ThreadSanitizer build)";
	case LBI_RSEQ_WHY_ENV:
		return "lock (LB_RSEQ=0)";
	case LBI_RSEQ_WHY_GLIBC:
		return "lock (glibc did not register rseq)";
	case LBI_RSEQ_WHY_MEMBARRIER:
		return "lock (membarrier registration refused)";
	case LBI_RSEQ_WHY_TSAN_CLIENT:
		return "lock (ThreadSanitizer runtime in the process)";
	}
	return "invalid";
}

/* Parse "0-3,8,10-11" and return the highest id + 1, or 0. */
static unsigned int lbi_parse_cpu_list(const char *s)
{
	unsigned long hi = 0, v;
	char *end;

	while (*s) {
		v = strtoul(s, &end, 10);
		if (end == s)
			break;
		if (v + 1 > hi)
			hi = v + 1;
		s = end;
		if (*s == '-' || *s == ',')
			s++;
	}
	return hi > 0 && hi < (1ul << 20) ? (unsigned int)hi : 0;
}

unsigned int lbi_rseq_nr_cpu_ids(void)
{
	char buf[256];
	unsigned int n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			n = lbi_parse_cpu_list(buf);
		fclose(f);
	}
	return n ? n : lb_cpu_count();
}

bool lbi_rseq_usable(bool force_lock, unsigned int nr_slots)
{
	if (force_lock || lbi_rseq_init() != LBI_RSEQ_WHY_ACTIVE)
		return false;
	return nr_slots >= lbi_rseq_nr_cpu_ids();
}

/* Retries of a fence that failed for want of memory, a few time slices. */
#define LBI_RSEQ_FENCE_TRIES 1000

int lbi_rseq_fence(int cpu)
{
	unsigned int tries;

	if (cpu < 0)
		return -EINVAL;
	if (lbi_rseq_init() != LBI_RSEQ_WHY_ACTIVE)
		return 0;
	/*
	 * Our own CPU: no other thread runs here now, and one preempted
	 * mid-section restarts before it runs again; the stop store is
	 * ordered before both by program order and the context switch.
	 */
	if (cpu == lbi_rseq_cpu_id())
		return 0;
	for (tries = 0;; tries++) {
		if (lbi_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
				   MEMBARRIER_CMD_FLAG_CPU, cpu) == 0)
			return 0;
		/* ENXIO: no such CPU online, so nothing runs there. */
		if (errno == ENXIO)
			return 0;
		/*
		 * The process-wide command restarts the sections of every
		 * CPU, @cpu's among them: dearer, but a slot its caller
		 * writes must not be left unfenced.
		 */
		if (lbi_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0,
				   0) == 0)
			return 0;
		/* Its cpumask allocation can fail for a moment; retry. */
		if ((errno != ENOMEM && errno != EINTR && errno != EAGAIN) ||
		    tries == LBI_RSEQ_FENCE_TRIES)
			return -errno;
		sched_yield();
	}
}

enum lb_cpu_path lb_cpu_path(void)
{
	return lbi_rseq_init() == LBI_RSEQ_WHY_ACTIVE ? LB_CPU_PATH_RSEQ :
							LB_CPU_PATH_LOCK;
}

const char *lb_cpu_path_name(void)
{
	return lbi_rseq_why_name(lbi_rseq_init());
}
