#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# evalabs.sh - the absolute columns of kcc eval: abs_err (the sum over
# k-contexts of |calls counted - calls made|, over all calls made) and
# calls_ratio (calls counted over calls made), appended to the TSV of
# both kcc eval --profile and the simulator, on traces small enough to
# work the answers out by hand.  A profile that counts every call three
# times keeps overlap and coverage at 1 and must show abs_err 2 and
# calls_ratio 3; the columns scripts read by number stay where they were.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir evalabs
plan 8

# m calls a then b; the same run with b called as a.
printf 'call m\ncall a\nreturn\ncall b\nreturn\nreturn\n' >"$tmp/mab.trace"
printf 'call m\ncall a\nreturn\ncall a\nreturn\nreturn\n' >"$tmp/maa.trace"
grep -v '^#' "$D/fig2.trace" >"$tmp/once"
cat "$tmp/once" "$tmp/once" "$tmp/once" >"$tmp/thrice.trace"

# fields K F...: fields F... of the TSV row of k = K in $tmp/out.
fields() {
	k=$1
	shift
	awk -F '\t' -v k="$k" -v f="$*" 'NR > 1 && $2 == k {
		n = split(f, c, " ")
		for (i = 1; i <= n; i++)
			printf "%s%s", $c[i], i < n ? " " : "\n"
	}' "$tmp/out"
}

check() {	# check STATUS DESCRIPTION: show the output on failure
	[ "$1" -eq 0 ] || show
	result "$1" "$2"
}

# --profile columns: program k overlap hot@0.5 calls_profile calls_exact
# items_exact items_profile items_common abs_err calls_ratio, then the
# 95% intervals' ci95_items ci95_covered ci95_calls ('-': calls are no
# estimate, as with the record --trace profiles here).
run "$KCC" record --trace "$tmp/thrice.trace" -k 3 -o "$tmp/thrice.kcc"
run "$KCC" eval --tsv -T 0.5 --profile "$tmp/thrice.kcc" "$D/fig2.trace"
[ $rc -eq 0 ] && ! sanitized &&
	head -n 1 "$tmp/out" | grep -q '	items_common	abs_err	calls_ratio	ci95_items	ci95_covered	ci95_calls$' &&
	[ "$(fields 1 3 4 5 6 10 11 12 13 14)" = "1.0000 1.0000 24 8 2.0000 3.0000 - - -" ] &&
	[ "$(fields 2 3 4 5 6 10 11)" = "1.0000 1.0000 24 8 2.0000 3.0000" ] &&
	[ "$(fields 3 3 4 5 6 10 11)" = "1.0000 1.0000 24 8 2.0000 3.0000" ]
check $? "--profile, every call counted 3 times: overlap 1, abs_err 2, calls_ratio 3"

run "$KCC" record --trace "$D/fig2.trace" -k 3 -o "$tmp/fig2.kcc"
run "$KCC" eval --tsv -T 0.5 -k 2 --profile "$tmp/fig2.kcc" "$D/fig2.trace"
[ $rc -eq 0 ] && ! sanitized && [ "$(fields 2 10 11)" = "0.0000 1.0000" ]
check $? "--profile of the trace itself: abs_err 0, calls_ratio 1"

# Exact 1-contexts m, a<-m, b<-m, one call each; the profile has m 1 and
# a<-m 2: |1 - 1| + |2 - 1| + |0 - 1| = 2 of 3 calls, 3 counted.
run "$KCC" record --trace "$tmp/maa.trace" -k 3 -o "$tmp/maa.kcc"
run "$KCC" eval --tsv -T 0.5 -k 1 --profile "$tmp/maa.kcc" "$tmp/mab.trace"
[ $rc -eq 0 ] && ! sanitized && [ "$(fields 1 3 10 11)" = "0.6667 0.6667 1.0000" ]
check $? "--profile, a context missing and another doubled: abs_err 2/3, calls_ratio 1"

# The simulator's TSV: 27 columns as before, then the two.
run "$KCC" eval --tsv -k 1 -m stack "$tmp/mab.trace"
hdr=$(head -n 1 "$tmp/out")
[ $rc -eq 0 ] && ! sanitized &&
	[ "$(echo "$hdr" | cut -f1-3,8,11-12)" = "$(printf 'program\tk\tmethod\toverlap\treplayed_pct\tsamples')" ] &&
	[ "$(echo "$hdr" | cut -f27-29)" = "$(printf 'below_walk\tabs_err\tcalls_ratio')" ] &&
	[ "$(sed -n 2p "$tmp/out" | cut -f30-)" = "$(printf -- '-\t-\t-')" ]
check $? "simulator TSV: abs_err and calls_ratio appended after column 27; no interval for stack samples"

# Every call sampled with its stack: each context's calls once.
run "$KCC" eval --tsv -k 1,2 -m stack -p 1 --jitter 0 --miss-rate 0 \
	"$D/fig2.trace"
[ $rc -eq 0 ] && ! sanitized && [ "$(fields 1 28 29)" = "0.0000 1.0000" ] &&
	[ "$(fields 2 28 29)" = "0.0000 1.0000" ]
check $? "simulator, stack sampling at every call: abs_err 0, calls_ratio 1"

# A sample at each call of mab with the 2 newest records, each burst
# counted whole: at a, the records are call a and call m, so m counts
# twice; at b, call b and the return of a.  4 calls counted for 3, one
# too many on m: abs_err 1/3, calls_ratio 4/3.
run "$KCC" eval --tsv -k 1 -m lbr -p 1 --jitter 0 --miss-rate 0 -d 2 \
	"$tmp/mab.trace"
[ $rc -eq 0 ] && ! sanitized && [ "$(fields 1 28 29)" = "0.3333 1.3333" ]
check $? "simulator, overlapping bursts counted whole: abs_err 1/3, calls_ratio 4/3"

# The text tables carry them too.
run "$KCC" eval -k 1 -m lbr -p 1 --jitter 0 --miss-rate 0 -d 2 \
	"$tmp/mab.trace"
[ $rc -eq 0 ] && ! sanitized && head -n 1 "$tmp/out" | grep -q 'abs_err *ratio *ci95$' &&
	sed -n 2p "$tmp/out" | grep -q ' 0\.3333 *1\.3333 *-$'
check $? "simulator text table: abs_err and ratio, then ci95 ('-': calls not counted)"

# A trace named without a directory gives its name to the rows.
(cd "$tmp" && "$KCC" eval --tsv -k 1 -m stack mab.trace) >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ! sanitized && [ "$(sed -n 2p "$tmp/out" | cut -f1)" = mab ]
check $? "a trace in the current directory: rows named after it"

ktap_exit
