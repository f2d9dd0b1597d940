// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * mc-loadgen's pieces that decide what its figures mean: the response
 * parser (fed in every possible split) and its check of GET answers against
 * the key-derived values, the latency histogram's percentiles, the Zipf key
 * choice against its exact distribution, and the loopback-only address
 * check.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "../../clients/memcached/bench/lg.h"

/* Feed @s to parser @p in pieces of at most @step bytes, as a socket
 * would deliver them, keeping the unconsumed tail as lg_run does. */
static struct lg_parse feed_split_into(struct lg_parse p, const char *s,
				       size_t step)
{
	char buf[1024];
	size_t have = 0, off = 0, len = strlen(s);

	cr_assert(lt(sz, len, sizeof(buf)));
	while (off < len || have) {
		size_t n = len - off < step ? len - off : step, used;

		memcpy(buf + have, s + off, n);
		off += n;
		have += n;
		used = lg_parse_feed(&p, buf, have);
		memmove(buf, buf + used, have - used);
		have -= used;
		if (n == 0 || p.bad)
			break;
	}
	return p;
}

static struct lg_parse feed_split(enum lg_kind kind, const char *s,
				  size_t step)
{
	struct lg_parse p = { .kind = kind };

	return feed_split_into(p, s, step);
}

static const char get_stream[] =
	"VALUE key:00000001 0 5\r\nhe\r\nl\r\n"	/* data holds a CRLF */
	"END\r\n"
	"END\r\n"
	"VALUE key:00000002 7 3 99\r\nEND\r\nEND\r\n"	/* data is "END" */
	"SERVER_ERROR out of memory\r\n";

Test(mc_loadgen, get_responses_any_split)
{
	size_t step;

	for (step = 1; step <= sizeof(get_stream); step++) {
		struct lg_parse p = feed_split(LG_GET, get_stream, step);

		cr_assert(eq(int, p.bad, 0), "split %zu", step);
		cr_assert(eq(u64, p.done, 4), "split %zu", step);
		cr_assert(eq(u64, p.hits, 2), "split %zu", step);
		cr_assert(eq(u64, p.misses, 1), "split %zu", step);
		cr_assert(eq(u64, p.errors, 1), "split %zu", step);
		cr_assert(eq(u64, p.skip, 0), "split %zu", step);
	}
}

Test(mc_loadgen, set_responses_any_split)
{
	static const char s[] = "STORED\r\nSTORED\r\nNOT_STORED\r\n"
				"SERVER_ERROR out of memory storing object\r\n"
				"STORED\r\n";
	size_t step;

	for (step = 1; step <= sizeof(s); step++) {
		struct lg_parse p = feed_split(LG_SET, s, step);

		cr_assert(eq(int, p.bad, 0), "split %zu", step);
		cr_assert(eq(u64, p.done, 5), "split %zu", step);
		cr_assert(eq(u64, p.errors, 2), "split %zu", step);
	}
}

Test(mc_loadgen, delete_responses_any_split)
{
	static const char s[] = "DELETED\r\nNOT_FOUND\r\nDELETED\r\n"
				"SERVER_ERROR out of memory\r\nNOT_FOUND\r\n";
	size_t step;

	for (step = 1; step <= sizeof(s); step++) {
		struct lg_parse p = feed_split(LG_DEL, s, step);

		cr_assert(eq(int, p.bad, 0), "split %zu", step);
		cr_assert(eq(u64, p.done, 5), "split %zu", step);
		cr_assert(eq(u64, p.deleted, 2), "split %zu", step);
		cr_assert(eq(u64, p.del_misses, 2), "split %zu", step);
		cr_assert(eq(u64, p.errors, 1), "split %zu", step);
	}
	cr_assert(eq(int, feed_split(LG_DEL, "STORED\r\n", 8).bad, 1));
	cr_assert(eq(int, feed_split(LG_DEL, "DELETED_\r\n", 8).bad, 1));
}

Test(mc_loadgen, value_of_a_key)
{
	char v[32] = { 0 };
	unsigned int len, lo = ~0u, hi = 0, id;

	/* The key's 8 digits and a '.', repeated and cut. */
	lg_value_fill(v, 42, 20);
	cr_assert(eq(str, v, "00000042.00000042.00"));
	lg_value_fill(v, 99999999, 11);
	cr_assert(eq(str, v, "99999999.99000042.00"));
	cr_assert(eq(u32, lg_value_len(64, 64, 7), 64));
	cr_assert(eq(u32, lg_value_len(64, 10, 7), 64));
	/* Lengths stay in range and reach both ends; neighbours differ. */
	for (id = 0; id < 10000; id++) {
		len = lg_value_len(100, 110, id);
		cr_assert(ge(u32, len, 100));
		cr_assert(le(u32, len, 110));
		lo = len < lo ? len : lo;
		hi = len > hi ? len : hi;
	}
	cr_assert(eq(u32, lo, 100));
	cr_assert(eq(u32, hi, 110));
	for (id = 0, len = 0; id < 100; id++)
		len += lg_value_len(100, 3000, id) !=
		       lg_value_len(100, 3000, id + 1);
	cr_assert(gt(u32, len, 90), "%u of 100 neighbours differ", len);
}

/*
 * GET answers checked against the keys asked for (in order) and their
 * values, 20 bytes each: one right hit, a miss, then one answer wrong in
 * each way, and one right hit with a CAS word.
 */
static const uint32_t check_want[] = { 42, 7, 42, 9, 5, 3, 6, 8 };
static const char check_stream[] =
	"VALUE key:00000042 0 20\r\n00000042.00000042.00\r\nEND\r\n"
	"END\r\n"
	"VALUE key:00000042 0 20\r\n00000042.00000043.00\r\nEND\r\n"
	"VALUE key:00000010 0 20\r\n00000010.00000010.00\r\nEND\r\n"
	"VALUE key:00000005 0 19\r\n00000005.00000005.0\r\nEND\r\n"
	"VALUE key:00000003 1 20\r\n00000003.00000003.00\r\nEND\r\n"
	"VALUE key:00000006 0 20\r\n00000006.00000006.00\r\n"
	"VALUE key:00000006 0 20\r\n00000006.00000006.00\r\nEND\r\n"
	"VALUE key:00000008 0 20 77\r\n00000008.00000008.00\r\nEND\r\n";

Test(mc_loadgen, get_answers_checked_any_split)
{
	struct lg_parse p0 = { .kind = LG_GET, .vmin = 20, .vmax = 20,
			       .want = check_want, .nwant = 8 };
	size_t step;

	for (step = 1; step <= sizeof(check_stream); step++) {
		struct lg_parse p = feed_split_into(p0, check_stream, step);

		cr_assert(eq(int, p.bad, 0), "split %zu", step);
		cr_assert(eq(u64, p.done, 8), "split %zu", step);
		cr_assert(eq(u64, p.hits, 7), "split %zu", step);
		cr_assert(eq(u64, p.misses, 1), "split %zu", step);
		cr_assert(eq(u64, p.wrong, 5), "split %zu", step);
		cr_assert(eq(str, (char *)p.wrong_why,
			     "bytes never set for the key"), "split %zu", step);
		cr_assert(eq(u32, p.wrong_key, 42), "split %zu", step);
	}
	/* Each wrong answer alone names its own reason. */
	p0.want = check_want + 3;
	p0.nwant = 1;
	cr_assert(eq(str, (char *)feed_split_into(p0,
		"VALUE key:00000010 0 20\r\n00000010.00000010.00\r\nEND\r\n",
		7).wrong_why, "not the key asked for"));
	p0.want = check_want + 4;
	cr_assert(eq(str, (char *)feed_split_into(p0,
		"VALUE key:00000005 0 19\r\n00000005.00000005.0\r\nEND\r\n",
		7).wrong_why, "a length never set for the key"));
	p0.want = check_want + 5;
	cr_assert(eq(str, (char *)feed_split_into(p0,
		"VALUE key:00000003 1 20\r\n00000003.00000003.00\r\nEND\r\n",
		7).wrong_why, "flags never set"));
	p0.want = NULL;
	cr_assert(eq(str, (char *)feed_split_into(p0,
		"VALUE other 0 20\r\n00000003.00000003.00\r\nEND\r\n",
		7).wrong_why, "a key mc-loadgen never sends"));
	/* Unchecked (vmin 0), the same stream has nothing wrong. */
	p0.vmin = 0;
	p0.want = check_want;
	p0.nwant = 8;
	cr_assert(eq(u64, feed_split_into(p0, check_stream, 5).wrong, 0));
}

Test(mc_loadgen, value_not_followed_by_crlf_is_refused)
{
	struct lg_parse p = { .kind = LG_GET, .vmin = 20, .vmax = 20 };

	p = feed_split_into(p, "VALUE key:00000001 0 20\r\n"
			    "00000001.00000001.00XY\r\nEND\r\n", 3);
	cr_assert(eq(int, p.bad, 1));
}

Test(mc_loadgen, incomplete_line_is_left_unconsumed)
{
	struct lg_parse p = { .kind = LG_SET };

	cr_assert(eq(sz, lg_parse_feed(&p, "STORED\r\nSTO", 11), 8));
	cr_assert(eq(u64, p.done, 1));
	cr_assert(eq(sz, lg_parse_feed(&p, "STORED\r", 7), 0));
	cr_assert(eq(u64, p.done, 1));
}

Test(mc_loadgen, garbage_is_refused)
{
	struct lg_parse p = { .kind = LG_GET };

	lg_parse_feed(&p, "STORED\r\n", 8);	/* not a GET reply */
	cr_assert(eq(int, p.bad, 1));
	memset(&p, 0, sizeof(p));
	p.kind = LG_SET;
	lg_parse_feed(&p, "STORED\n", 7);	/* LF without CR */
	cr_assert(eq(int, p.bad, 1));
	memset(&p, 0, sizeof(p));
	p.kind = LG_GET;
	lg_parse_feed(&p, "VALUE k 0 x\r\n", 13);	/* no byte count */
	cr_assert(eq(int, p.bad, 1));
	cr_assert(eq(u64, p.done, 0));
}

Test(mc_loadgen, histogram_percentiles_within_a_bucket)
{
	static struct lg_hist h;
	uint64_t v;

	/* 1..10000 us, once each: p50 = 5000 us, p99 = 9900 us. */
	for (v = 1; v <= 10000; v++)
		lg_hist_add(&h, v * 1000);
	cr_assert(eq(u64, h.n, 10000));
	cr_assert(eq(u64, h.max, 10000000));
	v = lg_hist_pct(&h, 50);
	cr_assert(v <= 5001000 && v >= 5001000 - 5001000 / 16, "p50 %lu",
		  (unsigned long)v);
	v = lg_hist_pct(&h, 99);
	cr_assert(v <= 9901000 && v >= 9901000 - 9901000 / 16, "p99 %lu",
		  (unsigned long)v);
	cr_assert(le(u64, lg_hist_pct(&h, 100), h.max));
	/* Small values are exact. */
	memset(&h, 0, sizeof(h));
	lg_hist_add(&h, 3);
	cr_assert(eq(u64, lg_hist_pct(&h, 50), 3));
}

Test(mc_loadgen, histogram_merge_adds_counts)
{
	static struct lg_hist a, b;

	lg_hist_add(&a, 100);
	lg_hist_add(&b, 200);
	lg_hist_add(&b, 5000);
	lg_hist_merge(&a, &b);
	cr_assert(eq(u64, a.n, 3));
	cr_assert(eq(u64, a.max, 5000));
	cr_assert(le(u64, lg_hist_pct(&a, 0), 100));
}

Test(mc_loadgen, uniform_keys_stay_in_range)
{
	struct lg_keys k;
	struct lb_rng r;
	unsigned int i, seen[10] = { 0 };

	cr_assert(eq(int, lg_keys_init(&k, 10, LG_UNIFORM, 0), 0));
	lb_rng_seed(&r, 7);
	for (i = 0; i < 100000; i++) {
		uint32_t id = lg_keys_pick(&k, &r);

		cr_assert(lt(u32, id, 10));
		seen[id]++;
	}
	for (i = 0; i < 10; i++)	/* 10000 each; 5 sigma is 475 */
		cr_assert(seen[i] > 9500 && seen[i] < 10500, "key %u: %u", i,
			  seen[i]);
	lg_keys_fini(&k);
}

/* Zipf(0.99) over 1000 keys: each rank's frequency against 1/(r+1)^theta
 * normalised, over 10^6 draws (binomial sigma; 5 sigma bound). */
Test(mc_loadgen, zipf_keys_follow_the_distribution)
{
	const uint32_t n = 1000;
	const double theta = 0.99;
	unsigned int *seen = calloc(n, sizeof(*seen)), i, draws = 1000000;
	double sum = 0;
	struct lg_keys k;
	struct lb_rng r;

	cr_assert(not(eq(ptr, seen, NULL)));
	cr_assert(eq(int, lg_keys_init(&k, n, LG_ZIPF, theta), 0));
	lb_rng_seed(&r, 11);
	for (i = 0; i < draws; i++) {
		uint32_t id = lg_keys_pick(&k, &r);

		cr_assert(lt(u32, id, n));
		seen[id]++;
	}
	for (i = 0; i < n; i++)
		sum += pow(i + 1.0, -theta);
	for (i = 0; i < 20; i++) {
		double p = pow(i + 1.0, -theta) / sum, want = p * draws;
		double sigma = sqrt(draws * p * (1 - p));

		cr_assert(fabs(seen[i] - want) < 5 * sigma,
			  "rank %u: %u draws, expected %.0f", i, seen[i], want);
	}
	cr_assert(gt(u32, seen[0], 10 * seen[99]), "rank 0 is not hot");
	lg_keys_fini(&k);
	free(seen);
}

Test(mc_loadgen, keys_bad_parameters)
{
	struct lg_keys k;

	cr_assert(eq(int, lg_keys_init(&k, 0, LG_UNIFORM, 0), -EINVAL));
	cr_assert(eq(int, lg_keys_init(&k, 10, LG_ZIPF, 0), -EINVAL));
	cr_assert(eq(int, lg_keys_init(&k, 10, LG_ZIPF, NAN), -EINVAL));
}

Test(mc_loadgen, loopback_only)
{
	cr_assert(eq(int, lg_check_host("127.0.0.1"), 0));
	cr_assert(eq(int, lg_check_host("127.1.2.3"), 0));
	cr_assert(eq(int, lg_check_host("10.0.0.1"), -EINVAL));
	cr_assert(eq(int, lg_check_host("0.0.0.0"), -EINVAL));
	cr_assert(eq(int, lg_check_host("localhost"), -EINVAL));
	cr_assert(eq(int, lg_check_host(NULL), -EINVAL));
}
