#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fresh_root.sh - make demo as a new user runs it, on a fresh Debian 12
# root, as TAP (make check-demo; Documentation/testing.rst):
#
#   - a Debian 12 root made by debootstrap (minbase) plus make, the one
#     package a user needs to type "make demo"; the first run makes it
#     and keeps it as a tarball in $KCC_DEB_CACHE (default
#     /var/cache/kcc/debroot), later runs only unpack it;
#   - the working tree's files known to git are copied in, and make demo
#     runs there as root, with nothing else installed: it must install
#     what it uses (scripts/deps.sh demo), build, boot its guest and
#     print its reports, and end with its "make demo: N s" line;
#   - every package deps.sh names for the demo was used: at least one
#     of its files was read after its install (relatime updates a file's
#     access time once it is read after its change time; a link counts
#     by its target).  A metapackage (no file outside /usr/share) counts
#     as used when the first package it depends on is.  The packages pulled in as
#     dependencies are listed with what was never read, as comments;
#   - its step times and the whole time are printed as comments.
#
# apt's downloads are kept in $KCC_DEB_CACHE/archives, as make check-deb
# keeps them, so a rerun downloads nothing; Debian's archive serves a
# fresh machine at about 100 MB/s here, a few seconds of the demo's
# 130 MB.  Needs root (debootstrap, chroot, unshare -m) and the archive
# ($KCC_DEB_MIRROR); skips without them.  Nothing is mounted outside a
# private mount namespace.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
. "$top/selftests/lib/debroot.sh"

mirror=${KCC_DEB_MIRROR:-http://deb.debian.org/debian}
cache=${KCC_DEB_CACHE:-/var/cache/kcc/debroot}
suite=bookworm
base=$cache/$suite-minbase-make-v1.tar.zst

echo "TAP version 13"
[ "$(id -u)" -eq 0 ] || ktap_skip_all "needs root (debootstrap, chroot)"
for t in debootstrap unshare chroot zstd git; do
	command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
	command -v "$t" >/dev/null 2>&1 ||
		ktap_skip_all "$t not found (scripts/deps.sh installs it)"
done

mkdir -p "$cache/archives/partial" || exit 1
# Under the cache, not /tmp: the root grows to some 1.5 GB.
tmp=$(mktemp -d "$cache/demo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
root=$tmp/root

# ---- the root --------------------------------------------------------
debroot "$base" make
echo "# root: Debian $(cat "$root/etc/debian_version"), $(chroot "$root" dpkg-query -W -f='.\n' | wc -l) packages"
plan 5

# ---- make demo -------------------------------------------------------
mkdir -p "$root/root/kcc"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$root/root/kcc" -xf - || exit 1
chroot "$root" dpkg-query -W -f='${Package}\n' | sort >"$tmp/before"
# Access times are compared with change times; both come from this
# clock, a file read in the same second as its install is not seen.
sleep 1
start=$(date +%s)
inroot sh -c 'cd /root/kcc && make demo'
secs=$(( $(date +%s) - start ))
cp "$tmp/out" "$tmp/demo.out"
cp "$tmp/err" "$tmp/demo.err"
grep -E '^(==>|\([0-9]+ s\)$)' "$tmp/demo.out" | sed 's/^/# /'
echo "# make demo on a fresh root: $secs s (exit $rc)"
if [ $rc -eq 0 ] && grep -q '^make demo: [0-9]* s$' "$tmp/demo.out"; then
	result 0 "make demo on a fresh Debian 12 root ($secs s)"
else
	tail -n 25 "$tmp/demo.out" "$tmp/demo.err" | sed 's/^/# /'
	result 1 "make demo on a fresh Debian 12 root ($secs s, exit $rc)"
fi

# The reports: the fp profile names the workload's contexts and the lbr
# profile counts main once (Documentation/user-guide.rst, "Worked
# example in a guest").
grep -q 'scan_big;touch\|scan_big *$' "$tmp/demo.out" &&
	grep -q '^demotr  *1 ' "$tmp/demo.out" &&
	[ -s "$root/root/kcc/build/demo/kcc.svg" ] &&
	[ -s "$root/root/kcc/build/demo/kcc.pb.gz" ]
result $? "the demo's reports: contexts of scan_big, kcc eval's line, SVG and pprof files"
awk '/^-- kcc report --k 1 --percent-limit 0.5 .*kcc-lbr\.data$/ { on = 1; next }
     /^-- / { on = 0 }
     on && $NF == "__libc_start_call_main;main" { n = $2; seen = 1 }
     END { printf "# the lbr profile: main called %s times\n", seen ? n : "(no line)"
	   exit !(seen && n == 1) }' "$tmp/demo.out"
result $? "the demo's lbr profile counts main once"

# ---- what was installed, and was it used ------------------------------
chroot "$root" dpkg-query -W -f='${Package}\n' | sort >"$tmp/after"
comm -13 "$tmp/before" "$tmp/after" >"$tmp/new"
echo "# installed by make demo: $(wc -l <"$tmp/new") packages"

# read_after PKG: 0 when one of its files was read after its install; a
# symbolic link counts by the file it leads to in the root.
read_after() {
	chroot "$root" dpkg -L "$1" 2>/dev/null | while read -r f; do
		if [ -L "$root$f" ]; then
			f=$(chroot "$root" readlink -f "$f") || continue
		fi
		[ -f "$root$f" ] || continue
		[ "$(stat -c %X "$root$f")" -gt "$(stat -c %Z "$root$f")" ] &&
			{ echo yes; break; }
	done | grep -q yes
}

# meta PKG: 0 when it has no file of its own outside /usr/share (a
# metapackage: documentation, bug and lintian notes only).
meta() {
	! chroot "$root" dpkg -L "$1" 2>/dev/null | while read -r f; do
		[ -f "$root$f" ] && [ ! -L "$root$f" ] || continue
		case $f in /usr/share/*) ;; *) echo x ;; esac
	done | grep -q x
}

# The demo's own list, as deps.sh names it.
named=$(sed -n '/^DEMO="/,/"$/p' "$top/scripts/deps.sh" |
	sed 's/^DEMO="//; s/\\$//; s/"$//' | tr ' ' '\n' | grep -v '^$')
unused=
for p in $named; do
	q=$p
	if meta "$p"; then
		q=$(chroot "$root" dpkg-query -W -f='${Depends}' "$p" |
			sed 's/[ ,(|].*//')
	fi
	[ "$q" = "$p" ] && q=
	read_after "${q:-$p}" || unused="$unused $p${q:+ ($q)}"
done
[ -n "$named" ] && [ -z "$unused" ]
result $? "every package deps.sh names for the demo was used${unused:+ (never read:$unused)}"

# Dependencies: counted, the unread ones named (not a failure: they
# come with what the demo names).
dunread=
for p in $(cat "$tmp/new"); do
	case " $(echo $named) " in *" $p "*) continue ;; esac
	read_after "$p" || dunread="$dunread $p"
done
echo "# dependencies never read:${dunread:- none}"
cat "$tmp/demo.out" "$tmp/demo.err" |
	grep -o -e '^[0-9]* upgraded, [0-9]* newly installed.*' \
		-e '^Need to get .*' | sed 's/^/# apt: /'

# Nothing the CI alone uses came in.
extra=
for p in chromium golang-go clang linux-source-6.1 linux-source-6.12 \
	debootstrap lintian valgrind cppcheck sparse; do
	grep -qx "$p" "$tmp/new" && extra="$extra $p"
done
# The guest's kernel is unpacked, not installed (scripts/kernels.sh image).
for p in $(grep -e '^linux-image-' -e '^initramfs-tools$' "$tmp/new"); do
	extra="$extra $p"
done
[ -z "$extra" ]
result $? "none of the CI's packages installed, nor a kernel image${extra:+ (installed: $extra)}"

ktap_exit
