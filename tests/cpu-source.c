// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Print the CPU-id source the library uses, as lb_cpubatch_stats() reports it
 * for an lb_cpubatch with the default source. tests/c09_rseq_off.sh checks it
 * under GLIBC_TUNABLES=glibc.pthread.rseq=0.
 */
#include <stdio.h>

#include <lockbatch/lock.h>
#include <lockbatch/cpubatch.h>
#include "common/backend.h"

int main(void)
{
	struct lb_cpubatch_conf conf = backend_conf(0, LB_CPUBATCH_WEIGHTED, 0,
						    0, &backend_ops);
	struct lb_cpubatch_stats st;
	struct lb_cpubatch *pc;

	conf.cpu_fn = NULL;	/* the default source is what is printed */
	if (backend_init() || lb_cpubatch_create(&pc, &conf) ||
	    lb_cpubatch_stats(pc, &st, NULL, 0) < 0)
		return 2;
	if (st.cpu_src != lb_cpu_source()) {
		fprintf(stderr, "stats say %s, lb_cpu_source() says %s\n",
			lb_cpu_source_name(st.cpu_src),
			lb_cpu_source_name(lb_cpu_source()));
		return 1;
	}
	printf("%s\n", lb_cpu_source_name(st.cpu_src));
	return lb_cpubatch_destroy(pc) || backend_teardown() ? 1 : 0;
}
