// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Prefetching LRU scans, measured: lb_lru_isolate() over a list of
 * objects scattered through an arena four times the size of the
 * last-level cache (the list order is a random permutation of the arena),
 * with the next node prefetched for writing and without.
 *
 * Each visit is what an aging scan does per object: stamp its generation
 * with a compare-and-swap, test and clear its referenced bits (lb_refbits),
 * rotate it to the head if any was set (about one in four), leave it
 * otherwise. The locked instruction is why the prefetch matters: on x86 no
 * later load may complete before it, so without a prefetch issued ahead of
 * it the next node's miss cannot overlap this node's work. One pass visits every object under one
 * lock hold. Passes alternate between the prefetching and the plain LRU,
 * built over the same objects in the same order, and the median pass of
 * each gives CPU ns per node (thread CPU time: the machine may be shared);
 * the ratio is from this one run. Rows: the visit alone, and with 32 and
 * 64 steps of other per-object work (a dependent multiply chain, about
 * 40 and 80 ns here, standing in for what a real scan checks per folio).
 * A pointer chase cannot run ahead by itself, so the prefetch can hide at
 * most the work done on one node while the next one's miss is in flight. It never fails;
 * it prints a table, or JSON with --json.
 *
 * Source of the idea: "mm, lru_gen: try to prefetch next page when
 * scanning LRU" (Kairui Song, v2, 2024).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lockbatch/lru.h>
#include <lockbatch/refbits.h>

/*
 * One object per 128 bytes: the node, the generation and the first word
 * of the referenced bits share the first line.
 */
struct sobj {
	struct lb_lru_node node;
	uint32_t gen;
	uint64_t hash;
	struct lb_refbits rb;
} __attribute__((aligned(128)));

struct variant {
	const char *name;
	unsigned int flags;
	struct lb_lru *lru;
	struct sobj *objs;
	double ns[16];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * Age one object: stamp the scan's generation with a compare-and-swap (as
 * folio_update_gen() does on folio->flags), then test and clear its
 * referenced bits; referenced objects get a second chance at the head.
 */
/*
 * The rest of a real visit (checking the object's owner, its mapping, a
 * key): a dependent chain of multiplies, no memory traffic, @iters long.
 */
static unsigned int work_iters;

static __attribute__((noinline)) uint64_t mix(uint64_t h, unsigned int iters)
{
	unsigned int i;

	for (i = 0; i < iters; i++)
		h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
	return h;
}

static enum lb_lru_verdict age(void *o, void *arg)
{
	struct sobj *s = o;
	uint32_t gen = *(uint32_t *)arg, old = __atomic_load_n(&s->gen,
							      __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(&s->gen, &old, gen, 0,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (work_iters)
		s->hash = mix(s->hash, work_iters);
	if (lb_refbits_test_and_clear(&s->rb, NULL, NULL) <= 0)
		return LB_LRU_SKIP;
	return LB_LRU_ROTATE;
}

/* Mark a quarter of the objects referenced between passes (not timed). */
static void touch(struct sobj *objs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((next_rand() & 3) == 0)
			lb_refbits_mark(&objs[i].rb, 0);
}

static int build(struct variant *v, const uint32_t *perm, size_t n)
{
	struct lb_lru_conf conf = {
		.lock_kind = LB_LOCK_SPIN, .name = v->name,
		.node_offset = offsetof(struct sobj, node), .flags = v->flags,
	};
	size_t i;

	if (posix_memalign((void **)&v->objs, 2u << 20, n * sizeof(struct sobj)))
		return -1;
	memset(v->objs, 0, n * sizeof(struct sobj));
	if (lb_lru_create(&v->lru, &conf))
		return -1;
	for (i = 0; i < n; i++) {
		void *o = &v->objs[perm[i]];

		lb_lru_node_init(&v->objs[perm[i]].node, 1);
		lb_refbits_init(&v->objs[perm[i]].rb, 16);
		lb_lru_commit(v->lru, &o, 1);
	}
	return 0;
}

static double pass(struct variant *v, size_t n)
{
	static uint32_t gen;
	struct cds_list_head none;
	uint64_t t0;

	CDS_INIT_LIST_HEAD(&none);
	touch(v->objs, n);
	gen++;
	t0 = now_ns();
	lb_lru_isolate(v->lru, LB_LRU_INACTIVE, &none, 1, age, &gen);
	return (double)(now_ns() - t0) / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* A random permutation: the list order, scattered over the arena. */
static uint32_t *shuffled(size_t n)
{
	uint32_t *perm = malloc(n * sizeof(*perm));
	size_t i;

	if (!perm)
		return NULL;
	for (i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (i = n - 1; i > 0; i--) {
		size_t j = next_rand() % (i + 1);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	return perm;
}

/* One row: both variants over the same list, medians of @passes passes. */
static void row(struct variant *var, size_t n, unsigned int passes,
		unsigned int work, int json, int first)
{
	unsigned int p, k;
	double med[2];

	work_iters = work;
	/* Alternate which variant goes first, so drift hits both alike. */
	for (p = 0; p < passes; p++)
		for (k = 0; k < 2; k++) {
			struct variant *v = &var[(p + k) % 2];

			v->ns[p] = pass(v, n);
		}
	for (k = 0; k < 2; k++)
		med[k] = median(var[k].ns, passes);
	if (json)
		printf("%s{\"work\":%u,\"prefetch_ns_per_node\":%.2f,"
		       "\"no_prefetch_ns_per_node\":%.2f,\"speedup\":%.3f}",
		       first ? "" : ",", work, med[0], med[1], med[1] / med[0]);
	else
		printf("%10u %16.2f %16.2f %8.3fx\n", work, med[0], med[1],
		       med[1] / med[0]);
}

struct args {
	size_t mib;
	unsigned int passes;
	unsigned int nr_works;
	unsigned int works[3];
	int json;
};

static int parse(int argc, char **argv, struct args *a)
{
	int i;

	*a = (struct args){ 128, 7, 3, { 0, 32, 64 }, 0 };
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			a->json = 1;
		else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			a->mib = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--work") && i + 1 < argc) {
			a->works[0] = (unsigned int)strtoul(argv[++i], NULL, 0);
			a->nr_works = 1;
		} else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			a->passes = (unsigned int)strtoul(argv[++i], NULL, 0);
		else
			return -1;
	}
	return a->passes >= 1 && a->passes <= 16 && a->mib >= 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct variant var[2] = {
		{ .name = "prefetch", .flags = 0 },
		{ .name = "no-prefetch", .flags = LB_LRU_NO_PREFETCH },
	};
	struct args a;
	unsigned int k, w;
	uint32_t *perm;
	size_t n;

	if (parse(argc, argv, &a)) {
		fprintf(stderr, "usage: %s [--json] [--mib N] [--work STEPS] [--passes 1..16]\n",
			argv[0]);
		return 2;
	}
	n = a.mib * 1024 * 1024 / sizeof(struct sobj);
	perm = shuffled(n);
	for (k = 0; k < 2; k++)
		if (!perm || build(&var[k], perm, n)) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
	if (a.json)
		printf("{\"bench\":\"lru_scan\",\"arena_mib\":%zu,\"nodes\":%zu,"
		       "\"passes\":%u,\"rows\":[", a.mib, n, a.passes);
	else
		printf("LRU scan, %zu nodes scattered over %zu MiB, median of %u passes\n"
		       "%10s %16s %16s %9s\n", n, a.mib, a.passes, "work",
		       "prefetch ns/node", "plain ns/node", "speedup");
	for (w = 0; w < a.nr_works; w++)
		row(var, n, a.passes, a.works[w], a.json, w == 0);
	if (a.json)
		printf("]}\n");
	for (k = 0; k < 2; k++) {
		struct cds_list_head all;

		CDS_INIT_LIST_HEAD(&all);
		lb_lru_isolate(var[k].lru, LB_LRU_INACTIVE, &all, (unsigned int)n,
			       NULL, NULL);
		lb_lru_destroy(var[k].lru);
		free(var[k].objs);
	}
	free(perm);
	return 0;
}
