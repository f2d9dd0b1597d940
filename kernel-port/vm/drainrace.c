// SPDX-License-Identifier: GPL-2.0-only
/*
 * drainrace: targeted drains of another CPU's LRU cache racing CPU hotplug
 * or lru_add_drain_all().  Prints one "key=value ..." line; exits 0 if the
 * case passed, 77 if the kernel lacks an interface it needs (with a
 * "skipped: <why>" line), anything else if it failed.
 *
 *   drainrace hotplug ROUNDS
 *	Each round faults 64 KiB of mTHPs on CPU k (1..n-1 in turn) and pins
 *	them FOLL_LONGTERM from CPU 0 through debugfs gup_test: the folios sit
 *	in CPU k's lru_add cache, are in ZONE_MOVABLE (movablecore=) and must
 *	be migrated, so the pin drains CPU k from CPU 0.  Meanwhile a thread
 *	takes CPU 1 offline and back online, over and over: a targeted drain
 *	must neither queue work on an offline CPU nor miss a folio whose CPU
 *	went away (the hotplug callback drains it).
 *   drainrace drainall ROUNDS
 *	The same rounds, while a thread writes 1 to /proc/sys/vm/drop_caches
 *	(lru_add_drain_all()) over and over: the targeted drains and the
 *	global drain queue work on the same CPUs at the same time.
 *
 * Passes if every pin pinned the whole range, the racing thread did its
 * work at least once and never failed, and CPU 1 is online at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mm/gup_test.h"
#include "caseutil.h"

#define FOLL_WRITE	0x01
#define ROUND_LEN	(64UL << 10)
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define DROP_CACHES	"/proc/sys/vm/drop_caches"

static atomic_bool stop;
static long racer_done, racer_failed;

static void *hotplug_racer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (write_str(CPU1_ONLINE, "0"))
			racer_failed++;
		usleep(10000);
		if (write_str(CPU1_ONLINE, "1"))
			racer_failed++;
		racer_done++;
		usleep(10000);
	}
	return NULL;
}

static void *drainall_racer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (write_str(DROP_CACHES, "1"))
			racer_failed++;
		racer_done++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds, r, remote = 0, offline = 0, short_pins = 0, errors = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	void *(*racer)(void *);
	const char *mode;
	pthread_t t;
	int fd, rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 3 || (rounds = strtol(argv[2], NULL, 0)) < 1) {
		fprintf(stderr, "usage: drainrace hotplug|drainall ROUNDS\n");
		return 2;
	}
	mode = argv[1];
	if (!strcmp(mode, "hotplug")) {
		racer = hotplug_racer;
		rc = need_path(CPU1_ONLINE, "CPU 1 is not hotpluggable");
	} else if (!strcmp(mode, "drainall")) {
		racer = drainall_racer;
		rc = need_path(DROP_CACHES, "no drop_caches sysctl");
	} else {
		fprintf(stderr, "drainrace: unknown case %s\n", mode);
		return 2;
	}
	if (rc)
		return rc;
	if (ncpu < 2) {
		printf("skipped: %ld CPU, the case needs 2\n", ncpu);
		return CASE_SKIPPED;
	}
	rc = need_path("/sys/kernel/debug/gup_test", "no debugfs gup_test (CONFIG_GUP_TEST)");
	if (rc)
		return rc;
	fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	if (fd < 0) {
		printf("skipped: gup_test: %s\n", strerror(errno));
		return CASE_SKIPPED;
	}
	if (pthread_create(&t, NULL, racer, NULL)) {
		perror("pthread_create");
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		struct gup_test g = { 0 };
		int cpu = 1 + (int)(r % (ncpu - 1));
		char *p;

		/* CPU 1 may be offline right now: fault wherever we are. */
		if (try_on_cpu(cpu))
			offline++;
		else
			remote++;
		p = fault_region(ROUND_LEN);
		on_cpu(0);
		g.addr = (uintptr_t)p;
		g.size = ROUND_LEN;
		g.nr_pages_per_call = ROUND_LEN / PAGE;
		g.gup_flags = FOLL_WRITE;
		if (ioctl(fd, PIN_LONGTERM_BENCHMARK, &g))
			errors++;
		else if (g.size != ROUND_LEN)
			short_pins++;
		munmap(p, ROUND_LEN);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	close(fd);
	if (!strcmp(mode, "hotplug") && read_long(CPU1_ONLINE) != 1)
		write_str(CPU1_ONLINE, "1");
	printf("rounds=%ld remote_rounds=%ld offline_rounds=%ld ioctl_errors=%ld short_pins=%ld racer_%s=%ld racer_failed=%ld cpu1_online=%ld\n",
	       rounds, remote, offline, errors, short_pins, mode, racer_done,
	       racer_failed, read_long(CPU1_ONLINE));
	return errors == 0 && short_pins == 0 && racer_done > 0 &&
	       racer_failed == 0 && remote > 0 &&
	       (strcmp(mode, "hotplug") || read_long(CPU1_ONLINE) == 1) ? 0 : 1;
}
