/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mc-loadgen and mc-bench: a closed-loop memcached text-protocol load
 * generator (pipelined SET, GET and DELETE connections over loopback) and
 * the stock-versus-patched driver built on it.
 *
 * Each connection is a SET, a GET or a DELETE connection. It sends a
 * pipeline of requests, waits for every response, and sends the next: the
 * number of requests in flight is connections x pipeline, whatever the
 * server's speed (closed loop). A request's latency is from the write of its pipeline to
 * the read that completed its response. Worker threads each own a share of
 * the connections and wait on them with epoll.
 */
#ifndef LB_MC_LG_H
#define LB_MC_LG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../../tests/common/prng.h"

/* Key choice: uniform, or Zipf(theta) over ranks (rank 0 hottest). */
enum lg_skew { LG_UNIFORM, LG_ZIPF };

struct lg_keys {
	uint32_t n;
	enum lg_skew skew;
	double theta;
	double *cdf;		/* Zipf only: n cumulative probabilities */
};

int lg_keys_init(struct lg_keys *k, uint32_t n, enum lg_skew skew,
		 double theta);
void lg_keys_fini(struct lg_keys *k);
uint32_t lg_keys_pick(const struct lg_keys *k, struct lb_rng *r);

/*
 * Latency histogram, log-linear: 16 sub-buckets per power of two, so a
 * percentile is within 1/16 (6%) of the truth, in nanoseconds.
 */
#define LG_HIST_SUB 16
#define LG_HIST_BUCKETS (64 * LG_HIST_SUB)

struct lg_hist {
	uint64_t count[LG_HIST_BUCKETS];
	uint64_t n;
	uint64_t max;
};

void lg_hist_add(struct lg_hist *h, uint64_t ns);
void lg_hist_merge(struct lg_hist *into, const struct lg_hist *h);
uint64_t lg_hist_pct(const struct lg_hist *h, double pct);

/*
 * Response parser of one connection: fed the bytes as they arrive, in any
 * split, it counts complete responses. GET: "VALUE k f n\r\n<n bytes>\r\n"
 * lines then "END\r\n" (a hit), or "END\r\n" alone (a miss). SET: one line,
 * "STORED\r\n" or an error line. DELETE: "DELETED\r\n" or "NOT_FOUND\r\n".
 * An error line (ERROR, CLIENT_ERROR ..., SERVER_ERROR ...) ends any kind
 * with an error.
 *
 * With @vmin set, every GET answer is checked against the key-derived
 * values (lg_value_fill()): the key it names must be the one asked for
 * (@want, in the order the pipeline sent them), its flags 0, its length
 * and bytes those of that key. An answer that fails counts in @wrong.
 */
enum lg_kind { LG_SET, LG_GET, LG_DEL };

#define LG_VALUE_PERIOD 9	/* 8 digits of the key and a '.' */

struct lg_parse {
	enum lg_kind kind;
	uint64_t skip;		/* value bytes (and CRLF) still to skip */
	int seen_value;		/* this GET response has had a VALUE */
	int bad;		/* unparsable stream: stop the connection */
	uint64_t done, hits, misses, errors;
	uint64_t deleted, del_misses;	/* DELETED, NOT_FOUND */
	/* Checking GET answers: off while vmin is 0. */
	unsigned int vmin, vmax;
	const uint32_t *want;	/* the keys of the pipeline in flight */
	uint64_t want_base;	/* done when it was sent */
	unsigned int nwant;
	char vpat[LG_VALUE_PERIOD];	/* the value being read: its pattern */
	uint64_t vlen;		/* and length */
	int vcheck;		/* its bytes are compared */
	int vwrong;		/* it was counted wrong already */
	uint64_t wrong;		/* GET answers no SET of that key sent */
	uint32_t wrong_key;	/* the first of them: the key asked for */
	const char *wrong_why;	/* and what was wrong (NULL: none yet) */
};

/*
 * Parse @len bytes at @buf. Returns how many bytes were consumed; the rest
 * (an incomplete line) must be presented again with more bytes after it.
 */
size_t lg_parse_feed(struct lg_parse *p, const char *buf, size_t len);

/*
 * The value of key @id: lg_value_len() bytes (in [@vmin, @vmax], a hash of
 * @id), the period lg_value_pattern() repeated, which lg_value_fill()
 * writes.
 */
unsigned int lg_value_len(unsigned int vmin, unsigned int vmax, uint32_t id);
void lg_value_pattern(uint32_t id, char pat[LG_VALUE_PERIOD]);
void lg_value_fill(char *dst, uint32_t id, unsigned int len);

/* One load: what to send, and for how long. */
struct lg_conf {
	const char *host;	/* a 127.0.0.0/8 address */
	unsigned int port;
	unsigned int set_conns, get_conns, del_conns, pipeline, threads;
	uint32_t keys;
	unsigned int value_size;	/* the smallest value */
	unsigned int value_max;	/* the largest (0: value_size) */
	enum lg_skew skew;
	double theta;
	int prefill;		/* SET every key once before the warm-up */
	double warmup_s, duration_s;
	uint64_t max_requests;	/* 0: bounded by duration_s only */
	uint64_t seed;
	int server_stats;	/* snapshot stats + stats lblock around it */
};

void lg_conf_default(struct lg_conf *c);

/* Server counters read with "stats" and "stats lblock". */
#define LG_PATHS 5
extern const char *const lg_path_names[LG_PATHS];

struct lg_server {
	double user_s, sys_s;	/* rusage_user, rusage_system */
	double cmd_get, cmd_set, get_hits, evictions;
	double delete_hits, delete_misses;
	int lblock_enabled;
	double acquired[LG_PATHS], contended[LG_PATHS], wait_ns[LG_PATHS];
};

int lg_server_read(const char *host, unsigned int port, struct lg_server *s);

struct lg_result {
	double seconds;		/* measured window */
	uint64_t sets, gets, hits, misses, errors;
	uint64_t dels, deleted, del_misses;
	/* Whole run, not the window: a wrong answer counts whenever it came. */
	uint64_t wrong;
	uint32_t wrong_key;	/* the first: its key, and what was wrong */
	const char *wrong_why;
	double ops_s;
	uint64_t p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
	int have_server;	/* the fields below are window deltas */
	double srv_requests;	/* cmd_get + cmd_set + deletes */
	double srv_deletes;	/* delete_hits + delete_misses */
	double srv_cpu_us_per_req;	/* user + system */
	double srv_user_us_per_req, srv_sys_us_per_req;
	double srv_evictions;
	int lblock_enabled;
	double acq_per_req[LG_PATHS], wait_ns_per_req[LG_PATHS];
	double contended_per_req[LG_PATHS];
};

/* Run one load. 0, or a negative errno with a message on stderr. */
int lg_run(const struct lg_conf *c, struct lg_result *r);

/* Loopback only: 0 if @host is a 127.0.0.0/8 dotted quad, else -EINVAL. */
int lg_check_host(const char *host);

/* A command-line number of @prog's option --@opt in [lo, hi], or exit 2. */
unsigned long long lg_opt_num(const char *prog, const char *opt,
			      const char *s, unsigned long long lo,
			      unsigned long long hi);
double lg_opt_real(const char *prog, const char *opt, const char *s,
		   double lo, double hi);

void lg_result_print(FILE *f, const struct lg_conf *c,
		     const struct lg_result *r);
void lg_result_json(FILE *f, const struct lg_conf *c,
		    const struct lg_result *r);

#endif
