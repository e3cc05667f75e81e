#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# symfs.sh - kccread --symfs DIR: a mapped object that is not at its
# path on this machine is read from DIR/<path>.  The stream of a call
# trace maps "[trace]"; renamed to "/o/prog" (same length, same record
# sizes) it names a file this machine lacks.  Without --symfs kccread
# warns that the object could not be read and stores no symbols; with
# --symfs DIR holding a copy of kccread at DIR/o/prog it reads
# that copy's symbol table (a function of kccread is in the profile),
# keeps the mapped path, and warns of nothing.  A --symfs that is not a
# directory is an error.

KSFT_SKIP=4
D=selftests/kcc/data

echo "TAP version 13"
if [ -z "$KCC" ] || [ ! -x "$KCC" ]; then
	echo "1..0 # SKIP no kcc binary (set KCC)"
	exit $KSFT_SKIP
fi
KCCREAD=${KCCREAD:-$(dirname "$KCC")/kccread}
if ! command -v perl >/dev/null 2>&1; then
	echo "1..0 # SKIP no perl"
	exit $KSFT_SKIP
fi
if [ -e /o/prog ]; then
	echo "1..0 # SKIP /o/prog exists on this machine"
	exit $KSFT_SKIP
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-symfs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..6"
n=0
failed=0
result() {	# result STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		failed=1
		echo "not ok $n $2"
	fi
}
sanitized() {
	grep -Eq 'Sanitizer|runtime error:' "$1"
}

"$KCC" record --trace "$D/fig2.trace" -k 3 --stream -o "$tmp/t.stream" &&
	perl -pe 's{\[trace\]}{/o/prog}g' "$tmp/t.stream" >"$tmp/p.stream" &&
	grep -aq /o/prog "$tmp/p.stream"
result $? "a stream mapping /o/prog"

"$KCCREAD" -o "$tmp/a.kcc" "$tmp/p.stream" 2>"$tmp/a.err"
rc=$?
[ $rc -eq 0 ] && grep -q "could not be read" "$tmp/a.err" &&
	! grep -aq profile__add_objects "$tmp/a.kcc" && ! sanitized "$tmp/a.err"
result $? "without --symfs: object missing, warned, no symbols"

mkdir -p "$tmp/root/o" && cp "$KCCREAD" "$tmp/root/o/prog"
"$KCCREAD" --symfs "$tmp/root" -o "$tmp/b.kcc" "$tmp/p.stream" 2>"$tmp/b.err"
rc=$?
[ $rc -eq 0 ] && ! grep -q "could not be read" "$tmp/b.err" &&
	! sanitized "$tmp/b.err"
result $? "with --symfs: read without a warning"
grep -aq profile__add_objects "$tmp/b.kcc"
result $? "with --symfs: the copy's symbol table is in the profile"
grep -aq /o/prog "$tmp/b.kcc" && ! grep -aq "$tmp/root" "$tmp/b.kcc"
result $? "with --symfs: the profile keeps the mapped path"

"$KCCREAD" --symfs "$tmp/nosuch" -o "$tmp/c.kcc" "$tmp/p.stream" 2>"$tmp/c.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not a directory" "$tmp/c.err" && ! sanitized "$tmp/c.err"
result $? "--symfs of a missing directory: exit 1 with a message"

exit $failed
