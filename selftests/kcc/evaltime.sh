#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# evaltime.sh - kcc eval --time, --count-calls and periods below one
# call: 16 samples a call landing between calls, with each sample's
# calls since the previous one, give every call once (abs_err 0,
# calls_ratio 1) on a synthetic program; the same bursts counted whole
# count each call many times; without --time samples land at calls, one
# a call at most; bad values exit 2.  selftests/kcc/timesim.c checks the
# model itself.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir evaltime
plan 5

run "$KCC" synth --seed 3 --events 20000 --routines 40 --max-depth 30 \
	-o /dev/null --trace-out "$tmp/s.trace"
[ $rc -eq 0 ] || show

# row K: the TSV row of k = K in $tmp/out.
row() {
	awk -F '\t' -v k="$1" 'NR > 1 && $2 == k' "$tmp/out"
}

# Columns: 4 period, 28 abs_err, 29 calls_ratio.
run "$KCC" eval --tsv -k 1,3 -m lbr --time --count-calls -p 1/16 "$tmp/s.trace"
[ $rc -eq 0 ] && ! sanitized &&
	[ "$(row 1 | cut -f4,28,29)" = "$(printf '0.0625\t0.0000\t1.0000')" ] &&
	[ "$(row 3 | cut -f4,28,29)" = "$(printf '0.0625\t0.0000\t1.0000')" ]
st=$?
[ $st -eq 0 ] || show
result $st "--time -p 1/16 --count-calls: every call once (abs_err 0, calls_ratio 1)"

run "$KCC" eval --tsv -k 3 -m lbr --time -p 1/16 "$tmp/s.trace"
ratio=$(row 3 | cut -f29)
[ $rc -eq 0 ] && ! sanitized &&
	awk -v r="$ratio" 'BEGIN { exit !(r > 2) }'
st=$?
[ $st -eq 0 ] || show
result $st "--time -p 1/16, bursts counted whole: calls_ratio $ratio > 2"

# Without --time the events accrue at calls: one sample a call at most.
run "$KCC" eval --tsv -k 1 -m stack --miss-rate 0 -p 1/4 "$tmp/s.trace"
s4=$(row 1 | cut -f12)
run "$KCC" eval --tsv -k 1 -m stack --miss-rate 0 -p 1 "$tmp/s.trace"
s1=$(row 1 | cut -f12)
run "$KCC" eval --tsv -k 1 -m stack --miss-rate 0 --time -p 1/4 "$tmp/s.trace"
t4=$(row 1 | cut -f12)
[ $rc -eq 0 ] && ! sanitized && [ -n "$s1" ] && [ "$s4" = "$s1" ] &&
	[ "$t4" -gt $((3 * s1)) ]
st=$?
[ $st -eq 0 ] || show
result $st "samples at calls: $s1 at -p 1 and -p 1/4; with --time, $t4 at -p 1/4"

run "$KCC" eval -k 3 -m lbr --time --sweep period=10,1/4 "$tmp/s.trace"
[ $rc -eq 0 ] && ! sanitized &&
	[ "$(awk 'NR > 1 { printf "%s ", $4 }' "$tmp/out")" = "10 1/4 " ]
st=$?
[ $st -eq 0 ] || show
result $st "--sweep period=10,1/4: the text table names the fractions"

bad=""
for args in "-p 0/1" "-p 1/0" "-p 1/" "-p /4" "--sweep period=1/0" \
	    "--count-calls --weight-calls" "--max-cost 0" "--max-cost 65537"; do
	# shellcheck disable=SC2086
	run "$KCC" eval $args "$tmp/s.trace"
	{ [ $rc -eq 2 ] && ! sanitized && [ -s "$tmp/err" ]; } || bad="$bad [$args]"
done
[ -z "$bad" ] || echo "# accepted:$bad"
result "$([ -z "$bad" ]; echo $?)" "bad periods, costs and --count-calls with --weight-calls exit 2"

ktap_exit
