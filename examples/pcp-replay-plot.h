/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* pcp-replay --plot: the high/count series of every tuner, and its chart. */
#ifndef PCP_REPLAY_PLOT_H
#define PCP_REPLAY_PLOT_H

#include <stdio.h>

#include <lockbatch/pcp.h>

FILE *pr_series_open(const char *prefix, const char *name);
void pr_series_sample(FILE *f, struct lb_pcp *p, unsigned int nr_slots,
		      size_t tick);
void pr_series_end(FILE *f, enum lb_pcp_tuner t);
/* Closes @f; draws PREFIX-NAME.png. 0 also when gnuplot is missing. */
int pr_plot(FILE *f, const char *prefix, const char *name,
	    const enum lb_pcp_tuner *tuners, int nt);

#endif /* PCP_REPLAY_PLOT_H */
