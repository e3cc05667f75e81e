#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# benchrun.sh - make bench as a new user runs it: on a fresh clone,
# before make eval has recorded its traces (an empty KCC_EVAL_CACHE),
# bench/run.sh must end with exit 0, say that the real traces are
# missing and what records them, and still print the synthetic trace's
# instructions per LBR sample.  It once printed every table and then
# failed: insns.sh's loop under set -e returned the missing trace's
# test status (Documentation/benchmark.rst).  One pass (-R 1); no
# figure is asserted, only that they are there.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir benchrun
if [ -z "${KCC_BENCH:-}" ] || [ ! -x "$KCC_BENCH" ]; then
	ktap_skip_all "no bench_ksf (set KCC_BENCH: make build/opt/bench/bench_ksf)"
fi
plan 3

top=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$tmp/cache"
run env KCC_EVAL_CACHE="$tmp/cache" BENCH="$KCC_BENCH" \
	sh "$top/bench/run.sh" -R 1
result $rc "make bench without the eval traces: exit 0 (exit $rc)"
[ $rc -eq 0 ] || { tail -n 20 "$tmp/out"; tail -n 20 "$tmp/err"; } | sed 's/^/# /'
grep -q "^bench: no real traces in $tmp/cache/traces: make eval records them$" "$tmp/out"
result $? "make bench says the real traces are missing and what records them"
if command -v valgrind >/dev/null 2>&1; then
	awk '$1 == "synthetic" && $6 ~ /^[0-9]+\.[0-9]$/ { ok = 1 }
	     / \(no trace: make eval records it\)$/ { miss++ }
	     END { exit !(ok && miss == 3) }' "$tmp/out"
	result $? "make bench prints the synthetic trace's instructions per sample, and no trace for bzip2, lua, sqlite"
	grep '^synthetic ' "$tmp/out" | sed 's/^/# /'
else
	skip "valgrind is not installed: no instruction counts"
fi
ktap_exit
