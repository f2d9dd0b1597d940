// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The table and JSON printers of lb_cpubatch and lb_pcp: every figure
 * they print is the one lb_*_stats() returns, every slot appears in the
 * JSON, only active slots in the table, and bad input writes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <lockbatch/lockbatch.h>
#include "../common/backend.h"

static int cur_cpu;
static int cpu_of(void *arg)
{
	(void)arg;
	return cur_cpu;
}

/* Output of @fn(@f, @obj) in a malloc'd string; *@ret its return value. */
#define CAPTURE(fn, obj, ret)						\
	({								\
		char *buf_ = NULL;					\
		size_t len_ = 0;					\
		FILE *f_ = open_memstream(&buf_, &len_);		\
		cr_assert_not_null(f_);					\
		*(ret) = fn(f_, obj);					\
		fclose(f_);						\
		buf_;							\
	})

static unsigned int count_of(const char *s, const char *needle)
{
	unsigned int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

static void assert_balanced(const char *json)
{
	int depth = 0;

	for (; *json; json++) {
		depth += *json == '{' || *json == '[';
		depth -= *json == '}' || *json == ']';
		cr_assert_geq(depth, 0);
	}
	cr_assert_eq(depth, 0);
}

/* Four slots of at most 4 objects over the common back-end fixture. */
static struct lb_cpubatch *new_cpubatch(void)
{
	cr_assert_eq(backend_setup_ops(4, LB_CPUBATCH_WEIGHTED, 4, 0,
				       &backend_ops), 0);
	return backend_fixture.pc;
}

Test(report, cpubatch_table_and_json_match_stats)
{
	static struct test_obj objs[15];
	struct lb_cpubatch *pc = new_cpubatch();
	struct lb_cpubatch_stats st;
	char want[128], *out;
	int ret;

	for (int i = 0; i < 15; i++) {
		backend_obj_init(&objs[i], (unsigned int)i);
		cr_assert_geq(backend_add(&objs[i], i < 10 ? 1 : 3, 1), 0);
	}
	cr_assert_eq(lb_cpubatch_stats(pc, &st, NULL, 0), 4);

	out = CAPTURE(lb_cpubatch_report, pc, &ret);
	cr_assert_eq(ret, 0);
	/* Slots 1 and 3 and the total; slots 0 and 2 saw nothing. */
	cr_assert_eq(count_of(out, "\n       1 "), 1, "%s", out);
	cr_assert_eq(count_of(out, "\n       3 "), 1, "%s", out);
	cr_assert_eq(count_of(out, "\n       0 "), 0, "%s", out);
	snprintf(want, sizeof(want), "   total %12llu",
		 (unsigned long long)st.total.adds);
	cr_assert_not_null(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "back-end lock holds %llu",
		 (unsigned long long)st.backend_locks);
	cr_assert_not_null(strstr(out, want), "%s", out);
	free(out);

	out = CAPTURE(lb_cpubatch_report_json, pc, &ret);
	cr_assert_eq(ret, 0);
	assert_balanced(out);
	cr_assert_eq(count_of(out, "{\"adds\":"), 1 + 4, "%s", out);	/* total + slots */
	snprintf(want, sizeof(want), "\"total\":{\"adds\":15,\"weight_added\":15,");
	cr_assert_not_null(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "\"nr_cached\":%llu",
		 (unsigned long long)st.total.nr_cached);
	cr_assert_not_null(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "\"full\":%llu",
		 (unsigned long long)st.total.flushes[LB_FLUSH_FULL]);
	cr_assert_not_null(strstr(out, want), "%s", out);
	free(out);

	cr_assert_eq(lb_cpubatch_destroy(pc), 0);
	backend_fixture.pc = NULL;
	cr_assert_eq(backend_fixture.commits, 15);
	cr_assert_eq(backend_teardown(), 0);
}

Test(report, cpubatch_bad_input_writes_nothing)
{
	struct lb_cpubatch *pc = new_cpubatch();
	FILE *ro = fopen("/dev/null", "r");
	char *out;
	int ret;

	cr_assert_eq(lb_cpubatch_report(NULL, pc), -EINVAL);
	cr_assert_eq(lb_cpubatch_report_json(NULL, pc), -EINVAL);
	out = CAPTURE(lb_cpubatch_report, (struct lb_cpubatch *)NULL, &ret);
	cr_assert_eq(ret, -EINVAL);
	cr_assert_str_empty(out);
	free(out);
	out = CAPTURE(lb_cpubatch_report_json, (struct lb_cpubatch *)NULL, &ret);
	cr_assert_eq(ret, -EINVAL);
	cr_assert_str_empty(out);
	free(out);
	/* A stream that cannot be written: the error is reported. */
	cr_assert_not_null(ro);
	cr_assert_eq(lb_cpubatch_report(ro, pc), -EIO);
	cr_assert_eq(lb_cpubatch_report_json(ro, pc), -EIO);
	fclose(ro);
	cr_assert_eq(lb_cpubatch_destroy(pc), 0);
	backend_fixture.pc = NULL;
	cr_assert_eq(backend_teardown(), 0);
}

static struct lb_freelist *fl;

static struct lb_pcp *new_pcp(void)
{
	struct lb_freelist_conf fc = { .obj_size = 64, .arena_size = 1u << 20 };
	struct lb_pcp_conf c = { .nr_slots = 3, .batch = 4, .high_min = 8,
				 .high_max = 32, .tuner = LB_PCP_TUNE_LINUX,
				 .cpu_fn = cpu_of };
	struct lb_pcp *p;

	cr_assert_eq(lb_freelist_create(&fl, &fc), 0);
	cr_assert_eq(lb_freelist_pcp_backend(fl, &c.backend), 0);
	cr_assert_eq(lb_pcp_create(&p, &c), 0);
	return p;
}

Test(report, pcp_table_and_json_match_stats)
{
	struct lb_pcp *p = new_pcp();
	struct lb_pcp_stats st;
	void *obj[20];
	char want[160], *out;
	int ret;

	cur_cpu = 2;
	for (int i = 0; i < 20; i++)
		cr_assert_eq(lb_pcp_alloc(p, 0, &obj[i]), 0);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(lb_pcp_free(p, obj[i], 0), 0);
	lb_pcp_decay(p);
	cr_assert_eq(lb_pcp_stats(p, &st, NULL, 0), 3);

	out = CAPTURE(lb_pcp_report, p, &ret);
	cr_assert_eq(ret, 0);
	cr_assert_eq(count_of(out, "\n       2 "), 1, "%s", out);
	cr_assert_eq(count_of(out, "\n       0 "), 0, "%s", out);
	snprintf(want, sizeof(want), "   total %11llu %11llu %9llu %9llu",
		 (unsigned long long)st.total.allocs,
		 (unsigned long long)st.total.frees,
		 (unsigned long long)st.total.refills,
		 (unsigned long long)st.total.flushes);
	cr_assert_not_null(strstr(out, want), "%s\nwant: %s", out, want);
	snprintf(want, sizeof(want), "ticks %llu, back-end lock holds %llu",
		 (unsigned long long)st.ticks,
		 (unsigned long long)st.backend_locks);
	cr_assert_not_null(strstr(out, want), "%s", out);
	free(out);

	out = CAPTURE(lb_pcp_report_json, p, &ret);
	cr_assert_eq(ret, 0);
	assert_balanced(out);
	cr_assert_eq(count_of(out, "{\"allocs\":"), 1 + 3, "%s", out);
	snprintf(want, sizeof(want), "\"total\":{\"allocs\":20,\"frees\":20,"
		 "\"refills\":%llu,", (unsigned long long)st.total.refills);
	cr_assert_not_null(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "\"count\":%lld,\"high\":%lld}",
		 (long long)st.total.count, (long long)st.total.high);
	cr_assert_not_null(strstr(out, want), "%s", out);
	free(out);

	cr_assert_eq(lb_pcp_destroy(p), 0);
	cr_assert_eq(lb_freelist_destroy(fl), 0);
}

Test(report, pcp_bad_input_writes_nothing)
{
	struct lb_pcp *p = new_pcp();
	FILE *ro = fopen("/dev/null", "r");
	char *out;
	int ret;

	cr_assert_eq(lb_pcp_report(NULL, p), -EINVAL);
	cr_assert_eq(lb_pcp_report_json(NULL, p), -EINVAL);
	out = CAPTURE(lb_pcp_report, (struct lb_pcp *)NULL, &ret);
	cr_assert_eq(ret, -EINVAL);
	cr_assert_str_empty(out);
	free(out);
	out = CAPTURE(lb_pcp_report_json, (struct lb_pcp *)NULL, &ret);
	cr_assert_eq(ret, -EINVAL);
	cr_assert_str_empty(out);
	free(out);
	cr_assert_not_null(ro);
	cr_assert_eq(lb_pcp_report(ro, p), -EIO);
	cr_assert_eq(lb_pcp_report_json(ro, p), -EIO);
	fclose(ro);
	cr_assert_eq(lb_pcp_destroy(p), 0);
	cr_assert_eq(lb_freelist_destroy(fl), 0);
}
