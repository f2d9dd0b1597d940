// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The lb_pcp tuners as pure functions on a bare state, for callers that
 * study or compare the rules without a cache (differential tests against a
 * kernel, simulators).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <lockbatch/pcp.h>
#include "tune/tune.h"

static const char *const tuner_names[LB_PCP_TUNE_NR] = {
	[LB_PCP_TUNE_FIXED] = "fixed",
	[LB_PCP_TUNE_LINUX] = "linux",
	[LB_PCP_TUNE_COUNT_MIN] = "count_min",
	[LB_PCP_TUNE_ADAPTIVE] = "adaptive",
	[LB_PCP_TUNE_LINUX_618] = "linux618",
};

const char *lb_pcp_tuner_name(enum lb_pcp_tuner t)
{
	if ((unsigned int)t >= LB_PCP_TUNE_NR)
		return "invalid";
	return tuner_names[t];
}

int lb_pcp_tuner_parse(const char *name)
{
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < LB_PCP_TUNE_NR; i++)
		if (!strcmp(name, tuner_names[i]))
			return i;
	return -EINVAL;
}

int lb_pcp_tune_init(struct lb_pcp_tune_state *s, int batch, int high_min,
		     int high_max, bool free_high_batch)
{
	if (!s || batch < 1 || batch > LB_PCP_BATCH_MAX || high_min < 0 ||
	    high_min > high_max || high_max > LB_PCP_HIGH_MAX)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->batch = batch;
	s->high_min = high_min;
	s->high_max = high_max;
	s->high = high_min;
	if (free_high_batch)
		s->flags |= LB_PCP_TS_FREE_HIGH_BATCH;
	return 0;
}

void lb_pcp_tune_alloc_start(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s)
{
	lbi_tune_alloc_start(t, s);
}

int lb_pcp_tune_refill(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
		       unsigned int order)
{
	return lbi_tune_refill(t, s, order);
}

void lb_pcp_tune_alloc_done(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
			    unsigned int order)
{
	lbi_tune_alloc_done(t, s, order);
}

int lb_pcp_tune_free(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
		     unsigned int order)
{
	return lbi_tune_free(t, s, order);
}

bool lb_pcp_tune_decay(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
		       int *to_drain)
{
	int dummy;

	return lbi_tune_decay(t, s, to_drain ? to_drain : &dummy);
}

void lb_pcp_tune_tick_end(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s)
{
	lbi_tune_tick_end(t, s);
}

bool lb_pcp_tune_decay_step(enum lb_pcp_tuner t, struct lb_pcp_tune_state *s,
			    int *drained)
{
	int to_drain;
	bool todo = lbi_tune_decay(t, s, &to_drain);

	if (to_drain < 0)
		to_drain = 0;
	s->count -= to_drain;
	lbi_tune_tick_end(t, s);
	if (drained)
		*drained = to_drain;
	return todo;
}
