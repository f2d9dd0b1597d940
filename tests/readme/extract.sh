#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Pull every C code block out of README.md, so the documentation is
# compiled and run and cannot rot.
#
#   extract.sh README.md OUTDIR NAME...
#
# Each ```c block must follow a line "<!-- readme-program: NAME -->"; it is
# written to OUTDIR/block-NAME.c. A block with no name, a name used twice,
# or a set of names other than NAME... (the programs the build knows)
# fails, so no block escapes the build. Complete programs (with main) are
# built as they are; fragments are #included by tests/readme/wrap-NAME.c.
set -eu
readme=$1 outdir=$2
shift 2
mkdir -p "$outdir"
: > "$outdir/names.tmp"

awk -v outdir="$outdir" -v names="$outdir/names.tmp" '
	/^<!-- readme-program: [a-z0-9_-]+ -->$/ { name = $3; next }
	/^```c$/ {
		if (name == "") {
			printf("%s:%d: C block without a readme-program name\n",
			       FILENAME, NR) > "/dev/stderr"
			exit 1
		}
		if (name in seen) {
			printf("%s:%d: readme-program %s named twice\n",
			       FILENAME, NR, name) > "/dev/stderr"
			exit 1
		}
		seen[name] = 1
		out = outdir "/block-" name ".c"
		printf("/* Extracted from README.md line %d: edit it there. */\n",
		       NR + 1) > out
		inblock = 1
		print name > names
		next
	}
	inblock && /^```$/ { close(out); inblock = 0; name = ""; next }
	inblock { print > out; next }
	/^```/ { name = "" }
' "$readme"
found=$(sort "$outdir/names.tmp" | tr '\n' ' ')
rm -f "$outdir/names.tmp"
want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
if [ "$found" != "$want" ]; then
	echo "extract.sh: README.md has C blocks [ $found] but the build knows [ $want]" >&2
	exit 1
fi
