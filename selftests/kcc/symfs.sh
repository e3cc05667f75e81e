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
# keeps the mapped path, and warns of nothing.  With --build-ids too it
# keeps the path and no symbol table, and kcc report reads that profile.
# A --symfs that is not a directory is an error.

D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
KCCREAD=${KCCREAD:-$(dirname "$KCC")/kccread}
if ! command -v perl >/dev/null 2>&1; then
	ktap_skip_all "no perl"
fi
if [ -e /o/prog ]; then
	ktap_skip_all "/o/prog exists on this machine"
fi
ktap_tmpdir symfs
plan 8

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

"$KCCREAD" --symfs "$tmp/root" --build-ids -o "$tmp/d.kcc" "$tmp/p.stream" \
	2>"$tmp/d.err" &&
	! grep -q "could not be read" "$tmp/d.err" &&
	! grep -aq profile__add_objects "$tmp/d.kcc" && grep -aq /o/prog "$tmp/d.kcc" &&
	[ "$(wc -c <"$tmp/d.kcc")" -lt "$(wc -c <"$tmp/b.kcc")" ] &&
	"$KCC" report --buildid-dir "$tmp/none" "$tmp/d.kcc" >"$tmp/d.out" 2>>"$tmp/d.err" &&
	grep -qx '# objects by build-id: 0 at their path, 0 in the build-id cache, 0 from debuginfod, 1 not found (their routines unnamed)' "$tmp/d.out" &&
	! sanitized "$tmp/d.err"
result $? "with --symfs --build-ids: path kept, no symbol table, $(wc -c <"$tmp/d.kcc") bytes against $(wc -c <"$tmp/b.kcc"); kcc report reads it and says the object was not found"
id=$(readelf -n "$tmp/root/o/prog" | sed -n 's/.*Build ID: //p')
mkdir -p "$tmp/cache/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)" &&
	cp "$tmp/root/o/prog" "$tmp/cache/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)/elf" &&
	"$KCC" report --buildid-dir "$tmp/cache" "$tmp/d.kcc" >"$tmp/e.out" 2>"$tmp/e.err" &&
	grep -qx '# objects by build-id: 0 at their path, 1 in the build-id cache, 0 from debuginfod, 0 not found (their routines unnamed)' "$tmp/e.out" &&
	! sanitized "$tmp/e.err"
result $? "--build-ids profile, the object in a build-id cache (perf's layout): kcc report finds it there"

"$KCCREAD" --symfs "$tmp/nosuch" -o "$tmp/c.kcc" "$tmp/p.stream" 2>"$tmp/c.err"
rc=$?
[ $rc -eq 1 ] && grep -q "not a directory" "$tmp/c.err" && ! sanitized "$tmp/c.err"
result $? "--symfs of a missing directory: exit 1 with a message"

ktap_exit
