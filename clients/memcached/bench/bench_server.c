/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One run: a fresh memcached on a free loopback port, one load on it, then
 * the server is stopped. The server dies with mc-bench (PR_SET_PDEATHSIG)
 * and is killed if it does not stop within 5 s of SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* A loopback port nobody listens on now (the kernel's choice). */
static int bench_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port > 0 ? port : -EADDRNOTAVAIL;
}

static void bench_nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static pid_t bench_spawn(const struct bench *b, const char *bin,
			 unsigned int mem_mb, int port)
{
	char p[16], t[16], m[16];
	pid_t pid;

	snprintf(p, sizeof(p), "%d", port);
	snprintf(t, sizeof(t), "%u", b->server_threads);
	snprintf(m, sizeof(m), "%u", mem_mb);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		/* memcached refuses to run as root without -u. */
		if (geteuid() == 0)
			execl(bin, bin, "-u", "root", "-p", p, "-l", "127.0.0.1",
			      "-U", "0", "-t", t, "-m", m, "-c", "4096",
			      "-o", "lru_lock_stats", (char *)NULL);
		else
			execl(bin, bin, "-p", p, "-l", "127.0.0.1", "-U", "0",
			      "-t", t, "-m", m, "-c", "4096", "-o",
			      "lru_lock_stats", (char *)NULL);
		fprintf(stderr, "mc-bench: exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Ready when it accepts a connection; -1 if it exited or took > 10 s. */
static int bench_wait_ready(pid_t pid, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int i;

	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < 500; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

		if (fd < 0)
			return -1;
		ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
		close(fd);
		if (ok)
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		bench_nap_ms(20);
	}
	return -1;
}

static void bench_stop(pid_t pid)
{
	int i;

	kill(pid, SIGTERM);
	for (i = 0; i < 250; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		bench_nap_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int bench_run_one(const struct bench *b, unsigned int mem_mb,
		  const char *bin, struct lg_result *r)
{
	struct lg_conf c = b->load;
	int port = bench_free_port(), err;
	pid_t pid;

	if (port < 0)
		return port;
	pid = bench_spawn(b, bin, mem_mb, port);
	if (pid < 0)
		return -errno;
	if (bench_wait_ready(pid, port) < 0) {
		fprintf(stderr, "mc-bench: %s did not start on port %d\n", bin,
			port);
		bench_stop(pid);
		return -ECHILD;
	}
	c.port = (unsigned int)port;
	c.server_stats = 1;
	err = lg_run(&c, r);
	bench_stop(pid);
	if (!err && !r->lblock_enabled) {
		fprintf(stderr, "mc-bench: %s has no LRU lock counts: build it "
				"with patch 0001\n", bin);
		err = -ENOTSUP;
	}
	return err;
}
