/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef LOCKBATCH_CPU_H
#define LOCKBATCH_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DOC: Current CPU
 *
 * Per-CPU slots are chosen from the CPU the calling thread runs on. The id
 * is a hint only: the thread may migrate right after reading it, and every
 * user of a slot takes the slot's lock, so a stale id costs a remote cache
 * line, never correctness.
 *
 * Sources, best first:
 *
 * - %LB_CPU_SRC_RSEQ: the ``cpu_id`` field of the rseq area glibc (>= 2.35)
 *   registers for every thread (``__rseq_offset``/``__rseq_size`` from
 *   ``<sys/rseq.h>``). A plain load, about 0.4 ns.
 * - %LB_CPU_SRC_GETCPU: sched_getcpu(), a vDSO call, about 4.5 ns (9 ns when
 *   glibc's rseq registration is off: ``GLIBC_TUNABLES=glibc.pthread.rseq=0``).
 * - %LB_CPU_SRC_INJECTED: a function the caller supplies (tests, simulators,
 *   and programs that pin threads and know their CPU).
 *
 * Concurrency: every function here may be called from any thread at any
 * time; none takes a lock.
 */

/**
 * DOC: System calls
 *
 * The owner never enters the kernel: an owner call of either cache
 * (lb_cpubatch_add(), lb_pcp_alloc(), lb_pcp_free()), including the
 * flushes, refills, spills and magazine reloads it makes itself, is user
 * code, a ck spinlock and the back-end's lock and callbacks. Its own slot
 * needs no fence: a section of another thread on the same CPU is
 * preempted, and restarts before it runs again. The CPU id is a load from
 * the rseq area (sched_getcpu() is a vDSO call, a syscall only where the
 * kernel offers no vDSO). tests/stress/stress_owner_syscalls.c runs owner
 * calls with every system call of the thread trapped by a seccomp filter.
 *
 * What remains, all off the owner's fast path:
 *
 * - registration: one membarrier(%MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ)
 *   per process, from the library's constructor, when the rseq path is
 *   usable (lb_cpu_path());
 * - remote fences: one membarrier(%MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ)
 *   per slot of another CPU that a remote access stops and then writes
 *   (drain of a slot or of an object, drain_all, settle, decay, destroy);
 *   skipped for a slot seen empty. lb_pcp counts them
 *   (&lb_pcp_stats.fences);
 * - owner calls that fence anyway, rare and counted by lb_pcp
 *   (&lb_pcp_stats.owner_fences): a thread migrated between its section
 *   and the slot lock of its lock path fences the slot it left; an
 *   allocation that finds the back-end empty drains the other slots
 *   before it fails with -ENOMEM;
 * - waiting: a slot lock another thread holds is spun on, then waited for
 *   with sched_yield(); a %LB_LOCK_MUTEX back-end lock may sleep in futex();
 * - the decay thread (lb_pcp_decay_thread_start()): its sleeps, and its
 *   ticks' remote fences;
 * - whatever the caller's callbacks (back-end, get/put) do.
 */

/**
 * enum lb_cpu_src - Where a CPU id comes from.
 * @LB_CPU_SRC_RSEQ: glibc's registered rseq area.
 * @LB_CPU_SRC_GETCPU: sched_getcpu().
 * @LB_CPU_SRC_INJECTED: a caller-supplied &lb_cpu_fn.
 */
enum lb_cpu_src {
	LB_CPU_SRC_RSEQ,
	LB_CPU_SRC_GETCPU,
	LB_CPU_SRC_INJECTED,
};

/**
 * typedef lb_cpu_fn - A caller-supplied CPU-id source.
 * @arg: The argument registered with the function.
 *
 * May return any int: an id at or above the slot count is folded with
 * ``id % nr_slots``; a negative value means "unknown" and selects slot 0.
 *
 * Context: Called from the thread adding or allocating, with no lockbatch
 * lock held. Must not call back into the lockbatch object it serves.
 * Return: a CPU id, or a negative value when none is known.
 */
typedef int (*lb_cpu_fn)(void *arg);

/**
 * lb_cpu_current() - The CPU the calling thread runs on now.
 *
 * Reads the rseq area when glibc registered one for this thread, else calls
 * sched_getcpu().
 *
 * Context: Any thread. Lock-free, does not block.
 * Return: a CPU id >= 0, or -errno from sched_getcpu() (%-ENOSYS where the
 * kernel cannot tell).
 */
int lb_cpu_current(void);

/**
 * lb_cpu_source() - The source lb_cpu_current() uses in this thread.
 *
 * Context: Any thread.
 * Return: %LB_CPU_SRC_RSEQ or %LB_CPU_SRC_GETCPU.
 */
enum lb_cpu_src lb_cpu_source(void);

/**
 * lb_cpu_source_name() - A short name for a CPU-id source.
 * @src: The source.
 *
 * Context: Any thread.
 * Return: "rseq", "sched_getcpu", "injected", or "invalid".
 */
const char *lb_cpu_source_name(enum lb_cpu_src src);

/**
 * define LB_CPU_SLOTS_MAX - Largest slot count of lb_cpubatch and lb_pcp.
 *
 * Above it creation fails with %-EINVAL, and a
 * default slot count (lb_cpu_count()) is clamped to it. Linux's largest
 * x86-64 NR_CPUS is 8192; 4096 covers every machine this targets.
 */
#define LB_CPU_SLOTS_MAX 4096u

/**
 * lb_cpu_count() - Number of CPUs configured on this machine.
 *
 * The right slot count for a per-CPU structure: sysconf(_SC_NPROCESSORS_CONF),
 * which counts CPUs that are offline or may be hot-added too.
 *
 * Context: Any thread.
 * Return: the number of configured CPUs, at least 1.
 */
unsigned int lb_cpu_count(void);

/**
 * enum lb_cpu_path - How per-CPU slots are reached from their owner CPU.
 * @LB_CPU_PATH_LOCK: Under the slot lock.
 * @LB_CPU_PATH_RSEQ: In restartable sequences (no lock, no atomic
 *                    instruction); remote access stops the slot and fences
 *                    its CPU with membarrier.
 */
enum lb_cpu_path {
	LB_CPU_PATH_LOCK,
	LB_CPU_PATH_RSEQ,
};

/**
 * lb_cpu_path() - The owner path this process can use.
 *
 * %LB_CPU_PATH_RSEQ needs x86-64, no ThreadSanitizer (neither a TSan build
 * of the library nor a TSan runtime in the process: a client built with
 * ``-fsanitize=thread`` gets the lock path, which tells TSan its
 * orderings), glibc's rseq registration (off under
 * ``GLIBC_TUNABLES=glibc.pthread.rseq=0`` and valgrind), no ``LB_RSEQ=0``
 * in the environment, and membarrier's private expedited rseq command. A
 * per-CPU object may still take the lock path when its configuration asks
 * for it or it has fewer slots than possible CPU ids: its own stats say
 * which path it runs (&lb_cpubatch_stats.path, &lb_pcp_stats.rseq).
 *
 * Context: Any thread. Decided once, when the library is loaded.
 * Return: %LB_CPU_PATH_RSEQ or %LB_CPU_PATH_LOCK.
 */
enum lb_cpu_path lb_cpu_path(void);

/**
 * lb_cpu_path_name() - lb_cpu_path() with its reason, for reports.
 *
 * Context: Any thread.
 * Return: "rseq", or "lock (<reason>)", e.g. "lock (LB_RSEQ=0)" or
 * "lock (ThreadSanitizer runtime in the process)".
 */
const char *lb_cpu_path_name(void);

#ifdef __cplusplus
}
#endif

#endif /* LOCKBATCH_CPU_H */
