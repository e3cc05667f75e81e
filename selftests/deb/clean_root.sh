#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# clean_root.sh DEBDIR - the packages of make deb (in DEBDIR) on a clean
# Debian 12 root, as TAP (make check-deb; Documentation/packaging.rst):
#
#   - a Debian 12 root made by debootstrap (minbase) with Debian's
#     linux-headers-amd64 (the 6.1 headers) is unpacked; the first run
#     makes it and keeps it as a tarball in $KCC_DEB_CACHE (default
#     /var/cache/kcc/debroot), later runs only unpack it;
#   - apt installs kcc and kcc-dkms there from the .deb files, their
#     dependencies (dkms, the libraries) from Debian's archive;
#   - lintian (run by make deb) found no error and no warning;
#   - in the root: kcc --version names the version of debian/changelog,
#     kccread --help prints its usage, the man pages are there, the
#     package's postinst had DKMS build and install kcc.ko for the
#     installed headers, and dkms build kcc/VERSION -k KVER (after dkms
#     unbuild) builds it again from /usr/src, with the vermagic of those
#     headers; removing kcc-dkms removes it from dkms.
#
# Needs root (debootstrap, chroot, unshare -m) and the archive
# ($KCC_DEB_MIRROR, default http://deb.debian.org/debian); skips without
# them.  Nothing is mounted outside a private mount namespace, so an
# interrupted run leaves no mount behind.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
. "$top/selftests/lib/debroot.sh"

debs=${1:?usage: clean_root.sh DEBDIR}
debs=$(cd "$debs" && pwd)
mirror=${KCC_DEB_MIRROR:-http://deb.debian.org/debian}
cache=${KCC_DEB_CACHE:-/var/cache/kcc/debroot}
suite=bookworm
# The cache is remade when what goes into it changes.
base=$cache/$suite-minbase-headers-v1.tar.zst
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)

echo "TAP version 13"
[ "$(id -u)" -eq 0 ] || ktap_skip_all "needs root (debootstrap, chroot)"
for t in debootstrap unshare chroot zstd; do
	command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
	command -v "$t" >/dev/null 2>&1 ||
		ktap_skip_all "$t not found (scripts/deps.sh installs it)"
done
kcc_deb=$debs/kcc_${ver}_amd64.deb
dkms_deb=$debs/kcc-dkms_${ver}_all.deb
[ -f "$kcc_deb" ] && [ -f "$dkms_deb" ] ||
	ktap_skip_all "no kcc_$ver packages in $debs (make deb)"

# Under the package directory, not /tmp: the root is some 400 MB.
tmp=$(mktemp -d "$debs/root.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
root=$tmp/root

stage() {	# stage NAME START: the time of a stage, as a comment
	echo "# $1: $(( $(date +%s) - $2 )) s"
}

# ---- the root --------------------------------------------------------
debroot "$base" linux-headers-amd64
kver=$(ls "$root/lib/modules" | sort -V | tail -n 1)
echo "# root: Debian $(cat "$root/etc/debian_version"), headers $kver"
plan 15

# lintian's findings on these packages (scripts/deb.sh): no error and
# no warning.
if [ -f "$debs/lintian.txt" ]; then
	! grep '^[EW]: ' "$debs/lintian.txt" >"$tmp/lintian"
	result $? "lintian: no error, no warning"
	sed 's/^/# /' "$tmp/lintian"
else
	result 1 "lintian: no error, no warning (no $debs/lintian.txt)"
fi

# ---- install ---------------------------------------------------------
mkdir -p "$root/tmp/debs"
cp "$kcc_deb" "$dkms_deb" "$root/tmp/debs/"
start=$(date +%s)
inroot sh -c 'apt-get update -q && apt-get install -y -q \
	--no-install-recommends ./tmp/debs/kcc_*.deb ./tmp/debs/kcc-dkms_*.deb'
stage "apt-get install" "$start"
ok=$rc
[ $rc -eq 0 ] || show
[ $ok -eq 0 ] && inroot dpkg-query -W -f='${Package} ${Version} ${Status}\n' \
	kcc kcc-dkms dkms && [ "$(grep -c " install ok installed$" "$tmp/out")" -eq 3 ] &&
	grep -q "^kcc $ver " "$tmp/out" && grep -q "^kcc-dkms $ver " "$tmp/out"
result $? "apt installs kcc and kcc-dkms $ver, with dkms from the archive"

inroot kcc --version
[ $rc -eq 0 ] && [ "$(cat "$tmp/out")" = "kcc version $ver" ]
result $? "kcc --version: 'kcc version $ver' (debian/changelog's)"
[ $rc -eq 0 ] || show

inroot kccread --help
[ $rc -eq 0 ] && grep -q '^usage: kccread ' "$tmp/out" &&
	[ "$(wc -l <"$tmp/out")" -gt 5 ]
result $? "kccread --help prints its usage"
[ $rc -eq 0 ] || show

miss=
for c in kcc kccread kcc-record kcc-report kcc-diff kcc-merge kcc-import; do
	[ -s "$root/usr/share/man/man1/$c.1.gz" ] || miss="$miss $c"
done
[ -z "$miss" ]
result $? "man pages installed${miss:+ (missing:$miss)}"

# dkms.conf is the version's, with every source kcc.ko is built from.
src=$root/usr/src/kcc-$ver
miss=
for f in $(cd "$top" && ls Kbuild dkms.conf kmod/*.[ch] kmod/wrapper/*.h lbr/*.[ch] \
	include/uapi/linux/kcc.h); do
	cmp -s "$top/$f" "$src/$f" || miss="$miss $f"
done
[ -z "$miss" ]
result $? "kcc-dkms: /usr/src/kcc-$ver holds Kbuild, dkms.conf and kmod/, lbr/, include/uapi${miss:+ (differ or missing:$miss)}"

# What a user gets: the postinst has DKMS build and install kcc.ko.
inroot dkms status kcc
grep -q "^kcc/$ver, $kver, x86_64: installed" "$tmp/out" &&
	[ -s "$root/lib/modules/$kver/updates/dkms/kcc.ko" ]
result $? "apt's install had dkms build and install kcc.ko for $kver"
[ $rc -eq 0 ] || show

# dkms build from /usr/src, after unbuild (which also uninstalls).
ko=$root/var/lib/dkms/kcc/$ver/$kver/x86_64/module/kcc.ko
log=$root/var/lib/dkms/kcc/$ver/$kver/x86_64/log/make.log
inroot dkms unbuild "kcc/$ver" -k "$kver"
if [ $rc -eq 0 ] && [ ! -e "$ko" ]; then
	start=$(date +%s)
	inroot dkms build "kcc/$ver" -k "$kver"
	stage "dkms build" "$start"
	# The log of this build: every object of Kbuild compiled.
	want=$(grep -o '\(kmod\|lbr\)/[a-z_]*\.o' "$top/Kbuild" | sort)
	got=$(grep 'CC \[M\]' "$log" 2>/dev/null |
		grep -o '\(kmod\|lbr\)/[a-z_]*\.o' | sort)
	[ $rc -eq 0 ] && [ -s "$ko" ] && [ -n "$want" ] && [ "$want" = "$got" ]
else
	false
fi
result $? "dkms build kcc/$ver -k $kver (after dkms unbuild)"
if [ $rc -ne 0 ]; then	# dkms keeps a failed build's log in build/
	show
	tail -n 30 "$log" "$root/var/lib/dkms/kcc/$ver/build/make.log" \
		2>/dev/null | sed 's/^/# /'
fi

inroot modinfo -F vermagic "/var/lib/dkms/kcc/$ver/$kver/x86_64/module/kcc.ko"
case $(cat "$tmp/out") in
"$kver "*) result 0 "kcc.ko's vermagic is $kver's" ;;
*) show; result 1 "kcc.ko's vermagic is $kver's" ;;
esac

inroot dkms status kcc
grep -q "^kcc/$ver, $kver, x86_64: built" "$tmp/out"
result $? "dkms status: kcc/$ver built for $kver"
[ $rc -eq 0 ] || show

# kcc-dkms on the other kernels of the matrix (Documentation/
# kernels.rst): Debian 11's 5.10 and sid's 7.2 as scripts/kernels.sh
# prepares them, Debian 12's 6.12 and 6.12-rt from the host's headers
# packages; each tree, and the trees it includes or links (the -common
# headers, linux-kbuild), is bound into the root at its own path and
# linked from /lib/modules/RELEASE/build, where dkms looks.
tree_binds() {	# tree_binds KDIR: the directories KDIR's build reads
	c=$(sed -n '1s|^include \(/.*\)/Makefile$|\1|p' "$1/Makefile")
	k=$(readlink -f "$1/scripts")
	echo "$1${c:+ $c}${k:+ $(dirname "$k")}"
}
# What building for them needs beyond 6.1's headers, as a user would
# install it: gcc by that name (the 5.10 and 7.2 trees call it so) and
# pahole (dwarves: 6.12's BTF of modules).
inroot apt-get install -y -q --no-install-recommends gcc dwarves
[ $rc -eq 0 ] || show
all_binds=
for name in 5.10 6.12 6.12-rt 7.2; do
	kd=$(sh "$top/scripts/kernels.sh" get "$name" 2>/dev/null | cut -d' ' -f2)
	if [ -z "$kd" ] || [ ! -f "$kd/Makefile" ]; then
		skip "dkms build kcc/$ver for $name: no tree here (scripts/kernels.sh provide $name)"
		continue
	fi
	rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$kd/include/generated/utsrelease.h" 2>/dev/null)
	mkdir -p "$root/lib/modules/$rel" &&
		ln -sfn "$kd" "$root/lib/modules/$rel/build"
	binds=$(tree_binds "$kd")
	all_binds="$all_binds $binds"
	start=$(date +%s)
	root_binds=$binds inroot dkms build "kcc/$ver" -k "$rel"
	stage "dkms build for $name" "$start"
	mko=/var/lib/dkms/kcc/$ver/$rel/x86_64/module/kcc.ko
	if [ $rc -eq 0 ]; then
		inroot modinfo -F vermagic "$mko"
		case $(cat "$tmp/out") in
		"$rel "*) rc=0 ;;
		*) rc=1 ;;
		esac
	fi
	result $rc "dkms build kcc/$ver -k $rel ($name): kcc.ko with $rel's vermagic"
	if [ $rc -ne 0 ]; then
		show
		tail -n 30 "$root/var/lib/dkms/kcc/$ver/build/make.log" \
			2>/dev/null | sed 's/^/# /'
	fi
done

# The removal unbuilds kcc for every kernel: their trees stay bound.
root_binds=$all_binds inroot apt-get remove -y -q kcc-dkms
[ $rc -eq 0 ] && inroot dkms status kcc &&
	[ $rc -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -e "$src" ]
result $? "removing kcc-dkms removes kcc from dkms and /usr/src"
[ $rc -eq 0 ] || show

ktap_exit
