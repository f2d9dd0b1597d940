/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * caseutil: what the guest case programs (lrucase, mthpcase, pcachecase,
 * drainrace) share: CPU pinning, sysfs/procfs writes, faulting aligned
 * regions, counting mapped pages in large folios, /proc/vmstat and sysfs
 * counters, memory cgroups.
 */
#ifndef CASEUTIL_H
#define CASEUTIL_H

#include <stddef.h>

#define PAGE		4096UL
#define PMD_SIZE	(2UL << 20)

/*
 * A region length from the command line: bytes with a K or M suffix, or a
 * plain number of MiB.  The cases fault a whole number of MiB plus 64 KiB,
 * so that the last mTHPs faulted (16K and 64K alike) are still waiting in
 * the faulting CPU's lru_add batch: a whole number of MiB is a whole number
 * of batch periods at both sizes, which leaves the batch empty.  0 if ARG
 * is not a length.
 */
size_t case_len(const char *arg);
/* Pin the calling thread to CPU; 0, or -errno (CPU offline or absent). */
int try_on_cpu(int cpu);
/* The same, exiting with status 2 on failure (the case cannot run). */
void on_cpu(int cpu);
/* Write S to PATH; 0 or -errno. */
int write_str(const char *path, const char *s);
/* The first number in PATH, or -1 when it cannot be read. */
long read_long(const char *path);
/* /proc/vmstat's NAME, or -1 when the kernel has no such counter. */
long vmstat(const char *name);
/* A private anonymous mapping of LEN aligned to 2 MiB, each page written. */
char *fault_region(size_t len);
/* The same without writing it. */
char *map_region(size_t len);
/* Mapped pages of [p, p + len) that belong to a large folio. */
long large_pages(const char *p, size_t len);
/* Move the calling process into memory cgroup CG; 0 or -errno. */
int join_cgroup(const char *cg);
/* Write BYTES to CG/memory.reclaim; 0 or -errno. */
int reclaim(const char *cg, size_t bytes);
/*
 * Print "skipped: WHY" and return 77 when PATH does not exist: a case
 * whose kernel interface is missing says so instead of failing.
 */
int need_path(const char *path, const char *why);

/*
 * The same (77 after a "skipped:" line) unless anonymous faults use
 * KB-sized mTHPs: hugepages-<KB>kB/enabled reads "[always]".
 */
int need_mthp(unsigned long kb);

#define CASE_SKIPPED	77

#endif
