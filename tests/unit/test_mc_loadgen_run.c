// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * mc-loadgen end to end against a fake memcached on loopback: the fake
 * speaks the text protocol's set, get, delete, stats and stats lblock (a
 * thread per connection), stores what it is sent, hits even keys only, and
 * makes its counters a known function of the requests it served: 2 us of
 * user and 1 us of system time per request, one link-path lock per set.
 * So every figure lg_run() derives has an exact expected value: the hit
 * ratio, the CPU and lock counts per request, the prefill's coverage, the
 * request bound, the deletes. Told to, it corrupts some answers, and
 * mc-loadgen must count exactly those wrong.
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
#define FAKE_VALUE_MAX 64

struct fake {
	int lfd;
	unsigned int port;
	pthread_t acceptor;
	pthread_mutex_t lock;
	uint64_t cmd_get, cmd_set, delete_hits, delete_misses;
	unsigned char set_once[FAKE_KEYS];
	/* What is stored: a length (0: nothing) and the bytes. */
	unsigned int len[FAKE_KEYS];
	char val[FAKE_KEYS][FAKE_VALUE_MAX];
	uint64_t bad_sets;	/* values not of the key-derived form */
	int corrupt;		/* corrupt every hit of a key divisible by 4 */
	uint64_t corrupted;	/* answers it corrupted */
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
	uint64_t g, s, dh, dm;
	int n;

	pthread_mutex_lock(&fake.lock);
	g = fake.cmd_get;
	s = fake.cmd_set;
	dh = fake.delete_hits;
	dm = fake.delete_misses;
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
			     "STAT delete_misses %llu\r\n"
			     "STAT delete_hits %llu\r\n"
			     "STAT version 1.6.18\r\nEND\r\n",
			     (double)(g + s + dh + dm) * 2e-6,
			     (double)(g + s + dh + dm) * 1e-6,
			     (unsigned long long)g, (unsigned long long)s,
			     (unsigned long long)dm, (unsigned long long)dh);
	return write_all(fd, out, (size_t)n);
}

/* The value form mc-loadgen promises, written out again here: the key's
 * 8 digits and a '.', repeated, for at most FAKE_VALUE_MAX bytes. */
static int fake_value_ok(unsigned int id, const char *v, unsigned int n)
{
	char pat[16];
	unsigned int i;

	snprintf(pat, sizeof(pat), "%08u.", id);
	if (n == 0 || n > FAKE_VALUE_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] != pat[i % 9])
			return 0;
	return 1;
}

static void fake_set(unsigned int id, const char *data, unsigned int bytes)
{
	pthread_mutex_lock(&fake.lock);
	fake.cmd_set++;
	if (!fake_value_ok(id, data, bytes))
		fake.bad_sets++;
	else if (id < FAKE_KEYS) {
		fake.set_once[id] = 1;
		fake.len[id] = bytes;
		memcpy(fake.val[id], data, bytes);
	}
	pthread_mutex_unlock(&fake.lock);
}

/* Even keys hit while stored. Corrupting, a hit of a key divisible by 4
 * is answered with one wrong byte, or with the next key's item. */
static int fake_get(int fd, unsigned int id)
{
	char out[256], val[FAKE_VALUE_MAX];
	unsigned int len = 0, name = id;
	int n;

	pthread_mutex_lock(&fake.lock);
	fake.cmd_get++;
	if (id < FAKE_KEYS && id % 2 == 0 && fake.len[id]) {
		if (fake.corrupt && id % 4 == 0 && id + 2 < FAKE_KEYS &&
		    (id / 4) % 2 && fake.len[id + 2])
			name = id + 2;
		len = fake.len[name];
		memcpy(val, fake.val[name], len);
		if (fake.corrupt && id % 4 == 0 && name == id)
			val[len - 1] ^= 1;
		fake.corrupted += fake.corrupt && id % 4 == 0;
	}
	pthread_mutex_unlock(&fake.lock);
	if (!len)
		return write_all(fd, "END\r\n", 5);
	n = snprintf(out, sizeof(out), "VALUE key:%08u 0 %u\r\n", name, len);
	memcpy(out + n, val, len);
	memcpy(out + n + len, "\r\nEND\r\n", 7);
	return write_all(fd, out, (size_t)n + len + 7);
}

static int fake_delete(int fd, unsigned int id)
{
	int hit;

	pthread_mutex_lock(&fake.lock);
	hit = id < FAKE_KEYS && fake.len[id];
	if (hit)
		fake.len[id] = 0;
	fake.delete_hits += hit;
	fake.delete_misses += !hit;
	pthread_mutex_unlock(&fake.lock);
	return hit ? write_all(fd, "DELETED\r\n", 9) :
		     write_all(fd, "NOT_FOUND\r\n", 11);
}

/*
 * One command line at @line (CRLF stripped), with @avail more
 * bytes after its CRLF. Returns the bytes consumed after the line (a set's
 * data), -2 when a set's data is not all in yet, -1 on a write error.
 */
static int fake_line(int fd, const char *line, const char *after,
		     size_t avail)
{
	unsigned int id, bytes;

	if (sscanf(line, "set key:%u 0 0 %u", &id, &bytes) == 2) {
		if (avail < (size_t)bytes + 2)
			return -2;
		fake_set(id, after, bytes);
		return write_all(fd, "STORED\r\n", 8) < 0 ? -1 : (int)bytes + 2;
	}
	if (sscanf(line, "get key:%u", &id) == 1)
		return fake_get(fd, id);
	if (sscanf(line, "delete key:%u", &id) == 1)
		return fake_delete(fd, id);
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
	size_t have = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		size_t off = 0;

		if (n <= 0)
			break;
		have += (size_t)n;
		for (;;) {
			char *nl = memchr(buf + off, '\n', have - off), line[256];
			size_t next, len;
			int used;

			if (!nl)
				break;
			next = (size_t)(nl + 1 - buf);
			len = (size_t)(nl - (buf + off));
			if (len && nl[-1] == '\r')
				len--;
			if (len >= sizeof(line))
				goto out;
			memcpy(line, buf + off, len);
			line[len] = 0;
			used = fake_line(fd, line, buf + next, have - next);
			if (used == -2)	/* again once the data is in */
				break;
			if (used < 0)
				goto out;
			off = next + (size_t)used;
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

/*
 * The server's count @srv of what the client counted @cli in its window
 * of @measured requests: the same, give or take what was in flight at its
 * two edges (a pipeline per connection each) and what ran while the main
 * thread was between a snapshot and the phase change (a preempted thread
 * on a loaded machine: up to 10% here).
 */
static void window_matches(const struct lg_conf *c, double srv, double cli,
			   double measured)
{
	cr_assert(le(dbl, __builtin_fabs(srv - cli),
		     0.1 * measured + 2.0 * (c->set_conns + c->get_conns +
					     c->del_conns) * c->pipeline),
		  "server %.0f, client %.0f", srv, cli);
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
	/* The server's window is the client's (window_matches()). */
	cr_assert(r.have_server);
	window_matches(&c, r.srv_requests, measured, measured);
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


Test(mc_loadgen_run, deletes_counted_and_values_checked, .init = fake_start)
{
	struct lg_conf c = small_load();
	struct lg_result r;
	double measured, lookups;
	unsigned int i, stored = 0;

	/* A small key space, values of 10..40 bytes: every key is set and
	 * deleted over and over while GETs check what they find. */
	c.keys = 64;
	c.del_conns = 3;
	c.value_size = 10;
	c.value_max = 40;
	cr_assert(eq(int, lg_run(&c, &r), 0));
	measured = (double)(r.sets + r.gets + r.dels);
	lookups = (double)(r.hits + r.misses);
	cr_assert(eq(u64, r.errors, 0));
	cr_assert(eq(u64, r.wrong, 0), "%llu wrong (%s)",
		  (unsigned long long)r.wrong, r.wrong_why);
	cr_assert(eq(u64, fake.bad_sets, 0));
	cr_assert(gt(u64, r.dels, 100), "only %llu deletes",
		  (unsigned long long)r.dels);
	cr_assert(eq(u64, r.deleted + r.del_misses, r.dels));
	cr_assert(gt(u64, r.deleted, 0));
	cr_assert(gt(u64, r.del_misses, 0));
	/* Deleted even keys miss: fewer hits than the half a full store
	 * gives, but some. */
	cr_assert(gt(u64, r.hits, 0));
	cr_assert(lt(dbl, (double)r.hits, 0.45 * lookups),
		  "%llu hits of %.0f", (unsigned long long)r.hits, lookups);
	/* The prefill set every key (the fake checked each value's form). */
	for (i = 0; i < 64; i++)
		stored += fake.set_once[i];
	cr_assert(eq(u32, stored, 64));
	cr_assert(r.have_server);
	window_matches(&c, r.srv_requests, measured, measured);
	/*
	 * The deletes' share of the window, on both sides: a window edge that
	 * moved (a preempted main thread) moves the server's deletes and
	 * requests together, so their ratio holds where the counts do not.
	 */
	cr_assert(le(dbl, __builtin_fabs(r.srv_deletes / r.srv_requests -
					 (double)r.dels / measured), 0.05),
		  "server %.0f deletes of %.0f, client %llu of %.0f",
		  r.srv_deletes, r.srv_requests, (unsigned long long)r.dels,
		  measured);
}

Test(mc_loadgen_run, corrupted_answers_counted_exactly, .init = fake_start)
{
	struct lg_conf c = small_load();
	struct lg_result r;

	fake.corrupt = 1;
	c.server_stats = 0;
	c.value_max = 48;
	cr_assert(eq(int, lg_run(&c, &r), 0));
	cr_assert(gt(u64, fake.corrupted, 10));
	/* Every phase's answers are checked, so the count is exact. */
	cr_assert(eq(u64, r.wrong, fake.corrupted), "%llu wrong, %llu corrupted",
		  (unsigned long long)r.wrong,
		  (unsigned long long)fake.corrupted);
	cr_assert(eq(u32, r.wrong_key % 4, 0), "key %u", r.wrong_key);
	cr_assert(strcmp(r.wrong_why, "bytes never set for the key") == 0 ||
		  strcmp(r.wrong_why, "not the key asked for") == 0, "%s",
		  r.wrong_why);
	cr_assert(eq(u64, fake.bad_sets, 0));
}
