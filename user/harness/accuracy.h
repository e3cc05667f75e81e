/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accuracy.h - how close an approximate k-CCF is to the exact one: the
 * degree of overlap and the hot-edge coverage of Zhuang et al., "Accurate,
 * Efficient, and Adaptive Calling Context Profiling" (PLDI'06, Section 3),
 * carried from CCT edges over to k-CCF nodes.
 *
 * Items.  A CCT edge stands for the activations of exactly one calling
 * context, so the edges' weights add up to all calls.  In a k-CCF a node
 * counts the activations whose context ends with its path, so a node's
 * count includes its children's.  Taken by default, the items are the
 * k-contexts themselves: node u weighs
 *
 *	w(u) = c(u) - sum of c(v) over the children v of u	(level < k)
 *	w(u) = c(u)						(level = k)
 *
 * which is the number of activations whose k-context (the last k call
 * edges, or the whole context when shorter) is u's path; these weights
 * partition all calls, as the CCT's do, and for k = infinity they are the
 * CCT's edge weights.  ACC_INCLUSIVE takes every node with w(u) = c(u)
 * instead, which also rewards the easy short contexts.
 *
 * Two nodes are the same item when their label paths from the root are
 * equal (Definition 1 of the paper), so both forests must use the same
 * labels: the symtab ids of one trace.
 *
 *	overlap  = sum over common items of min(w1(u) / W1, w2(u) / W2)
 *	hot(F,T) = { u in F : w(u) >= T * max w in F }
 *	cover(T) = |hot(approx, T) & hot(exact, T)| / |hot(exact, T)|
 *
 * Overlap and coverage compare shares: a profile that counts every call
 * three times scores 1 on both.  Two figures on the weights themselves
 * see what they cannot:
 *
 *	abs_err     = sum over items of |w1(u) - w2(u)| / W2
 *	calls_ratio = W1 / W2
 *
 * an item missing from one forest weighing 0 there.  Both are 0 and 1
 * for a perfect profile; every call counted three times gives 2 and 3.
 */
#ifndef KCC_ACCURACY_H
#define KCC_ACCURACY_H

#include <stdint.h>

#include "kcc_forest.h"

#define ACC_MAX_T	4

#define ACC_INCLUSIVE	(1u << 0)	/* items: all nodes, w = c */

struct acc_opts {
	uint32_t k;		/* call edges of the forests (KCC_K_INF: CCTs) */
	uint32_t flags;		/* ACC_* */
	uint32_t approx_ctr;	/* counter of @approx to use: KCC_CTR_CALLS,
				 * or KCC_CTR_SAMPLES for stack sampling */
	uint32_t nr_t;		/* thresholds in t[] */
	double t[ACC_MAX_T];	/* hot-edge thresholds, 0 < T <= 1 */
};

struct accuracy {
	double overlap;			/* 0..1 */
	double cover[ACC_MAX_T];	/* 0..1, per threshold */
	uint32_t hot_exact[ACC_MAX_T];	/* hot items of the exact forest */
	uint32_t hot_found[ACC_MAX_T];	/* of those, hot in the approximate */
	uint32_t items_exact;		/* items with a non-zero weight */
	uint32_t items_approx;
	uint32_t items_common;
	uint64_t weight_exact;		/* W2: calls of the exact forest */
	uint64_t weight_approx;		/* W1 */
	uint64_t abs_diff;		/* sum of |w1(u) - w2(u)| */
	double abs_err;			/* abs_diff / W2 */
	double calls_ratio;		/* W1 / W2 */
};

/*
 * Compare @approx (counter o->approx_ctr) with @exact (KCC_CTR_CALLS).  Both forests
 * must store every node after its parent (true of anything built without
 * kcc_forest_del(), such as inv_k's output).  Returns 0, -EINVAL for bad
 * options or an exact forest of weight 0, -ENOMEM.  An empty approximate
 * forest is no error: it scores 0 everywhere.
 */
int accuracy__compare(const struct kcc_forest *exact,
		      const struct kcc_forest *approx,
		      const struct acc_opts *o, struct accuracy *acc);

/*
 * How often the 95% intervals of @approx's calls (counter KCC_CTR_CALLS,
 * variance counter @var_ctr, both as items of accuracy.h's top comment)
 * hold the exact count: of the exact forest's items (non-zero weight),
 * the number whose |w1 - w2| <= 1.96 sqrt(var1), and the share of the
 * calls they carry.  A valid interval covers about 95% of them.
 */
struct acc_ci {
	uint32_t items;		/* exact items */
	uint32_t covered;	/* of those, inside the approximate interval */
	double calls_covered;	/* their share of the exact calls, 0..1 */
};

int accuracy__ci95(const struct kcc_forest *exact,
		   const struct kcc_forest *approx, uint32_t k,
		   uint32_t var_ctr, struct acc_ci *ci);

/*
 * Bit-for-bit comparison: the number of label paths whose count differs
 * between @exact (KCC_CTR_CALLS) and @approx (counter @approx_ctr), a
 * path missing on one side counting as 0 there.  Same node order rule.
 * Returns the count, or -ENOMEM.
 */
int64_t accuracy__diff(const struct kcc_forest *exact,
		       const struct kcc_forest *approx, uint32_t approx_ctr);

#endif /* KCC_ACCURACY_H */
