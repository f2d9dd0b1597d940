/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_PCPU_H
#define LOCKBATCH_PCPU_H

#include <stdint.h>

#include <lockbatch/cpu.h>
#include <lockbatch/wbatch.h>

/**
 * DOC: Per-CPU batches in front of a locked back-end
 *
 * &struct lb_pcpu keeps one size-weighted batch (&struct lb_wbatch) per
 * slot, one slot per CPU, in front of a back-end behind a hot lock (an LRU
 * list, a free list, a pool). lb_pcpu_add() appends an object to the
 * current CPU's batch under that slot's own spinlock; when the batch is
 * full by entries or by weight it is flushed:
 *
 * 1. under the slot lock, the batch is swapped out (copied and emptied) and
 *    its objects' &struct lb_node are marked "not cached";
 * 2. with no slot lock held, the back-end lock is taken once per run of
 *    objects that share a back-end, the run is committed, the lock dropped;
 * 3. the @after callback runs for the run, outside the back-end lock
 *    (secondary work: "mm: unqueue deferred split folios outside the
 *    lruvec lock");
 * 4. the batch's references are dropped (@put).
 *
 * So up to 31 objects cost one back-end lock acquisition instead of 31,
 * and, unlike Linux 6.12 where every large folio flushes the batch, small
 * multi-unit objects are batched too (%LB_PCPU_WEIGHTED).
 *
 * Lock order: a slot lock is never held while a back-end lock is taken,
 * and a back-end lock is never held while a slot lock is taken, with one
 * exception: an add made from inside @commit (see lb_pcpu_add()) takes a
 * slot lock under the back-end lock, which is safe because no path takes
 * a back-end lock under a slot lock.
 *
 * Slot choice: the current CPU (glibc's rseq ``cpu_id``, else
 * sched_getcpu(); or the injected &lb_cpu_fn) modulo the slot count. The id
 * is a hint: the slot lock makes any choice correct.
 *
 * References: the batch holds one reference on every object it caches; the
 * optional @get is called when an object enters a batch and @put once it
 * has been committed and @after has run.
 *
 * Concurrency (X = needs external exclusion, - = safe together):
 *
 * ============  ===  ===========  =====  =======
 *               add  drain_local  stats  destroy
 * ============  ===  ===========  =====  =======
 * add            -        -         -       X
 * drain_local    -        -         -       X
 * stats          -        -         -       X
 * destroy        X        X         X       X
 * ============  ===  ===========  =====  =======
 *
 * Sources: mm/swap.c folio_add_lru(), folio_batch_add_and_move(),
 * folio_batch_move_lru(), lru_add_drain(); "mm: allow smaller large
 * folios to use lru_cache" (RFC v3, 2026).
 */

/**
 * enum lb_pcpu_mode - How adds are batched.
 * @LB_PCPU_BASELINE: No batching: every add takes the back-end lock for
 *                    that one object (a batch of one).
 * @LB_PCPU_BYPASS_LARGE: Linux 6.12: single-unit objects are batched by
 *                        entries; an object of weight > 1 is appended and
 *                        flushes the batch at once.
 * @LB_PCPU_WEIGHTED: Size-weighted: batched by entries and by weight; an
 *                    object whose weight reaches the weight cap never
 *                    waits.
 */
enum lb_pcpu_mode {
	LB_PCPU_BASELINE,
	LB_PCPU_BYPASS_LARGE,
	LB_PCPU_WEIGHTED,
};

/**
 * enum lb_flush_cause - Why a batch was flushed.
 * @LB_FLUSH_FULL: The add filled the batch by entries (or, in
 *                 %LB_PCPU_BASELINE, every add).
 * @LB_FLUSH_WEIGHT: The add took the batch over its weight cap.
 * @LB_FLUSH_BYPASS: The object may not wait (weight > 1 in
 *                   %LB_PCPU_BYPASS_LARGE, weight >= cap in
 *                   %LB_PCPU_WEIGHTED).
 * @LB_FLUSH_DRAIN_LOCAL: lb_pcpu_drain_local().
 * @LB_FLUSH_DRAIN_OBJ: a targeted drain of the slot holding one object.
 * @LB_FLUSH_DRAIN_OBJS: a batched targeted drain of several objects.
 * @LB_FLUSH_DRAIN_ALL: a drain of every slot.
 * @LB_FLUSH_DISABLE: batching was disabled.
 * @LB_FLUSH_DESTROY: lb_pcpu_destroy().
 * @LB_FLUSH_NR: Number of causes.
 */
enum lb_flush_cause {
	LB_FLUSH_FULL,
	LB_FLUSH_WEIGHT,
	LB_FLUSH_BYPASS,
	LB_FLUSH_DRAIN_LOCAL,
	LB_FLUSH_DRAIN_OBJ,
	LB_FLUSH_DRAIN_OBJS,
	LB_FLUSH_DRAIN_ALL,
	LB_FLUSH_DISABLE,
	LB_FLUSH_DESTROY,
	LB_FLUSH_NR,
};

/**
 * struct lb_node - Per-object tracking, embedded in the caller's object.
 * @slot: 0 when the object is not cached, else the index + 1 of the slot
 *        whose batch holds it. Written only under that slot's lock (set
 *        when the object enters the batch, cleared when the batch is
 *        swapped out for commit); readers without the lock must recheck
 *        under it.
 * @home: Index + 1 of the slot that cached the object last; never cleared.
 * @owner: Id of the &struct lb_pcpu that cached the object last (0: never
 *         added).
 *
 * Zero-initialise it (%LB_NODE_INIT) before the first add.
 */
struct lb_node {
	uint32_t slot;
	uint32_t home;
	uint32_t owner;
};

/** define LB_NODE_INIT - Static initializer for &struct lb_node. */
#define LB_NODE_INIT { 0, 0, 0 }

/**
 * struct lb_backend_ops - What a back-end provides.
 * @backend_of: The back-end an object belongs to (e.g. its lruvec). NULL:
 *              every object belongs to &lb_pcpu_conf.backend.
 * @lock: Take the back-end's lock (e.g. lb_lock_acquire()). Required.
 * @unlock: Drop it. Required.
 * @commit: Move @n objects into the back-end; called with its lock held.
 *          Required. May call lb_pcpu_add() (see there).
 * @after: Secondary work on the committed run, after @unlock, with no lock
 *         of this library held. Optional.
 * @get: Take the batch's reference on an object entering a batch; called
 *       under the slot lock, must not block. Optional.
 * @put: Drop the batch's reference after commit and @after. Optional.
 * @refcount: The object's current reference count (for settle). Optional.
 */
struct lb_backend_ops {
	void *(*backend_of)(void *obj);
	void (*lock)(void *backend);
	void (*unlock)(void *backend);
	void (*commit)(void *backend, void **objs, unsigned int n);
	void (*after)(void *backend, void **objs, unsigned int n);
	void (*get)(void *obj);
	void (*put)(void *obj);
	long (*refcount)(void *obj);
};

/**
 * struct lb_pcpu_conf - Creation parameters.
 * @nr_slots: Number of slots; 0 means lb_cpu_count(). At most
 *            %LB_PCPU_MAX_SLOTS.
 * @mode: %LB_PCPU_BASELINE, %LB_PCPU_BYPASS_LARGE or %LB_PCPU_WEIGHTED.
 * @max_nr: Entry cap per batch, 1..%LB_WBATCH_MAX; 0 means 31.
 * @max_weight: Weight cap per batch in base units (%LB_PCPU_WEIGHTED
 *              only), 1..%LB_WBATCH_WEIGHT_MAX; 0 means 31.
 * @ops: The back-end operations; copied at creation.
 * @backend: The back-end passed to @ops when @ops->backend_of is NULL.
 * @cpu_fn: CPU-id source; NULL means lb_cpu_current().
 * @cpu_arg: Argument for @cpu_fn.
 */
struct lb_pcpu_conf {
	unsigned int nr_slots;
	enum lb_pcpu_mode mode;
	unsigned int max_nr;
	uint32_t max_weight;
	const struct lb_backend_ops *ops;
	void *backend;
	lb_cpu_fn cpu_fn;
	void *cpu_arg;
};

/** define LB_PCPU_MAX_SLOTS - Largest slot count accepted (65536). */
#define LB_PCPU_MAX_SLOTS 65536u

/**
 * struct lb_pcpu_slot_stats - Counters of one slot (or their sum).
 * @adds: Successful lb_pcpu_add() calls.
 * @weight_added: Summed weight of those adds, in base units.
 * @flushes: Non-empty flushes, by &enum lb_flush_cause.
 * @objs_flushed: Objects handed to the back-end by flushes.
 * @weight_flushed: Their summed weight, in base units.
 * @nr_cached: Objects in the batch when the snapshot was taken.
 * @weight_cached: Their summed weight.
 */
struct lb_pcpu_slot_stats {
	uint64_t adds;
	uint64_t weight_added;
	uint64_t flushes[LB_FLUSH_NR];
	uint64_t objs_flushed;
	uint64_t weight_flushed;
	uint64_t nr_cached;
	uint64_t weight_cached;
};

/**
 * struct lb_pcpu_stats - Whole-object statistics.
 * @total: Sum of every slot's counters.
 * @backend_locks: Back-end lock acquisitions made by flushes (one per run).
 * @nr_slots: Number of slots.
 * @cpu_src: The CPU-id source in use.
 */
struct lb_pcpu_stats {
	struct lb_pcpu_slot_stats total;
	uint64_t backend_locks;
	unsigned int nr_slots;
	enum lb_cpu_src cpu_src;
};

struct lb_pcpu;

/**
 * lb_pcpu_create() - Allocate per-CPU batches in front of a back-end.
 * @pcp: Where to store the new object.
 * @conf: Parameters; see &struct lb_pcpu_conf.
 *
 * Context: Any thread. Allocates (one cache-aligned slot per CPU).
 * Return: 0, %-EINVAL if @pcp, @conf, @conf->ops, @ops->lock, @ops->unlock
 * or @ops->commit is NULL, the mode is unknown, or a cap or the slot count
 * is out of range; %-ENOMEM if memory ran out. *@pcp is set only on success.
 */
int lb_pcpu_create(struct lb_pcpu **pcp, const struct lb_pcpu_conf *conf);

/**
 * lb_pcpu_destroy() - Drain every slot and free the object.
 * @pc: The object.
 *
 * Every cached object is committed first (cause %LB_FLUSH_DESTROY):
 * nothing is lost. The caller must ensure no other thread uses @pc during
 * or after the call; a slot found locked (a concurrent user) makes the call
 * fail with nothing drained or freed.
 *
 * Context: Takes slot and back-end locks; runs @commit, @after and @put.
 * Return: 0, %-EINVAL if @pc is NULL, %-EBUSY if a slot was in use.
 */
int lb_pcpu_destroy(struct lb_pcpu *pc);

/**
 * lb_pcpu_add() - Hand an object to the back-end through the current CPU's batch.
 * @pc: The object.
 * @obj: The object to add; not NULL.
 * @n: Its tracking node; must not be cached already.
 * @weight: Its size in base units, 1..%LB_WBATCH_WEIGHT_MAX.
 *
 * The batch takes a reference (@get), appends @obj and, per the mode's
 * rule, may flush (swap out, commit under the back-end lock, @after,
 * @put). An add made by @commit itself (re-entrant, on the same thread)
 * never takes the back-end lock: if it has to flush, the swapped-out batch
 * is committed by the outer flush right after it drops the back-end lock,
 * so every object still reaches the back-end exactly once.
 *
 * Context: Any thread. Takes the slot lock; may take the back-end lock
 * (never both at once). Does not sleep unless the callbacks do.
 * Return:
 * * 0 - @obj waits in a batch.
 * * 1 - this call flushed the batch; @obj has been committed (or, for a
 *   re-entrant add, is queued behind the outer flush).
 * * %-EINVAL - @pc, @obj or @n is NULL, or @weight is 0 or above
 *   %LB_WBATCH_WEIGHT_MAX. Nothing changed.
 * * %-EEXIST - @n is already cached in a batch. Nothing changed.
 * * %-EAGAIN - a re-entrant add found too many batches already queued
 *   behind the outer flush. Nothing changed.
 */
int lb_pcpu_add(struct lb_pcpu *pc, void *obj, struct lb_node *n,
		uint32_t weight);

/**
 * lb_pcpu_drain_local() - Flush the current CPU's batch.
 * @pc: The object.
 *
 * Context: Takes the slot lock, then (if the batch held anything) the
 * back-end lock.
 * Return: the number of objects flushed (0 if the batch was empty), or
 * %-EINVAL if @pc is NULL.
 */
int lb_pcpu_drain_local(struct lb_pcpu *pc);

/**
 * lb_pcpu_stats() - Snapshot the counters.
 * @pc: The object.
 * @out: Totals (and slot count, CPU-id source); may be NULL.
 * @slots: Per-slot counters, @nr entries; may be NULL.
 * @nr: Entries in @slots; slots beyond it are summed into @out only.
 *
 * Each slot is read under its lock, so each slot's counters are consistent;
 * the total is not one atomic snapshot across slots.
 *
 * Context: Takes each slot lock in turn.
 * Return: the number of slots, or %-EINVAL if @pc is NULL or @slots is
 * NULL with @nr > 0.
 */
int lb_pcpu_stats(struct lb_pcpu *pc, struct lb_pcpu_stats *out,
		  struct lb_pcpu_slot_stats *slots, unsigned int nr);

/**
 * lb_pcpu_flush_cause_name() - A short name for a flush cause.
 * @cause: The cause.
 *
 * Context: Any thread.
 * Return: "full", "weight", "bypass", "drain_local", "drain_obj",
 * "drain_objs", "drain_all", "disable", "destroy", or "invalid".
 */
const char *lb_pcpu_flush_cause_name(enum lb_flush_cause cause);

#endif /* LOCKBATCH_PCPU_H */
