#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# import.sh - kcc import of perf.data files.  The files are written by
# perfdata.py from the samples of kcc synth, as perf record would have
# recorded them (one event, or a calls event beside a misses event);
# kcc import must give the k-SF kcc replay gives for the same samples:
# bit for bit with one event, the same calls with two (whose events are
# charged at the sampled stacks instead), and bit for bit with a group
# read of a calls counter at every sample ('{misses,calls}:S') against
# the same samples carrying those counts (KCC_SAMPLE_CALLS).  Damaged
# and unsuitable files are errors that say why.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
command -v python3 >/dev/null 2>&1 || ktap_skip_all "no python3"
ktap_tmpdir import
plan 24
PD="python3 $(dirname "$0")/perfdata.py"

# ksf FILE: the forest lines of kcc dump or kcc replay (no task line).
ksf() {
	sed -n '/^task /!p' "$1"
}

"$KCC" synth --seed 3 --max-depth 100 --events 20000 -o "$tmp/s.smp" \
	2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
$PD "$tmp/s.smp" "$tmp/one.data" "$tmp/s1.smp" &&
	$PD --two "$tmp/s.smp" "$tmp/two.data" &&
	$PD --group "$tmp/s.smp" "$tmp/group.data" "$tmp/sg.smp" &&
	$PD --group --no-read "$tmp/s.smp" "$tmp/noread.data" &&
	$PD --no-type "$tmp/s.smp" "$tmp/notype.data" &&
	$PD --pipe "$tmp/s.smp" "$tmp/pipe.data" || exit 1
"$KCC" replay -k 3 "$tmp/s1.smp" >"$tmp/replay.out" 2>"$tmp/err" ||
	{ cat "$tmp/err"; exit 1; }
ksf "$tmp/replay.out" >"$tmp/want"

expect 0 "1 tasks, 10004 of 10004 samples" "one event: imported, every sample" -- \
	"$KCC" import -k 3 -o "$tmp/one.kcc" "$tmp/one.data"
run "$KCC" dump "$tmp/one.kcc"
ksf "$tmp/out" >"$tmp/got"
[ $rc -eq 0 ] && ! sanitized && [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"
st=$?
[ $st -eq 0 ] || { show; diff "$tmp/want" "$tmp/got" | head -n 10 | sed 's/^/# /'; }
result $st "one event: the k-SF of kcc replay of the same samples, bit for bit"

run "$KCC" report "$tmp/one.kcc"
[ $rc -eq 0 ] && ! sanitized && grep -q '^# source: lbr' "$tmp/out" &&
	grep -q '^# metrics: calls cpu/calls/ samples$' "$tmp/out" &&
	! grep -q '^# calls:' "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "one event: kcc report reads it, the event named as perf recorded it"

expect 0 "20008 of 20008 samples" "two events: imported" -- \
	"$KCC" import -k 3 --calls-event cpu/calls/ -o "$tmp/two.kcc" \
	"$tmp/two.data"
run "$KCC" dump "$tmp/two.kcc"
ksf "$tmp/out" | awk '$3 > 0 { print $1, $2, $3 }' >"$tmp/got"
awk '$3 > 0 { print $1, $2, $3 }' "$tmp/want" >"$tmp/want3"
ev_got=$(ksf "$tmp/out" | awk '{ e += $4 } END { print e + 0 }')
ev_want=$(awk '{ e += $4 } END { print e + 0 }' "$tmp/want")
[ $rc -eq 0 ] && ! sanitized && [ -s "$tmp/want3" ] &&
	cmp -s "$tmp/want3" "$tmp/got" && [ "$ev_got" -gt 0 ] &&
	[ "$ev_got" -eq "$ev_want" ]
st=$?
[ $st -eq 0 ] || { show; diff "$tmp/want3" "$tmp/got" | head -n 10 | sed 's/^/# /'; }
result $st "two events: calls of kcc replay's k-SF, events all charged ($ev_got of $ev_want)"

run "$KCC" report "$tmp/two.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	grep -q '^# calls: bursts at the samples of a second event (type 4, config 0x1c4); cpu/misses/: at the samples of the event above$' "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "two events: the report names the calls event and the sampled one"

# A calls counter read at every sample of the misses event: each burst
# joined or weighted by the calls since the previous sample, exactly as
# kcc replay of the same samples with those counts.
"$KCC" replay -k 3 "$tmp/sg.smp" >"$tmp/replay.g" 2>"$tmp/err" ||
	{ cat "$tmp/err"; exit 1; }
ksf "$tmp/replay.g" >"$tmp/wantg"
expect 0 "10004 of 10004 samples" "group read: imported" -- \
	"$KCC" import -k 3 --calls-event cpu/calls/ -o "$tmp/group.kcc" \
	"$tmp/group.data"
run "$KCC" dump "$tmp/group.kcc"
ksf "$tmp/out" >"$tmp/gotg"
[ $rc -eq 0 ] && ! sanitized && [ -s "$tmp/wantg" ] &&
	cmp -s "$tmp/wantg" "$tmp/gotg" && ! cmp -s "$tmp/wantg" "$tmp/want"
st=$?
[ $st -eq 0 ] || { show; diff "$tmp/wantg" "$tmp/gotg" | head -n 10 | sed 's/^/# /'; }
result $st "group read: the k-SF of kcc replay of the samples with their counts, bit for bit"
run "$KCC" report "$tmp/group.kcc"
# 10004 samples of 1 + (37 i mod 60) calls each (perfdata.py).
want_n=$(awk 'BEGIN { for (i = 0; i < 10004; i++) n += 1 + (37 * i) % 60; print n }')
[ $rc -eq 0 ] && ! sanitized &&
	grep -q '^# calls: counted beside the event above (type 4, config 0x1c4) and read at its samples' "$tmp/out" &&
	grep -q "^# calls counted: counter $want_n calls at 10004 samples;" "$tmp/out" &&
	grep -q "^# calls not in the column: those after the threads' last samples (not known: imported from perf.data); samples without a count (counter not read): 0$" "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "group read: the report names the counter, its $want_n calls, what it cannot know"
run "$KCC" report --format json "$tmp/group.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	grep -q '"source": "counter", "after_last": null, "samples_unread": 0' "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "group read: json's after_last is null, not 0"
expect 1 "has no group read" \
	"a calls event that only counts, no group read: exit 1, says how to record" -- \
	"$KCC" import --calls-event cpu/calls/ -o "$tmp/x.kcc" "$tmp/noread.data"

# perf's walk going on through garbage: cut at the first return address
# in no executable mapping, as kcc.ko's walk stops; a process of which
# the file has no mapping keeps its walks.
$PD --map=400000:500000 --garbage "$tmp/s.smp" "$tmp/garbage.data" &&
	$PD --garbage "$tmp/s.smp" "$tmp/nomap.data" || exit 1
run "$KCC" import -o "$tmp/g.kcc" "$tmp/garbage.data"
"$KCC" dump "$tmp/g.kcc" >"$tmp/g.dump" 2>&1
[ $rc -eq 0 ] && ! sanitized && grep -q ' 10004 walks cut at an unmapped address' "$tmp/err" &&
	[ -s "$tmp/g.dump" ] && ! grep -q 7ff0000000001234 "$tmp/g.dump"
st=$?
[ $st -eq 0 ] || show
result $st "walks cut at an unmapped return address"
run "$KCC" import -o "$tmp/n.kcc" "$tmp/nomap.data"
"$KCC" dump "$tmp/n.kcc" >"$tmp/n.dump" 2>&1
[ $rc -eq 0 ] && ! sanitized && grep -q ' 0 walks cut' "$tmp/err" &&
	grep -q 7ff0000000001234 "$tmp/n.dump"
st=$?
[ $st -eq 0 ] || show
result $st "no mapping of the process in the file: walks kept whole"

expect 1 "name the calls event with --calls-event" \
	"two events without --calls-event: exit 1, says what to do" -- \
	"$KCC" import -o "$tmp/x.kcc" "$tmp/two.data"
expect 1 "no such event in the file" "--calls-event of another event: exit 1" -- \
	"$KCC" import --calls-event r1234 -o "$tmp/x.kcc" "$tmp/two.data"
expect 1 "save_type" "branch stack without types: exit 1, asks for save_type" -- \
	"$KCC" import -o "$tmp/x.kcc" "$tmp/notype.data"
expect 1 "the pipe format is not read" "pipe-mode data: exit 1, says so" -- \
	"$KCC" import -o "$tmp/x.kcc" "$tmp/pipe.data"

# Cut inside the data section: a record runs past its end.
head -c 5000 "$tmp/one.data" >"$tmp/cut.data"
expect 1 "damaged file header" "a file cut short: exit 1, says where" -- \
	"$KCC" import -o "$tmp/x.kcc" "$tmp/cut.data"
# A record size of 4 (below its own header) in the first record.
python3 - "$tmp/one.data" "$tmp/bad.data" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
data_off = struct.unpack_from("<Q", b, 40)[0]
struct.pack_into("<H", b, data_off + 6, 4)
open(sys.argv[2], "wb").write(b)
EOF
expect 1 "record of size 4" "a record shorter than its header: exit 1, names it" -- \
	"$KCC" import -o "$tmp/x.kcc" "$tmp/bad.data"

# The data section 4 bytes off 8-byte alignment, so every callchain and
# branch stack in the file is too (the perf.data fuzzer's finding: they
# were handed out as misaligned u64 arrays).  Same samples, same k-SF.
python3 - "$tmp/one.data" "$tmp/odd.data" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
off, size = struct.unpack_from("<QQ", b, 40)
feat = sum(bin(x).count("1") for x in b[72:104])
b[off:off] = bytes(4)
struct.pack_into("<Q", b, 40, off + 4)
if struct.unpack_from("<Q", b, 56)[0] >= off:
    struct.pack_into("<Q", b, 56, struct.unpack_from("<Q", b, 56)[0] + 4)
t = off + 4 + size
for i in range(feat):
    o = struct.unpack_from("<Q", b, t + 16 * i)[0]
    if o >= off:
        struct.pack_into("<Q", b, t + 16 * i, o + 4)
open(sys.argv[2], "wb").write(b)
EOF
expect 0 "1 tasks, 10004 of 10004 samples" "data section off alignment: imported, every sample" -- \
	"$KCC" import -k 3 -o "$tmp/odd.kcc" "$tmp/odd.data"
run "$KCC" dump "$tmp/odd.kcc"
ksf "$tmp/out" >"$tmp/got"
[ $rc -eq 0 ] && ! sanitized && cmp -s "$tmp/want" "$tmp/got"
st=$?
[ $st -eq 0 ] || show
result $st "data section off alignment: the same k-SF"

expect 2 "no perf.data file given" "no operand: exit 2" -- "$KCC" import
expect 2 "bad -k" "-k 0: exit 2" -- "$KCC" import -k 0 "$tmp/one.data"
[ ! -e "$tmp/x.kcc" ]
result $? "nothing written on errors"

ktap_exit
