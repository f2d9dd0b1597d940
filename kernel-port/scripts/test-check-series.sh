#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# test-check-series.sh WORKDIR: check-series.sh on a made-up series (one
# cherry-pick of a commit in a scratch repository, one patch of ours),
# which it must pass, and on copies with one fault each, which it must
# fail.  The series holds no cherry-pick today, so this is what shows that
# the cherry-pick comparison works.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
w=$1
rm -rf "$w"
mkdir -p "$w/repo" "$w/up"
proj="Project <project@example.invalid>"
g() {
	git -C "$w/repo" -c user.name=Committer -c user.email=c@example.invalid "$@"
}

g init -q
echo a > "$w/repo/f"
g add f
g commit -q -m base
g tag base
echo b >> "$w/repo/f"
g add f
printf 'sub: an upstream change\n\nWhy it is made.\n\nLink: https://example.invalid/1\nSigned-off-by: Upstream Author <ua@example.invalid>\n' |
	g commit -q --author="Upstream Author <ua@example.invalid>" -F -
sha=$(g rev-parse HEAD)
g log -1 --format='%an <%ae>%n%B' "$sha" > "$w/up/$sha.txt"

# The same change as a stable-form cherry-pick onto base, then ours.
g checkout -q -b pick base
echo b >> "$w/repo/f"
g add f
printf 'sub: an upstream change\n\ncommit %s upstream.\n\nWhy it is made.\n\nLink: https://example.invalid/1\nSigned-off-by: Upstream Author <ua@example.invalid>\n[ port: context only ]\n' "$sha" |
	g commit -q --author="Upstream Author <ua@example.invalid>" -F -
echo c >> "$w/repo/f"
g add f
printf 'sub: a change of ours\n\nWhy.\n' | g commit -q --author="$proj" -F -

mkdir -p "$w/ok"
g format-patch -q --cover-letter -o "$w/ok" base..pick
sed -i "0,/^From: .*/s//From: $proj/" "$w/ok/0000-cover-letter.patch"
echo "$proj" > "$w/ok/author"
(cd "$w/ok" && ls 000[1-9]-*.patch) > "$w/ok/series"

expect() {
	want=$1
	case_dir=$2
	if sh "$here/check-series.sh" "$case_dir" "$w/up" > "$w/out" 2>&1; then
		got=pass
	else
		got=fail
	fi
	if [ "$got" != "$want" ]; then
		cat "$w/out" >&2
		echo "kernel-port: check-series self-test: $(basename "$case_dir") should $want" >&2
		exit 1
	fi
}

# variant NAME SED-SCRIPT PATCH: a copy of the good series with one edit
variant() {
	rm -rf "$w/$1"
	cp -r "$w/ok" "$w/$1"
	sed -i "$2" "$w/$1/"$3
}

expect pass "$w/ok"
variant reworded 's/^Why it is made\.$/Why it was made./' 0001-*.patch
expect fail "$w/reworded"
variant trailer '/^Signed-off-by: Upstream/a Reviewed-by: Someone Else <se@example.invalid>' 0001-*.patch
expect fail "$w/trailer"
variant signed_note '/^\[ port: context only \]$/a Signed-off-by: Upstream Author <ua@example.invalid>' 0001-*.patch
expect fail "$w/signed_note"
variant short_id "s/^commit $sha upstream\.$/commit $(echo "$sha" | cut -c1-12) upstream./" 0001-*.patch
expect fail "$w/short_id"
variant suggested '/^Why\.$/a \
\
Suggested-by: Someone Else <se@example.invalid>' 0002-*.patch
expect fail "$w/suggested"
variant ours_signed '/^Why\.$/a \
\
Signed-off-by: Project <project@example.invalid>' 0002-*.patch
expect fail "$w/ours_signed"
variant other_author 's/^From: Project .*/From: Someone Else <se@example.invalid>/' 0002-*.patch
expect fail "$w/other_author"
rm -rf "$w/nofetch"
cp -r "$w/ok" "$w/nofetch"
mv "$w/up/$sha.txt" "$w/up.txt"
expect fail "$w/nofetch"
mv "$w/up.txt" "$w/up/$sha.txt"
echo "kernel-port: check-series self-test: 1 good series passes, 8 faulty ones fail"
