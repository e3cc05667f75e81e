#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# deb.sh OUTDIR - kcc's Debian packages (make deb; debian/,
# Documentation/packaging.rst): kcc (kcc, kccread, man pages) and
# kcc-dkms (kcc.ko's sources and dkms.conf), built with
# dpkg-buildpackage -b from a copy of the sources in OUTDIR/kcc-VERSION,
# so that the checkout and its build/ are left alone and the packages
# land in OUTDIR.  lintian then checks them; its findings are printed and
# kept in OUTDIR/lintian.txt.
#
# Exit status: 0 built (whatever lintian says: check-deb judges it),
# 1 the build failed.
set -eu

out=$1
top=$(cd "$(dirname "$0")/.." && pwd)
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/kcc-$ver

rm -rf "$out"
mkdir -p "$src"
out=$(cd "$out" && pwd)
src=$out/kcc-$ver
# The files git knows (tracked and new, not ignored), else the tree less
# its build directories.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -z --cached --others --exclude-standard |
		(cd "$top" && xargs -0 cp --parents -t "$src")
else
	(cd "$top" && tar -cf - --exclude=./build --exclude=./.git .) |
		(cd "$src" && tar -xf -)
fi

start=$(date +%s)
jobs=$(nproc 2>/dev/null || echo 1)
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
echo "deb.sh: dpkg-buildpackage: $(( $(date +%s) - start )) s" >&2

changes=$(ls "$out"/kcc_"$ver"_*.changes)
start=$(date +%s)
lintian --tag-display-limit 0 "$changes" >"$out/lintian.txt" 2>&1 || true
cat "$out/lintian.txt"
echo "deb.sh: lintian: $(( $(date +%s) - start )) s," \
	"$(grep -c '^[EW]: ' "$out/lintian.txt") error(s) and warning(s)" >&2
for d in "$out"/*.deb; do
	echo "deb.sh: $(basename "$d"): $(stat -c %s "$d") bytes," \
		"$(dpkg-deb -f "$d" Installed-Size) KiB installed" >&2
done
