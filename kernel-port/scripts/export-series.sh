#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Write the series as mail-ready patches.
#
# usage: scripts/export-series.sh KERNEL_GIT_TREE BASE_COMMIT
#        scripts/export-series.sh --signoff "Name <email>" -o DIR \
#                [KERNEL_GIT_TREE BASE_COMMIT]
#
# The first form regenerates patches/ (and series) from a kernel git tree
# whose commits after BASE_COMMIT are the series, keeping each commit's
# author as From: and its Date:.  The stored patches carry no
# Signed-off-by of ours: the project is not a person and cannot certify
# the DCO.  The cover letter text (subject on the first line, then the
# body) is kept in patches/cover-letter.txt, the recipients in
# patches/recipients (one "To: ..." or "Cc: ..." a line).  The project's
# identity, the From: of its own patches and of the cover letter, is the
# one line of patches/author.
#
# The second form is for the person who posts the series: it writes the
# patches (from the tree, or a copy of patches/ without one) to DIR, which
# must not be patches/, and adds "Signed-off-by: Name <email>" to every
# patch, after any port note, as the last trailer.  Nobody else's
# sign-off is added.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
stored=$here/patches
prefix="RFC PATCH v4"
signoff=
out=

while [ $# -gt 0 ]; do
	case $1 in
	--signoff) signoff=$2; shift 2 ;;
	-o) out=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "export-series.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done

if [ -n "$signoff" ]; then
	case $signoff in
	*" <"*@*">") ;;
	*) echo "export-series.sh: --signoff wants \"Name <email>\"" >&2; exit 2 ;;
	esac
	[ -n "$out" ] || { echo "export-series.sh: --signoff needs -o DIR" >&2; exit 2; }
fi
out=${out:-$stored}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "$signoff" ] && [ "$out" = "$stored" ]; then
	echo "export-series.sh: the stored series stays unsigned; pick another -o DIR" >&2
	exit 2
fi

if [ $# -eq 2 ]; then
	tree=$1
	base=$2
	set --
	while read -r kind addr; do
		case $kind in
		To:) set -- "$@" "--to=$addr" ;;
		Cc:) set -- "$@" "--cc=$addr" ;;
		esac
	done < "$stored/recipients"

	rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
	git -C "$tree" format-patch -q --cover-letter --no-signature \
		--zero-commit --subject-prefix="$prefix" "$@" -o "$out" \
		"$base..HEAD"

	cover=$out/0000-cover-letter.patch
	subject=$(head -n 1 "$stored/cover-letter.txt")
	tail -n +3 "$stored/cover-letter.txt" > "$cover.blurb"
	author=$(cat "$stored/author")
	awk -v subject="$subject" -v blurb="$cover.blurb" -v author="$author" '
		/^From: / && !from { print "From: " author; from = skip = 1; next }
		skip && /^[ \t]/ { next }
		{ skip = 0 }
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
elif [ $# -eq 0 ] && [ -n "$signoff" ]; then
	rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch
	cp "$stored"/[0-9][0-9][0-9][0-9]-*.patch "$out"/
else
	echo "usage: see the comment at the top of $0" >&2
	exit 2
fi

(cd "$out" && ls [0-9][0-9][0-9][1-9]-*.patch) > "$out/series"

# The submitter's sign-off goes last, after any port note, on every patch
# and the cover letter alike.
if [ -n "$signoff" ]; then
	for p in "$out"/[0-9][0-9][0-9][1-9]-*.patch; do
		git interpret-trailers --in-place --if-exists addIfDifferent \
			--trailer "Signed-off-by: $signoff" "$p"
	done
fi
