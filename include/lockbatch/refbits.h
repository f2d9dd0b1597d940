/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_REFBITS_H
#define LOCKBATCH_REFBITS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Referenced bits of multi-unit objects
 *
 * &struct lb_refbits keeps one "referenced" bit per base unit of an object
 * of 1..%LB_REFBITS_MAX units, the way each page table entry of a large
 * folio carries its own young bit. Accessors set bits (lb_refbits_mark());
 * reclaim asks whether the object was referenced since the last check and
 * clears the bits (lb_refbits_test_and_clear()).
 *
 * Linux 6.12 folio_referenced_one() tests and clears the young bit one PTE
 * at a time and flushes the TLB for every young PTE it cleared. The batched
 * check clears a whole 64-unit word with one atomic exchange and calls the
 * user's @flush (the analogue of the TLB flush) once for the whole range of
 * units it cleared. lb_refbits_test_and_clear_each() keeps the per-unit
 * loop: it is the reference the tests compare against and the benchmark's
 * baseline.
 *
 * Concurrency: every call may run concurrently with every other on the
 * same object, except lb_refbits_init(). A bit set concurrently with a
 * check is either seen (and cleared) by it or left set for the next one;
 * none is lost.
 *
 * Sources: mm/rmap.c folio_referenced_one(); "mm: rmap: support batched
 * checks of the references for large folios" (Baolin Wang, 2025), which
 * replaces the per-PTE ptep_clear_flush_young_notify() with
 * clear_flush_young_ptes_notify() over a folio_pte_batch() run.
 */

/**
 * define LB_REFBITS_MAX - Most units an object may have (512).
 */
#define LB_REFBITS_MAX 512u

/**
 * define LB_REFBITS_WORDS - Words of 64 bits backing %LB_REFBITS_MAX bits.
 */
#define LB_REFBITS_WORDS (LB_REFBITS_MAX / 64u)

/**
 * struct lb_refbits - Referenced bits of one object.
 * @nr_units: Units in the object, 1..%LB_REFBITS_MAX.
 * @words: Bit u of the object is bit u % 64 of @words[u / 64]; only the
 *         first (@nr_units + 63) / 64 words are used.
 *
 * Embed it; initialise with lb_refbits_init() or %LB_REFBITS_INIT.
 */
struct lb_refbits {
	uint32_t nr_units;
	uint64_t words[LB_REFBITS_WORDS];
};

/**
 * define LB_REFBITS_INIT - Static initializer, none referenced.
 * @n: Units in the object, 1..%LB_REFBITS_MAX.
 */
#define LB_REFBITS_INIT(n) { (n), { 0 } }

/**
 * typedef lb_refbits_flush_fn - Called for a run of cleared units.
 * @arg: The caller's argument.
 * @first: First unit of the run.
 * @nr: Units in the run, from @first (not all of them need have been set).
 *
 * The analogue of flush_tlb_range(): whatever caches the referenced state
 * elsewhere must forget it for these units, so the next access sets the
 * bit again.
 */
typedef void (*lb_refbits_flush_fn)(void *arg, unsigned int first,
				    unsigned int nr);

/**
 * lb_refbits_init() - Set the size of an object and clear its bits.
 * @rb: The bits.
 * @nr_units: Units in the object, 1..%LB_REFBITS_MAX.
 *
 * Context: No other thread may use @rb during the call.
 * Return: 0, or %-EINVAL if @rb is NULL or @nr_units is out of range
 * (@rb unchanged).
 */
int lb_refbits_init(struct lb_refbits *rb, unsigned int nr_units);

/**
 * lb_refbits_mark() - Record an access to one unit.
 * @rb: The bits.
 * @unit: The unit, below @rb->nr_units.
 *
 * Reads the word first and writes it only if the bit was clear, as the MMU
 * sets the young bit only once: repeated accesses keep the line shared.
 *
 * Context: Any thread; lock-free (one atomic OR when the bit was clear).
 * Return: 0, or %-EINVAL if @rb is NULL or @unit is out of range.
 */
int lb_refbits_mark(struct lb_refbits *rb, unsigned int unit);

/**
 * lb_refbits_count() - Count referenced units without clearing them.
 * @rb: The bits.
 *
 * Context: Any thread; plain loads (a snapshot per word).
 * Return: the number of set bits, or %-EINVAL if @rb is NULL or not
 * initialised.
 */
int lb_refbits_count(const struct lb_refbits *rb);

/**
 * lb_refbits_test_and_clear() - Clear every bit of the object, batched.
 * @rb: The bits.
 * @flush: Called once, after all words are cleared, with the range from
 *         the first to the last unit found set; not called when none was.
 *         May be NULL.
 * @arg: Passed to @flush.
 *
 * One atomic exchange (ck_pr_fas_64) per word that has a bit set; the
 * unused bits of a partial last word are never set, so whole-word exchanges
 * are exact.
 *
 * Context: Any thread; lock-free. Calls @flush from the caller's thread.
 * Return: the number of units that were referenced (0..@nr_units), or
 * %-EINVAL if @rb is NULL or not initialised.
 */
int lb_refbits_test_and_clear(struct lb_refbits *rb, lb_refbits_flush_fn flush,
			      void *arg);

/**
 * lb_refbits_test_and_clear_each() - The per-unit reference loop.
 * @rb: The bits.
 * @flush: Called once for every unit found set, with @nr = 1 (as 6.12
 *         flushes per young PTE). May be NULL.
 * @arg: Passed to @flush.
 *
 * One atomic bit-test-and-reset per unit. Same result as
 * lb_refbits_test_and_clear(); kept as its reference and baseline.
 *
 * Context: Any thread; lock-free.
 * Return: the number of units that were referenced, or %-EINVAL if @rb is
 * NULL or not initialised.
 */
int lb_refbits_test_and_clear_each(struct lb_refbits *rb,
				   lb_refbits_flush_fn flush, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_REFBITS_H */
