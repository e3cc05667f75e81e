#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run_tests.sh - run every kcc selftest and report in TAP, the way the
# kernel's kselftest runner does: one top-level result per test, the
# test's own output indented as "# " lines under it.
#
# Tests are the programs in $KCC_TESTBIN and the scripts
# selftests/kcc/*.sh.  Scripts get KCC (the kcc binary to test),
# KCC_TESTBIN and KDIR in their environment and run from the top of the
# repository.  Exit status 4 means skip.
#
# The last line counts the subtest result lines of all tests:
#	P passed, F failed, S skipped
# plus one failure for a test that crashed, exited non-zero or ran fewer
# subtests than it planned without saying "not ok" itself, and one skip
# for a test that skipped as a whole without a result line of its own.
# Exit status 1 when anything failed.
#
# Each test may run KCC_TEST_TIMEOUT seconds (default 600), or what a
# script declares in a header line "# timeout: SECONDS" (as kselftest's
# per-directory settings file does): a test that bounds its own parts,
# such as guest.sh's boots, declares the sum of those bounds.

KSFT_SKIP=4
TIMEOUT=${KCC_TEST_TIMEOUT:-600}

cd "$(dirname "$0")/.." || exit 1

export KCC KCC_TESTBIN KDIR

# Collect the tests as positional parameters: paths may hold spaces.
set --
if [ -n "$KCC_TESTBIN" ] && [ -d "$KCC_TESTBIN" ]; then
	for t in "$KCC_TESTBIN"/*; do
		[ -f "$t" ] && [ -x "$t" ] && set -- "$@" "$t"
	done
fi
for t in selftests/kcc/*.sh; do
	[ -f "$t" ] && set -- "$@" "$t"
done

out=$(mktemp "${TMPDIR:-/tmp}/kcc-test.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT TERM

# The time limit of test $1: its declared one (a "# timeout: N" line in
# its header comment, within the first 80 lines), or $TIMEOUT.
limit_of() {
	l=
	case $1 in
	*.sh) l=$(sed -n '1,80s/^# timeout: \([0-9][0-9]*\)$/\1/p' "$1" | head -n 1) ;;
	esac
	echo "${l:-$TIMEOUT}"
}

if command -v timeout >/dev/null 2>&1; then
	run_limited() { timeout "$limit" "$@"; }
else
	run_limited() { "$@"; }
fi

echo "TAP version 13"
echo "1..$#"

pass=0
fail=0
skip=0
i=0
for t in "$@"; do
	i=$((i + 1))
	name=$(basename "$t")
	limit=$(limit_of "$t")
	start=$(date +%s)
	case "$t" in
	*.sh) run_limited sh "$t" >"$out" 2>&1 ;;
	*) run_limited "$t" >"$out" 2>&1 ;;
	esac
	rc=$?
	sed 's/^/# /' "$out"
	echo "# $name: $(( $(date +%s) - start )) s"

	# Subtest lines of this test: passes, failures, skips, plan.
	p=0 f=0 s=0 plan=0
	eval "$(awk '
		/^not ok / { f++; next }
		/^ok / { if (tolower($0) ~ /# skip/) s++; else p++; next }
		/^1\.\.[0-9]+/ && plan == "" { plan = substr($1, 4) + 0 }
		END { printf "p=%d f=%d s=%d plan=%d\n", p, f, s, plan }
	' "$out")"
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))

	why=""
	if [ "$rc" -eq "$KSFT_SKIP" ] && [ "$f" -eq 0 ]; then
		[ $((p + s)) -eq 0 ] && skip=$((skip + 1))
		echo "ok $i selftests: kcc: $name # SKIP"
		continue
	fi
	if [ "$rc" -eq 124 ] && [ -n "$(command -v timeout)" ]; then
		why="timeout after ${limit}s"
	elif [ "$rc" -ne 0 ]; then
		why="exit=$rc"
	fi
	if [ "$plan" -gt 0 ] && [ $((p + f + s)) -lt "$plan" ]; then
		why="${why:+$why, }ran $((p + f + s)) of $plan planned subtests"
	fi
	if [ -n "$why" ] || [ "$f" -gt 0 ]; then
		# A crash or a short run is a failure nobody reported.
		[ "$f" -eq 0 ] && fail=$((fail + 1))
		echo "not ok $i selftests: kcc: $name # ${why:-failed}"
	else
		echo "ok $i selftests: kcc: $name"
	fi
done

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
