// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pcp-tracegen: write a synthetic page-allocation trace for pcp-replay
 * (format: tests/data/README.md). Deterministic for a given seed.
 *
 *   pcp-tracegen kbuild|deep|prodcons|alternate [--seed N] [--scale K]
 *
 * kbuild     4 CPUs: phases of parallel jobs (each allocates a working set
 *            in bursts, keeps it a while, frees it at exit, sometimes on
 *            another CPU), a page cache that grows and is reclaimed in
 *            bulk, a link step on one CPU, and idle phases.
 * deep       2 CPUs, each allocating and then freeing 6000 pages at a time,
 *            deeper than high_max (2048).
 * prodcons   CPU 0 only allocates, CPU 1 only frees the same objects.
 * alternate  one CPU frees n and allocates n, n around batch, right at the
 *            flush threshold.
 *
 * A tick ("t") is written every 30000 events, about one second of the
 * recorded build.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TICK_EVENTS 30000

static uint64_t rng_state;
static unsigned long events;
static uint32_t next_id;
static uint32_t *free_ids;
static size_t nr_free_ids, cap_free_ids;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(((rnd() >> 32) * (uint64_t)n) >> 32);
}

static void tick_if_due(void)
{
	if (++events % TICK_EVENTS == 0)
		puts("t");
}

static void ticks(int n)
{
	while (n-- > 0)
		puts("t");
}

/* Ids are reused after a free, as the converter of real traces does. */
static uint32_t ev_alloc(int cpu, int order)
{
	uint32_t id = nr_free_ids ? free_ids[--nr_free_ids] : next_id++;

	printf("a %d %d %" PRIu32 "\n", cpu, order, id);
	tick_if_due();
	return id;
}

static void ev_free(int cpu, int order, uint32_t id)
{
	printf("f %d %d %" PRIu32 "\n", cpu, order, id);
	if (nr_free_ids == cap_free_ids) {
		cap_free_ids = cap_free_ids ? cap_free_ids * 2 : 4096;
		free_ids = realloc(free_ids, cap_free_ids * sizeof(*free_ids));
		if (!free_ids)
			exit(2);
	}
	free_ids[nr_free_ids++] = id;
	tick_if_due();
}

static int small_order(void)
{
	uint32_t x = below(100);

	return x < 94 ? 0 : x < 98 ? 1 : x < 99 ? 2 : 3;
}

/* A set of live objects (ids and orders). */
struct set {
	uint32_t *id;
	uint8_t *order;
	size_t nr, cap;
};

static void set_add(struct set *s, uint32_t id, int order)
{
	if (s->nr == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->id = realloc(s->id, s->cap * sizeof(*s->id));
		s->order = realloc(s->order, s->cap);
		if (!s->id || !s->order)
			exit(2);
	}
	s->id[s->nr] = id;
	s->order[s->nr++] = (uint8_t)order;
}

static void set_free_all(struct set *s, int cpu)
{
	while (s->nr) {
		s->nr--;
		ev_free(cpu, s->order[s->nr], s->id[s->nr]);
	}
}

#define KB_CPUS 4
#define KB_JOBS 3	/* concurrent jobs per CPU */

struct job {
	struct set ws;
	uint32_t target;	/* working set to reach */
	uint32_t life;		/* events left after reaching it */
	int cpu;
};

static void job_start(struct job *j, int cpu)
{
	j->ws.nr = 0;
	j->target = 200 + below(below(4) ? 1500 : 6000);
	j->life = 2000 + below(20000);
	j->cpu = cpu;
}

static void gen_kbuild(int scale)
{
	struct job jobs[KB_CPUS][KB_JOBS];
	struct set cache = { 0 };
	int phase, c, k, step;

	puts("@conf cpus=4 batch=63 high_min=640 high_max=16384 max_order=3");
	memset(jobs, 0, sizeof(jobs));
	for (c = 0; c < KB_CPUS; c++)
		for (k = 0; k < KB_JOBS; k++)
			job_start(&jobs[c][k], c);
	for (phase = 0; phase < 4 * scale; phase++) {
		/* Compile: every CPU busy with short jobs. */
		for (step = 0; step < 250000; step++) {
			struct job *j;

			c = (int)below(KB_CPUS);
			j = &jobs[c][below(KB_JOBS)];
			if (j->ws.nr < j->target) {
				int o = small_order();

				set_add(&j->ws, ev_alloc(c, o), o);
				/* Some reads land in the page cache for good. */
				if (below(10) == 0)
					set_add(&cache, ev_alloc(c, 0), 0);
			} else if (j->life) {
				j->life--;
			} else {
				/* Exit, sometimes after a migration. */
				set_free_all(&j->ws, below(5) ? c : (int)below(KB_CPUS));
				job_start(j, c);
			}
		}
		/* Link: one CPU allocates a large image and frees it. */
		{
			struct set img = { 0 };
			int lc = phase % KB_CPUS, i;

			for (i = 0; i < 20000; i++)
				set_add(&img, ev_alloc(lc, 0), 0);
			set_free_all(&img, lc);
			free(img.id);
			free(img.order);
		}
		/* Reclaim shrinks the page cache in bulk on one CPU. */
		while (cache.nr > 30000) {
			cache.nr--;
			ev_free(phase % 2, cache.order[cache.nr], cache.id[cache.nr]);
		}
		ticks(3);	/* idle between phases */
	}
	for (c = 0; c < KB_CPUS; c++)
		for (k = 0; k < KB_JOBS; k++) {
			set_free_all(&jobs[c][k].ws, c);
			free(jobs[c][k].ws.id);
			free(jobs[c][k].ws.order);
		}
	set_free_all(&cache, 0);
	free(cache.id);
	free(cache.order);
	ticks(5);
}

static void gen_deep(int scale)
{
	struct set s[2] = { { 0 }, { 0 } };
	int round, c, i;

	puts("@conf cpus=2 batch=31 high_min=124 high_max=2048 max_order=3");
	for (round = 0; round < 60 * scale; round++) {
		for (c = 0; c < 2; c++) {
			int depth = 5000 + (int)below(2000);

			for (i = 0; i < depth; i++)
				set_add(&s[c], ev_alloc(c, 0), 0);
		}
		for (c = 0; c < 2; c++)
			set_free_all(&s[c], c);
	}
	ticks(5);
	free(s[0].id);
	free(s[0].order);
	free(s[1].id);
	free(s[1].order);
}

static void gen_prodcons(int scale)
{
	struct set q = { 0 };
	size_t head = 0;
	long i;

	puts("@conf cpus=2 batch=63 high_min=252 high_max=8192 max_order=3");
	for (i = 0; i < 400000L * scale; i++) {
		int burst = 1 + (int)below(200), k;

		for (k = 0; k < burst; k++)
			set_add(&q, ev_alloc(0, 0), 0);
		for (k = 0; k < burst && head < q.nr; k++, head++)
			ev_free(1, 0, q.id[head]);
		i += 2 * burst;
		/* Occasionally the consumer stalls and the queue deepens. */
		if (below(500) == 0)
			for (k = 0; k < 3000; k++)
				set_add(&q, ev_alloc(0, 0), 0);
	}
	for (; head < q.nr; head++)
		ev_free(1, 0, q.id[head]);
	ticks(5);
	free(q.id);
	free(q.order);
}

static void gen_alternate(int scale)
{
	struct set live = { 0 }, tmp = { 0 };
	long i;
	int k;

	puts("@conf cpus=2 batch=63 high_min=252 high_max=8192 max_order=3");
	/* A base of live objects so frees can cross the threshold. */
	for (k = 0; k < 600; k++)
		set_add(&live, ev_alloc(0, 0), 0);
	for (i = 0; i < 300000L * scale;) {
		int n = 32 + (int)below(64);

		for (k = 0; k < n && live.nr; k++, i++) {
			live.nr--;
			ev_free(0, 0, live.id[live.nr]);
		}
		for (k = 0; k < n; k++, i++)
			set_add(&live, ev_alloc(0, 0), 0);
		/* Drift: the base slowly grows and shrinks. */
		if (below(50) == 0)
			for (k = 0; k < 300; k++, i++)
				set_add(&tmp, ev_alloc(0, 0), 0);
		if (below(50) == 0)
			set_free_all(&tmp, 0);
	}
	set_free_all(&tmp, 0);
	set_free_all(&live, 0);
	ticks(5);
	free(live.id);
	free(live.order);
	free(tmp.id);
	free(tmp.order);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "scale", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	int c, scale = 1;

	rng_state = 4;
	while ((c = getopt_long(argc, argv, "s:k:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			rng_state = strtoull(optarg, NULL, 0);
			break;
		case 'k':
			scale = atoi(optarg);
			if (scale < 1)
				scale = 1;
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: pcp-tracegen kbuild|deep|prodcons|alternate "
			"[--seed N] [--scale K]\n");
		return 2;
	}
	printf("# lockbatch pcp trace v1\n# synthetic: %s, seed %" PRIu64
	       ", scale %d\n", argv[optind], rng_state, scale);
	if (!strcmp(argv[optind], "kbuild"))
		gen_kbuild(scale);
	else if (!strcmp(argv[optind], "deep"))
		gen_deep(scale);
	else if (!strcmp(argv[optind], "prodcons"))
		gen_prodcons(scale);
	else if (!strcmp(argv[optind], "alternate"))
		gen_alternate(scale);
	else {
		fprintf(stderr, "pcp-tracegen: unknown trace %s\n", argv[optind]);
		return 2;
	}
	free(free_ids);
	return ferror(stdout) ? 1 : 0;
}
