// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lru-fault: command line and main loop. See lru-fault.h for what the
 * program replays, and usage() for the flags.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lru-fault.h"

/* Most objects one thread may map per loop (objects are 64-byte descriptors). */
#define LF_MAX_OBJECTS (1u << 24)
#define LF_MAX_THREADS 4096u

static void usage(FILE *f)
{
	fprintf(f,
"usage: lru-fault [options]\n"
"\n"
"Replays the fault / MADV_DONTNEED microbenchmark of \"mm: allow smaller\n"
"large folios to use lru_cache\": every thread maps --mem bytes as objects\n"
"of each --sizes size, adds each to one shared LRU list through lb_cpubatch,\n"
"then unmaps them (off the list, up to 31 per lock hold), --loops times.\n"
"Prints ops/s (objects added + released per second of wall time), ops/cpu-s\n"
"(per second of the threads' CPU time: steadier on a shared machine), the\n"
"list lock's acquisitions by path (add, release), contentions and wait,\n"
"the add path's lock hold per acquisition,\n"
"then checks that every object reached the list exactly once per add and\n"
"left it again (exit 1 if not; exit 2 on bad arguments).\n"
"\n"
"  --threads N      threads (default 20)\n"
"  --mem SIZE       bytes mapped per thread per loop, K/M/G suffixes\n"
"                   (default 16M)\n"
"  --loops N        map/unmap passes per thread (default 10)\n"
"  --sizes LIST     object sizes, multiples of 4K (default 4K,16K,64K)\n"
"  --modes LIST     baseline (a lock hold per add), bypass (Linux 6.12: objects\n"
"                   above 4K flush the batch), weighted (batches capped at 31\n"
"                   pages), limit (the floor: a plain list per thread, no\n"
"                   lock, no atomic instruction, no clock read per object),\n"
"                   own-lru (an lb_lru per thread: its lock taken per object,\n"
"                   never contended, no batch) (default: all but own-lru)\n"
"  --lock KIND      mutex, spin, ticket, mcs or clh: the list lock (default\n"
"                   mutex). With more threads than CPUs a lock holder is\n"
"                   often preempted (the max waits of milliseconds in the\n"
"                   table); a spinning waiter then burns the CPU the holder\n"
"                   needs, and the FIFO kinds hand the lock to waiters that\n"
"                   are not running. A mutex waiter sleeps, so the figures\n"
"                   track lock traffic.\n"
"  --split-every N  every N-th object a thread maps is split by another thread\n"
"                   while it may still wait in that thread's batch: a settler\n"
"                   calls lb_cpubatch_settle() on it (every other one also carries\n"
"                   a third party's pin). Adds a table of settle outcomes and\n"
"                   slots flushed per settle (goal: 1 per DRAINED, 0 per BUSY,\n"
"                   no drain_all). Not in limit or own-lru mode (no batches).\n"
"  --no-splice      the LRU (an lb_lru) inserts a committed batch one object\n"
"                   at a time under its lock, as Linux 6.12 does, instead of\n"
"                   linking it into a chain first and splicing that in O(1)\n"
"  --causes         with weighted and limit among the modes and more than one\n"
"                   thread: also run both with 1 thread and split limit/w into\n"
"                   its causes, in CPU ns per op: the fast path (w - limit, 1\n"
"                   thread, nothing shared), the growth of the time spent\n"
"                   holding the list lock, and the rest of the cost of sharing\n"
"                   (cache lines moving between CPUs outside the lock, waits)\n"
"  --json           one JSON object per (size, mode) run instead of the table\n"
"  --plot PREFIX    also draw PREFIX-ops.png (ops/s) and PREFIX-locks.png (lock\n"
"                   acquisitions) per mode and size with gnuplot (PREFIX.dat:\n"
"                   the numbers); without gnuplot, says so and goes on\n"
"  --help           this text\n");
}

/* "16M" -> 16777216. Returns 0 on success, -EINVAL on anything else. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v == 0 || v > (SIZE_MAX >> shift))
		return -EINVAL;
	*out = (size_t)v << shift;
	return 0;
}

static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int parse_mode(const char *s, enum lf_mode *out)
{
	enum lf_mode m;

	for (m = 0; m < LF_NR_MODES; m++)
		if (!strcmp(s, lf_mode_name(m))) {
			*out = m;
			return 0;
		}
	return -EINVAL;
}

/* Comma-separated sizes; each a multiple of 4K, no duplicates. */
static int parse_sizes(char *list, struct lf_conf *c)
{
	char *save = NULL, *tok;
	unsigned int i;
	size_t v;

	c->nr_sizes = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c->nr_sizes == sizeof(c->sizes) / sizeof(c->sizes[0]) ||
		    parse_size(tok, &v) || v % LF_UNIT ||
		    v / LF_UNIT > LB_WBATCH_WEIGHT_MAX)
			return -EINVAL;
		for (i = 0; i < c->nr_sizes; i++)
			if (c->sizes[i] == v)
				return -EINVAL;
		c->sizes[c->nr_sizes++] = v;
	}
	return c->nr_sizes ? 0 : -EINVAL;
}

static int parse_modes(char *list, struct lf_conf *c)
{
	char *save = NULL, *tok;
	unsigned int i;
	enum lf_mode m;

	c->nr_modes = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (c->nr_modes == LF_NR_MODES || parse_mode(tok, &m))
			return -EINVAL;
		for (i = 0; i < c->nr_modes; i++)
			if (c->modes[i] == m)
				return -EINVAL;
		c->modes[c->nr_modes++] = m;
	}
	return c->nr_modes ? 0 : -EINVAL;
}

static int parse_lock(const char *s, enum lb_lock_kind *out)
{
	unsigned int k;

	for (k = 0; k < LB_LOCK_NR_KINDS; k++)
		if (!strcmp(s, lf_lock_name((enum lb_lock_kind)k))) {
			*out = (enum lb_lock_kind)k;
			return 0;
		}
	return -EINVAL;
}

/* Every size must fit --mem at least once and not exceed the object cap. */
static int check_conf(const struct lf_conf *c)
{
	unsigned int i;

	for (i = 0; i < c->nr_sizes; i++)
		if (c->mem < c->sizes[i] ||
		    c->mem / c->sizes[i] > LF_MAX_OBJECTS)
			return -EINVAL;
	return 0;
}

static void set_defaults(struct lf_conf *c)
{
	static const size_t sizes[] = { 4096, 16384, 65536 };
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->threads = 20;
	c->mem = 16u << 20;
	c->loops = 10;
	c->lock_kind = LB_LOCK_MUTEX;
	for (i = 0; i < 3; i++)
		c->sizes[c->nr_sizes++] = sizes[i];
	for (i = 0; i < LF_DEFAULT_MODES; i++)
		c->modes[c->nr_modes++] = (enum lf_mode)i;
}

enum { OPT_THREADS = 256, OPT_MEM, OPT_LOOPS, OPT_SIZES, OPT_MODES, OPT_LOCK,
       OPT_SPLIT_EVERY, OPT_NO_SPLICE, OPT_CAUSES, OPT_JSON, OPT_PLOT, OPT_HELP };

static const struct option long_opts[] = {
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "loops", required_argument, NULL, OPT_LOOPS },
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "modes", required_argument, NULL, OPT_MODES },
	{ "lock", required_argument, NULL, OPT_LOCK },
	{ "split-every", required_argument, NULL, OPT_SPLIT_EVERY },
	{ "no-splice", no_argument, NULL, OPT_NO_SPLICE },
	{ "causes", no_argument, NULL, OPT_CAUSES },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0, 1 for --help, -EINVAL on a bad command line. */
static int parse_args(int argc, char **argv, struct lf_conf *c)
{
	int opt, err = 0;

	set_defaults(c);
	opterr = 0;
	while (!err && (opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_THREADS:
			err = parse_uint(optarg, 1, LF_MAX_THREADS, &c->threads);
			break;
		case OPT_MEM:
			err = parse_size(optarg, &c->mem);
			break;
		case OPT_LOOPS:
			err = parse_uint(optarg, 1, UINT_MAX, &c->loops);
			break;
		case OPT_SIZES:
			err = parse_sizes(optarg, c);
			break;
		case OPT_MODES:
			err = parse_modes(optarg, c);
			break;
		case OPT_LOCK:
			err = parse_lock(optarg, &c->lock_kind);
			break;
		case OPT_SPLIT_EVERY:
			err = parse_uint(optarg, 1, UINT_MAX, &c->split_every);
			break;
		case OPT_NO_SPLICE:
			c->no_splice = true;
			break;
		case OPT_CAUSES:
			c->causes = true;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_PLOT:
			c->plot = optarg;
			break;
		case OPT_HELP:
			return 1;
		default:
			err = -EINVAL;
		}
	}
	if (!err && optind < argc)
		err = -EINVAL;
	return err ? err : check_conf(c);
}

/*
 * Which run is going, on stderr and only on a terminal: the table takes
 * half a minute, and a pipe or a log gets nothing but the results.
 * mode LF_NR_MODES clears the line.
 */
static void progress(const struct lf_conf *c, unsigned int done, size_t size,
		     enum lf_mode mode)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (!tty)
		return;
	if (mode == LF_NR_MODES)
		fputs("\r\033[K", stderr);
	else
		fprintf(stderr, "\r\033[Klru-fault: run %u/%u: %zuK %s ...", done + 1,
			c->nr_sizes * c->nr_modes, size >> 10, lf_mode_name(mode));
	fflush(stderr);
}

/*
 * --causes: weighted and limit again with 1 thread, for each size, and the
 * split of limit/w at the asked thread count (lf_causes_split()).
 */
static int run_causes(const struct lf_conf *c, const struct lf_result *res,
		      unsigned int nr, struct lf_causes *out)
{
	struct lf_conf one = *c;
	struct lf_result w1, l1;
	unsigned int s, i;

	one.threads = 1;
	for (s = 0; s < c->nr_sizes; s++) {
		const struct lf_result *w = NULL, *l = NULL;

		out[s].valid = false;
		for (i = 0; i < nr; i++) {
			if (res[i].size != c->sizes[s])
				continue;
			if (res[i].mode == LF_WEIGHTED)
				w = &res[i];
			else if (res[i].mode == LF_LIMIT)
				l = &res[i];
		}
		if (!w || !l || c->threads < 2)
			continue;
		if (lf_run(&one, c->sizes[s], LF_WEIGHTED, NULL, &w1) ||
		    lf_run(&one, c->sizes[s], LF_LIMIT, NULL, &l1))
			return -1;
		lf_causes_split(w, l, &w1, &l1, &out[s]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lf_result res[16 * LF_NR_MODES];
	struct lf_causes causes[16];
	unsigned int s, m, nr = 0;
	struct lf_split *split = NULL;
	struct lf_hooks hooks;
	bool ok = true;
	struct lf_conf c;
	int err;

	err = parse_args(argc, argv, &c);
	if (err == 1) {
		usage(stdout);
		return 0;
	}
	if (err) {
		fprintf(stderr, "lru-fault: bad arguments\n\n");
		usage(stderr);
		return 2;
	}
	if (c.split_every) {
		split = lf_split_new(c.split_every);
		if (!split) {
			fprintf(stderr, "lru-fault: out of memory\n");
			return 1;
		}
		lf_split_hooks(split, &hooks);
	}
	for (s = 0; s < c.nr_sizes; s++) {
		for (m = 0; m < c.nr_modes; m++) {
			bool splits = split && lf_mode_batched(c.modes[m]);

			progress(&c, nr, c.sizes[s], c.modes[m]);
			err = lf_run(&c, c.sizes[s], c.modes[m],
				     splits ? &hooks : NULL, &res[nr]);
			if (err) {
				fprintf(stderr, "lru-fault: run setup failed: %s\n",
					strerror(-err));
				return 1;
			}
			ok &= res[nr].verified;
			nr++;
		}
	}
	progress(&c, nr, 0, LF_NR_MODES);
	if (c.causes && run_causes(&c, res, nr, causes)) {
		fprintf(stderr, "lru-fault: run setup failed\n");
		return 1;
	}
	if (c.json)
		lf_report_json(res, nr, c.causes ? causes : NULL, c.nr_sizes);
	else
		lf_report_table(&c, res, nr, c.causes ? causes : NULL);
	if (c.plot && lf_plot(&c, res, nr, c.plot))
		ok = false;
	lf_split_free(split);
	if (!ok)
		fprintf(stderr, "lru-fault: verification FAILED (see above)\n");
	return ok ? 0 : 1;
}
