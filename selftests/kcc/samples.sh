#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# samples.sh - kcc synth and kcc replay: simulated LBR samples of random
# programs, stitched back, must give the k-CCF of the exact trace ('kcc
# ccf' on the trace kcc synth wrote); sample files are checked record by
# record with errors naming the file and offset; exit statuses 0/1/2.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
KTAP_SHOW_LINES=10
ktap_begin
ktap_tmpdir samples
plan 32

# ---- help and usage errors -------------------------------------------------

run "$KCC" synth --help
[ $rc -eq 0 ] && grep -q EXAMPLES "$tmp/out"
result $? "synth --help exits 0 with EXAMPLES"
run "$KCC" replay --help
[ $rc -eq 0 ] && grep -q EXAMPLES "$tmp/out"
result $? "replay --help exits 0 with EXAMPLES"

expect 2 "--seed S is required" "synth without --seed: usage error" -- \
	"$KCC" synth -o "$tmp/x.smp"
expect 2 "-o FILE is required" "synth without -o: usage error" -- \
	"$KCC" synth --seed 1
expect 2 "bad --lbr-depth" "synth --lbr-depth 65: usage error" -- \
	"$KCC" synth --seed 1 --lbr-depth 65 -o "$tmp/x.smp"
expect 2 "bad --stack-depth" "synth --stack-depth 0: usage error" -- \
	"$KCC" synth --seed 1 --stack-depth 0 -o "$tmp/x.smp"
expect 2 "-k K is required" "replay without -k: usage error" -- \
	"$KCC" replay "$tmp/x.smp"
expect 2 "-k 0 has no k-SF" "replay -k 0 in ksf format: usage error" -- \
	"$KCC" replay -k 0 "$tmp/x.smp"
expect 2 "bad --join" "replay --join sometimes: usage error" -- \
	"$KCC" replay -k 1 --join sometimes "$tmp/x.smp"
expect 2 "bad --table" "replay --table 1000 (not a power of 2): usage error" -- \
	"$KCC" replay -k 1 --rr 4 --table 1000 "$tmp/x.smp"
expect 2 "unknown option" "replay --bogus: usage error" -- \
	"$KCC" replay -k 1 --bogus "$tmp/x.smp"

# ---- the sample file ---------------------------------------------------------

S="$tmp/s"
expect 0 "" "synth writes samples, trace and map" -- \
	"$KCC" synth --seed 11 --events 4000 -o "$S.smp" --trace-out "$S.trace" \
	--map-out "$S.map"
magic=$(head -c 6 "$S.smp")
[ "$magic" = "KCCSMP" ] && [ "$(od -An -tu4 -j8 -N4 "$S.smp" | tr -d ' ')" = 1 ]
result $? "sample file starts with KCCSMP and version 1"

"$KCC" synth --seed 11 --events 4000 -o "$tmp/again.smp" 2>/dev/null &&
cmp -s "$S.smp" "$tmp/again.smp"
result $? "synth is deterministic for a seed"
"$KCC" synth --seed 12 --events 4000 -o "$tmp/other.smp" 2>/dev/null &&
! cmp -s "$S.smp" "$tmp/other.smp"
result $? "another seed gives other samples"

# Stats: every sample applied, no stitch error on simulated samples.
run "$KCC" synth --seed 11 --events 4000 -o "$tmp/v.smp" -v
nsamp=$(sed -n 's/^samples: //p' "$tmp/err")
run "$KCC" replay -k 2 --stats "$S.smp"
[ $rc -eq 0 ] && grep -qx "samples: $nsamp" "$tmp/out" &&
	grep -qx "stitch_errors: 0" "$tmp/out"
result $? "replay --stats: $nsamp samples applied, no stitch errors"

# ---- replay = exact ----------------------------------------------------------

# Dense sampling (every call) with the longest-overlap join is exact on
# these programs; compare with the k-CCF of the exact trace.
same=0
total=0
for seed in 1 2 3; do
	"$KCC" synth --seed $seed --events 3000 --lbr-depth 64 --stack-depth 512 \
		-o "$tmp/p.smp" --trace-out "$tmp/p.trace" --map-out "$tmp/p.map" \
		2>"$tmp/err" || { cat "$tmp/err"; continue; }
	for k in 0 1 2 3 inf; do
		total=$((total + 1))
		"$KCC" replay -k $k --join longest --format ccf --map "$tmp/p.map" \
			"$tmp/p.smp" >"$tmp/r.ccf" 2>"$tmp/err"
		"$KCC" ccf -k $k "$tmp/p.trace" >"$tmp/e.ccf" 2>>"$tmp/err"
		if cmp -s "$tmp/r.ccf" "$tmp/e.ccf" && ! sanitized; then
			same=$((same + 1))
		else
			echo "# seed $seed k=$k: replay differs from kcc ccf"
			diff "$tmp/r.ccf" "$tmp/e.ccf" | head -n 5 | sed 's/^/#   /'
		fi
	done
done
[ $same -eq $total ] && [ $total -eq 15 ]
result $? "replay --format ccf --map = kcc ccf of the trace ($same/$total)"

# Without joining the overlapping bursts count calls many times over.
"$KCC" replay -k 1 --join none --format ccf --map "$tmp/p.map" "$tmp/p.smp" \
	>"$tmp/r.ccf" 2>/dev/null
"$KCC" ccf -k 1 "$tmp/p.trace" >"$tmp/e.ccf" 2>/dev/null
r_top=$(awk -F'\t' '{ s += $1 } END { print s + 0 }' "$tmp/r.ccf")
e_top=$(awk -F'\t' '{ s += $1 } END { print s + 0 }' "$tmp/e.ccf")
[ "$r_top" -gt $((e_top * 2)) ]
result $? "--join none overcounts ($r_top vs $e_top)"

# ksf format: canonical lines, names with a map.
run "$KCC" replay -k 2 "$S.smp"
[ $rc -eq 0 ] && [ -s "$tmp/out" ] &&
	awk '!/^(top|slab) [0-9a-f;]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$/ { bad = 1 } END { exit bad }' "$tmp/out"
result $? "ksf dump: 'KIND PATH CALLS EVENTS SAMPLES CALLS_VAR', labels in hex"
LC_ALL=C sort -c "$tmp/out"
result $? "ksf dump is sorted bytewise"
run "$KCC" replay -k 2 -c 1 --map "$S.map" "$S.smp"
[ $rc -eq 0 ] && awk '!/^(top|slab) r[0-9]+(;r[0-9]+)* [0-9]+$/ { bad = 1 } END { exit bad }' "$tmp/out"
result $? "ksf dump with --map and -c 1: routine names, calls only"

# Truncated walks: an [unknown] frame at the bottom.
"$KCC" synth --seed 5 --events 3000 --stack-depth 3 -o "$tmp/t.smp" \
	--map-out "$tmp/t.map" 2>/dev/null
run "$KCC" replay -k inf --map "$tmp/t.map" "$tmp/t.smp"
[ $rc -eq 0 ] && grep -q '^top \[unknown\];' "$tmp/out"
result $? "truncated stacks hang under [unknown]"

# Adaptive bursting: reproducible for a seed, and it skips bursts.
run "$KCC" replay -k 2 --rr 4 --seed 3 "$S.smp"
cp "$tmp/out" "$tmp/rr1"
run "$KCC" replay -k 2 --rr 4 --seed 3 "$S.smp"
cmp -s "$tmp/out" "$tmp/rr1"
result $? "replay --rr 4 --seed 3 is reproducible"
run "$KCC" replay -k 2 --rr 4 --seed 3 --stats "$S.smp"
skipped=$(sed -n 's/^bursts_skipped: //p' "$tmp/out")
[ $rc -eq 0 ] && [ "${skipped:-0}" -gt 0 ]
result $? "replay --rr 4 skips bursts ($skipped)"

# ---- bad sample files --------------------------------------------------------

expect 1 "$tmp/missing.smp" "a missing file: runtime error naming it" -- \
	"$KCC" replay -k 1 "$tmp/missing.smp"
: >"$tmp/empty.smp"
expect 1 "file too short" "an empty file: runtime error" -- \
	"$KCC" replay -k 1 "$tmp/empty.smp"
printf 'KCCTRC\0\1xxxxxxxx' >"$tmp/magic.smp"
expect 1 "bad magic" "a file with another magic: runtime error" -- \
	"$KCC" replay -k 1 "$tmp/magic.smp"
head -c 40 "$S.smp" >"$tmp/cut.smp"
expect 1 "offset 16: sample 0: record truncated" "a truncated record: file offset" -- \
	"$KCC" replay -k 1 "$tmp/cut.smp"
# Flip the flags of the first sample (byte 20) to 8, a flag no ABI defines.
{ head -c 20 "$S.smp"; printf '\10'; tail -c +22 "$S.smp"; } >"$tmp/flag.smp"
expect 1 "offset 16: sample 0: unknown flag" "an unknown flag: file offset" -- \
	"$KCC" replay -k 1 "$tmp/flag.smp"
# Version 2.
{ head -c 8 "$S.smp"; printf '\2'; tail -c +10 "$S.smp"; } >"$tmp/ver.smp"
expect 1 "unsupported sample file version 2" "another version: runtime error" -- \
	"$KCC" replay -k 1 "$tmp/ver.smp"
# Random garbage after a good header never crashes.
{ head -c 16 "$S.smp"; head -c 4096 /dev/urandom; } >"$tmp/junk.smp"
expect 1 "offset 16" "garbage records: runtime error, no crash" -- \
	"$KCC" replay -k 1 "$tmp/junk.smp"
printf 'zz 10 r0\n' >"$tmp/bad.map"
expect 1 "bad.map:1:" "a malformed map: FILE:LINE" -- \
	"$KCC" replay -k 1 --map "$tmp/bad.map" "$S.smp"

ktap_exit
