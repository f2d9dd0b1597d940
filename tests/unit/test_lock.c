// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb_lock: every kind, statistics under forced contention, mutual
 * exclusion, the queue kinds' per-thread node table and its bound, the
 * order of input checks, case C21 (the default kind's fairness), and the
 * table and JSON reports parsed back.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include <lockbatch/lock.h>

#include "../common/lock_fair.h"

static const enum lb_lock_kind kinds[] = {
	LB_LOCK_SPIN, LB_LOCK_MUTEX, LB_LOCK_TICKET, LB_LOCK_MCS, LB_LOCK_CLH,
};
#define NR_KINDS 5

Test(lock, init_rejects_bad_input)
{
	struct lb_lock l;

	cr_assert(eq(int, lb_lock_init(NULL, LB_LOCK_SPIN, "x"), -EINVAL));
	cr_assert(eq(int, lb_lock_init(&l, LB_LOCK_NR_KINDS, "x"), -EINVAL));
	cr_assert(eq(int, NR_KINDS, LB_LOCK_NR_KINDS), "every kind tested");
	cr_assert(eq(int, lb_lock_init(&l, (enum lb_lock_kind)-1, "x"),
		     -EINVAL));
}

Test(lock, init_names_and_zero_stats)
{
	struct lb_lock l;
	struct lb_lock_stats s;
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		cr_assert(eq(int, lb_lock_init(&l, kinds[k], NULL), 0));
		cr_assert(eq(str, (char *)l.name, "lock"));
		cr_assert(eq(int, l.kind, kinds[k]));
		cr_assert(eq(int, lb_lock_stats(&l, &s), 0));
		cr_assert(eq(u64, s.acquisitions, 0));
		cr_assert(eq(u64, s.contentions, 0));
		cr_assert(eq(u64, s.wait_ns_total, 0));
		cr_assert(eq(u64, s.wait_ns_max, 0));
		cr_assert(eq(u64, s.wait_ns_min, 0));
		cr_assert(eq(u64, s.wait_ns_yield, 0));
		cr_assert(eq(int, lb_lock_destroy(&l), 0));
		cr_assert(eq(int, lb_lock_init(&l, kinds[k], "lru"), 0));
		cr_assert(eq(str, (char *)l.name, "lru"));
		cr_assert(eq(int, lb_lock_destroy(&l), 0));
	}
}

Test(lock, acquisitions_counted_uncontended)
{
	struct lb_lock l;
	struct lb_lock_stats s;
	int k, i;

	for (k = 0; k < NR_KINDS; k++) {
		lb_lock_init(&l, kinds[k], "c");
		for (i = 0; i < 1000; i++) {
			lb_lock_acquire(&l);
			lb_lock_release(&l);
		}
		/* The snapshot takes the lock without counting itself. */
		cr_assert(eq(int, lb_lock_stats(&l, &s), 0));
		cr_assert(eq(int, lb_lock_stats(&l, &s), 0));
		cr_assert(eq(u64, s.acquisitions, 1000), "kind %d", k);
		cr_assert(eq(u64, s.contentions, 0));
		cr_assert(eq(u64, s.wait_ns_total, 0));
		cr_assert(eq(int, lb_lock_stats_reset(&l), 0));
		lb_lock_stats(&l, &s);
		cr_assert(eq(u64, s.acquisitions, 0));
		cr_assert(eq(int, lb_lock_destroy(&l), 0));
	}
}

Test(lock, stats_reject_null)
{
	struct lb_lock l;
	struct lb_lock_stats s;

	lb_lock_init(&l, LB_LOCK_SPIN, NULL);
	cr_assert(eq(int, lb_lock_stats(NULL, &s), -EINVAL));
	cr_assert(eq(int, lb_lock_stats(&l, NULL), -EINVAL));
	cr_assert(eq(int, lb_lock_stats_reset(NULL), -EINVAL));
	cr_assert(eq(int, lb_lock_destroy(NULL), -EINVAL));
}

/* Destroying a held lock fails and leaves it usable and counting. */
Test(lock, destroy_held_is_ebusy)
{
	struct lb_lock l;
	struct lb_lock_stats s;
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		lb_lock_init(&l, kinds[k], "held");
		lb_lock_acquire(&l);
		cr_assert(eq(int, lb_lock_destroy(&l), -EBUSY), "kind %d", k);
		lb_lock_release(&l);
		lb_lock_acquire(&l);
		lb_lock_release(&l);
		lb_lock_stats(&l, &s);
		cr_assert(eq(u64, s.acquisitions, 2));
		cr_assert(eq(int, lb_lock_destroy(&l), 0));
	}
}

/* lb_lock_is_held() follows acquire and release, counts nothing. */
Test(lock, is_held_follows_the_holder)
{
	struct lb_lock l;
	struct lb_lock_stats s;
	int k;

	cr_assert(eq(int, lb_lock_is_held(NULL), -EINVAL));
	for (k = 0; k < NR_KINDS; k++) {
		cr_assert(eq(int, lb_lock_init(&l, kinds[k], "probe"), 0));
		cr_assert(eq(int, lb_lock_is_held(&l), 0), "kind %d", k);
		lb_lock_acquire(&l);
		cr_assert(eq(int, lb_lock_is_held(&l), 1), "kind %d", k);
		lb_lock_release(&l);
		cr_assert(eq(int, lb_lock_is_held(&l), 0), "kind %d", k);
		lb_lock_stats(&l, &s);
		cr_assert(eq(u64, s.acquisitions, 1), "kind %d", k);
		cr_assert(eq(int, lb_lock_destroy(&l), 0));
	}
}

/* The stock callbacks take and drop the lock, through a container too. */
Test(lock, op_callbacks_take_the_lock)
{
	struct backend {
		struct lb_lock lock;	/* first member: same address */
		int data;
	} be;
	struct lb_lock_stats s;
	int k;

	lb_lock_op_acquire(NULL);	/* a NULL back-end does nothing */
	lb_lock_op_release(NULL);
	for (k = 0; k < NR_KINDS; k++) {
		cr_assert(eq(int, lb_lock_init(&be.lock, kinds[k], "be"), 0));
		lb_lock_op_acquire(&be);
		cr_assert(eq(int, lb_lock_is_held(&be.lock), 1), "kind %d", k);
		lb_lock_op_release(&be);
		cr_assert(eq(int, lb_lock_is_held(&be.lock), 0), "kind %d", k);
		lb_lock_stats(&be.lock, &s);
		cr_assert(eq(u64, s.acquisitions, 1), "kind %d", k);
		cr_assert(eq(int, lb_lock_destroy(&be.lock), 0));
	}
}

/*
 * Forced contention: the main thread holds the lock, a waiter announces
 * itself and blocks in lb_lock_acquire(); the holder keeps the lock for
 * @hold_ms more, so the waiter's recorded wait is about that long.
 */
struct waiter {
	struct lb_lock *l;
	int ready;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;

	__atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
	lb_lock_acquire(w->l);
	lb_lock_release(w->l);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void contend_once(struct lb_lock *l, long hold_ms)
{
	struct waiter w = { l, 0 };
	pthread_t t;

	lb_lock_acquire(l);
	cr_assert(eq(int, pthread_create(&t, NULL, waiter_fn, &w), 0));
	while (!__atomic_load_n(&w.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	sleep_ms(hold_ms);
	lb_lock_release(l);
	pthread_join(t, NULL);
}

Test(lock, wait_stats_on_forced_contention, .timeout = 10)
{
	struct lb_lock l;
	struct lb_lock_stats s;
	int k;

	for (k = 0; k < NR_KINDS; k++) {
		lb_lock_init(&l, kinds[k], "contended");
		contend_once(&l, 5);
		contend_once(&l, 40);
		lb_lock_stats(&l, &s);
		cr_assert(eq(u64, s.acquisitions, 4), "kind %d", k);
		cr_assert(eq(u64, s.contentions, 2), "kind %d", k);
		/* The 40 ms hold was seen by a waiter blocked well before it. */
		cr_assert(ge(u64, s.wait_ns_max, 20 * 1000000ull),
			  "kind %d max %llu", k,
			  (unsigned long long)s.wait_ns_max);
		cr_assert(gt(u64, s.wait_ns_min, 0));
		cr_assert(le(u64, s.wait_ns_min, s.wait_ns_max));
		cr_assert(eq(u64, s.wait_ns_total, s.wait_ns_min + s.wait_ns_max),
			  "two waits: total = min + max");
		/*
		 * Only the spin kind yields: 40 ms is far past its backoff,
		 * so its waiter gave its CPU away, within the wait.
		 */
		if (kinds[k] == LB_LOCK_SPIN)
			cr_assert(gt(u64, s.wait_ns_yield, 0));
		else
			cr_assert(eq(u64, s.wait_ns_yield, 0), "kind %d", k);
		cr_assert(le(u64, s.wait_ns_yield, s.wait_ns_total));
		lb_lock_destroy(&l);
	}
}

/* Parses one report row; the table pads, so whitespace is free. */
struct row {
	char name[32];
	unsigned long long acq, cont, avg, total, max, min, yield;
};

static int parse_row(const char *line, struct row *r)
{
	return sscanf(line, "%31s %llu %llu %lluns %lluns %lluns %lluns %lluns",
		      r->name, &r->acq, &r->cont, &r->avg, &r->total, &r->max,
		      &r->min, &r->yield) == 8;
}

static char *report_of(struct lb_lock *const *locks, unsigned int nr,
		       int json, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(not(eq(ptr, f, NULL)));
	*rc = json ? lb_lock_report_json(f, locks, nr) :
		     lb_lock_report(f, locks, nr);
	fclose(f);
	return buf;
}

Test(lock, report_table_parses_back, .timeout = 10)
{
	struct lb_lock a, b;
	struct lb_lock *const locks[] = { &a, &b };
	struct lb_lock_stats sa;
	struct row r;
	char *buf, *line, *save;
	int rc, i, rows = 0;

	lb_lock_init(&a, LB_LOCK_SPIN, "lruvec");
	lb_lock_init(&b, LB_LOCK_MUTEX, "zone");
	contend_once(&a, 2);
	for (i = 0; i < 7; i++) {
		lb_lock_acquire(&b);
		lb_lock_release(&b);
	}
	lb_lock_stats(&a, &sa);
	buf = report_of(locks, 2, 0, &rc);
	cr_assert(eq(int, rc, 0));
	line = strtok_r(buf, "\n", &save);
	cr_assert(not(eq(ptr, line, NULL)));
	cr_assert(not(eq(ptr, strstr(line, "acquired"), NULL)), "header: %s",
		  line);
	cr_assert(not(eq(ptr, strstr(line, "contended"), NULL)));
	while ((line = strtok_r(NULL, "\n", &save))) {
		cr_assert(parse_row(line, &r), "row: %s", line);
		if (rows == 0) {
			cr_assert(eq(str, r.name, "lruvec"));
			cr_assert(eq(u64, r.acq, sa.acquisitions));
			cr_assert(eq(u64, r.cont, 1));
			cr_assert(eq(u64, r.total, sa.wait_ns_total));
			cr_assert(eq(u64, r.avg, sa.wait_ns_total));
			cr_assert(eq(u64, r.max, sa.wait_ns_max));
			cr_assert(eq(u64, r.min, sa.wait_ns_min));
			cr_assert(eq(u64, r.yield, sa.wait_ns_yield));
		} else {
			cr_assert(eq(str, r.name, "zone"));
			cr_assert(eq(u64, r.acq, 7));
			cr_assert(eq(u64, r.cont, 0));
			cr_assert(eq(u64, r.avg + r.total + r.max + r.min +
					  r.yield, 0));
		}
		rows++;
	}
	cr_assert(eq(int, rows, 2));
	free(buf);
	lb_lock_destroy(&a);
	lb_lock_destroy(&b);
}

/*
 * A JSON reader just large enough for the report: an array of flat
 * objects whose values are strings or unsigned integers.
 */
#define NR_JKEYS 7

struct jobj {
	char name[64];
	unsigned long long v[NR_JKEYS];	/* in jkeys[] order */
	unsigned int seen;		/* bit per key, name = bit NR_JKEYS */
};

static const char *const jkeys[NR_JKEYS] = {
	"acquisitions", "contentions", "wait_ns_total", "wait_ns_max",
	"wait_ns_min", "wait_ns_avg", "wait_ns_yield",
};

static const char *skip_ws(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* Reads a JSON string into @out (unescaping); NULL on a syntax error. */
static const char *jstring(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		char c = *p++;

		if (c == '\\') {
			c = *p++;
			if (c == 'u') {
				unsigned int u;

				if (sscanf(p, "%4x", &u) != 1)
					return NULL;
				c = (char)u;
				p += 4;
			} else if (c == 'n') {
				c = '\n';
			} else if (c != '"' && c != '\\') {
				return NULL;
			}
		} else if ((unsigned char)c < 0x20) {
			return NULL;	/* raw control characters are invalid */
		}
		if (n + 1 >= cap)
			return NULL;
		out[n++] = c;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

static const char *jobject(const char *p, struct jobj *o)
{
	char key[32];
	unsigned int k;

	memset(o, 0, sizeof(*o));
	if (*(p = skip_ws(p)) != '{')
		return NULL;
	p = skip_ws(p + 1);
	while (*p != '}') {
		if (!(p = jstring(p, key, sizeof(key))))
			return NULL;
		p = skip_ws(p);
		if (*p++ != ':')
			return NULL;
		p = skip_ws(p);
		if (!strcmp(key, "name")) {
			if (!(p = jstring(p, o->name, sizeof(o->name))))
				return NULL;
			o->seen |= 1u << NR_JKEYS;
		} else {
			char *end;

			for (k = 0; k < NR_JKEYS && strcmp(key, jkeys[k]); k++)
				;
			if (k == NR_JKEYS || !isdigit((unsigned char)*p))
				return NULL;
			o->v[k] = strtoull(p, &end, 10);
			o->seen |= 1u << k;
			p = end;
		}
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != '}')
			return NULL;
	}
	return p + 1;
}

/* Parses the whole array; returns the number of objects or -1. */
static int jarray(const char *p, struct jobj *o, int max)
{
	int n = 0;

	if (*(p = skip_ws(p)) != '[')
		return -1;
	p = skip_ws(p + 1);
	while (*p != ']') {
		if (n == max || !(p = jobject(p, &o[n++])))
			return -1;
		p = skip_ws(p);
		if (*p == ',')
			p++;
		else if (*p != ']')
			return -1;
	}
	return *skip_ws(p + 1) == '\0' ? n : -1;
}

Test(lock, report_json_parses_back, .timeout = 10)
{
	static const char odd[] = "we\"ird\\name\n";
	struct lb_lock a, b, c;
	struct lb_lock *const locks[] = { &a, &b, &c };
	struct lb_lock_stats sa;
	struct jobj o[4];
	char *buf;
	int rc, n;

	lb_lock_init(&a, LB_LOCK_SPIN, "lruvec");
	lb_lock_init(&b, LB_LOCK_MUTEX, odd);
	lb_lock_init(&c, LB_LOCK_SPIN, NULL);
	contend_once(&a, 1);
	contend_once(&a, 3);
	lb_lock_acquire(&b);
	lb_lock_release(&b);
	lb_lock_stats(&a, &sa);
	buf = report_of(locks, 3, 1, &rc);
	cr_assert(eq(int, rc, 0));
	n = jarray(buf, o, 4);
	cr_assert(eq(int, n, 3), "JSON: %s", buf);
	cr_assert(eq(u32, o[0].seen, (1u << (NR_JKEYS + 1)) - 1),
		  "every key present");
	cr_assert(eq(str, o[0].name, "lruvec"));
	cr_assert(eq(u64, o[0].v[0], sa.acquisitions));
	cr_assert(eq(u64, o[0].v[1], 2));
	cr_assert(eq(u64, o[0].v[2], sa.wait_ns_total));
	cr_assert(eq(u64, o[0].v[3], sa.wait_ns_max));
	cr_assert(eq(u64, o[0].v[4], sa.wait_ns_min));
	cr_assert(eq(u64, o[0].v[5], sa.wait_ns_total / 2));
	cr_assert(eq(u64, o[0].v[6], sa.wait_ns_yield));
	cr_assert(eq(str, o[1].name, (char *)odd), "name escaped and back");
	cr_assert(eq(u64, o[1].v[0], 1));
	cr_assert(eq(u64, o[1].v[5], 0), "no contention: average 0");
	cr_assert(eq(str, o[2].name, "lock"));
	cr_assert(eq(u64, o[2].v[0], 0));
	free(buf);

	buf = report_of(locks, 0, 1, &rc);
	cr_assert(eq(int, rc, 0));
	cr_assert(eq(int, jarray(buf, o, 4), 0), "empty report: %s", buf);
	free(buf);
}

Test(lock, reports_reject_null)
{
	struct lb_lock a;
	struct lb_lock *const locks[] = { &a, NULL };

	lb_lock_init(&a, LB_LOCK_SPIN, "a");
	cr_assert(eq(int, lb_lock_report(NULL, locks, 1), -EINVAL));
	cr_assert(eq(int, lb_lock_report(stdout, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_lock_report(stdout, locks, 2), -EINVAL));
	cr_assert(eq(int, lb_lock_report_json(NULL, locks, 1), -EINVAL));
	cr_assert(eq(int, lb_lock_report_json(stdout, NULL, 1), -EINVAL));
	cr_assert(eq(int, lb_lock_report_json(stdout, locks, 2), -EINVAL));
}

/* A stream that cannot be written: both reports say -EIO. */
Test(lock, reports_eio_on_write_error)
{
	struct lb_lock a;
	struct lb_lock *const locks[] = { &a };
	FILE *f = fopen("/dev/null", "r");

	cr_assert(not(eq(ptr, f, NULL)));
	lb_lock_init(&a, LB_LOCK_SPIN, "a");
	cr_assert(eq(int, lb_lock_report(f, locks, 1), -EIO));
	clearerr(f);
	cr_assert(eq(int, lb_lock_report_json(f, locks, 1), -EIO));
	fclose(f);
}

/*
 * Mutual exclusion of every kind: threads bump a plain counter and an
 * "inside" flag under the lock for up to EX_ITERS rounds or EX_MS, as
 * FIFO kinds crawl when waiters are preempted; the stress program repeats
 * this longer and under TSan.
 */
#define EX_THREADS 4
#define EX_ITERS 20000
#define EX_MS 200

struct ex {
	struct lb_lock l;
	unsigned long counter, overlaps;
	int inside;
	int stop;			/* atomic */
	unsigned long done[EX_THREADS];	/* read after join */
};

struct ex_arg {
	struct ex *x;
	int id;
};

static void *ex_worker(void *arg)
{
	struct ex_arg *a = arg;
	struct ex *x = a->x;
	unsigned long i;

	for (i = 0; i < EX_ITERS && !__atomic_load_n(&x->stop, __ATOMIC_RELAXED);
	     i++) {
		lb_lock_acquire(&x->l);
		if (x->inside++)
			x->overlaps++;
		x->counter++;
		x->inside--;
		lb_lock_release(&x->l);
	}
	x->done[a->id] = i;
	return NULL;
}

static void sleep_ms(long ms);

Test(lock, every_kind_excludes, .timeout = 60)
{
	struct ex_arg arg[EX_THREADS];
	pthread_t t[EX_THREADS];
	struct lb_lock_stats s;
	unsigned long total;
	struct ex x;
	int k, i;

	for (k = 0; k < NR_KINDS; k++) {
		memset(&x, 0, sizeof(x));
		cr_assert(eq(int, lb_lock_init(&x.l, kinds[k], "ex"), 0));
		for (i = 0; i < EX_THREADS; i++) {
			arg[i] = (struct ex_arg){ &x, i };
			pthread_create(&t[i], NULL, ex_worker, &arg[i]);
		}
		sleep_ms(EX_MS);
		__atomic_store_n(&x.stop, 1, __ATOMIC_RELAXED);
		for (total = 0, i = 0; i < EX_THREADS; i++) {
			pthread_join(t[i], NULL);
			total += x.done[i];
		}
		cr_assert(gt(u64, total, 0));
		cr_assert(eq(u64, x.counter, total), "kind %d", k);
		cr_assert(eq(u64, x.overlaps, 0), "kind %d", k);
		cr_assert(eq(int, lb_lock_stats(&x.l, &s), 0));
		cr_assert(eq(u64, s.acquisitions, total));
		cr_assert(le(u64, s.contentions, s.acquisitions));
		cr_assert(eq(int, lb_lock_destroy(&x.l), 0), "kind %d", k);
	}
}

/* Queue kinds: a thread holds up to LB_LOCK_NEST_MAX, in any order. */
Test(lock, queue_kinds_nest_to_the_bound)
{
	static const enum lb_lock_kind q[] = { LB_LOCK_MCS, LB_LOCK_CLH };
	struct lb_lock l[LB_LOCK_NEST_MAX + 1], spin;
	struct lb_lock_stats s;
	int i;

	for (i = 0; i <= LB_LOCK_NEST_MAX; i++)
		cr_assert(eq(int, lb_lock_init(&l[i], q[i % 2], "n"), 0));
	lb_lock_init(&spin, LB_LOCK_SPIN, "s");
	for (i = 0; i < LB_LOCK_NEST_MAX; i++)
		lb_lock_acquire(&l[i]);
	/* One more queue lock: not taken, errno says why, nothing counted. */
	errno = 0;
	lb_lock_acquire(&l[LB_LOCK_NEST_MAX]);
	cr_assert(eq(int, errno, ENOLCK));
	cr_assert(eq(int, lb_lock_stats(&l[LB_LOCK_NEST_MAX], &s), -ENOLCK));
	cr_assert(eq(int, lb_lock_stats_reset(&l[LB_LOCK_NEST_MAX]), -ENOLCK));
	/* Other kinds need no node. */
	lb_lock_acquire(&spin);
	lb_lock_release(&spin);
	/* Releasing a queue lock this thread does not hold: EPERM, no-op. */
	errno = 0;
	lb_lock_release(&l[LB_LOCK_NEST_MAX]);
	cr_assert(eq(int, errno, EPERM));
	/* Release out of order; each freed entry is reusable at once. */
	for (i = 0; i < LB_LOCK_NEST_MAX; i += 2)
		lb_lock_release(&l[i]);
	lb_lock_acquire(&l[LB_LOCK_NEST_MAX]);
	lb_lock_release(&l[LB_LOCK_NEST_MAX]);
	for (i = 1; i < LB_LOCK_NEST_MAX; i += 2)
		lb_lock_release(&l[i]);
	for (i = 0; i <= LB_LOCK_NEST_MAX; i++) {
		cr_assert(eq(int, lb_lock_stats(&l[i], &s), 0));
		cr_assert(eq(u64, s.acquisitions, 1), "lock %d", i);
		cr_assert(eq(int, lb_lock_destroy(&l[i]), 0), "lock %d", i);
	}
	lb_lock_destroy(&spin);
}

/*
 * CLH nodes migrate: each short-lived thread queues behind the previous
 * one and leaves with its predecessor's node. Under ASan this checks that
 * no node is freed while the lock or a thread still uses it and none
 * leaks (thread exit frees the table, destroy frees the lock's node).
 */
static void *clh_once(void *arg)
{
	lb_lock_acquire(arg);
	lb_lock_release(arg);
	return NULL;
}

Test(lock, clh_nodes_survive_thread_exit)
{
	struct lb_lock l;
	struct lb_lock_stats s;
	pthread_t t[4];
	int round, i;

	cr_assert(eq(int, lb_lock_init(&l, LB_LOCK_CLH, "clh"), 0));
	for (round = 0; round < 50; round++) {
		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, clh_once, &l);
		clh_once(&l);
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	cr_assert(eq(int, lb_lock_stats(&l, &s), 0));
	cr_assert(eq(u64, s.acquisitions, 50 * 5));
	cr_assert(eq(int, lb_lock_destroy(&l), 0));
}

/*
 * Order of input checks (lock.h): pointers, kind, lock state, node table,
 * allocation, output. Each call with two faults reports the earlier one.
 */
Test(lock, input_checks_in_documented_order)
{
	struct lb_lock l[LB_LOCK_NEST_MAX], held, dead;
	struct lb_lock *const rows[] = { &held };
	struct lb_lock_stats s;
	FILE *ro = fopen("/dev/null", "r");
	int i;

	cr_assert(not(eq(ptr, ro, NULL)));
	/* Pointer before kind. */
	cr_assert(eq(int, lb_lock_init(NULL, LB_LOCK_NR_KINDS, NULL), -EINVAL));
	/* Kind before state: a destroyed lock is not "held" or "free". */
	lb_lock_init(&dead, LB_LOCK_TICKET, "dead");
	cr_assert(eq(int, lb_lock_destroy(&dead), 0));
	cr_assert(eq(int, lb_lock_destroy(&dead), -EINVAL));
	cr_assert(eq(int, lb_lock_stats(&dead, &s), -EINVAL));
	cr_assert(eq(int, lb_lock_stats_reset(&dead), -EINVAL));
	/* State: held is -EBUSY, and the lock stays usable. */
	lb_lock_init(&held, LB_LOCK_MCS, "held");
	/* A report checks every entry's kind before writing anything. */
	{
		struct lb_lock *const bad[] = { &held, &dead };
		char *buf;
		int rc;

		buf = report_of(bad, 2, 0, &rc);
		cr_assert(eq(int, rc, -EINVAL));
		cr_assert(eq(str, buf, ""), "nothing written: %s", buf);
		free(buf);
		cr_assert(eq(int, lb_lock_report_json(NULL, bad, 2), -EINVAL));
	}
	lb_lock_acquire(&held);
	cr_assert(eq(int, lb_lock_destroy(&held), -EBUSY));
	lb_lock_release(&held);
	/* Pointers and kind before the node table. */
	for (i = 0; i < LB_LOCK_NEST_MAX; i++) {
		lb_lock_init(&l[i], LB_LOCK_CLH, "t");
		lb_lock_acquire(&l[i]);
	}
	cr_assert(eq(int, lb_lock_stats(&held, NULL), -EINVAL));
	cr_assert(eq(int, lb_lock_stats(&dead, &s), -EINVAL));
	cr_assert(eq(int, lb_lock_stats(&held, &s), -ENOLCK));
	/* Node table before output: the table is written, zeros in the row. */
	cr_assert(eq(int, lb_lock_report(ro, rows, 1), -ENOLCK));
	clearerr(ro);
	cr_assert(eq(int, lb_lock_report_json(ro, rows, 1), -ENOLCK));
	for (i = 0; i < LB_LOCK_NEST_MAX; i++) {
		lb_lock_release(&l[i]);
		lb_lock_destroy(&l[i]);
	}
	clearerr(ro);
	cr_assert(eq(int, lb_lock_report(ro, rows, 1), -EIO));
	cr_assert(eq(int, lb_lock_stats(&held, &s), 0));
	cr_assert(eq(u64, s.acquisitions, 1), "the failed calls counted nothing");
	cr_assert(eq(int, lb_lock_destroy(&held), 0));
	fclose(ro);
}

/*
 * C21: one thread re-acquires at once, the other loops; the default kind
 * must give the looping thread at least 30% of a fair share. The share is
 * the judged one of tests/common/lock_fair.h: acquisitions made while it
 * waited, leaving out blocks of rounds in which it was preempted, so a
 * loaded machine does not fail the test. The looping thread may get little CPU there, so
 * one-second runs repeat (up to ten) until it has enough judged rounds.
 */
#define C21_RUNS 10
#define C21_ENOUGH 20000
#define C21_MIN 200

Test(lock, c21_default_kind_fair_share, .timeout = 90)
{
	struct lf_result r, sum = { 0 };
	int run;

	for (run = 0; run < C21_RUNS && sum.judged[1] < C21_ENOUGH; run++) {
		cr_assert(eq(int, lf_run(LB_LOCK_DEFAULT, 2, 1000, &r), 0));
		lf_accumulate(&sum, &r);
	}
	cr_assert(eq(u64, sum.overlaps, 0));
	cr_assert(eq(u64, sum.counter, sum.total));
	cr_assert(ge(u64, sum.judged[1], C21_MIN),
		  "looping thread ran: %llu judged rounds (%llu preempted) in %d s",
		  (unsigned long long)sum.judged[1],
		  (unsigned long long)sum.preempted[1], run);
	cr_assert(ge(dbl, sum.judged_share[1], 0.30),
		  "share %.3f of fair (%llu rounds, overtaken %llu times)",
		  sum.judged_share[1], (unsigned long long)sum.judged[1],
		  (unsigned long long)sum.judged_over[1]);
	cr_log_info("c21: default kind judged share %.2f of fair over %d s "
		    "(%llu rounds, %llu preempted); contended %.2f, raw %.2f",
		    sum.judged_share[1], run, (unsigned long long)sum.judged[1],
		    (unsigned long long)sum.preempted[1], sum.share[1],
		    lf_raw_share(&sum, 1));
}
