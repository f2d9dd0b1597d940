// SPDX-License-Identifier: GPL-2.0-only
/*
 * pcachecase DIR MIB: page-cache large folios through truncate, hole
 * punch and invalidation.  DIR must be a tmpfs mounted huge=within_size;
 * a file of MIB (a multiple of 2 MiB, at least 4) is sized first and then
 * written, so that shmem gives it PMD-sized folios, and mapped shared
 * (read) to count its pages in large folios.  Then from CPU 1:
 *   - a hole of 128 KiB is punched inside the second 2 MiB (the folio is
 *     split: truncate_inode_partial_folio());
 *   - the file is truncated to MIB - 1 MiB (the last folio is split);
 *   - posix_fadvise(POSIX_FADV_DONTNEED) asks to invalidate it all (tmpfs
 *     keeps its dirty folios: nothing may be lost).
 * Prints one "key=value ..." line; exits 0 if every call succeeded, large
 * folios were made and split, the hole reads as zeros and every other byte
 * as written; 77 with "skipped: <why>" when DIR is not such a tmpfs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "caseutil.h"

#define CHUNK		(256UL << 10)
#define HOLE_OFF	(PMD_SIZE + (64UL << 10))
#define HOLE_LEN	(128UL << 10)

static char byte_at(size_t off)
{
	return (char)(off / PAGE * 7 + off % 251) | 1;
}

/* Bytes of [0, size) that are not as written (zeros inside the hole). */
static long bad_bytes(const char *p, size_t size, int holed)
{
	long bad = 0;
	size_t i;

	for (i = 0; i < size; i++) {
		int in_hole = holed && i >= HOLE_OFF && i < HOLE_OFF + HOLE_LEN;

		if (p[i] != (in_hole ? 0 : byte_at(i)))
			bad++;
	}
	return bad;
}

/* Is DIR a tmpfs mounted huge=within_size (per /proc/mounts)? */
static int huge_tmpfs(const char *dir)
{
	char line[512], mnt[256], type[64], opts[256];
	FILE *f = fopen("/proc/mounts", "r");
	int ok = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s %255s", mnt, type, opts) == 3 &&
		    !strcmp(mnt, dir) && !strcmp(type, "tmpfs"))
			ok = strstr(opts, "huge=within_size") != NULL;
	if (f)
		fclose(f);
	return ok;
}

int main(int argc, char **argv)
{
	long before, after, bad, wrc = 0, prc, trc, frc;
	char path[256], *buf, *p;
	size_t len, off, size;
	int fd;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 3)
		goto usage;
	len = strtoul(argv[2], NULL, 0) << 20;
	if (len < 2 * PMD_SIZE || len % PMD_SIZE)
		goto usage;
	if (!huge_tmpfs(argv[1])) {
		printf("skipped: %s is not a tmpfs mounted huge=within_size\n", argv[1]);
		return CASE_SKIPPED;
	}
	if (need_path("/proc/kpageflags", "no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)"))
		return CASE_SKIPPED;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("skipped: one CPU online, the case needs two\n");
		return CASE_SKIPPED;
	}
	snprintf(path, sizeof(path), "%s/pcachecase.%d", argv[1], getpid());
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	buf = malloc(CHUNK);
	if (fd < 0 || !buf || ftruncate(fd, (off_t)len)) {
		perror(path);
		return 2;
	}
	/* Written from CPU 0, changed from CPU 1. */
	on_cpu(0);
	for (off = 0; off < len; off += CHUNK) {
		size_t i;

		for (i = 0; i < CHUNK; i++)
			buf[i] = byte_at(off + i);
		if (pwrite(fd, buf, CHUNK, (off_t)off) != (ssize_t)CHUNK)
			wrc = -errno;
	}
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	bad = bad_bytes(p, len, 0);
	before = large_pages(p, len);
	on_cpu(1);
	prc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			(off_t)HOLE_OFF, (off_t)HOLE_LEN) ? -errno : 0;
	size = len - PMD_SIZE / 2;
	trc = ftruncate(fd, (off_t)size) ? -errno : 0;
	frc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	bad += bad_bytes(p, size, 1);
	after = large_pages(p, size);
	munmap(p, len);
	close(fd);
	unlink(path);
	printf("write_rc=%ld punch_rc=%ld truncate_rc=%ld fadvise_rc=%ld large_before=%ld large_after=%ld of=%lu bad_bytes=%ld\n",
	       wrc, prc, trc, frc, before, after, len / PAGE, bad);
	return !wrc && !prc && !trc && !frc && before > 0 && after < before &&
	       !bad ? 0 : 1;
usage:
	fprintf(stderr, "usage: pcachecase DIR MIB (MIB a multiple of 2, at least 4)\n");
	return 2;
}
