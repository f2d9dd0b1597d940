#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Render every generated man page (man/pages lists them) with man -l, as
# man(1) would show it, and fail on any groff warning or error, or on any
# kernel-doc warning about the public headers.
set -eu
b=${top_builddir:-.}
command -v man >/dev/null 2>&1 || { echo "SKIP: man not installed"; exit 77; }
[ -s "$b/man/pages" ] || { echo "FAIL: $b/man/pages missing (make all)"; exit 1; }

n=0 bad=0
for p in $(cat "$b/man/pages"); do
	f="$b/man/$p.3"
	if ! out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>&1 >/dev/null) ||
	   [ -n "$out" ]; then
		echo "FAIL: $p.3: ${out:-man failed}"
		bad=$((bad + 1))
	fi
	grep -q '^\.SH NAME' "$f" || { echo "FAIL: $p.3 has no NAME"; bad=$((bad + 1)); }
	# mandb and lintian read NAME as "page \- summary": lexgrog parses it.
	if command -v lexgrog >/dev/null 2>&1 && ! lexgrog "$f" >/dev/null 2>&1; then
		echo "FAIL: $p.3: NAME is not a whatis entry (lexgrog)"; bad=$((bad + 1))
	fi
	n=$((n + 1))
done
# The comments the pages come from: kernel-doc -Wall finds nothing.
src=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
for h in "$src"/include/lockbatch/*.h; do
	w=$(perl "$src/tools/kernel-doc" -none -Wall "$h" 2>&1)
	[ -z "$w" ] || { echo "FAIL: kernel-doc: $w"; bad=$((bad + 1)); }
done
echo "$n pages rendered, $bad with problems"
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
