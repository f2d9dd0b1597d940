#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# check.sh - make check-memcached: fetch Debian's memcached 1.6.18, build
# it stock and patched (same source, same flags), run its own t/ suite on
# both and require that every file that passes stock passes patched; then
# run the LRU files on the patched server under ASan+UBSan and under TSan
# and require them clean where lockbatch or the port is involved.
#
# Environment: MC_TESTS (t/ files to run, default: all of t/),
# MC_SAN_TESTS (files for the sanitizer runs), MC_TEST_JOBS, MC_NO_SAN=1
# (skip the sanitizer runs), MC_ADD_DEB_SRC=1 (let fetch.sh add deb-src).
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
# lockbatch (lb_) or the port's own functions (lbmc_); memcached's own
# reports are counted and printed, not required clean.
san_fail=0
san_run() {
	local v=$1 kind=$2 dir=$res/$1 r ours all
	mkdir -p "$dir"
	mc_log "$v: running $MC_SAN_TESTS"
	"$MC_HERE/run-tests.sh" $v "$dir" $MC_SAN_TESTS > "$res/$v.times"
	all=$(cat "$dir"/san.* 2>/dev/null | grep -E -c "$kind" || true)
	ours=0
	for r in "$dir"/san.*; do
		[ -f "$r" ] || continue
		# One report per blank-line-separated block.
		ours=$((ours + $(awk -v k="$kind" 'BEGIN { RS = "" }
			$0 ~ k && /(lb_|lbi_|lbmc_|liblockbatch)/ { n++ }
			END { print n + 0 }' "$r")))
	done
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
		awk -v k="$kind" 'BEGIN { RS = ""; ORS = "\n\n" }
			$0 ~ k && /(lb_|lbi_|lbmc_|liblockbatch)/' "$dir"/san.* |
			head -n 200
	fi
}
if [ "${MC_NO_SAN:-}" != 1 ]; then
	ASAN_OPTIONS="detect_leaks=0:log_path=$res/asan/san" \
	UBSAN_OPTIONS="print_stacktrace=1:log_path=$res/asan/san" \
		san_run asan "runtime error|AddressSanitizer"
	TSAN_OPTIONS="exitcode=0:halt_on_error=0:suppressions=$MC_HERE/tsan.supp:log_path=$res/tsan/san" \
		san_run tsan "WARNING: ThreadSanitizer"
fi

mc_log "t/ on stock and patched, then sanitizers: $(( $(date +%s) - start )) s"
echo "check-memcached: $passes passed, $fails failed"
[ $fails -eq 0 ] && [ $san_fail -eq 0 ]
