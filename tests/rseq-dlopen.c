// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A thread that existed before the library was loaded: start one, then
 * dlopen() liblockbatch (its constructor registers membarrier while the
 * process is multi-threaded) and print the path it chose, and whether the
 * older thread has an rseq area glibc registered at its start.
 *
 * usage: rseq-dlopen path/to/liblockbatch.so
 * Prints "<lb_cpu_path_name()> <older thread's cpu_id >= 0 ? 1 : 0>".
 */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#if defined(HAVE_SYS_RSEQ_H) && HAVE_DECL___RSEQ_OFFSET
#include <sys/rseq.h>
#endif

static int loaded, registered = -1;

static void *older(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&loaded, __ATOMIC_ACQUIRE))
		;
#if defined(HAVE_SYS_RSEQ_H) && HAVE_DECL___RSEQ_OFFSET
	registered = __rseq_size > 0 &&
		     (int)((struct rseq *)((char *)__builtin_thread_pointer() +
					   __rseq_offset))->cpu_id >= 0;
#else
	registered = 0;
#endif
	return NULL;
}

int main(int argc, char **argv)
{
	const char *(*path_name)(void);
	pthread_t t;
	void *h;

	if (argc != 2)
		return 2;
	pthread_create(&t, NULL, older, NULL);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 2;
	}
	*(void **)&path_name = dlsym(h, "lb_cpu_path_name");
	__atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	if (!path_name)
		return 2;
	printf("%s %d\n", path_name(), registered);
	return 0;
}
