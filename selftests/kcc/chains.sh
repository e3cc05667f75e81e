#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# chains.sh - kcc ccf --expand-chains: chain pruning that can be undone.
# Each pruned chain's routines are rebuilt from the source forest through
# the witnesses of kcc_inv_k() and named after the head, outermost first.
# Expected outputs are worked out by hand from Figure 2(b) of the k-CCF
# paper (the 3-CCF trees are listed in cli.sh) and from a plain chain.

D=selftests/kcc/data

# shellcheck source=selftests/lib/ktap.sh
. "$(dirname "$0")/../lib/ktap.sh"
ktap_begin
ktap_tmpdir chains
plan 5

# b 3 - a 3 - { c 2 - r 2, r 1 }; a 2 - { c 1 - r 1, r 1 };
# c 2 - { a 1 - r 1, r 1 }; r 1.  Three chains of one pruned r each.
F2=$D/fig2.trace
W='3\tb\n3\t  a\n2\t    c (+1 pruned: r)\n1\t    r\n2\ta\n1\t  c (+1 pruned: r)\n1\t  r\n2\tc\n1\t  a (+1 pruned: r)\n1\t  r\n1\tr\n'
for from in ksf cct; do
	expect_out "$W" "Figure 2, k=3, from the $from: each head names the r it pruned" -- \
		"$KCC" ccf -k 3 --from $from --expand-chains --format tree "$F2"
done

# --similar 60 first (see cli.sh): b 3 - a 3 - c 2 - r 2 stays one
# chain, the other trees keep their roots only.  Nodes before the
# chain's leaf go, so the witnesses must follow the nodes into the copy.
expect_out '3\tb (+3 pruned: r;c;a)\n2\ta\n2\tc\n1\tr\n' \
	"--similar 60 then --expand-chains: witnesses survive the copy" -- \
	"$KCC" ccf -k 3 --similar 60 --expand-chains --format tree "$F2"

# The chain a - b - c - d: each tree is one chain from its root, and
# with k = 2 the trees of c and d are cut at two callers.
t=$tmp/chain.txt
printf 'call a\ncall b\ncall c\ncall d\nreturn\nreturn\nreturn\nreturn\n' >"$t"
expect_out '1\ta\n1\tb (+1 pruned: a)\n1\tc (+2 pruned: a;b)\n1\td (+3 pruned: a;b;c)\n' \
	"chain a-b-c-d, k=3: heads name 1, 2 and 3 callers" -- \
	"$KCC" ccf -k 3 --expand-chains --format tree "$t"
expect_out '1\ta\n1\tb (+1 pruned: a)\n1\tc (+2 pruned: a;b)\n1\td (+2 pruned: b;c)\n' \
	"chain a-b-c-d, k=2: d's chain stops at b" -- \
	"$KCC" ccf -k 2 --expand-chains --format tree "$t"

ktap_exit
