// SPDX-License-Identifier: GPL-2.0-only
/*
 * pinbatch: one longterm GUP call over folios that several CPUs' LRU
 * caches hold, or whose surplus references no cache holds.  Prints one
 * "key=value ..." line; exits 0 if the case ran as set up, 77 (after a
 * "skipped: <why>" line) if the kernel lacks an interface it needs,
 * anything else if it failed.  What the kernel did is read from vm/init's
 * drain counts: the targeted drain's work items and rounds, and
 * lru_add_drain_all().
 *
 *   pinbatch holders FOLIO_KB
 *	Each CPU k of 1..K (K = online CPUs - 1, at least 2) first empties
 *	its lru_add batch (a PMD-sized THP fault moves it) and then faults 16
 *	pages' worth of FOLIO_KB mTHPs, which wait in its batch on the
 *	patched kernel.  CPU 0 then pins the whole range FOLL_LONGTERM in one
 *	GUP call (debugfs gup_test, ZONE_MOVABLE with movablecore=, so every
 *	folio must be migrated and its holder drained).  Passes if every page
 *	was pinned.  The drain counts must show K work items (one per holder
 *	CPU) in one round, and no lru_add_drain_all().
 *   pinbatch fallback
 *	128 base pages faulted on CPU 0 and spliced into a pipe (vmsplice():
 *	the pipe holds a reference to each page that no LRU cache explains),
 *	while CPUs 1..n-1 each keep a page of their own in their lru_add
 *	batch.  CPU 0 then pins the 128 pages FOLL_LONGTERM in one GUP call:
 *	every page has a surplus that no cache holds, and each one scans the
 *	busy CPUs in vain, so the call runs out of its scan budget.  The pin
 *	itself fails (the pipe's references keep the pages from migrating);
 *	the case passes if the GUP call returned.  The drain counts must show
 *	exactly one lru_add_drain_all() for the call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mm/gup_test.h"
#include "caseutil.h"

#define FOLL_WRITE	0x01
#define GUP_TEST	"/sys/kernel/debug/gup_test"
#define CACHED_PAGES	16	/* pages left in a batch: under PAGEVEC_SIZE */
#define FALLBACK_PAGES	128

/* Move the calling CPU's lru_add batch to the LRU: a PMD-sized THP fault. */
static void flush_lru_add_batch(void)
{
	char *p = map_region(PMD_SIZE);

	madvise(p, PMD_SIZE, MADV_HUGEPAGE);
	p[0] = 1;
}

/* One PIN_LONGTERM_BENCHMARK call over [p, p + len); -errno or 0. */
static int pin_once(char *p, size_t len, unsigned long long *pinned)
{
	struct gup_test g = { 0 };
	int fd = open(GUP_TEST, O_RDWR), rc;

	if (fd < 0)
		return -errno;
	g.addr = (uintptr_t)p;
	g.size = len;
	g.nr_pages_per_call = len / PAGE;
	g.gup_flags = FOLL_WRITE;
	rc = ioctl(fd, PIN_LONGTERM_BENCHMARK, &g) ? -errno : 0;
	*pinned = g.size;
	close(fd);
	return rc;
}

static int holders(size_t folio, long ncpu)
{
	size_t slice = (CACHED_PAGES * PAGE / folio ? CACHED_PAGES * PAGE / folio : 1) * folio;
	long k, cpus = ncpu - 1;
	unsigned long long pinned;
	char *p;
	size_t i;
	int rc;

	if (cpus < 2) {
		printf("skipped: %ld CPUs online, the case needs 3\n", ncpu);
		return CASE_SKIPPED;
	}
	p = map_region(cpus * slice);
	for (k = 1; k <= cpus; k++) {
		on_cpu((int)k);
		flush_lru_add_batch();
		for (i = 0; i < slice; i += PAGE)
			p[(k - 1) * slice + i] = (char)k;
	}
	on_cpu(0);
	rc = pin_once(p, cpus * slice, &pinned);
	printf("holders_expected=%ld folios=%zu pinned_bytes=%llu of=%zu ioctl_rc=%d\n",
	       cpus, cpus * slice / folio, pinned, cpus * slice, rc);
	return rc == 0 && pinned == cpus * slice ? 0 : 1;
}

static int fallback(long ncpu)
{
	size_t len = FALLBACK_PAGES * PAGE, i;
	unsigned long long pinned;
	struct iovec iov;
	int pipefd[2], rc;
	long k, busy = 0;
	ssize_t spliced;
	char *p;

	if (ncpu < 2) {
		printf("skipped: one CPU online, the case needs two\n");
		return CASE_SKIPPED;
	}
	on_cpu(0);
	p = fault_region(len);
	if (pipe(pipefd) || fcntl(pipefd[1], F_SETPIPE_SZ, (int)len) < (int)len) {
		perror("pipe");
		return 2;
	}
	iov.iov_base = p;
	iov.iov_len = len;
	spliced = vmsplice(pipefd[1], &iov, 1, 0);
	for (k = 1; k < ncpu; k++) {
		char *own;

		if (try_on_cpu((int)k))
			continue;
		flush_lru_add_batch();
		own = map_region(PAGE);
		own[0] = 1;
		busy++;
	}
	on_cpu(0);
	rc = pin_once(p, len, &pinned);
	printf("spliced_bytes=%zd of=%zu busy_cpus=%ld ioctl_rc=%d\n",
	       spliced, len, busy, rc);
	for (i = 0; i < 2; i++)
		close(pipefd[i]);
	return spliced == (ssize_t)len && busy > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	rc = need_path(GUP_TEST, "no debugfs gup_test (CONFIG_GUP_TEST)");
	if (rc)
		return rc;
	if (argc == 3 && !strcmp(argv[1], "holders")) {
		size_t folio = strtoul(argv[2], NULL, 0) << 10;

		if (folio < 2 * PAGE)
			goto usage;
		rc = need_mthp(folio >> 10);
		return rc ? rc : holders(folio, ncpu);
	}
	if (argc == 2 && !strcmp(argv[1], "fallback"))
		return fallback(ncpu);
usage:
	fprintf(stderr, "usage: see the comment at the top of pinbatch.c\n");
	return 2;
}
