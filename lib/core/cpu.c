// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Current-CPU lookup (the read itself is lbi_cpu_read(), cpu.h), where it
 * came from, and the CPU count.
 */
#include "config.h"

#include <stddef.h>
#include <unistd.h>

#include "core/cpu.h"

int lb_cpu_current(void)
{
	return lbi_cpu_read();
}

enum lb_cpu_src lb_cpu_source(void)
{
#if LB_HAVE_RSEQ
	if (lbi_rseq_cpu() >= 0)
		return LB_CPU_SRC_RSEQ;
#endif
	return LB_CPU_SRC_GETCPU;
}

const char *lb_cpu_source_name(enum lb_cpu_src src)
{
	switch (src) {
	case LB_CPU_SRC_RSEQ:
		return "rseq";
	case LB_CPU_SRC_GETCPU:
		return "sched_getcpu";
	case LB_CPU_SRC_INJECTED:
		return "injected";
	}
	return "invalid";
}

unsigned int lb_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned int)n : 1;
}
