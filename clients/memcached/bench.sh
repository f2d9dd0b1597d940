#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# bench.sh [mc-bench flags...] - make bench-memcached: stock against
# patched memcached under mc-bench, in interleaved pairs.
#
# The servers: MC_STOCK and MC_PATCHED (paths to memcached binaries built
# with patch 0001), else the optimised memcached of build.sh's stock and
# patched trees under MC_BUILD (build.sh builds them first). With
# MC_PATCHED=none, stock is paired with itself: the harness's self-check,
# whose ratios must come out near 1.
#
# Output: the table on stdout, bench-memcached.json and bench-memcached.png
# in the current directory. Nothing is pinned: on a 2-core machine the
# server and the load generator share the cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${top_builddir:=$here/../..}"
top_builddir=$(cd "$top_builddir" && pwd)
: "${MC_BUILD:=$top_builddir/clients/memcached/build}"
bench=$top_builddir/clients/memcached/bench/mc-bench

die() { printf 'bench-memcached: error: %s\n' "$*" >&2; exit 1; }
log() { printf 'bench-memcached: %s\n' "$*" >&2; }

[ -x "$bench" ] || die "no $bench: run make first"

# The optimised server of one build.sh tree (build.sh makes the -debug
# binary that t/ runs; the benchmark wants the one Debian ships).
server_of() {
	local dir=$MC_BUILD/$1
	[ -f "$dir/Makefile" ] || die "no configured $dir: build.sh $1 failed?"
	log "$1: make memcached"
	make -C "$dir" -s -j"${MC_JOBS:-2}" memcached >&2 ||
		die "$1: make memcached failed"
	echo "$dir/memcached"
}

if [ -z "${MC_STOCK:-}" ]; then
	[ -f "$here/build.sh" ] ||
		die "set MC_STOCK (and MC_PATCHED) to memcached binaries built with patch 0001"
	# fetch.sh is a no-op once the source is there; MC_ADD_DEB_SRC=1
	# lets it add a deb-src entry, as make check-memcached does.
	fetch_args=
	[ "${MC_ADD_DEB_SRC:-}" = 1 ] && fetch_args=--add-deb-src
	# shellcheck disable=SC2086
	top_builddir=$top_builddir MC_BUILD=$MC_BUILD \
		bash "$here/fetch.sh" $fetch_args
	variants="stock"
	[ "${MC_PATCHED:-}" = none ] || variants="stock patched"
	# shellcheck disable=SC2086
	top_builddir=$top_builddir MC_BUILD=$MC_BUILD \
		bash "$here/build.sh" $variants
	MC_STOCK=$(server_of stock)
	[ "${MC_PATCHED:-}" = none ] || MC_PATCHED=$(server_of patched)
fi
# Patch 0001 counts only what goes through lru_lock(): a later patch that
# locks lru_locks[] directly would make the patched counts look smaller
# than they are. So a direct pthread_mutex_*lock() of lru_locks[] in the
# patched tree that the stock tree does not have stops the run
# (MC_BENCH_UNCOUNTED_OK=1 to go on regardless). Handing &lru_locks[i] to
# lockbatch is fine when its lock callback is lru_lock().
uncounted() {
	local s=${1%/*} p=${2%/*} re='pthread_mutex_[a-z]*lock *\( *&? *lru_locks'
	[ -f "$s/items.c" ] && [ -f "$p/items.c" ] || return 0
	comm -13 <(cd "$s" && grep -hE "$re" ./*.c ./*.h | sort -u) \
		<(cd "$p" && grep -hE "$re" ./*.c ./*.h | sort -u)
}
if [ -n "${MC_PATCHED:-}" ] && [ "$MC_PATCHED" != none ]; then
	extra=$(uncounted "$MC_STOCK" "$MC_PATCHED")
	if [ -n "$extra" ]; then
		log "the patched tree locks lru_locks[] outside lru_lock():"
		printf '    %s\n' "$extra" >&2
		[ "${MC_BENCH_UNCOUNTED_OK:-}" = 1 ] ||
			die "its LRU lock counts would be incomplete"
	fi
fi
args=(--stock "$MC_STOCK")
if [ -n "${MC_PATCHED:-}" ] && [ "$MC_PATCHED" != none ]; then
	args+=(--patched "$MC_PATCHED")
fi
log "load: $(cat /proc/loadavg)"
exec "$bench" "${args[@]}" --json-out bench-memcached.json \
	--plot bench-memcached.png "$@"
