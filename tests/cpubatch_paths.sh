#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# lb_cpubatch's property and stress programs on the lock path: `make check`
# runs them as they are (the rseq path where the machine has it), and this
# script runs them again with LB_RSEQ=0, checking that the real-CPU stress
# test reports the lock path then.
set -u
b=${top_builddir:-.}
fail=0

for t in prop/prop_cpubatch prop/prop_cpubatch_settle \
	prop/prop_cpubatch_nested stress/stress_cpubatch \
	stress/stress_cpubatch_drain stress/stress_cpubatch_drainfree \
	stress/stress_cpubatch_rseq; do
	p="$b/tests/$t"
	[ -x "$p" ] || continue
	if out=$(LB_RSEQ=0 "$p" 2>&1); then
		echo "ok - LB_RSEQ=0 $t"
	else
		echo "FAIL - LB_RSEQ=0 $t"
		echo "$out" | tail -20
		fail=1
	fi
	case $t in
	stress/stress_cpubatch_rseq)
		case $out in
		*"instance path: lock"*) echo "ok - $t reports the lock path" ;;
		*) echo "FAIL - $t did not report the lock path"; fail=1 ;;
		esac ;;
	esac
done
exit $fail
