/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * CPU affinity for the tests that run on the real CPU: pin the calling
 * thread to one CPU, or let it run anywhere again. sched_setaffinity()
 * migrates the caller before it returns, so the next sched_getcpu() (and
 * the next rseq section) sees the new CPU.
 */
#ifndef LB_TEST_AFFINITY_H
#define LB_TEST_AFFINITY_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include (sched_setaffinity)"
#endif
#include <sched.h>

/*
 * The calling thread on CPU @cpu, or (@cpu < 0) on any of CPUs
 * 0..@nr_cpus-1. Returns sched_setaffinity()'s 0 or -1.
 */
static inline int lb_test_pin(int cpu, int nr_cpus)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	else
		for (i = 0; i < nr_cpus; i++)
			CPU_SET(i, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Pinned to the CPU it runs on; that CPU, or -1. */
static inline int lb_test_pin_here(void)
{
	int cpu = sched_getcpu();

	return cpu >= 0 && lb_test_pin(cpu, 0) == 0 ? cpu : -1;
}

#endif /* LB_TEST_AFFINITY_H */
