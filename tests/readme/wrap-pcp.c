// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Runs README.md's lb_pcp fragment (block-pcp.c, written by
 * tests/readme/extract.sh) with @pconf set up over a small stock free list.
 */
#include <lockbatch/lockbatch.h>

int main(void)
{
	struct lb_freelist_conf fc = { .obj_size = 4096, .arena_size = 1u << 20 };
	struct lb_pcp_conf pconf = { .tuner = LB_PCP_TUNE_ADAPTIVE, .batch = 8,
				     .high_min = 16, .high_max = 64 };
	struct lb_freelist *fl;

	if (lb_freelist_create(&fl, &fc) ||
	    lb_freelist_pcp_backend(fl, &pconf.backend))
		return 1;
	{
#include "block-pcp.c"
	}
	return lb_freelist_destroy(fl) ? 1 : 0;
}
