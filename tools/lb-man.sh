#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Man pages from the public headers' kernel-doc comments.
#
#   lb-man.sh KERNEL-DOC OUTDIR VERSION HEADER...
#
# tools/kernel-doc -man prints one .TH page per documented item. Every
# function (and function-like or object-like macro, and function-pointer
# typedef) becomes its own page NAME.3; the overview (DOC: sections),
# structs and enums of a header become the header's page: lockbatch.3 for
# the umbrella lockbatch.h, lb_<header>.3 for the others. A struct or enum
# also gets a page of its own (`man lb_pcp_conf`), unless a function or a
# header page has its name (lb_pcp_stats(3) is the function; its struct
# stays in lb_pcp(3)). OUTDIR/pages lists every page written, one per line
# (install and check use it).
set -eu

kdoc=$1 outdir=$2 version=$3
shift 3
mkdir -p "$outdir"
: > "$outdir/pages.tmp"

hdrpages=
for h in "$@"; do
	base=$(basename "$h" .h)
	[ "$base" = lockbatch ] || hdrpages="$hdrpages lb_$base"
done

for h in "$@"; do
	base=$(basename "$h" .h)
	if [ "$base" = lockbatch ]; then page=lockbatch; else page=lb_$base; fi
	perl "$kdoc" -man "$h" | awk -v outdir="$outdir" -v ver="$version" \
		-v page="$page" -v inc="lockbatch/$base.h" \
		-v hdrpages="$hdrpages" '
	function quoted(s, n,   a, i, parts) {
		# field n of a .TH line whose fields are all double-quoted
		split(s, parts, "\"")
		return parts[2 * n]
	}
	function seealso(f) {
		print ".SH \"SEE ALSO\"" > f
		print ".BR " page " (3)" (page == "lockbatch" ? "" : ",") > f
		if (page != "lockbatch")
			print ".BR lockbatch (3)" > f
	}
	function close_func() {
		if (out == "")
			return
		seealso(out)
		close(out)
		out = ""
	}
	BEGIN { out = ""; mode = ""; nfunc = 0; nbody = 0; desc = ""; nitem = 0 }
	/^\.TH / {
		close_func()
		if (quoted($0, 1) != "Kernel API") {
			name = quoted($0, 1)
			out = outdir "/" name ".3"
			funcs[++nfunc] = name
			mode = "func"
			printf(".TH \"%s\" 3 \"%s\" \"lockbatch %s\" \"lockbatch Manual\"\n",
			       name, quoted($0, 3), ver) > out
			print name >> (outdir "/pages.tmp")
		} else {
			mode = "hdr"
			title = quoted($0, 2)
			date = quoted($0, 3)
			item = ""
			if (title ~ /^(struct|enum) lb_[a-z0-9_]+$/) {
				split(title, tw, " ")
				item = outdir "/" tw[2] ".3.item"
				items[++nitem] = item
				printf(".TH \"%s\" 3 \"%s\" \"lockbatch %s\" \"lockbatch Manual\"\n",
				       tw[2], date, ver) > item
			}
		}
		next
	}
	mode == "func" {
		print > out
		if ($0 == ".SH SYNOPSIS") {
			print ".B #include <" inc ">" > out
			print ".sp" > out
		}
		next
	}
	mode == "hdr" && title == "Kernel API" {
		# A DOC: section: its first title names the header page.
		if (desc == "" && $0 ~ /^\.SH "/)
			desc = quoted($0, 1)
		body[++nbody] = $0
		next
	}
	mode == "hdr" {
		if (item != "") {
			# whatis(1) wants the page name alone in NAME, not
			# "struct lb_x \\- ...".
			line = $0
			if (prev == ".SH NAME")
				sub(/^(struct|enum) /, "", line)
			print line > item
			if ($0 == ".SH SYNOPSIS") {
				print ".B #include <" inc ">" > item
				print ".sp" > item
			}
		}
		prev = $0
		if ($0 == ".SH NAME")
			body[++nbody] = ".SH \"" toupper(title) "\""
		else if ($0 ~ /^\.SH /)
			body[++nbody] = ".SS" substr($0, 4)
		else
			body[++nbody] = $0
		next
	}
	END {
		close_func()
		for (i = 1; i <= nitem; i++) {
			seealso(items[i])
			close(items[i])
		}
		f = outdir "/" page ".3"
		printf(".TH \"%s\" 3 \"%s\" \"lockbatch %s\" \"lockbatch Manual\"\n",
		       page, date, ver) > f
		print ".SH NAME" > f
		print page " \\- " (desc == "" ? inc : desc) > f
		print ".SH SYNOPSIS" > f
		print ".B #include <" inc ">" > f
		print ".sp" > f
		print ".B pkg-config --cflags --libs lockbatch" > f
		for (i = 1; i <= nbody; i++)
			print body[i] > f
		if (nfunc) {
			print ".SH FUNCTIONS AND MACROS" > f
			for (i = 1; i <= nfunc; i++)
				print ".BR " funcs[i] " (3)" (i < nfunc ? "," : "") > f
		}
		if (page == "lockbatch") {
			print ".SH \"SEE ALSO\"" > f
			n = split(hdrpages, hp, " ")
			for (i = 1; i <= n; i++)
				print ".BR " hp[i] " (3)" (i < n ? "," : "") > f
		} else {
			print ".SH \"SEE ALSO\"" > f
			print ".BR lockbatch (3)" > f
		}
		close(f)
		print page >> (outdir "/pages.tmp")
	}'
done

# Struct and enum pages whose name no other page has.
for f in "$outdir"/*.3.item; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .3.item)
	if grep -qx "$name" "$outdir/pages.tmp"; then
		rm -f "$f"
	else
		mv "$f" "$outdir/$name.3"
		echo "$name" >> "$outdir/pages.tmp"
	fi
done

# Two pages of one name would overwrite each other: refuse.
dup=$(sort "$outdir/pages.tmp" | uniq -d)
if [ -n "$dup" ]; then
	echo "lb-man.sh: more than one page named:" $dup >&2
	exit 1
fi
sort "$outdir/pages.tmp" > "$outdir/pages"
rm -f "$outdir/pages.tmp"
