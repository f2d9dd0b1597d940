#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The owner path under each switch: by default (rseq where the machine has
# it), with LB_RSEQ=0, and with glibc's rseq registration off; after a
# dlopen() with a thread that predates it; and the rseq stress test again
# under each switch that forces the lock path.
set -u
b=${top_builddir:-.}
fail=0

# Where the build or the machine rules out rseq, that reason wins.
case $(uname -m):${LB_TSAN_BUILD:-0} in
x86_64:0) fixed= ;;
x86_64:1) fixed='lock (ThreadSanitizer build)' ;;
*) fixed='lock (*' ;;
esac

check() {	# expected-name, env...
	want=${fixed:-$1}
	shift
	got=$(env "$@" "$b/tests/rseq-path") || { echo "FAIL: rseq-path $*"; fail=1; return; }
	case $got in
	$want) echo "ok - $* -> $got" ;;
	*) echo "FAIL - $*: got '$got', want '$want'"; fail=1 ;;
	esac
}

check 'rseq' LB_RSEQ=1
check 'lock (LB_RSEQ=0)' LB_RSEQ=0
check 'lock (glibc did not register rseq)' GLIBC_TUNABLES=glibc.pthread.rseq=0

# A thread started before the library was loaded (dlopen) keeps glibc's
# registration, and the loading constructor still chooses the rseq path.
so="$b/.libs/liblockbatch.so"
if [ -f "$so" ]; then
	want="${fixed:-rseq} 1"
	got=$("$b/tests/rseq-dlopen" "$so")
	case $got in
	$want) echo "ok - dlopen with an older thread -> $got" ;;
	*) echo "FAIL - dlopen with an older thread: got '$got', want '$want'"; fail=1 ;;
	esac
else
	echo "ok - # SKIP no shared library to dlopen"
fi

for e in LB_RSEQ=0 GLIBC_TUNABLES=glibc.pthread.rseq=0; do
	if out=$(env $e "$b/tests/stress/stress_rseq" 2>&1) &&
	   ! printf '%s\n' "$out" | grep -q '^not ok'; then
		echo "ok - stress_rseq with $e"
	else
		echo "FAIL - stress_rseq with $e:"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
		fail=1
	fi
done
exit $fail
