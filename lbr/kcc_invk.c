// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_invk.c - inv_k: from a CCT or a k-SF to the k-CCF (Lemma 1 and
 * Property 2 of the k-CCF paper).
 *
 * Every source node v stands for c(v) activations whose context ends with
 * the root path of v.  Each such activation activates, for q = 0..k, the
 * q-suffix of that context, so v adds c(v) to every node of the reversed
 * suffix path <v, parent(v), ...> it joins into the k-CCF.  Paths are
 * joined through the destination's (parent, label) index: O(k) per source
 * node, O(kn) in all, and no per-label lists are needed.
 */
#include "kcc_forest.h"

static int kcc_inv_join(const struct kcc_forest *src, u32 v, u32 k,
			struct kcc_forest *dst, u32 *witness)
{
	u32 u = v, d = KCC_ROOT_TOP, q = 0;

	for (;;) {
		u32 before = dst->count;
		u32 p;

		d = kcc_forest_get(dst, d, kcc_forest_node(src, u)->label);
		if (d == KCC_NIL)
			return -ENOSPC;
		kcc_forest_add_ctrs(dst, d, src, v);
		if (witness && dst->count != before)
			witness[d] = v;
		p = kcc_forest_node(src, u)->parent;
		if (q++ == k || kcc_is_root_parent(p))
			return 0;
		u = p;
	}
}

static bool kcc_in_slab_top(const struct kcc_forest *f, u32 v, u32 src_k)
{
	u32 level = 0;
	u32 p = kcc_forest_node(f, v)->parent;

	while (!kcc_is_root_parent(p)) {
		level++;
		p = kcc_forest_node(f, p)->parent;
	}
	return p == KCC_ROOT_SLAB && level < src_k;
}

/**
 * kcc_inv_k() - join the reversed k-suffixes of every source root path
 * @src:	CCT or k'-SF
 * @src_k:	k' the source was built with, KCC_K_INF for a CCT
 * @k:		length (in call edges) of the contexts wanted, <= @src_k
 * @dst:	empty forest with as many metrics as @src
 * @witness:	NULL or one u32 per @dst node: the source node whose path
 *		created it (the chain below a k-CCF node continues along
 *		the ancestors of its witness)
 */
int kcc_inv_k(const struct kcc_forest *src, u32 src_k, u32 k,
	      struct kcc_forest *dst, u32 *witness)
{
	int ret = 0;
	u32 v;

	if (src_k != KCC_K_INF && k > src_k)
		return -EINVAL;

	for (v = 0; v < src->count; v++) {
		const struct kcc_node *n = kcc_forest_node(src, v);

		if (n->parent == KCC_FREE || kcc_forest_ctrs_zero(src, v))
			continue;
		/*
		 * The top region of a slab tree repeats the bottom region
		 * of the tree above with truncated contexts: cleared, as
		 * the note after Property 2 requires.  Only a k'-SF has
		 * slab roots, and their trees are at most 2k' - 1 deep, so
		 * the walk is O(k').
		 */
		if (src_k != KCC_K_INF && kcc_in_slab_top(src, v, src_k))
			continue;
		if (kcc_inv_join(src, v, k, dst, witness))
			ret = -ENOSPC;
	}
	return ret;
}
