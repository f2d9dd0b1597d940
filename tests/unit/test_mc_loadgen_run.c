// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * mc-loadgen end to end against a fake memcached on loopback: the fake
 * speaks the text protocol's set, get, stats and stats lblock (a thread per
 * connection), hits even keys only, and makes its counters a known
 * function of the requests it served: 2 us of user and 1 us of system
 * time per request, one link-path lock per set. So every figure lg_run()
 * derives has an exact expected value: the hit ratio, the CPU and lock
 * counts per request, the prefill's coverage, the request bound.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../../clients/memcached/bench/lg.h"

#define FAKE_KEYS 2000

struct fake {
	int lfd;
	unsigned int port;
	pthread_t acceptor;
	pthread_mutex_t lock;
	uint64_t cmd_get, cmd_set;
	unsigned char set_once[FAKE_KEYS];
};

static struct fake fake;

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fake_stats(int fd, int lblock)
{
	char out[512];
	uint64_t g, s;
	int n;

	pthread_mutex_lock(&fake.lock);
	g = fake.cmd_get;
	s = fake.cmd_set;
	pthread_mutex_unlock(&fake.lock);
	if (lblock)
		n = snprintf(out, sizeof(out), "STAT lblock_enabled 1\r\n"
			     "STAT lblock_link_acquired %llu\r\n"
			     "STAT lblock_link_wait_ns %llu\r\n"
			     "STAT lblock_bump_acquired 0\r\nEND\r\n",
			     (unsigned long long)s, (unsigned long long)s * 10);
	else
		n = snprintf(out, sizeof(out), "STAT pid 1\r\n"
			     "STAT rusage_user %.6f\r\nSTAT rusage_system %.6f\r\n"
			     "STAT cmd_get %llu\r\nSTAT cmd_set %llu\r\n"
			     "STAT version 1.6.18\r\nEND\r\n",
			     (double)(g + s) * 2e-6, (double)(g + s) * 1e-6,
			     (unsigned long long)g, (unsigned long long)s);
	return write_all(fd, out, (size_t)n);
}

/* One command line at @line (CRLF stripped); @buf/@have for set data. */
static int fake_line(int fd, const char *line, char *buf, size_t *have,
		     size_t *skip)
{
	unsigned int id, bytes;

	if (sscanf(line, "set key:%u 0 0 %u", &id, &bytes) == 2) {
		pthread_mutex_lock(&fake.lock);
		fake.cmd_set++;
		if (id < FAKE_KEYS)
			fake.set_once[id] = 1;
		pthread_mutex_unlock(&fake.lock);
		*skip = bytes + 2;
		(void)buf;
		(void)have;
		return write_all(fd, "STORED\r\n", 8);
	}
	if (sscanf(line, "get key:%u", &id) == 1) {
		char out[128];
		int n;

		pthread_mutex_lock(&fake.lock);
		fake.cmd_get++;
		pthread_mutex_unlock(&fake.lock);
		if (id % 2)
			return write_all(fd, "END\r\n", 5);
		n = snprintf(out, sizeof(out),
			     "VALUE key:%08u 0 5\r\nab\r\nc\r\nEND\r\n", id);
		return write_all(fd, out, (size_t)n);
	}
	if (!strcmp(line, "stats"))
		return fake_stats(fd, 0);
	if (!strcmp(line, "stats lblock"))
		return fake_stats(fd, 1);
	return write_all(fd, "ERROR\r\n", 7);
}

static void *fake_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[1 << 16];
	size_t have = 0, skip = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		size_t off = 0;

		if (n <= 0)
			break;
		have += (size_t)n;
		for (;;) {
			char *nl;

			if (skip) {
				size_t k = have - off < skip ? have - off : skip;

				off += k;
				skip -= k;
				if (skip)
					break;
			}
			nl = memchr(buf + off, '\n', have - off);
			if (!nl)
				break;
			*nl = 0;
			if (nl > buf + off && nl[-1] == '\r')
				nl[-1] = 0;
			if (fake_line(fd, buf + off, buf, &have, &skip) < 0)
				goto out;
			off = (size_t)(nl + 1 - buf);
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
out:
	close(fd);
	return NULL;
}

static void *fake_accept(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(fake.lfd, NULL, NULL), one = 1;
		pthread_t t;

		if (fd < 0)
			return NULL;
		/* A response per write: without this, Nagle holds each one
		 * for the client's delayed ACK (as memcached, which sets it). */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (pthread_create(&t, NULL, fake_conn, (void *)(intptr_t)fd)) {
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
}

static void fake_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	memset(&fake, 0, sizeof(fake));
	pthread_mutex_init(&fake.lock, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fake.lfd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(ge(int, fake.lfd, 0));
	cr_assert(eq(int, bind(fake.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0));
	cr_assert(eq(int, listen(fake.lfd, 128), 0));
	cr_assert(eq(int, getsockname(fake.lfd, (struct sockaddr *)&sa, &len), 0));
	fake.port = ntohs(sa.sin_port);
	cr_assert(eq(int, pthread_create(&fake.acceptor, NULL, fake_accept, NULL), 0));
}

static struct lg_conf small_load(void)
{
	struct lg_conf c;

	lg_conf_default(&c);
	c.port = fake.port;
	c.set_conns = 3;
	c.get_conns = 5;
	c.pipeline = 4;
	c.keys = FAKE_KEYS;
	c.value_size = 16;
	c.warmup_s = 0.05;
	c.duration_s = 0.3;
	c.server_stats = 1;
	return c;
}

Test(mc_loadgen_run, figures_match_the_fake_server, .init = fake_start)
{
	struct lg_conf c = small_load();
	struct lg_result r;
	double measured, lookups;
	unsigned int i;

	cr_assert(eq(int, lg_run(&c, &r), 0));
	measured = (double)(r.sets + r.gets);
	lookups = (double)(r.hits + r.misses);
	cr_assert(gt(dbl, measured, 100), "only %.0f requests", measured);
	cr_assert(eq(u64, r.errors, 0));
	cr_assert(eq(u64, r.gets, r.hits + r.misses));
	/* Uniform keys, even ones hit: half, within 5 sigma. */
	cr_assert(r.hits > lookups / 2 - 2.5 * __builtin_sqrt(lookups) &&
		  r.hits < lookups / 2 + 2.5 * __builtin_sqrt(lookups),
		  "%llu hits of %.0f", (unsigned long long)r.hits, lookups);
	/* The prefill SET every key before the window. */
	for (i = 0; i < FAKE_KEYS; i++)
		cr_assert(eq(u8, fake.set_once[i], 1), "key %u never set", i);
	/*
	 * The server's window is the client's, give or take what was in
	 * flight at its two edges (a pipeline per connection each) and what
	 * ran while the main thread was between a snapshot and the phase
	 * change (a preempted thread on a loaded machine: up to 10% here).
	 */
	cr_assert(r.have_server);
	cr_assert(le(dbl, __builtin_fabs(r.srv_requests - measured),
		     0.1 * measured +
		     2.0 * (c.set_conns + c.get_conns) * c.pipeline),
		  "server %.0f, client %.0f", r.srv_requests, measured);
	/* 2 us user + 1 us system per request, exactly (6 decimals). */
	cr_assert(__builtin_fabs(r.srv_user_us_per_req - 2) < 0.01, "%f",
		  r.srv_user_us_per_req);
	cr_assert(__builtin_fabs(r.srv_sys_us_per_req - 1) < 0.01, "%f",
		  r.srv_sys_us_per_req);
	cr_assert(__builtin_fabs(r.srv_cpu_us_per_req - 3) < 0.02);
	/* One link lock per set, 10 ns each; the sets' share of requests. */
	cr_assert(r.lblock_enabled);
	cr_assert(gt(dbl, r.acq_per_req[0], 0.2));
	cr_assert(lt(dbl, r.acq_per_req[0], 0.6));
	cr_assert(__builtin_fabs(r.wait_ns_per_req[0] - 10 * r.acq_per_req[0]) <
		  1e-6);
	cr_assert(eq(dbl, r.acq_per_req[1], 0));
	cr_assert(le(u64, r.p50_ns, r.p99_ns));
	cr_assert(le(u64, r.p99_ns, r.max_ns));
	cr_assert(gt(dbl, r.ops_s, 0));
}

Test(mc_loadgen_run, request_bound_ends_the_window, .init = fake_start)
{
	struct lg_conf c = small_load();
	struct lg_result r;

	c.prefill = 0;
	c.server_stats = 0;
	c.duration_s = 60;
	c.max_requests = 3000;
	cr_assert(eq(int, lg_run(&c, &r), 0));
	/* At least the bound; at most what was in flight when it was seen,
	 * plus what the 2 ms poll lets through. */
	cr_assert(ge(u64, r.sets + r.gets, 3000));
	cr_assert(lt(dbl, r.seconds, 30), "took %.1f s", r.seconds);
	cr_assert(not(r.have_server));
}

Test(mc_loadgen_run, refuses_what_is_not_loopback_or_not_there)
{
	struct lg_conf c;
	struct lg_result r;
	int lfd, port;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);

	lg_conf_default(&c);
	c.host = "192.168.1.1";
	cr_assert(eq(int, lg_run(&c, &r), -EINVAL));
	lg_conf_default(&c);
	c.pipeline = 0;
	cr_assert(eq(int, lg_run(&c, &r), -EINVAL));
	/* A port nobody listens on: the connect fails, lg_run says so. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert(eq(int, bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0));
	cr_assert(eq(int, getsockname(lfd, (struct sockaddr *)&sa, &len), 0));
	port = ntohs(sa.sin_port);
	close(lfd);
	lg_conf_default(&c);
	c.port = (unsigned int)port;
	cr_assert(eq(int, lg_run(&c, &r), -ECONNREFUSED));
}
