#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A ThreadSanitizer-built client (tests/tsan/client.c) against the regular,
# uninstrumented library of this build: every callback kind touches plain
# user data that only the library's synchronisation orders, so a clean run
# shows the library's weak __tsan_acquire/__tsan_release annotations reach
# TSan. A deliberate race in the client (--race) must be reported, or TSan
# is not watching. Skips when no TSan runtime links or runs here, and in a
# TSan build of the library (nothing to show there).
set -eu
b=${top_builddir:-.}
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cc=${LB_CC:-cc}

if [ -n "${LB_TSAN_BUILD:-}" ]; then
	echo "SKIP: the library itself is built with TSan"
	exit 77
fi
lib=$(cd "$b/.libs" 2>/dev/null && pwd)/liblockbatch.so
[ -f "$lib" ] || { echo "SKIP: no shared library in $b/.libs"; exit 77; }
if nm -D "$lib" | grep -q ' U __\(tsan_func_entry\|asan_init\)'; then
	echo "SKIP: $lib is built with a sanitizer"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! $cc -fsanitize=thread -g -O1 -Wall -Wextra -I"$src/include" \
	-I"$b/include" "$src/tests/tsan/client.c" -o "$tmp/client" "$lib" \
	-Wl,-rpath,"$(dirname "$lib")" -lpthread 2>"$tmp/cc.log"; then
	echo "SKIP: cannot build with -fsanitize=thread:"; cat "$tmp/cc.log"
	exit 77
fi

TSAN_OPTIONS="exitcode=66 halt_on_error=0${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
export TSAN_OPTIONS
set +e
"$tmp/client" --race >"$tmp/race.log" 2>&1
rc=$?
set -e
if [ "$rc" -ne 66 ] || ! grep -q 'WARNING: ThreadSanitizer: data race' "$tmp/race.log"; then
	if grep -q 'FATAL: ThreadSanitizer' "$tmp/race.log"; then
		echo "SKIP: the TSan runtime cannot run here:"; head -3 "$tmp/race.log"
		exit 77
	fi
	echo "FAIL: TSan did not report the client's own race (exit $rc)"
	cat "$tmp/race.log"
	exit 1
fi
echo "ok: TSan reports the client's own race"

set +e
"$tmp/client" >"$tmp/run.log" 2>&1
rc=$?
set -e
cat "$tmp/run.log" | grep -v '^$' | head -60
if [ "$rc" -ne 0 ] || grep -q 'ThreadSanitizer' "$tmp/run.log"; then
	echo "FAIL: the TSan-built client failed a check or reports races against the regular library (exit $rc)"
	exit 1
fi
echo "ok: clean TSan run of every callback kind against the regular library"
