#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Regenerate patches/ from a kernel git tree whose history is
#   <base commit: the unpacked linux-source-6.12 tree> .. HEAD = the series.
#
# usage: scripts/export-series.sh KERNEL_GIT_TREE BASE_COMMIT
#
# The cover letter text (subject on the first line, then the body) is kept
# in patches/cover-letter.txt and filled into git format-patch's template.
# The patches carry no From: and no Signed-off-by: the person who submits
# them adds their own identity and DCO sign-off (see the cover letter);
# scripts/commit-series.sh does that in a kernel git tree.
set -eu

tree=$1
base=$2
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/patches

rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
git -C "$tree" format-patch -q --cover-letter --no-signature --zero-commit \
	-o "$out" "$base..HEAD"

cover=$out/0000-cover-letter.patch
subject=$(head -n 1 "$out/cover-letter.txt")
tail -n +3 "$out/cover-letter.txt" > "$cover.blurb"
awk -v subject="$subject" -v blurb="$cover.blurb" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subject) }
	/^\*\*\* BLURB HERE \*\*\*$/ {
		while ((getline line < blurb) > 0)
			print line
		next
	}
	{ print }
' "$cover" > "$cover.new"
mv "$cover.new" "$cover"
rm -f "$cover.blurb"

# Drop the throwaway author identity of the export tree: only the header
# block's From: line (up to the first empty line) is removed.
for p in "$out"/[0-9][0-9][0-9][0-9]-*.patch; do
	awk 'NR > 1 && !body && /^$/ { body = 1 }
	     !body && /^From: / { next }
	     { print }' "$p" > "$p.new"
	mv "$p.new" "$p"
done

(cd "$out" && ls [0-9][0-9][0-9][1-9]-*.patch) > "$out/series"
