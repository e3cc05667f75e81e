#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# trace_watch.sh - the tracing runtime with KCC_TRACE_WATCH: the counts
# of watched k-contexts it keeps at every call must be those kcc watch
# and kcc ccf find in the trace files the same run wrote, thread by
# thread, on the tracer's test program (recursion, longjmp(), a thread,
# exit()) at -O0 and -O2 and on a generated program with deep random
# recursion; a bad watch file turns the watch off, not the trace.

CC=${CC:-cc}
RT=tools/kcc-trace/kcc_trace_rt.c

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
if ! command -v "$CC" >/dev/null 2>&1; then
	ktap_skip_all "no C compiler ($CC)"
fi
ktap_tmpdir trace_watch
plan 8

$CC -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-c -o "$tmp/rt.o" "$RT" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || show_err
result $rc "the runtime with the watch builds with -Wall -Wextra -Werror"

# A program whose calls follow a fixed pseudo-random walk over 8 routines,
# recursion included, 40 deep at most.
awk 'BEGIN {
	print "static unsigned long s = 12345;"
	print "static unsigned int next(void) { s = s * 6364136223846793005ul + 1442695040888963407ul; return (unsigned int)(s >> 33); }"
	for (i = 0; i < 8; i++) print "void f" i "(int d);"
	for (i = 0; i < 8; i++) {
		print "__attribute__((noinline)) void f" i "(int d) {"
		print "\tint n = d < 40 ? (int)(next() % 3) : 0;"
		print "\twhile (n-- > 0) switch (next() % " (i + 2 < 8 ? i + 2 : 8) ") {"
		for (j = 0; j < 8; j++) print "\tcase " j ": f" j "(d + 1); break;"
		print "\t}"
		print "}"
	}
	print "int main(void) { for (int i = 0; i < 300; i++) f0(0); return 0; }"
}' >"$tmp/walk.c"

# watch_run SRC OPT K: trace SRC once to make the watch file (every
# k-CCF context of the trace, and one that never runs), run it again
# with the watch, and compare each thread's counts.
watch_run() {
	rm -rf "$tmp/out" "$tmp/wout" && mkdir "$tmp/out" "$tmp/wout" &&
	$CC "$2" -g -finstrument-functions -c -o "$tmp/p.o" "$1" &&
	$CC -o "$tmp/p" "$tmp/p.o" "$tmp/rt.o" -lpthread &&
	KCC_TRACE_DIR="$tmp/out" "$tmp/p" &&
	"$KCC" ccf -k "$3" "$tmp/out" | cut -f2 >"$tmp/w" &&
	echo 'main;main' >>"$tmp/w" &&
	KCC_TRACE_WATCH="$tmp/w" KCC_TRACE_DIR="$tmp/wout" "$tmp/p" \
		2>"$tmp/err" || return 1
	[ ! -s "$tmp/err" ] || return 1
	nthr=0
	for f in "$tmp"/wout/*.kft; do
		b=${f%.kft}
		[ -f "$b.watch" ] || return 1
		"$KCC" watch -w "$tmp/w" "$f" >"$b.kccw" 2>/dev/null &&
		"$KCC" ccf -k "$3" "$f" >"$b.ccf" || return 1
		# The same counts as kcc watch, the same residual ...
		grep -v '^#' "$b.kccw" >"$b.kccw.c"
		grep -v '^#' "$b.watch" | cmp -s - "$b.kccw.c" || return 1
		[ "$(sed -n 's/.*\(residual=[0-9]*\).*/\1/p' "$b.watch")" = \
		  "$(sed -n 's/.*\(residual=[0-9]*\).*/\1/p' "$b.kccw")" ] ||
			return 1
		# ... and those of the thread's k-CCF, 0 where it has none.
		awk -F '\t' 'FNR == NR { c[$2] = $1; next } /^#/ { next }
			$1 != (($2 in c) ? c[$2] : 0) { bad = 1 }
			END { exit bad }' "$b.ccf" "$b.watch" || return 1
		nthr=$((nthr + 1))
	done
	[ $nthr -ge 1 ]
}

for opt in -O0 -O2; do
	watch_run selftests/kcc/tracer/tracee.c $opt 3
	st=$?
	[ $st -eq 0 ] || show_err
	result $st "tracee $opt, k=3: runtime counts = kcc watch = k-CCF, per thread"
done
for k in 2 8; do
	watch_run "$tmp/walk.c" -O2 $k
	st=$?
	[ $st -eq 0 ] || show_err
	result $st "random walk -O2, k=$k: runtime counts = kcc watch = k-CCF"
done
grep -q '^# calls=[1-9][0-9][0-9]* watched=[1-9]' "$tmp"/wout/*.watch
result $? "the walk's counts are not trivial"

printf 'main;nosuchfn\n' >"$tmp/bad.w"
rm -rf "$tmp/wout" && mkdir "$tmp/wout"
KCC_TRACE_WATCH="$tmp/bad.w" KCC_TRACE_DIR="$tmp/wout" "$tmp/p" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] &&
	grep -qF "bad.w:1: no function of the executable is named 'nosuchfn': watch off" "$tmp/err" &&
	ls "$tmp"/wout/*.kft >/dev/null 2>&1 &&
	! ls "$tmp"/wout/*.watch >/dev/null 2>&1
result $? "an unknown routine: the watch is off with the reason, the trace is written"

rm -rf "$tmp/wout" && mkdir "$tmp/wout"
KCC_TRACE_DIR="$tmp/wout" "$tmp/p" 2>"$tmp/err" &&
	ls "$tmp"/wout/*.kft >/dev/null 2>&1 &&
	! ls "$tmp"/wout/*.watch >/dev/null 2>&1 && [ ! -s "$tmp/err" ]
result $? "without KCC_TRACE_WATCH: no watch file, nothing said"

ktap_exit
