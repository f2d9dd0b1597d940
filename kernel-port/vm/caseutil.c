// SPDX-License-Identifier: GPL-2.0-only
/* caseutil: helpers shared by the guest case programs (caseutil.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "caseutil.h"

#define KPF_HEAD	(1ULL << 15)
#define KPF_TAIL	(1ULL << 16)

int try_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

void on_cpu(int cpu)
{
	int rc = try_on_cpu(cpu);

	if (rc) {
		fprintf(stderr, "sched_setaffinity(%d): %s\n", cpu, strerror(-rc));
		exit(2);
	}
}

int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

long vmstat(const char *name)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char key[64];
	long v, r = -1;

	while (f && fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			r = v;
	if (f)
		fclose(f);
	return r;
}

size_t case_len(const char *arg)
{
	char *end;
	unsigned long n = strtoul(arg, &end, 0);

	if (end == arg)
		return 0;
	if (*end == 'K' || *end == 'k')
		return end[1] ? 0 : n << 10;
	if (*end == 'M' || *end == 'm')
		return end[1] ? 0 : n << 20;
	return *end ? 0 : n << 20;
}

char *map_region(size_t len)
{
	char *p = mmap(NULL, len + PMD_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return (char *)(((uintptr_t)p + PMD_SIZE - 1) & ~(PMD_SIZE - 1));
}

char *fault_region(size_t len)
{
	char *p = map_region(len);
	size_t i;

	for (i = 0; i < len; i += PAGE)
		p[i] = (char)(i / PAGE) | 1;
	return p;
}

long large_pages(const char *p, size_t len)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int kf = open("/proc/kpageflags", O_RDONLY);
	long n = 0;
	size_t i;

	if (pm < 0 || kf < 0) {
		perror("pagemap/kpageflags");
		exit(2);
	}
	for (i = 0; i < len; i += PAGE) {
		uint64_t ent, flags;
		off_t off = (off_t)(((uintptr_t)p + i) / PAGE * 8);

		if (pread(pm, &ent, 8, off) != 8)
			exit(2);
		if (!(ent >> 63))
			continue;	/* not present */
		off = (off_t)((ent & ((1ULL << 55) - 1)) * 8);
		if (pread(kf, &flags, 8, off) != 8)
			exit(2);
		if (flags & (KPF_HEAD | KPF_TAIL))
			n++;
	}
	close(pm);
	close(kf);
	return n;
}

int join_cgroup(const char *cg)
{
	char path[256], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_str(path, pid);
}

int reclaim(const char *cg, size_t bytes)
{
	char path[256], amount[32];

	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	snprintf(amount, sizeof(amount), "%zu", bytes);
	return write_str(path, amount);
}

int need_path(const char *path, const char *why)
{
	if (access(path, F_OK) == 0)
		return 0;
	printf("skipped: %s (%s: %s)\n", why, path, strerror(errno));
	return CASE_SKIPPED;
}

int need_mthp(unsigned long kb)
{
	char path[128], buf[128] = "";
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/transparent_hugepage/hugepages-%lukB/enabled", kb);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	if (strstr(buf, "[always]"))
		return 0;
	printf("skipped: %lukB mTHP not enabled for anonymous faults (%s: %s)\n",
	       kb, path, f ? "not [always]" : "missing");
	return CASE_SKIPPED;
}
