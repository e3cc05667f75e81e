#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# hcct_cli.sh - kcc hcct --guaranteed: the guaranteed count (estimate
# minus Space-Saving error) of every context, and how many hot contexts
# are hot for sure.  Expected outputs worked out by hand with m = 3
# counters (--eps 0.4) and threshold floor(0.5 * 6) = 3.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir hcct_cli
plan 4

# calls NAME...: one top-level call and return each.
calls() {
	for r in "$@"; do
		printf 'call %s\nreturn\n' "$r"
	done
}

# a a a b c d: a keeps its counter from the start (3, error 0); d takes
# over a counter of 1 (count 2, error 1) and stays below the threshold.
calls a a a b c d >"$tmp/sure.txt"
expect_out '3\t3\ta\n# N=6 threshold=3 hot=1 counters=3 sure=1\n' \
	"a context counted from its first call is hot for sure" -- \
	"$KCC" hcct --phi 0.5 --eps 0.4 --guaranteed "$tmp/sure.txt"

# a a b c d d: d takes over a counter of 1 and reaches 3 with error 1;
# its true count is 2, so it is reported hot but not for sure.
calls a a b c d d >"$tmp/unsure.txt"
expect_out '3\t2\td\n# N=6 threshold=3 hot=1 counters=3 sure=0\n' \
	"an evicting context is hot by its estimate only" -- \
	"$KCC" hcct --phi 0.5 --eps 0.4 --guaranteed "$tmp/unsure.txt"
expect_out '3\td\n# N=6 threshold=3 hot=1 counters=3\n' \
	"without --guaranteed the output is unchanged" -- \
	"$KCC" hcct --phi 0.5 --eps 0.4 "$tmp/unsure.txt"

# Figure 2 with 17 counters for its 7 contexts: nothing is evicted, so
# every guaranteed count equals its estimate and all 7 are sure.
run "$KCC" hcct --phi 0.125 --eps 0.0625 --guaranteed \
	selftests/kcc/data/fig2.trace
[ $rc -eq 0 ] && ! sanitized &&
	awk -F '\t' '/^#/ { s = $0; next } $1 != $2 { bad = 1 }
		END { exit bad || s !~ / hot=7 .* sure=7$/ }' "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "no eviction: guaranteed == estimate everywhere, every hot context sure"

ktap_exit
