#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# man.sh KCC OUTDIR - the man page of every kcc command that has no
# hand-written one in Documentation/man/, made by Debian's help2man from
# the command's own --help, so that the two cannot drift.  'kcc help'
# lists the commands; EXAMPLES and 'usage:' are given the spelling
# help2man knows.
set -eu

kcc=$1
out=$2
top=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v help2man >/dev/null; then
	echo "man.sh: help2man is needed (apt-get install help2man)" >&2
	exit 1
fi
mkdir -p "$out"
version=$("$kcc" --version | sed 's/^kcc version //')
"$kcc" --help | sed -n '/^Commands:/,/^$/s/^   \([a-z][a-z-]*\)  *\(.*\)$/\1\t\2/p' |
while IFS='	' read -r cmd what; do
	[ -e "$top/Documentation/man/kcc-$cmd.1" ] && continue
	wrap=$out/kcc-$cmd
	cat >"$wrap" <<WRAP
#!/bin/sh
case "\$1" in
--version) echo "kcc-$cmd $version" ;;
*) "$kcc" $cmd --help | sed -e 's/^usage:/Usage:/' -e 's/^EXAMPLES\$/Examples:/' ;;
esac
WRAP
	chmod +x "$wrap"
	help2man -N -s 1 -m "kcc manual" -S "kcc $version" -n "$what" \
		-o "$out/kcc-$cmd.1.tmp" "$wrap"
	# One example a line, as --help prints them.
	awk '/^\.SH/ { ex = $2 == "EXAMPLES" } { print } ex && !/^\./ { print ".br" }' \
		"$out/kcc-$cmd.1.tmp" >"$out/kcc-$cmd.1"
	rm -f "$wrap" "$out/kcc-$cmd.1.tmp"
done
