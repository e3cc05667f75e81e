#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# install.sh - make install and make install-dkms into a DESTDIR: the
# tools run from there, every command (as 'kcc --help' lists them) and
# kccread has a man page that groff renders without a warning, every
# long option a --help prints is in its man page (hand-written pages
# cannot drift from the code), and the module's sources and dkms.conf
# are where DKMS looks for them.

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
for t in make help2man groff; do
	command -v $t >/dev/null || ktap_skip_all "no $t"
done
ktap_tmpdir install
plan 9

root=$tmp/root
run make -s install DESTDIR="$root" prefix=/usr
[ $rc -eq 0 ] && [ -x "$root/usr/bin/kcc" ] && [ -x "$root/usr/bin/kccread" ]
result $? "make install DESTDIR prefix=/usr: usr/bin/kcc and usr/bin/kccread"
[ $rc -eq 0 ] || show

run "$root/usr/bin/kcc" --version
v=$(sed -n 's/^kcc version //p' "$tmp/out")
run "$root/usr/bin/kccread" --version
[ -n "$v" ] && grep -q "^kccread $v " "$tmp/out" &&
	"$root/usr/bin/kccread" --help >/dev/null
result $? "installed kcc and kccread run, same version $v"

man1=$root/usr/share/man/man1
cmds=$("$KCC" --help | sed -n '/^Commands:/,/^$/s/^   \([a-z][a-z-]*\) .*/\1/p' | tr '\n' ' ')
missing=
for c in $cmds; do
	[ -s "$man1/kcc-$c.1" ] || missing="$missing kcc-$c.1"
done
for p in kcc.1 kccread.1; do
	[ -s "$man1/$p" ] || missing="$missing $p"
done
[ -n "$cmds" ] && [ -z "$missing" ]
result $? "a man page for kcc, kccread and each of: $cmds${missing:+ (missing:$missing)}"

bad=
for p in "$man1"/*.1; do
	groff -man -ww -z "$p" 2>"$tmp/err" && [ ! -s "$tmp/err" ] ||
		bad="$bad $(basename "$p")"
done
[ -z "$bad" ]
result $? "groff renders every page without a warning${bad:+ (not:$bad)}"

# Long options of a --help, and the text of a man page without roff.
long_opts() {
	grep -o -- '--[a-z][a-z-]*' | sort -u
}
man_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"
}
for c in $cmds; do
	"$KCC" "$c" --help | long_opts | while read -r o; do
		man_text "$man1/kcc-$c.1" | grep -qF -- "$o" || echo "kcc-$c.1:$o"
	done
done >"$tmp/drift"
"$KCCREAD" --help | long_opts | while read -r o; do
	man_text "$man1/kccread.1" | grep -qF -- "$o" || echo "kccread.1:$o"
done >>"$tmp/drift"
[ ! -s "$tmp/drift" ]
result $? "every long option of every --help is in its man page"
[ -s "$tmp/drift" ] && diag "$tmp/drift"

run make -s install-dkms DESTDIR="$root"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
src=$root/usr/src/kcc-$ver
[ $rc -eq 0 ] && [ -n "$ver" ] && cmp -s dkms.conf "$src/dkms.conf" &&
	cmp -s Kbuild "$src/Kbuild"
result $? "make install-dkms: usr/src/kcc-$ver with dkms.conf and Kbuild"
miss=
for f in kmod/*.[ch] lbr/*.[ch] include/uapi/linux/kcc.h; do
	cmp -s "$f" "$src/$f" || miss="$miss $f"
done
[ -z "$miss" ]
result $? "... and every source kcc.ko is built from${miss:+ (missing:$miss)}"
# shellcheck disable=SC2016 # dkms.conf's own variables, literally
grep -q '^BUILT_MODULE_NAME\[0\]="kcc"' "$src/dkms.conf" &&
	grep -q 'M=${dkms_tree}/${PACKAGE_NAME}/${PACKAGE_VERSION}/build' "$src/dkms.conf"
result $? "dkms.conf builds kcc.ko from its dkms tree"
[ ! -e "$root/usr/local" ]
result $? "prefix=/usr is honoured: nothing under usr/local"

ktap_exit
