#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Print, one a line and sorted, the name of every function and variable
# the public headers (include/lockbatch/*.h) declare with external
# linkage: the interface the library must export, no more and no less.
#
#   abi-names.sh SRCDIR BUILDDIR CC [CPPFLAGS...]
#
# Functions come from the compiler itself (gcc -aux-info lists every
# prototype it saw, with the header it came from), so macros, comments and
# line breaks inside a declaration cannot fool it; static inline helpers
# are not extern and are left out. Variables: `extern TYPE name;` lines of
# the headers (none today). CPPFLAGS must find liburcu's headers, which
# <lockbatch/lru.h> includes.
set -eu
src=$1 build=$2 cc=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for h in "$src"/include/lockbatch/*.h; do
	printf '#include <lockbatch/%s>\n' "${h##*/}"
done >"$tmp/all.c"
# version.h is generated, so it lives in the build tree. -aux-info is
# GCC's: under clang (make fuzz's build) gcc reads the same headers.
for c in "$cc" gcc; do
	$c -std=gnu11 -I"$build/include" -I"$src/include" "$@" -fsyntax-only \
		-aux-info "$tmp/aux" "$tmp/all.c" 2>"$tmp/err" && [ -s "$tmp/aux" ] && break
done
[ -s "$tmp/aux" ] || { cat "$tmp/err" >&2; exit 1; }

{
	# "/* .../include/lockbatch/x.h:12:NC */ extern int lb_f (int);"
	grep '/include/lockbatch/[^ ]*\.h:[0-9]*:[A-Z]* \*/ extern ' "$tmp/aux" |
		sed -e 's|^/\*[^*]*\*/ extern ||' -e 's| (.*$||' \
			-e 's|.*[ *]||'
	# "extern TYPE name;" or "extern TYPE name[N];": no parenthesis.
	cat "$src"/include/lockbatch/*.h |
		sed -n 's/^extern [^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)\(\[[^]]*\]\)*;.*$/\1/p'
} | LC_ALL=C sort -u
