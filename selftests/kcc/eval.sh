#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# eval.sh - kcc eval end to end: with every call sampled and a full stack
# walk, LBR stitching and stack sampling must give the exact k-CCF bit
# for bit (on the paper's example, on a generated trace with recursion,
# and on a real program traced by the kcc runtime); the accuracy figures
# must be 100% where sampling sees everything and 0% where it sees
# nothing; bad command lines exit 2.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

CC=${CC:-cc}
D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir eval
plan 15

# A program run of 20 routines: calls chosen by a fixed LCG, direct
# recursion one call in twenty, depth between 1 and 30.
awk 'BEGIN {
	s = 12345; d = 1; n = 0; last = "main"
	print "call main"
	while (n < 40000) {
		s = (s * 69069 + 1) % 4294967296
		r = int(s / 65536) % 100
		if (d == 1 || (r < 48 && d < 30)) {
			f = (r < 5) ? last : "f" (int(s / 6553600) % 20)
			print "call " f
			last = f; d++; n++
		} else {
			print "return"; d--
		}
	}
	while (d-- > 0)
		print "return"
}' >"$tmp/gen.trace"

# check_exact DESCRIPTION TRACE: exit 0 and every line "0 of N" (lbr,
# stack and lbr-2ev, whose miss samples must not touch the call counts).
check_exact() {
	run "$KCC" eval --check-exact -k 1,2,3,5 "$2"
	lines=$(grep -c ' 0 of [0-9]* contexts differ, [0-9]* samples, 0 stitch errors$' "$tmp/out")
	if [ $rc -eq 0 ] && ! sanitized && [ "$lines" -eq 12 ]; then
		result 0 "$1"
	else
		show
		result 1 "$1"
	fi
}

check_exact "period 1, full stack: paper's example, lbr and stack exact for k = 1,2,3,5" \
	"$D/fig2.trace"
check_exact "period 1, full stack: generated trace with recursion, exact for k = 1,2,3,5" \
	"$tmp/gen.trace"

if command -v "$CC" >/dev/null 2>&1 &&
   $CC -O2 -c -o "$tmp/rt.o" tools/kcc-trace/kcc_trace_rt.c 2>"$tmp/err" &&
   $CC -O2 -finstrument-functions -o "$tmp/tracee" \
	selftests/kcc/tracer/tracee.c "$tmp/rt.o" -lpthread 2>>"$tmp/err" &&
   mkdir "$tmp/rt" && KCC_TRACE_DIR="$tmp/rt" "$tmp/tracee"; then
	check_exact "period 1, full stack: a program traced by the runtime, exact" \
		"$tmp/rt"
else
	result 0 "# SKIP no C compiler to build a traced program"
fi

# Stack sampling of every call counts each context's calls: 100%.
run "$KCC" eval --tsv -k 2 -m stack -p 1 --jitter 0 --miss-rate 0 \
	"$tmp/gen.trace"
row=$(sed -n 2p "$tmp/out")
[ $rc -eq 0 ] && ! sanitized &&
	[ "$(echo "$row" | cut -f8-10)" = "$(printf '100.0000\t100.0000\t100.0000')" ]
st=$?
[ $st -eq 0 ] || show
result $st "every call sampled: overlap and hot-edge coverage 100%"

# One sample after the last call: an empty stack, nothing seen: 0%.
run "$KCC" eval --tsv -k 2 -m stack -p 100000 --jitter 0 --miss-rate 0 \
	"$tmp/gen.trace"
row=$(sed -n 2p "$tmp/out")
[ $rc -eq 0 ] && ! sanitized &&
	[ "$(echo "$row" | cut -f8-9)" = "$(printf '0.0000\t0.0000')" ]
st=$?
[ $st -eq 0 ] || show
result $st "period longer than the run: overlap 0, coverage 0"

run "$KCC" eval --tsv -k 1,3 "$tmp/gen.trace"
rows=$(($(wc -l <"$tmp/out") - 1))
[ $rc -eq 0 ] && ! sanitized && [ "$rows" -eq 16 ] &&
	head -n 1 "$tmp/out" | grep -q '^program	k	method	period	depth'
st=$?
[ $st -eq 0 ] || show
result $st "TSV: a header and 2 k x 8 methods = 16 rows"
cp "$tmp/out" "$tmp/first"

run "$KCC" eval --tsv -k 1,3 "$tmp/gen.trace"
cmp -s "$tmp/out" "$tmp/first"
result $? "seeded: the same command gives the same figures"

run "$KCC" eval --tsv -k 1,3 --seed 7 "$tmp/gen.trace"
! cmp -s "$tmp/out" "$tmp/first"
result $? "another seed gives other samples"

# Two events: the bursts come from the calls event alone, at the
# schedule lbr has when it samples calls, so the call counts (overlap,
# coverage, calls replayed) are those of lbr --miss-rate 0, whatever the
# miss samples in between; the miss samples are there (more samples).
run "$KCC" eval --tsv -k 1,3 -m lbr --miss-rate 0 "$tmp/gen.trace"
cut -f2,8-11 "$tmp/out" >"$tmp/calls1"
s1=$(sed -n 2p "$tmp/out" | cut -f12)
run "$KCC" eval --tsv -k 1,3 -m lbr-2ev --miss-rate 16 "$tmp/gen.trace"
cut -f2,8-11 "$tmp/out" >"$tmp/calls2"
s2=$(sed -n 2p "$tmp/out" | cut -f12)
[ $rc -eq 0 ] && ! sanitized && [ "$(wc -l <"$tmp/calls2")" -eq 3 ] &&
	cmp -s "$tmp/calls1" "$tmp/calls2" && [ "$s2" -gt "$s1" ]
st=$?
[ $st -eq 0 ] || { show; diff "$tmp/calls1" "$tmp/calls2" >&2; }
result $st "lbr-2ev: call counts of the calls event alone ($s1 + miss samples = $s2)"

# Calls replayed: static bursting traces 16 calls per sample, so about
# 16 / period of the calls (the 40000 calls give 40 samples at 1000).
run "$KCC" eval --tsv -k 1 -m static -p 1000 --miss-rate 0 "$tmp/gen.trace"
pct=$(sed -n 2p "$tmp/out" | cut -f11)
[ $rc -eq 0 ] && awk -v p="$pct" 'BEGIN { exit !(p > 1.2 && p < 2.0) }'
result $? "static bursting replays about 16 calls per 1000 ($pct%)"

expect2() {	# expect2 DESCRIPTION ARGS...: usage error, exit 2
	d=$1
	shift
	run "$KCC" eval "$@"
	[ $rc -eq 2 ] && ! sanitized && [ -s "$tmp/err" ]
	st=$?
	[ $st -eq 0 ] || show
	result $st "$d"
}

expect2 "unknown method: exit 2" -m bogus "$tmp/gen.trace"
expect2 "k = 0: exit 2" -k 0 "$tmp/gen.trace"
expect2 "LBR depth 65: exit 2" -d 65 "$tmp/gen.trace"
expect2 "unknown sweep parameter: exit 2" --sweep colour=1,2 "$tmp/gen.trace"

run "$KCC" eval "$tmp/nonexistent"
[ $rc -eq 1 ] && ! sanitized && grep -q "$tmp/nonexistent" "$tmp/err"
result $? "missing trace: exit 1 naming it"

ktap_exit
