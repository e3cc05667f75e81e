// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_prune.c - the two pruned views of a k-CCF from Section 6 of the
 * k-CCF paper: x%-similar trees and chain pruning.
 *
 * Both are linear passes that rely on parents being stored before their
 * children: a forward pass sees a parent's result before its children, a
 * backward pass sees every child before its parent.
 */
#include "kcc_forest.h"

/* c * 10000 >= x_bp * r, without overflowing for counters below 2^64. */
static bool kcc_at_least_bp(u64 c, u64 r, u32 x_bp)
{
	while (c > (~0ull / 10000) || r > (~0ull / 10000)) {
		c >>= 1;
		r >>= 1;
	}
	return c * 10000 >= r * x_bp;
}

u32 kcc_prune_similar(const struct kcc_forest *f, u32 ctr, u32 x_bp,
		      u8 *keep, u32 *root)
{
	u32 i, kept = 0;

	if (KCC_WARN_ON(ctr > f->nmetrics))
		return 0;
	for (i = 0; i < f->count; i++) {
		u32 p = kcc_forest_node(f, i)->parent;
		bool ok;

		if (p == KCC_FREE) {
			keep[i] = 0;
			continue;
		}
		if (kcc_is_root_parent(p)) {
			root[i] = i;
			ok = true;
		} else {
			root[i] = root[p];
			ok = keep[p] &&
			     kcc_at_least_bp(kcc_forest_ctr(f, i)[ctr],
					     kcc_forest_ctr(f, root[i])[ctr],
					     x_bp);
		}
		keep[i] = ok;
		kept += ok;
	}
	return kept;
}

#define KCC_CHAIN	2	/* subtree of the node is a chain to a leaf */
#define KCC_KEEP	1

u32 kcc_prune_chains(const struct kcc_forest *f, u8 *keep, u32 *chain_len,
		     u32 *chain_leaf, u32 *scratch)
{
	u32 *len = scratch;		/* children, then chain length */
	u32 *down = scratch + f->count;	/* only child, then chain leaf */
	u32 i, kept = 0;

	for (i = 0; i < f->count; i++)
		len[i] = 0;
	for (i = 0; i < f->count; i++) {
		u32 p = kcc_forest_node(f, i)->parent;

		if (p != KCC_FREE && !kcc_is_root_parent(p)) {
			len[p]++;
			down[p] = i;
		}
	}

	for (i = f->count; i-- > 0;) {
		keep[i] = 0;
		if (kcc_forest_node(f, i)->parent == KCC_FREE)
			continue;
		if (len[i] == 0) {
			keep[i] = KCC_CHAIN;
			down[i] = i;
		} else if (len[i] == 1 && (keep[down[i]] & KCC_CHAIN)) {
			u32 c = down[i];

			keep[i] = KCC_CHAIN;
			len[i] = len[c] + 1;
			down[i] = down[c];
		} else {
			len[i] = 0;
			down[i] = KCC_NIL;
		}
	}

	for (i = 0; i < f->count; i++) {
		u32 p = kcc_forest_node(f, i)->parent;
		bool head = (keep[i] & KCC_CHAIN) &&
			    (kcc_is_root_parent(p) || !(keep[p] & KCC_CHAIN));

		chain_len[i] = 0;
		if (chain_leaf)
			chain_leaf[i] = KCC_NIL;
		if (p == KCC_FREE)
			continue;
		if (!(keep[i] & KCC_CHAIN) || head) {
			keep[i] |= KCC_KEEP;
			kept++;
		}
		if (head) {
			chain_len[i] = len[i];
			if (chain_leaf && len[i])
				chain_leaf[i] = down[i];
		}
	}
	for (i = 0; i < f->count; i++)
		keep[i] &= KCC_KEEP;
	return kept;
}
