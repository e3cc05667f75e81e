#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fig2.sh - kcc ccf on the running example of the k-CCF paper.
#
# data/fig2.trace is the trace of Figure 2(a).  The expected outputs
# data/fig2.k{0,1,2,3}.expected were written by hand from Figure 2(b),
# the table of every activated path with its counter:
#	<r> 1  <a> 2  <b> 3  <c> 2
#	<r,a> 1  <a,b> 3  <a,c> 1  <r,c> 1  <c,a> 1
#	<r,a,b> 1  <r,a,c> 1  <r,c,a> 1  <c,a,b> 2
#	<r,c,a,b> 2
# the k-CCF for k holding the paths of at most k edges, printed in the
# paths format of the CLI contract (count, tab, path in calling order,
# sorted by number of routines, then bytewise).  The longest activated
# path has 3 edges, so every k >= 3 gives the 3-CCF (Property 5).

D=selftests/kcc/data
T=$D/fig2.trace

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir fig2
plan 38

# ccf -k K --from SRC must print exactly the hand-written file.
check_ccf() {	# check_ccf K SRC EXPECTED
	"$KCC" ccf -k "$1" --from "$2" "$T" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$tmp/out" "$3"; then
		result 0 "ccf -k $1 --from $2 matches $(basename "$3")"
	else
		echo "# exit status $rc; stderr:"
		diag "$tmp/err"
		echo "# diff against $3:"
		diff "$3" "$tmp/out" | sed 's/^/# /'
		result 1 "ccf -k $1 --from $2 matches $(basename "$3")"
	fi
}

for src in ksf cct; do
	for k in 0 1 2 3; do
		check_ccf $k $src "$D/fig2.k$k.expected"
	done
	for k in 4 5 8 inf; do
		check_ccf $k $src "$D/fig2.k3.expected"
	done
done

# The tree view: one line per k-CCF node (14 for k = 3), every routine,
# and the hottest tree first: b, with 3 activations.
"$KCC" ccf -k 3 --format tree "$T" >"$tmp/tree" 2>"$tmp/err"
rc=$?
lines=$(grep -c '[^[:space:]]' "$tmp/tree")
missing=""
head -n 1 "$tmp/tree" | grep -qw b && head -n 1 "$tmp/tree" | grep -qw 3 ||
	missing="$missing (b 3 first)"
for r in r a b c; do
	grep -qw "$r" "$tmp/tree" || missing="$missing $r"
done
if [ $rc -ne 0 ] || [ "$lines" -lt 14 ] || [ -n "$missing" ]; then
	echo "# exit status $rc, $lines lines, missing:$missing"
	diag "$tmp/tree"
	diag "$tmp/err"
	result 1 "ccf --format tree: 14 nodes, all four routines, b first"
else
	result 0 "ccf --format tree: 14 nodes, all four routines, b first"
fi

# --stats, every value derived from the trace by hand:
#  events 16, calls 8, returns 8, routines 4 (r, a, b, c);
#  max_depth 4: <r,c,a,b> is the deepest context;
#  cct_nodes 7: the starred paths of Figure 2(b), the distinct contexts
#   r; r,a; r,a,b; r,a,c; r,c; r,c,a; r,c,a,b (levels 0..3);
#  k-SF (Definition 7, slab roots kept apart from the depth-0 tree):
#   k=1 (also used for k=0): boundaries at every level.  Depth-0 tree
#     r{a,c} = 3; slab trees a{b,c} (from r,a and r,c,a), c{a}, b
#     = 3 + 2 + 1; 9 nodes in 4 trees.
#   k=2: boundaries at levels 0 and 2.  The depth-0 tree spans levels
#     0..3, the whole CCT = 7; slab trees b, c, a{b} = 4; 11 nodes in
#     4 trees.
#   k=3: the depth-0 tree is the CCT (7) plus the slab tree b rooted at
#     level 3: 8 nodes in 2 trees.
#   k=inf: the CCT, 7 nodes in 1 tree.
#  kccf_nodes: 4, 9, 13, 14 paths of at most 0, 1, 2, 3 edges; 14 for
#   any larger k.
stat_of() {	# stat_of KEY FILE
	sed -n "s/^$1:[[:space:]]*//p" "$2" | head -n 1
}

check_stats() {	# check_stats K KEY=VALUE...
	k=$1
	shift
	"$KCC" ccf -k "$k" --stats "$T" >"$tmp/stats" 2>"$tmp/err"
	rc=$?
	for kv in "$@"; do
		key=${kv%%=*}
		want=${kv#*=}
		got=$(stat_of "$key" "$tmp/stats")
		if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
			result 0 "ccf -k $k --stats: $key: $want"
		else
			echo "# exit status $rc, got '$got'"
			diag "$tmp/stats"
			diag "$tmp/err"
			result 1 "ccf -k $k --stats: $key: $want"
		fi
	done
}

check_stats 2 events=16 calls=8 returns=8 routines=4 max_depth=4 \
	cct_nodes=7 ksf_nodes=11 kccf_nodes=13 ksf_trees=4
check_stats 0 ksf_nodes=9 kccf_nodes=4
check_stats 1 ksf_nodes=9 kccf_nodes=9 ksf_trees=4
check_stats 3 ksf_nodes=8 kccf_nodes=14 ksf_trees=2
check_stats inf ksf_nodes=7 kccf_nodes=14 ksf_trees=1

# bytes_per_node depends on the build; it must be a positive number.
bpn=$(stat_of bytes_per_node "$tmp/stats")
if echo "$bpn" | grep -Eq '^[0-9]+(\.[0-9]+)?$' &&
   echo "$bpn" | grep -q '[1-9]'; then
	result 0 "ccf --stats: bytes_per_node is a positive number ($bpn)"
else
	echo "# bytes_per_node: '$bpn'"
	result 1 "ccf --stats: bytes_per_node is a positive number"
fi

ktap_exit
