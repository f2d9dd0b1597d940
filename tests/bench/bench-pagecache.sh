#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# examples/pagecache with 16K entries (1 KiB pages to keep the arena
# small), weighted batches against baseline (a lock hold per insert): LRU
# lock acquisitions per insert, by the add path and by all paths
# (eviction's isolate and putback included), hit ratio and ops/s, from
# this one run. ops/s is wall time, which follows the machine's load;
# ops/cpu-s (per second of the workers' and the evictor's CPU time) is
# the steadier comparison on a shared machine.
#
# usage: bench-pagecache.sh PAGECACHE_PROGRAM [--json]
prog=$1
json=${2:-}
args="--threads 4 --entries 16384 --ops ${LB_BENCH_OPS:-200000} --page-size 1024 --json"
# shellcheck disable=SC2086
w=$("$prog" $args) || exit 1
# shellcheck disable=SC2086
b=$("$prog" $args --baseline) || exit 1
printf '%s\n%s\n' "$w" "$b" | awk -v json="$json" '
function num(s, key,   m) {
	if (match(s, "\"" key "\":[0-9.]+")) {
		m = substr(s, RSTART, RLENGTH); sub(/.*:/, "", m); return m + 0
	}
	return -1
}
{
	mode[NR] = $0 ~ /"mode":"baseline"/ ? "baseline" : "weighted"
	ins[NR] = num($0, "inserts"); add[NR] = num($0, "add")
	all[NR] = num($0, "lru_acquisitions_per_insert")
	hit[NR] = num($0, "hit_ratio"); ops[NR] = num($0, "ops_per_sec")
	cpu[NR] = num($0, "ops_per_cpu_sec")
	ok[NR] = $0 ~ /"verified":true/ ? "true" : "false"
}
END {
	for (i = 1; i <= 2; i++) addp[i] = ins[i] > 0 ? add[i] / ins[i] : 0
	ra = addp[2] > 0 ? addp[1] / addp[2] : 0
	rt = all[2] > 0 ? all[1] / all[2] : 0
	ro = ops[2] > 0 ? ops[1] / ops[2] : 0
	rc = cpu[2] > 0 ? cpu[1] / cpu[2] : 0
	if (json != "") {
		printf "{\"bench\":\"pagecache\",\"entries\":16384"
		for (i = 1; i <= 2; i++)
			printf ",\"%s\":{\"add_acq_per_insert\":%.4f,\"all_acq_per_insert\":%.4f,\"hit_ratio\":%.4f,\"ops_per_sec\":%.0f,\"ops_per_cpu_sec\":%.0f,\"verified\":%s}", mode[i], addp[i], all[i], hit[i], ops[i], cpu[i], ok[i]
		printf ",\"add_ratio\":%.4f,\"all_ratio\":%.4f,\"ops_ratio\":%.4f,\"cpu_ops_ratio\":%.4f}\n", ra, rt, ro, rc
		exit 0
	}
	printf "pagecache, 16K entries, 4 threads\n%-9s %14s %14s %10s %12s %12s %9s\n", "batches", "add acq/insert", "all acq/insert", "hit ratio", "ops/s", "ops/cpu-s", "verified"
	for (i = 1; i <= 2; i++)
		printf "%-9s %14.4f %14.4f %10.4f %12.0f %12.0f %9s\n", mode[i], addp[i], all[i], hit[i], ops[i], cpu[i], ok[i]
	printf "LRU lock acquisitions per insert, weighted / baseline: %.3f (add path), %.3f (all paths)\n", ra, rt
	printf "weighted / baseline: ops/s %.2fx, ops/cpu-s %.2fx\n", ro, rc
}'
