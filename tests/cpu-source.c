// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Print the CPU-id source the library uses, as lb_cpubatch_stats() reports it
 * for an lb_cpubatch with the default source. tests/c09_rseq_off.sh checks it
 * under GLIBC_TUNABLES=glibc.pthread.rseq=0.
 */
#include <stdio.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>

static void nop(void *p)
{
	(void)p;
}

static void nop_commit(void *be, void **objs, unsigned int n)
{
	(void)be;
	(void)objs;
	(void)n;
}

int main(void)
{
	static const struct lb_backend_ops ops = {
		.lock = nop, .unlock = nop, .commit = nop_commit,
	};
	struct lb_cpubatch_conf conf = { .mode = LB_CPUBATCH_WEIGHTED, .ops = &ops };
	struct lb_cpubatch_stats st;
	struct lb_cpubatch *pc;

	if (lb_cpubatch_create(&pc, &conf) || lb_cpubatch_stats(pc, &st, NULL, 0) < 0)
		return 2;
	if (st.cpu_src != lb_cpu_source()) {
		fprintf(stderr, "stats say %s, lb_cpu_source() says %s\n",
			lb_cpu_source_name(st.cpu_src),
			lb_cpu_source_name(lb_cpu_source()));
		return 1;
	}
	printf("%s\n", lb_cpu_source_name(st.cpu_src));
	return lb_cpubatch_destroy(pc) ? 1 : 0;
}
