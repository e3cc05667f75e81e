#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# static.sh - the static checks of scripts/static-checks.sh as TAP, one
# test per check: sparse on kcc.ko (against $KDIR), checkpatch.pl --strict
# on kmod/, lbr/ and include/uapi/linux/kcc.h, cppcheck and clang-tidy on
# user/.  A check whose tool is missing is skipped with the package to
# install; findings are shown as comments, "file:line: message".
# KCC_USER_ONLY (make check-user) skips sparse, which needs kernel headers.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)

echo "TAP version 13"
echo "1..4"
n=0
fail=0
for c in sparse checkpatch cppcheck clang-tidy; do
	n=$((n + 1))
	if [ "$c" = sparse ] && [ -n "${KCC_USER_ONLY:-}" ]; then
		echo "ok $n $c # SKIP KCC_USER_ONLY: no kernel build"
		continue
	fi
	out=$(sh "$top/scripts/static-checks.sh" ${KDIR:+-K "$KDIR"} "$c" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	case $rc in
	0) echo "ok $n $c: no finding" ;;
	4) why=$(echo "$out" | sed -n 's/^static-checks.sh: //p' | head -n 1)
	   echo "ok $n $c # SKIP ${why:-tool missing}" ;;
	*) echo "not ok $n $c: $(echo "$out" | grep -c -E '^[^ ]+:[0-9]+:') finding(s)"
	   fail=1 ;;
	esac
done
exit $fail
