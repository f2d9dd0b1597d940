// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Prefetching LRU scans, measured: lb_lru_isolate() over a list of
 * objects scattered through an arena (the list order is a random
 * permutation of the arena), with the next node prefetched for writing
 * (the default), for reading (%LB_LRU_PREFETCH_READ) and not at all. The arena is sized from the last-level cache the kernel
 * reports (sysfs cpu0/cache, the highest level): the node lines a scan
 * visits, one per object, add up to four times that cache, so nearly
 * every visit misses it (--mib overrides).
 *
 * Rows, each one scan kind over the whole list under one lock hold:
 * - walk: the bare walk, every object skipped unread. The next pointer is
 *   the demand load, so there is nothing for a prefetch to overlap: its
 *   time per node is the pointer chase alone, the floor of every scan.
 * - age: an aging visit (MGLRU's scan_folios() with sort_folio()): stamp
 *   the generation with a compare-and-swap (folio_update_gen()), test and
 *   clear the referenced bits (lb_refbits), rotate the referenced ones
 *   (about one in four) to the head, leave the rest.
 * - evict: the reclaim scan of examples/pagecache: referenced objects
 *   rotate, the others are isolated onto a private list (unlinking writes
 *   the next node, the line the prefetch asked for in exclusive state).
 *   They are put back after the timed pass.
 * - age+32, age+64: the aging visit plus 32 or 64 steps of other
 *   per-object work (a dependent multiply chain, about 40 and 80 ns here,
 *   standing in for the checks a kernel scan makes per folio: owner,
 *   mapping, memcg). Not a shape lb_lru users run: they show where the
 *   prefetch starts to pay.
 * The scan reads the next pointer before the callback runs, so the core's
 * out-of-order window already starts the next miss while a short visit
 * executes: the prefetch gains only what the window cannot reach, the
 * per-node work beyond it. The "ceiling" column bounds that gain: a row's
 * plain time over the walk's, the speedup a prefetch would reach if it
 * hid all of the row's work behind the chase (a list cannot be walked
 * faster than one miss per node). Passes rotate between the three LRUs,
 * each built over its own objects in the same order, and the median pass
 * of each gives CPU ns per node (thread CPU time: the machine may be
 * shared); ratios are from this one run. It never fails; it prints a
 * table, or JSON with --json.
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
 * One object per 128 bytes: the node and the first word of the referenced
 * bits share the first line (a 16-unit object uses only that word); the
 * generation and the work's state are on the second.
 */
struct sobj {
	struct lb_lru_node node;
	struct lb_refbits rb;
	uint32_t gen;
	uint64_t hash;
} __attribute__((aligned(128)));

enum scan_kind { SCAN_WALK, SCAN_AGE, SCAN_EVICT };

struct scan_row {
	const char *name;
	enum scan_kind kind;
	unsigned int work;
};

/* The default prefetch (for writing), LB_LRU_PREFETCH_READ, none. */
enum { V_WRITE, V_READ, V_PLAIN, NR_VARIANTS };

struct variant {
	const char *name;
	unsigned int flags;
	struct lb_lru *lru;
	struct sobj *objs;
	double ns[16];
};

/* The largest cache the kernel lists for CPU 0 (sysfs), in bytes; 0: none. */
static size_t llc_bytes(void)
{
	size_t best = 0;
	unsigned int i, level, best_level = 0;

	for (i = 0; i < 16; i++) {
		char path[96];
		unsigned long kib;
		FILE *f;
		int ok;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/level", i);
		f = fopen(path, "r");
		if (!f)
			break;
		ok = fscanf(f, "%u", &level) == 1;
		fclose(f);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%u/size", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		ok = ok && fscanf(f, "%luK", &kib) == 1;
		fclose(f);
		if (ok && level >= best_level) {
			best_level = level;
			best = (size_t)kib * 1024;
		}
	}
	return best;
}

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

/*
 * Age one object: stamp the scan's generation with a compare-and-swap (as
 * folio_update_gen() does on folio->flags), then test and clear its
 * referenced bits; referenced objects get a second chance at the head.
 */
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

static enum lb_lru_verdict walk(void *o, void *arg)
{
	(void)o;
	(void)arg;
	return LB_LRU_SKIP;
}

/* The page cache's reclaim: referenced -> second chance, else isolate. */
static enum lb_lru_verdict evict(void *o, void *arg)
{
	struct sobj *s = o;

	(void)arg;
	if (lb_refbits_test_and_clear(&s->rb, NULL, NULL) > 0)
		return LB_LRU_ROTATE;
	return LB_LRU_ISOLATE;
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

static double pass(struct variant *v, size_t n, enum scan_kind kind)
{
	static const lb_lru_scan_fn fns[] = { walk, age, evict };
	static uint32_t gen;
	struct cds_list_head iso;
	uint64_t t0, t1;

	CDS_INIT_LIST_HEAD(&iso);
	touch(v->objs, n);
	gen++;
	t0 = now_ns();
	lb_lru_isolate(v->lru, LB_LRU_INACTIVE, &iso, (unsigned int)n,
		       fns[kind], &gen);
	t1 = now_ns();
	lb_lru_putback(v->lru, &iso, 0);
	return (double)(t1 - t0) / (double)n;
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

/*
 * One row: the variants over the same list, medians of @passes passes.
 * The walk row sets *@floor, the pointer chase alone (its fastest
 * variant); every row reports its plain time over it.
 */
static void row(struct variant *var, size_t n, unsigned int passes,
		const struct scan_row *r, int json, int first, double *floor)
{
	unsigned int p, k;
	double med[NR_VARIANTS], ceiling;

	work_iters = r->work;
	/* Rotate which variant goes first, so drift hits all alike. */
	for (p = 0; p < passes; p++)
		for (k = 0; k < NR_VARIANTS; k++) {
			struct variant *v = &var[(p + k) % NR_VARIANTS];

			v->ns[p] = pass(v, n, r->kind);
		}
	for (k = 0; k < NR_VARIANTS; k++) {
		med[k] = median(var[k].ns, passes);
		if (r->kind == SCAN_WALK && !r->work &&
		    (!k || med[k] < *floor))
			*floor = med[k];
	}
	ceiling = *floor > 0 ? med[V_PLAIN] / *floor : 0;
	if (json)
		printf("%s{\"scan\":\"%s\",\"work\":%u,"
		       "\"prefetch_ns_per_node\":%.2f,"
		       "\"read_prefetch_ns_per_node\":%.2f,"
		       "\"no_prefetch_ns_per_node\":%.2f,\"speedup\":%.3f,"
		       "\"read_speedup\":%.3f,\"ceiling\":%.3f}",
		       first ? "" : ",", r->name, r->work, med[V_WRITE],
		       med[V_READ], med[V_PLAIN], med[V_PLAIN] / med[V_WRITE],
		       med[V_PLAIN] / med[V_READ], ceiling);
	else
		printf("%-8s %9.2f %9.2f %9.2f %8.3fx %8.3fx %8.3f%s\n",
		       r->name, med[V_WRITE], med[V_READ], med[V_PLAIN],
		       med[V_PLAIN] / med[V_WRITE], med[V_PLAIN] / med[V_READ],
		       ceiling, ceiling > 0 ? "x" : " (no walk row)");
}

static const struct scan_row rows[] = {
	{ "walk", SCAN_WALK, 0 },
	{ "age", SCAN_AGE, 0 },
	{ "evict", SCAN_EVICT, 0 },
	{ "age+32", SCAN_AGE, 32 },
	{ "age+64", SCAN_AGE, 64 },
};

#define NR_ROWS (sizeof(rows) / sizeof(rows[0]))

struct args {
	size_t mib;
	unsigned int passes;
	const char *only;
	int json;
};

static int parse(int argc, char **argv, struct args *a)
{
	int i;

	*a = (struct args){ 0, 7, NULL, 0 };
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			a->json = 1;
		else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			a->mib = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--scan") && i + 1 < argc)
			a->only = argv[++i];
		else if (!strcmp(argv[i], "--passes") && i + 1 < argc)
			a->passes = (unsigned int)strtoul(argv[++i], NULL, 0);
		else
			return -1;
	}
	return a->passes >= 1 && a->passes <= 16 ? 0 : -1;
}

/*
 * Enough objects that their node lines, one per object, span four times
 * the last-level cache: 4 * @llc / 64 objects of sizeof(struct sobj).
 * Without a cache size, 128 MiB. At most 2 GiB (three arenas are built).
 */
static size_t default_mib(size_t llc)
{
	size_t mib;

	if (!llc)
		return 128;
	mib = (4 * llc / 64 * sizeof(struct sobj) + (1u << 20) - 1) >> 20;
	return mib > 2048 ? 2048 : mib;
}

int main(int argc, char **argv)
{
	struct variant var[NR_VARIANTS] = {
		[V_WRITE] = { .name = "prefetch", .flags = 0 },
		[V_READ] = { .name = "read-prefetch",
			     .flags = LB_LRU_PREFETCH_READ },
		[V_PLAIN] = { .name = "no-prefetch",
			      .flags = LB_LRU_NO_PREFETCH },
	};
	struct args a;
	unsigned int k, w;
	int first = 1;
	double floor = 0;
	size_t llc = 0;
	uint32_t *perm;
	size_t n;

	if (parse(argc, argv, &a)) {
		fprintf(stderr, "usage: %s [--json] [--mib N] [--scan walk|age|evict|age+32|age+64] [--passes 1..16]\n",
			argv[0]);
		return 2;
	}
	llc = llc_bytes();
	if (!a.mib)
		a.mib = default_mib(llc);
	n = a.mib * 1024 * 1024 / sizeof(struct sobj);
	if (!n || n > UINT32_MAX) {
		fprintf(stderr, "--mib out of range\n");
		return 2;
	}
	perm = shuffled(n);
	for (k = 0; k < NR_VARIANTS; k++)
		if (!perm || build(&var[k], perm, n)) {
			fprintf(stderr, "out of memory\n");
			return 1;
		}
	if (a.json)
		printf("{\"bench\":\"lru_scan\",\"llc_bytes\":%zu,"
		       "\"arena_mib\":%zu,\"nodes\":%zu,\"passes\":%u,"
		       "\"rows\":[", llc, a.mib, n, a.passes);
	else
		printf("LRU scan, %zu nodes scattered over %zu MiB (LLC %zu KiB), median of %u passes\n"
		       "ns/node: prefetch for writing (default), for reading, none; speedups over none\n"
		       "%-8s %9s %9s %9s %9s %9s %9s\n", n, a.mib, llc >> 10,
		       a.passes, "scan", "write", "read", "plain", "speedup",
		       "read", "ceiling");
	for (w = 0; w < NR_ROWS; w++) {
		if (a.only && strcmp(a.only, rows[w].name))
			continue;
		row(var, n, a.passes, &rows[w], a.json, first, &floor);
		first = 0;
	}
	if (a.json)
		printf("]}\n");
	for (k = 0; k < NR_VARIANTS; k++) {
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
