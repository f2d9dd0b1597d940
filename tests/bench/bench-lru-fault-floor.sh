#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# lru-fault's weighted mode against the floor and against itself, 4K
# objects, 16M per thread: limit mode (the floor: a plain list per thread,
# no lock, no atomics, no clock read per object) and weighted mode with 1
# thread, and weighted mode with 2 threads. Each repetition runs the three
# back to back (their order rotating), and every ratio is taken within one
# repetition:
#
#   limit/w (1 thread)   the floor's ops/s over weighted's (2: weighted at
#                        half the floor's speed)
#   w 2t/1t              weighted ops/s with 2 threads over 1 thread
#
# each for ops/s (wall) and ops/cpu-s (per second of the threads' CPU
# time, steadier on a shared machine): median of LB_BENCH_REPS (5) and the
# spread (lowest, highest), with the load average they ran under.
#
# usage: bench-lru-fault-floor.sh LRU_FAULT_PROGRAM [--json]
prog=$1
json=${2:-}
loops=${LB_BENCH_LOOPS:-1000}
reps=${LB_BENCH_REPS:-5}
out=$(mktemp "${TMPDIR:-/tmp}/lb-lru-floor.XXXXXX") || exit 1
trap 'rm -f "$out" "$out.one"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

one() {		# rep, threads, mode
	"$prog" --threads "$2" --mem 16M --loops "$loops" --sizes 4K \
		--modes "$3" --json >"$out.one" || exit 1
	sed -n 's/.*"ops_per_sec":\([0-9.]*\).*"ops_per_cpu_sec":\([0-9.]*\).*"verified":\([a-z]*\).*/\1 \2 \3/p' \
		"$out.one" | sed "s/^/$1 $3-$2 /" >>"$out"
}

rep=0
while [ "$rep" -lt "$reps" ]; do
	rep=$((rep + 1))
	case $((rep % 3)) in
	0) one $rep 1 limit; one $rep 1 weighted; one $rep 2 weighted ;;
	1) one $rep 1 weighted; one $rep 2 weighted; one $rep 1 limit ;;
	2) one $rep 2 weighted; one $rep 1 limit; one $rep 1 weighted ;;
	esac
done
load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
awk -v json="$json" -v reps="$reps" -v load0="$load0" -v load1="$load1" '
{ ops[$1, $2] = $3; cpu[$1, $2] = $4; if ($5 != "true") bad = 1 }
function med(a, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	for (r = 1; r <= reps; r++) {
		lw[r] = ops[r, "limit-1"] / ops[r, "weighted-1"]
		lwc[r] = cpu[r, "limit-1"] / cpu[r, "weighted-1"]
		sc[r] = ops[r, "weighted-2"] / ops[r, "weighted-1"]
		scc[r] = cpu[r, "weighted-2"] / cpu[r, "weighted-1"]
		w1[r] = ops[r, "weighted-1"]; l1[r] = ops[r, "limit-1"]
	}
	m1 = med(lw, reps); lo1 = lw[1]; hi1 = lw[reps]
	m2 = med(lwc, reps); lo2 = lwc[1]; hi2 = lwc[reps]
	m3 = med(sc, reps); lo3 = sc[1]; hi3 = sc[reps]
	m4 = med(scc, reps); lo4 = scc[1]; hi4 = scc[reps]
	mw = med(w1, reps); ml = med(l1, reps)
	if (json != "") {
		printf "{\"bench\":\"lru_fault_floor\",\"reps\":%d,\"load_before\":\"%s\",\"load_after\":\"%s\",", reps, load0, load1
		printf "\"limit_ops\":%.0f,\"weighted_1t_ops\":%.0f,", ml, mw
		printf "\"limit_over_w_1t\":[%.3f,%.3f,%.3f],\"limit_over_w_1t_cpu\":[%.3f,%.3f,%.3f],", m1, lo1, hi1, m2, lo2, hi2
		printf "\"w_2t_over_1t\":[%.3f,%.3f,%.3f],\"w_2t_over_1t_cpu\":[%.3f,%.3f,%.3f],\"verified\":%s}\n", m3, lo3, hi3, m4, lo4, hi4, bad ? "false" : "true"
		exit bad
	}
	printf "lru-fault 4K, 16M per thread: median of %d interleaved repetitions [lowest, highest]\n", reps
	printf "load average before: %s, after: %s\n", load0, load1
	printf "limit: the floor, a plain list per thread (no lock, no atomics, no clock reads)\n"
	printf "limit ops/s %.0f, weighted 1 thread ops/s %.0f (medians)\n", ml, mw
	printf "%-26s %8s %18s %8s %18s\n", "ratio", "ops/s", "", "ops/cpu-s", ""
	printf "%-26s %7.2fx [%6.2f, %6.2f] %7.2fx [%6.2f, %6.2f]\n", "limit / weighted, 1 thread", m1, lo1, hi1, m2, lo2, hi2
	printf "%-26s %7.2fx [%6.2f, %6.2f] %7.2fx [%6.2f, %6.2f]\n", "weighted 2 / 1 threads", m3, lo3, hi3, m4, lo4, hi4
	if (bad) print "verification FAILED"
	exit bad
}' "$out"
