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
#
# Flavours:
#   6.1       Debian 12's kernel (linux-image-amd64, linux-headers-amd64)
#   6.12      Debian's 6.12 backport (linux-image-6.12-amd64,
#             linux-headers-6.12-amd64)
#   6.12-rt   the same with PREEMPT_RT (linux-image-6.12-rt-amd64,
#             linux-headers-6.12-rt-amd64)
#   debug     linux-source-6.1 built from tinyconfig and
#             scripts/kconfig/kcc-debug.config: KASAN, UBSAN, lockdep,
#             kmemleak, debug lists and objects (scripts/debug-kernel.sh)
#   debug-6.12  the same from linux-source-6.12 (bookworm-backports),
#             with scripts/kconfig/kcc-6.12.config
#   kcsan     linux-source-6.12, the debug-6.12 configuration with KCSAN
#             instead of KASAN (scripts/kconfig/kcc-kcsan.config); not in
#             "provide" without names: make check-kcsan builds and boots it
#
# Exit status: 0 done, 1 providing failed, 2 usage, 4 get: absent.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
NAMES="6.1 6.12 6.12-rt debug debug-6.12 kcsan"
# What "list" and "provide" cover without names: kcsan is nightly only.
DEFAULT="6.1 6.12 6.12-rt debug debug-6.12"

usage() {
	echo "usage: $0 [list [NAME...] | names | get NAME | provide [NAME...]]" >&2
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

# The newest header tree matching a glob (minus the rt and cloud trees
# when $2 is "plain") whose kernel image is in /boot: "VMLINUZ KDIR", or
# nothing.
packaged() {
	pair=
	for d in $(ls -d $1 2>/dev/null | sort -V); do
		case $2:$d in
		plain:*-rt-amd64 | plain:*-cloud-amd64) continue ;;
		esac
		f=$d/include/generated/utsrelease.h
		[ -f "$d/Makefile" ] && [ -f "$f" ] || continue
		rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$f")
		[ -r "/boot/vmlinuz-$rel" ] && pair="/boot/vmlinuz-$rel $d"
	done
	[ -n "$pair" ] && echo "$pair"
}

# "VMLINUZ KDIR" of a flavour, or nothing when it is absent.
pair() {
	case $1 in
	6.1) packaged '/usr/src/linux-headers-6.1.*-amd64' plain ;;
	6.12) packaged '/usr/src/linux-headers-6.12.*-amd64' plain ;;
	6.12-rt) packaged '/usr/src/linux-headers-6.12.*-rt-amd64' rt ;;
	debug | debug-6.12 | kcsan)
		# shellcheck disable=SC2046
		sh "$top/scripts/debug-kernel.sh" $(built "$1") -n 2>/dev/null ;;
	esac
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
-h|--help|help)
	sed -n '4,43s/^# \{0,1\}//p' "$0"
	;;
*)
	usage
	;;
esac
exit 0
