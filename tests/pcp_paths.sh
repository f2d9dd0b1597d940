#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# lb_pcp's owner-path stress test again under each switch that forces the
# lock path for the whole process: every cache must report the lock path
# and every check must hold.
set -u
b=${top_builddir:-.}
fail=0
for e in LB_RSEQ=0 GLIBC_TUNABLES=glibc.pthread.rseq=0; do
	if out=$(env $e "$b/tests/stress/stress_pcp_rseq" 2>&1) &&
	   ! printf '%s\n' "$out" | grep -q '^not ok' &&
	   ! printf '%s\n' "$out" | grep -q 'runs rseq'; then
		echo "ok - stress_pcp_rseq with $e (lock path)"
	else
		echo "FAIL - stress_pcp_rseq with $e:"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
		fail=1
	fi
done
exit $fail
