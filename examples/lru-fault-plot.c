// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lru-fault --plot PREFIX: the table as two PNG charts drawn by gnuplot,
 * PREFIX-ops.png (ops/s) and PREFIX-locks.png (back-end lock acquisitions,
 * add and release paths together), one bar per mode, grouped by object
 * size. The numbers go to PREFIX.dat first, so they survive a missing
 * gnuplot.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "lru-fault.h"

static const struct lf_result *find(const struct lf_result *res,
				    unsigned int nr, size_t size,
				    enum lf_mode mode)
{
	for (unsigned int i = 0; i < nr; i++)
		if (res[i].size == size && res[i].mode == mode)
			return &res[i];
	return NULL;
}

/* One row per size: KiB, then ops/s and acquisitions for each mode. */
static int write_data(const char *dat, const struct lf_conf *c,
		      const struct lf_result *res, unsigned int nr)
{
	FILE *d = fopen(dat, "w");

	if (!d)
		return -1;
	fputs("# size_kib", d);
	for (unsigned int m = 0; m < c->nr_modes; m++)
		fprintf(d, " %s_ops_per_sec %s_lock_acquisitions",
			lf_mode_name(c->modes[m]), lf_mode_name(c->modes[m]));
	fputc('\n', d);
	for (unsigned int s = 0; s < c->nr_sizes; s++) {
		fprintf(d, "%zuK", c->sizes[s] >> 10);
		for (unsigned int m = 0; m < c->nr_modes; m++) {
			const struct lf_result *r = find(res, nr, c->sizes[s],
							 c->modes[m]);
			fprintf(d, " %.0f %llu", r ? r->ops_per_sec : 0.0,
				r ? (unsigned long long)(r->path[LF_PATH_ADD].acquisitions +
					r->path[LF_PATH_RELEASE].acquisitions) : 0ull);
		}
		fputc('\n', d);
	}
	return fclose(d) ? -1 : 0;
}

static void chart(FILE *g, const struct lf_conf *c, const char *png,
		  const char *dat, const char *ylabel, unsigned int col,
		  const char *title)
{
	fprintf(g, "set output '%s'\nset ylabel '%s'\n", png, ylabel);
	fprintf(g, "set title '%s'\nplot ", title);
	for (unsigned int m = 0; m < c->nr_modes; m++)
		fprintf(g, "%s'%s' using %u:xtic(1) title '%s'", m ? ", " : "",
			dat, 2 + 2 * m + col, lf_mode_name(c->modes[m]));
	fputc('\n', g);
}

int lf_plot(const struct lf_conf *c, const struct lf_result *res,
	    unsigned int nr, const char *prefix)
{
	char dat[512], ops[512], locks[512], title[160];
	FILE *g;
	int st;

	snprintf(dat, sizeof(dat), "%s.dat", prefix);
	snprintf(ops, sizeof(ops), "%s-ops.png", prefix);
	snprintf(locks, sizeof(locks), "%s-locks.png", prefix);
	if (write_data(dat, c, res, nr)) {
		perror(dat);
		return -1;
	}
	g = popen("gnuplot 2>&1", "w");
	if (!g)
		return -1;
	snprintf(title, sizeof(title), "lru-fault: %u threads, %zu MiB each, %u loops, %s lock",
		 c->threads, c->mem >> 20, c->loops,
		 lf_lock_name(c->lock_kind));
	fputs("set terminal pngcairo noenhanced size 800,480 font ',10'\n"
	      "set style data histograms\nset style histogram clustered gap 1\n"
	      "set style fill solid 0.85 border -1\nset key top left\n"
	      "set grid ytics\nset logscale y 10\nset xlabel 'object size'\n", g);
	/* Log scales: the limit mode runs far ahead and takes no lock. */
	chart(g, c, ops, dat, "operations/s, add + release (log)", 0, title);
	chart(g, c, locks, dat, "back-end lock acquisitions (log; limit: none)", 1, title);
	st = pclose(g);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("plot: gnuplot failed or is not installed "
		       "(apt-get install gnuplot-nox); data in %s\n", dat);
		return 0;
	}
	printf("plot: %s\nplot: %s\n", ops, locks);
	return 0;
}
