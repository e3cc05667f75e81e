#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# watch.sh - kcc watch (watched k-contexts counted exactly in a PPP-
# numbered array) against kcc ccf's exact k-CCF counts, kcc report
# --export-watch, and bad watch files.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir watch
plan 18

# r calls a, a calls b; r calls b.  Worked by hand: b runs twice (under
# a and under r), every other watched context once; the call of a has
# no watched suffix (neither 'a' nor 'r;a' is watched): residual 1.
printf 'call r\ncall a\ncall b\nreturn\nreturn\ncall b\nreturn\nreturn\n' \
	>"$tmp/small.txt"
printf '# a comment\nb\na;b\n\n  r;a;b  \nr;b\nr\n' >"$tmp/small.watch"
expect_out '2\tb\n1\ta;b\n1\tr;a;b\n1\tr;b\n1\tr\n# contexts=5 numbers=5 delta=1.000\n# calls=4 watched=6 residual=1 aliases=0\n' \
	"hand-checked counts and residual" -- \
	"$KCC" watch -w "$tmp/small.watch" "$tmp/small.txt"

# A random recursive trace: 24 routines, depth up to 40, fixed seed.
awk 'BEGIN {
	srand(7); d = 0
	for (i = 0; i < 30000; i++) {
		if (d == 0 || (d < 40 && rand() < 0.55)) {
			r = int(rand() * rand() * 24)
			print "call f" r; d++
		} else {
			print "return"; d--
		}
	}
	while (d-- > 0) print "return"
}' >"$tmp/rand.txt"

# same_as_ccf TRACE K STRIDE: watch every STRIDE-th k-CCF context plus
# paths that never ran; each count must be the k-CCF's (0 for those never
# seen).  (Half of all 8-contexts of a dense random graph would need more
# numbers than kcc allows: PPP's holes grow with the paths, the hot
# contexts a user watches number close to 1 each.)
same_as_ccf() {
	"$KCC" ccf -k "$2" "$1" >"$tmp/ccf" 2>"$tmp/err" || return 1
	# ... and the reversals of paths that never ran the other way round
	awk -F '\t' -v s="$3" '{ seen[$2] = 1 } NR % s == 0 { print $2 }
		END { for (p in seen) { n = split(p, r, ";"); q = r[n]
			for (i = n - 1; i >= 1; i--) q = q ";" r[i]
			if (!(q in seen) && !(q in done) && m++ < 50) {
				done[q] = 1; print q } } }' "$tmp/ccf" >"$tmp/w"
	run "$KCC" watch -w "$tmp/w" "$1"
	[ $rc -eq 0 ] && ! sanitized || return 1
	awk -F '\t' 'FNR == NR { c[$2] = $1; next }
		/^#/ { next }
		{ n++; want = ($2 in c) ? c[$2] : 0
		  if ($1 != want) { print "bad " $0 " want " want; bad = 1 } }
		END { exit bad || n < 2 }' "$tmp/ccf" "$tmp/out"
}

for ks in 1:2 3:3 8:40; do
	k=${ks%:*}
	same_as_ccf "$tmp/rand.txt" "$k" "${ks#*:}"
	st=$?
	[ $st -eq 0 ] || show
	result $st "random trace, k=$k: watched counts equal the k-CCF's"
done
same_as_ccf selftests/kcc/data/fig2.trace 2 1
st=$?
[ $st -eq 0 ] || show
result $st "fig2 trace, k=2: watched counts equal the k-CCF's"

# The paths of a view of kcc report, counted on the trace they came from.
"$KCC" record --trace "$tmp/rand.txt" -k 3 -o "$tmp/rand.kcc" \
	>/dev/null 2>"$tmp/err"
run "$KCC" report --hot 0.01 --k 3 --export-watch "$tmp/hot.watch" \
	"$tmp/rand.kcc"
nctx=$(grep -vc '^#' "$tmp/hot.watch" 2>/dev/null)
[ $rc -eq 0 ] && [ "${nctx:-0}" -ge 5 ] && ! sanitized &&
	"$KCC" ccf -k 3 "$tmp/rand.txt" >"$tmp/ccf" &&
	"$KCC" watch -w "$tmp/hot.watch" "$tmp/rand.txt" >"$tmp/out" &&
	awk -F '\t' 'FNR == NR { c[$2] = $1; next } /^#/ { next }
		$1 != c[$2] || $1 == 0 { bad = 1 } END { exit bad }' \
		"$tmp/ccf" "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "report --hot --export-watch: $nctx contexts, counts equal the k-CCF's"

run "$KCC" report --routine f5 --k 2 --export-watch "$tmp/f5.watch" \
	"$tmp/rand.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	awk '/^#/ { next } { n++ } !/(^|;)f5$/ { bad = 1 }
		END { exit bad || n < 3 }' "$tmp/f5.watch" &&
	"$KCC" ccf -k 2 "$tmp/rand.txt" | awk -F '\t' '$2 ~ /(^|;)f5$/' |
		cut -f2 | sort >"$tmp/f5.want" &&
	grep -v '^#' "$tmp/f5.watch" | sort | cmp -s - "$tmp/f5.want"
st=$?
[ $st -eq 0 ] || show
result $st "report --routine --export-watch: every 2-context into f5"

# The traces make eval records, when they are there: the 500 hottest
# 8-contexts of bzip2's run (it has 415).
evt=${KCC_EVAL_CACHE:-$HOME/.cache/kcc-eval}/traces/bzip2.trace
if [ -f "$evt" ]; then
	"$KCC" ccf -k 8 "$evt" >"$tmp/ccf" 2>"$tmp/err" &&
		sort -rn "$tmp/ccf" | head -n 500 | cut -f2 >"$tmp/ev.watch" &&
		run "$KCC" watch -w "$tmp/ev.watch" "$evt" &&
		[ $rc -eq 0 ] && ! sanitized &&
		awk -F '\t' 'FNR == NR { c[$2] = $1; next } /^#/ { next }
			{ n++ } $1 != c[$2] { bad = 1 }
			END { exit bad || n != want }' \
			want="$(head -n 500 "$tmp/ccf" | wc -l)" "$tmp/ccf" "$tmp/out"
	st=$?
	[ $st -eq 0 ] || show
	result $st "bzip2's trace, hottest 8-contexts: counts equal the k-CCF's"
else
	skip "no eval traces in ${evt%/*} (make eval records them)"
fi

expect 2 "needs a view to export" "--export-watch without a view" -- \
	"$KCC" report --export-watch "$tmp/x.watch" "$tmp/rand.kcc"

printf 'r;a\nr;zz\n' >"$tmp/absent.watch"
run "$KCC" watch -w "$tmp/absent.watch" "$tmp/small.txt"
[ $rc -eq 0 ] && ! sanitized && grep -qx '0	r;zz' "$tmp/out" &&
	grep -qx '1	r;a' "$tmp/out" &&
	grep -qF "absent.watch:2: warning: the trace never calls 'zz'" "$tmp/err"
st=$?
[ $st -eq 0 ] || show
result $st "a routine the trace never calls: a warning, its contexts count 0"
printf 'b\nr;a;b;a;b;a;b;a;b;a\n' >"$tmp/bad.watch"
expect 1 "bad.watch:2: 'r;a;b;a;b;a;b;a;b;a' is longer than 8 call edges" \
	"a context of 9 call edges" -- \
	"$KCC" watch -w "$tmp/bad.watch" "$tmp/small.txt"
printf 'a;b\nb\n# again\na;b\n' >"$tmp/bad.watch"
expect 1 "bad.watch:4: context given twice: 'a;b'" "a duplicate context" -- \
	"$KCC" watch -w "$tmp/bad.watch" "$tmp/small.txt"
printf 'a;;b\n' >"$tmp/bad.watch"
expect 1 "bad.watch:1: empty routine name in 'a;;b'" "an empty name" -- \
	"$KCC" watch -w "$tmp/bad.watch" "$tmp/small.txt"
awk 'BEGIN { for (i = 0; i <= 65536; i++) print "r;x" i }' \
	>"$tmp/bad.watch"
expect 1 "bad.watch:65537: more than 65536 contexts" "too many contexts" -- \
	"$KCC" watch -w "$tmp/bad.watch" "$tmp/small.txt"

# kcc record --watch without the module: --trace makes the stream of a
# process running the trace on 3 threads, each call entering its routine
# at some address inside it and charging 1 sample; the watched contexts
# are counted beside each thread's k-SF through the routines' address
# ranges, as kcc.ko counts them, and come back as KCC_REC_WATCH records
# summed by kcc report.  Calls must be kcc watch's on the trace, samples
# equal to calls, and the totals and residual kcc watch's.
"$KCC" ccf -k 3 "$tmp/rand.txt" | awk -F '\t' 'NR % 3 == 0 { print $2 }' \
	>"$tmp/rec.watch"
echo 'f1;f2;f1;f2' >>"$tmp/rec.watch"
"$KCC" watch -w "$tmp/rec.watch" "$tmp/rand.txt" >"$tmp/rec.want" 2>/dev/null
run "$KCC" record --trace "$tmp/rand.txt" --threads 3 -k 2 \
	--watch "$tmp/rec.watch" -o "$tmp/rec.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	run "$KCC" report --watched "$tmp/rec.kcc" && [ $rc -eq 0 ] &&
	! sanitized && grep -v '^#' "$tmp/out" | cut -f1,4 >"$tmp/rec.got" &&
	grep -v '^#' "$tmp/rec.want" | cmp -s - "$tmp/rec.got" &&
	[ "$(grep -vc '^#' "$tmp/rec.got")" -ge 100 ] &&
	awk -F '\t' '/^#/ { next } $1 != $3 { bad = 1 } END { exit bad }' \
		"$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "record --trace --watch: report --watched = kcc watch ($(grep -vc '^#' "$tmp/rec.watch") contexts, 3 threads)"
calls=$(sed -n 's/^# calls=\([0-9]*\) .*residual=\([0-9]*\) .*/\1 \2/p' "$tmp/rec.want")
grep -q "^# total: calls=${calls% *} " "$tmp/out" &&
	grep -q "^# residual: calls=${calls#* } " "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "record --trace --watch: totals and residual are kcc watch's ($calls)"
run "$KCC" report "$tmp/rec.kcc"
[ $rc -eq 0 ] && ! sanitized && tail -n 1 "$tmp/out" | grep -q '^# residual: calls='
st=$?
[ $st -eq 0 ] || show
result $st "the text report ends with the watched contexts"
printf 'f1\nf1;f2;f1;f2;f1;f2;f1;f2;f1;f2\n' >"$tmp/bad.watch"
rm -f "$tmp/bad.kcc"
run "$KCC" record --trace "$tmp/rand.txt" --watch "$tmp/bad.watch" \
	-o "$tmp/bad.kcc"
[ $rc -eq 1 ] && ! sanitized && [ ! -e "$tmp/bad.kcc" ] &&
	grep -q "bad.watch:2: .* is longer than 8 call edges" "$tmp/err"
st=$?
[ $st -eq 0 ] || show
result $st "record --watch with a bad file: the error, no profile"

ktap_exit
