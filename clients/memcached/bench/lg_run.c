/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * One load: connect, (prefill,) warm up, measure, stop. Worker threads own
 * a share of the connections each and wait on them with epoll; the main
 * thread only moves the phase on and reads the server's counters at the
 * edges of the measured window.
 *
 * A pipeline is tagged with the phase it was sent in; only pipelines sent
 * while measuring are counted, so the window holds whole pipelines. Wrong
 * GET answers are the exception: they count in every phase.
 */
#include <arpa/inet.h>
#include <ck_pr.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lg.h"

enum lg_phase { LG_PREFILL, LG_WARMUP, LG_MEASURE, LG_STOP };

#define LG_RBUF (1 << 16)
#define LG_KEY_MAX 24

struct lg_worker;

struct lg_conn {
	int fd;
	struct lg_worker *w;
	struct lg_parse parse;
	struct lb_rng rng;
	char *wbuf;
	size_t wlen, woff;
	char *rbuf;
	size_t rlen;
	uint32_t *ids;		/* the keys of the pipeline, in order */
	uint64_t inflight;	/* responses still due for this pipeline */
	uint64_t done_at_send;	/* parse.done when it was sent */
	uint64_t hits0, misses0, errors0, deleted0, del_misses0;
	uint64_t sent_ns;
	int phase;		/* the phase the pipeline was sent in */
	int idle;		/* nothing more to send in this phase */
};

struct lg_worker {
	pthread_t tid;
	const struct lg_conf *c;
	const struct lg_keys *keys;
	struct lg_conn *conns;
	unsigned int nconns;
	int ep;
	int *phase;		/* shared, ck_pr */
	uint32_t prefill_next, prefill_end;
	unsigned int prefill_done;	/* shared, ck_pr: 1 when finished */
	/* measured: read by the main thread after the join */
	uint64_t sets, gets, hits, misses, errors;
	uint64_t dels, deleted, del_misses;
	uint64_t measured;	/* ck_pr: responses counted so far */
	struct lg_hist hist;
	int err;
};

void lg_conf_default(struct lg_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->host = "127.0.0.1";
	c->port = 11211;
	c->set_conns = 16;
	c->get_conns = 16;
	c->pipeline = 8;
	c->threads = 2;
	c->keys = 400000;
	c->value_size = 64;
	c->skew = LG_UNIFORM;
	c->theta = 0.99;
	c->prefill = 1;
	c->warmup_s = 1;
	c->duration_s = 5;
	c->seed = 1;
}

static uint64_t lg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int lg_connect(const struct lg_conf *c)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd, one = 1;

	sa.sin_port = htons((uint16_t)c->port);
	inet_pton(AF_INET, c->host, &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Non-blocking from here: one thread serves many connections. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static unsigned int lg_value_max(const struct lg_conf *c)
{
	return c->value_max ? c->value_max : c->value_size;
}

/* Append one request for key @id to the connection's write buffer. */
static void lg_put_request(struct lg_conn *k, enum lg_kind kind, uint32_t id)
{
	const struct lg_conf *c = k->w->c;
	char *p = k->wbuf + k->wlen;
	unsigned int len;
	int n;

	switch (kind) {
	case LG_SET:
		len = lg_value_len(c->value_size, lg_value_max(c), id);
		n = sprintf(p, "set key:%08u 0 0 %u\r\n", id, len);
		lg_value_fill(p + n, id, len);
		memcpy(p + n + len, "\r\n", 2);
		n += (int)len + 2;
		break;
	case LG_GET:
		n = sprintf(p, "get key:%08u\r\n", id);
		break;
	default:
		n = sprintf(p, "delete key:%08u\r\n", id);
		break;
	}
	k->wlen += (size_t)n;
}

static int lg_flush(struct lg_conn *k)
{
	while (k->woff < k->wlen) {
		ssize_t n = write(k->fd, k->wbuf + k->woff, k->wlen - k->woff);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;
		}
		k->woff += (size_t)n;
	}
	return 0;
}

static void lg_watch(struct lg_conn *k, int out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0),
				  .data.ptr = k };

	epoll_ctl(k->w->ep, EPOLL_CTL_MOD, k->fd, &ev);
}

/* Send the connection's next pipeline, if its phase has one for it. */
static int lg_send(struct lg_conn *k)
{
	struct lg_worker *w = k->w;
	const struct lg_conf *c = w->c;
	int phase = ck_pr_load_int(w->phase);
	unsigned int i, n = 0;
	int err;

	k->wlen = k->woff = 0;
	k->idle = 0;
	if (phase == LG_STOP) {
		k->idle = 1;
		return 0;
	}
	for (i = 0; i < c->pipeline; i++) {
		if (phase == LG_PREFILL) {
			/* Prefill is the SET connections' job alone. */
			if (k->parse.kind != LG_SET ||
			    w->prefill_next >= w->prefill_end)
				break;
			k->ids[n] = w->prefill_next++;
		} else {
			k->ids[n] = lg_keys_pick(w->keys, &k->rng);
		}
		lg_put_request(k, k->parse.kind, k->ids[n]);
		n++;
	}
	if (n == 0) {
		k->idle = 1;
		return 0;
	}
	k->inflight = n;
	k->done_at_send = k->parse.done;
	k->parse.want = k->ids;
	k->parse.want_base = k->parse.done;
	k->parse.nwant = n;
	k->hits0 = k->parse.hits;
	k->misses0 = k->parse.misses;
	k->errors0 = k->parse.errors;
	k->deleted0 = k->parse.deleted;
	k->del_misses0 = k->parse.del_misses;
	k->phase = phase;
	k->sent_ns = lg_now_ns();
	err = lg_flush(k);
	if (err)
		return err;
	lg_watch(k, k->woff < k->wlen);
	return 0;
}

/* The pipeline is complete: count it if it was sent while measuring. */
static void lg_complete(struct lg_conn *k, uint64_t now)
{
	struct lg_worker *w = k->w;
	uint64_t n = k->parse.done - k->done_at_send, i;

	if (k->phase != LG_MEASURE)
		return;
	for (i = 0; i < n; i++)
		lg_hist_add(&w->hist, now - k->sent_ns);
	if (k->parse.kind == LG_SET)
		w->sets += n;
	else if (k->parse.kind == LG_GET)
		w->gets += n;
	else
		w->dels += n;
	w->hits += k->parse.hits - k->hits0;
	w->misses += k->parse.misses - k->misses0;
	w->errors += k->parse.errors - k->errors0;
	w->deleted += k->parse.deleted - k->deleted0;
	w->del_misses += k->parse.del_misses - k->del_misses0;
	ck_pr_store_64(&w->measured, w->measured + n);
}

static int lg_receive(struct lg_conn *k)
{
	for (;;) {
		ssize_t n = read(k->fd, k->rbuf + k->rlen, LG_RBUF - k->rlen);
		size_t used;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		k->rlen += (size_t)n;
		used = lg_parse_feed(&k->parse, k->rbuf, k->rlen);
		if (k->parse.bad)
			return -EPROTO;
		memmove(k->rbuf, k->rbuf + used, k->rlen - used);
		k->rlen -= used;
		if (k->parse.done - k->done_at_send >= k->inflight) {
			int err;

			lg_complete(k, lg_now_ns());
			k->inflight = 0;
			err = lg_send(k);
			if (err || k->idle)
				return err;
		}
	}
}

static void lg_prefill_check(struct lg_worker *w)
{
	unsigned int i;

	if (w->prefill_next < w->prefill_end ||
	    ck_pr_load_uint(&w->prefill_done))
		return;
	for (i = 0; i < w->nconns; i++)
		if (w->conns[i].inflight)
			return;
	ck_pr_store_uint(&w->prefill_done, 1);
}

/* Publish a connection's failure to the main thread, and stop. */
static void *lg_worker_fail(struct lg_worker *w, int err)
{
	ck_pr_store_int(&w->err, err);
	return NULL;
}

static void *lg_worker_main(void *arg)
{
	struct lg_worker *w = arg;
	int err;
	struct epoll_event ev[64];
	int last = -1;

	for (;;) {
		int phase = ck_pr_load_int(w->phase), i, n;
		unsigned int j, busy = 0;

		if (phase != last) {	/* restart connections left idle */
			for (j = 0; j < w->nconns; j++)
				if (w->conns[j].idle && !w->conns[j].inflight &&
				    (err = lg_send(&w->conns[j])))
					return lg_worker_fail(w, err);
			last = phase;
		}
		for (j = 0; j < w->nconns; j++)
			busy += w->conns[j].inflight != 0;
		if (phase == LG_STOP && !busy)
			return NULL;
		if (phase == LG_PREFILL)
			lg_prefill_check(w);
		n = epoll_wait(w->ep, ev, 64, 5);
		for (i = 0; i < n; i++) {
			struct lg_conn *k = ev[i].data.ptr;

			if (ev[i].events & EPOLLOUT) {
				if ((err = lg_flush(k)))
					return lg_worker_fail(w, err);
				lg_watch(k, k->woff < k->wlen);
			}
			if ((ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
			    (err = lg_receive(k)))
				return lg_worker_fail(w, err);
		}
	}
}

static int lg_workers_setup(const struct lg_conf *c, struct lg_worker *ws,
			    const struct lg_keys *keys, int *phase)
{
	unsigned int total = c->set_conns + c->get_conns + c->del_conns, i,
		     below;
	size_t wcap = (size_t)c->pipeline * (lg_value_max(c) + 2 + 64);

	for (i = 0; i < c->threads; i++) {
		struct lg_worker *w = &ws[i];

		w->c = c;
		w->keys = keys;
		w->phase = phase;
		w->ep = epoll_create1(EPOLL_CLOEXEC);
		w->conns = calloc(total / c->threads + 1, sizeof(*w->conns));
		if (w->ep < 0 || !w->conns)
			return -ENOMEM;
	}
	/*
	 * Each thread prefills a slice of the key space in proportion to its
	 * SET connections (SET connection j is on thread j % threads).
	 */
	for (i = 0, below = 0; i < c->threads; i++) {
		unsigned int mine = c->set_conns / c->threads +
				    (i < c->set_conns % c->threads);
		struct lg_worker *w = &ws[i];

		w->prefill_next = (uint32_t)((uint64_t)c->keys * below /
					     (c->set_conns ? c->set_conns : 1));
		below += mine;
		w->prefill_end = (uint32_t)((uint64_t)c->keys * below /
					    (c->set_conns ? c->set_conns : 1));
		if (!c->prefill || !c->set_conns)
			w->prefill_next = w->prefill_end;
	}
	/* Connection i goes to thread i % threads: every kind alike. */
	for (i = 0; i < total; i++) {
		struct lg_worker *w = &ws[i % c->threads];
		struct lg_conn *k = &w->conns[w->nconns];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = k };
		int fd = lg_connect(c);

		if (fd < 0) {
			fprintf(stderr, "mc-loadgen: connect %s:%u: %s\n",
				c->host, c->port, strerror(-fd));
			return fd;
		}
		k->fd = fd;
		k->w = w;
		k->parse.kind = i < c->set_conns ? LG_SET :
				i < c->set_conns + c->get_conns ? LG_GET : LG_DEL;
		k->parse.vmin = c->value_size;
		k->parse.vmax = lg_value_max(c);
		lb_rng_seed(&k->rng, c->seed * 0x100000001b3ull + i);
		k->wbuf = malloc(wcap);
		k->rbuf = malloc(LG_RBUF);
		k->ids = malloc(sizeof(*k->ids) * c->pipeline);
		if (!k->wbuf || !k->rbuf || !k->ids)
			return -ENOMEM;
		k->idle = 1;
		epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
		w->nconns++;
	}
	return 0;
}

static void lg_workers_free(struct lg_worker *ws, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < ws[i].nconns; j++) {
			close(ws[i].conns[j].fd);
			free(ws[i].conns[j].wbuf);
			free(ws[i].conns[j].rbuf);
			free(ws[i].conns[j].ids);
		}
		free(ws[i].conns);
		if (ws[i].ep >= 0)
			close(ws[i].ep);
	}
}

static void lg_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	nanosleep(&ts, NULL);
}

static int lg_any_failed(const struct lg_worker *ws, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ck_pr_load_int(&ws[i].err))
			return 1;
	return 0;
}

/* Wait out the measured window: its duration, or max_requests. */
static void lg_measure(const struct lg_conf *c, struct lg_worker *ws)
{
	uint64_t t0 = lg_now_ns();
	uint64_t end = t0 + (uint64_t)(c->duration_s * 1e9);

	while (lg_now_ns() < end && !lg_any_failed(ws, c->threads)) {
		uint64_t done = 0;
		unsigned int i;

		if (c->max_requests) {
			for (i = 0; i < c->threads; i++)
				done += ck_pr_load_64(&ws[i].measured);
			if (done >= c->max_requests)
				break;
		}
		lg_sleep_ns(2000000);
	}
}

static void lg_delta(const struct lg_server *a, const struct lg_server *b,
		     struct lg_result *r)
{
	double del = (b->delete_hits - a->delete_hits) +
		     (b->delete_misses - a->delete_misses);
	double req = (b->cmd_get - a->cmd_get) + (b->cmd_set - a->cmd_set) + del;
	unsigned int i;

	r->have_server = 1;
	r->srv_requests = req;
	r->srv_deletes = del;
	r->srv_evictions = b->evictions - a->evictions;
	if (req > 0) {
		r->srv_user_us_per_req = (b->user_s - a->user_s) * 1e6 / req;
		r->srv_sys_us_per_req = (b->sys_s - a->sys_s) * 1e6 / req;
	}
	r->srv_cpu_us_per_req = r->srv_user_us_per_req + r->srv_sys_us_per_req;
	r->lblock_enabled = b->lblock_enabled;
	for (i = 0; i < LG_PATHS; i++) {
		r->acq_per_req[i] = req > 0 ? (b->acquired[i] - a->acquired[i]) / req : 0;
		r->contended_per_req[i] =
			req > 0 ? (b->contended[i] - a->contended[i]) / req : 0;
		r->wait_ns_per_req[i] = req > 0 ? (b->wait_ns[i] - a->wait_ns[i]) / req : 0;
	}
}

/* Wrong answers of every phase, and one of them (a connection's first). */
static void lg_wrong_collect(const struct lg_worker *ws, unsigned int n,
			     struct lg_result *r)
{
	unsigned int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < ws[i].nconns; j++) {
			const struct lg_parse *p = &ws[i].conns[j].parse;

			if (p->wrong && !r->wrong_why) {
				r->wrong_why = p->wrong_why;
				r->wrong_key = p->wrong_key;
			}
			r->wrong += p->wrong;
		}
}

static int lg_validate(const struct lg_conf *c)
{
	if (lg_check_host(c->host) < 0) {
		fprintf(stderr, "mc-loadgen: %s is not a loopback address "
				"(127.0.0.0/8 only)\n", c->host ? c->host : "");
		return -EINVAL;
	}
	if (c->port == 0 || c->port > 65535 || c->pipeline == 0 ||
	    c->pipeline > 1024 || c->threads == 0 || c->threads > 64 ||
	    c->set_conns + c->get_conns + c->del_conns == 0 ||
	    c->set_conns + c->get_conns + c->del_conns > 4096 ||
	    c->keys == 0 || c->keys > 100000000 || c->value_size == 0 ||
	    c->value_size > 1000000 || lg_value_max(c) < c->value_size ||
	    lg_value_max(c) > 1000000 || !(c->duration_s > 0) ||
	    c->warmup_s < 0) {
		fprintf(stderr, "mc-loadgen: invalid load parameters\n");
		return -EINVAL;
	}
	return 0;
}

int lg_run(const struct lg_conf *c, struct lg_result *r)
{
	struct lg_server s0, s1;
	struct lg_worker *ws;
	struct lg_keys keys;
	struct lg_hist *all;
	int phase = c->prefill ? LG_PREFILL : LG_WARMUP, err;
	unsigned int i, started = 0;
	uint64_t t0 = 0, t1;

	memset(r, 0, sizeof(*r));
	err = lg_validate(c);
	if (err)
		return err;
	err = lg_keys_init(&keys, c->keys, c->skew, c->theta);
	if (err)
		return err;
	ws = calloc(c->threads, sizeof(*ws));
	all = calloc(1, sizeof(*all));
	if (!ws || !all) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->threads; i++)
		ws[i].ep = -1;
	err = lg_workers_setup(c, ws, &keys, &phase);
	if (err)
		goto out;
	for (i = 0; i < c->threads; i++, started++)
		if ((err = -pthread_create(&ws[i].tid, NULL, lg_worker_main,
					   &ws[i])))
			goto stop;
	if (c->prefill) {
		for (i = 0; i < c->threads && !lg_any_failed(ws, c->threads);)
			if (ck_pr_load_uint(&ws[i].prefill_done))
				i++;
			else
				lg_sleep_ns(2000000);
		ck_pr_store_int(&phase, LG_WARMUP);
	}
	lg_sleep_ns((uint64_t)(c->warmup_s * 1e9));
	if (c->server_stats && (err = lg_server_read(c->host, c->port, &s0)))
		goto stop;
	t0 = lg_now_ns();
	ck_pr_store_int(&phase, LG_MEASURE);
	lg_measure(c, ws);
stop:
	ck_pr_store_int(&phase, LG_STOP);
	t1 = lg_now_ns();
	for (i = 0; i < started; i++)
		pthread_join(ws[i].tid, NULL);
	lg_wrong_collect(ws, started, r);
	for (i = 0; i < started && !err; i++)
		if (ws[i].err) {
			err = ws[i].err;
			fprintf(stderr, "mc-loadgen: connection failed: %s\n",
				strerror(-err));
		}
	if (!err && c->server_stats &&
	    !(err = lg_server_read(c->host, c->port, &s1)))
		lg_delta(&s0, &s1, r);
	if (!err) {
		r->seconds = (double)(t1 - t0) / 1e9;
		for (i = 0; i < c->threads; i++) {
			r->sets += ws[i].sets;
			r->gets += ws[i].gets;
			r->hits += ws[i].hits;
			r->misses += ws[i].misses;
			r->errors += ws[i].errors;
			r->dels += ws[i].dels;
			r->deleted += ws[i].deleted;
			r->del_misses += ws[i].del_misses;
			lg_hist_merge(all, &ws[i].hist);
		}
		r->ops_s = (double)(r->sets + r->gets + r->dels) / r->seconds;
		r->p50_ns = lg_hist_pct(all, 50);
		r->p90_ns = lg_hist_pct(all, 90);
		r->p99_ns = lg_hist_pct(all, 99);
		r->p999_ns = lg_hist_pct(all, 99.9);
		r->max_ns = all->max;
	}
out:
	if (ws)
		lg_workers_free(ws, c->threads);
	free(ws);
	free(all);
	lg_keys_fini(&keys);
	return err;
}
