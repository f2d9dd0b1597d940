// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pagecache: options, main and the report. See pagecache.h.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pagecache.h"

/* Average pages per entry (1..16, uniform): 8.5. */
#define PC_AVG_PAGES_X2 17u

static void usage(FILE *f)
{
	fprintf(f,
"usage: pagecache [options]\n"
"\n"
"A userspace page cache: lookups in a cds_lfht under RCU, pages from an\n"
"lb_pcp pool, new entries added to an lb_lru through weighted lb_cpubatch\n"
"batches, an eviction thread that isolates, checks referenced bits\n"
"(lb_refbits), settles and frees after a grace period. Workers read\n"
"zipf-distributed keys and insert on a miss. Prints hit ratio, ops/s,\n"
"eviction and settle outcomes, pool trips and each lock's statistics,\n"
"then empties the cache and checks that no page was freed while\n"
"referenced and every page is back in the pool (exit 1 if not).\n"
"\n"
"  --threads N      worker threads (default 4)\n"
"  --ops N          lookups per thread (default 200000)\n"
"  --entries N      capacity: the limit is N average entries of 8.5 pages\n"
"                   (default 4096)\n"
"  --keys N         key space (default 4 x entries)\n"
"  --skew X         zipf exponent, 0 = uniform (default 0.99)\n"
"  --page-size N    bytes per page, 64..65536 (default 4096)\n"
"  --baseline       every insert takes the LRU lock (LB_CPUBATCH_BASELINE)\n"
"  --check          one thread, inline eviction, and compare the hit ratio\n"
"                   with an exact-LRU model of the same keys (must be\n"
"                   within 5%%)\n"
"  --seed N         key stream seed (default 1)\n"
"  --json           one JSON object instead of the table\n"
"  --help           this text\n");
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_THREADS = 256, OPT_OPS, OPT_ENTRIES, OPT_KEYS, OPT_SKEW,
       OPT_PAGE_SIZE, OPT_BASELINE, OPT_CHECK, OPT_SEED, OPT_JSON, OPT_HELP };

static const struct option long_opts[] = {
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "ops", required_argument, NULL, OPT_OPS },
	{ "entries", required_argument, NULL, OPT_ENTRIES },
	{ "keys", required_argument, NULL, OPT_KEYS },
	{ "skew", required_argument, NULL, OPT_SKEW },
	{ "page-size", required_argument, NULL, OPT_PAGE_SIZE },
	{ "baseline", no_argument, NULL, OPT_BASELINE },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_skew(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s || !(v >= 0 && v <= 4))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_opt(int opt, const char *arg, struct pc_conf *c,
		     uint64_t *entries, uint64_t *keys)
{
	uint64_t v = 0;
	int err = 0;

	switch (opt) {
	case OPT_THREADS:
		err = parse_u64(arg, 1, 1024, &v);
		c->threads = (unsigned int)v;
		break;
	case OPT_OPS:
		err = parse_u64(arg, 1, UINT64_MAX / 1024, &c->ops);
		break;
	case OPT_ENTRIES:
		err = parse_u64(arg, 1, 1u << 24, entries);
		break;
	case OPT_KEYS:
		err = parse_u64(arg, 1, 1u << 26, keys);
		break;
	case OPT_SKEW:
		err = parse_skew(arg, &c->skew);
		break;
	case OPT_PAGE_SIZE:
		err = parse_u64(arg, 64, 65536, &v);
		c->page_size = (size_t)v;
		break;
	case OPT_BASELINE:
		c->baseline = true;
		break;
	case OPT_CHECK:
		c->check = true;
		break;
	case OPT_SEED:
		err = parse_u64(arg, 0, UINT64_MAX, &c->seed);
		break;
	case OPT_JSON:
		c->json = true;
		break;
	default:
		err = -EINVAL;
	}
	return err;
}

/* Return: 0, 1 for --help, -EINVAL on a bad command line. */
static int parse_args(int argc, char **argv, struct pc_conf *c)
{
	uint64_t entries = 4096, keys = 0;
	int opt, err = 0;

	*c = (struct pc_conf){ .threads = 4, .ops = 200000, .skew = 0.99,
			       .page_size = 4096, .seed = 1 };
	opterr = 0;
	while (!err && (opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		if (opt == OPT_HELP)
			return 1;
		err = parse_opt(opt, optarg, c, &entries, &keys);
	}
	if (err || optind < argc)
		return -EINVAL;
	if (c->check)
		c->threads = 1;
	c->keys = (uint32_t)(keys ? keys : entries * 4);
	c->limit_pages = entries * PC_AVG_PAGES_X2 / 2;
	if (c->limit_pages < PC_MAX_PAGES)
		c->limit_pages = PC_MAX_PAGES;
	c->progress = !c->json && isatty(STDERR_FILENO);
	return 0;
}

/* LRU lock acquisitions by every path, per inserted entry. */
static double lru_acq_per_insert(const struct pc_result *r)
{
	uint64_t acq = 0;
	unsigned int p;

	for (p = 0; p < LB_LRU_NR_PATHS; p++)
		acq += r->lru.path[p].acquisitions;
	return r->inserts ? (double)acq / (double)r->inserts : 0;
}

static bool model_ok(const struct pc_result *r)
{
	double d = r->hit_ratio - r->model_hit_ratio;

	return !r->model_run || (d < 0 ? -d : d) <= 0.05 * r->model_hit_ratio;
}

/* How far inserted entries landed from their exact LRU position. */
static void print_order(const struct pc_result *r)
{
	const struct pc_order_stats *o = &r->order;

	printf("\nLRU order error (%llu entries, in positions): worst early %llu, worst late %llu, mean |e| %.1f, half within %llu, 99%% within %llu\n",
	       (unsigned long long)o->entries,
	       (unsigned long long)o->worst_early,
	       (unsigned long long)o->worst_late,
	       o->entries ? (double)o->sum_abs / (double)o->entries : 0.0,
	       (unsigned long long)o->p50_within,
	       (unsigned long long)o->p99_within);
}

static void json_order(const struct pc_result *r)
{
	const struct pc_order_stats *o = &r->order;

	printf(",\"lru_order\":{\"entries\":%llu,\"worst_early\":%llu,"
	       "\"worst_late\":%llu,\"mean_abs\":%.3f,\"p50_within\":%llu,"
	       "\"p99_within\":%llu}", (unsigned long long)o->entries,
	       (unsigned long long)o->worst_early,
	       (unsigned long long)o->worst_late,
	       o->entries ? (double)o->sum_abs / (double)o->entries : 0.0,
	       (unsigned long long)o->p50_within,
	       (unsigned long long)o->p99_within);
}

/* The locks are gone by report time: their snapshots, perf-lock style. */
static void print_locks(const struct pc_result *r)
{
	const struct lb_lock_stats *st[2] = { &r->lru_lock, &r->pool_lock };
	static const char *const names[2] = { "lru", "pool" };
	unsigned int i;

	printf("%-8s %12s %12s %12s %14s %12s\n", "lock", "acquired",
	       "contended", "avg wait", "total wait", "max wait");
	for (i = 0; i < 2; i++)
		printf("%-8s %12llu %12llu %10lluns %12lluns %10lluns\n",
		       names[i], (unsigned long long)st[i]->acquisitions,
		       (unsigned long long)st[i]->contentions,
		       (unsigned long long)(st[i]->contentions ?
			st[i]->wait_ns_total / st[i]->contentions : 0),
		       (unsigned long long)st[i]->wait_ns_total,
		       (unsigned long long)st[i]->wait_ns_max);
}

static void print_table(const struct pc_conf *c, const struct pc_result *r)
{
	const struct pc_evict_stats *e = &r->ev;
	unsigned int p;

	printf("pagecache: %u threads, %u keys (zipf %.2f), limit %llu pages of %zu bytes, %s batches\n\n",
	       c->threads, c->keys, c->skew, (unsigned long long)c->limit_pages,
	       c->page_size, c->baseline ? "baseline" : "weighted");
	printf("ops %llu  hits %llu  hit ratio %.4f  ops/s %.0f  ops/cpu-s %.0f  inserts %llu  insert races %llu  pool empty %llu\n",
	       (unsigned long long)r->ops, (unsigned long long)r->hits,
	       r->hit_ratio, r->ops_per_sec, r->ops_per_cpu_sec,
	       (unsigned long long)r->inserts,
	       (unsigned long long)r->insert_races,
	       (unsigned long long)r->alloc_fail);
	printf("eviction: rounds %llu  isolated %llu  rotated %llu  evicted %llu (%llu pages)  refbits flushes %llu  rcu waits %llu\n",
	       (unsigned long long)e->rounds, (unsigned long long)e->isolated,
	       (unsigned long long)e->rotated, (unsigned long long)e->evicted,
	       (unsigned long long)e->evicted_pages,
	       (unsigned long long)e->refbits_flushes,
	       (unsigned long long)e->rcu_waits);
	printf("activation: %llu queued through op batches (%llu back-end lock holds on the op path)  deactivated %llu\n",
	       (unsigned long long)r->activations,
	       (unsigned long long)r->lru.path[LB_LRU_PATH_OP].acquisitions,
	       (unsigned long long)e->deactivated);
	printf("settle: SETTLED %llu  DRAINED %llu  BUSY %llu  errors %llu  freeze failed %llu\n",
	       (unsigned long long)e->settled, (unsigned long long)e->drained,
	       (unsigned long long)e->busy, (unsigned long long)e->settle_errors,
	       (unsigned long long)e->freeze_failed);
	printf("LRU lock by path:");
	for (p = 0; p < LB_LRU_NR_PATHS; p++)
		printf("  %s %llu", lb_lru_path_name(p),
		       (unsigned long long)r->lru.path[p].acquisitions);
	printf("  = %.4f per insert\n", lru_acq_per_insert(r));
	printf("batches: %llu back-end locks for %llu adds\n",
	       (unsigned long long)r->batch.backend_locks,
	       (unsigned long long)r->batch.total.adds);
	printf("pool: %llu pages, trips %llu (refills %llu, flushes %llu, drains %llu), free at exit %llu\n\n",
	       (unsigned long long)r->pool_pages,
	       (unsigned long long)r->pool_lock.acquisitions,
	       (unsigned long long)r->pool.total.refills,
	       (unsigned long long)r->pool.total.flushes,
	       (unsigned long long)(r->pool.total.decay_drains +
				    r->pool.total.drains),
	       (unsigned long long)r->pool_free_at_exit);
	print_locks(r);
	print_order(r);
	if (r->model_run)
		printf("\nexact-LRU model: hit ratio %.4f (cache %.4f, %s)\n",
		       r->model_hit_ratio, r->hit_ratio,
		       model_ok(r) ? "within 5%" : "NOT within 5%");
	printf("\nchecks: stale page reads %llu, entries %llu allocated / %llu freed, pool %s%s\n",
	       (unsigned long long)r->stale_reads,
	       (unsigned long long)r->entries_alloc,
	       (unsigned long long)r->entries_freed,
	       r->pool_free_at_exit == r->pool_pages ? "full" : "NOT full",
	       r->verified ? "" : "  VERIFY FAILED");
}

static void json_lock(const char *name, const struct lb_lock_stats *st)
{
	printf(",\"%s_lock\":{\"acquisitions\":%llu,\"contentions\":%llu,"
	       "\"wait_ns_total\":%llu,\"wait_ns_max\":%llu}", name,
	       (unsigned long long)st->acquisitions,
	       (unsigned long long)st->contentions,
	       (unsigned long long)st->wait_ns_total,
	       (unsigned long long)st->wait_ns_max);
}

static void print_json(const struct pc_conf *c, const struct pc_result *r)
{
	const struct pc_evict_stats *e = &r->ev;
	unsigned int p;

	printf("{\"threads\":%u,\"keys\":%u,\"skew\":%.3f,\"limit_pages\":%llu,"
	       "\"page_size\":%zu,\"mode\":\"%s\",\"ops\":%llu,\"hits\":%llu,"
	       "\"hit_ratio\":%.6f,\"ops_per_sec\":%.0f,"
	       "\"ops_per_cpu_sec\":%.0f,\"inserts\":%llu,"
	       "\"insert_races\":%llu,\"pool_empty\":%llu",
	       c->threads, c->keys, c->skew, (unsigned long long)c->limit_pages,
	       c->page_size, c->baseline ? "baseline" : "weighted",
	       (unsigned long long)r->ops, (unsigned long long)r->hits,
	       r->hit_ratio, r->ops_per_sec, r->ops_per_cpu_sec,
	       (unsigned long long)r->inserts,
	       (unsigned long long)r->insert_races,
	       (unsigned long long)r->alloc_fail);
	printf(",\"eviction\":{\"rounds\":%llu,\"isolated\":%llu,\"rotated\":%llu,"
	       "\"evicted\":%llu,\"evicted_pages\":%llu,\"refbits_flushes\":%llu,"
	       "\"rcu_waits\":%llu},"
	       "\"settle\":{\"settled\":%llu,\"drained\":%llu,\"busy\":%llu,"
	       "\"errors\":%llu,\"freeze_failed\":%llu}",
	       (unsigned long long)e->rounds, (unsigned long long)e->isolated,
	       (unsigned long long)e->rotated, (unsigned long long)e->evicted,
	       (unsigned long long)e->evicted_pages,
	       (unsigned long long)e->refbits_flushes,
	       (unsigned long long)e->rcu_waits,
	       (unsigned long long)e->settled, (unsigned long long)e->drained,
	       (unsigned long long)e->busy, (unsigned long long)e->settle_errors,
	       (unsigned long long)e->freeze_failed);
	printf(",\"activation\":{\"queued\":%llu,\"op_path_locks\":%llu,"
	       "\"deactivated\":%llu}",
	       (unsigned long long)r->activations,
	       (unsigned long long)r->lru.path[LB_LRU_PATH_OP].acquisitions,
	       (unsigned long long)e->deactivated);
	printf(",\"lru_paths\":{");
	for (p = 0; p < LB_LRU_NR_PATHS; p++)
		printf("%s\"%s\":%llu", p ? "," : "", lb_lru_path_name(p),
		       (unsigned long long)r->lru.path[p].acquisitions);
	printf("},\"lru_acquisitions_per_insert\":%.6f", lru_acq_per_insert(r));
	json_lock("lru", &r->lru_lock);
	json_lock("pool", &r->pool_lock);
	printf(",\"batch_backend_locks\":%llu,\"pool_refills\":%llu,"
	       "\"pool_flushes\":%llu,\"pool_pages\":%llu,"
	       "\"pool_free_at_exit\":%llu,\"stale_reads\":%llu,"
	       "\"entries_alloc\":%llu,\"entries_freed\":%llu",
	       (unsigned long long)r->batch.backend_locks,
	       (unsigned long long)r->pool.total.refills,
	       (unsigned long long)r->pool.total.flushes,
	       (unsigned long long)r->pool_pages,
	       (unsigned long long)r->pool_free_at_exit,
	       (unsigned long long)r->stale_reads,
	       (unsigned long long)r->entries_alloc,
	       (unsigned long long)r->entries_freed);
	json_order(r);
	if (r->model_run)
		printf(",\"model_hit_ratio\":%.6f,\"model_within_5pct\":%s",
		       r->model_hit_ratio, model_ok(r) ? "true" : "false");
	printf(",\"verified\":%s}\n", r->verified ? "true" : "false");
}

int main(int argc, char **argv)
{
	struct pc_conf conf;
	struct pc_result res;
	int err;

	err = parse_args(argc, argv, &conf);
	if (err) {
		if (err > 0) {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return 2;
	}
	urcu_memb_register_thread();
	err = pc_run(&conf, &res);
	urcu_memb_unregister_thread();
	if (err) {
		fprintf(stderr, "pagecache: %s\n", strerror(-err));
		return 1;
	}
	if (conf.json)
		print_json(&conf, &res);
	else
		print_table(&conf, &res);
	return res.verified && model_ok(&res) ? 0 : 1;
}
