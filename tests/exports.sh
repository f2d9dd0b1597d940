#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make check: liblockbatch.so exports exactly the functions and variables
# that include/lockbatch/*.h declare, each under the version node
# LOCKBATCH_0.1 (nm -D shows name@@LOCKBATCH_0.1), and lib/lockbatch.map,
# the version script that does it, names the same set. A public function
# added to a header without `make abi-update` fails here, and so does an
# lb_ helper that leaks out without a declaration.
# Environment (mk/abi.am): top_builddir, LB_SRCDIR, LB_CC, LB_BUILD_CFLAGS.
set -eu
b=${top_builddir:-.}
src=${LB_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
node=LOCKBATCH_0.1
lib=$(sed -n "s/^dlname='\(.*\)'$/\1/p" "$b/liblockbatch.la")
[ -n "$lib" ] || { echo "SKIP: no shared library (--disable-shared)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086 # the flags are words on purpose
sh "$src/tools/abi-names.sh" "$src" "$b" "${LB_CC:-cc}" ${LB_BUILD_CFLAGS:-} >"$tmp/headers"
sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$src/lib/lockbatch.map" |
	LC_ALL=C sort >"$tmp/map"
# Every defined dynamic symbol but the version node's own definition.
nm -D --defined-only "$b/.libs/$lib" | awk '{ print $3 }' |
	grep -v "^$node\$" | LC_ALL=C sort >"$tmp/nm"

bad=0
[ -s "$tmp/headers" ] || { echo "FAIL: no declarations found in $src/include/lockbatch"; exit 1; }
if ! diff -u "$tmp/headers" "$tmp/map" >"$tmp/d"; then
	echo "FAIL: lib/lockbatch.map differs from the headers (- headers, + map); run make abi-update:"
	cat "$tmp/d"; bad=1
fi
sed "s/\$/@@$node/" "$tmp/headers" >"$tmp/want"
if ! diff -u "$tmp/want" "$tmp/nm" >"$tmp/d"; then
	echo "FAIL: nm -D $lib differs from the headers (- declared, + exported):"
	cat "$tmp/d"; bad=1
fi
[ $bad -eq 0 ] && echo "ok: $lib exports the $(wc -l <"$tmp/want") declared names, each @@$node"
exit $bad
