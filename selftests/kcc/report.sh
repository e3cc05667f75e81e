#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# report.sh - kcc record --trace / kccread / kcc report / diff / merge /
# dump end to end, from call traces whose k-CCF is known by hand
# (selftests/kcc/data/fig2.k*.expected, Figure 2 of the k-CCF paper):
# the exclusive counts of the folded output are derived from the
# expected inclusive ones; folded, JSON and pprof totals must equal the
# text report's; the SVG must be well-formed XML; merge(A, A) doubles,
# diff(A, A) is empty; bad input and bad command lines fail cleanly.
#
# Any sanitizer report on stderr is a failure, whatever the exit status.

D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
KCCREAD=${KCCREAD:-$(dirname "$KCC")/kccread}
ktap_tmpdir report
plan 116

# Exclusive counts from an expected inclusive k-CCF ("count TAB path",
# outermost caller first): a path's count less those of the paths that
# extend it by one more caller.
exclusive() {
	awk -F '\t' '
		{ c[$2] += $1 }
		END {
			for (p in c) {
				e = c[p]
				for (q in c)
					if (substr(q, length(q) - length(p)) == ";" p &&
					    split(q, a, ";") == split(p, b, ";") + 1)
						e -= c[q]
				if (e > 0)
					print p " " e
			}
		}' "$1" | LC_ALL=C sort
}

fold_sum() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

gopprof=$(command -v go || true)
pprof() {	# go tool pprof, with its caches in $tmp
	HOME=$tmp GOPATH=$tmp/go GOCACHE=$tmp/gocache go tool pprof "$@"
}

# go tool pprof -traces as folded stacks ("outer;...;inner N"), sorted.
traces_folded() {
	awk '
		function flush() {
			if (n) {
				s = st[n]
				for (i = n - 1; i >= 1; i--)
					s = s ";" st[i]
				print s " " v
			}
			n = 0
		}
		/^-+\+/ { flush(); on = 1; next }
		!on || /^ *process: / { next }
		/^ *[0-9]+ +[^ ]/ && !n {
			v = $1; sub(/^ *[0-9]+ +/, ""); st[++n] = $0; next
		}
		{ sub(/^ +/, ""); if ($0 != "") st[++n] = $0 }
		END { flush() }' "$1" | LC_ALL=C sort
}

# patch_profile MODE IN OUT: a profile of kcc record --trace, changed as
# a real recording could have made it.  nocalls: no burst replayed
# (KCC_HDR_CALLS_VALID clear); cpuclock: the sampled event is cpu-clock;
# noinfo: without the INFO section (older profiles); info2: an INFO of
# a later version, with 8 more bytes of fields; twoev: calls from a
# second event (KCC_HDR_CALLS_EVENT, the calls descriptor naming type 9
# config 1); fallback: a calls event asked for, not available
# (KCC_HDR_CALLS_FALLBACK).
patch_profile() {
	python3 - "$@" <<'EOF'
import struct, sys
mode, src, dst = sys.argv[1:4]
b = bytearray(open(src, "rb").read())
st = 64		# header 32, section 16, run 16: the stream of run 0
if mode == "nocalls":
	flags = struct.unpack_from("<I", b, st + 12)[0]
	struct.pack_into("<I", b, st + 12, flags & ~1)
elif mode in ("twoev", "fallback", "counter", "freq"):
	bit = {"twoev": 2, "fallback": 4, "counter": 32, "freq": 64}[mode]
	flags = struct.unpack_from("<I", b, st + 12)[0]
	struct.pack_into("<I", b, st + 12, flags | bit)
	if mode in ("twoev", "counter"):
		i = b.index(struct.pack("<IIQ", 0xffffffff, 0, 0) +
			    b"calls".ljust(24, b"\0"))
		struct.pack_into("<IIQ", b, i, 9, 0, 1)
elif mode == "cpuclock":
	i = b.index(b"cache-misses\0")
	struct.pack_into("<IIQ", b, i - 16, 1, 0, 0)
	b[i:i + 24] = b"cpu-clock".ljust(24, b"\0")
else:
	off = 32
	while True:
		t, _, size = struct.unpack_from("<IIQ", b, off)
		if t == 16:
			break
		off += size
	if mode == "noinfo":
		del b[off:off + size]
	else:
		isz = struct.unpack_from("<I", b, off + 20)[0]
		struct.pack_into("<IIQ", b, off, 16, 0, size + 8)
		struct.pack_into("<II", b, off + 16, 2, isz + 8)
		b[off + 16 + isz:off + 16 + isz] = b"\1" * 8
open(dst, "wb").write(b)
EOF
}

# ---- golden: fig2 through record --trace and report ------------------------

expect 0 "" "record --trace fig2 -k 3 --threads 2" -- \
	"$KCC" record --trace "$D/fig2.trace" -k 3 --threads 2 -o "$tmp/f.kcc"
for k in 0 1 2 3; do
	exclusive "$D/fig2.k$k.expected" >"$tmp/want"
	run "$KCC" report --k "$k" --sort calls --format folded "$tmp/f.kcc"
	LC_ALL=C sort "$tmp/out" >"$tmp/got"
	if [ $rc -eq 0 ] && ! sanitized && cmp -s "$tmp/want" "$tmp/got"; then
		result 0 "fig2 k=$k: folded calls equal the hand-computed k-CCF"
	else
		diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
		show
		result 1 "fig2 k=$k: folded calls equal the hand-computed k-CCF"
	fi
done

# Events: the generator charges routine id + 1 (r=1, a=2, b=3, c=4).
run "$KCC" report --k 0 --format folded "$tmp/f.kcc"
printf 'a 4\nb 9\nc 8\nr 1\n' >"$tmp/want"
LC_ALL=C sort "$tmp/out" >"$tmp/got"
cmp -s "$tmp/want" "$tmp/got" && ! sanitized
result $? "fig2 k=0: misses per routine = calls x weight"

# Which event produced which counter: said only when the header says so.
run "$KCC" report --k 1 "$tmp/f.kcc"
[ $rc -eq 0 ] && ! grep -q '^# calls:' "$tmp/out"
result $? "one event: no '# calls:' line"
patch_profile twoev "$tmp/f.kcc" "$tmp/twoev.kcc"
run "$KCC" report --k 1 "$tmp/twoev.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	grep -q '^# calls: bursts at the samples of a second event (type 9, config 0x1); cache-misses: at the samples of the event above$' "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "two events: the report names the calls event and the sampled one"
patch_profile fallback "$tmp/f.kcc" "$tmp/fallback.kcc"
run "$KCC" report --k 1 "$tmp/fallback.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	grep -q '^# calls: the calls event asked for could not be opened' "$tmp/out"
result $? "calls event fallback: the report says so"
# ABI 1.3: a calls counter beside the event (KCC_HDR_CALLS_COUNTER).
patch_profile counter "$tmp/f.kcc" "$tmp/counter.kcc"
run "$KCC" report --k 1 "$tmp/counter.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	grep -q '^# calls: counted beside the event above (type 9, config 0x1) and read at its samples: each burst adds the calls since the thread.s previous sample$' "$tmp/out" &&
	grep -q '^# calls not in the column: 0 counted after the threads. last samples; samples without a count (counter not running): 0$' "$tmp/out"
st=$?
[ $st -eq 0 ] || show
result $st "calls counter: the report names the counted event and what the column leaves out"
# ABI 1.3: -F, the header's period is a frequency (KCC_HDR_FREQ).
patch_profile freq "$tmp/f.kcc" "$tmp/freq.kcc"
run "$KCC" report --k 1 "$tmp/freq.kcc"
[ $rc -eq 0 ] && ! sanitized &&
	grep -q ', sample frequency: [0-9]* Hz (each sample charged its period)$' "$tmp/out" &&
	! grep -q 'sample period' "$tmp/out"
result $? "a frequency session: the header gives the frequency, not a period"

# --routine: every 2-context of b with its activations (inclusive).
run "$KCC" report --k 2 --sort calls --routine b "$tmp/f.kcc"
awk '!/^#/ { print $2, $NF }' "$tmp/out" >"$tmp/got"
printf '3 b\n3 a\n2 c\n1 r\n' >"$tmp/want"
cmp -s "$tmp/want" "$tmp/got" && [ $rc -eq 0 ] && ! sanitized
result $? "--routine b lists b's callers with their counts"
expect 1 "no routine named" "--routine of an unknown routine: exit 1" -- \
	"$KCC" report --routine nosuch "$tmp/f.kcc"
expect 1 "above the recorded k" "--k above the recorded k: exit 1" -- \
	"$KCC" report --k 5 "$tmp/f.kcc"

# ---- totals agree between formats ---------------------------------------

run "$KCC" report --k 2 "$tmp/f.kcc"
cp "$tmp/out" "$tmp/text"
total=$(sed -n 's/^# total:.* cache-misses \([0-9]*\).*/\1/p' "$tmp/text")
[ "$total" = 22 ]
result $? "text total of misses is the constructed 22 (got $total)"
run "$KCC" report --k 2 --format folded "$tmp/f.kcc"
[ "$(fold_sum "$tmp/out")" = "$total" ]
result $? "folded total equals the text report's"
awk '!/^#/ && NF { s += $3 } END { exit !(s == '"${total:-0}"') }' "$tmp/text"
result $? "text top-list rows add up to the total"
run "$KCC" report --k 1 --percent-limit 15 "$tmp/f.kcc"
[ "$(grep -cv '^#' "$tmp/out")" -eq 3 ]
result $? "--percent-limit 15 keeps the 3 contexts above 15%"

run "$KCC" report --k 2 --format json "$tmp/f.kcc"
if command -v python3 >/dev/null; then
	python3 - "$tmp/out" "$total" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
i = d["metrics"].index("cache-misses")
g = d["groups"][0]
s = sum(c["self"][i] for c in g["contexts"])
sys.exit(0 if s == g["total"][i] == int(sys.argv[2]) else 1)
EOF
	result $? "JSON parses; its self counts add up to the total"
else
	skip "no python3 to parse JSON"
fi

expect 0 "" "pprof output written" -- \
	"$KCC" report --k 2 --format pprof -o "$tmp/f.pb.gz" "$tmp/f.kcc"
"$KCC" record --trace "$D/fig2.trace" -k 3 --stream -o "$tmp/f.stream"
if [ -n "$gopprof" ]; then
	pprof -top -sample_index=cache-misses "$tmp/f.pb.gz" >"$tmp/pp" 2>&1
	grep -q "of $total total" "$tmp/pp"
	result $? "go tool pprof reads it; total $total misses"
	pprof -raw "$tmp/f.pb.gz" >"$tmp/pp" 2>&1
	grep -q "^calls/count cache-misses/count\[dflt\] samples/count$" "$tmp/pp"
	result $? "go tool pprof -raw lists the three sample types"
	grep -q "^Time: $(date -u +%Y-%m-%d)" "$tmp/pp" && ! grep -q "^Time: 1970" "$tmp/pp"
	result $? "pprof time is the wall clock of the recording, today"
	grep -q "^Comment: kcc k-calling-context profile, k = 2:" "$tmp/pp" &&
		grep -q "^Comment: .*cum .*stop at k callers" "$tmp/pp"
	result $? "pprof comments state k = 2 and that cum stops at k"
	grep -q '^1: 0x0/0x0/0x0 \[trace\]' "$tmp/pp" && grep -q ' M=1 b ' "$tmp/pp"
	result $? "pprof has the [trace] Mapping and its locations use it"
	pprof -traces -sample_index=cache-misses "$tmp/f.pb.gz" >"$tmp/pp" 2>&1
	traces_folded "$tmp/pp" >"$tmp/got"
	"$KCC" report --k 2 --format folded "$tmp/f.kcc" | LC_ALL=C sort >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/got"
	result $? "pprof -traces: stacks (innermost first), names and values = folded"
	"$KCC" report --k 2 --sort calls --format pprof -o "$tmp/s.pb.gz" "$tmp/f.kcc"
	pprof -raw "$tmp/s.pb.gz" >"$tmp/pp" 2>&1
	grep -q '^PeriodType: cache-misses count$' "$tmp/pp" &&
		grep -q '^calls/count\[dflt\]' "$tmp/pp"
	result $? "pprof period type is the sampled event whatever --sort is"
	patch_profile nocalls "$tmp/f.kcc" "$tmp/nocalls.kcc"
	"$KCC" report --k 2 --format pprof -o "$tmp/n.pb.gz" "$tmp/nocalls.kcc"
	pprof -raw "$tmp/n.pb.gz" >"$tmp/pp" 2>&1
	grep -q '^cache-misses/count\[dflt\] samples/count$' "$tmp/pp"
	result $? "pprof has no calls sample type when calls were not measured"
	patch_profile cpuclock "$tmp/f.kcc" "$tmp/clock.kcc"
	"$KCC" report --k 2 --format pprof -o "$tmp/c.pb.gz" "$tmp/clock.kcc"
	pprof -raw "$tmp/c.pb.gz" >"$tmp/pp" 2>&1
	grep -q '^calls/count cpu-clock/nanoseconds\[dflt\] samples/count$' "$tmp/pp" &&
		grep -q '^PeriodType: cpu-clock nanoseconds$' "$tmp/pp"
	result $? "cpu-clock samples and period are typed nanoseconds"
	"$KCCREAD" -o "$tmp/old.kcc" "$tmp/f.stream" 2>/dev/null
	"$KCC" report --format pprof -o "$tmp/o.pb.gz" "$tmp/old.kcc"
	pprof -raw "$tmp/o.pb.gz" >"$tmp/pp" 2>&1
	! grep -q '^Time:' "$tmp/pp" && grep -q '^Samples:' "$tmp/pp"
	result $? "a profile without a recorded clock gives pprof no time, not 1970"
else
	for i in 1 2 3 4 5 6 7 8 9 10; do
		skip "no go tool pprof (golang-go)"
	done
fi

expect 0 "" "svg output written" -- \
	"$KCC" report --k 2 --format svg -o "$tmp/f.svg" "$tmp/f.kcc"
if command -v xmllint >/dev/null; then
	xmllint --noout "$tmp/f.svg" 2>"$tmp/err"
	result $? "svg is well-formed XML"
else
	skip "no xmllint (libxml2-utils)"
fi
grep -q '<script' "$tmp/f.svg" && grep -q 'mouseover' "$tmp/f.svg" &&
	! grep -q 'href=' "$tmp/f.svg"
result $? "svg embeds its script and references nothing outside"
# Names of many-byte characters, cut to fit narrow frames: whole
# characters only, or the SVG is not UTF-8 and not XML.
u=€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€
{
	echo "call main"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40; do
		echo "call ${u}_$i"
		echo "return"
	done
	echo "return"
} >"$tmp/utf8.trace"
"$KCC" record --trace "$tmp/utf8.trace" -k 3 -o "$tmp/utf8.kcc" 2>/dev/null
run "$KCC" report --format svg --k 3 "$tmp/utf8.kcc"
if command -v xmllint >/dev/null; then
	[ $rc -eq 0 ] && grep -q '\.\.</text>' "$tmp/out" && xmllint --noout "$tmp/out" 2>"$tmp/err"
	result $? "svg of UTF-8 names cut to fit is still well-formed UTF-8 XML"
else
	skip "no xmllint (libxml2-utils)"
fi
grep -q '<text id="search"' "$tmp/f.svg" && grep -q "getElementById('search')" "$tmp/f.svg"
result $? "svg has a search button wired to its script"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chrome" ]; then
	timeout 60 "$chrome" --headless --no-sandbox --disable-gpu \
		--screenshot="$tmp/flame.png" --window-size=1200,300 \
		"file://$tmp/f.svg" >/dev/null 2>&1
	# The screenshot against the SVG it shows: each frame of 8 px or
	# more, sampled near its top edge mid-width, in its fill colour.
	PYTHONPATH=$(dirname "$0")/../lib python3 - "$tmp/f.svg" "$tmp/flame.png" >"$tmp/px" 2>&1 <<'EOF'
import re, sys
from png import read_png
svg, png = sys.argv[1:3]
w, h, bpp, rows = read_png(png)
# Every frame of the SVG: its colour near its top edge, mid-width.
rects = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="(\d+)" rx="2" fill="rgb\((\d+),(\d+),(\d+)\)"', open(svg).read())
seen = hit = 0
for x, y, wd, ht, r, g, b in rects:
    x, y, wd = float(x), float(y), float(wd)
    if wd < 8 or y + 2 >= h:
        continue
    px, py = int(x + wd / 2), int(y + 2)
    got = rows[py][px * bpp:px * bpp + 3]
    seen += 1
    hit += all(abs(got[k] - int(v)) <= 10 for k, v in enumerate((r, g, b)))
print("%d of %d frames drawn in their colour" % (hit, seen))
sys.exit(0 if seen >= 5 and hit >= 0.9 * seen else 1)
EOF
	result $? "headless chromium draws every frame of the svg in its colour ($(tail -n 1 "$tmp/px"))"
	if [ -n "${KCC_ARTIFACTS:-}" ] && mkdir -p "$KCC_ARTIFACTS"; then
		cp "$tmp/flame.png" "$KCC_ARTIFACTS/" &&
			echo "# screenshot: $KCC_ARTIFACTS/flame.png"
	fi
else
	skip "no chromium for a screenshot"
fi

# ---- views --------------------------------------------------------------

run "$KCC" report --k inf --similar 60 --sort calls "$tmp/f.kcc"
[ $rc -eq 1 ] && grep -q "above the recorded" "$tmp/err"
result $? "--k inf on a k=3 profile is refused"
# The text trees of a view, read back as folded stacks of calls: the
# indentation gives each line's callers, a node's calls less those of
# the callers printed under it its exclusive count.
tree_folded() {
	awk -v nc=3 '
		/^#/ { next }
		{
			name = substr($0, 8 + 13 * nc + 3)
			d = match(name, /[^ ]/) - 1
			name = substr(name, d + 1)
			d = d / 2
			st[d] = name
			p = st[d]
			for (i = d - 1; i >= 0; i--)
				p = p ";" st[i]
			c[p] = $2
		}
		END {
			for (p in c) {
				s = c[p]
				for (q in c)
					if (substr(q, length(q) - length(p)) == ";" p &&
					    split(q, a, ";") == split(p, b, ";") + 1)
						s -= c[q]
				if (s > 0)
					print p " " s
			}
		}' "$1" | LC_ALL=C sort
}


# ---- one view, every format ----------------------------------------------
# --routine, --hot, --similar and --percent-limit choose k-contexts; each
# format must show exactly those, with the same counts: folded lines,
# JSON self counts, pprof samples (-traces) and SVG frames (their
# inclusive counts less their callers') all read back as the folded
# stacks expected from the hand-made k-CCF pruned by brute force.

# pruned FILE MODE X: exclusive counts ("path count") of the k-CCF of
# FILE ("count TAB path") kept by MODE: all, hot (count >= X), similar
# (count >= X% of its routine's), routine (paths of routine X), top
# (all, then rows below X% of the total dropped); rows below P% of the
# total are dropped too (pruned FILE MODE X P).
pruned() {
	tot=$(awk -F '\t' 'index($2, ";") == 0 { t += $1 } END { print t + 0 }' "$1")
	awk -F '\t' -v mode="$2" -v x="$3" '
		{ c[$2] += $1; line[NR] = $0; path[NR] = $2 }
		END {
			for (i = 1; i <= NR; i++) {
				n = split(path[i], e, ";")
				r = e[n]
				if (mode == "hot")
					keep = c[path[i]] >= x
				else if (mode == "similar")
					keep = 100 * c[path[i]] >= x * c[r]
				else if (mode == "routine")
					keep = r == x
				else
					keep = 1
				if (keep)
					print line[i]
			}
		}' "$1" | exclusive - |
		awk -v mode="$2" -v x="$3" -v pl="${4:-0}" -v tot="$tot" '
			(mode != "top" || 100 * $NF >= x * tot) && 100 * $NF >= pl * tot'
}

# Each format of one view, as sorted folded stacks of calls.
json_folded() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
i = d["metrics"].index("calls")
for g in d["groups"]:
	for c in g["contexts"]:
		if c["self"][i]:
			print(";".join(c["path"]), c["self"][i])
EOF
}

svg_folded() {	# frames' inclusive counts less their callers' frames
	sed -n 's/.*<title>\([^<]*\) \[trace\] | calls: \([0-9]*\) .*/\2\t\1/p' "$1" |
		exclusive -
}

view_formats() {	# view_formats DESC K EXPECTED-FILE REPORT-ARGS...
	desc=$1
	k=$2
	want=$3
	shift 3
	bad=
	"$KCC" report --k "$k" --sort calls --format folded "$@" "$tmp/f.kcc" \
		2>"$tmp/err" | LC_ALL=C sort >"$tmp/v.folded"
	cmp -s "$want" "$tmp/v.folded" || bad="$bad folded"
	"$KCC" report --k "$k" --sort calls --format json "$@" "$tmp/f.kcc" \
		>"$tmp/v.json" 2>>"$tmp/err"
	json_folded "$tmp/v.json" | LC_ALL=C sort | cmp -s "$want" - || bad="$bad json"
	"$KCC" report --k "$k" --sort calls --format svg -o "$tmp/v.svg" "$@" \
		"$tmp/f.kcc" 2>>"$tmp/err"
	svg_folded "$tmp/v.svg" >"$tmp/v.svgf"
	cmp -s "$want" "$tmp/v.svgf" || bad="$bad svg"
	if [ -n "$gopprof" ]; then
		"$KCC" report --k "$k" --sort calls --format pprof -o "$tmp/v.pb.gz" \
			"$@" "$tmp/f.kcc" 2>>"$tmp/err"
		pprof -traces -sample_index=calls "$tmp/v.pb.gz" >"$tmp/pp" 2>&1
		traces_folded "$tmp/pp" | cmp -s "$want" - || bad="$bad pprof"
	fi
	[ -s "$want" ] && [ -z "$bad" ] && ! sanitized
	result $? "$desc: folded, JSON, SVG${gopprof:+ and pprof} show the brute-force contexts${bad:+ (differ:$bad)}"
	if [ -n "$bad" ]; then
		diff "$want" "$tmp/v.folded" | sed "s/^/# folded: /"
		diff "$want" "$tmp/v.svgf" | sed "s/^/# svg: /"
	fi
}

pruned "$D/fig2.k2.expected" all 0 >"$tmp/want.all"
view_formats "no view (k=2)" 2 "$tmp/want.all"
view_formats "--dso [trace] (k=2): its routines, all" 2 "$tmp/want.all" --dso '[trace]'
run "$KCC" report --k 2 --dso nosuch,other --format folded "$tmp/f.kcc"
[ $rc -eq 0 ] && [ ! -s "$tmp/out" ] && ! sanitized
result $? "--dso of objects not in the profile: no context"
pruned "$D/fig2.k3.expected" routine b >"$tmp/want.routine"
view_formats "--routine b (k=3)" 3 "$tmp/want.routine" --routine b
pruned "$D/fig2.k3.expected" hot 2 >"$tmp/want.hot"
view_formats "--hot 0.25: calls >= 2 of 8 (k=3)" 3 "$tmp/want.hot" --hot 0.25
pruned "$D/fig2.k3.expected" similar 60 >"$tmp/want.similar"
view_formats "--similar 60 (k=3)" 3 "$tmp/want.similar" --similar 60
for v in "routine b" "hot 0.25" "similar 60"; do
	# shellcheck disable=SC2086 # two words: the option and its value
	set -- $v
	run "$KCC" report --k 3 --sort calls "--$1" "$2" "$tmp/f.kcc"
	tree_folded "$tmp/out" | cmp -s "$tmp/want.${1}" -
	result $? "--$1 $2: the text trees show the brute-force contexts"
done
pruned "$D/fig2.k1.expected" top 15 >"$tmp/want.top"
view_formats "--percent-limit 15 (k=1)" 1 "$tmp/want.top" --percent-limit 15
pruned "$D/fig2.k3.expected" hot 2 20 >"$tmp/want.hotpl"
view_formats "--hot 0.25 --percent-limit 20 (k=3)" 3 "$tmp/want.hotpl" --hot 0.25 \
	--percent-limit 20
run "$KCC" report --k 1 --sort calls --percent-limit 15 "$tmp/f.kcc"
awk '!/^#/ { print $NF " " $2 }' "$tmp/out" | LC_ALL=C sort | cmp -s "$tmp/want.top" -
result $? "--percent-limit 15: the text rows are the same contexts"
for fmt in folded json svg; do
	run "$KCC" report --routine nosuch --format $fmt "$tmp/f.kcc"
	[ $rc -eq 1 ] && grep -q "no routine named 'nosuch'" "$tmp/err" && ! sanitized
	result $? "--routine nosuch --format $fmt: exit 1, no routine named"
done

# ---- merge and diff -------------------------------------------------------

expect 0 "" "merge A A" -- "$KCC" merge -o "$tmp/aa.kcc" "$tmp/f.kcc" "$tmp/f.kcc"
"$KCC" report --k 2 --format folded "$tmp/f.kcc" >"$tmp/a.f"
"$KCC" report --k 2 --format folded "$tmp/aa.kcc" >"$tmp/aa.f"
awk '{ $NF = 2 * $NF; print }' "$tmp/a.f" | cmp -s - "$tmp/aa.f"
result $? "merge(A, A) doubles every folded count"
"$KCC" record --trace "$D/fig2.trace" -k 3 -o "$tmp/b.kcc" 2>/dev/null
printf 'call r\ncall b\nreturn\nreturn\n' >"$tmp/t2"
"$KCC" record --trace "$tmp/t2" -k 3 -o "$tmp/c.kcc" 2>/dev/null
"$KCC" merge -o "$tmp/bc.kcc" "$tmp/b.kcc" "$tmp/c.kcc" 2>/dev/null
"$KCC" merge -o "$tmp/cb.kcc" "$tmp/c.kcc" "$tmp/b.kcc" 2>/dev/null
"$KCC" report --format folded "$tmp/bc.kcc" >"$tmp/bc.f"
"$KCC" report --format folded "$tmp/cb.kcc" >"$tmp/cb.f"
cmp -s "$tmp/bc.f" "$tmp/cb.f" && [ -s "$tmp/bc.f" ]
result $? "merge(B, C) and merge(C, B) report the same"
run "$KCC" diff "$tmp/f.kcc" "$tmp/f.kcc"
[ $rc -eq 0 ] && [ "$(grep -cv '^#' "$tmp/out")" -eq 0 ]
result $? "diff(A, A) is empty"
run "$KCC" diff "$tmp/f.kcc" "$tmp/aa.kcc"
[ $rc -eq 0 ] && [ "$(grep -cv '^#' "$tmp/out")" -eq 0 ]
result $? "diff(A, merge(A, A)) is empty: shares are normalised"
run "$KCC" diff --k 1 "$tmp/f.kcc" "$tmp/c.kcc"
grep -q '^ *+.*r;b$' "$tmp/out" && grep -q '^ *-.*a;b$' "$tmp/out"
result $? "diff shows r;b gained and a;b lost"
expect 1 "has k 2 and 4 counters" "merge refuses profiles of different k" -- \
	sh -c "'$KCC' record --trace '$tmp/t2' -k 2 -o '$tmp/k2.kcc' && '$KCC' merge -o '$tmp/x.kcc' '$tmp/f.kcc' '$tmp/k2.kcc'"

# ---- perf's habits ---------------------------------------------------------

"$KCC" report --k 2 "$tmp/f.kcc" >"$tmp/long" 2>&1
run "$KCC" report -k 2 -i "$tmp/f.kcc" --stdio
[ $rc -eq 0 ] && cmp -s "$tmp/long" "$tmp/out"
result $? "report -k 2 -i FILE --stdio = report --k 2 FILE"
expect 2 "not with --format json" "report --stdio --format json: exit 2" -- \
	"$KCC" report --stdio --format json "$tmp/f.kcc"
expect 2 "give the profile once" "report -i A B: exit 2" -- \
	"$KCC" report -i "$tmp/f.kcc" "$tmp/f.kcc"
printf 'call r\ncall b\nreturn\nreturn\ncall a\ncall b\nreturn\nreturn\ncall c\nreturn\n' >"$tmp/t3"
"$KCC" record --trace "$tmp/t3" -k 2 --threads 2 -o "$tmp/t3.kcc" 2>/dev/null
s0=$("$KCC" report --tid 1000 --format folded "$tmp/t3.kcc" | awk '{ s += $NF } END { print s + 0 }')
s1=$("$KCC" report --tid 1001 --format folded "$tmp/t3.kcc" | awk '{ s += $NF } END { print s + 0 }')
s01=$("$KCC" report --tid 1001,1000 --format folded "$tmp/t3.kcc" | awk '{ s += $NF } END { print s + 0 }')
all=$("$KCC" report --format folded "$tmp/t3.kcc" | awk '{ s += $NF } END { print s + 0 }')
[ "$s0" -gt 0 ] && [ "$s1" -gt 0 ] && [ $((s0 + s1)) = "$s01" ] && [ "$s01" = "$all" ]
result $? "--tid 1001,1000 selects both threads ($s0 + $s1 = $s01 of $all)"
# --per-process: the two threads folded, the same contexts in fewer bytes.
"$KCC" record --trace "$tmp/t3" -k 2 --threads 2 --per-process -o "$tmp/t3p.kcc" 2>"$tmp/t3p.err" &&
	"$KCC" report --format folded "$tmp/t3.kcc" >"$tmp/t3.f" &&
	"$KCC" report --format folded "$tmp/t3p.kcc" >"$tmp/t3p.f" &&
	cmp -s "$tmp/t3.f" "$tmp/t3p.f" && [ -s "$tmp/t3.f" ] &&
	[ "$("$KCC" dump "$tmp/t3p.kcc" | grep -c '^task .* flags=4$')" = 1 ] &&
	[ "$("$KCC" dump "$tmp/t3p.kcc" | grep -c '^task ')" = 1 ] &&
	! sanitized "$tmp/t3p.err"
result $? "record --per-process: one folded task, the same folded report as per thread"
"$KCC" record --trace "$tmp/t3" -k 2 --threads 2 --stream -o "$tmp/t3.stream" 2>/dev/null &&
	"$KCCREAD" --per-process -o "$tmp/t3r.kcc" "$tmp/t3.stream" 2>"$tmp/t3r.err" &&
	"$KCC" dump "$tmp/t3r.kcc" | grep -v '^#' >"$tmp/t3r.d" &&
	"$KCC" dump "$tmp/t3p.kcc" | grep -v '^#' >"$tmp/t3p.d" &&
	cmp -s "$tmp/t3r.d" "$tmp/t3p.d" && ! sanitized "$tmp/t3r.err"
result $? "kccread --per-process of the stream folds as kcc record does"
expect 2 "not with --watch" "record --per-process --watch: exit 2" -- \
	"$KCC" record --trace "$tmp/t3" --per-process --watch "$tmp/t3" -o "$tmp/x.kcc"
cm=$("$KCC" report --comm nosuch,trace --format folded "$tmp/t3.kcc" | awk '{ s += $NF } END { print s + 0 }')
run "$KCC" report --comm nosuch,other --format folded "$tmp/t3.kcc"
[ "$cm" = "$all" ] && [ $rc -eq 0 ] && [ ! -s "$tmp/out" ]
result $? "--comm takes a list: nosuch,trace selects all, nosuch,other none"
expect 2 "bad --pid" "--pid 1,,2: exit 2" -- "$KCC" report --pid 1,,2 "$tmp/f.kcc"
expect 2 "give the servers" "--debuginfod without DEBUGINFOD_URLS: exit 2" -- \
	env -u DEBUGINFOD_URLS "$KCC" report --debuginfod "$tmp/f.kcc"
run env -u DEBUGINFOD_URLS "$KCC" report --debuginfod="file://$tmp/nosrv" --k 2 \
	--srcline --format folded "$tmp/f.kcc"
[ $rc -eq 0 ] && cmp -s "$tmp/out" "$tmp/a.f" && ! sanitized
result $? "--debuginfod=URL: nothing to fetch for [trace], same report"

# kcc record: a command that cannot run is an error, and nothing is written.
cp "$tmp/f.kcc" "$tmp/keep.kcc"
expect 127 "No such file" "record -- /nonexistent: exit 127 with the exec error" -- \
	"$KCC" record -o "$tmp/keep.kcc" -- "$tmp/nonexistent"
cmp -s "$tmp/f.kcc" "$tmp/keep.kcc" && [ ! -e "$tmp/keep.kcc.old" ]
result $? "... and the existing output is left as it was"
: >"$tmp/noexec"
expect 126 "Permission denied" "record -- a file that is not executable: exit 126" -- \
	"$KCC" record -o "$tmp/keep.kcc" -- "$tmp/noexec"
expect 127 "command not found" "record -- a command not in PATH: exit 127" -- \
	"$KCC" record -o "$tmp/keep.kcc" -- kcc-no-such-command
"$KCC" record --trace "$tmp/t2" -k 3 -o "$tmp/keep.kcc" 2>/dev/null
cmp -s "$tmp/f.kcc" "$tmp/keep.kcc.old" && ! cmp -s "$tmp/f.kcc" "$tmp/keep.kcc"
result $? "record keeps the previous output as FILE.old"

# The header: where and when the profile was taken.
run "$KCC" report "$tmp/f.kcc"
grep -q "^# captured on: $(date -u +%Y-%m-%d) [0-9:]* UTC$" "$tmp/out" &&
	grep -qxF "# hostname: $(hostname)" "$tmp/out" &&
	grep -qxF "# os release: $(uname -r)" "$tmp/out" &&
	grep -qxF "# cmdline: kcc record --trace $D/fig2.trace -k 3 --threads 2 -o $tmp/f.kcc" "$tmp/out"
result $? "report header: captured on (today), hostname, os release, cmdline"
patch_profile noinfo "$tmp/f.kcc" "$tmp/noinfo.kcc"
run "$KCC" report --k 2 --format folded "$tmp/noinfo.kcc"
cmp -s "$tmp/out" "$tmp/a.f" && ! "$KCC" report "$tmp/noinfo.kcc" | grep -q "captured on"
result $? "a profile without INFO (older kcc) reads, reports the same, no header"
patch_profile info2 "$tmp/f.kcc" "$tmp/info2.kcc"
run "$KCC" report "$tmp/info2.kcc"
[ $rc -eq 0 ] && grep -qxF "# hostname: $(hostname)" "$tmp/out"
result $? "an INFO of a later version with more fields still reads"

# Different events: merge and diff refuse unless --force.
patch_profile cpuclock "$tmp/f.kcc" "$tmp/clock.kcc"
expect 1 "other events" "merge of cache-misses and cpu-clock profiles: exit 1" -- \
	"$KCC" merge -o "$tmp/x.kcc" "$tmp/f.kcc" "$tmp/clock.kcc"
expect 0 "" "merge --force merges them" -- \
	"$KCC" merge --force -o "$tmp/x.kcc" "$tmp/f.kcc" "$tmp/clock.kcc"
expect 1 "count different events (cache-misses vs cpu-clock)" "diff of different events: exit 1" -- \
	"$KCC" diff "$tmp/f.kcc" "$tmp/clock.kcc"
expect 0 "" "diff --force compares them" -- \
	"$KCC" diff --force "$tmp/f.kcc" "$tmp/clock.kcc"
"$KCC" record --trace "$tmp/t2" -k 2 -o "$tmp/k2.kcc" 2>/dev/null
expect 1 "give -k K" "diff of k 3 and k 2 profiles: exit 1" -- \
	"$KCC" diff "$tmp/f.kcc" "$tmp/k2.kcc"
expect 0 "" "diff -k 2 --stdio of k 3 and k 2 profiles" -- \
	"$KCC" diff -k 2 --stdio "$tmp/f.kcc" "$tmp/k2.kcc"

# ---- kccread and bare streams -----------------------------------------------

"$KCC" record --trace "$D/fig2.trace" -k 3 --stream -o "$tmp/f.stream"
expect 0 "" "kccread a saved stream" -- "$KCCREAD" -o "$tmp/r.kcc" "$tmp/f.stream"
"$KCC" report --format folded "$tmp/r.kcc" >"$tmp/r.f" 2>/dev/null
"$KCC" report --format folded "$tmp/f.stream" >"$tmp/s.f" 2>/dev/null
cmp -s "$tmp/r.f" "$tmp/s.f" && [ "$(fold_sum "$tmp/r.f")" = 22 ]
result $? "report of kccread's profile = report of the bare stream"
run "$KCC" dump "$tmp/f.stream"
[ $rc -eq 0 ] && grep -q '^task 0 1000 1000 trace k=3' "$tmp/out" &&
	grep -q '^top ' "$tmp/out" && grep -q '^slab ' "$tmp/out"
result $? "kcc dump prints each task's k-SF canonically"
expect 1 "already a profile" "kccread of a profile: exit 1" -- "$KCCREAD" -o "$tmp/x" "$tmp/f.kcc"
if [ ! -e /dev/kcc ]; then
	expect 1 "module loaded" "kccread without the module says so" -- "$KCCREAD" -o "$tmp/x"
else
	skip "/dev/kcc exists here"
fi
expect 2 "unknown option" "kccread bad option: exit 2" -- "$KCCREAD" --bogus

# ---- bad input ---------------------------------------------------------------

size=$(wc -c <"$tmp/f.kcc")
head -c $((size - 24)) "$tmp/f.kcc" >"$tmp/trunc.kcc"
expect 1 "offset" "truncated profile: exit 1, names the offset" -- "$KCC" report "$tmp/trunc.kcc"
head -c 300 "$tmp/f.stream" >"$tmp/trunc.stream"
expect 1 "trunc.stream: offset" "truncated stream: exit 1, names file and offset" -- \
	"$KCC" report "$tmp/trunc.stream"
head -c 4096 /dev/urandom >"$tmp/junk"
expect 1 "not a kcc" "random bytes: exit 1" -- "$KCC" report "$tmp/junk"
expect 1 "No such file" "missing file: exit 1" -- "$KCC" report "$tmp/nonexistent"
i=0
bad=0
while [ $i -lt 30 ]; do
	cp "$tmp/f.kcc" "$tmp/c"
	off=$(( (i * 97) % size ))
	printf '\377' | dd of="$tmp/c" bs=1 seek=$off conv=notrunc 2>/dev/null
	run "$KCC" report "$tmp/c"
	{ [ $rc -eq 0 ] || [ $rc -eq 1 ]; } && ! sanitized || bad=$((bad + 1))
	i=$((i + 1))
done
[ $bad -eq 0 ]
result $? "30 corrupted profiles: exit 0 or 1, no sanitizer report"

# ---- command lines -------------------------------------------------------------

for sub in record report diff merge dump; do
	run "$KCC" $sub --help
	[ $rc -eq 0 ] && grep -q EXAMPLES "$tmp/out"
	result $? "kcc $sub --help: exit 0, EXAMPLES"
done
expect 2 "exactly one of" "record without a target: exit 2" -- "$KCC" record
expect 2 "give one" "record -F with -c: exit 2" -- "$KCC" record -F 99 -c 10007 -- true
expect 2 "bad -F '0'" "record -F 0: exit 2" -- "$KCC" record -F 0 -- true
expect 2 "bad -F '100001'" "record -F above 100000: exit 2" -- "$KCC" record -F 100001 -- true
expect 2 "give -a too" "record -G without -a: exit 2" -- "$KCC" record -G kcc-a -- true
expect 2 "bad --stack-depth '0'" "record --stack-depth 0: exit 2" -- "$KCC" record --stack-depth 0 -- true
expect 2 "bad --stack-depth '513': expected 1..512" "record --stack-depth 513: exit 2" -- \
	"$KCC" record --stack-depth 513 -- true
expect 2 "give one" "record --calls-counter and --no-calls-counter: exit 2" -- \
	"$KCC" record --calls-counter cycles --no-calls-counter -- true
expect 2 "give one" "record --calls-counter and --calls-event: exit 2" -- \
	"$KCC" record --calls-counter cycles --calls-event cycles -- true
expect 2 "bad -k" "record -k 0: exit 2" -- "$KCC" record -k 0 -- true
printf 'main\n' >"$tmp/watch1"
expect 2 "not with --watch" "record --calls-hybrid with --watch: exit 2" -- \
	"$KCC" record --calls-hybrid cycles --watch "$tmp/watch1" -- true
expect 2 "needs --calls-event" "record --calls-period with --no-calls-counter: exit 2" -- \
	"$KCC" record --calls-period 1000 --no-calls-counter -- true
expect 2 "needs --calls-event" "record --calls-period with --calls-counter: exit 2" -- \
	"$KCC" record --calls-period 1000 --calls-counter cycles -- true
expect 2 "not with --source fp" "record --calls-event with --source fp: exit 2" -- \
	"$KCC" record --source fp --calls-event cycles -- true
expect 2 "no PMU 'nosuchpmu'" "record --calls-event of no PMU: exit 2 naming it" -- \
	"$KCC" record --calls-event nosuchpmu/calls/ -- true
if [ ! -e /dev/kcc ]; then
	expect 1 "module loaded" "record without the module: exit 1, says why" -- \
		"$KCC" record --device /dev/kcc -o "$tmp/x" -- true
else
	skip "/dev/kcc exists here"
fi

ktap_exit
