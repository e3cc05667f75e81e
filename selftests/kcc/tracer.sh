#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tracer.sh - the kcc tracing runtime (tools/kcc-trace) on a small C
# program with recursion, longjmp(), a callback, a thread and exit():
# what kcc reads back must be the trace derived by hand from the
# program's source (selftests/kcc/tracer/tracee.c), at -O0 and at -O2
# (where the compiler turns exit hooks into sibling calls), and a
# damaged trace must give a clear error.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

CC=${CC:-cc}
SRC=selftests/kcc/tracer/tracee.c
RT=tools/kcc-trace/kcc_trace_rt.c

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
if ! command -v "$CC" >/dev/null 2>&1; then
	ktap_skip_all "no C compiler ($CC)"
fi
ktap_tmpdir tracer
plan 13

# Derived from tracee.c by hand.  main's thread first (its tid is the
# pid, the smallest), then the worker thread.
#  - fact(3) recurses twice;
#  - catcher: thrower(2) -> (1) -> (0) longjmp()s back; the entry of
#    leaf() shows the three thrower frames gone, so they return first;
#  - catcher2: thrower(1) -> (0) longjmp()s back and catcher2 returns:
#    its exit shows its two thrower frames gone;
#  - walk() runs start(), inlined into it (same sp, same call site), then
#    calls the callback cb() once per element;
#  - finish() calls exit(): finish and main never return, and are
#    closed at the end of the thread's trace.
cat >"$tmp/want" <<'EOF'
call main
call fact
call fact
call fact
return
return
return
call catcher
call thrower
call thrower
call thrower
return
return
return
call leaf
return
return
call catcher2
call thrower
call thrower
return
return
return
call walk
call start
return
call cb
return
call cb
return
call cb
return
return
call finish
return
return
call worker
call leaf
return
return
EOF

# ---- the runtime and the traced program build -------------------------------

$CC -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-c -o "$tmp/rt.o" "$RT" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || show_err
result $rc "the runtime builds with -Wall -Wextra -Werror"

# trace_at OPT: build the tracee at OPT, run it, convert what it wrote.
trace_at() {
	rm -rf "$tmp/out" && mkdir "$tmp/out" &&
	$CC "$1" -g -finstrument-functions -c -o "$tmp/tracee.o" "$SRC" &&
	$CC -o "$tmp/tracee" "$tmp/tracee.o" "$tmp/rt.o" -lpthread &&
	KCC_TRACE_DIR="$tmp/out" "$tmp/tracee" &&
	"$KCC" trace convert --to text -o "$tmp/got" "$tmp/out" 2>"$tmp/err"
}

for opt in -O0 -O2; do
	trace_at $opt
	rc=$?
	nfiles=$(find "$tmp/out" -name '*.kft' | wc -l)
	if [ $rc -eq 0 ] && [ "$nfiles" -eq 2 ] && ! sanitized &&
	   [ ! -s "$tmp/err" ] && cmp -s "$tmp/want" "$tmp/got"; then
		result 0 "$opt: two thread files, the hand-derived trace, no warning"
	else
		echo "# $nfiles trace files; diff want got:"
		diff "$tmp/want" "$tmp/got" | sed 's/^/#   /' | head -n 30
		show_err
		result 1 "$opt: two thread files, the hand-derived trace, no warning"
	fi
done

# ---- what kcc makes of it ---------------------------------------------------

"$KCC" ccf -k 1 "$tmp/out" >"$tmp/ccf" 2>"$tmp/err"
rc=$?
# thrower calls itself twice under catcher and once under catcher2; the
# callback runs three times under walk; leaf once under each thread.
if [ $rc -eq 0 ] && ! sanitized &&
   grep -qx '3	thrower;thrower' "$tmp/ccf" &&
   grep -qx '3	walk;cb' "$tmp/ccf" &&
   grep -qx '1	catcher;leaf' "$tmp/ccf" &&
   grep -qx '1	worker;leaf' "$tmp/ccf" &&
   grep -qx '5	thrower' "$tmp/ccf"; then
	result 0 "kcc ccf -k 1 DIR: the hand-counted 1-contexts"
else
	sed 's/^/#   /' "$tmp/ccf"
	show_err
	result 1 "kcc ccf -k 1 DIR: the hand-counted 1-contexts"
fi

worker=$(ls "$tmp"/out/*.kft | sort -t- -k3 -n | tail -n 1)
"$KCC" trace convert --to text "$worker" >"$tmp/got" 2>"$tmp/err"
rc=$?
printf 'call worker\ncall leaf\nreturn\nreturn\n' >"$tmp/want1"
[ $rc -eq 0 ] && ! sanitized && cmp -s "$tmp/want1" "$tmp/got"
result $? "one thread's file read alone"

# ---- damaged traces -----------------------------------------------------------

main=$(ls "$tmp"/out/*.kft | sort -t- -k3 -n | head -n 1)
size=$(wc -c <"$main")
head -c $((size - 2)) "$main" >"$tmp/cut.kft"
"$KCC" ccf -k 1 "$tmp/cut.kft" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ! sanitized && grep -q "cut.kft: offset .*end record" "$tmp/err"
result $? "a trace cut short: exit 1, FILE: offset N: ... end record"

"$KCC" ccf -k 1 --tolerant "$tmp/cut.kft" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && ! sanitized
result $? "a trace cut short with --tolerant: exit 0"

# A define record was written for every (routine, site) before its first
# event; shifting the ids past them must be caught.
head -c 16 "$main" >"$tmp/undef.kft"
printf '\175\002' >>"$tmp/undef.kft"
"$KCC" ccf -k 1 "$tmp/undef.kft" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ! sanitized && grep -q "undefined routine id" "$tmp/err"
result $? "an event of an undefined routine: exit 1 with the reason"

head -c 16 "$main" >"$tmp/garbage.kft"
head -c 4096 /dev/urandom >>"$tmp/garbage.kft"
"$KCC" ccf -k 1 --tolerant "$tmp/garbage.kft" >/dev/null 2>"$tmp/err"
rc=$?
{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && ! sanitized
result $? "random bytes after the header: exit 0 or 1, no crash (status $rc)"

printf 'KCCFTR\0\011' >"$tmp/version.kft"
head -c 8 /dev/zero >>"$tmp/version.kft"
"$KCC" ccf -k 1 "$tmp/version.kft" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ! sanitized && grep -q "version 9" "$tmp/err"
result $? "an unknown format version: exit 1 naming it"

mkdir "$tmp/none"
"$KCC" ccf -k 1 "$tmp/none" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ! sanitized && grep -q "no \*.kft trace files" "$tmp/err"
result $? "a directory without traces: exit 1 saying so"

# The runtime's magic is looked for in regular files only: peeking at a
# FIFO would eat the start of a text trace sent through it.
mkfifo "$tmp/fifo"
printf 'call r\ncall a\nreturn\nreturn\n' >"$tmp/fifo" &
"$KCC" ccf -k 1 "$tmp/fifo" >"$tmp/got" 2>"$tmp/err"
rc=$?
wait
printf '1\ta\n1\tr\n1\tr;a\n' >"$tmp/want1"
[ $rc -eq 0 ] && ! sanitized && cmp -s "$tmp/want1" "$tmp/got"
result $? "a text trace through a FIFO is read whole"

# ---- fork: the child writes a file of its own ---------------------------------

cat >"$tmp/fork.c" <<'EOF'
#include <sys/wait.h>
#include <unistd.h>
static __attribute__((noinline)) void child_work(void) { }
static __attribute__((noinline)) void parent_work(void) { }
int main(void)
{
	pid_t p = fork();

	if (p == 0) {
		child_work();
		return 0;
	}
	waitpid(p, NULL, 0);
	parent_work();
	return 0;
}
EOF
rm -rf "$tmp/out" && mkdir "$tmp/out" && : >"$tmp/err"
$CC -O0 -finstrument-functions -o "$tmp/fork" "$tmp/fork.c" "$tmp/rt.o" \
	-lpthread && KCC_TRACE_DIR="$tmp/out" "$tmp/fork" &&
for f in "$tmp"/out/*.kft; do
	"$KCC" trace convert --to text "$f" 2>>"$tmp/err" | tr '\n' ' '
	echo
done >"$tmp/got"
# The child's first file holds main's exit without its entry (ignored
# with a warning) after child_work; the parent's has everything.
if [ "$(wc -l <"$tmp/got")" -eq 2 ] &&
   grep -qx 'call main call parent_work return return ' "$tmp/got" &&
   grep -qx 'call child_work return ' "$tmp/got" && ! sanitized; then
	result 0 "fork: parent and child traces apart"
else
	sed 's/^/#   /' "$tmp/got"
	show_err
	result 1 "fork: parent and child traces apart"
fi

ktap_exit
