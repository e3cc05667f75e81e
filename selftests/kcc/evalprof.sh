#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# evalprof.sh - kcc eval --profile PROFILE TRACE: the calls of a profile
# against the exact k-CCF of a trace, routines matched by name.  A
# profile made from the same trace (kcc record --trace: every call
# replayed) scores 1 everywhere; one made from a trace that differs in
# known ways scores what those differences give, worked out by hand;
# bad command lines exit 2 and bad inputs 1.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir evalprof
plan 8

# row K: the TSV row of k = K, fields 3- (overlap, hot@0.5, calls, items).
row() {
	awk -F '\t' -v k="$1" '$2 == k { print $3, $4, $5, $6, $7, $8, $9 }' "$tmp/out"
}

run "$KCC" record --trace "$D/fig2.trace" -k 3 -o "$tmp/fig2.kcc"
[ $rc -eq 0 ] || show
run "$KCC" eval --tsv -T 0.5 --profile "$tmp/fig2.kcc" "$D/fig2.trace"
# Figure 2: 8 calls; 6 distinct 1-contexts, 7 distinct 2- and 3-contexts.
if [ $rc -eq 0 ] && ! sanitized &&
   [ "$(row 1)" = "1.0000 1.0000 8 8 6 6 6" ] &&
   [ "$(row 2)" = "1.0000 1.0000 8 8 7 7 7" ] &&
   [ "$(row 3)" = "1.0000 1.0000 8 8 7 7 7" ] &&
   [ "$(wc -l <"$tmp/out")" -eq 4 ]; then
	result 0 "profile of the trace itself: overlap and coverage 1 at k = 1, 2, 3"
else
	show
	result 1 "profile of the trace itself: overlap and coverage 1 at k = 1, 2, 3"
fi

# Twice the run: the same shares of every context, twice the calls, so
# overlap and coverage stay 1.  Renamed routines: nothing in common, 0.
{ grep -v '^#' "$D/fig2.trace"; grep -v '^#' "$D/fig2.trace"; } >"$tmp/twice.trace"
sed 's/^call \(.*\)/call x\1/' "$D/fig2.trace" >"$tmp/renamed.trace"
run "$KCC" record --trace "$tmp/twice.trace" -k 3 -o "$tmp/twice.kcc"
run "$KCC" eval --tsv -T 0.5 -k 2 --profile "$tmp/twice.kcc" "$D/fig2.trace"
if [ $rc -eq 0 ] && ! sanitized && [ "$(row 2)" = "1.0000 1.0000 16 8 7 7 7" ]; then
	result 0 "a profile of the run twice: overlap and coverage 1, 16 of 8 calls"
else
	show
	result 1 "a profile of the run twice: overlap and coverage 1, 16 of 8 calls"
fi
# Renamed, every caller is one the trace never saw: left out of the
# profile's contexts (as the trace leaves an uninstrumented caller out
# of its stacks), so only the 4 routines r, a, b, c remain as items.
run "$KCC" record --trace "$tmp/renamed.trace" -k 3 -o "$tmp/renamed.kcc"
run "$KCC" eval --tsv -T 0.5 -k 2 --profile "$tmp/renamed.kcc" "$D/fig2.trace"
if [ $rc -eq 0 ] && ! sanitized && [ "$(row 2)" = "0.0000 0.0000 8 8 7 4 0" ]; then
	result 0 "a profile of other routines: overlap and coverage 0, nothing common"
else
	show
	result 1 "a profile of other routines: overlap and coverage 0, nothing common"
fi

# The run under a caller the trace did not record (as main runs under
# __libc_start_call_main, which is built without the tracing runtime):
# "start" is left out of every context through it, so each context of
# the trace is found with its own calls; start's one call is an item of
# the profile only: 9 calls against 8, abs_err 1/8, overlap 8/9.
{ echo "call start"; grep -v '^#' "$D/fig2.trace"; echo "return"; } >"$tmp/start.trace"
run "$KCC" record --trace "$tmp/start.trace" -k 3 -o "$tmp/start.kcc"
run "$KCC" eval --tsv -T 0.5 -k 1,2,3 --profile "$tmp/start.kcc" "$D/fig2.trace"
srow() {
	awk -F '\t' -v k="$1" '$2 == k { print $3, $5, $6, $7, $8, $9, $10 }' "$tmp/out"
}
if [ $rc -eq 0 ] && ! sanitized &&
   [ "$(srow 1)" = "0.8889 9 8 6 7 6 0.1250" ] &&
   [ "$(srow 2)" = "0.8889 9 8 7 8 7 0.1250" ] &&
   [ "$(srow 3)" = "0.8889 9 8 7 8 7 0.1250" ]; then
	result 0 "an untraced outer caller is left out of the profile's contexts: every traced context matches"
else
	show
	result 1 "an untraced outer caller is left out of the profile's contexts: every traced context matches"
fi

run "$KCC" eval --profile "$tmp/fig2.kcc" -k 4 "$D/fig2.trace"
if [ $rc -eq 1 ] && ! sanitized && grep -q 'above the recorded k 3' "$tmp/err"; then
	result 0 "k above the profile's recorded k: exit 1, says why"
else
	show
	result 1 "k above the profile's recorded k: exit 1, says why"
fi

run "$KCC" eval --profile "$tmp/fig2.kcc" --comm nosuch "$D/fig2.trace"
if [ $rc -eq 1 ] && ! sanitized && grep -q 'no samples' "$tmp/err"; then
	result 0 "--comm that matches nothing: exit 1, says no samples"
else
	show
	result 1 "--comm that matches nothing: exit 1, says no samples"
fi

bad=""
for args in "--profile $tmp/fig2.kcc" \
	    "--profile $tmp/fig2.kcc $D/fig2.trace $D/fig2.trace" \
	    "--profile $tmp/fig2.kcc --check-exact $D/fig2.trace" \
	    "--comm x $D/fig2.trace"; do
	# shellcheck disable=SC2086
	run "$KCC" eval $args
	{ [ $rc -eq 2 ] && ! sanitized; } || bad="$bad [$args]"
done
[ -z "$bad" ] || echo "# accepted:$bad"
result "$([ -z "$bad" ]; echo $?)" "bad --profile command lines exit 2"

run "$KCC" eval --profile "$tmp/nonexistent.kcc" "$D/fig2.trace"
if [ $rc -eq 1 ] && ! sanitized && grep -q 'nonexistent.kcc' "$tmp/err"; then
	result 0 "a missing profile: exit 1, names the file"
else
	show
	result 1 "a missing profile: exit 1, names the file"
fi
ktap_exit
