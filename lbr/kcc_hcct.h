/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcc_hcct.h - Hot Calling Context Tree (Ausiello, Demetrescu, Finocchi,
 * Firmani): the subtree of the CCT spanning the contexts that are hot,
 * i.e. activated at least floor(phi * N) times out of N calls, kept online
 * in space proportional to 1/epsilon instead of the CCT's size.
 *
 * Every call event offers the calling context it creates to a Space-Saving
 * summary of m counters.  The tree held in memory (the MCCT) is made of
 * the monitored contexts, their ancestors and the pending activations;
 * when a context loses its counter and nothing below it needs it, it is
 * deleted.  Space-Saving never underestimates and overestimates a counter
 * by at most the smallest counter, itself at most floor(N / m), so with
 * m > 1/epsilon:
 *   - every context with frequency f > N/m is monitored, so one with also
 *     f >= floor(phi N) is reported (f > N/m is not implied by the
 *     threshold: with N = 50 and phi = 1% the threshold is 0);
 *   - a reported context has f > floor(phi N) - N/m, hence
 *     f >= floor((phi - epsilon) N), and its estimate is within N/m <
 *     epsilon N of f.
 */
#ifndef KCC_HCCT_H
#define KCC_HCCT_H

#include "kcc_forest.h"

struct kcc_hcct {
	struct kcc_forest f;	/* the MCCT, ctr[0] = Space-Saving count */
	u32 *err;		/* per node: overestimation bound */
	u32 *nchild;		/* per node: children in the MCCT */
	u32 *heap;		/* min-heap of monitored nodes by count */
	u32 *heap_pos;		/* per node: slot in heap, KCC_NIL if cold */
	u8 *on_stack;		/* per node: pending activation */
	u32 m;			/* Space-Saving counters */
	u32 nmon;		/* counters in use */
	u32 cursor;		/* current context, KCC_NIL at depth 0 */
	u32 depth;
	u32 lost_depth;		/* pending calls dropped because pool full */
	u64 n;			/* stream length: calls offered */
	u64 drops;		/* calls not offered: pool full */
	u64 bad_returns;	/* returns with an empty stack */
};

size_t kcc_hcct_mem_size(u32 capacity, u32 m);
int kcc_hcct_init(struct kcc_hcct *h, void *mem, size_t mem_size,
		  u32 capacity, u32 m);
void kcc_hcct_call(struct kcc_hcct *h, u64 label);
int kcc_hcct_return(struct kcc_hcct *h);
/* floor(phi N) with phi in parts per million. */
u64 kcc_hcct_threshold(const struct kcc_hcct *h, u32 phi_ppm);
/*
 * Write the HCCT into @dst (nmetrics 0): every monitored context whose
 * count reaches kcc_hcct_threshold() and its ancestors.  ctr[0] of a
 * node is its Space-Saving estimate, 0 for ancestors that are no longer
 * monitored.  @scratch has room for 2 * h->f.count u32.  Returns the
 * number of hot contexts, or -ENOSPC when @dst is too small.
 */
int kcc_hcct_export(const struct kcc_hcct *h, u32 phi_ppm,
		    struct kcc_forest *dst, u32 *scratch);

#endif /* KCC_HCCT_H */
