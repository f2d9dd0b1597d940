#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# lb-compare, tiny: the lockbatch rows and glibc on every workload, two
# threads, one 4 KiB size. Every run must finish with uncorrupted blocks,
# the JSON must carry the figures the tables are built from, and bad flags
# must exit 2. (Peers are left to `make compare`: they may not be installed.)
set -eu
b=${top_builddir:-.}
lc="$b/bench/compare/lb-compare"

fail() {
	echo "not ok: $*" >&2
	exit 1
}

json=$("$lc" --seconds 0.03 --reps 1 --threads 2 --sizes 4096 \
	--backends pcp-adaptive,pcp-linux,mutex,glibc --json)
for key in mops_median spread ratio ratio_spread cpu_ns_median cpu_spread \
	   cpu_ratio cpu_ratio_spread csw \
	   peak_rss_kib peak_live_kib lock_trips \
	   errors oversubscribed; do
	case $json in
	*"\"$key\":"*) ;;
	*) fail "lb-compare --json lacks \"$key\"" ;;
	esac
done
n=$(printf '%s\n' "$json" | grep -c '"backend":') || true
[ "$n" -eq 12 ] || fail "want 12 results (3 workloads x 4 back-ends), got $n"
printf '%s\n' "$json" | grep -q '"failed_runs":true' &&
	fail "a run failed: $json"
printf '%s\n' "$json" | grep -q '"errors":[1-9]' &&
	fail "corrupted blocks: $json"
printf '%s\n' "$json" | grep '"backend":"pcp-adaptive"' |
	grep -q '"ratio":1.0000' || fail "reference ratio is not 1"
# Ratios pair the runs of one repetition: the reference against itself is
# 1 in every repetition, with no spread, whatever its own runs' spread.
json3=$("$lc" --seconds 0.02 --reps 3 --threads 2 --sizes 4096 \
	--workloads burst --backends pcp-adaptive,pcp-linux --json)
ref=$(printf '%s\n' "$json3" | grep '"backend":"pcp-adaptive"')
case $ref in
*'"cpu_ratio":1.0000,"cpu_ratio_spread":0.0000'*'"ratio":1.0000,"ratio_spread":0.0000'*) ;;
*) fail "reference not paired with itself: $ref" ;;
esac
# A lockbatch row that moved objects took its back-end lock.
printf '%s\n' "$json" | grep '"backend":"mutex"' | grep -q '"lock_trips":0,' &&
	fail "mutex row counted no lock holds"

out=$("$lc" --seconds 0.02 --reps 1 --threads 1,4 --sizes 64 \
	--workloads burst --backends pcp-adaptive,glibc)
case $out in
*"Throughput:"*"CPU time per allocation"*"Memory at 4 threads"*"Back-end lock holds"*) ;;
*) fail "lb-compare tables incomplete: $out" ;;
esac
ncpu=$(getconf _NPROCESSORS_ONLN)
if [ "$ncpu" -lt 4 ]; then
	case $out in
	*"oversubscribed"*) ;;
	*) fail "4 threads on $ncpu CPUs not marked oversubscribed" ;;
	esac
fi

st=0
"$lc" --reps 0 >/dev/null 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "lb-compare --reps 0 exits $st, want 2"
st=0
"$lc" --backends nosuch >/dev/null 2>&1 || st=$?
[ "$st" -eq 2 ] || fail "lb-compare --backends nosuch exits $st, want 2"
echo "ok: lb-compare smoke run"
