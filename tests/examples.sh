#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Smoke-run every example with tiny parameters: they must run to the end
# and print well-formed output.
set -eu
b=${top_builddir:-.}
"$b/examples/lru-fault" --threads 2 --mem 256K --loops 2 --json >/dev/null
"$b/examples/lru-fault" --threads 3 --mem 128K --loops 1 --sizes 4K,16K,64K,128K \
	--modes baseline,bypass,weighted,limit >/dev/null
for ex in ${EXTRA_EXAMPLES:-}; do "$b/examples/$ex" --smoke >/dev/null; done
echo ok
