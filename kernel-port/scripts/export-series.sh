#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Regenerate patches/ from a kernel git tree whose history is
#   <base commit: the unpacked linux-source-6.12 tree> .. HEAD = the series.
#
# usage: scripts/export-series.sh KERNEL_GIT_TREE BASE_COMMIT
#
# Each patch keeps its commit's author as From: and its Date:, so that
# git am gives every patch its author back; the commits carry their own
# Signed-off-by: lines.  The cover letter text (subject on the first
# line, then the body) is kept in patches/cover-letter.txt, and the
# recipients in patches/recipients (one "To: ..." or "Cc: ..." a line).
# A commit whose port note ends with "so it is RFC ]" is sent as RFC.
set -eu

tree=$1
base=$2
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/patches

set --
while read -r kind addr; do
	case $kind in
	To:) set -- "$@" "--to=$addr" ;;
	Cc:) set -- "$@" "--cc=$addr" ;;
	esac
done < "$out/recipients"

rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
git -C "$tree" format-patch -q --cover-letter --no-signature --zero-commit \
	--subject-prefix="PATCH 6.12.y v3" "$@" -o "$out" "$base..HEAD"

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

for p in "$out"/[0-9][0-9][0-9][1-9]-*.patch; do
	if grep -q 'so it is RFC ]$' "$p"; then
		sed -i '0,/^Subject: \[PATCH /s//Subject: [RFC PATCH /' "$p"
	fi
done

(cd "$out" && ls [0-9][0-9][0-9][1-9]-*.patch) > "$out/series"
