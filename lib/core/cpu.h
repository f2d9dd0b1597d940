/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The current CPU, read in one place: glibc's registered rseq area (the
 * kernel rewrites its cpu_id on every return to user space after a
 * migration), else sched_getcpu(). The rseq sections read the same field
 * inside their critical section (rseq/rseq-x86_64.h): that read belongs to
 * the section and cannot be shared.
 */
#ifndef LOCKBATCH_CORE_CPU_H
#define LOCKBATCH_CORE_CPU_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>

#include <lockbatch/cpu.h>

#if defined(HAVE_SYS_RSEQ_H) && HAVE_DECL___RSEQ_OFFSET
#include <sys/rseq.h>
#define LB_HAVE_RSEQ 1
#else
#define LB_HAVE_RSEQ 0
#endif

#if LB_HAVE_RSEQ
/*
 * cpu_id of this thread's rseq area, for a caller that knows glibc
 * registered one (the rseq sections, once set up).
 */
static inline int lbi_cpu_rseq_area(void)
{
	const struct rseq *rs;

	rs = (const struct rseq *)((char *)__builtin_thread_pointer() +
				   __rseq_offset);
	return (int)*(const volatile uint32_t *)&rs->cpu_id;
}

/*
 * The same, checked. Negative: glibc did not register for this thread
 * (tunable off, or the kernel refused).
 */
static inline int lbi_rseq_cpu(void)
{
	if (__rseq_size == 0)
		return -1;
	return lbi_cpu_rseq_area();
}
#endif

/*
 * The current CPU: the rseq area where registered, else sched_getcpu().
 * Negative errno if neither knows. lb_cpu_current() is this call.
 */
static inline int lbi_cpu_read(void)
{
	int cpu;

#if LB_HAVE_RSEQ
	cpu = lbi_rseq_cpu();
	if (cpu >= 0)
		return cpu;
#endif
	cpu = sched_getcpu();
	return cpu >= 0 ? cpu : -errno;
}

#endif /* LOCKBATCH_CORE_CPU_H */
