#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# serve.sh - kcc serve's HTTP layer and its windows, without kcc.ko: the
# session is replaced by profiles of kcc record --trace (--stream-file),
# snapshot 1 the run of trace A, snapshot 2 the run of A then B.  A
# window is the difference of two snapshots, so the first window must
# hold B's calls exactly as a profile of trace B alone counts them (a
# different input, not the window's own output), and the next window
# nothing.  Bad requests get 4xx, slow and surplus clients are dropped,
# and the windows after them are still right.
#
# timeout: 120

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
command -v curl >/dev/null 2>&1 || ktap_skip_all "no curl"
ktap_tmpdir serve
plan 26
D=$(dirname "$0")/data

grep -v '^#' "$D/fig2.trace" >"$tmp/a.trace"
# B: r calls x twice, the first x calls y twice; 5 calls.
printf 'call r\ncall x\ncall y\nreturn\ncall y\nreturn\nreturn\ncall x\nreturn\nreturn\n' \
	>"$tmp/b.trace"
cat "$tmp/a.trace" "$tmp/b.trace" >"$tmp/ab.trace"
for t in a b ab; do
	"$KCC" record --trace "$tmp/$t.trace" -k 3 -o "$tmp/$t.kcc" 2>"$tmp/err" ||
		{ cat "$tmp/err"; exit 1; }
done

# start_server ARGS...: kcc serve on a free port; $url, $spid.
start_server() {
	"$KCC" serve --listen 127.0.0.1:0 "$@" 2>"$tmp/log" &
	spid=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q 'serving' "$tmp/log"; do
		sleep 0.1
		i=$((i + 1))
	done
	url=$(sed -n 's|^kcc: serving .* on \(http://[^ ]*\)/$|\1|p' "$tmp/log")
}
stop_server() {
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
}
trap 'stop_server; rm -rf "$tmp"' EXIT

# code PATH [CURL ARGS]: the HTTP status of GET PATH.
code() {
	p=$1
	shift
	curl -s -o "$tmp/body" -w '%{http_code}' --max-time 20 "$@" "$url$p"
}

start_server --max-seconds 60 --max-clients 2 --timeout 2 \
	--stream-file "$tmp/a.kcc" --stream-file "$tmp/ab.kcc"
[ -n "$url" ]
result $? "kcc serve listens on a loopback port ($url)"

[ "$(code /debug/pprof/)" = 200 ] && grep -q '/debug/pprof/profile' "$tmp/body" &&
	grep -q '/metrics' "$tmp/body"
result $? "/debug/pprof/ is an index of the profile and metrics"

[ "$(code '/debug/pprof/profile?seconds=1')" = 200 ] && cp "$tmp/body" "$tmp/w1.pb.gz" &&
	gzip -t "$tmp/w1.pb.gz"
result $? "a 1-second window is a gzipped profile"

gopprof=$(command -v go || true)
pprof() {	# go tool pprof, with its caches in $tmp
	HOME=$tmp GOPATH=$tmp/go GOCACHE=$tmp/gocache go tool pprof "$@"
}
# go tool pprof -traces as folded stacks ("outer;...;inner N"), sorted;
# label lines ("key:  value") are not frames.
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
		!on || /^ *[a-z_]+: / { next }
		/^ *[0-9]+ +[^ ]/ && !n {
			v = $1; sub(/^ *[0-9]+ +/, ""); st[++n] = $0; next
		}
		{ sub(/^ +/, ""); if ($0 != "") st[++n] = $0 }
		END { flush() }' "$1" | LC_ALL=C sort
}

if [ -n "$gopprof" ]; then
	pprof -traces -sample_index=calls "$tmp/w1.pb.gz" >"$tmp/pp" 2>&1
	traces_folded "$tmp/pp" >"$tmp/got"
	"$KCC" report --sort calls --format folded "$tmp/b.kcc" | LC_ALL=C sort >"$tmp/want"
	[ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"
	st=$?
	[ $st -eq 0 ] || diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
	result $st "window calls = trace B's alone (snapshot A+B less snapshot A)"
	pprof -traces -sample_index=samples "$tmp/w1.pb.gz" >"$tmp/pp" 2>&1
	got=$(traces_folded "$tmp/pp" | awk '{ s += $NF } END { print s + 0 }')
	[ "$got" -eq "$(grep -c '^call' "$tmp/b.trace")" ]
	result $? "window samples = B's calls ($got; one sample a call)"
	pprof -raw "$tmp/w1.pb.gz" >"$tmp/pp" 2>&1
	grep -q "hostname:\[$(hostname)\]" "$tmp/pp" &&
		grep -q "kernel:\[$(uname -r)\]" "$tmp/pp" &&
		grep -q "comm:\[trace\]" "$tmp/pp" &&
		grep -q '^Duration: 1\.' "$tmp/pp"
	result $? "samples carry hostname, kernel and comm labels; duration 1 s"
else
	for i in 1 2 3; do
		skip "no go tool pprof (golang-go)"
	done
fi

for q in seconds=-1 seconds=abc seconds=0 seconds=61 seconds=99999999999 seconds=; do
	c=$(code "/debug/pprof/profile?$q")
	[ "$c" = 400 ] || { echo "# $q: $c"; bad=1; }
done
[ -z "$bad" ]
result $? "negative, zero, non-numeric, empty and too long seconds: 400"

[ "$(code /nope)" = 404 ] && [ "$(code /debug/pprof/heap)" = 404 ]
result $? "unknown paths: 404"

[ "$(code /metrics -X POST)" = 405 ]
result $? "POST: 405"

big=$(head -c 9000 /dev/zero | tr '\0' a)
[ "$(code /metrics -H "X-Big: $big")" = 431 ]
result $? "a request head above 8 KiB: 431"

# Two idle clients fill --max-clients 2: the third gets 503; after
# --timeout 2 they are dropped and requests are served again.
hp=${url#http://}
if command -v python3 >/dev/null 2>&1; then
	python3 -c '
import socket, sys, time
h, p = sys.argv[1].rsplit(":", 1)
s = [socket.create_connection((h, int(p))) for _ in range(2)]
s[0].send(b"GET /metr")		# half a request, never finished
open(sys.argv[2], "w").write("connected")
time.sleep(6)
' "$hp" "$tmp/idle" &
	idle=$!
	i=0
	while [ $i -lt 100 ] && [ ! -s "$tmp/idle" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.2
	[ "$(code /metrics)" = 503 ]
	result $? "a third client while two are connected: 503"
	sleep 3
	[ "$(code /metrics)" = 200 ]
	result $? "slow clients dropped after --timeout: served again"
	wait $idle
else
	skip "no python3 for idle clients"
	skip "no python3 for idle clients"
fi

[ "$(code /metrics)" = 200 ] && cp "$tmp/body" "$tmp/m"
# Every sample line: name{labels} value, its family TYPEd before it.
awk '
	/^# TYPE / { t[$3] = 1; next }
	/^#/ { next }
	{
		if ($0 !~ /^[a-z_]+\{([a-z_]+="[^"]*",?)*\} [0-9]+$/) { print "# bad: " $0; bad = 1 }
		n = $0; sub(/\{.*/, "", n)
		if (!t[n]) { print "# untyped: " n; bad = 1 }
	}
	END { exit bad }' "$tmp/m"
result $? "/metrics: Prometheus text format, every family typed"
# Prometheus' own parser and linter (help text, counter names, units).
promtool=${KCC_PROMTOOL:-/var/cache/kcc/prometheus/usr/bin/promtool}
[ -x "$promtool" ] || promtool=$(command -v promtool)
if [ -n "$promtool" ]; then
	"$promtool" check metrics <"$tmp/m" >"$tmp/lint" 2>&1
	result $? "/metrics: promtool check metrics finds no error and no lint"
	sed 's/^/# /' "$tmp/lint"
else
	skip "no promtool (scripts/deps.sh unpacks it)"
fi

calls=$(grep -c '^call' "$tmp/ab.trace")
grep -q "^kcc_samples_total{hostname=\"$(hostname)\",kernel=\"$(uname -r)\",session=\"0\"} $calls\$" "$tmp/m"
result $? "kcc_samples_total = the session's samples ($calls: every call of A+B)"
[ "$(grep -c '^kcc_samples_dropped_total{.*reason="' "$tmp/m")" -eq 8 ]
result $? "drops by each of the 8 reasons"
grep -q '^kcc_http_client_errors_total{.*} 1[0-9]$' "$tmp/m" &&
	grep -q '^kcc_http_rejected_total{.*} 1$' "$tmp/m"
result $? "the 4xx replies and the rejected client are counted"

if [ -n "$gopprof" ]; then
	[ "$(code '/debug/pprof/profile?seconds=1')" = 200 ] &&
		pprof -raw "$tmp/body" >"$tmp/pp" 2>&1 &&
		grep -q '^Samples:' "$tmp/pp" && ! grep -q ' M=' "$tmp/pp"
	result $? "after the errors, the next window (A+B less A+B) is empty"
else
	skip "no go tool pprof (golang-go)"
fi
stop_server

run "$KCC" serve --listen 0.0.0.0:0 --stream-file "$tmp/a.kcc"
[ $rc -eq 2 ] && grep -q 'allow-remote' "$tmp/err" && grep -q 'reverse proxy' "$tmp/err"
result $? "a non-loopback address without --allow-remote: usage error"

"$KCC" serve --unix "$tmp/sock" --stream-file "$tmp/ab.kcc" 2>"$tmp/log" &
spid=$!
i=0
while [ $i -lt 100 ] && [ ! -S "$tmp/sock" ]; do
	sleep 0.1
	i=$((i + 1))
done
url=http://localhost
[ "$(code /metrics --unix-socket "$tmp/sock")" = 200 ] &&
	grep -q '^kcc_samples_total' "$tmp/body"
result $? "a Unix socket serves /metrics"
stop_server

# --push: windows POSTed to a stand-in of Pyroscope's /ingest
# (push_receiver.py checks each request as Pyroscope's HTTP API
# documents it).  Snapshot 0 is A, then A+B: the first window holds B's
# calls exactly as a profile of trace B alone counts them, the next ones
# nothing, with no gap between windows.
# start_receiver [STATUS]: $rport, $rpid, requests logged in $tmp/recv.
start_receiver() {
	rm -rf "$tmp/recv" "$tmp/rport"
	mkdir -p "$tmp/recv"
	python3 "$(dirname "$0")/push_receiver.py" "$tmp/rport" "$tmp/recv" "$@" &
	rpid=$!
	i=0
	while [ $i -lt 100 ] && [ ! -s "$tmp/rport" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rport=$(cat "$tmp/rport" 2>/dev/null)
}
# pushes N: wait (a hang bound) until the receiver logged N requests.
pushes() {
	i=0
	while [ $i -lt 300 ] && [ "$(cat "$tmp/recv/log" 2>/dev/null | wc -l)" -lt "$1" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(cat "$tmp/recv/log" 2>/dev/null | wc -l)" -ge "$1" ]
}
# push_count RESULT TRIES: /metrics into $tmp/body until its
# kcc_push_windows_total of RESULT is 3 or more, at most TRIES reads
# 0.1 s apart (as pushes() waits for the receiver); prints the push
# counts read last.
push_count() {
	i=0
	while [ $i -lt "$2" ]; do
		[ "$(code /metrics)" = 200 ] &&
			grep -q "^kcc_push_windows_total{.*result=\"$1\"} [3-9]" "$tmp/body" &&
			break
		sleep 0.1
		i=$((i + 1))
	done
	grep '^kcc_push_windows_total' "$tmp/body" | sed 's/^/# /'
}
if command -v python3 >/dev/null 2>&1; then
	start_receiver
	start_server --push "http://127.0.0.1:$rport/" --push-every 1 \
		--push-name kcc.test --stream-file "$tmp/a.kcc" --stream-file "$tmp/ab.kcc"
	pushes 3
	st=$?
	sed 's/^/# receiver: /' "$tmp/recv/log" 2>/dev/null
	[ $st -eq 0 ] && [ "$(grep -c ' ok kcc.test{hostname=' "$tmp/recv/log")" -ge 3 ] &&
		! grep -q ' bad:' "$tmp/recv/log"
	result $? "--push: 3 windows POSTed to /ingest, each as Pyroscope's API documents it"
	# Contiguous windows: each one starts where the one before ended.
	awk '$2 == "ok" { if (NR > 1 && $4 != u) bad = 1; u = $5 }
	     END { exit bad }' "$tmp/recv/log" &&
		grep -q " ok kcc.test{hostname=$(hostname),kernel=$(uname -r)} " "$tmp/recv/log"
	result $? "--push: windows back to back (from = the last until), labels hostname and kernel"
	if [ -n "$gopprof" ] && [ -s "$tmp/recv/1.pb.gz" ]; then
		pprof -traces -sample_index=calls "$tmp/recv/1.pb.gz" >"$tmp/pp" 2>&1
		traces_folded "$tmp/pp" >"$tmp/got"
		"$KCC" report --sort calls --format folded "$tmp/b.kcc" | LC_ALL=C sort >"$tmp/want"
		[ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got" &&
			pprof -raw "$tmp/recv/2.pb.gz" >"$tmp/pp" 2>&1 &&
			grep -q '^Samples:' "$tmp/pp" && ! grep -q ' M=' "$tmp/pp"
		st=$?
		[ $st -eq 0 ] || diff "$tmp/want" "$tmp/got" | sed 's/^/# /'
		result $st "--push: the first window's calls = trace B's alone, the second window empty"
	else
		skip "no go tool pprof (golang-go)"
	fi
	# The receiver logs a window before it replies, and a window is
	# sent once its child has read the reply and been reaped: the
	# count may trail the log for a moment.
	push_count sent 100
	grep -q '^kcc_push_windows_total{.*result="sent"} [3-9]' "$tmp/body" &&
		grep -q '^kcc_push_windows_total{.*result="failed"} 0$' "$tmp/body" &&
		{ [ -z "$promtool" ] || "$promtool" check metrics <"$tmp/body" >"$tmp/lint" 2>&1; }
	result $? "--push: /metrics counts the windows sent${promtool:+ (promtool: no error, no lint)}"
	sed 's/^/# /' "$tmp/lint" 2>/dev/null
	stop_server
	kill $rpid 2>/dev/null
	wait $rpid 2>/dev/null

	# A receiver that refuses (500) and one that is gone: counted as
	# failed, and the session is served all the while.
	start_receiver 500
	start_server --push "http://127.0.0.1:$rport/ingest" --push-every 1 \
		--stream-file "$tmp/ab.kcc"
	pushes 2
	st=$?
	kill $rpid 2>/dev/null
	wait $rpid 2>/dev/null
	# The two refused windows and at least one to the vanished
	# receiver, each counted once its child is reaped (a fixed sleep
	# lost that race on a loaded host).
	push_count failed 150
	[ $st -eq 0 ] &&
		grep -q '^kcc_push_windows_total{.*result="sent"} 0$' "$tmp/body" &&
		grep -q '^kcc_push_windows_total{.*result="failed"} [3-9]' "$tmp/body" &&
		[ "$(code '/debug/pprof/profile?seconds=1')" = 200 ]
	result $? "--push: refused and unreachable receivers are counted as failed; the session keeps serving"
	grep 'kcc_push' "$tmp/body" | sed 's/^/# /'
	stop_server
else
	for i in 1 2 3 4 5; do
		skip "no python3 for the push receiver"
	done
fi

run "$KCC" serve --push https://example.org --stream-file "$tmp/a.kcc"
[ $rc -eq 2 ] && grep -q 'plain HTTP' "$tmp/err"
result $? "--push https://...: usage error naming plain HTTP"

ktap_exit
