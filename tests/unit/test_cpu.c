// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_cpu: current CPU, its source, and the CPU count.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/cpu.h>

#if defined(HAVE_SYS_RSEQ_H) && HAVE_DECL___RSEQ_OFFSET
#include <sys/rseq.h>
#endif

Test(cpu, count_is_configured_cpus)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	cr_assert(ge(uint, lb_cpu_count(), 1));
	if (n > 0)
		cr_assert(eq(uint, lb_cpu_count(), (unsigned int)n));
}

Test(cpu, current_is_in_range)
{
	int cpu = lb_cpu_current();

	cr_assert(ge(int, cpu, 0), "lb_cpu_current() = %d", cpu);
	cr_assert(lt(uint, (unsigned int)cpu, lb_cpu_count()));
}

/* Pinned to each allowed CPU in turn, the id must follow the pinning. */
Test(cpu, current_follows_affinity)
{
	cpu_set_t orig, one;
	int c, checked = 0;

	cr_assert(eq(int, sched_getaffinity(0, sizeof(orig), &orig), 0));
	for (c = 0; c < CPU_SETSIZE && checked < 8; c++) {
		if (!CPU_ISSET(c, &orig))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		cr_assert(eq(int, sched_setaffinity(0, sizeof(one), &one), 0));
		/* setaffinity migrates the caller before it returns. */
		cr_assert(eq(int, lb_cpu_current(), c), "pinned to CPU %d", c);
		cr_assert(eq(int, lb_cpu_current(), sched_getcpu()));
		checked++;
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	cr_assert(gt(int, checked, 0));
}

Test(cpu, source_matches_rseq_registration)
{
	enum lb_cpu_src src = lb_cpu_source();

#if defined(HAVE_SYS_RSEQ_H) && HAVE_DECL___RSEQ_OFFSET
	if (__rseq_size > 0)
		cr_assert(eq(int, src, LB_CPU_SRC_RSEQ));
	else
		cr_assert(eq(int, src, LB_CPU_SRC_GETCPU));
#else
	cr_assert(eq(int, src, LB_CPU_SRC_GETCPU));
#endif
}

Test(cpu, source_names)
{
	cr_assert(eq(str, (char *)lb_cpu_source_name(LB_CPU_SRC_RSEQ), "rseq"));
	cr_assert(eq(str, (char *)lb_cpu_source_name(LB_CPU_SRC_GETCPU),
		     "sched_getcpu"));
	cr_assert(eq(str, (char *)lb_cpu_source_name(LB_CPU_SRC_INJECTED),
		     "injected"));
	cr_assert(eq(str, (char *)lb_cpu_source_name((enum lb_cpu_src)99),
		     "invalid"));
	cr_assert(eq(str, (char *)lb_cpu_source_name((enum lb_cpu_src)-1),
		     "invalid"));
}
