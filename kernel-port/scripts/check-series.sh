#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# check-series.sh PATCHDIR UPSTREAMDIR: who the series says wrote what.
#
# Every patch listed in PATCHDIR/series, and the cover letter, is one of:
#
# - a patch of ours: From: is the project identity (PATCHDIR/author), and
#   its message has no Signed-off-by, Suggested-by, Reviewed-by,
#   Acked-by, Tested-by, Reported-by, Co-developed-by or Link trailer.
#   The project is not a person: the sign-off is added by whoever posts
#   the series (scripts/export-series.sh --signoff), and nobody has given
#   us any other tag.
#
# - a cherry-pick of an upstream commit, in the stable form: the first
#   line of the body is "commit <40-hex sha> upstream.", and after the
#   upstream message comes one bracketed port note "[ ... ]" and nothing
#   else.  UPSTREAMDIR/<sha>.txt must hold the commit as fetched from a
#   public Linux tree with
#       git log -1 --format='%an <%ae>%n%B' <sha>
#   and the patch's From:, subject, body and trailers must equal it
#   exactly.  A commit whose text could not be fetched cannot be carried.
set -u

dir=$1
up=$2
author=$(cat "$dir/author")
fail=0
n_ours=0
n_picks=0

bad() {
	echo "kernel-port: series: $1" >&2
	fail=1
}

# The message of a patch file: the Subject (unfolded, without its
# [PATCH ...] prefix) on the first line, then the body up to the "---"
# line that starts the diffstat.
message() {
	awk '
		hdr && /^Subject: / { subj = substr($0, 10); insubj = 1; next }
		hdr && insubj && /^[ \t]/ { sub(/^[ \t]+/, " "); subj = subj $0; next }
		hdr && /^$/ {
			hdr = 0
			sub(/^\[[^]]*\] */, "", subj)
			print subj
			print ""
			next
		}
		hdr { insubj = 0; next }
		/^---$/ { exit }
		{ print }
		BEGIN { hdr = 1 }
	' "$1"
}

from_of() {
	git mailinfo /dev/null /dev/null < "$1" |
		sed -n 's/^Author: //p;s/^Email: \(.*\)/<\1>/p' | paste -sd' '
}

check_ours() {
	p=$1
	name=$(basename "$p")
	[ "$(from_of "$p")" = "$author" ] ||
		bad "$name: From: $(from_of "$p"), not the project ($author)"
	tags=$(message "$p" | grep -iE '^(Signed-off-by|Suggested-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Co-developed-by|Link):' || true)
	[ -z "$tags" ] || bad "$name: trailers nobody gave us: $(echo "$tags" | paste -sd';')"
	n_ours=$((n_ours + 1))
}

check_pick() {
	p=$1
	sha=$2
	name=$(basename "$p")
	f=$up/$sha.txt
	if [ ! -f "$f" ]; then
		bad "$name: cherry-pick of $sha, but $f (the fetched upstream text) is missing"
		return
	fi
	[ "$(from_of "$p")" = "$(head -n 1 "$f")" ] ||
		bad "$name: From: $(from_of "$p"), upstream author $(head -n 1 "$f")"
	# Upstream's message: the patch's, less the "commit <sha> upstream."
	# line with the blank line after it, and less the port note.
	message "$p" | awk -v sha="$sha" '
		!seen && $0 == "commit " sha " upstream." { seen = 1; skipblank = 1; next }
		skipblank && /^$/ { skipblank = 0; next }
		{ skipblank = 0 }
		/^\[ / { note = 1 }
		note { if (/ \]$/) { note = 0; after = 1 } next }
		after { if (!/^$/) extra = 1; next }
		{ print }
		END { if (extra) print "EXTRA-AFTER-PORT-NOTE" }
	' > "$TMPD/picked"
	tail -n +2 "$f" > "$TMPD/upstream"
	# format-patch and git log differ only in trailing blank lines
	for t in picked upstream; do
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$TMPD/$t" > "$TMPD/$t.trim"
	done
	if ! cmp -s "$TMPD/picked.trim" "$TMPD/upstream.trim"; then
		bad "$name: text differs from upstream $sha:"
		diff -u "$TMPD/upstream.trim" "$TMPD/picked.trim" | head -n 20 >&2
	fi
	message "$p" | grep -q '^\[ ' ||
		bad "$name: cherry-pick of $sha without a bracketed port note"
	n_picks=$((n_picks + 1))
}

TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

for p in "$dir/0000-cover-letter.patch" $(sed "s|^|$dir/|" "$dir/series"); do
	[ -f "$p" ] || { bad "$(basename "$p") is missing"; continue; }
	sha=$(message "$p" | sed -n 's/^commit \([0-9a-f]\{40\}\) upstream\.$/\1/p' | head -n 1)
	if message "$p" | grep -qE '^commit [0-9a-f]+ upstream\.$' && [ -z "$sha" ]; then
		bad "$(basename "$p"): the upstream commit id must be given in full (40 hex digits)"
	elif [ -n "$sha" ]; then
		check_pick "$p" "$sha"
	else
		check_ours "$p"
	fi
done

[ $fail = 0 ] || exit 1
echo "kernel-port: series: $n_ours patches of ours (From: the project, no tags nobody gave), $n_picks cherry-picks equal to upstream"
