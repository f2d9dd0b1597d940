/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * DOC: Owner-CPU fast path on restartable sequences (internal)
 *
 * A per-CPU slot array changes only on its owner CPU inside an rseq
 * critical section, or under the slot lock with the slot stopped. The
 * owner operations below are critical sections: no lock, no atomic
 * instruction. Preemption, migration or a signal aborts one before its
 * single committing store and it restarts from the CPU id.
 *
 * Layout. The caller defines its slot: any struct, @stride bytes apart,
 * holding a &struct lbi_rseq_hdr (stop flag, count and weight in one 64-bit
 * word) and an array of item pointers (&struct lbi_rseq_layout).
 *
 * Owner operations (lbi_rseq_push(), lbi_rseq_pop(), lbi_rseq_take())
 * return one of &enum lbi_rseq_rc. %LBI_RSEQ_LOCK means "use the lock path
 * for this one operation": the slot is stopped, this thread has no rseq
 * registration (cpu_id negative), or its CPU id is not below nr_slots.
 *
 * Remote access, in this order (the steps are referred to as R1-R5):
 *
 *   (R1) lock the slot lock (the slot core's ck spinlock);
 *   (R2) lbi_rseq_stop(): stop = 1, then fence that CPU, so a section
 *        running there either committed before the fence or restarts and
 *        sees stop = 1 (skip the fence only when the slot was seen empty
 *        and will not be written);
 *   (R3) work on the slot with plain loads and stores;
 *   (R4) lbi_rseq_start(): stop = 0 with release semantics;
 *   (R5) unlock.
 *
 * An owner operation that returns %LBI_RSEQ_LOCK runs R1-R5 on its own
 * slot: the fence is skipped when the caller runs on that CPU (nothing can
 * be mid-section there unaborted). The lock comes first so that stop can be
 * a plain flag written only by the lock holder, and so that a fork()
 * prepare handler that takes every slot lock waits out every stopped
 * window (lbi_fork_register(), core/fork.h).
 *
 * Lock path everywhere: when lbi_rseq_usable() says no (not x86-64, a
 * ThreadSanitizer build, glibc did not register rseq, LB_RSEQ=0 in the
 * environment, the caller's conf flag, membarrier registration refused, or
 * fewer slots than possible CPU ids), the caller never runs a section; its
 * slots are then protected by the lock alone and it skips R2 and R4 (when
 * only the conf flag chose the lock path, lbi_rseq_stop() would still
 * fence).
 *
 * Traps:
 * - Signal handlers may run owner operations: a section interrupted by a
 *   signal is aborted before the handler runs. The lock path is not
 *   async-signal-safe: a caller that lets handlers use it must block
 *   signals between R1 and R5.
 * - fork(): the child keeps the rseq and membarrier registrations; slot
 *   locks held or stop flags set in the parent would be copied so. Register
 *   a hook with lbi_fork_register() (core/fork.h) that takes every slot lock in
 *   prepare and releases them in parent and child.
 * - Threads that existed before the library was loaded were registered by
 *   glibc at their start; membarrier registration is per process. Threads
 *   made with a raw clone() have cpu_id -1: lock path.
 * - Debuggers: single-stepping inside a section aborts it at every step, so
 *   it never completes; gdb's displaced stepping over a breakpoint inside a
 *   section runs the rest of it unprotected. Do not break or step inside a
 *   section (step over the call), or run with LB_RSEQ=0.
 * - dlclose(): a thread's rseq_cs may keep pointing at our descriptor until
 *   its next preemption; the library must stay mapped while threads that
 *   used it run.
 * - aarch64 takes the lock path: it cannot be run and tested here
 *   (qemu-user has no rseq).
 *
 * Sources: Linux include/uapi/linux/rseq.h, kernel/sched/membarrier.c;
 * librseq's percpu operations (include/rseq/arch/x86); TCMalloc's
 * percpu_rseq_x86_64.S and TcmallocSlab::StopCpu (commit "Use a single
 * fence per remote operation", abcdeeac).
 */
#ifndef LOCKBATCH_RSEQ_H
#define LOCKBATCH_RSEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/*
 * struct lbi_rseq_hdr - The part of a slot the sections check and commit.
 * @stop: Nonzero while a lock holder owns the slot (R2-R4). Written only
 *        under the slot lock.
 * @cap: Count limit of lb_pcp's push section, written only under the slot
 *       lock with the slot stopped or by the owner CPU's lock path; unused
 *       by the other operations.
 * @word: Count in the low 32 bits, weight in the high 32: one store commits
 *        both. Read it with lbi_rseq_count()/lbi_rseq_weight().
 */
struct lbi_rseq_hdr {
	uint32_t stop;
	uint32_t cap;
	uint64_t word;
};

/*
 * struct lbi_rseq_layout - Where the caller's slots and their parts are.
 * @stride: Bytes from slot i to slot i + 1.
 * @hdr_off: Offset of the &struct lbi_rseq_hdr in a slot (8-aligned).
 * @items_off: Offset of the slot's ``void *items[]``.
 * @nr_slots: Number of slots; CPU ids at or above it take the lock path.
 */
struct lbi_rseq_layout {
	size_t stride;
	size_t hdr_off;
	size_t items_off;
	uint32_t nr_slots;
};

/*
 * enum lbi_rseq_rc - What an owner operation did.
 * @LBI_RSEQ_OK: Committed.
 * @LBI_RSEQ_FULL: Push only: the slot has no room within the limits;
 *                 nothing changed (flush, then retry or push under the lock).
 * @LBI_RSEQ_EMPTY: Pop and take only: the slot is empty; nothing changed.
 * @LBI_RSEQ_LOCK: Nothing changed; run this operation on the lock path.
 * @LBI_RSEQ_RESTART: Internal: the section aborted; never returned.
 */
enum lbi_rseq_rc {
	LBI_RSEQ_OK = 0,
	LBI_RSEQ_FULL,
	LBI_RSEQ_EMPTY,
	LBI_RSEQ_LOCK,
	LBI_RSEQ_RESTART,
};

/* Weights and limits stay below 2^31, so count + weight never carry out. */
#define LBI_RSEQ_WEIGHT_MAX 0x7fffffffu

static inline uint32_t lbi_rseq_count(uint64_t word)
{
	return (uint32_t)word;
}

static inline uint32_t lbi_rseq_weight(uint64_t word)
{
	return (uint32_t)(word >> 32);
}

static inline uint64_t lbi_rseq_word(uint32_t count, uint32_t weight)
{
	return (uint64_t)weight << 32 | count;
}

/* lbi_rseq_word() as a constant expression, for the sections' immediates. */
#define LBI_RSEQ_WORD(count, weight)					\
	((uint64_t)(uint32_t)(weight) << 32 | (uint32_t)(count))

/*
 * Pair slot of lbi_rseq_arch_push_pair(): two parallel arrays of
 * %LBI_RSEQ_PAIR_MAX pointers, the first right after the &struct
 * lbi_rseq_hdr, the second right after the first. Offsets from the header;
 * the caller asserts its layout against them.
 */
#define LBI_RSEQ_PAIR_MAX 31
#define LBI_RSEQ_PAIR_A sizeof(struct lbi_rseq_hdr)
#define LBI_RSEQ_PAIR_B (LBI_RSEQ_PAIR_A + LBI_RSEQ_PAIR_MAX * sizeof(void *))

#if LB_HAVE_RSEQ && defined(__x86_64__) && !defined(LB_TSAN)
#define LBI_RSEQ_ARCH 1
#include "rseq/rseq-x86_64.h"
#else
#define LBI_RSEQ_ARCH 0
#endif

/*
 * lbi_rseq_cpu_id() - This thread's cpu_id from its rseq area: -1 before
 * registration (or after unregistration), -2 if registration failed.
 */
static inline int lbi_rseq_cpu_id(void)
{
#if LBI_RSEQ_ARCH
	return lbi_cpu_rseq_area();
#else
	return -1;
#endif
}

/* The CPU to index with, or -1 for the lock path (negative or too high). */
static inline int lbi_rseq_owner_cpu(const struct lbi_rseq_layout *l)
{
	int cpu = lbi_rseq_cpu_id();

	return (unsigned int)cpu < l->nr_slots ? cpu : -1;
}

static inline char *lbi_rseq_slot(const struct lbi_rseq_layout *l,
				  void *base, int cpu)
{
	return (char *)base + (size_t)cpu * l->stride;
}

/**
 * lbi_rseq_push() - Add @item to the calling CPU's slot if it fits.
 * @l: Slot layout.
 * @base: Slot 0.
 * @item: The pointer to store.
 * @w: Its weight (0 for an unweighted stack), <= @max_weight.
 * @max_nr: The count after the push must be <= this.
 * @max_weight: The weight after the push must be <= this, at most
 *              %LBI_RSEQ_WEIGHT_MAX.
 * @cpup: Set to the CPU used (or -1 before returning %LBI_RSEQ_LOCK for an
 *        unusable id), so the caller's lock path knows the slot.
 *
 * A batch that flushes on the add that fills it passes max_nr - 1 and
 * max_weight - 1: the filling add gets %LBI_RSEQ_FULL and goes, with the
 * batch taken by lbi_rseq_take(), straight to the flush.
 *
 * Context: Owner path; any thread, also a signal handler. No lock, no
 * atomic instruction.
 * Return: %LBI_RSEQ_OK, %LBI_RSEQ_FULL or %LBI_RSEQ_LOCK.
 */
static inline int lbi_rseq_push(const struct lbi_rseq_layout *l, void *base,
				void *item, uint32_t w, uint32_t max_nr,
				uint32_t max_weight, int *cpup)
{
#if LBI_RSEQ_ARCH
	uint64_t inc = lbi_rseq_word(1, w);
	uint64_t lim = lbi_rseq_word(max_nr, max_weight);
	int rc;

	*cpup = -1;
	if (lbi_unlikely(w > max_weight))
		return LBI_RSEQ_FULL;
	do {
		int cpu = lbi_rseq_owner_cpu(l);
		char *s;

		*cpup = cpu;
		if (lbi_unlikely(cpu < 0))
			return LBI_RSEQ_LOCK;
		s = lbi_rseq_slot(l, base, cpu);
		rc = lbi_rseq_arch_push(cpu,
					(struct lbi_rseq_hdr *)(s + l->hdr_off),
					(void **)(s + l->items_off), item, inc,
					lim);
	} while (lbi_unlikely(rc == LBI_RSEQ_RESTART));
	return rc;
#else
	*cpup = -1;
	return LBI_RSEQ_LOCK;
#endif
}

/**
 * lbi_rseq_pop() - Take the top item of the calling CPU's slot.
 * @l: Slot layout.
 * @base: Slot 0.
 * @out: Receives the item on %LBI_RSEQ_OK; undefined otherwise.
 * @w: The weight pushed with that item (0 for an unweighted stack).
 * @cpup: As for lbi_rseq_push().
 *
 * Context: As lbi_rseq_push().
 * Return: %LBI_RSEQ_OK, %LBI_RSEQ_EMPTY or %LBI_RSEQ_LOCK.
 */
static inline int lbi_rseq_pop(const struct lbi_rseq_layout *l, void *base,
			       void **out, uint32_t w, int *cpup)
{
#if LBI_RSEQ_ARCH
	uint64_t dec = lbi_rseq_word(1, w);
	int rc;

	do {
		int cpu = lbi_rseq_owner_cpu(l);
		char *s;

		*cpup = cpu;
		if (lbi_unlikely(cpu < 0))
			return LBI_RSEQ_LOCK;
		s = lbi_rseq_slot(l, base, cpu);
		rc = lbi_rseq_arch_pop(cpu,
				       (struct lbi_rseq_hdr *)(s + l->hdr_off),
				       (void **)(s + l->items_off), out, dec);
	} while (lbi_unlikely(rc == LBI_RSEQ_RESTART));
	return rc;
#else
	(void)out;
	*cpup = -1;
	return LBI_RSEQ_LOCK;
#endif
}

/**
 * lbi_rseq_take() - Move every item of the calling CPU's slot to @buf.
 * @l: Slot layout.
 * @base: Slot 0.
 * @buf: Receives items[0..count) on %LBI_RSEQ_OK.
 * @cap: Entries @buf holds; a slot holding more takes the lock path.
 * @wordp: Receives the slot's word (count and weight) before the take.
 * @cpup: As for lbi_rseq_push().
 *
 * The owner's swap-out before a flush: one commit empties the slot.
 *
 * Context: As lbi_rseq_push().
 * Return: %LBI_RSEQ_OK, %LBI_RSEQ_EMPTY or %LBI_RSEQ_LOCK.
 */
static inline int lbi_rseq_take(const struct lbi_rseq_layout *l, void *base,
				void **buf, uint32_t cap, uint64_t *wordp,
				int *cpup)
{
#if LBI_RSEQ_ARCH
	int rc;

	do {
		int cpu = lbi_rseq_owner_cpu(l);
		char *s;

		*cpup = cpu;
		if (lbi_unlikely(cpu < 0))
			return LBI_RSEQ_LOCK;
		s = lbi_rseq_slot(l, base, cpu);
		rc = lbi_rseq_arch_take(cpu,
					(struct lbi_rseq_hdr *)(s + l->hdr_off),
					(void **)(s + l->items_off), buf, cap,
					wordp);
	} while (lbi_unlikely(rc == LBI_RSEQ_RESTART));
	return rc;
#else
	(void)buf;
	(void)cap;
	(void)wordp;
	*cpup = -1;
	return LBI_RSEQ_LOCK;
#endif
}

/*
 * enum lbi_rseq_why - Why the process runs the rseq path or not.
 */
enum lbi_rseq_why {
	LBI_RSEQ_WHY_ACTIVE,	   /* rseq path available */
	LBI_RSEQ_WHY_ARCH,	   /* no sections for this architecture */
	LBI_RSEQ_WHY_TSAN,	   /* ThreadSanitizer cannot see the asm */
	LBI_RSEQ_WHY_ENV,	   /* LB_RSEQ=0 */
	LBI_RSEQ_WHY_GLIBC,	   /* glibc did not register rseq */
	LBI_RSEQ_WHY_MEMBARRIER,   /* membarrier registration refused */
	LBI_RSEQ_WHY_TSAN_CLIENT,  /* a TSan runtime in the process */
};

/**
 * lbi_rseq_init() - Decide the path and register membarrier, once.
 *
 * Runs from a constructor when the library is loaded, while the process is
 * likely single-threaded (registration costs 2-3 µs then, milliseconds
 * once threads exist). Later calls return the first answer.
 *
 * Context: Any thread; idempotent.
 * Return: the &enum lbi_rseq_why of the process.
 */
enum lbi_rseq_why lbi_rseq_init(void);

/* Name of an &enum lbi_rseq_why ("rseq", "LB_RSEQ=0", ...). */
const char *lbi_rseq_why_name(enum lbi_rseq_why why);

/**
 * lbi_rseq_usable() - Whether a slot array may use the owner sections.
 * @force_lock: The caller's conf flag asking for the lock path.
 * @nr_slots: Slots in the array: at least one per possible CPU id.
 *
 * Context: Any thread; call once when creating the slot array.
 * Return: true for the rseq path, false for the lock path.
 */
bool lbi_rseq_usable(bool force_lock, unsigned int nr_slots);

/**
 * lbi_rseq_nr_cpu_ids() - Highest possible CPU id + 1.
 *
 * From /sys/devices/system/cpu/possible (offline and hot-pluggable CPUs
 * included), else sysconf(_SC_NPROCESSORS_CONF).
 *
 * Context: Any thread.
 * Return: at least 1.
 */
unsigned int lbi_rseq_nr_cpu_ids(void);

/*
 * membarrier() calls this thread has made (every command: registration,
 * fences, their fallbacks). Callers read it around a hold to count the
 * fences it made (lb_pcp's &lb_pcp_stats.fences and .owner_fences).
 */
extern _Thread_local uint64_t lbi_rseq_membarriers;

/**
 * lbi_rseq_fence() - Restart any critical section running on @cpu.
 * @cpu: The CPU, >= 0.
 *
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, MEMBARRIER_CMD_FLAG_CPU,
 * @cpu). A no-op on the lock path (no sections run) and for the calling
 * thread's own CPU. About 10 µs when a thread of ours runs on @cpu (an
 * IPI), 0.3 µs otherwise. If the per-CPU command fails, falls back to the
 * process-wide one (every CPU's sections restart), retrying it while the
 * kernel reports a transient failure (-ENOMEM, -EINTR, -EAGAIN).
 *
 * Context: Any thread, not a signal handler. May block briefly.
 * Return: 0, or -EINVAL for a negative @cpu, or the membarrier -errno of
 * the process-wide command: a failure no retry cures (the registration
 * made at init was refused or revoked), after which the slot's sections
 * are not known to be restarted.
 */
int lbi_rseq_fence(int cpu);

/**
 * lbi_rseq_stop() - R2: stop a slot and fence its CPU.
 * @h: The slot's header; the caller holds the slot lock (R1).
 * @cpu: The slot's CPU.
 * @empty: The caller saw the slot empty and will not write it: no fence
 *         (a section already past its stop check may still commit).
 *
 * Context: Slot lock held.
 * Return: 0, or the -errno of lbi_rseq_fence(); the slot is stopped either
 * way and the caller must still run R4.
 */
static inline int lbi_rseq_stop(struct lbi_rseq_hdr *h, int cpu, bool empty)
{
	ck_pr_store_32(&h->stop, 1);
	if (empty)
		return 0;
	return lbi_rseq_fence(cpu);
}

/**
 * lbi_rseq_start() - R4: let the owner sections back in.
 * @h: The slot's header; the caller holds the slot lock.
 *
 * Release: every R3 store is visible before a section can see stop == 0.
 *
 * Context: Slot lock held.
 */
static inline void lbi_rseq_start(struct lbi_rseq_hdr *h)
{
	ck_pr_fence_release();
	ck_pr_store_32(&h->stop, 0);
}

#endif /* LOCKBATCH_RSEQ_H */
