#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# check-evidence.sh RESULTS.md: every file under results/ that the report
# cites must exist next to it, and must not be git-ignored (a clone would
# not have it).  A cited name with a * must match at least one file, and
# each match is checked.
set -u

report=$1
dir=$(cd "$(dirname "$report")" && pwd)
fail=0
n=0

ignored() {
	git -C "$dir" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
		git -C "$dir" check-ignore -q "$1"
}

for cited in $(grep -o 'results/[A-Za-z0-9_.*+-]*[A-Za-z0-9_*]' "$report" | sort -u); do
	found=0
	for f in "$dir"/$cited; do
		[ -f "$f" ] || continue
		found=1
		n=$((n + 1))
		if ignored "$f"; then
			echo "kernel-port: evidence: $cited is git-ignored" >&2
			fail=1
		fi
	done
	if [ $found = 0 ]; then
		echo "kernel-port: evidence: RESULTS.md cites $cited, which is missing" >&2
		fail=1
	fi
done
[ $fail = 0 ] || exit 1
echo "kernel-port: evidence: $n files cited by RESULTS.md are in the tree"
