// SPDX-License-Identifier: GPL-2.0-only
/*
 * mthpcase: anonymous mTHPs, faulted on CPU 0 (so that the last of them
 * wait in CPU 0's lru_add cache on the patched kernel), through the other
 * mm paths from CPU 1.  Prints one "key=value ..." line; exits 0 if the
 * case passed, 77 with a "skipped: <why>" line if the kernel lacks an
 * interface the case needs, anything else if it failed.  FOLIO_KB is the
 * mTHP size the caller enabled in sysfs.
 *
 *   mthpcase madv free|cold|pageout FOLIO_KB LEN
 *	MADV_FREE, MADV_COLD or MADV_PAGEOUT on the whole first half of the
 *	region (whole folios, not split), then on the first half of every
 *	folio of the second half (partial ranges: those folios are split,
 *	which drains the caches holding them; the last ones faulted are still
 *	in CPU 0's cache).  Passes if every madvise() succeeded, some folios
 *	were split, and the data that was not given away reads back right
 *	(everything for cold; the untouched halves for free and pageout).
 *   mthpcase mlock FOLIO_KB LEN
 *	mlock() and munlock() of the whole region, then of the first half of
 *	every folio.  Passes if all succeeded and the kernel counted the
 *	region's pages as mlocked (unevictable_pgs_mlocked).
 *   mthpcase migrate FOLIO_KB LEN
 *	move_pages() of the region to node 1, then mbind(MPOL_BIND node 0,
 *	MPOL_MF_MOVE) back.  Needs two NUMA nodes.  Passes if every page
 *	ended on node 1, then on node 0, with its data.
 *   mthpcase khugepaged FOLIO_KB LEN SECONDS
 *	MADV_HUGEPAGE on the region, khugepaged woken with a 100 ms scan
 *	period, for at most SECONDS.  Passes if khugepaged collapsed at least
 *	one PMD of it (pages_collapsed) and the data is intact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caseutil.h"

#ifndef MADV_COLD
#define MADV_COLD	20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif
#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)
#define KHP		"/sys/kernel/mm/transparent_hugepage/khugepaged"

static char *fault_on_cpu0(size_t len)
{
	char *p;

	on_cpu(0);
	p = fault_region(len);
	on_cpu(1);
	return p;
}

/* Pages of [p, p + len) that do not hold what fault_region() wrote. */
static long bad_pages(const char *p, size_t off, size_t len)
{
	long bad = 0;
	size_t i;

	for (i = off; i < off + len; i += PAGE)
		if (p[i] != ((char)(i / PAGE) | 1))
			bad++;
	return bad;
}

static int madv(const char *mode, size_t folio, size_t len)
{
	/* The first half, in whole folios */
	size_t half = len / 2 / folio * folio;
	int advice, rc = 0;
	long before, after, bad;
	size_t i;
	char *p;

	if (!strcmp(mode, "free"))
		advice = MADV_FREE;
	else if (!strcmp(mode, "cold"))
		advice = MADV_COLD;
	else if (!strcmp(mode, "pageout"))
		advice = MADV_PAGEOUT;
	else
		return 2;
	p = fault_on_cpu0(len);
	before = large_pages(p, len);
	if (madvise(p, half, advice))
		rc = -errno;
	/* The last folios faulted are the ones CPU 0's cache may hold. */
	for (i = half; i < len; i += folio)
		if (madvise(p + i, folio / 2, advice))
			rc = -errno;
	after = large_pages(p, len);
	/*
	 * MADV_COLD keeps every page; MADV_FREE and MADV_PAGEOUT keep the
	 * halves they were not given (read back from swap after a pageout).
	 */
	bad = 0;
	for (i = half; i < len; i += folio)
		bad += bad_pages(p, i + folio / 2, folio / 2);
	if (advice == MADV_COLD)
		bad += bad_pages(p, 0, len);
	printf("large_before=%ld large_after=%ld madvise_rc=%d bad_pages=%ld\n",
	       before, after, rc, bad);
	return rc == 0 && before > 0 && after < before && bad == 0 ? 0 : 1;
}

static int mlock_case(size_t folio, size_t len)
{
	long m0 = vmstat("unevictable_pgs_mlocked"), m1, u0, u1;
	int rc = 0;
	size_t i;
	char *p = fault_on_cpu0(len);

	u0 = vmstat("unevictable_pgs_munlocked");
	if (mlock(p, len) || munlock(p, len))
		rc = -errno;
	m1 = vmstat("unevictable_pgs_mlocked");
	for (i = 0; i < len && !rc; i += folio)
		if (mlock(p + i, folio / 2) || munlock(p + i, folio / 2))
			rc = -errno;
	u1 = vmstat("unevictable_pgs_munlocked");
	printf("mlock_rc=%d mlocked_delta=%ld munlocked_delta=%ld of=%lu bad_pages=%ld\n",
	       rc, m1 - m0, u1 - u0, len / PAGE, bad_pages(p, 0, len));
	if (rc == -EPERM || rc == -ENOMEM) {
		printf("skipped: mlock: %s (RLIMIT_MEMLOCK)\n", strerror(-rc));
		return CASE_SKIPPED;
	}
	return rc == 0 && m1 - m0 >= (long)(len / PAGE) &&
	       bad_pages(p, 0, len) == 0 ? 0 : 1;
}

/* Pages of the region on NODE (move_pages() with no target: query). */
static long on_node(char *p, size_t len, int node, void **pages, int *status)
{
	long n = (long)(len / PAGE), i, hits = 0;

	for (i = 0; i < n; i++)
		pages[i] = p + i * PAGE;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
		return -errno;
	for (i = 0; i < n; i++)
		hits += status[i] == node;
	return hits;
}

static int migrate(size_t len)
{
	long n = (long)(len / PAGE), i, on1, on0, mrc, brc, m0, m1;
	unsigned long mask = 1;
	void **pages;
	int *nodes, *status, rc;
	char *p;

	rc = need_path("/sys/devices/system/node/node1", "one NUMA node, the case needs two");
	if (rc)
		return rc;
	pages = calloc(n, sizeof(*pages));
	nodes = calloc(n, sizeof(*nodes));
	status = calloc(n, sizeof(*status));
	if (!pages || !nodes || !status)
		return 2;
	p = fault_on_cpu0(len);
	m0 = vmstat("pgmigrate_success");
	for (i = 0; i < n; i++) {
		pages[i] = p + i * PAGE;
		nodes[i] = 1;
	}
	mrc = syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE) ? -errno : 0;
	on1 = on_node(p, len, 1, pages, status);
	brc = syscall(SYS_mbind, p, len, MPOL_BIND, &mask, 8 * sizeof(mask),
		      MPOL_MF_MOVE) ? -errno : 0;
	on0 = on_node(p, len, 0, pages, status);
	m1 = vmstat("pgmigrate_success");
	printf("move_pages_rc=%ld on_node1=%ld mbind_rc=%ld on_node0=%ld of=%ld migrated_pages=%ld bad_pages=%ld\n",
	       mrc, on1, brc, on0, n, m1 - m0, bad_pages(p, 0, len));
	return mrc == 0 && brc == 0 && on1 == n && on0 == n &&
	       bad_pages(p, 0, len) == 0 ? 0 : 1;
}

static int khugepaged(size_t len, int seconds)
{
	char old_scan[32], old_alloc[32];
	long c0, c1, t;
	char *p;
	int rc;

	rc = need_path(KHP "/pages_collapsed", "no khugepaged (CONFIG_TRANSPARENT_HUGEPAGE)");
	if (rc)
		return rc;
	snprintf(old_scan, sizeof(old_scan), "%ld", read_long(KHP "/scan_sleep_millisecs"));
	snprintf(old_alloc, sizeof(old_alloc), "%ld", read_long(KHP "/alloc_sleep_millisecs"));
	/* Faulted before MADV_HUGEPAGE: mTHPs, not PMD THPs, at fault time. */
	p = fault_on_cpu0(len);
	c0 = read_long(KHP "/pages_collapsed");
	rc = madvise(p, len, MADV_HUGEPAGE) ? -errno : 0;
	write_str(KHP "/alloc_sleep_millisecs", "100");
	write_str(KHP "/scan_sleep_millisecs", "100");	/* wakes it up */
	for (t = 0; t < seconds * 10L; t++) {
		if (read_long(KHP "/pages_collapsed") > c0)
			break;
		usleep(100000);
	}
	c1 = read_long(KHP "/pages_collapsed");
	write_str(KHP "/scan_sleep_millisecs", old_scan);
	write_str(KHP "/alloc_sleep_millisecs", old_alloc);
	printf("madvise_rc=%d collapsed_delta=%ld waited_ms=%ld large_pages=%ld bad_pages=%ld\n",
	       rc, c1 - c0, t * 100, large_pages(p, len), bad_pages(p, 0, len));
	return rc == 0 && c1 > c0 && bad_pages(p, 0, len) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	size_t folio, len;
	int rc, argi;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc < 4)
		goto usage;
	rc = need_path("/proc/kpageflags", "no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)");
	if (rc)
		return rc;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skipped: one CPU online, the case needs two\n");
		return CASE_SKIPPED;
	}
	/* "madv" takes the advice first; every case then FOLIO_KB LEN (case_len()). */
	argi = !strcmp(argv[1], "madv") ? 3 : 2;
	if (argc < argi + 2)
		goto usage;
	folio = strtoul(argv[argi], NULL, 0) << 10;
	len = case_len(argv[argi + 1]);
	if (folio < 2 * PAGE || !len || len % folio)
		goto usage;
	if (strcmp(argv[1], "madv") && strcmp(argv[1], "mlock") &&
	    strcmp(argv[1], "migrate") && strcmp(argv[1], "khugepaged"))
		goto usage;
	rc = need_mthp(folio >> 10);
	if (rc)
		return rc;
	if (!strcmp(argv[1], "madv") && argc == 5)
		return madv(argv[2], folio, len);
	if (!strcmp(argv[1], "mlock") && argc == 4)
		return mlock_case(folio, len);
	if (!strcmp(argv[1], "migrate") && argc == 4)
		return migrate(len);
	if (!strcmp(argv[1], "khugepaged") && argc == 5)
		return khugepaged(len, atoi(argv[4]));
usage:
	fprintf(stderr, "usage: see the comment at the top of mthpcase.c\n");
	return 2;
}
