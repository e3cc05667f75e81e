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

/*
 * Space-Saving runs on Metwally, Agrawal and El Abbadi's Stream-Summary:
 * counters with equal counts share a bucket, buckets form a list sorted
 * by count, so the smallest counter is the first bucket and an increment
 * moves a counter to the next bucket or makes one.  O(1) per call, in
 * arrays of m entries: no allocation.
 */
struct kcc_hcct {
	struct kcc_forest f;	/* the MCCT, ctr[0] = Space-Saving count */
	u32 *nchild;		/* per node: children in the MCCT */
	u32 *slot;		/* per node: its counter, KCC_NIL if cold */
	u8 *on_stack;		/* per node: pending activation */
	u32 *mon;		/* per counter: the node it monitors */
	u64 *err;		/* per counter: overestimation bound */
	u32 *snext, *sprev;	/* per counter: siblings in its bucket */
	u32 *sbkt;		/* per counter: its bucket */
	u64 *bcnt;		/* per bucket: the count of its counters */
	u32 *bhead;		/* per bucket: first counter */
	u32 *bnext, *bprev;	/* per bucket: list by count; bnext: free */
	u32 bmin;		/* bucket of the smallest count */
	u32 bfree;		/* unused buckets */
	u32 m;			/* Space-Saving counters */
	u32 nmon;		/* counters in use: mon[0 .. nmon) */
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
 * Write the HCCT into @dst: every monitored context whose count reaches
 * kcc_hcct_threshold() and its ancestors.  ctr[0] of a node is its
 * Space-Saving estimate, 0 for ancestors that are no longer monitored.
 * When @dst has a metric, ctr[1] receives the guaranteed count, estimate
 * minus overestimation bound: the true frequency is at least that, so a
 * context whose guaranteed count reaches the threshold is hot for sure.
 * @scratch has room for 2 * h->f.count u32.  Returns the number of hot
 * contexts, or -ENOSPC when @dst is too small.
 */
int kcc_hcct_export(const struct kcc_hcct *h, u32 phi_ppm,
		    struct kcc_forest *dst, u32 *scratch);

#endif /* KCC_HCCT_H */
