#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kbuild.sh - kcc.ko builds against the kernel headers in $KDIR with W=1
# and -Werror, into a temporary copy of the tree, and is a module for
# exactly that kernel.  A last build with a W=1-only warning planted in
# a copy proves that the flags really apply: a build that cannot fail
# on a warning would pass the first test whatever the code looks like.
# The test LBR PMU (selftests/lbrpmu) must build the same way.
# -Werror is CI's (KCC_WERROR=1, which these builds set): the planted
# warning built without it, as DKMS or a distribution builds, must still
# give kcc.ko, with the warning in the log.
# Then both modules build the same way, with no warning (modpost's
# included), against every flavour of scripts/kernels.sh that is present
# (KCC_KBUILD_KERNELS, default "5.10 6.1 6.12 6.12-rt 7.2": the kernels
# users have, Debian 11 to sid); an absent one is a SKIP naming what
# provides it.
# timeout: 1800
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)

echo "TAP version 13"
if [ -n "${KCC_USER_ONLY:-}" ]; then
	echo "1..0 # SKIP KCC_USER_ONLY: userspace tests only (make check-user)"
	exit 4
fi
# KDIR when given, else the Makefile's default headers.
KDIR=${KDIR:-${KCC_DEFAULT_KDIR:-}}
if [ -z "$KDIR" ]; then
	echo "1..0 # SKIP KDIR is empty: no kernel headers to build against"
	exit 4
fi
if [ ! -f "$KDIR/Makefile" ]; then
	echo "1..0 # SKIP KDIR=$KDIR is not a kernel build tree"
	exit 4
fi

export KCC_WERROR=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-kbuild.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

kernels=${KCC_KBUILD_KERNELS-5.10 6.1 6.12 6.12-rt 7.2}
nk=0
for n in $kernels; do
	nk=$((nk + 1))
done
echo "1..$((7 + 2 * nk))"
fail=0
ok() {
	echo "ok $1 $2"
}
not_ok() {
	echo "not ok $1 $2"
	fail=1
}

if sh "$top/selftests/guest/build_module.sh" "$KDIR" "$tmp/a" >"$tmp/err" 2>&1; then
	ok 1 "kcc.ko builds against $KDIR with W=1 and -Werror"
else
	sed 's/^/# /' "$tmp/err"
	not_ok 1 "kcc.ko builds against $KDIR with W=1 and -Werror"
fi

# modpost problems (undefined symbols, section mismatches) are not
# compiler warnings and -Werror does not stop them.
if [ -f "$tmp/a/build.log" ] && ! grep -i 'warning' "$tmp/a/build.log" >"$tmp/warn"; then
	ok 2 "the build log has no warning"
else
	sed 's/^/# /' "$tmp/warn" 2>/dev/null
	not_ok 2 "the build log has no warning"
fi

if [ -s "$tmp/a/kcc.ko" ]; then
	ok 3 "kcc.ko exists"
else
	not_ok 3 "kcc.ko exists"
fi

# vermagic begins with the release the headers were configured for.
release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
	"$KDIR/include/generated/utsrelease.h" 2>/dev/null)
if ! command -v modinfo >/dev/null 2>&1 && [ -x /sbin/modinfo ]; then
	PATH=$PATH:/sbin:/usr/sbin
fi
if ! command -v modinfo >/dev/null 2>&1; then
	echo "ok 4 vermagic matches KDIR # SKIP modinfo not installed (kmod)"
elif [ -z "$release" ]; then
	not_ok 4 "vermagic matches KDIR (no UTS_RELEASE in $KDIR)"
else
	vermagic=$(modinfo -F vermagic "$tmp/a/kcc.ko" 2>&1)
	case "$vermagic" in
	"$release "*)
		ok 4 "vermagic '$vermagic' matches KDIR release $release"
		;;
	*)
		echo "# modinfo vermagic: $vermagic"
		not_ok 4 "vermagic matches KDIR release $release"
		;;
	esac
fi

# -Wmissing-prototypes is only on with W=1 in these kernels; with
# -Werror the planted function must stop the build.
mkdir -p "$tmp/b" &&
cp -R "$top/Kbuild" "$top/kmod" "$top/lbr" "$top/include" "$tmp/b/" &&
printf '\nint kcc_werror_probe(void)\n{\n\treturn 0;\n}\n' >>"$tmp/b/kmod/kcc_main.c"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C make -C "$KDIR" M="$tmp/b" W=1 modules >"$tmp/b/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'prototype for .kcc_werror_probe' "$tmp/b/build.log" &&
   [ ! -f "$tmp/b/kcc.ko" ]; then
	ok 5 "a W=1 warning fails the build (-Werror and W=1 apply)"
else
	tail -n 20 "$tmp/b/build.log" | sed 's/^/# /'
	not_ok 5 "a W=1 warning fails the build (-Werror and W=1 apply)"
fi

if sh "$top/selftests/guest/build_module.sh" "$KDIR" "$tmp/c" lbrpmu >"$tmp/err" 2>&1 &&
   ! grep -i 'warning' "$tmp/c/build.log" >"$tmp/warn"; then
	ok 6 "kcc_lbrpmu.ko (test PMU) builds against $KDIR with W=1 and -Werror, no warning"
else
	sed 's/^/# /' "$tmp/err" "$tmp/warn" 2>/dev/null
	not_ok 6 "kcc_lbrpmu.ko (test PMU) builds against $KDIR with W=1 and -Werror, no warning"
fi

# The same planted warning without KCC_WERROR: a DKMS build.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u KCC_WERROR LC_ALL=C make -C "$KDIR" M="$tmp/b" W=1 modules >"$tmp/b/build2.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ -s "$tmp/b/kcc.ko" ] &&
   grep -q 'warning: no previous prototype for .kcc_werror_probe' "$tmp/b/build2.log"; then
	ok 7 "without KCC_WERROR the warning is reported and kcc.ko builds"
else
	tail -n 20 "$tmp/b/build2.log" | sed 's/^/# /'
	not_ok 7 "without KCC_WERROR the warning is reported and kcc.ko builds"
fi

# Every kernel of the matrix: kcc.ko and kcc_lbrpmu.ko, W=1, -Werror,
# and not one line with "warning" in the log (modpost's are not
# compiler warnings: -Werror does not stop them).
t=7
for n in $kernels; do
	kd=$(sh "$top/scripts/kernels.sh" get "$n" 2>"$tmp/why") && kd=${kd#* }
	for m in kcc lbrpmu; do
		t=$((t + 1))
		what="$m module builds against the $n kernel with W=1, no warning"
		if [ -z "$kd" ]; then
			echo "ok $t $what # SKIP $(cat "$tmp/why")"
			continue
		fi
		rm -rf "$tmp/m"
		if sh "$top/selftests/guest/build_module.sh" "$kd" "$tmp/m" "$m" >"$tmp/err" 2>&1 &&
		   ! grep -i 'warning' "$tmp/m/build.log" >"$tmp/warn"; then
			ok $t "$what ($kd)"
		else
			sed 's/^/# /' "$tmp/err" "$tmp/warn" 2>/dev/null
			not_ok $t "$what ($kd)"
		fi
	done
done

exit $fail
