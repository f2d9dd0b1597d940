// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Print the owner path the library chose for this process, as
 * lb_cpu_path_name() reports it; exit 0 when lb_cpu_path() agrees with it.
 * tests/rseq_paths.sh runs it under each switch.
 */
#include <stdio.h>
#include <string.h>

#include <lockbatch/cpu.h>

int main(void)
{
	const char *name = lb_cpu_path_name();
	int rseq = strcmp(name, "rseq") == 0;

	printf("%s\n", name);
	return (lb_cpu_path() == LB_CPU_PATH_RSEQ) == rseq ? 0 : 1;
}
