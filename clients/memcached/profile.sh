#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# profile.sh MEMCACHED [MB] [REQUESTS] - where a memcached built with
# patch 0001 spends its instructions per request, under callgrind.
#
# The server runs under valgrind --tool=callgrind (-t 4, -m MB, default
# 32);
# mc-loadgen prefills the 400k keys, callgrind's counters are zeroed,
# then REQUESTS (default 200000) measured SET/GET requests run and the
# counters are dumped. Instruction counts do not depend on the machine's
# load, unlike time; valgrind runs the server's threads one at a time, so
# lock contention is not what this measures. Prints the top functions
# (inclusive and self) and leaves callgrind.out.mc.* in the current
# directory for callgrind_annotate.
#
# profile.sh diff A.out REQUESTS_A B.out REQUESTS_B - inclusive
# instructions per request of every function in two such dumps, side by
# side, sorted by B - A, differences of 8 or more only (REQUESTS: the
# "server: N requests" line each run printed).
set -euo pipefail

# function -> inclusive Ir, summed over the files that define it.
incl_of() {
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$1" |
		awk '/^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]+:[^ ]+ +\[/ {
			ir = $1; gsub(",", "", ir)
			f = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", f)
			sub(/ +\[.*/, "", f); sub(/.*:/, "", f)
			sum[f] += ir
		} END { for (f in sum) print f, sum[f] }' | sort
}
if [ "${1:-}" = diff ]; then
	[ $# -eq 5 ] || { echo "usage: profile.sh diff A.out N_A B.out N_B" >&2; exit 2; }
	join -a1 -a2 -e 0 -o 0,1.2,2.2 <(incl_of "$2") <(incl_of "$4") |
		awk -v na="$3" -v nb="$5" '{
			a = $2 / na; b = $3 / nb
			if (b - a >= 8 || a - b >= 8)
				printf "%-40s %9.1f %9.1f %+9.1f\n", $1, a, b, b - a
		}' | sort -k4 -g |
		{ printf "%-40s %9s %9s %9s\n" "Ir per request, inclusive" A B B-A; cat; }
	exit 0
fi
bin=${1:?usage: profile.sh MEMCACHED [MB] [REQUESTS]}
mb=${2:-32}
requests=${3:-200000}
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
lg=$top_builddir/clients/memcached/bench/mc-loadgen
[ -x "$lg" ] || { echo "profile.sh: no $lg: run make first" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "profile.sh: valgrind is not installed" >&2; exit 1; }

port=$(( 20000 + $$ % 20000 ))
user=()
[ "$(id -u)" = 0 ] && user=(-u root)
out=callgrind.out.mc.$$
# Bounded: the server is killed after 15 minutes whatever happens.
# memcached sets its file limit (soft and hard) to -c, and valgrind allows
# only its own hard limit, 12 below the real one: 1024 gives 1012.
timeout 900 bash -c 'ulimit -n 1024 && exec "$@"' sh \
	valgrind --tool=callgrind --callgrind-out-file="$out" \
	--collect-atstart=yes "$bin" "${user[@]}" -p "$port" -l 127.0.0.1 \
	-U 0 -t 4 -m "$mb" -c 1012 -o lru_lock_stats 2>"$out.log" &
vg=$!
trap 'kill "$vg" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
	kill -0 "$vg" 2>/dev/null || { cat "$out.log" >&2; exit 1; }
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
	sleep 0.1
done
# Prefill (and a short warm-up) outside the measured counts.
"$lg" --port "$port" --warmup 0 --seconds 1 >/dev/null
# valgrind is timeout's child (bash exec'd into it).
vgpid=$(pgrep -P "$vg" | head -n 1)
callgrind_control -z "$vgpid" >/dev/null
"$lg" --port "$port" --no-prefill --warmup 0 --seconds 600 \
	--requests "$requests" --server-stats
callgrind_control -d "$vgpid" >/dev/null
kill -KILL "$vgpid"	# no exit dump: only the measured one is wanted
wait "$vg" || true
trap - EXIT
dump=$(ls -t "$out"* | grep -v '\.log$' | head -1)
echo "profile.sh: $dump (callgrind_annotate --inclusive=yes $dump)"
callgrind_annotate --inclusive=yes "$dump" 2>/dev/null | sed -n '1,60p'
