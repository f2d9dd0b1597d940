/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_WBATCH_H
#define LOCKBATCH_WBATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Size-weighted batch
 *
 * A &struct lb_wbatch collects object pointers for one trip to a locked
 * back-end, like the kernel's &struct folio_batch, but it is bounded twice:
 * by entries (at most @max_nr objects) and by weight (the summed size of
 * the objects in base units, e.g. pages). Linux 6.12 sends every large
 * folio straight to the lruvec lock; bounding the batch by weight lets
 * small multi-page objects wait in the batch like single pages, without
 * letting one batch pin an unbounded amount of memory.
 *
 * The rule, for an add of an object of weight @w to a batch holding
 * @nr objects of summed weight @weight:
 *
 * - the object is always appended;
 * - the caller must flush now (lb_wbatch_add() returns 1) when the batch is
 *   full by entries, when @w alone reaches @max_weight (such an object never
 *   waits in a batch), or when @weight + @w exceeds @max_weight;
 * - otherwise the object waits, and the batch holds at most @max_weight units.
 *
 * With every weight equal to 1 this is exactly 6.12's folio_batch_add():
 * lb_wbatch_room() after the add is what folio_batch_add() returns (the
 * entries left; 0 exactly when lb_wbatch_add() says flush). (The return
 * value itself follows the library's rule, see lb_error(3): 0 for the
 * plain outcome, the object waits; 1 for "flush now".)
 *
 * A batch does no locking and no allocation; it is embeddable and its
 * owner serialises every call.
 *
 * Errors: a call that validates several things checks, and reports the
 * first that fails, in this order (the order of lockbatch/cpubatch.h): the
 * arguments (%-EINVAL: NULL pointers, a weight or cap out of range), then
 * the batch itself (%-EINVAL: caps a valid batch cannot have), then its
 * state (%-ENOSPC). Nothing changes on error.
 *
 * Source: include/linux/pagevec.h folio_batch_add(); "mm: allow smaller
 * large folios to use lru_cache" (RFC v3, 2026), patch 1,
 * folio_add_lru_cache().
 */

/**
 * define LB_WBATCH_MAX - Entries a batch can hold (31, as %PAGEVEC_SIZE).
 *
 * 31 pointers plus the header make the structure 264 bytes; the kernel's
 * choice of 31 keeps a batch's lock hold short and its size to a few lines.
 */
#define LB_WBATCH_MAX 31

/**
 * define LB_WBATCH_WEIGHT_MAX - Largest weight (and weight cap) accepted.
 *
 * A waiting batch holds at most its cap; one more object of at most this
 * weight keeps the running sum far inside 32 bits.
 */
#define LB_WBATCH_WEIGHT_MAX (1u << 26)

/**
 * struct lb_wbatch - A batch bounded by entries and by weight.
 * @nr: Objects held.
 * @max_nr: Entry cap, 1..%LB_WBATCH_MAX.
 * @weight: Summed weight of the objects held, in base units.
 * @max_weight: Weight cap, 1..%LB_WBATCH_WEIGHT_MAX.
 * @objs: The objects, in the order they were added.
 */
struct lb_wbatch {
	uint16_t nr;
	uint16_t max_nr;
	uint32_t weight;
	uint32_t max_weight;
	void *objs[LB_WBATCH_MAX];
};

/**
 * define LB_WBATCH_INIT - Static initializer.
 * @maxnr: Entry cap.
 * @maxw: Weight cap.
 *
 * Does not validate; lb_wbatch_add() rejects a batch with bad caps.
 */
#define LB_WBATCH_INIT(maxnr, maxw) \
	{ 0, (maxnr), 0, (maxw), { 0 } }

/**
 * lb_wbatch_init() - Initialise an empty batch.
 * @b: The batch.
 * @max_nr: Entry cap, 1..%LB_WBATCH_MAX (31 mirrors the kernel).
 * @max_weight: Weight cap in base units, 1..%LB_WBATCH_WEIGHT_MAX (31
 *              mirrors the seed series: a batch holds at most 31 pages).
 *
 * Context: The batch's owner.
 * Return: 0, or %-EINVAL if @b is NULL or a cap is 0 or above its maximum
 * (@b is left untouched).
 */
int lb_wbatch_init(struct lb_wbatch *b, unsigned int max_nr,
		   uint32_t max_weight);

/**
 * lb_wbatch_add() - Append an object and say whether to flush.
 * @b: The batch.
 * @obj: The object; not NULL.
 * @weight: Its weight in base units, 1..%LB_WBATCH_WEIGHT_MAX.
 *
 * Appends @obj, then applies the rule in the DOC block above. The caller
 * flushes the batch (all objects, @obj included) when 1 is returned.
 *
 * Context: The batch's owner. O(1), no locks, no allocation.
 * Return:
 * * 0 - the object waits (lb_wbatch_room() entries are left).
 * * 1 - the object was appended and the batch must be flushed now.
 * * %-EINVAL - @b or @obj is NULL, @weight is 0 or above
 *   %LB_WBATCH_WEIGHT_MAX, or @b's caps are invalid. Nothing appended.
 * * %-ENOSPC - @b is already full by entries or over its weight cap (a
 *   previous add asked for a flush that did not happen). Nothing appended.
 */
int lb_wbatch_add(struct lb_wbatch *b, void *obj, uint32_t weight);

/**
 * lb_wbatch_room() - Entries left before the batch is full.
 * @b: The batch.
 *
 * folio_batch_space(): @max_nr less the objects held. With weight 1
 * everywhere, what 6.12's folio_batch_add() returned; with weights, an add
 * may ask for a flush (for the weight cap) with room left.
 *
 * Context: The batch's owner.
 * Return: the entries left (>= 0), or %-EINVAL if @b is NULL.
 */
int lb_wbatch_room(const struct lb_wbatch *b);

/**
 * lb_wbatch_count() - Objects held.
 * @b: The batch.
 *
 * Context: The batch's owner.
 * Return: the number of objects, or %-EINVAL if @b is NULL.
 */
int lb_wbatch_count(const struct lb_wbatch *b);

/**
 * lb_wbatch_weight() - Summed weight held, in base units.
 * @b: The batch.
 *
 * Context: The batch's owner.
 * Return: the weight, or %-EINVAL if @b is NULL.
 */
long lb_wbatch_weight(const struct lb_wbatch *b);

/**
 * lb_wbatch_reinit() - Empty the batch, keeping its caps.
 * @b: The batch.
 *
 * The objects are forgotten, not released: call it after they were handed
 * to the back-end (folio_batch_reinit()).
 *
 * Context: The batch's owner.
 * Return: 0, or %-EINVAL if @b is NULL.
 */
int lb_wbatch_reinit(struct lb_wbatch *b);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_WBATCH_H */
