#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Run every program built from README.md's C blocks (tests/readme/): each
# must exit 0.
set -eu
b=${top_builddir:-.}
n=0
for p in tour settle pcp lru pool; do
	if ! out=$("$b/tests/readme/$p" 2>&1); then
		printf 'FAIL: README program %s\n%s\n' "$p" "$out"
		exit 1
	fi
	echo "ok: README program $p"
	n=$((n + 1))
done
echo "$n README programs ran"
