// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * pcp-replay --plot PREFIX: per trace, the high watermark and the cached
 * count (both summed over the slots, in base units) at every decay tick,
 * one panel per tuner, drawn by gnuplot into PREFIX-TRACE.png. The samples
 * go to PREFIX-TRACE.dat first (one gnuplot data block per tuner), so they
 * survive a missing gnuplot.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "pcp-replay-plot.h"

/* PREFIX-NAME.EXT, with NAME's directory dropped and odd bytes made '-'. */
static void path_of(char *buf, size_t len, const char *prefix,
		    const char *name, const char *ext)
{
	const char *base = strrchr(name, '/');
	size_t n;

	base = base ? base + 1 : name;
	n = (size_t)snprintf(buf, len, "%s-", prefix);
	for (; *base && n + 1 < len; base++)
		buf[n++] = isalnum((unsigned char)*base) || *base == '_' ?
			   *base : '-';
	snprintf(buf + n, len - n, ".%s", ext);
}

FILE *pr_series_open(const char *prefix, const char *name)
{
	char dat[512];
	FILE *f;

	path_of(dat, sizeof(dat), prefix, name, "dat");
	f = fopen(dat, "w");
	if (!f)
		perror(dat);
	return f;
}

void pr_series_sample(FILE *f, struct lb_pcp *p, unsigned int nr_slots,
		      size_t tick)
{
	struct lb_pcp_tune_state s;
	long long high = 0, count = 0;

	for (unsigned int k = 0; k < nr_slots; k++) {
		if (lb_pcp_slot_state(p, k, &s))
			continue;
		high += s.high;
		count += s.count;
	}
	fprintf(f, "%zu %lld %lld\n", tick, high, count);
}

void pr_series_end(FILE *f, enum lb_pcp_tuner t)
{
	fprintf(f, "# end of %s\n\n\n", lb_pcp_tuner_name(t));
}

int pr_plot(FILE *f, const char *prefix, const char *name,
	    const enum lb_pcp_tuner *tuners, int nt)
{
	char dat[512], png[512];
	FILE *g;
	int st;

	if (fclose(f))
		return -1;
	path_of(dat, sizeof(dat), prefix, name, "dat");
	path_of(png, sizeof(png), prefix, name, "png");
	g = popen("gnuplot 2>&1", "w");
	if (!g)
		return -1;
	fprintf(g, "set terminal pngcairo noenhanced size 900,%d font ',9'\n"
		   "set output '%s'\nset key top right\nset grid\n"
		   "set xlabel 'decay period'\nset ylabel 'base units (all slots)'\n"
		   "set multiplot layout %d,1 title 'pcp-replay: %s'\n",
		   220 * nt + 40, png, nt, name);
	for (int i = 0; i < nt; i++)
		fprintf(g, "set title '%s'\nplot '%s' index %d using 1:2 with "
			   "lines lw 1.5 title 'high', '' index %d using 1:3 "
			   "with lines lw 1 title 'count'\n",
			lb_pcp_tuner_name(tuners[i]), dat, i, i);
	fputs("unset multiplot\n", g);
	st = pclose(g);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "pcp-replay: gnuplot failed or is not installed "
			"(apt-get install gnuplot-nox); data in %s\n", dat);
		return 0;
	}
	fprintf(stderr, "plot: %s\n", png);
	return 0;
}
