#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# static-checks.sh - the static checks of kcc, one per argument:
#
#   sparse      sparse over kcc.ko (make C=2 against KDIR, in a copy of the
#               sources); a sparse warning in kmod/ or lbr/ is a finding
#   checkpatch  checkpatch.pl --strict on kmod/, lbr/ and
#               include/uapi/linux/kcc.h; checkpatch.pl, spelling.txt and
#               const_structs.checkpatch come from Debian's linux-source-6.1
#               tarball (no Debian package installs them), unpacked once
#               into $KCC_KERNEL_CACHE/checkpatch-<version>
#   cppcheck    cppcheck on user/ (warning, style, performance,
#               portability) with scripts/cppcheck.supp
#   clang-tidy  clang-analyzer-* and bugprone-* on user/, with the checks
#               listed above TIDY_OFF below turned off
#   layers      the layers of user/ (scripts/layers.py,
#               Documentation/layout.rst): the library (user/lib) below the
#               report (user/report) below the harness (user/harness)
#               below the commands; and the rooms of kmod/
#               (Documentation/kcc-module.rst, "Layout"), in the order
#               layers.py declares; a module depending on a higher layer
#               or room, or an import circle (by #include and by the
#               symbols each file takes from another: user/ files
#               compiled alone with $CC, kmod/ files as kcc.ko's objects
#               built against KDIR, where there is one), is a finding
#   all         all of the above (the default)
#
# Usage: static-checks.sh [-K KDIR] [-C DIR] [CHECK...]
#
# -C DIR checks the tree DIR instead of this repository: its Kbuild,
# kmod/, lbr/ and include/ (those present) for sparse and checkpatch,
# its user/*.c and user/{lib,report,harness}/*.c for cppcheck, clang-tidy
# and layers, with this repository's suppressions.
# selftests/kcc/static.sh plants known bugs in such a tree to show that
# every check reports them.
#
# Findings are printed as "file:line: message", then one summary line per
# check on stderr with its time.  Exit status: 0 clean, 1 findings,
# 2 usage, 4 a tool is missing (with the Debian package to install).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
src=$top
kdir=${KDIR:-}
cache=${KCC_KERNEL_CACHE:-/var/cache/kcc/kernels}

# clang-tidy: clang-analyzer-* and bugprone-*, less these (the short,
# documented suppression list):
# bugprone-easily-swappable-parameters: fires on every (a, b) of one type.
# bugprone-reserved-identifier: kcc.h's __reserved fields are the uapi
#   convention (include/uapi/linux/*.h), not a libc clash.
# bugprone-suspicious-string-compare: "!strcmp(a, b)" is kernel style.
# bugprone-narrowing-conversions, bugprone-implicit-widening-of-
#   multiplication-result: sizes are u32 bounded by caps, converted on
#   purpose; -Wextra covers the dangerous cases.
# bugprone-branch-clone: equal branches of an if/else chain are a style
#   matter (often one branch per documented case).
# clang-analyzer-security.insecureAPI.*: asks for the C11 Annex K *_s
#   functions (which glibc lacks) and flags every strcpy, bounded or not.
TIDY_OFF="-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,\
-bugprone-suspicious-string-compare,-bugprone-narrowing-conversions,\
-bugprone-implicit-widening-of-multiplication-result,-bugprone-branch-clone,\
-clang-analyzer-security.insecureAPI.*"

# checkpatch types ignored per file, each for a reason:
# kmod/wrapper/*.h (and selftests/lbrpmu/wrapper/*.h, of the test PMU)
#   are where kernel-version differences belong (STYLE.md);
#   "LINUX_VERSION_CODE >= KERNEL_VERSION(...)" is their idiom, which
#   checkpatch also takes for a constant on the left.
# lbr/kcc_shim.h maps the kernel types onto <stdint.h> for userspace: the
#   uintN_t names are the point of that branch.
checkpatch_ignore() {
	case $1 in
	kmod/wrapper/* | selftests/lbrpmu/wrapper/*)
		echo "LINUX_VERSION_CODE,CONSTANT_COMPARISON" ;;
	lbr/kcc_shim.h) echo "PREFER_KERNEL_TYPES" ;;
	esac
}

while getopts K:C:h opt; do
	case $opt in
	K) kdir=$OPTARG ;;
	C) src=$(cd "$OPTARG" 2>/dev/null && pwd) || {
		echo "static-checks.sh: -C $OPTARG: no such directory" >&2
		exit 2
	   } ;;
	h) sed -n '4,40s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-K KDIR] [-C DIR] [sparse|checkpatch|cppcheck|clang-tidy|layers|all]..." >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- all

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-static.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

missing=0
found=0

need() {	# need TOOL PACKAGE
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "static-checks.sh: $1 not found (Debian: $2)" >&2
	missing=1
	return 1
}

user_sources() {	# the C files of user/ in $src, relative to it
	for f in "$src"/user/*.c "$src"/user/lib/*.c "$src"/user/report/*.c \
	    "$src"/user/harness/*.c; do
		[ -f "$f" ] && echo "${f#"$src"/}"
	done
}

summary() {	# summary CHECK FINDINGS START
	echo "static-checks.sh: $1: $2 finding(s), $(( $(date +%s) - $3 )) s" >&2
	[ "$2" -eq 0 ] || found=1
}

if [ -z "$kdir" ]; then
	for d in /usr/src/linux-headers-*-amd64; do
		case $d in
		*-rt-amd64 | *-cloud-amd64) continue ;;
		esac
		[ -f "$d/Makefile" ] && kdir=$d
	done
fi

check_sparse() {
	start=$(date +%s)
	need sparse sparse || return
	if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
		echo "static-checks.sh: sparse: no kernel build tree (set KDIR)" >&2
		missing=1
		return
	fi
	mkdir -p "$tmp/sparse"
	for f in Kbuild kmod lbr include; do
		[ -e "$src/$f" ] && cp -R "$src/$f" "$tmp/sparse/"
	done
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C \
		make -C "$kdir" M="$tmp/sparse" C=2 modules >"$tmp/sparse.log" 2>&1
	rc=$?
	# Only what sparse says about kcc's own files counts; the log names
	# them by their path in the copy.
	grep -E "^$tmp/sparse/[^:]+:[0-9]+:[0-9]+: (warning|error):" "$tmp/sparse.log" |
		sed "s|^$tmp/sparse/||" | sort -u >"$tmp/sparse.out"
	if [ $rc -ne 0 ]; then
		echo "static-checks.sh: sparse: module build failed:" >&2
		tail -n 20 "$tmp/sparse.log" >&2
		echo "module build failed (make C=2, status $rc)" >>"$tmp/sparse.out"
	fi
	cat "$tmp/sparse.out"
	summary sparse "$(wc -l <"$tmp/sparse.out")" "$start"
}

# checkpatch.pl and its data files from the linux-source tarball, cached.
checkpatch_dir() {
	if [ -n "${CHECKPATCH:-}" ]; then
		dirname "$CHECKPATCH"
		return 0
	fi
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || ver=
	tarball=/usr/src/linux-source-6.1.tar.xz
	if [ -z "$ver" ] || [ ! -r "$tarball" ]; then
		echo "static-checks.sh: checkpatch: linux-source-6.1 is not installed" >&2
		return 1
	fi
	dir=$cache/checkpatch-$ver
	if [ ! -f "$dir/checkpatch.pl" ]; then
		mkdir -p "$dir.tmp" || return 1
		tar -xJf "$tarball" -C "$dir.tmp" --strip-components=2 \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch || return 1
		rm -rf "$dir" && mv "$dir.tmp" "$dir" || return 1
	fi
	echo "$dir"
}

check_checkpatch() {
	start=$(date +%s)
	need perl perl || return
	dir=$(checkpatch_dir) || { missing=1; return; }
	: >"$tmp/checkpatch.out"
	for f in "$src"/kmod/*.[ch] "$src"/kmod/*/*.[ch] "$src"/lbr/*.[ch] \
		 "$src"/include/uapi/linux/kcc.h "$src"/selftests/lbrpmu/*.[ch] \
		 "$src"/selftests/lbrpmu/wrapper/*.h; do
		[ -f "$f" ] || continue
		rel=${f#"$src"/}
		# --no-tree: not inside a kernel tree; --terse: one line per
		# finding, "file:line: LEVEL: message"; --showfile keeps the
		# given name.
		ign=$(checkpatch_ignore "$rel")
		(cd "$src" && perl "$dir/checkpatch.pl" --strict --no-tree --terse \
			--show-types --showfile --no-summary ${ign:+--ignore "$ign"} \
			-f "$rel") |
			grep -E '^[^:]+:[0-9]+: ' >>"$tmp/checkpatch.out"
	done
	cat "$tmp/checkpatch.out"
	summary checkpatch "$(wc -l <"$tmp/checkpatch.out")" "$start"
}

check_cppcheck() {
	start=$(date +%s)
	need cppcheck cppcheck || return
	files=$(user_sources)
	if [ -z "$files" ]; then
		echo "cppcheck: error: no C file in $src/user" >"$tmp/cppcheck.out"
	else
		# shellcheck disable=SC2086 # one word per file name
		(cd "$src" && cppcheck --quiet --std=c11 --language=c \
			--enable=warning,style,performance,portability \
			--inline-suppr \
			--suppressions-list="$top/scripts/cppcheck.supp" \
			-D__linux__ -D__x86_64__ -D_GNU_SOURCE \
			-Iinclude/uapi -Ilbr -Iuser/lib -Iuser/report -Iuser/harness -Iuser \
			--template='{file}:{line}: {severity}: {message} [{id}]' \
			$files) >"$tmp/cppcheck.out" 2>&1
	fi
	# cppcheck's own errors (a bad option, an unreadable suppression
	# list) are findings too: a check that did not run is not clean.
	grep -E '^([^:]+:[0-9]+: |cppcheck: error)' "$tmp/cppcheck.out" |
		sort -u >"$tmp/cppcheck.f"
	cat "$tmp/cppcheck.f"
	summary cppcheck "$(wc -l <"$tmp/cppcheck.f")" "$start"
}

check_clang_tidy() {
	start=$(date +%s)
	need clang-tidy clang-tidy || return
	# Two files at a time: the machine's two cores are shared.
	user_sources |
		(cd "$src" && xargs -P 2 -I{} clang-tidy --quiet \
			--checks="-*,clang-analyzer-*,bugprone-*,$TIDY_OFF" \
			{} -- -std=gnu11 -D_GNU_SOURCE -Iinclude/uapi -Ilbr \
			-Iuser/lib -Iuser/report -Iuser/harness -Iuser) >"$tmp/tidy.out" 2>/dev/null
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$tmp/tidy.out" |
		sed "s|^$src/||" | sort -u >"$tmp/tidy.f"
	cat "$tmp/tidy.f"
	summary clang-tidy "$(wc -l <"$tmp/tidy.f")" "$start"
}

check_layers() {
	start=$(date +%s)
	need python3 python3 || return
	need nm binutils || return
	mkdir -p "$tmp/layers" "$tmp/layers-kmod"
	# kmod/'s objects, for the symbols each room takes from another;
	# without a kernel tree its rooms are checked by #include only.
	kobj=
	if [ -n "$kdir" ] && [ -f "$kdir/Makefile" ] && [ -d "$src/kmod" ]; then
		for f in Kbuild kmod lbr include; do
			[ -e "$src/$f" ] && cp -R "$src/$f" "$tmp/layers-kmod/"
		done
		if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C \
			make -C "$kdir" M="$tmp/layers-kmod" modules \
			>"$tmp/layers-kmod.log" 2>&1; then
			kobj=$tmp/layers-kmod
		else
			echo "static-checks.sh: layers: kcc.ko does not build against $kdir; kmod/ checked by #include only:" >&2
			tail -n 20 "$tmp/layers-kmod.log" >&2
		fi
	else
		echo "static-checks.sh: layers: no kernel build tree (set KDIR); kmod/ checked by #include only" >&2
	fi
	python3 "$top/scripts/layers.py" ${kobj:+-k "$kobj"} "$src" \
		"$tmp/layers" "${CC:-cc}" >"$tmp/layers.f"
	cat "$tmp/layers.f"
	summary layers "$(wc -l <"$tmp/layers.f")" "$start"
}

for c in "$@"; do
	case $c in
	sparse) check_sparse ;;
	checkpatch) check_checkpatch ;;
	cppcheck) check_cppcheck ;;
	clang-tidy) check_clang_tidy ;;
	layers) check_layers ;;
	all)
		check_sparse
		check_checkpatch
		check_cppcheck
		check_clang_tidy
		check_layers
		;;
	*) echo "static-checks.sh: unknown check '$c'" >&2; exit 2 ;;
	esac
done
[ $found -ne 0 ] && exit 1
[ $missing -ne 0 ] && exit 4
exit 0
