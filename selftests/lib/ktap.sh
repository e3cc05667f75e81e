# SPDX-License-Identifier: GPL-2.0
#
# ktap.sh - TAP helpers shared by the shell selftests in selftests/kcc/.
#
# Sourced, never run: it lives outside selftests/kcc/ because every
# selftests/kcc/*.sh is a test of its own for selftests/run_tests.sh.
# A test script runs from the top of the repository and starts with
#
#	. "$(dirname "$0")/../lib/ktap.sh"
#	ktap_begin			# "TAP version 13", skip without $KCC
#	...				# its own skip checks (ktap_skip_all)
#	ktap_tmpdir NAME		# $tmp, removed on exit
#	plan N				# "1..N"
#	...				# result, skip, run, expect, ...
#	ktap_exit			# checks the plan, exit 0 or 1
#
# run and expect leave stdout in $tmp/out, stderr in $tmp/err and the
# exit status in $rc; sanitized and show look there.  Any sanitizer
# report on stderr is a failure, whatever the exit status.
# KTAP_SHOW_LINES bounds the lines of each stream that show prints.

KSFT_SKIP=4
n=0
failed=0
PLAN=

ktap_skip_all() {	# ktap_skip_all REASON: skip the whole test
	echo "1..0 # SKIP $1"
	exit $KSFT_SKIP
}

ktap_begin() {	# the TAP header; skip without an executable $KCC
	echo "TAP version 13"
	if [ -z "$KCC" ] || [ ! -x "$KCC" ]; then
		ktap_skip_all "no kcc binary (set KCC)"
	fi
}

ktap_tmpdir() {	# ktap_tmpdir NAME: a fresh $tmp, removed on exit
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcc-$1.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
}

plan() {	# plan N: N checks to come
	PLAN=$1
	echo "1..$PLAN"
}

result() {	# result STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		failed=1
		echo "not ok $n $2"
	fi
}

skip() {	# skip REASON: a check that cannot run here
	n=$((n + 1))
	echo "ok $n # SKIP $1"
}

ktap_exit() {	# exit 1 if a check failed or the plan was not kept
	if [ -n "$PLAN" ] && [ $n -ne "$PLAN" ]; then
		echo "# ran $n checks, planned $PLAN"
		failed=1
	fi
	exit $failed
}

# run CMD...: stdout to $tmp/out, stderr to $tmp/err, status in $rc.
run() {
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# shellcheck disable=SC2120 # symfs.sh passes FILE
sanitized() {	# sanitized [FILE]: a sanitizer spoke in FILE ($tmp/err)
	grep -Eq 'Sanitizer|runtime error:' "${1:-$tmp/err}"
}

diag() {	# diag FILE: show it as TAP comments
	sed 's/^/# /' "$1"
}

show() {	# why a check failed: status, stdout and stderr as comments
	echo "# exit status $rc; stdout:"
	sed 's/^/#   /' "$tmp/out" | head -n "${KTAP_SHOW_LINES:-20}"
	echo "# stderr:"
	sed 's/^/#   /' "$tmp/err" | head -n "${KTAP_SHOW_LINES:-20}"
}

show_err() {	# show without stdout, for checks that redirect it
	echo "# exit status $rc; stderr:"
	sed 's/^/#   /' "$tmp/err" | head -n "${KTAP_SHOW_LINES:-20}"
}

# expect_out EXPECTED-STDOUT DESCRIPTION -- CMD...: exit 0, exact stdout
# (EXPECTED-STDOUT goes through printf %b).
expect_out() {
	printf '%b' "$1" >"$tmp/want"
	desc=$2
	shift 3
	run "$@"
	if [ $rc -eq 0 ] && ! sanitized && cmp -s "$tmp/want" "$tmp/out"; then
		result 0 "$desc"
	else
		echo "# expected stdout:"
		sed 's/^/#   /' "$tmp/want"
		show
		result 1 "$desc"
	fi
}

# expect STATUS ERR-SUBSTRING DESCRIPTION -- CMD...
# The command must exit with STATUS, print ERR-SUBSTRING (fixed string,
# may be empty) on stderr and no sanitizer report.
expect() {
	want=$1
	pat=$2
	desc=$3
	shift 4
	run "$@"
	if [ $rc -eq "$want" ] && ! sanitized &&
	   { [ -z "$pat" ] || grep -qF -- "$pat" "$tmp/err"; }; then
		result 0 "$desc"
	else
		echo "# expected status $want and '$pat' on stderr"
		show
		result 1 "$desc"
	fi
}
