#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Every library source compiles without optimisation (-O0, the usual debug
# build). An asm operand with the "i" constraint must be a constant at the
# asm itself: a parameter of an always_inline function is one only once
# the optimiser has propagated it, so such a section builds at -O2 and
# fails at -O0 (GCC: "impossible constraint in asm"; clang: "invalid
# operand for inline asm constraint 'i'").
set -u
b=${top_builddir:-.}
s=${LB_SRCDIR:-.}
cc=${LB_CC:-cc}
fail=0
for f in "$s"/lib/*/*.c; do
	if out=$($cc -std=gnu11 -O0 $LB_BUILD_CFLAGS -DHAVE_CONFIG_H -I"$b" \
		 -I"$s/include" -I"$b/include" -I"$s/lib" -c "$f" \
		 -o /dev/null 2>&1); then
		echo "ok - ${f#"$s"/} at -O0"
	else
		echo "FAIL - ${f#"$s"/} at -O0:"
		printf '%s\n' "$out" | grep -E 'error' | head -n 5 | sed 's/^/    /'
		fail=1
	fi
done
exit $fail
