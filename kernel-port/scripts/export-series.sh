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
set -eu

tree=$1
base=$2
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/patches

rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
git -C "$tree" format-patch -q --cover-letter --no-signature \
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

(cd "$out" && ls [0-9][0-9][0-9][1-9]-*.patch) > "$out/series"
