// SPDX-License-Identifier: GPL-2.0-only
/*
 * lrubench - fault/MADV_DONTNEED microbenchmark for the per-CPU LRU cache.
 *
 * Each of T threads maps M MiB of private anonymous memory, then, L times:
 * writes one byte to every base page of it (each fault of an unpopulated
 * range allocates a folio, of the enabled mTHP size if any, and adds it to
 * the LRU) and gives it back with MADV_DONTNEED.  This is the workload of
 * the "allow smaller large folios to use lru_cache" series, scaled down for
 * a 2-CPU guest.  Every system call is checked, and the number of pages
 * touched is printed, so that a kernel without madvise() cannot pass for a
 * fast one.
 *
 * usage: lrubench [-t threads] [-m MiB] [-l loops]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static size_t size;
static int loops;
static long page_size;

struct result {
	unsigned long touched;
	int err;
};

static void *worker(void *arg)
{
	struct result *res = arg;
	char *p;
	int l;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		res->err = errno;
		return NULL;
	}
	for (l = 0; l < loops; l++) {
		size_t off;

		for (off = 0; off < size; off += page_size) {
			p[off] = 1;
			res->touched++;
		}
		if (madvise(p, size, MADV_DONTNEED)) {
			res->err = errno;
			break;
		}
	}
	if (munmap(p, size) && !res->err)
		res->err = errno;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 4, mib = 16, opt, i, err = 0;
	unsigned long touched = 0, expected;
	struct timespec t0, t1;
	struct result *res;
	pthread_t *tid;

	loops = 20;
	while ((opt = getopt(argc, argv, "t:m:l:")) != -1) {
		switch (opt) {
		case 't':
			threads = atoi(optarg);
			break;
		case 'm':
			mib = atoi(optarg);
			break;
		case 'l':
			loops = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-t threads] [-m MiB] [-l loops]\n",
				argv[0]);
			return 2;
		}
	}
	if (threads < 1 || mib < 1 || loops < 1) {
		fprintf(stderr, "lrubench: bad arguments\n");
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	size = (size_t)mib << 20;
	tid = calloc(threads, sizeof(*tid));
	res = calloc(threads, sizeof(*res));
	if (!tid || !res) {
		perror("lrubench: calloc");
		return 1;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < threads; i++) {
		err = pthread_create(&tid[i], NULL, worker, &res[i]);
		if (err) {
			fprintf(stderr, "lrubench: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		if (res[i].err) {
			fprintf(stderr, "lrubench: thread %d: %s\n", i,
				strerror(res[i].err));
			err = 1;
		}
		touched += res[i].touched;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	expected = (unsigned long)threads * loops * (size / page_size);
	printf("lrubench: threads=%d MiB=%d loops=%d pages_touched=%lu elapsed_ms=%ld\n",
	       threads, mib, loops, touched,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 +
		      (t1.tv_nsec - t0.tv_nsec) / 1000000));
	if (touched != expected) {
		fprintf(stderr, "lrubench: touched %lu pages, expected %lu\n",
			touched, expected);
		err = 1;
	}
	return err;
}
