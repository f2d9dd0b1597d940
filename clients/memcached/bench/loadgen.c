/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mc-loadgen: pipelined SET/GET/DELETE load on a memcached over loopback.
 *
 *   mc-loadgen [--port P] [--host 127.0.0.1] [--set-conns 16]
 *              [--get-conns 16] [--del-conns 0] [--pipeline 8]
 *              [--threads 2] [--keys 400000] [--value-size 64]
 *              [--value-max BYTES] [--skew uniform|zipf] [--theta 0.99]
 *              [--no-prefill] [--warmup S] [--seconds S] [--requests N]
 *              [--seed N] [--server-stats] [--json]
 *
 * It ends after --seconds or --requests measured responses, whichever
 * comes first. --server-stats adds the server's CPU time and LRU lock
 * counts per request over the measured window. Values are a function of
 * their key (lengths too, between --value-size and --value-max), and every
 * GET answer is checked against it: a wrong one makes the exit status 3.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: mc-loadgen [--port P] [--host 127.0.0.1] "
		   "[--set-conns N] [--get-conns N]\n"
		   "                  [--del-conns N] [--pipeline N] "
		   "[--threads N] [--keys N]\n"
		   "                  [--value-size BYTES] [--value-max BYTES]\n"
		   "                  [--skew uniform|zipf] [--theta T] "
		   "[--no-prefill] [--warmup S]\n"
		   "                  [--seconds S] [--requests N] [--seed N] "
		   "[--server-stats] [--json]\n"
		   "defaults: port 11211, 16 SET + 16 GET + 0 DELETE "
		   "connections, pipeline 8, 2 threads,\n"
		   "          400000 keys, 64-byte values, uniform, prefill on, "
		   "warm-up 1 s, 5 s\n");
}

static unsigned long long num(const char *opt, const char *s,
			      unsigned long long lo, unsigned long long hi)
{
	return lg_opt_num("mc-loadgen", opt, s, lo, hi);
}

static double real(const char *opt, const char *s, double lo, double hi)
{
	return lg_opt_real("mc-loadgen", opt, s, lo, hi);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", 1, 0, 'p' }, { "host", 1, 0, 'H' },
		{ "set-conns", 1, 0, 's' }, { "get-conns", 1, 0, 'g' },
		{ "del-conns", 1, 0, 'D' }, { "value-max", 1, 0, 'V' },
		{ "pipeline", 1, 0, 'P' }, { "threads", 1, 0, 't' },
		{ "keys", 1, 0, 'k' }, { "value-size", 1, 0, 'v' },
		{ "skew", 1, 0, 'z' }, { "theta", 1, 0, 'T' },
		{ "no-prefill", 0, 0, 'n' }, { "warmup", 1, 0, 'w' },
		{ "seconds", 1, 0, 'd' }, { "requests", 1, 0, 'r' },
		{ "seed", 1, 0, 'S' }, { "server-stats", 0, 0, 'x' },
		{ "json", 0, 0, 'j' }, { "help", 0, 0, 'h' }, { 0 }
	};
	struct lg_conf c;
	struct lg_result r;
	int json = 0, o, err;

	lg_conf_default(&c);
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'p': c.port = (unsigned int)num("port", optarg, 1, 65535); break;
		case 'H': c.host = optarg; break;
		case 's': c.set_conns = (unsigned int)num("set-conns", optarg, 0, 4096); break;
		case 'g': c.get_conns = (unsigned int)num("get-conns", optarg, 0, 4096); break;
		case 'D': c.del_conns = (unsigned int)num("del-conns", optarg, 0, 4096); break;
		case 'P': c.pipeline = (unsigned int)num("pipeline", optarg, 1, 1024); break;
		case 't': c.threads = (unsigned int)num("threads", optarg, 1, 64); break;
		case 'k': c.keys = (uint32_t)num("keys", optarg, 1, 100000000); break;
		case 'v': c.value_size = (unsigned int)num("value-size", optarg, 1, 1000000); break;
		case 'V': c.value_max = (unsigned int)num("value-max", optarg, 1, 1000000); break;
		case 'z':
			if (!strcmp(optarg, "uniform"))
				c.skew = LG_UNIFORM;
			else if (!strcmp(optarg, "zipf"))
				c.skew = LG_ZIPF;
			else {
				fprintf(stderr, "mc-loadgen: --skew is uniform "
						"or zipf\n");
				return 2;
			}
			break;
		case 'T': c.theta = real("theta", optarg, 0.01, 5); break;
		case 'n': c.prefill = 0; break;
		case 'w': c.warmup_s = real("warmup", optarg, 0, 3600); break;
		case 'd': c.duration_s = real("seconds", optarg, 0.01, 3600); break;
		case 'r': c.max_requests = num("requests", optarg, 1, ~0ull); break;
		case 'S': c.seed = num("seed", optarg, 0, ~0ull); break;
		case 'x': c.server_stats = 1; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	err = lg_run(&c, &r);
	if (r.wrong)
		fprintf(stderr, "mc-loadgen: %llu GET answers with a value no "
				"SET sent for the key (one: key:%08u, %s)\n",
			(unsigned long long)r.wrong, r.wrong_key, r.wrong_why);
	if (err) {
		fprintf(stderr, "mc-loadgen: %s\n", strerror(-err));
		return 1;
	}
	if (json)
		lg_result_json(stdout, &c, &r);
	else
		lg_result_print(stdout, &c, &r);
	return r.wrong ? 3 : 0;
}
