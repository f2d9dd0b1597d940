/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* One load's result: a table for people, or one JSON object. */
#include "lg.h"

static const char *lg_skew_name(const struct lg_conf *c)
{
	return c->skew == LG_ZIPF ? "zipf" : "uniform";
}

void lg_result_print(FILE *f, const struct lg_conf *c,
		     const struct lg_result *r)
{
	unsigned int i;
	double lookups = (double)(r->hits + r->misses);

	fprintf(f, "mc-loadgen: %u SET + %u GET + %u DELETE connections, "
		   "pipeline %u, %u keys (%s", c->set_conns, c->get_conns,
		c->del_conns, c->pipeline, c->keys, lg_skew_name(c));
	if (c->skew == LG_ZIPF)
		fprintf(f, " %.2f", c->theta);
	if (c->value_max > c->value_size)
		fprintf(f, "), %u..%u-byte values", c->value_size, c->value_max);
	else
		fprintf(f, "), %u-byte values", c->value_size);
	fprintf(f, ", %u threads, %.2f s measured\n", c->threads, r->seconds);
	fprintf(f, "  ops/s %.0f  (set %.0f, get %.0f, delete %.0f), get hit "
		   "ratio %.3f, errors %llu\n", r->ops_s,
		(double)r->sets / r->seconds, (double)r->gets / r->seconds,
		(double)r->dels / r->seconds,
		lookups > 0 ? (double)r->hits / lookups : 0,
		(unsigned long long)r->errors);
	if (r->dels)
		fprintf(f, "  deletes: %llu DELETED, %llu NOT_FOUND\n",
			(unsigned long long)r->deleted,
			(unsigned long long)r->del_misses);
	fprintf(f, "  wrong GET answers (whole run): %llu",
		(unsigned long long)r->wrong);
	if (r->wrong)
		fprintf(f, " (one: key:%08u, %s)", r->wrong_key, r->wrong_why);
	fprintf(f, "\n");
	fprintf(f, "  latency us: p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  "
		   "max %.1f (pipeline write to response read)\n",
		r->p50_ns / 1e3, r->p90_ns / 1e3, r->p99_ns / 1e3,
		r->p999_ns / 1e3, r->max_ns / 1e3);
	if (!r->have_server)
		return;
	fprintf(f, "  server: %.0f requests, %.3f us CPU per request "
		   "(user %.3f, system %.3f), %.0f evictions\n",
		r->srv_requests, r->srv_cpu_us_per_req, r->srv_user_us_per_req,
		r->srv_sys_us_per_req, r->srv_evictions);
	if (!r->lblock_enabled) {
		fprintf(f, "  LRU lock counts: off (start memcached with patch "
			   "0001 and -o lru_lock_stats)\n");
		return;
	}
	fprintf(f, "  LRU lock per request:%-4s %10s %10s %10s\n", "",
		"acquired", "contended", "wait ns");
	for (i = 0; i < LG_PATHS; i++)
		fprintf(f, "    %-22s %10.4f %10.4f %10.2f\n", lg_path_names[i],
			r->acq_per_req[i], r->contended_per_req[i],
			r->wait_ns_per_req[i]);
}

void lg_result_json(FILE *f, const struct lg_conf *c,
		    const struct lg_result *r)
{
	unsigned int i;

	fprintf(f, "{\"set_conns\":%u,\"get_conns\":%u,\"del_conns\":%u,"
		   "\"pipeline\":%u,\"keys\":%u,\"value_size\":%u,"
		   "\"value_max\":%u,\"skew\":\"%s\","
		   "\"theta\":%.3f,\"threads\":%u,\"seconds\":%.4f,"
		   "\"ops_s\":%.1f,\"sets\":%llu,\"gets\":%llu,\"hits\":%llu,"
		   "\"misses\":%llu,\"errors\":%llu,\"dels\":%llu,"
		   "\"deleted\":%llu,\"del_misses\":%llu,\"wrong\":%llu,"
		   "\"latency_ns\":{\"p50\":%llu,"
		   "\"p90\":%llu,\"p99\":%llu,\"p999\":%llu,\"max\":%llu}",
		c->set_conns, c->get_conns, c->del_conns, c->pipeline, c->keys,
		c->value_size, c->value_max ? c->value_max : c->value_size,
		lg_skew_name(c), c->theta, c->threads,
		r->seconds, r->ops_s, (unsigned long long)r->sets,
		(unsigned long long)r->gets, (unsigned long long)r->hits,
		(unsigned long long)r->misses, (unsigned long long)r->errors,
		(unsigned long long)r->dels, (unsigned long long)r->deleted,
		(unsigned long long)r->del_misses, (unsigned long long)r->wrong,
		(unsigned long long)r->p50_ns, (unsigned long long)r->p90_ns,
		(unsigned long long)r->p99_ns, (unsigned long long)r->p999_ns,
		(unsigned long long)r->max_ns);
	if (r->have_server) {
		fprintf(f, ",\"server\":{\"requests\":%.0f,"
			   "\"cpu_us_per_req\":%.5f,\"user_us_per_req\":%.5f,"
			   "\"sys_us_per_req\":%.5f,\"evictions\":%.0f,"
			   "\"lblock_enabled\":%d,\"per_req\":{",
			r->srv_requests, r->srv_cpu_us_per_req,
			r->srv_user_us_per_req, r->srv_sys_us_per_req,
			r->srv_evictions, r->lblock_enabled);
		for (i = 0; i < LG_PATHS; i++)
			fprintf(f, "%s\"%s\":{\"acquired\":%.6f,"
				   "\"contended\":%.6f,\"wait_ns\":%.4f}",
				i ? "," : "", lg_path_names[i],
				r->acq_per_req[i], r->contended_per_req[i],
				r->wait_ns_per_req[i]);
		fprintf(f, "}}");
	}
	fprintf(f, "}\n");
}
