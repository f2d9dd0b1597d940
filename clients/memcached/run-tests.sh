#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# run-tests.sh VARIANT OUTDIR TEST... - run memcached's own t/ files (names
# like t/lru.t) against one built variant, MC_TEST_JOBS files at once (the
# suite mostly sleeps), each under a time bound (MC_TEST_TIMEOUT seconds).
# Writes OUTDIR/NAME.log and OUTDIR/NAME.result (pass, skip or fail) per
# file and prints one "RESULT NAME SECONDS" line per file.
set -euo pipefail
. "$(dirname "$0")/common.sh"
[ $# -ge 3 ] || mc_die "usage: run-tests.sh VARIANT OUTDIR TEST..."
v=$1 out=$2
shift 2
dir=$MC_BUILD/$v
[ -x "$dir/memcached-debug" ] || mc_die "$v is not built"
mkdir -p "$out"
out=$(cd "$out" && pwd)

one() {
	local t=$1 name rc=0 res t0
	name=$(basename "$t" .t)
	t0=$(date +%s)
	# The suite's MemcachedTest.pm takes the current directory as the
	# build directory.
	(cd "$dir" && timeout -k 10 "${MC_TEST_TIMEOUT:-300}" perl "$t") \
		> "$out/$name.log" 2>&1 < /dev/null || rc=$?
	if [ $rc -ne 0 ]; then
		res=fail
	elif grep -q '^1\.\.0 # [Ss]kip' "$out/$name.log"; then
		res=skip
	else
		res=pass
	fi
	echo "$res" > "$out/$name.result"
	echo "$res $name $(( $(date +%s) - t0 ))"
}
export -f one
export dir out
printf '%s\n' "$@" | xargs -P "${MC_TEST_JOBS:-4}" -I{} bash -c 'one {}'
