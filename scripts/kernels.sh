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
#             packages with apt-get (root) or builds the debug kernel
#             (scripts/debug-kernel.sh, about 6+ min on 2 cores, cached),
#             then lists them
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
#
# Exit status: 0 done, 1 providing failed, 2 usage, 4 get: absent.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
NAMES="6.1 6.12 6.12-rt debug"

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
	debug) sh "$top/scripts/debug-kernel.sh" -n 2>/dev/null ;;
	esac
}

how() {
	case $1 in
	debug) echo "scripts/kernels.sh provide debug (builds it)" ;;
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
	[ $# -gt 0 ] || set -- $NAMES
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
	[ $# -gt 0 ] || set -- $NAMES
	pkgs=
	for n in "$@"; do
		known "$n"
		[ "$n" = debug ] && continue
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
		[ "$n" = debug ] || continue
		sh "$top/scripts/debug-kernel.sh" >/dev/null || exit 1
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
	sed -n '4,40s/^# \{0,1\}//p' "$0"
	;;
*)
	usage
	;;
esac
exit 0
