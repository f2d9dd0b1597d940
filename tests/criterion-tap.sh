#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Automake LOG_COMPILER for the TAP tests. Criterion binaries (tests/unit,
# tests/prop) get --tap on the command line (CRITERION_OUTPUTS leaks under
# LeakSanitizer); stress programs print TAP themselves. An exit status the
# TAP stream cannot explain (a sanitizer report, a crash) becomes
# "Bail out!", because tap-driver.sh runs with --ignore-exit.
prog=$1
shift
case $prog in
*unit/*|*prop/*) "$prog" --tap "$@" ;;
*) "$prog" "$@" ;;
esac
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	echo "Bail out! $prog exited with status $rc"
fi
exit $rc
