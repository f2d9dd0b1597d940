#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Case C09: the test suite again with glibc's rseq registration off
# (GLIBC_TUNABLES=glibc.pthread.rseq=0). The library must report that it
# reads the CPU with sched_getcpu(), and every unit, property and stress
# program built in this tree must still pass.
set -u
b=${top_builddir:-.}
GLIBC_TUNABLES=glibc.pthread.rseq=0
export GLIBC_TUNABLES

src=$("$b/tests/cpu-source") || { echo "FAIL: tests/cpu-source"; exit 1; }
echo "cpu-id source with rseq off: $src"
if [ "$src" != sched_getcpu ]; then
	echo "FAIL: expected sched_getcpu"
	exit 1
fi

fail=0
ran=0
for t in "$b"/tests/unit/* "$b"/tests/prop/* "$b"/tests/stress/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	case $t in
	*.o | *.log | *.trs | *.sh) continue ;;
	esac
	ran=$((ran + 1))
	if out=$("$t" 2>&1); then
		echo "ok - $t"
	else
		echo "FAIL - $t; its last lines:"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
		fail=1
	fi
done
echo "$ran programs run with rseq off"
exit $fail
