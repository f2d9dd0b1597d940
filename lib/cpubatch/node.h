/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * struct lb_node's representation. Every read and write of a node's fields
 * goes through these helpers, so that the node's size and layout are
 * decided in one place: the add, flush, drain and settle code sees three
 * values (slot, home, owner) and never the widths they are stored in.
 *
 * Today: @home is 32 bits (slot, generation, "moved": cpubatch/cpubatch.h),
 * @slot and @owner are 16 bits each, 8 bytes in all. A slot index + 1 is
 * at most %LB_CPU_SLOTS_MAX and an owner id is below 2^16 (lbi_cb_id_get()).
 * Each field is written and read as one single-copy-atomic access of its
 * own width; nothing relies on two fields changing together. Each also
 * tells AddressSanitizer of its access (lbi_asan_load(), lbi_asan_store():
 * ck's inline assembly is invisible to it), so that an ASan build of the
 * library reports a touch of a node its caller already freed.
 */
#ifndef LOCKBATCH_CPUBATCH_NODE_H
#define LOCKBATCH_CPUBATCH_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include <ck_pr.h>

#include <lockbatch/cpubatch.h>
#include "core/asan.h"

_Static_assert(LB_CPU_SLOTS_MAX <= UINT16_MAX, "a slot index + 1 fits @slot");
_Static_assert(sizeof(struct lb_node) <= 8, "struct lb_node fits in 8 bytes");

/* Largest owner id + 1; 0 is "never added". */
#define LBI_CB_IDS (UINT16_MAX + 1u)

/* The slot index + 1 whose batch holds the node, 0 if none (a hint). */
static inline uint32_t lbi_node_slot(const struct lb_node *n)
{
	lbi_asan_load(&n->slot);
	return ck_pr_load_16(&n->slot);
}

/* Plain store of @slot: rseq marks (before a section) and swap-out (0). */
static inline void lbi_node_set_slot(struct lb_node *n, uint32_t slot)
{
	lbi_asan_store(&n->slot);
	ck_pr_store_16(&n->slot, (uint16_t)slot);
}

/* Claim an uncached node for slot index + 1 @slot (a full barrier). */
static inline bool lbi_node_claim(struct lb_node *n, uint32_t slot)
{
	lbi_asan_store(&n->slot);
	return ck_pr_cas_16(&n->slot, 0, (uint16_t)slot);
}

static inline uint32_t lbi_node_home(const struct lb_node *n)
{
	lbi_asan_load(&n->home);
	return ck_pr_load_32(&n->home);
}

static inline void lbi_node_set_home(struct lb_node *n, uint32_t home)
{
	lbi_asan_store(&n->home);
	ck_pr_store_32(&n->home, home);
}

/* @home goes from @old to @new unless it changed meanwhile. */
static inline bool lbi_node_cas_home(struct lb_node *n, uint32_t old,
				     uint32_t new_home)
{
	lbi_asan_store(&n->home);
	return ck_pr_cas_32(&n->home, old, new_home);
}

/* 16 bits wide, as &lb_cpubatch.id: compared without a zero extension. */
static inline uint16_t lbi_node_owner(const struct lb_node *n)
{
	lbi_asan_load(&n->owner);
	return ck_pr_load_16(&n->owner);
}

static inline void lbi_node_set_owner(struct lb_node *n, uint16_t id)
{
	lbi_asan_store(&n->owner);
	ck_pr_store_16(&n->owner, id);
}

/* lib/cpubatch/id.c: owner ids, unique among live instances. */
int lbi_cb_id_get(uint16_t *id);
void lbi_cb_id_put(uint32_t id);

#endif /* LOCKBATCH_CPUBATCH_NODE_H */
