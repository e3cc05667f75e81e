#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# svg_header.sh - the flame graph's header as headless chromium draws it
# in a 1400-pixel window: the title, whatever the length of the
# profile's name, ends left of the "Search" button.  In the header band
# of the screenshot, the last run of dark columns (gaps of 16 px or more
# apart: wider than a space of the title) must be "Search" alone, no
# wider than its six 12-px glyphs, and right of where the title ends.
#
# timeout: 180

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || ktap_skip_all "no chromium for a screenshot"
command -v python3 >/dev/null 2>&1 || ktap_skip_all "no python3"
ktap_tmpdir svgh
plan 3

D=$(dirname "$0")/data
case $KCC in /*) ;; *) KCC=$(pwd)/$KCC ;; esac
# header NAME: the flame graph of a profile named NAME (made in $tmp)
# checked; the demo's names are paths like /root/kcc/build/demo/kcc.data.
header() {
	case $1 in */*) mkdir -p "$tmp/${1%/*}" ;; esac
	[ "$1" = f.kcc ] || cp "$tmp/f.kcc" "$tmp/$1"
	(cd "$tmp" && "$KCC" report --format svg -o f.svg "$1") 2>"$tmp/err" ||
		{ cat "$tmp/err"; return 1; }
	rm -f "$tmp/f.png"
	timeout 90 "$chrome" --headless --no-sandbox --disable-gpu \
		--screenshot="$tmp/f.png" --window-size=1400,300 \
		"file://$tmp/f.svg" >/dev/null 2>&1
	[ -s "$tmp/f.png" ] || { echo "# no screenshot"; return 1; }
	PYTHONPATH=$(dirname "$0")/../lib python3 - "$tmp/f.png" <<'EOF'
import sys
from png import read_png
w, h, bpp, rows = read_png(sys.argv[1])
# Dark columns in the title's band (y 4..26): text is drawn in black
# on the light background.
dark = [any(sum(rows[y][x * bpp:x * bpp + 3]) < 300 for y in range(4, 27))
        for x in range(min(w, 1200))]
runs, x = [], 0
while x < len(dark):
    if dark[x]:
        s = x
        gap = 0
        while x < len(dark) and gap < 16:
            gap = 0 if dark[x] else gap + 1
            x += 1
        runs.append((s, x - gap))
    else:
        x += 1
if len(runs) < 2:
    print("# header: %d runs of text" % len(runs))
    sys.exit(1)
s, e = runs[-1]
# "Search": 6 glyphs of 12 px monospace, about 44 px, ending at x 1190.
if e - s > 60:
    print("# the last text run is %d..%d: the title runs into Search" % (s, e))
    sys.exit(1)
print("# title ends at %d, Search spans %d..%d" % (runs[-2][1], s, e))
EOF
}

"$KCC" record --trace "$D/fig2.trace" -k 3 -o "$tmp/f.kcc" 2>"$tmp/err" ||
	{ cat "$tmp/err"; exit 1; }
header f.kcc
result $? "a short name: title and Search apart"
header "work/kcc/build/demo/kcc.data"
result $? "the demo's name: title and Search apart"
header "a-profile-with-a-very-long-name-kept-under-a-deep-directory-of-the-fleet-build-farm.kcc"
result $? "a 90-character name: the title shrinks and stays apart"
ktap_exit
