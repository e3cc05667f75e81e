#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build (once) a kcc checker kernel from Debian's
# linux-source-VERSION: "make tinyconfig" plus the fragments of
# scripts/kconfig/, and print "VMLINUZ KDIR" on stdout.  KDIR is the
# build tree itself, usable as
#	make -C KDIR M=... modules
# to build kcc.ko for that kernel.
#
# Usage: debug-kernel.sh [-v VERSION] [-f FLAVOUR] [-c CACHE] [-j JOBS] [-n] [-h]
#
#   -v VERSION  source version: 6.1 (default) or 6.12 (linux-source-6.12,
#               bookworm-backports)
#   -f FLAVOUR  debug (default): kcc-debug.config, KASAN, UBSAN, lockdep,
#               kmemleak, debug objects...;  kcsan: the same with
#               kcc-kcsan.config over it, KCSAN instead of KASAN (the two
#               exclude each other)
#   -c CACHE    cache directory (default: $KCC_KERNEL_CACHE, else
#               /var/cache/kcc/kernels)
#   -j JOBS     parallel make jobs (default 2)
#   -n          do not build: print the pair if it is cached, else exit 4
#
# The fragments, in order (a later line on the same symbol wins):
# kcc-debug.config, kcc-VERSION.config when it exists (what differs
# between kernel versions), kcc-FLAVOUR.config for a flavour other than
# debug.  The tree lives in CACHE/FLAVOUR-<source version>-<key>, where
# key hashes the fragments, the source package version, the compiler
# version and RECIPE below; any change to one of them builds a new tree,
# a rerun with none changed returns at once.  Only one kernel build runs
# at a time on a machine (a lock in CACHE); the build runs under
# "nice -n 10".  The build time goes to stderr.
# Needs: linux-source-VERSION, gcc, make, flex, bison, bc, libelf-dev
# (objtool, for the ORC unwinder), xz-utils.
# Exit status: 0 ready, 1 build failed, 2 usage, 4 cannot build here
# (missing package or tool; with -n: not built yet).
set -u

# Bump when the way the tree is built changes (not the fragment: that
# is hashed itself).
RECIPE=1

top=$(cd "$(dirname "$0")/.." && pwd)
kconfig=$top/scripts/kconfig
cache=${KCC_KERNEL_CACHE:-/var/cache/kcc/kernels}
jobs=2
dry=
version=6.1
flavour=debug

usage() {
	echo "usage: $0 [-v 6.1|6.12] [-f debug|kcsan] [-c CACHE] [-j JOBS] [-n]" >&2
	exit 2
}

while getopts v:f:c:j:nh opt; do
	case $opt in
	v) version=$OPTARG ;;
	f) flavour=$OPTARG ;;
	c) cache=$OPTARG ;;
	j) jobs=$OPTARG ;;
	n) dry=1 ;;
	h) sed -n '4,37s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) usage ;;
	esac
done
case $version in 6.1 | 6.12) ;; *) usage ;; esac
case $flavour in debug | kcsan) ;; *) usage ;; esac

die() {
	echo "debug-kernel.sh: $*" >&2
	exit 1
}

missing() {
	echo "debug-kernel.sh: $*" >&2
	exit 4
}

srcpkg=linux-source-$version
tarball=/usr/src/$srcpkg.tar.xz
srcver=$(dpkg-query -W -f='${Version}' "$srcpkg" 2>/dev/null) || srcver=
[ -n "$srcver" ] && [ -r "$tarball" ] ||
	missing "$srcpkg is not installed (apt-get install $srcpkg)"
fragments=$kconfig/kcc-debug.config
[ -f "$kconfig/kcc-$version.config" ] &&
	fragments="$fragments $kconfig/kcc-$version.config"
[ "$flavour" = debug ] || fragments="$fragments $kconfig/kcc-$flavour.config"
for f in $fragments; do
	[ -r "$f" ] || die "$f: missing"
done
command -v gcc >/dev/null 2>&1 || missing "gcc not found"

# (For 6.1 debug, a single fragment, this is the key of RECIPE 1 before
# versions and flavours existed, so its cached tree stays valid.)
key=$({
	echo "recipe $RECIPE"
	echo "source $srcpkg $srcver"
	gcc --version | head -n 1
	# shellcheck disable=SC2086
	cat $fragments
} | sha256sum | cut -c1-12)
dir=$cache/$flavour-$srcver-$key
tree=$dir/linux

print_pair() {
	echo "$tree/arch/x86/boot/bzImage $tree"
}

if [ -f "$dir/.done" ]; then
	print_pair
	exit 0
fi
[ -n "$dry" ] && missing "not built yet: $dir"

for tool in make flex bison bc xz nice flock; do
	command -v $tool >/dev/null 2>&1 ||
		missing "$tool not found (scripts/deps.sh installs it)"
done
[ -f /usr/include/gelf.h ] || missing "libelf headers missing (libelf-dev)"

mkdir -p "$cache" || die "cannot create $cache"
exec 9>"$cache/.lock" || die "cannot open $cache/.lock"
if ! flock -n 9; then
	echo "debug-kernel.sh: another kernel build holds $cache/.lock; waiting" >&2
	flock 9 || die "cannot lock $cache/.lock"
fi
# Another run may have finished this very tree while we waited.
if [ -f "$dir/.done" ]; then
	print_pair
	exit 0
fi

start=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir" || die "cannot create $dir"
log=$dir/build.log
echo "debug-kernel.sh: building $srcpkg $srcver (key $key) in $dir, log $log" >&2

# The tarball's top directory is linux-source-VERSION; rename it to
# "linux".
tar -xJf "$tarball" -C "$dir" || die "cannot unpack $tarball"
mv "$dir/$srcpkg" "$tree" || die "unexpected layout of $tarball"
# The fragments as one, each symbol's last line kept (what merge_config.sh
# does too): the file merged, and the list checked below.
fragment=$dir/kcc-$flavour.config
# shellcheck disable=SC2086
awk '
	/^CONFIG_[A-Za-z0-9_]+=/ { sym = $0; sub(/=.*/, "", sym) }
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { sym = $2 }
	sym != "" { if (!(sym in line)) order[n++] = sym; line[sym] = $0; sym = "" }
	END { for (i = 0; i < n; i++) print line[order[i]] }
' $fragments >"$fragment" || die "cannot write $fragment"

kmake() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C \
		nice -n 10 make -C "$tree" "$@" >>"$log" 2>&1
}

kmake tinyconfig || die "make tinyconfig failed (see $log)"
(cd "$tree" && LC_ALL=C sh scripts/kconfig/merge_config.sh -m .config \
	"$fragment") >>"$log" 2>&1 ||
	die "merge_config.sh failed (see $log)"
kmake olddefconfig || die "make olddefconfig failed (see $log)"

# Kconfig drops a request whose dependencies are not met without a word:
# check that every line of the fragment is in the final .config.
lost=$(grep -E '^(CONFIG_|# CONFIG_)' "$fragment" | while IFS= read -r line; do
	case $line in
	"# CONFIG_"*)
		sym=${line#\# }
		sym=${sym%% *}
		grep -q "^$sym=" "$tree/.config" && echo "$line"
		;;
	*)
		grep -qxF "$line" "$tree/.config" || echo "$line"
		;;
	esac
done)
if [ -n "$lost" ]; then
	echo "debug-kernel.sh: the final .config lost these fragment lines:" >&2
	echo "$lost" | sed 's/^/	/' >&2
	exit 1
fi

kmake -j"$jobs" all || {
	tail -n 30 "$log" >&2
	die "kernel build failed (see $log)"
}
[ -f "$tree/arch/x86/boot/bzImage" ] && [ -f "$tree/Module.symvers" ] ||
	die "build finished without bzImage or Module.symvers"
touch "$dir/.done"
echo "debug-kernel.sh: built $(cat "$tree/include/config/kernel.release") in $(( $(date +%s) - start )) s" >&2
print_pair
exit 0
