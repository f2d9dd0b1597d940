// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * lb-compare: lb_pcp against glibc, jemalloc, TCMalloc and mimalloc.
 *
 *   lb-compare [--seconds S] [--reps N] [--threads 1,2,4,8]
 *              [--sizes 4096,16384,64] [--workloads burst,prodcons,larson]
 *              [--backends NAME,...] [--max-ops N] [--arena-mib N]
 *              [--json] [--json-out FILE] [--plot FILE.png]
 *
 * Every run is a new process (this program again, as a worker) so each
 * allocator is alone in its address space: peers come in by LD_PRELOAD;
 * a peer whose library is not installed is skipped with a message. Runs
 * repeat --reps times; each repetition goes through every configuration
 * with the back-ends in a rotated order, so a noisy moment hits them all
 * alike. Tables give medians and the spread ((max - min) / median) of
 * the wall throughput and of the CPU time per allocation.
 * COMPARE_SECONDS in the environment sets the default of --seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lockbatch/cpu.h>

#include "compare.h"

struct opts {
	struct cmp_spec spec;	/* seconds, max_ops, arena_mib, seed */
	unsigned int reps;
	int json;
	const char *json_out;
	const char *plot;
};

/* Runs one worker; 0 and *r filled, or the worker's exit status. */
static int run_worker(const struct cmp_spec *s, struct cmp_result *r)
{
	const struct cmp_backend *be = &cmp_backends[s->backend];
	char a[8][32], line[512];
	int fd[2], status, got = -1;
	FILE *f;
	pid_t pid;

	snprintf(a[0], 32, "%zu", s->size);
	snprintf(a[1], 32, "%u", s->threads);
	snprintf(a[2], 32, "%g", s->seconds);
	snprintf(a[3], 32, "%llu", (unsigned long long)s->max_ops);
	snprintf(a[4], 32, "%zu", s->arena_mib);
	snprintf(a[5], 32, "%llu", (unsigned long long)s->seed);
	if (pipe(fd))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		if (be->preload)
			setenv("LD_PRELOAD", be->preload, 1);
		else
			unsetenv("LD_PRELOAD");
		if (be->env)
			putenv((char *)be->env);
		execl("/proc/self/exe", "lb-compare", "--worker", be->name,
		      cmp_workload_name(s->workload), a[0], a[1], a[2], a[3],
		      a[4], a[5], (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "result ", 7))
			got = cmp_result_parse(line, r);
	if (f)
		fclose(f);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	return got;
}

static int parse_list(const char *arg, unsigned long *out, unsigned int max)
{
	char *end;
	unsigned int n = 0;

	while (*arg && n < max) {
		out[n++] = strtoul(arg, &end, 0);
		if (end == arg)
			return -1;
		arg = *end == ',' ? end + 1 : end;
	}
	return (int)n;
}

static int parse_names(const char *arg, unsigned int *out, unsigned int max,
		       int (*parse)(const char *))
{
	char buf[256], *save, *tok;
	unsigned int n = 0;
	int v;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok && n < max;
	     tok = strtok_r(NULL, ",", &save)) {
		v = parse(tok);
		if (v < 0)
			return -1;
		out[n++] = (unsigned int)v;
	}
	return (int)n;
}

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: lb-compare [--seconds S] [--reps N] [--threads LIST] "
		   "[--sizes LIST] [--workloads LIST] [--backends LIST]\n"
		   "                  [--max-ops N] [--arena-mib N] [--json] "
		   "[--json-out FILE] [--plot FILE.png]\n"
		   "defaults: --seconds $COMPARE_SECONDS or 0.2, --reps 3, "
		   "--threads 1,2,4,8, --sizes 4096,16384,64,\n"
		   "          --max-ops 50000000 (per thread), --arena-mib 512\n"
		   "workloads: burst prodcons larson\nback-ends:");
	for (i = 0; i < cmp_nr_backends; i++)
		fprintf(f, " %s", cmp_backends[i].name);
	fputc('\n', f);
}

static int parse_opts(int argc, char **argv, struct opts *o,
		      struct cmp_report *r)
{
	static const struct option lo[] = {
		{ "seconds", 1, 0, 's' }, { "reps", 1, 0, 'r' },
		{ "threads", 1, 0, 't' }, { "sizes", 1, 0, 'z' },
		{ "workloads", 1, 0, 'w' }, { "backends", 1, 0, 'b' },
		{ "max-ops", 1, 0, 'm' }, { "arena-mib", 1, 0, 'a' },
		{ "json", 0, 0, 'j' }, { "json-out", 1, 0, 'o' },
		{ "plot", 1, 0, 'p' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	unsigned long v[8];
	unsigned int i, wl[CMP_NR_WORKLOADS];
	int c, n;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': o->spec.seconds = strtod(optarg, NULL); break;
		case 'r': o->reps = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': o->spec.max_ops = strtoull(optarg, NULL, 0); break;
		case 'a': o->spec.arena_mib = strtoull(optarg, NULL, 0); break;
		case 'j': o->json = 1; break;
		case 'o': o->json_out = optarg; break;
		case 'p': o->plot = optarg; break;
		case 't':
			if ((n = parse_list(optarg, v, 8)) <= 0)
				return -1;
			for (r->nt = (unsigned int)n, i = 0; i < r->nt; i++)
				r->threads[i] = (unsigned int)v[i];
			break;
		case 'z':
			if ((n = parse_list(optarg, v, 8)) <= 0)
				return -1;
			for (r->ns = (unsigned int)n, i = 0; i < r->ns; i++)
				r->sizes[i] = v[i];
			break;
		case 'w':
			if ((n = parse_names(optarg, wl, CMP_NR_WORKLOADS,
					     cmp_workload_parse)) <= 0)
				return -1;
			for (r->nw = (unsigned int)n, i = 0; i < r->nw; i++)
				r->wl[i] = (enum cmp_workload)wl[i];
			break;
		case 'b':
			if ((n = parse_names(optarg, r->be, 16,
					     cmp_backend_parse)) <= 0)
				return -1;
			r->nb = (unsigned int)n;
			break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	return optind == argc && o->reps >= 1 && o->reps <= 16 &&
			       o->spec.seconds > 0 && o->spec.arena_mib ? 0 : -1;
}

static void defaults(struct opts *o, struct cmp_report *r)
{
	const char *e = getenv("COMPARE_SECONDS");
	unsigned int i;

	o->spec.seconds = e && *e ? strtod(e, NULL) : 0.2;
	o->spec.max_ops = 50000000;
	o->spec.arena_mib = 512;
	o->spec.seed = 0x1b0c4;
	o->reps = 3;
	r->nw = CMP_NR_WORKLOADS;
	for (i = 0; i < CMP_NR_WORKLOADS; i++)
		r->wl[i] = (enum cmp_workload)i;
	r->ns = 3;
	r->sizes[0] = 4096;
	r->sizes[1] = 16384;
	r->sizes[2] = 64;
	r->nt = 4;
	for (i = 0; i < 4; i++)
		r->threads[i] = 1u << i;
	r->nb = cmp_nr_backends;
	for (i = 0; i < cmp_nr_backends; i++)
		r->be[i] = i;
}

/* Drops the peers that cannot run here; records every version. */
static void probe_backends(struct opts *o, struct cmp_report *r)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->nb; i++) {
		struct cmp_spec s = o->spec;
		struct cmp_result res = { 0 };
		const struct cmp_backend *be = &cmp_backends[r->be[i]];

		s.backend = r->be[i];
		s.workload = CMP_BURST;
		s.size = 64;
		s.threads = 1;
		s.seconds = 0.01;
		if (run_worker(&s, &res)) {
			fprintf(stderr, "lb-compare: skipping %s: %s not "
				"loadable (not installed?)\n", be->name,
				be->preload ? be->preload : "back-end");
			continue;
		}
		snprintf(r->versions[n], sizeof(r->versions[n]), "%s",
			 res.version);
		r->be[n++] = r->be[i];
	}
	r->nb = n;
}

static void describe_machine(struct cmp_report *r)
{
	struct utsname u;
	char line[256], model[96] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	time_t now = time(NULL);

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s",
				 strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	r->ncpu = lb_cpu_count();
	strftime(r->when, sizeof(r->when), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	snprintf(r->machine, sizeof(r->machine), "%s, %u CPUs, Linux %s",
		 model, r->ncpu, u.release);
}

static void progress(unsigned int done, unsigned int total,
		     const struct cmp_spec *s)
{
	if (!isatty(2))
		return;
	fprintf(stderr, "\r\033[K[%u/%u] %s %zu B %u thr %s", done, total,
		cmp_workload_name(s->workload), s->size, s->threads,
		cmp_backends[s->backend].name);
	if (done == total)
		fputs("\r\033[K", stderr);
}

/* rep x configuration x back-end, back-ends rotated per configuration. */
static void run_all(struct opts *o, struct cmp_report *r)
{
	unsigned int rep, w, z, t, k, done = 0, cfg = 0;
	unsigned int total = o->reps * r->nw * r->ns * r->nt * r->nb;

	for (rep = 0; rep < o->reps; rep++)
	for (w = 0; w < r->nw; w++)
	for (z = 0; z < r->ns; z++)
	for (t = 0; t < r->nt; t++, cfg++)
	for (k = 0; k < r->nb; k++) {
		unsigned int b = (k + cfg) % r->nb;
		struct cmp_cell *c = cmp_cell(r, w, z, t, b);
		struct cmp_spec s = o->spec;
		struct cmp_result res = { 0 };

		s.backend = r->be[b];
		s.workload = r->wl[w];
		s.size = r->sizes[z];
		s.threads = r->threads[t];
		s.seed = o->spec.seed + rep;
		progress(done++, total, &s);
		if (run_worker(&s, &res)) {
			c->skipped = 1;
			continue;
		}
		c->rep[c->n] = rep;
		c->cpu_ns[c->n] = res.ops ? (double)res.cpu_ns / res.ops : 0;
		c->mops[c->n++] = res.mops;
		if (res.peak_rss_kib >= c->last.peak_rss_kib)
			c->last = res;
		if (res.peak_live_kib > c->live_max_kib)
			c->live_max_kib = res.peak_live_kib;
		c->errors += res.errors;
	}
	progress(total, total, &o->spec);
}

int main(int argc, char **argv)
{
	struct cmp_report r = { 0 };
	struct opts o = { 0 };
	int err = 0;

	if (argc > 1 && !strcmp(argv[1], "--worker"))
		return cmp_worker_main(argc, argv);
	defaults(&o, &r);
	if (parse_opts(argc, argv, &o, &r)) {
		usage(stderr);
		return 2;
	}
	probe_backends(&o, &r);
	if (!r.nb)
		return 1;
	r.reps = o.reps;
	r.seconds = o.spec.seconds;
	describe_machine(&r);
	r.cells = calloc((size_t)r.nw * r.ns * r.nt * r.nb, sizeof(*r.cells));
	if (!r.cells)
		return 1;
	run_all(&o, &r);
	if (o.json)
		cmp_print_json(stdout, &r);
	else
		cmp_print_tables(stdout, &r);
	if (o.json_out) {
		FILE *f = fopen(o.json_out, "w");

		if (f) {
			cmp_print_json(f, &r);
			err = fclose(f);
		}
		if (!f || err)
			fprintf(stderr, "lb-compare: cannot write %s\n",
				o.json_out);
	}
	if (o.plot && cmp_plot(&r, o.plot))
		err = 1;
	free(r.cells);
	return err ? 1 : 0;
}
