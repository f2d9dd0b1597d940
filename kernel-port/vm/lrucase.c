// SPDX-License-Identifier: GPL-2.0-only
/*
 * lrucase: guest cases that reach the per-CPU LRU cache paths of the series
 * from two CPUs.  Each prints one "key=value ..." line and exits 0 only if
 * the case passed.
 *
 *   lrucase split-debugfs LEN
 *	mTHPs faulted on CPU 0, half of each unmapped from CPU 1, then split
 *	from CPU 1 through debugfs split_huge_pages; passes if no mapped page
 *	of the range is still part of a large folio.
 *   lrucase split-reclaim CGROUP LEN
 *	The same in memory cgroup CGROUP, split by the deferred-split shrinker
 *	through CGROUP/memory.reclaim written from CPU 1; a first reclaim, a
 *	drain of CPU 0's LRU cache (a MADV_DONTNEED on CPU 0), a second
 *	reclaim.  Passes if nothing is left unsplit after the second.
 *   lrucase split-limit CGROUP LEN
 *	The same in CGROUP, split by the deferred-split shrinker from direct
 *	reclaim: memory.max is set 1 MiB above the cgroup's usage and CPU 1
 *	then faults LEN/4 more, so the charge reclaims (no memory.reclaim,
 *	hence no lru_add_drain_all() of its own; the unmapped halves are all
 *	there is to free without swap).  Passes if the charge did not OOM and
 *	the shrinker split at least one folio.
 *   lrucase pin LEN
 *	mTHPs faulted on CPU 0 (ZONE_MOVABLE with movablecore=), then pinned
 *	FOLL_LONGTERM from CPU 1 through debugfs gup_test, which migrates
 *	them out of ZONE_MOVABLE; passes if every page was pinned.
 *   lrucase reclaim-time CGROUP LEN RUNS
 *	Fault LEN in CGROUP, then RUNS times: touch it all again (swapping it
 *	back in) and time a memory.reclaim of half of it.  Prints each run
 *	and the median in microseconds.
 *
 * The mTHP size is whatever the caller enabled in sysfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mm/gup_test.h"
#include "caseutil.h"

#define FOLL_WRITE	0x01

/* Fault on CPU 0, then unmap the second half of each 16K from CPU 1. */
static char *fault_and_half_unmap(size_t len)
{
	char *p;
	size_t i;

	on_cpu(0);
	p = fault_region(len);
	on_cpu(1);
	for (i = 0; i < len; i += 4 * PAGE)
		madvise(p + i + 2 * PAGE, 2 * PAGE, MADV_DONTNEED);
	return p;
}

static int split_debugfs(size_t len)
{
	char *p = fault_and_half_unmap(len), cmd[128];
	long before = large_pages(p, len), after;
	int rc;

	snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(),
		 (unsigned long)p, (unsigned long)(p + len));
	rc = write_str("/sys/kernel/debug/split_huge_pages", cmd);
	after = large_pages(p, len);
	printf("large_before=%ld large_after=%ld write_rc=%d\n", before, after,
	       rc);
	return rc == 0 && before > 0 && after == 0 ? 0 : 1;
}

static int split_reclaim(const char *cg, size_t len)
{
	char *p, *scratch;
	long before, after1, after2;
	int rc1, rc2;

	if (join_cgroup(cg))
		return 2;
	p = fault_and_half_unmap(len);
	before = large_pages(p, len);
	/* Nothing else to reclaim without swap: the shrinkers get scanned */
	rc1 = reclaim(cg, len);
	after1 = large_pages(p, len);
	/* zap_page_range_single() drains the LRU cache of the CPU it runs on */
	on_cpu(0);
	scratch = fault_region(PAGE);
	madvise(scratch, PAGE, MADV_DONTNEED);
	on_cpu(1);
	rc2 = reclaim(cg, len);
	after2 = large_pages(p, len);
	printf("large_before=%ld large_after_reclaim1=%ld large_after_reclaim2=%ld reclaim_rc=%d,%d\n",
	       before, after1, after2, rc1, rc2);
	return before > 0 && after2 == 0 ? 0 : 1;
}

static int split_limit(const char *cg, size_t len)
{
	char path[256], max[32], *p, *extra;
	long before, after, cur;
	int rc;

	if (join_cgroup(cg))
		return 2;
	p = fault_and_half_unmap(len);
	before = large_pages(p, len);
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	cur = read_long(path);
	if (cur <= 0)
		return 2;
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	snprintf(max, sizeof(max), "%ld", cur + (1L << 20));
	rc = write_str(path, max);
	/* Still on CPU 1: the charges below reclaim from here. */
	extra = fault_region(len / 4);
	after = large_pages(p, len);
	write_str(path, "max");
	printf("large_before=%ld large_after=%ld max_rc=%d memory_max=%s\n",
	       before, after, rc, max);
	munmap(extra, len / 4);
	return rc == 0 && before > 0 && after < before ? 0 : 1;
}

static int pin(size_t len)
{
	struct gup_test g = { 0 };
	long m0, m1;
	char *p;
	int fd, rc;

	on_cpu(0);
	p = fault_region(len);
	on_cpu(1);
	fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	if (fd < 0) {
		perror("gup_test");
		return 2;
	}
	g.addr = (uintptr_t)p;
	g.size = len;
	g.nr_pages_per_call = 512;
	g.gup_flags = FOLL_WRITE;
	m0 = vmstat("pgmigrate_success");
	rc = ioctl(fd, PIN_LONGTERM_BENCHMARK, &g) ? -errno : 0;
	m1 = vmstat("pgmigrate_success");
	close(fd);
	printf("pinned_bytes=%llu of=%zu ioctl_rc=%d migrated_pages=%ld\n",
	       (unsigned long long)g.size, len, rc, m1 - m0);
	return rc == 0 && g.size == len ? 0 : 1;
}

static long usec_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000000L +
	       (t1.tv_nsec - t0->tv_nsec) / 1000;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static int reclaim_time(const char *cg, size_t len, int runs)
{
	long us[64];
	char *p;
	int r;

	if (runs < 1 || runs > 64 || join_cgroup(cg))
		return 2;
	p = fault_region(len);
	printf("runs_us=");
	for (r = 0; r < runs; r++) {
		struct timespec t0;
		size_t i;

		for (i = 0; i < len; i += PAGE)
			p[i]++;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		reclaim(cg, len / 2);
		us[r] = usec_since(&t0);
		printf("%s%ld", r ? "," : "", us[r]);
	}
	qsort(us, runs, sizeof(us[0]), cmp_long);
	printf(" median_us=%ld\n", us[runs / 2]);
	return 0;
}

int main(int argc, char **argv)
{
	size_t len = argc > 2 ? case_len(argv[argc > 3 ? 3 : 2]) : 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "split-debugfs"))
		return split_debugfs(len);
	if (argc == 4 && !strcmp(argv[1], "split-reclaim"))
		return split_reclaim(argv[2], len);
	if (argc == 4 && !strcmp(argv[1], "split-limit"))
		return split_limit(argv[2], len);
	if (argc == 3 && !strcmp(argv[1], "pin"))
		return pin(len);
	if (argc == 5 && !strcmp(argv[1], "reclaim-time"))
		return reclaim_time(argv[2], len, atoi(argv[4]));
	fprintf(stderr, "usage: see the comment at the top of lrucase.c\n");
	return 2;
}
