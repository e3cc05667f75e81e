#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cli.sh - the kcc command line contract: exit statuses (0 ok, 1 runtime
# error, 2 usage error), error messages that name FILE:LINE (text) or
# FILE: offset N (binary), tolerant mode, the binary trace format,
# garbage resistance, and the pruned views on hand-computed examples.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir cli
plan 48

# ---- help, version, usage errors -------------------------------------------

for sub in "" ccf hcct trace; do
	# shellcheck disable=SC2086
	run "$KCC" $sub --help
	what="kcc ${sub:+$sub }--help: exit 0, usage with EXAMPLES"
	if [ $rc -eq 0 ] && grep -q EXAMPLES "$tmp/out" && ! sanitized; then
		result 0 "$what"
	else
		show
		result 1 "$what"
	fi
done

run "$KCC" --version
[ $rc -eq 0 ] && [ -s "$tmp/out" ]
result $? "kcc --version: exit 0"

expect 2 "" "unknown subcommand: exit 2" -- "$KCC" frobnicate
expect 2 "" "unknown option: exit 2" -- "$KCC" ccf -k 1 --bogus "$D/fig2.trace"

bad=""
for k in -1 abc 1x "" 2.5 99999999999999999999; do
	run "$KCC" ccf -k "$k" "$D/fig2.trace"
	{ [ $rc -eq 2 ] && [ -s "$tmp/err" ] && ! sanitized; } ||
		bad="$bad '$k'($rc)"
done
[ -z "$bad" ] || echo "# accepted or mishandled:$bad"
[ -z "$bad" ]
result $? "bad -k values (-1, abc, 1x, empty, 2.5, 2^64+): exit 2 with a message"

bad=""
for x in 0 -5 101 abc ""; do
	run "$KCC" ccf -k 1 --similar "$x" "$D/fig2.trace"
	{ [ $rc -eq 2 ] && ! sanitized; } || bad="$bad '$x'($rc)"
done
[ -z "$bad" ] || echo "# accepted or mishandled:$bad"
[ -z "$bad" ]
result $? "bad --similar values (0, -5, 101, abc, empty): exit 2"

expect 1 "$tmp/nonexistent" "missing trace file: exit 1 naming the file" -- \
	"$KCC" ccf -k 1 "$tmp/nonexistent"

# ---- text traces -------------------------------------------------------------

t=$tmp/empty-return.txt
printf 'call a\nreturn\nreturn\n' >"$t"
expect 1 "$t:3:" "return on an empty stack: exit 1, FILE:3:" -- \
	"$KCC" ccf -k 1 "$t"

t=$tmp/truncated.txt
printf 'call a\ncall b\nreturn\n' >"$t"
expect 1 "$t:3:" "truncated trace: exit 1, FILE:LAST-LINE:" -- \
	"$KCC" ccf -k 1 "$t"
grep -q '1 pending' "$tmp/err"
result $? "truncated trace: the message counts 1 pending call"

# The last line number, even when the last lines are blank or comments.
t=$tmp/truncated2.txt
printf 'call a\n\n# the end\n' >"$t"
expect 1 "$t:3:" "truncated trace ending in a comment: FILE:3:" -- \
	"$KCC" ccf -k 0 "$t"

t=$tmp/keyword.txt
printf 'call a\njump b\nreturn\n' >"$t"
expect 1 "$t:2:" "unknown keyword: exit 1, FILE:2:" -- "$KCC" ccf -k 1 "$t"

t=$tmp/noname.txt
printf 'call a\ncall\nreturn\n' >"$t"
expect 1 "$t:2:" "call without a name: exit 1, FILE:2:" -- "$KCC" ccf -k 1 "$t"

t=$tmp/extra.txt
printf 'call a\nreturn now\n' >"$t"
expect 1 "$t:2:" "extra token: exit 1, FILE:2:" -- "$KCC" ccf -k 1 "$t"

t=$tmp/spaces.txt
printf '# a comment\n\n   call   a  \n\t return\t\n  # indented comment\n\n' >"$t"
expect_out '1\ta\n' "blank lines, comments and surrounding blanks are ignored" -- \
	"$KCC" ccf -k 1 "$t"

# --tolerant: the stray first return is ignored; 1 activation of a.
t=$tmp/tolerant1.txt
printf 'return\ncall a\nreturn\nreturn\n' >"$t"
expect_out '1\ta\n' "--tolerant: returns on an empty stack ignored, exit 0" -- \
	"$KCC" ccf -k 1 --tolerant "$t"
[ -s "$tmp/err" ]
result $? "--tolerant: a warning on stderr"

# a calls b (returns), then c stays pending with a: both are closed.
t=$tmp/tolerant2.txt
printf 'call a\ncall b\nreturn\ncall c\n' >"$t"
expect_out '1\ta\n1\tb\n1\tc\n1\ta;b\n1\ta;c\n' \
	"--tolerant: pending calls closed at the end, exit 0" -- \
	"$KCC" ccf -k 1 --tolerant "$t"
[ -s "$tmp/err" ]
result $? "--tolerant: a warning for the pending calls"

expect_out '1\ta\n' "trace on stdin ('-')" -- \
	sh -c 'printf "call a\nreturn\n" | "$1" ccf -k 0 -' sh "$KCC"

# ---- binary traces -----------------------------------------------------------

# A longer text trace for the round trip: deterministic, recursive,
# with names that need more than one varint byte of symbol ids.
big=$tmp/big.txt
awk 'BEGIN {
	s = 12345; d = 0
	for (i = 0; i < 4000; i++) {
		s = (s * 1103515245 + 12345) % 2147483648
		r = int(s / 65536) % 100
		if (d > 0 && (r < 45 || d > 40)) { print "return"; d-- }
		else { printf "call fn_%d\n", (s % 300) * (s % 7); d++ }
	}
	while (d-- > 0) print "return"
}' >"$big"

bad=""
for src in "$D/fig2.trace" "$big"; do
	b=$tmp/rt.bin
	back=$tmp/rt.txt
	"$KCC" trace convert -o "$b" "$src" 2>"$tmp/err" || bad="$bad convert($src)"
	"$KCC" trace convert --to text -o "$back" "$b" 2>>"$tmp/err" ||
		bad="$bad back($src)"
	for k in 0 1 2 inf; do
		"$KCC" ccf -k $k "$src" >"$tmp/k.txt" 2>>"$tmp/err"
		"$KCC" ccf -k $k "$b" >"$tmp/k.bin" 2>>"$tmp/err"
		"$KCC" ccf -k $k "$back" >"$tmp/k.back" 2>>"$tmp/err"
		{ [ -s "$tmp/k.txt" ] && cmp -s "$tmp/k.txt" "$tmp/k.bin" &&
		  cmp -s "$tmp/k.txt" "$tmp/k.back"; } ||
			bad="$bad k=$k($(basename "$src"))"
	done
	sanitized && bad="$bad sanitizer"
done
[ -z "$bad" ] || { echo "# differences:$bad"; sed 's/^/#   /' "$tmp/err"; }
[ -z "$bad" ]
result $? "text -> binary -> text round trip: same k-CCF for k = 0, 1, 2, inf"

# Header: the magic KCCTRC NUL, then version 1.
"$KCC" trace convert -o "$tmp/fig2.bin" "$D/fig2.trace" 2>/dev/null
head8=$(od -An -tx1 -N8 "$tmp/fig2.bin" | tr -d ' \n')
[ "$head8" = "4b43435452430001" ]
result $? "binary trace starts with KCCTRC, NUL and version 1 ($head8)"

"$KCC" trace convert -o - "$D/fig2.trace" 2>/dev/null | cmp -s - "$tmp/fig2.bin"
result $? "trace convert -o - writes the same bytes to a pipe"

# Written by hand from the format: define r (id 0), call r (3), define a
# (id 1), call a (4), return, return, end with 4 events.
hdr() {	# the 8-byte header: magic KCCTRC, NUL, version 1
	printf 'KCCTRC\000\001'
}
{ hdr; printf '\001\001r\003\001\001a\004\000\000\002\004'; } >"$tmp/hand.bin"
expect_out '1\ta\n1\tr\n1\tr;a\n' "hand-written binary trace read as specified" -- \
	"$KCC" ccf -k 1 "$tmp/hand.bin"

# Symbols may be defined ahead of their calls; 126 definitions make the
# call of id 125 the two-byte varint 128 = 0x80 0x01.
{
	hdr
	i=0
	while [ $i -le 125 ]; do
		printf '\001\004s%03d' $i
		i=$((i + 1))
	done
	printf '\200\001\000\002\002'
} >"$tmp/varint.bin"
expect_out '1\ts125\n' "multi-byte LEB128 call record (symbol id 125)" -- \
	"$KCC" ccf -k 0 "$tmp/varint.bin"

# Every strict prefix of a binary trace lacks its end record.
size=$(wc -c <"$tmp/fig2.bin" 2>/dev/null || echo 0)
bad=""
[ "$size" -gt 8 ] || bad=" (no binary trace to cut: $size bytes)"
i=1
while [ $i -lt "$size" ]; do
	head -c $i "$tmp/fig2.bin" >"$tmp/cut.bin"
	run "$KCC" ccf -k 1 "$tmp/cut.bin"
	if [ $rc -ne 1 ] || sanitized; then
		bad="$bad $i($rc)"
	elif [ $i -ge 8 ] && ! grep -q 'offset [0-9]' "$tmp/err"; then
		bad="$bad $i(no offset)"
	fi
	i=$((i + 1))
done
[ -z "$bad" ] || { echo "# prefixes mishandled (bytes):$bad"; show; }
[ -z "$bad" ]
result $? "truncated binary traces (all $((size - 1)) prefixes): exit 1, offset given"

# Damaged records; offsets counted by hand (the header is 8 bytes).
{ hdr; printf '\005'; } >"$tmp/undef.bin"
expect 1 "offset 8" "binary: call of an undefined symbol id: exit 1, offset 8" -- \
	"$KCC" ccf -k 1 "$tmp/undef.bin"
{ hdr; printf '\002\000\000'; } >"$tmp/after.bin"
expect 1 "offset 10" "binary: data after the end record: exit 1, offset 10" -- \
	"$KCC" ccf -k 1 "$tmp/after.bin"
{ hdr; printf '\001\001a\003\000\002\005'; } >"$tmp/count.bin"
expect 1 "offset" "binary: event count mismatch at the end: exit 1, offset" -- \
	"$KCC" ccf -k 1 "$tmp/count.bin"
{ hdr; printf '\377\377\377\377\377\377\377\377\377\377\377\001'; } >"$tmp/varint-bad.bin"
expect 1 "offset" "binary: overlong varint: exit 1, offset" -- \
	"$KCC" ccf -k 1 "$tmp/varint-bad.bin"
printf 'KCCTRC\000\002\002\000' >"$tmp/version.bin"
expect 1 "" "binary: unknown version: exit 1" -- "$KCC" ccf -k 1 "$tmp/version.bin"
{ hdr; printf '\001\001a\003\000\000\002\003'; } >"$tmp/return-empty.bin"
expect 1 "offset 13" "binary: return with an empty stack: exit 1, offset 13" -- \
	"$KCC" ccf -k 1 "$tmp/return-empty.bin"

# ---- garbage -----------------------------------------------------------------

# Deterministic pseudo-random bytes as %b escapes: seed, length, header.
garbage() {
	awk -v seed="$1" -v len="$2" -v hdr="$3" 'BEGIN {
		s = seed
		if (hdr) printf "KCCTRC\\0000\\0001"
		for (i = 0; i < len; i++) {
			s = (s * 1103515245 + 12345) % 2147483648
			printf "\\0%03o", int(s / 65536) % 256
		}
	}'
}

bad=""
seed=1
while [ $seed -le 60 ]; do
	len=$(( (seed * 37) % 300 ))
	printf '%b' "$(garbage $seed $len $((seed % 2)))" >"$tmp/garbage"
	run "$KCC" ccf -k 2 "$tmp/garbage"
	if [ $rc -gt 1 ] || sanitized; then
		bad="$bad $seed($rc)"
	fi
	seed=$((seed + 1))
done
[ -z "$bad" ] || { echo "# failing seeds:$bad"; show; }
[ -z "$bad" ]
result $? "60 garbage files (with and without binary header): exit 0 or 1, no crash"

# Text that is nearly a trace: right keywords in random places.
bad=""
seed=1
while [ $seed -le 40 ]; do
	awk -v seed=$seed 'BEGIN {
		s = seed
		split("call|return|call x|call  y z|ret|#c||return 1|call x", w, "|")
		for (i = 0; i < 50; i++) {
			s = (s * 1103515245 + 12345) % 2147483648
			print w[1 + int(s / 65536) % 9]
		}
	}' >"$tmp/text-garbage"
	run "$KCC" ccf -k 1 "$tmp/text-garbage"
	if [ $rc -ne 1 ] || sanitized ||
	   ! grep -q "text-garbage:[0-9]*:" "$tmp/err"; then
		bad="$bad $seed($rc)"
	fi
	run "$KCC" ccf -k 1 --tolerant "$tmp/text-garbage"
	if [ $rc -gt 1 ] || sanitized; then
		bad="$bad tolerant-$seed($rc)"
	fi
	seed=$((seed + 1))
done
[ -z "$bad" ] || { echo "# failing seeds:$bad"; show; }
[ -z "$bad" ]
result $? "40 damaged text traces: exit 1 with FILE:LINE:, no crash"

# ---- pruned views on Figure 2(a), k = 3 ----------------------------------------
#
# The 3-CCF trees of the trace (counts from Figure 2(b)), callee at the
# root and callers below:
#	b 3 - a 3 - { r 1, c 2 - r 2 }
#	a 2 - { r 1, c 1 - r 1 }
#	c 2 - { a 1 - r 1, r 1 }
#	r 1
# --similar X keeps u iff its parent is kept and c(u) >= X% of its root:
#   60%: b needs 1.8, a and c need 1.2: of b's tree a 3, c 2, r 2 stay,
#        r 1 goes; in a's and c's trees every non-root node has 1.
#   66.66%: b needs 1.9998, the same as 60%.
#   66.67%: b needs 2.0001: c 2 (and r 2 below it) go too.
F2=$D/fig2.trace
expect_out '2\ta\n3\tb\n2\tc\n1\tr\n3\ta;b\n2\tc;a;b\n2\tr;c;a;b\n' \
	"--similar 60 on Figure 2, k=3" -- "$KCC" ccf -k 3 --similar 60 "$F2"
expect_out '2\ta\n3\tb\n2\tc\n1\tr\n3\ta;b\n2\tc;a;b\n2\tr;c;a;b\n' \
	"--similar 66.66 keeps 2 of 3" -- "$KCC" ccf -k 3 --similar 66.66 "$F2"
expect_out '2\ta\n3\tb\n2\tc\n1\tr\n3\ta;b\n' \
	"--similar 66.67 drops 2 of 3" -- "$KCC" ccf -k 3 --similar 66.67 "$F2"
expect_out '2\ta\n3\tb\n2\tc\n1\tr\n3\ta;b\n' \
	"--similar 100 keeps the nodes as hot as their root" -- \
	"$KCC" ccf -k 3 --similar 100 "$F2"

# --prune-chains: a maximal chain ending in a leaf keeps its first node.
# b - a has two children; c - r under it is a chain: r;c;a;b pruned.
# a has two children; c - r is a chain: r;c;a pruned.  c has two
# children; a - r is a chain: r;a;c pruned.  Single leaves stay.
expect_out '2\ta\n3\tb\n2\tc\n1\tr\n3\ta;b\n1\ta;c\n1\tc;a\n1\tr;a\n1\tr;c\n2\tc;a;b\n1\tr;a;b\n' \
	"--prune-chains on Figure 2, k=3: paths of pruned nodes omitted" -- \
	"$KCC" ccf -k 3 --prune-chains "$F2"
run "$KCC" ccf -k 3 --prune-chains --format tree "$F2"
[ $rc -eq 0 ] && [ "$(grep -c '(+1 pruned)' "$tmp/out")" -eq 3 ] &&
	[ "$(grep -c 'pruned)' "$tmp/out")" -eq 3 ]
st=$?
[ $st -eq 0 ] || show
result $st "--prune-chains --format tree: three heads with (+1 pruned)"

# The worst case of Section 4.2: a chain a - b - c - d, k = 3.  Each
# tree is a chain from its root, so only the four roots remain, heading
# 0, 1, 2 and 3 pruned nodes.
t=$tmp/chain.txt
printf 'call a\ncall b\ncall c\ncall d\nreturn\nreturn\nreturn\nreturn\n' >"$t"
expect_out '1\ta\n1\tb\n1\tc\n1\td\n' "--prune-chains on a chain keeps the roots" -- \
	"$KCC" ccf -k 3 --prune-chains "$t"
run "$KCC" ccf -k 3 --prune-chains --format tree "$t"
[ $rc -eq 0 ] && grep -q '(+1 pruned)' "$tmp/out" &&
	grep -q '(+2 pruned)' "$tmp/out" && grep -q '(+3 pruned)' "$tmp/out" &&
	[ "$(grep -c 'pruned)' "$tmp/out")" -eq 3 ]
st=$?
[ $st -eq 0 ] || show
result $st "--prune-chains --format tree on a chain: (+1), (+2), (+3) pruned"

# ---- node budget ---------------------------------------------------------------
#
# With too few nodes the tool warns and prints what it kept.  A kept
# k-SF node counts exactly, a dropped one loses activations, so every
# printed path is a path of the full 3-CCF with at most its count.
run "$KCC" ccf -k 3 --max-nodes 3 "$F2"
st=1
if [ $rc -eq 0 ] && [ -s "$tmp/err" ] && ! sanitized && [ -s "$tmp/out" ]; then
	awk -F '\t' 'NR == FNR { full[$2] = $1; next }
		!($2 in full) || $1 + 0 > full[$2] + 0 { bad = 1 }
		END { exit bad }' "$D/fig2.k3.expected" "$tmp/out"
	st=$?
fi
[ $st -eq 0 ] || show
result $st "--max-nodes 3: exit 0, warning, a subset of the 3-CCF with counts not above"

# ---- hcct ------------------------------------------------------------------------
#
# Figure 2(a) has N = 8 calls and the 7 contexts r 1, r;a 1, r;a;b 1,
# r;a;c 1, r;c 1, r;c;a 1, r;c;a;b 2.  eps = 1/16 gives m = 17 counters,
# more than there are contexts, so every estimate is exact.
# phi = 1/8: threshold floor(8/8) = 1, all 7 contexts are hot.
# phi = 1/4: threshold 2, only r;c;a;b is hot; r, r;c and r;c;a are
# printed as its ancestors, with their (exact) estimates.
expect_out '1\tr\n1\tr;a\n1\tr;c\n1\tr;a;b\n1\tr;a;c\n1\tr;c;a\n2\tr;c;a;b\n# N=8 threshold=1 hot=7 counters=17\n' \
	"hcct --phi 0.125 --eps 0.0625 on Figure 2" -- \
	"$KCC" hcct --phi 0.125 --eps 0.0625 "$F2"
expect_out '1\tr\n1\tr;c\n1\tr;c;a\n2\tr;c;a;b\n# N=8 threshold=2 hot=1 counters=17\n' \
	"hcct --phi 0.25 --eps 0.0625: ancestors of the hot context" -- \
	"$KCC" hcct --phi 0.25 --eps 0.0625 "$F2"

ktap_exit
