#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Apply patches/series to a kernel git tree as one commit per patch, with
# the committer's own git identity as author and a Signed-off-by: from it
# (the patches deliberately carry neither; by signing off the submitter
# certifies the Developer's Certificate of Origin for them).
#
# usage: scripts/commit-series.sh KERNEL_GIT_TREE
set -eu

tree=$1
here=$(cd "$(dirname "$0")/.." && pwd)

for p in $(cat "$here/patches/series"); do
	git -C "$tree" apply --index "$here/patches/$p"
	# The commit message: the Subject: line (unfolded) and the body up
	# to the "---" line that starts the diffstat.
	awk '/^Subject: / { sub(/^Subject: (\[PATCH[^]]*\] )?/, ""); s = $0; insub = 1; next }
	     insub && /^ / { sub(/^ /, " "); s = s $0; next }
	     insub && /^$/ { print s; print ""; insub = 0; body = 1; next }
	     body && /^---$/ { exit }
	     body { print }' "$here/patches/$p" > "$tree/.git/COMMIT_SERIES_MSG"
	git -C "$tree" commit -q -s -F .git/COMMIT_SERIES_MSG
done
rm -f "$tree/.git/COMMIT_SERIES_MSG"
