// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The LRU lock, measured from lb_lru's per-path statistics (acquisitions,
 * waiters' wait from the lb_lock counters, hold time from
 * %LB_LRU_HOLD_TIME), 8 threads, each variant for a fixed number of
 * operations per thread, the variants alternating over several runs
 * (median of each column). Ratios are from this one run. It never fails; it
 * prints a table, or JSON with --json.
 *
 * 1. Secondary work inside vs after the lock. Each thread isolates 32
 *    objects from the tail and puts them back; half of them drop their
 *    last reference there (@release) and go to @secondary, which unqueues
 *    them from a shared deferred-split queue under its own lock (as
 *    __folio_unqueue_deferred_split() does), after which the thread adds
 *    them again as new objects through an lb_cpubatch. With %LB_LRU_PUTBACK_LOCKED that work runs
 *    under the LRU lock (Linux 6.12 move_folios_to_lru()); without, after
 *    it ("mm: unqueue deferred split folios outside the lruvec lock").
 * 2. Splice vs per-object insertion. Each thread adds objects through an
 *    lb_cpubatch (weighted, 31 per batch) and removes its older ones in
 *    batches of 31 (lb_lru_del()), so the list head keeps moving between
 *    CPUs. Hold time per add-path acquisition: the splice commit against
 *    %LB_LRU_NO_SPLICE, and the floor: the hold of a commit with nothing
 *    to link (its objects already listed), same lock and bookkeeping.
 *    The splice's four pointer writes and its flag store per object (to
 *    lines the prepare phase just wrote) are near what a per-hold clock
 *    resolves here (back-to-back TSC reads are about 12 ns apart on
 *    average), so its hold reads a ns or two above the floor; the ratio
 *    is printed as measured and above the floor (splice / per-object, a
 *    splice at or below the floor counting as 0).
 *    Per-object insertion costs about the same at 1, 2 and 8 threads: a
 *    batch's objects were just written by the committing CPU and each is
 *    linked next to the one before it, so of its 31 insertions only the
 *    first writes a node from another CPU (the old first node, which the
 *    splice writes too). Its hold is 31 insertions in the local cache.
 *
 * Waits are printed three ways: every wait; every wait less the time the
 * waiters spent in sched_yield() (lb_lock's wait_ns_yield), which is what
 * the kernel's lock_stat counts for a spinlock, whose waiters and holder
 * run with preemption off; and the waits shorter than
 * %LB_LRU_HOLD_LONG_NS. With 8 threads on 2 CPUs nearly all of the wait
 * total is waiters off their CPU: a spinning waiter yields after its
 * backoff (the holder was preempted, or the unfair lock kept going to the
 * running thread) and is back a time slice or more later, whenever the
 * lock was released; a mutex waiter is woken, then waits for a CPU. That
 * part scales with the machine's load and time slice, and its count with
 * the share of time the lock is held by any path (isolate and add too),
 * not with the putback's hold: "held ms" sums the holds of every path
 * (those a descheduled holder stretched left out), and its ratio bounds
 * what moving the putback's work can do to such waits. Involuntary
 * context switches of the
 * process (getrusage(), a yield that switches counts as one) are printed
 * next to it.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <lockbatch/lru.h>
#include <lockbatch/cpubatch.h>

#define MAX_THREADS 64
static int nthreads = 8;
static enum lb_lock_kind lock_kind = LB_LOCK_SPIN;
#define ISO_BATCH 32
#define DEL_BATCH 31
#define SPLIT_WORK 32
#define MAX_REPS 15

struct bobj {
	struct lb_lru_node node;
	struct cds_list_head split;	/* on the deferred-split queue */
	uint32_t dying;
	uint64_t hash;
};

/* The deferred-split queue: its own lock, as ds_queue->split_queue_lock. */
static struct lb_lock split_lock;
static struct cds_list_head split_queue;
static uint64_t split_len;

static uint64_t mix(uint64_t h, unsigned int iters)
{
	unsigned int i;

	for (i = 0; i < iters; i++)
		h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
	return h;
}

static bool op_release(void *o, void *arg)
{
	(void)arg;
	return ((struct bobj *)o)->dying;
}

/* Unqueue from the deferred-split queue, then the rest of the teardown. */
static void op_secondary(void *o, void *arg)
{
	struct bobj *b = o;

	(void)arg;
	lb_lock_acquire(&split_lock);
	cds_list_del_init(&b->split);
	split_len--;
	lb_lock_release(&split_lock);
	b->hash = mix(b->hash, SPLIT_WORK);
}

static const struct lb_lru_ops sec_ops = {
	.release = op_release,
	.secondary = op_secondary,
};

struct part1 {
	struct lb_lru *lru;
	struct lb_cpubatch *pc;
	unsigned int pflags;
	unsigned long rounds;
};

static void queue_split(struct bobj *b)
{
	lb_lock_acquire(&split_lock);
	cds_list_add(&b->split, &split_queue);
	split_len++;
	lb_lock_release(&split_lock);
}

static void *part1_thread(void *arg)
{
	struct part1 *p = arg;
	struct cds_list_head iso, *pos;
	struct bobj *dead[ISO_BATCH];
	unsigned long r;
	unsigned int nd, i = 0;

	CDS_INIT_LIST_HEAD(&iso);
	for (r = 0; r < p->rounds; r++) {
		if (lb_lru_isolate(p->lru, LB_LRU_INACTIVE, &iso, ISO_BATCH,
				   NULL, NULL) <= 0)
			continue;
		nd = 0;
		cds_list_for_each(pos, &iso) {
			struct bobj *b = lb_lru_obj_of(p->lru, cds_list_entry(pos,
						struct lb_lru_node, link));

			b->dying = (i++ & 1);
			if (b->dying)
				dead[nd++] = b;
		}
		lb_lru_putback(p->lru, &iso, p->pflags);
		/*
		 * The dead come back as new objects through the per-CPU
		 * batches (as new folios do), queued for split again.
		 */
		for (i = 0; i < nd; i++) {
			struct bobj *b = dead[i];

			b->dying = 0;
			lb_lru_node_init(&b->node, 1);
			queue_split(b);
			lb_lru_add(p->pc, p->lru, b);
		}
	}
	return NULL;
}

struct row {
	const char *name;
	double hold_ns;		/* per acquisition of the measured path */
	double wait_ms;		/* waiters' total wait, all paths */
	double yield_ms;	/* ... of which waiters spent yielding their CPU */
	double spun_ms;		/* wait_ms less yield_ms: lock_stat's share */
	double short_ms;	/* ... less the waits that span a descheduling */
	double nivcsw;		/* involuntary context switches, whole run */
	double busy_ms;		/* the lock held, all paths, long holds left out */
	uint64_t waits_long;
	uint64_t holds_long;	/* holds a descheduled holder stretched */
	uint64_t acquisitions;
	uint64_t contentions;
};

static int new_lru(struct lb_lru **lru, unsigned int flags,
		   const struct lb_lru_ops *ops)
{
	struct lb_lru_conf conf = {
		.lock_kind = lock_kind, .name = "lru",
		.node_offset = offsetof(struct bobj, node),
		.flags = flags | LB_LRU_HOLD_TIME, .ops = ops,
	};

	return lb_lru_create(lru, &conf);
}

static void empty_lru(struct lb_lru *lru)
{
	struct cds_list_head all;
	int l;

	CDS_INIT_LIST_HEAD(&all);
	for (l = 0; l < LB_LRU_NR_LISTS; l++)
		while (lb_lru_isolate(lru, l, &all, 1u << 20, NULL, NULL) > 0)
			;
	lb_lru_destroy(lru);
}

static void fill_row(struct row *row, struct lb_lru *lru, enum lb_lru_path path)
{
	struct lb_lru_stats st;
	unsigned int p;

	lb_lru_stats(lru, &st);
	if (getenv("LB_BENCH_DEBUG"))
		for (p = 0; p < LB_LRU_NR_PATHS; p++)
			fprintf(stderr, "%s: acq %llu hold %llu ns (long %llu ns) wait %llu ns cont %llu max %llu\n",
				lb_lru_path_name(p),
				(unsigned long long)st.path[p].acquisitions,
				(unsigned long long)st.path[p].hold_ns_total,
				(unsigned long long)st.path[p].hold_ns_long,
				(unsigned long long)st.path[p].wait_ns_total,
				(unsigned long long)st.path[p].contentions,
				(unsigned long long)st.path[p].wait_ns_max);
	/* Holds where the holder was descheduled say nothing about the code. */
	row->hold_ns = st.path[path].acquisitions > st.path[path].holds_long ?
		(double)(st.path[path].hold_ns_total - st.path[path].hold_ns_long) /
		(double)(st.path[path].acquisitions - st.path[path].holds_long) : 0;
	row->wait_ms = 0;
	row->yield_ms = 0;
	row->spun_ms = 0;
	row->busy_ms = 0;
	row->short_ms = 0;
	row->waits_long = 0;
	row->holds_long = 0;
	row->acquisitions = st.path[path].acquisitions;
	row->contentions = 0;
	for (p = 0; p < LB_LRU_NR_PATHS; p++) {
		row->wait_ms += (double)st.path[p].wait_ns_total / 1e6;
		row->yield_ms += (double)st.path[p].wait_ns_yield / 1e6;
		row->spun_ms += (double)(st.path[p].wait_ns_total -
					 st.path[p].wait_ns_yield) / 1e6;
		row->busy_ms += (double)(st.path[p].hold_ns_total -
					 st.path[p].hold_ns_long) / 1e6;
		row->short_ms += (double)(st.path[p].wait_ns_total -
					  st.path[p].wait_ns_long) / 1e6;
		row->waits_long += st.path[p].waits_long;
		row->holds_long += st.path[p].holds_long;
		row->contentions += st.path[p].contentions;
	}
}

/* The process's involuntary context switches so far (joined threads too). */
static long nivcsw(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_nivcsw;
}

static int run_part1(struct row *row, unsigned int pflags, unsigned long rounds,
		     size_t nobj)
{
	struct part1 arg = { .pflags = pflags, .rounds = rounds };
	struct lb_cpubatch_conf pconf = { .mode = LB_CPUBATCH_WEIGHTED };
	pthread_t th[MAX_THREADS];
	struct bobj *objs = calloc(nobj, sizeof(*objs));
	long cs;
	size_t i;
	int t;

	if (!objs || new_lru(&arg.lru, 0, &sec_ops))
		return -1;
	lb_lru_cpubatch_conf(arg.lru, &pconf);
	if (lb_cpubatch_create(&arg.pc, &pconf))
		return -1;
	for (i = 0; i < nobj; i++) {
		void *o = &objs[i];

		lb_lru_node_init(&objs[i].node, 1);
		queue_split(&objs[i]);
		lb_lru_commit(arg.lru, &o, 1);
	}
	cs = nivcsw();
	for (t = 0; t < nthreads; t++)
		pthread_create(&th[t], NULL, part1_thread, &arg);
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	cs = nivcsw() - cs;
	lb_cpubatch_destroy(arg.pc);
	fill_row(row, arg.lru, LB_LRU_PATH_PUTBACK);
	row->nivcsw = (double)cs;
	empty_lru(arg.lru);
	for (i = 0; i < nobj; i++)
		cds_list_del_init(&objs[i].split);
	split_len = 0;
	free(objs);
	return 0;
}

struct part2 {
	struct lb_lru *lru;
	struct lb_cpubatch *pc;
	unsigned long rounds;
	struct bobj *objs;	/* this thread's: DEL_BATCH * 4 */
};

static unsigned long late_dels;

/* Commit what is still in a batch, then delete it (refusing the rest). */
static void del_late(struct part2 *p, void *const *v)
{
	struct lb_node *nodes[DEL_BATCH];
	unsigned int i;

	for (i = 0; i < DEL_BATCH; i++)
		nodes[i] = &lb_lru_node_of(p->lru, v[i])->batch;
	lb_cpubatch_drain_objs(p->pc, nodes, DEL_BATCH);
	lb_lru_del(p->lru, v, DEL_BATCH);
	__atomic_fetch_add(&late_dels, 1, __ATOMIC_RELAXED);
}

/* Add a batch worth, then remove the oldest batch once it is committed. */
static void *part2_thread(void *arg)
{
	struct part2 *p = arg;
	unsigned long r;
	unsigned int i, gen;

	for (r = 0; r < p->rounds; r++) {
		gen = (unsigned int)(r % 4);
		for (i = 0; i < DEL_BATCH; i++) {
			struct bobj *b = &p->objs[gen * DEL_BATCH + i];

			lb_lru_node_init(&b->node, 1);
			lb_lru_add(p->pc, p->lru, b);
		}
		/*
		 * Two generations back: committed by now (a batch is 31),
		 * unless this thread moved to another CPU and left some in the
		 * old CPU's batch. Those are flushed before the generation is
		 * deleted: it is reused two rounds on.
		 */
		gen = (unsigned int)((r + 2) % 4);
		if (r >= 2) {
			void *v[DEL_BATCH];

			for (i = 0; i < DEL_BATCH; i++)
				v[i] = &p->objs[gen * DEL_BATCH + i];
			if (lb_lru_del(p->lru, v, DEL_BATCH) < DEL_BATCH)
				del_late(p, v);
		}
	}
	return NULL;
}

static int run_part2(struct row *row, unsigned int flags, unsigned long rounds)
{
	struct part2 arg[MAX_THREADS];
	struct lb_cpubatch_conf pconf = { .mode = LB_CPUBATCH_WEIGHTED };
	pthread_t th[MAX_THREADS];
	struct lb_lru *lru;
	struct lb_cpubatch *pc;
	struct bobj *objs = calloc((size_t)nthreads * DEL_BATCH * 4, sizeof(*objs));
	long cs;
	int t;

	if (!objs || new_lru(&lru, flags, NULL))
		return -1;
	lb_lru_cpubatch_conf(lru, &pconf);
	if (lb_cpubatch_create(&pc, &pconf))
		return -1;
	cs = nivcsw();
	for (t = 0; t < nthreads; t++) {
		arg[t] = (struct part2){ lru, pc, rounds,
					 objs + t * DEL_BATCH * 4 };
		pthread_create(&th[t], NULL, part2_thread, &arg[t]);
	}
	for (t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	cs = nivcsw() - cs;
	lb_cpubatch_destroy(pc);
	if (getenv("LB_BENCH_DEBUG"))
		fprintf(stderr, "late deletions so far: %lu\n", late_dels);
	fill_row(row, lru, LB_LRU_PATH_ADD);
	row->nivcsw = (double)cs;
	empty_lru(lru);
	free(objs);
	return 0;
}

/*
 * The floor of a hold: commits whose every object is already on the LRU
 * (refused, counted as errors) take the lock and do the bookkeeping of a
 * commit but no list work. One thread, so no line comes from another CPU.
 */
static double empty_hold_ns(unsigned long rounds)
{
	struct bobj objs[DEL_BATCH];
	void *v[DEL_BATCH];
	struct lb_lru_stats st;
	struct lb_lru *lru;
	unsigned long r;
	unsigned int i;
	double ns;

	memset(objs, 0, sizeof(objs));
	if (new_lru(&lru, 0, NULL))
		return 0;
	for (i = 0; i < DEL_BATCH; i++) {
		lb_lru_node_init(&objs[i].node, 1);
		v[i] = &objs[i];
	}
	lb_lru_commit(lru, v, DEL_BATCH);
	for (r = 0; r < rounds; r++)
		lb_lru_commit(lru, v, DEL_BATCH);
	lb_lru_stats(lru, &st);
	ns = (double)st.path[LB_LRU_PATH_ADD].hold_ns_total /
	     (double)st.path[LB_LRU_PATH_ADD].acquisitions;
	empty_lru(lru);
	return ns;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Medians over the runs, each column on its own: on a shared machine a
 * preempted lock holder makes a few waits enormous, and the median run
 * keeps one such run from deciding the figure.
 */
static void median_row(struct row *out, const struct row *runs, int n)
{
	double col[11][MAX_REPS];
	int k, c;

	for (k = 0; k < n; k++) {
		col[0][k] = runs[k].hold_ns;
		col[1][k] = runs[k].wait_ms;
		col[2][k] = runs[k].short_ms;
		col[3][k] = (double)runs[k].waits_long;
		col[4][k] = (double)runs[k].acquisitions;
		col[5][k] = (double)runs[k].contentions;
		col[6][k] = (double)runs[k].holds_long;
		col[7][k] = runs[k].yield_ms;
		col[8][k] = runs[k].nivcsw;
		col[9][k] = runs[k].spun_ms;
		col[10][k] = runs[k].busy_ms;
	}
	for (c = 0; c < 11; c++)
		qsort(col[c], (size_t)n, sizeof(double), cmp_double);
	out->hold_ns = col[0][n / 2];
	out->wait_ms = col[1][n / 2];
	out->short_ms = col[2][n / 2];
	out->waits_long = (uint64_t)col[3][n / 2];
	out->acquisitions = (uint64_t)col[4][n / 2];
	out->contentions = (uint64_t)col[5][n / 2];
	out->holds_long = (uint64_t)col[6][n / 2];
	out->yield_ms = col[7][n / 2];
	out->nivcsw = col[8][n / 2];
	out->spun_ms = col[9][n / 2];
	out->busy_ms = col[10][n / 2];
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/*
 * Three wait columns (see the top of the file): every wait, less the
 * waiters' yields, and only the waits shorter than LB_LRU_HOLD_LONG_NS.
 */
static void print_json(const char *title, const struct row *r, int last)
{
	int k;

	printf("\"%s\":[", title);
	for (k = 0; k < 2; k++)
		printf("%s{\"variant\":\"%s\",\"hold_ns\":%.1f,"
		       "\"wait_ms\":%.3f,\"wait_yield_ms\":%.3f,"
		       "\"wait_less_yield_ms\":%.3f,\"wait_short_ms\":%.3f,"
		       "\"waits_long\":%llu,\"holds_long\":%llu,"
		       "\"acquisitions\":%llu,\"contentions\":%llu,"
		       "\"involuntary_switches\":%.0f,\"held_ms\":%.3f}",
		       k ? "," : "",
		       r[k].name, r[k].hold_ns, r[k].wait_ms, r[k].yield_ms,
		       r[k].spun_ms, r[k].short_ms,
		       (unsigned long long)r[k].waits_long,
		       (unsigned long long)r[k].holds_long,
		       (unsigned long long)r[k].acquisitions,
		       (unsigned long long)r[k].contentions, r[k].nivcsw,
		       r[k].busy_ms);
	printf("],\"%s_hold_ratio\":%.2f,\"%s_wait_ratio\":%.2f,"
	       "\"%s_wait_less_yield_ratio\":%.2f,"
	       "\"%s_wait_short_ratio\":%.2f,\"%s_held_ratio\":%.2f%s",
	       title, ratio(r[0].hold_ns, r[1].hold_ns), title,
	       ratio(r[0].wait_ms, r[1].wait_ms), title,
	       ratio(r[0].spun_ms, r[1].spun_ms), title,
	       ratio(r[0].short_ms, r[1].short_ms), title,
	       ratio(r[0].busy_ms, r[1].busy_ms), last ? "" : ",");
}

static void print_rows(const char *title, const struct row *r, int json,
		       int last)
{
	int k;

	if (json) {
		print_json(title, r, last);
		return;
	}
	printf("%s\n%-21s %8s %8s %9s %9s %8s %8s %6s %6s %7s %7s %8s\n",
	       title, "variant", "hold ns", "held ms", "wait ms", "yielded",
	       "less yld", "short ms", "long w", "long h", "acq k",
	       "contend", "invol cs");
	for (k = 0; k < 2; k++)
		printf("%-21s %8.1f %8.3f %9.3f %9.3f %8.3f %8.3f %6llu %6llu %7.0f %7llu %8.0f\n",
		       r[k].name, r[k].hold_ns, r[k].busy_ms, r[k].wait_ms,
		       r[k].yield_ms, r[k].spun_ms, r[k].short_ms,
		       (unsigned long long)r[k].waits_long,
		       (unsigned long long)r[k].holds_long,
		       (double)r[k].acquisitions / 1e3,
		       (unsigned long long)r[k].contentions, r[k].nivcsw);
	printf("hold ratio %.2fx (lock held, all paths: %.2fx); wait ratio "
	       "%.2fx, less yields %.2fx, waits < 100us %.2fx\n\n",
	       ratio(r[0].hold_ns, r[1].hold_ns),
	       ratio(r[0].busy_ms, r[1].busy_ms),
	       ratio(r[0].wait_ms, r[1].wait_ms),
	       ratio(r[0].spun_ms, r[1].spun_ms),
	       ratio(r[0].short_ms, r[1].short_ms));
}

int main(int argc, char **argv)
{
	struct row sec[2] = { { .name = "secondary inside" },
			      { .name = "secondary after" } };
	struct row add[2] = { { .name = "per-object insertion" },
			      { .name = "splice" } };
	static struct row sec_r[2][MAX_REPS], add_r[2][MAX_REPS];
	unsigned long rounds = 20000;
	int json = 0, i, r, reps = 5;
	double floor_ns, above[2];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--mutex"))
			lock_kind = LB_LOCK_MUTEX;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--json] [--mutex] [--threads N] [--rounds N] [--reps N]\n",
				argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS || rounds < 4 || nthreads < 1 ||
	    nthreads > MAX_THREADS) {
		fprintf(stderr, "reps: 1..%d, threads 1..%d, rounds >= 4\n",
			MAX_REPS, MAX_THREADS);
		return 2;
	}
	CDS_INIT_LIST_HEAD(&split_queue);
	if (lb_lock_init(&split_lock, lock_kind, "split_queue"))
		return 1;
	for (r = 0; r < reps; r++) {
		/* Alternate the order, so drift hits both variants alike. */
		int a = r & 1, b = !a;

		if (run_part1(&sec_r[a][r], a ? 0 : LB_LRU_PUTBACK_LOCKED,
			      rounds, 4096) ||
		    run_part1(&sec_r[b][r], b ? 0 : LB_LRU_PUTBACK_LOCKED,
			      rounds, 4096) ||
		    run_part2(&add_r[a][r], a ? 0 : LB_LRU_NO_SPLICE, rounds) ||
		    run_part2(&add_r[b][r], b ? 0 : LB_LRU_NO_SPLICE, rounds)) {
			fprintf(stderr, "setup failed\n");
			return 1;
		}
	}
	for (i = 0; i < 2; i++) {
		median_row(&sec[i], sec_r[i], reps);
		median_row(&add[i], add_r[i], reps);
	}
	if (json)
		printf("{\"bench\":\"lru_lock\",\"lock\":\"%s\",\"threads\":%d,"
		       "\"rounds\":%lu,\"reps\":%d,",
		       lock_kind == LB_LOCK_SPIN ? "spin" : "mutex", nthreads,
		       rounds, reps);
	else
		printf("LRU lock (%s), %d threads, %lu rounds each, median of %d runs\n\n",
		       lock_kind == LB_LOCK_SPIN ? "spin" : "mutex", nthreads,
		       rounds, reps);
	print_rows("secondary_work", sec, json, 0);
	print_rows("add_commit", add, json, 0);
	floor_ns = empty_hold_ns(rounds);
	above[0] = add[0].hold_ns > floor_ns ? add[0].hold_ns - floor_ns : 0;
	above[1] = add[1].hold_ns > floor_ns ? add[1].hold_ns - floor_ns : 0;
	if (json)
		printf("\"empty_hold_ns\":%.1f,\"add_commit_above_floor_ns\":[%.1f,%.1f],"
		       "\"add_commit_splice_over_per_object_above_floor\":%.3f}\n",
		       floor_ns, above[0], above[1], ratio(above[1], above[0]));
	else
		printf("empty hold (a commit with nothing to link, 1 thread): %.1f ns;\n"
		       "above it: per-object %.1f ns, splice %.1f ns, splice / per-object %.3f\n",
		       floor_ns, above[0], above[1], ratio(above[1], above[0]));
	return 0;
}
