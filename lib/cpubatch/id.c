// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Owner ids of lb_cpubatch instances: 16 bits, so that &struct lb_node
 * fits in 8 bytes, and never shared by two live instances (a node's owner
 * decides -EXDEV and the "moved" mark of an object coming from another
 * instance). A bitmap of the ids in use, claimed and released with atomic
 * operations: no lock, so nothing for fork() to leave held.
 *
 * Allocation is cyclic, as idr_alloc_cyclic() (lib/idr.c): the search
 * starts after the id handed out last, so a destroyed instance's id comes
 * back only once the other free ids have all been handed out, and a node it
 * left behind is taken for another instance's as late as possible.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include <ck_pr.h>

#include "cpubatch/node.h"

#define LBI_ID_WORDS (LBI_CB_IDS / 64)

/* Bit i of word i / 64: id i is taken. Id 0 ("never added") always is. */
static uint64_t ids_used[LBI_ID_WORDS] = { 1 };
/* Where the next search starts; a hint, read and written racily. */
static uint32_t ids_next;

int lbi_cb_id_get(uint16_t *id)
{
	uint32_t i = ck_pr_load_32(&ids_next) % LBI_CB_IDS, seen = 0;

	while (seen < LBI_CB_IDS) {
		uint64_t *w = &ids_used[i / 64];
		uint64_t old = ck_pr_load_64(w), bit = 1ull << (i % 64);

		if (old & bit) {
			i = (i + 1) % LBI_CB_IDS;
			seen++;
			continue;
		}
		/* A failed claim means the word changed: look at it again. */
		if (ck_pr_cas_64(w, old, old | bit)) {
			ck_pr_store_32(&ids_next, i + 1);
			*id = (uint16_t)i;
			return 0;
		}
	}
	return -ENOSPC;
}

void lbi_cb_id_put(uint32_t id)
{
	if (id && id < LBI_CB_IDS)
		ck_pr_and_64(&ids_used[id / 64], ~(1ull << (id % 64)));
}
