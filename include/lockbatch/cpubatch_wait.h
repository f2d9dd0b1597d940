/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_CPUBATCH_WAIT_H
#define LOCKBATCH_CPUBATCH_WAIT_H

#include <stdint.h>

#include <lockbatch/cpubatch.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Seeing what waits in batches
 *
 * An object handed to lb_cpubatch_add() is not in its back-end until its
 * batch is flushed: a scan, an eviction pass, a "flush everything", a
 * statistics dump or a crawler walking the back-end does not see it.
 * lb_cpubatch_waiting() counts what waits, for the whole instance or for
 * one back-end; lb_cpubatch_drain_backend() commits what waits for one
 * back-end, so that a walk of that back-end sees every object added
 * before it. doc/integration.md lists where a program needs which.
 *
 * LRU order: a batch commits its objects in the order they were added to
 * it, but slots are committed independently, so the back-end's order is
 * the add order only per slot. With S slots and batches of at most N
 * entries (the entry cap), an object committed by a flush lands:
 *
 * * at most (S - 1) * (N - 1) positions early: the objects it overtakes
 *   were added before it and still wait in the other slots' batches, at
 *   most N - 1 in each (more only while a flush of theirs is in flight);
 * * late by as many objects as the other slots commit while its own batch
 *   waits: unbounded while its CPU adds nothing more. The bound is the
 *   caller's: a drain (drain_local on an idle CPU, drain_backend or
 *   drain_all before a scan) ends the wait, so with a drain of every slot
 *   at least every D adds an object lands at most D positions late (only
 *   objects added after it can commit before it).
 *
 * ``make bench-lru-order`` measures the distribution with adds spread
 * over the slots at random (tests/bench/bench_lru_order.c).
 */

/**
 * struct lb_cpubatch_waiting - What waits in the batches of an instance.
 * @nr: Objects waiting in batches (of the back-end asked for, or all).
 * @weight: Their summed weight, in base units.
 * @inflight: Objects of the whole instance swapped out by flushes that
 *            have not committed them yet (any back-end).
 * @slots: Slots whose batch holds at least one of the @nr objects.
 */
struct lb_cpubatch_waiting {
	uint64_t nr;
	uint64_t weight;
	uint64_t inflight;
	uint32_t slots;
};

/**
 * lb_cpubatch_waiting() - Count the objects waiting in batches.
 * @pc: The instance.
 * @backend: The back-end to count for, as the instance's backend_of
 *           callback returns it (without one: &lb_cpubatch_conf.backend);
 *           NULL counts every object of the instance.
 * @weight_of: The weight of an object, as it was added; needed only to
 *             count one back-end of an instance with a backend_of
 *             callback (the batches keep one weight sum per slot). May be
 *             NULL otherwise.
 * @out: Where to store the counts.
 *
 * Each slot is read under its lock, so each slot's part is exact at one
 * instant; the total is not one snapshot across slots (as
 * lb_cpubatch_stats()). For one back-end of an instance with a backend_of
 * callback, that callback and @weight_of are called for every waiting
 * object, under its slot lock: they must not block or call into @pc.
 *
 * Context: Any thread but a callback of @pc; takes each slot lock in turn.
 * Return: 0; %-EINVAL if @pc or @out is NULL, or @backend is given, @pc
 * has a backend_of callback and @weight_of is NULL; %-EDEADLK from a
 * callback of @pc, %-ELOOP at the nesting bound.
 */
int lb_cpubatch_waiting(struct lb_cpubatch *pc, void *backend,
			uint32_t (*weight_of)(void *obj),
			struct lb_cpubatch_waiting *out);

/**
 * lb_cpubatch_drain_backend() - Commit every object waiting for one back-end.
 * @pc: The instance.
 * @backend: The back-end, as the instance's backend_of callback returns
 *           it (without one: &lb_cpubatch_conf.backend, or nothing
 *           matches).
 *
 * Flushes each slot whose batch holds an object of @backend (cause
 * %LB_FLUSH_DRAIN_OBJS: a targeted drain of several objects; the batch's
 * objects of other back-ends go too, each to its own back-end), then waits
 * for every flush in flight that started before, on every slot (one of
 * them may hold an object of @backend). Slots holding none of its objects
 * are not flushed.
 *
 * Contract: when it returns, every object of @backend added before the
 * call began has been committed and its put callback has run, so a walk
 * of the back-end that follows sees all of them. Adds racing with the
 * call are not covered; a caller that needs the back-end complete for the
 * length of its walk excludes adds to it (its own lock, or
 * lb_cpubatch_disable()).
 *
 * Source: mm/swap.c lru_add_drain_all() before a walk of every LRU
 * (e.g. mm/compaction.c, mm/migrate.c), narrowed to the batches that hold
 * the back-end's objects.
 *
 * Context: Any thread but a callback of @pc. Takes the slot locks one at a
 * time (calling backend_of under them), each flush followed by the
 * back-end lock; may wait for flushes on other threads.
 * Return: the number of objects flushed (those of other back-ends in the
 * same batches included); %-EINVAL if @pc or @backend is NULL; %-EDEADLK
 * from a callback of @pc, %-ELOOP at the nesting bound.
 */
int lb_cpubatch_drain_backend(struct lb_cpubatch *pc, void *backend);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_CPUBATCH_WAIT_H */
