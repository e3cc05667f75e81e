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
 * moves a counter to the next bucket or makes one.  O(1) per unit
 * increment, in arrays of m entries: no allocation.  An increment by w
 * walks past the buckets between c and c + w.  The items are node
 * indices of a forest; @slot maps them to their counter.
 */
struct kcc_ss {
	u32 *slot;		/* per item: its counter, KCC_NIL if none */
	u32 *mon;		/* per counter: the item it monitors */
	u64 *err;		/* per counter: overestimation bound */
	u32 *snext, *sprev;	/* per counter: siblings in its bucket */
	u32 *sbkt;		/* per counter: its bucket */
	u64 *bcnt;		/* per bucket: the count of its counters */
	u32 *bhead;		/* per bucket: first counter */
	u32 *bnext, *bprev;	/* per bucket: list by count; bnext: free */
	u32 bmin;		/* bucket of the smallest count */
	u32 bfree;		/* unused buckets */
	u32 m;			/* counters */
	u32 nmon;		/* counters in use: mon[0 .. nmon) */
};

size_t kcc_ss_mem_size(u32 m);
/* @mem: 8-byte aligned, kcc_ss_mem_size(m) bytes; @slot: caller's. */
void kcc_ss_init(struct kcc_ss *ss, void *mem, u32 m, u32 *slot);

static inline u64 kcc_ss_count(const struct kcc_ss *ss, u32 s)
{
	return ss->bcnt[ss->sbkt[s]];
}

/*
 * Item @v occurs with weight @w >= 1: its counter grows, a free counter
 * starts at @w, or the smallest counter, of count c, is taken over with
 * count c + w and error c.  Returns the item that lost its counter, or
 * KCC_NIL.
 */
u32 kcc_ss_offer(struct kcc_ss *ss, u32 v, u64 w);
/*
 * Give @v a free counter of count @c and error @err, @c at least every
 * count already there: builds a summary from counts sorted up.
 */
void kcc_ss_push_max(struct kcc_ss *ss, u32 v, u64 c, u64 err);

/* The HCCT: an MCCT forest whose ctr[0] mirrors the Space-Saving counts. */
struct kcc_hcct {
	struct kcc_forest f;	/* the MCCT, ctr[0] = Space-Saving count */
	struct kcc_ss ss;	/* its counters; ss.slot per node */
	u32 *nchild;		/* per node: children in the MCCT */
	u8 *on_stack;		/* per node: pending activation */
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

/*
 * Hot contexts kept in a k-SF or CCT that cannot grow (kcc.ko's task
 * forests): the forest's nodes are the items of a Space-Saving summary
 * of m = capacity / 4 counters over one counter @ctr of the nodes, the
 * MCCT rule decides which nodes stay.  Once kcc_fprune_start() has run,
 * every change of a counter goes through kcc_forest_bump(); an increment
 * of @ctr is an occurrence of its node, of weight the increment.  A node
 * whose counter is taken over is deleted, with its ancestors, when
 * nothing needs it: no counter, no child, not pinned.  Pinned are the
 * nodes touched since the last kcc_fprune_begin() and those pinned
 * explicitly (kcc_fprune_pin(): a builder's pending frames).  A node
 * created in a full pool takes over the counter of an unpinned leaf of
 * the smallest count, which is deleted: a Space-Saving takeover of
 * weight 0 until the new node counts.
 *
 * The counters a node exports are exact for its current life: what was
 * counted there since it was (re)created.  With N the stream length
 * (kcc_fprune.n: all increments of @ctr the forest ever saw), a node's
 * true count exceeds its exported one by at most N / m, and a context
 * whose true count exceeds N / m is present: the guarantee of the HCCT
 * with epsilon = 1 / m.
 */
struct kcc_fprune {
	struct kcc_ss ss;
	/* A full pool: free a cold leaf, return its counter (kcc_forest_insert()). */
	u32 (*reclaim)(struct kcc_forest *f);
	u32 *nchild;		/* per node: children */
	u32 *pin;		/* per node: pin_seq when pinned */
	u32 *scratch;		/* 2 per node: kcc_forest_topo() and start */
	u32 pin_seq;
	u32 ctr;		/* the counter summarised */
	u64 n;			/* stream length */
	u64 evicted;		/* nodes deleted */
};

size_t kcc_fprune_mem_size(u32 capacity);
/*
 * Switch @f to pruning: the m counters go to the nodes with the largest
 * counts of @ctr, exact (error 0); the others keep their counts as
 * unmonitored nodes, none above the smallest counter.  @f must not grow
 * afterwards.  -EINVAL for a block too small or a forest with deletions.
 */
int kcc_fprune_start(struct kcc_fprune *p, void *mem, size_t mem_size,
		     struct kcc_forest *f, u32 ctr);
/*
 * Delete the nodes that start left without a counter, leaves first, but
 * the pinned ones: their counts are at most the smallest counter, and
 * the room is what the summary needs.  O(count), once, after the
 * builder's frames are pinned (kcc_fprune_begin(), kcc_ksf_pin()).
 */
void kcc_fprune_sweep(struct kcc_forest *f);
/* A new operation: what it touches is pinned until the next one. */
static inline void kcc_fprune_begin(struct kcc_forest *f)
{
	if (f->pr && !++f->pr->pin_seq)
		f->pr->pin_seq = 1;
}

static inline void kcc_fprune_pin(struct kcc_forest *f, u32 idx)
{
	if (idx != KCC_NIL)
		f->pr->pin[idx] = f->pr->pin_seq;
}

/* 1e6 / m: epsilon in parts per million, 0 when @f is not pruned. */
u32 kcc_fprune_eps_ppm(const struct kcc_forest *f);

/*
 * The live nodes of @f parents first, as the readers of a forest expect:
 * @order receives their indices and @map (f->count entries) each node's
 * position, KCC_NIL for a free one.  Without deletions that is the
 * identity.  Returns the number of live nodes.
 */
u32 kcc_forest_topo(const struct kcc_forest *f, u32 *order, u32 *map);

#endif /* KCC_HCCT_H */
