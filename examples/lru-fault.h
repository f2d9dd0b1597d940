/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * lru-fault: a userspace replay of the fault / MADV_DONTNEED
 * microbenchmark of "mm: allow smaller large folios to use lru_cache".
 *
 * Every thread repeatedly maps M bytes as objects of S bytes (the folios
 * of one fault pass), hands each object to one shared LRU list through an
 * lb_cpubatch, then unmaps them all (MADV_DONTNEED), which takes the objects
 * off the list again in batches of up to 31 under the list lock.
 *
 * Files: lru-fault.c (options, main), lru-fault-lru.c (the LRU back-end:
 * an lb_lru, whose statistics keep the per-path lock accounting),
 * lru-fault-limit.c (limit mode, the floor), lru-fault-run.c (one timed
 * run: workers, object pools, verification), lru-fault-report.c (table
 * and JSON).
 */
#ifndef LRU_FAULT_H
#define LRU_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/list.h>

#include <lockbatch/lockbatch.h>

/* The base unit of weight: one page. An object of S bytes weighs S / 4K. */
#define LF_UNIT 4096u

/* Objects unmapped per lock hold, like folios_put_refs() (PAGEVEC_SIZE). */
#define LF_RELEASE_BATCH 31u

enum lf_mode {
	LF_BASELINE,	/* LB_CPUBATCH_BASELINE: one lock hold per add */
	LF_BYPASS,	/* LB_CPUBATCH_BYPASS_LARGE: Linux 6.12 */
	LF_WEIGHTED,	/* LB_CPUBATCH_WEIGHTED: the seed series */
	/*
	 * The floor: a plain list per thread; no lock, no atomic instruction,
	 * no clock read per object (lru-fault-limit.c).
	 */
	LF_LIMIT,
	LF_OWN_LRU,	/* an lb_lru per thread: never contended, no batch */
	LF_NR_MODES,
};

/* The modes the program runs when --modes is not given. */
#define LF_DEFAULT_MODES 4

/* Whether @mode adds through an lb_cpubatch (the others have none). */
static inline bool lf_mode_batched(enum lf_mode mode)
{
	return mode != LF_LIMIT && mode != LF_OWN_LRU;
}

enum lf_path {
	LF_PATH_ADD,		/* lb_cpubatch flushes committing added objects */
	LF_PATH_RELEASE,	/* unmapping: objects leaving the list */
	LF_NR_PATHS,
};

/* The lb_lru path each of ours is: add is add, release is lb_lru_del(). */
#define LF_LB_PATH(p) ((p) == LF_PATH_ADD ? LB_LRU_PATH_ADD : LB_LRU_PATH_DEL)

/*
 * One object (a folio). Its references: one held by the mapping thread
 * from populate to unmap, one held by an lb_cpubatch batch while the object
 * waits there (get/put). Whoever drops the last one queues the object for
 * release from the list; once off the list it is marked free and its
 * owner may map it again.
 */
struct lf_obj {
	struct lb_lru_node lru;		/* list linkage and batch tracking */
	uint32_t ref;			/* atomic */
	uint32_t free;			/* atomic; 1: owner may reuse it */
	uint64_t adds;			/* owner thread only */
	uint64_t commits;		/* by the flusher, before its put */
	uint64_t releases;		/* by the releaser, after lb_lru_del() */
};

/* Lock statistics attributed to one path (from lb_lru's per-path counters). */
struct lf_path_stats {
	uint64_t acquisitions;
	uint64_t contentions;
	uint64_t wait_ns_total;
	uint64_t wait_ns_max;
	uint64_t hold_ns_total;		/* holds shorter than LB_LRU_HOLD_LONG_NS */
	uint64_t holds_long;		/* holds where the holder was descheduled */
};

/*
 * The LRU back-end: an lb_lru (shared, or one per thread in own-lru mode,
 * where its lock is never contended). lb_lru attributes every acquisition
 * of its lock to the path that made it, which is the per-path accounting
 * this program reports.
 */
struct lf_lru {
	struct lb_lru *lb;
};

int lf_lru_init(struct lf_lru *lru, enum lb_lock_kind kind, bool splice);
/* "mutex", "spin", "ticket", "mcs", "clh"; NULL for an unknown kind. */
const char *lf_lock_name(enum lb_lock_kind kind);
void lf_lru_destroy(struct lf_lru *lru);
void lf_lru_commit(struct lf_lru *lru, void *const *objs, unsigned int n);
void lf_lru_release(struct lf_lru *lru, struct lf_obj **objs, unsigned int n);
int lf_lru_cpubatch_conf(struct lf_lru *lru, struct lb_cpubatch_conf *pconf);
/* A snapshot of the LRU: lock use by path, misuse caught, objects listed. */
struct lf_lru_state {
	struct lf_path_stats path[LF_NR_PATHS];
	uint64_t errors;
	uint64_t nr_listed;
	uint64_t snapshots;	/* earlier snapshots (lb_lru_stats() calls) */
};

void lf_lru_state(struct lf_lru *lru, struct lf_lru_state *out);

/*
 * The calling thread's unmap batch: objects whose last reference it
 * dropped, waiting to leave the list. Every thread that may drop a last
 * reference (workers, and whoever flushes or destroys the lb_cpubatch) attaches
 * one first and flushes it before it stops.
 */
struct lf_relq {
	struct lf_lru *lru;
	unsigned int nr;
	struct lf_obj *objs[LF_RELEASE_BATCH];
};

void lf_relq_attach(struct lf_relq *q, struct lf_lru *lru);
void lf_relq_flush(struct lf_relq *q);
void lf_relq_detach(struct lf_relq *q);
void lf_obj_put(struct lf_obj *obj);

/*
 * Limit mode's state, one per thread and touched by that thread alone:
 * its pool, its list (linked through the objects' lb_lru_node links,
 * which no lb_lru owns in this mode) and the ring cursor.
 */
struct lf_limit {
	struct cds_list_head head;
	struct lf_obj *pool;
	unsigned int nr_pool;
	unsigned int cursor;
	uint32_t weight;
	uint64_t nr_listed;
};

void lf_limit_init(struct lf_limit *l, struct lf_obj *pool,
		   unsigned int nr_pool, uint32_t weight);
void lf_limit_populate(struct lf_limit *l, struct lf_obj **live,
		       unsigned int nr);
void lf_limit_unmap(struct lf_limit *l, struct lf_obj **live, unsigned int nr);

/* What the command line asks for. */
struct lf_conf {
	unsigned int threads;
	size_t mem;			/* bytes per thread */
	unsigned int loops;
	enum lb_lock_kind lock_kind;
	bool json;
	const char *plot;		/* --plot PREFIX, or NULL */
	unsigned int nr_sizes;
	size_t sizes[16];
	unsigned int nr_modes;
	enum lf_mode modes[LF_NR_MODES];
	unsigned int split_every;	/* 0: no splits */
	bool no_splice;			/* lb_lru commits one object at a time */
	bool causes;			/* --causes: split limit/w */
};

/*
 * --split-every: what the settler thread saw (lru-fault-split.c). Slots
 * are counted per settle from the lb_cpubatch's drain_obj flush counter, which
 * only the settler moves in this program.
 */
struct lf_split_stats {
	uint64_t settles;
	uint64_t outcome[3];		/* by LB_SETTLED.. LB_BUSY - LB_SETTLED */
	uint64_t slots[3];		/* slots flushed by settles of each outcome */
	uint64_t slots_max;		/* most slots one settle flushed */
	uint64_t errors;		/* settles returning an errno */
	uint64_t drain_all_passes;	/* drain_all passes in the run: 0 */
};

/* What one (size, mode) run measured. */
struct lf_result {
	size_t size;
	enum lf_mode mode;
	unsigned int threads;
	unsigned int loops;
	size_t mem;
	enum lb_lock_kind lock_kind;
	unsigned int nr_slots;
	enum lb_cpu_src cpu_src;
	uint64_t objects;		/* objects added (== released) */
	uint64_t elapsed_ns;
	double ops_per_sec;		/* (added + released) / s */
	uint64_t cpu_ns;		/* CPU time of all threads */
	double ops_per_cpu_sec;		/* (added + released) / CPU s */
	bool splice;			/* lb_lru's splice commit */
	struct lf_path_stats path[LF_NR_PATHS];
	uint64_t pool_stalls;
	bool verified;
	unsigned int split_every;	/* 0: no splits in this run */
	struct lf_split_stats split;
};

struct lf_run;
struct lf_worker;

/*
 * Per-object hook point, run by the populating thread right after each
 * add (NULL: none). That thread holds the mapping's reference until its
 * unmap pass, so @obj stays valid here. A hook that hands @obj to another
 * thread must take a reference first (ck_pr_inc_32(&obj->ref)) and drop it
 * with lf_obj_put() from a thread with an attached lf_relq. --split-every uses it to hand
 * every N-th object to a settler thread, as a split would.
 *
 * start runs once the lb_cpubatch exists and before the workers start;
 * unmapping runs in each worker before it drops its mapping references;
 * stop runs after the workers joined, before verification, and may fill
 * its part of @res. All optional. No hook runs in limit or own-lru mode:
 * there is no lb_cpubatch.
 */
struct lf_hooks {
	void (*added)(struct lf_run *run, struct lf_obj *obj, void *arg);
	int (*start)(struct lf_run *run, void *arg);
	void (*unmapping)(struct lf_run *run, void *arg);
	void (*stop)(struct lf_run *run, struct lf_result *res, void *arg);
	void *arg;
};

/* The run's lb_cpubatch (NULL in limit and own-lru mode) and its shared list. */
struct lb_cpubatch *lf_run_cpubatch(struct lf_run *run);
struct lf_lru *lf_run_lru(struct lf_run *run);

/* lru-fault-split.c: the --split-every hooks; @ctx lives across one run. */
struct lf_split;
struct lf_split *lf_split_new(unsigned int every);
void lf_split_free(struct lf_split *sp);
void lf_split_hooks(struct lf_split *sp, struct lf_hooks *hooks);

int lf_run(const struct lf_conf *conf, size_t size, enum lf_mode mode,
	   const struct lf_hooks *hooks, struct lf_result *res);

/*
 * --causes: limit/w at N threads split, in CPU ns per op (added or
 * released object), into what adds up to the gap between the two modes:
 * gap = fast_path + hold_growth + sharing_rest.
 */
struct lf_causes {
	bool valid;
	size_t size;
	unsigned int threads;
	double limit_vs_w_ops;		/* limit/w, ops/s (wall) */
	double limit_vs_w_cpu;		/* limit/w, ops/cpu-s */
	double gap_ns;			/* cpu ns/op: w(N) - limit(N) */
	double fast_path_ns;		/* w(1) - limit(1): nothing shared */
	double hold_ns_n;		/* w(N): list lock held, per op */
	double hold_ns_1;		/* w(1): likewise */
	double hold_growth_ns;		/* hold_ns_n - hold_ns_1 */
	double sharing_rest_ns;		/* the rest of w's growth, N vs 1,
					 * less limit's own (machine) growth */
};

void lf_causes_split(const struct lf_result *w, const struct lf_result *l,
		     const struct lf_result *w1, const struct lf_result *l1,
		     struct lf_causes *out);
/* One entry per size; entries not valid are skipped. */
void lf_causes_table(const struct lf_causes *c, unsigned int nr);
void lf_causes_json(const struct lf_causes *c, unsigned int nr);

const char *lf_mode_name(enum lf_mode mode);
void lf_report_table(const struct lf_conf *conf,
		     const struct lf_result *res, unsigned int nr,
		     const struct lf_causes *causes);
void lf_report_json(const struct lf_result *res, unsigned int nr,
		    const struct lf_causes *causes, unsigned int nr_causes);
/* PREFIX-ops.png and PREFIX-locks.png from the runs (lru-fault-plot.c). */
int lf_plot(const struct lf_conf *c, const struct lf_result *res,
	    unsigned int nr, const char *prefix);

#endif /* LRU_FAULT_H */
