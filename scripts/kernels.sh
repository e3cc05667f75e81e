#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh - the kernel flavours kcc.ko is tested on, as pairs of a
# guest kernel image (VMLINUZ) and the build tree to build kcc.ko against
# (KDIR).  The guest harness iterates over them:
#
#	scripts/kernels.sh list | while read -r name vmlinuz kdir; do
#		sh selftests/guest/run.sh -K "$kdir" -k "$vmlinuz"
#	done
#
# Usage: kernels.sh [list [NAME...]]
#        kernels.sh names
#        kernels.sh get NAME
#        kernels.sh provide [NAME...]
#        kernels.sh image NAME
#
#   list      one line "NAME VMLINUZ KDIR" per flavour present on this
#             machine (all flavours, or the NAMEs given); a flavour that is
#             absent is named on stderr, with what provides it
#   names     every flavour name, present or not
#   get       "VMLINUZ KDIR" of NAME; exit 4 if it is absent
#   provide   make the flavours present (default: all): installs Debian
#             packages with apt-get (root) or builds the checker kernels
#             (scripts/debug-kernel.sh, several minutes each on 2 cores,
#             cached; Documentation/testing.rst has the times), then
#             lists them
#   image     for 6.1, 6.12 or 6.12-rt with its headers installed: only
#             its vmlinuz, unpacked from Debian's linux-image package into
#             CACHE/boot without installing it (make demo), then "get"
#
# Flavours:
#   6.1       Debian 12's kernel (linux-image-amd64, linux-headers-amd64)
#   6.12      Debian's 6.12 backport (linux-image-6.12-amd64,
#             linux-headers-6.12-amd64)
#   6.12-rt   the same with PREEMPT_RT (linux-image-6.12-rt-amd64,
#             linux-headers-6.12-rt-amd64)
#   5.10      Debian 11 (bullseye)'s newest linux-image-5.10.0-N-amd64,
#             its linux-headers (-amd64, -common) and linux-kbuild-5.10,
#             fetched with "apt-get download" under a private apt state
#             (CACHE/../apt/bullseye) and unpacked with dpkg-deb -x into
#             CACHE/deb-5.10-<package version>: never installed.  The
#             headers' Makefile is pointed at the unpacked -common tree
#             and the compiler is the host's gcc (Debian built it with
#             gcc-10).
#   7.2       Debian sid's linux-image-amd64 (7.2): its vmlinuz
#             (linux-binary-*), and a tree prepared from linux-source-7.2
#             with Debian's .config and Module.symvers (linux-headers),
#             since sid's linux-kbuild tools need a newer glibc than the
#             host's: "make olddefconfig modules_prepare" with the host's
#             gcc, without Rust, BTF and module signing, release
#             <version>+debN-amd64 as Debian's.  Fetched and cached as
#             5.10 is, in CACHE/deb-7.2-<package version>; a few minutes
#             once on 2 cores.
#   debug     linux-source-6.1 built from tinyconfig and
#             scripts/kconfig/kcc-debug.config: KASAN, UBSAN, lockdep,
#             kmemleak, debug lists and objects (scripts/debug-kernel.sh)
#   debug-6.12  the same from linux-source-6.12 (bookworm-backports),
#             with scripts/kconfig/kcc-6.12.config
#   kcsan     linux-source-6.12, the debug-6.12 configuration with KCSAN
#             instead of KASAN (scripts/kconfig/kcc-kcsan.config); not in
#             "provide" without names: make check-kcsan builds and boots it
#
# Exit status: 0 done, 1 providing failed (or image), 2 usage, 4 get: absent.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${KCC_KERNEL_CACHE:-/var/cache/kcc/kernels}
NAMES="6.1 6.12 6.12-rt debug debug-6.12 kcsan 5.10 7.2"
# What "list" and "provide" cover without names: kcsan is nightly only.
DEFAULT="6.1 6.12 6.12-rt debug debug-6.12"

usage() {
	echo "usage: $0 [list [NAME...] | names | get NAME | provide [NAME...] | image NAME]" >&2
	exit 2
}

known() {
	case " $NAMES " in
	*" $1 "*) return 0 ;;
	esac
	echo "kernels.sh: unknown flavour '$1' (known: $NAMES)" >&2
	exit 2
}

# Debian packages that provide a packaged flavour.
packages() {
	case $1 in
	6.1) echo "linux-image-amd64 linux-headers-amd64" ;;
	6.12) echo "linux-image-6.12-amd64 linux-headers-6.12-amd64" ;;
	6.12-rt) echo "linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64" ;;
	esac
}

# The header trees of packaged flavour $1 (6.1 and 6.12 without the rt
# and cloud trees), oldest first: one "RELEASE KDIR" line each.
headers() {
	case $1 in
	6.1) glob='/usr/src/linux-headers-6.1.*-amd64' kind=plain ;;
	6.12) glob='/usr/src/linux-headers-6.12.*-amd64' kind=plain ;;
	6.12-rt) glob='/usr/src/linux-headers-6.12.*-rt-amd64' kind=rt ;;
	*) return 1 ;;
	esac
	for d in $(ls -d $glob 2>/dev/null | sort -V); do
		case $kind:$d in
		plain:*-rt-amd64 | plain:*-cloud-amd64) continue ;;
		esac
		f=$d/include/generated/utsrelease.h
		[ -f "$d/Makefile" ] && [ -f "$f" ] || continue
		echo "$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$f") $d"
	done
}

# The newest header tree of packaged flavour $1 whose kernel image is in
# /boot, or in CACHE/boot ("image" below): "VMLINUZ KDIR", or nothing.
packaged() {
	pair=
	for rel_d in $(headers "$1" | tr ' ' '|'); do
		rel=${rel_d%%|*} d=${rel_d#*|}
		if [ -r "/boot/vmlinuz-$rel" ]; then
			pair="/boot/vmlinuz-$rel $d"
		elif [ -r "$cache/boot/vmlinuz-$rel" ]; then
			pair="$cache/boot/vmlinuz-$rel $d"
		fi
	done
	[ -n "$pair" ] && echo "$pair"
}

# "VMLINUZ KDIR" of a flavour, or nothing when it is absent.
pair() {
	case $1 in
	6.1 | 6.12 | 6.12-rt) packaged "$1" ;;
	debug | debug-6.12 | kcsan)
		# shellcheck disable=SC2046
		sh "$top/scripts/debug-kernel.sh" $(built "$1") -n 2>/dev/null ;;
	5.10 | 7.2) fetched_pair "$1" ;;
	esac
}

# The Debian suite a fetched flavour comes from, or nothing.
suite() {
	case $1 in
	5.10) echo bullseye ;;
	7.2) echo sid ;;
	esac
}

# "VMLINUZ KDIR" of a fetched flavour from its newest ready tree in the
# cache (marked by a file "ready"), or nothing.
fetched_pair() {
	pair=
	for r in $(ls -d "$cache/deb-$1-"* 2>/dev/null | sort -V); do
		[ -f "$r/ready" ] && pair=$(cat "$r/ready")
	done
	[ -n "$pair" ] && echo "$pair"
}

# apt-get or apt-cache ($1) under the private state of suite $2.
papt() {
	tool=$1 st=$cache/../apt/$2
	shift 2
	"$tool" -q -o Dir::State::Lists="$st/lists" \
		-o Dir::Etc::sourcelist="$st/sources.list" \
		-o Dir::Etc::sourceparts=/nonexistent \
		-o Dir::Cache="$st/cache" "$@"
}

# Fetch, unpack and prepare fetched flavour $1 in the cache.
fetch() {
	name=$1
	st=$cache/../apt/$(suite "$name")
	mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$st/pkgs" ||
		return 1
	echo "deb http://deb.debian.org/debian $(suite "$name") main" >"$st/sources.list"
	papt apt-get "$(suite "$name")" update >&2 || return 1
	case $name in
	5.10)
		abi=$(papt apt-cache bullseye pkgnames linux-headers-5.10.0- |
			sed -n 's/^linux-headers-\(5\.10\.0-[0-9]*\)-amd64$/\1/p' |
			sort -V | tail -n 1)
		[ -n "$abi" ] || return 1
		pkgs="linux-image-$abi-amd64 linux-headers-$abi-amd64 linux-headers-$abi-common linux-kbuild-5.10"
		;;
	7.2)
		abi=$(papt apt-cache sid depends linux-headers-amd64 |
			sed -n 's/.*Depends: linux-headers-\(7\.2\.[^ ]*\)-amd64$/\1/p' |
			head -n 1)
		[ -n "$abi" ] || return 1
		pkgs="linux-binary-$abi-amd64 linux-headers-$abi-amd64 linux-headers-$abi-common linux-source-7.2"
		;;
	esac
	ver=$(papt apt-cache "$(suite "$name")" show "linux-headers-$abi-amd64" |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
	# r2: 7.2 keeps BTF (see below); a new recipe is a new tree.
	r=$cache/deb-$name-$ver-r2
	[ -f "$r/ready" ] && return 0
	echo "kernels.sh: fetching $name ($abi, $ver): $pkgs" >&2
	# shellcheck disable=SC2086
	(cd "$st/pkgs" && papt apt-get "$(suite "$name")" download $pkgs) >&2 ||
		return 1
	rm -rf "$r" && mkdir -p "$r" || return 1
	for p in $pkgs; do
		dpkg-deb -x "$st/pkgs/${p}_${ver}_"*.deb "$r" || return 1
	done
	h=$r/usr/src/linux-headers-$abi-amd64
	case $name in
	5.10)
		# The headers name the -common tree by its installed path and
		# Debian's compiler (gcc-10).
		sed -i "s|^include /usr/src/|include $r/usr/src/|" "$h/Makefile" &&
		sed -i 's/gcc-[0-9][0-9]*$/gcc/' "$h/.kernelvariables" || return 1
		echo "$r/boot/vmlinuz-$abi-amd64 $h" >"$r/ready.tmp"
		;;
	7.2)
		src=$r/src/linux-source-7.2
		mkdir -p "$r/src" &&
		tar -C "$r/src" -xJf "$r/usr/src/linux-source-7.2.tar.xz" &&
		cp "$h/.config" "$h/Module.symvers" "$src/" || return 1
		local_version="+${abi#*+}-amd64"
		(cd "$src" &&
		 ./scripts/config --set-str LOCALVERSION "$local_version" \
			-d LOCALVERSION_AUTO -d RUST -d MODULE_SIG_ALL \
			--set-str MODULE_SIG_KEY "" &&
		 LOCALVERSION= nice make -s olddefconfig) >&2 || return 1
		# Options that change the layout of struct module or
		# task_struct must stay as Debian built them: without BTF
		# (once dropped here) olddefconfig also dropped
		# SCHED_CLASS_EXT, and the guest refused kcc.ko ("Invalid
		# relocation target").  What may differ: the compiler's
		# features, Rust and what needs it, signing.
		for o in DEBUG_INFO_BTF_MODULES SCHED_CLASS_EXT MODVERSIONS \
			 MODULE_UNLOAD PREEMPT_DYNAMIC SMP KASAN KCSAN \
			 FUNCTION_ALIGNMENT RETPOLINE MITIGATION_RETPOLINE; do
			a=$(grep "^CONFIG_$o=" "$h/.config")
			b=$(grep "^CONFIG_$o=" "$src/.config")
			if [ "$a" != "$b" ]; then
				echo "kernels.sh: 7.2 tree: CONFIG_$o is '$b', Debian's '$a'" >&2
				return 1
			fi
		done
		(cd "$src" && LOCALVERSION= nice make -s -j2 modules_prepare) >&2 ||
			return 1
		rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$src/include/generated/utsrelease.h")
		if [ "$rel" != "$abi-amd64" ]; then
			echo "kernels.sh: prepared release '$rel', not $abi-amd64" >&2
			return 1
		fi
		echo "$r/usr/lib/modules/$abi-amd64/vmlinuz $src" >"$r/ready.tmp"
		;;
	esac
	mv "$r/ready.tmp" "$r/ready"
}

# The kernel image of packaged flavour $1 whose headers are installed,
# unpacked from Debian's linux-image package into CACHE/boot: never
# installed, so the host's boot setup stays as it was (no initramfs, no
# /vmlinuz link, none of the modules' 400 MB).
image() {
	[ -n "$(pair "$1")" ] && return 0
	case $1 in
	6.1 | 6.12 | 6.12-rt) ;;
	*) echo "kernels.sh: image: $1 is not a packaged flavour" >&2; return 1 ;;
	esac
	rel=$(headers "$1" | tail -n 1 | cut -d' ' -f1)
	if [ -z "$rel" ]; then
		echo "kernels.sh: image: no headers of $1 (apt-get install $(packages "$1" | cut -d' ' -f2))" >&2
		return 1
	fi
	t=$cache/boot.tmp
	rm -rf "$t" && mkdir -p "$t" "$cache/boot" || return 1
	echo "kernels.sh: unpacking /boot/vmlinuz-$rel of linux-image-$rel into $cache/boot" >&2
	(cd "$t" && apt-get download -q "linux-image-$rel" 2>/dev/null >&2 ||
		{ apt-get update -q >&2 && apt-get download -q "linux-image-$rel" >&2; }) &&
	dpkg-deb --fsys-tarfile "$t"/linux-image-"$rel"_*.deb |
		tar -C "$t" -xf - "./boot/vmlinuz-$rel" &&
	mv "$t/boot/vmlinuz-$rel" "$cache/boot/" && rm -rf "$t"
}

# The scripts/debug-kernel.sh options of a flavour it builds, or nothing.
built() {
	case $1 in
	debug) echo "-v 6.1 -f debug" ;;
	debug-6.12) echo "-v 6.12 -f debug" ;;
	kcsan) echo "-v 6.12 -f kcsan" ;;
	esac
}

how() {
	case $1 in
	debug | debug-6.12 | kcsan)
		echo "scripts/kernels.sh provide $1 (builds it)" ;;
	5.10 | 7.2)
		echo "scripts/kernels.sh provide $1 (fetches it from $(suite "$1"))" ;;
	*) echo "apt-get install $(packages "$1")" ;;
	esac
}

cmd=${1:-list}
[ $# -gt 0 ] && shift

case $cmd in
names)
	[ $# -eq 0 ] || usage
	for n in $NAMES; do echo "$n"; done
	;;
list)
	[ $# -gt 0 ] || set -- $DEFAULT
	for n in "$@"; do
		known "$n"
		p=$(pair "$n")
		if [ -n "$p" ]; then
			echo "$n $p"
		else
			echo "kernels.sh: flavour $n absent ($(how "$n"))" >&2
		fi
	done
	;;
get)
	[ $# -eq 1 ] || usage
	known "$1"
	p=$(pair "$1")
	if [ -z "$p" ]; then
		echo "kernels.sh: flavour $1 absent ($(how "$1"))" >&2
		exit 4
	fi
	echo "$p"
	;;
provide)
	[ $# -gt 0 ] || set -- $DEFAULT
	pkgs=
	for n in "$@"; do
		known "$n"
		[ -n "$(built "$n")" ] && continue
		[ -n "$(suite "$n")" ] && continue
		[ -n "$(pair "$n")" ] || pkgs="$pkgs $(packages "$n")"
	done
	if [ -n "$pkgs" ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "kernels.sh: run as root to install:$pkgs" >&2
			exit 1
		fi
		echo "kernels.sh: installing:$pkgs" >&2
		export DEBIAN_FRONTEND=noninteractive
		# shellcheck disable=SC2086
		{ apt-get update -q && apt-get install -y -q --no-install-recommends $pkgs; } >&2 ||
			exit 1
	fi
	for n in "$@"; do
		[ -n "$(suite "$n")" ] || continue
		[ -n "$(pair "$n")" ] && continue
		if [ "$(id -u)" -ne 0 ] && [ ! -w "$cache" ]; then
			echo "kernels.sh: run as root to fetch $n into $cache" >&2
			exit 1
		fi
		fetch "$n" || { echo "kernels.sh: fetching $n failed" >&2; exit 1; }
	done
	for n in "$@"; do
		opts=$(built "$n")
		[ -n "$opts" ] || continue
		# shellcheck disable=SC2086
		sh "$top/scripts/debug-kernel.sh" $opts >/dev/null || exit 1
	done
	fail=0
	for n in "$@"; do
		p=$(pair "$n")
		if [ -n "$p" ]; then
			echo "$n $p"
		else
			echo "kernels.sh: flavour $n still absent" >&2
			fail=1
		fi
	done
	exit $fail
	;;
image)
	[ $# -eq 1 ] || usage
	known "$1"
	image "$1" || { echo "kernels.sh: no image of $1" >&2; exit 1; }
	pair "$1"
	;;
-h|--help|help)
	sed -n '4,64s/^# \{0,1\}//p' "$0"
	;;
*)
	usage
	;;
esac
exit 0
