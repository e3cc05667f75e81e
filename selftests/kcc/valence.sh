#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# valence.sh - Valence contexts of a real program built without frame
# pointers: kcc valence annotate builds the table from the binary's
# direct calls (capstone), the program runs with kcc_valence_rt.o in its
# check mode (a CPU-time timer reads the thread's area as a sample would,
# next to the stack the runtime keeps apart from the encoding), and
# kcc valence check decodes every sample: all of them must equal the
# true stack.  With the table of another build of the program, the same
# samples must not pass.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
CC=${CC:-gcc}
command -v "$CC" >/dev/null 2>&1 || ktap_skip_all "no C compiler"
ktap_tmpdir valence
plan 5

src=selftests/kcc/data/valence_prog.c
$CC -std=gnu11 -O2 -fPIC -Iinclude/uapi -Iuser/lib -c -o "$tmp/rt.o" \
	tools/kcc-trace/kcc_valence_rt.c 2>"$tmp/err" &&
	$CC -O2 -fomit-frame-pointer -finstrument-functions -o "$tmp/prog" \
		"$src" "$tmp/rt.o" 2>>"$tmp/err" &&
	$CC -O1 -fomit-frame-pointer -finstrument-functions -o "$tmp/other" \
		-DOTHER "$src" "$tmp/rt.o" 2>>"$tmp/err"
result $? "the program and another build of it, instrumented, no frame pointers"

"$KCC" valence annotate -o "$tmp/prog.valence" "$tmp/prog" >"$tmp/out" 2>"$tmp/err" &&
	grep -Eq "\(([1-9][0-9]*) cyclic\)" "$tmp/out" &&
	"$KCC" valence annotate -o "$tmp/other.valence" "$tmp/other" >/dev/null 2>>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && show
result $rc "annotate: a table with cyclic call sites (the recursions)"

KCC_VALENCE_TABLE=$tmp/prog.valence KCC_VALENCE_CHECK=$tmp/prog.chk \
	KCC_VALENCE_HZ=4000 "$tmp/prog" 60000 >"$tmp/run.out" 2>"$tmp/run.err"
result $? "the instrumented program runs with its table"

"$KCC" valence check "$tmp/prog.valence" "$tmp/prog.chk" >"$tmp/out" 2>"$tmp/err"
rc=$?
diag "$tmp/out"
diag "$tmp/run.err"
set -- $(sed -n 's/^samples \([0-9]*\) exact \([0-9]*\) wrong \([0-9]*\).*/\1 \2 \3/p' "$tmp/out")
[ $rc -eq 0 ] && [ "${1:-0}" -ge 20 ] && [ "$1" = "$2" ] && [ "$3" = 0 ]
result $? "every sample decodes to the true stack (${2:-?} of ${1:-?})"

"$KCC" valence check "$tmp/other.valence" "$tmp/prog.chk" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ]
result $? "the table of another build does not pass those samples"

ktap_exit
