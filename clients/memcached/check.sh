#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# check.sh - make check-memcached: fetch Debian's memcached 1.6.18, build
# it stock and patched (same source, same flags), run its own t/ suite on
# both and require that every file that passes stock passes patched; then
# run the LRU files on the patched server under ASan+UBSan and under TSan
# and require them clean where lockbatch or the port is involved; then the
# stress run (stress.sh) on the patched server and both sanitizer builds.
#
# Environment: MC_TESTS (t/ files to run, default: all of t/),
# MC_SAN_TESTS (files for the sanitizer runs), MC_TEST_JOBS, MC_NO_SAN=1
# (skip the sanitizer builds and runs: the stress runs on patched alone),
# MC_STRESS_SECONDS (20, per variant), MC_ADD_DEB_SRC=1 (let fetch.sh add
# deb-src).
set -euo pipefail
. "$(dirname "$0")/common.sh"
export top_builddir top_srcdir MC_BUILD

fetch_args=
[ "${MC_ADD_DEB_SRC:-}" = 1 ] && fetch_args=--add-deb-src
"$MC_HERE/deps.sh"
"$MC_HERE/fetch.sh" $fetch_args
variants="stock patched"
[ "${MC_NO_SAN:-}" = 1 ] || variants="$variants asan tsan"
"$MC_HERE/build.sh" $variants

# Every file of t/ by default; the sanitizer runs take the LRU, eviction,
# crawler and slab-mover files.
if [ -z "${MC_TESTS:-}" ]; then
	MC_TESTS=$(cd "$MC_SRC" && ls t/*.t | tr '\n' ' ')
fi
: "${MC_SAN_TESTS:=t/lru.t t/lru-maintainer.t t/lru-crawler.t t/evictions.t t/slabs-reassign2.t t/flush-all.t t/refhang.t}"

res=$MC_BUILD/results
rm -rf "$res"
mkdir -p "$res"
start=$(date +%s)
for v in stock patched; do
	mc_log "$v: running $(echo $MC_TESTS | wc -w) t/ files"
	"$MC_HERE/run-tests.sh" $v "$res/$v" $MC_TESTS > "$res/$v.times"
done

# Compare file by file.
fails=0 passes=0 regressions= stockfail=
printf '%-28s %-6s %-6s\n' "t/ file" stock patched
for t in $MC_TESTS; do
	n=$(basename "$t" .t)
	s=$(cat "$res/stock/$n.result") p=$(cat "$res/patched/$n.result")
	printf '%-28s %-6s %-6s\n' "$n" "$s" "$p"
	if [ "$s" = pass ] && [ "$p" != pass ]; then
		regressions="$regressions $n"
	fi
	[ "$s" = fail ] && stockfail="$stockfail $n"
	if [ "$s" != pass ] || [ "$p" = pass ]; then
		passes=$((passes + 1))
	else
		fails=$((fails + 1))
	fi
done
[ -z "$stockfail" ] || mc_log "fail on stock too (reported, not required):$stockfail"
for n in $regressions; do
	echo "== patched t/$n.t (passes on stock):"
	tail -n 40 "$res/patched/$n.log" | cut -c1-300
done

# Sanitizer runs: a report is the port's when a frame of it names
# lockbatch or the port's own functions (mc_san_reports in common.sh);
# memcached's own reports are counted and printed, not required clean.
san_fail=0
san_run() {
	local v=$1 kind dir=$res/$1 ours all t n
	kind=$(mc_san_kind "$v")
	mkdir -p "$dir"
	mc_log "$v: running $MC_SAN_TESTS"
	( mc_san_env "$v" "$dir/san"
	  exec "$MC_HERE/run-tests.sh" $v "$dir" $MC_SAN_TESTS ) \
		> "$res/$v.times"
	# The sanitizer's files, and the t/ logs (the servers' stderr:
	# UBSan's reports, see mc_san_env).
	set -- "$dir"/san.* "$dir"/*.log
	[ -e "$1" ] || shift
	all=$(mc_san_count "$kind" all "$@")
	ours=$(mc_san_count "$kind" ours "$@")
	for t in $MC_SAN_TESTS; do
		n=$(basename "$t" .t)
		if [ "$(cat "$res/patched/$n.result" 2>/dev/null)" = pass ] &&
		   [ "$(cat "$dir/$n.result")" != pass ]; then
			echo "== $v t/$n.t fails (passes patched):"
			tail -n 40 "$dir/$n.log" | cut -c1-300
			san_fail=1
		fi
	done
	mc_log "$v: $all reports ($kind), $ours involving lockbatch or the port"
	if [ "$ours" -gt 0 ]; then
		san_fail=1
		mc_san_reports "$kind" ours "$@" | head -n 200
	fi
}

# The stress run (stress.sh): reused items under concurrent SET, DELETE
# and GET, on the patched server and on each sanitizer build.
stress_fail=0
stress_variants=patched
[ "${MC_NO_SAN:-}" = 1 ] || stress_variants="$stress_variants asan tsan"

if [ "${MC_NO_SAN:-}" != 1 ]; then
	san_run asan
	san_run tsan
fi
for v in $stress_variants; do
	"$MC_HERE/stress.sh" $v "$res/stress-$v" || stress_fail=1
done

mc_log "t/ on stock and patched, sanitizers, stress: $(( $(date +%s) - start )) s"
echo "check-memcached: $passes passed, $fails failed"
[ $stress_fail -eq 0 ] || echo "check-memcached: the stress run failed"
[ $fails -eq 0 ] && [ $san_fail -eq 0 ] && [ $stress_fail -eq 0 ]
