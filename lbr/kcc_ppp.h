/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kcc_ppp.h - watched k-contexts counted in a plain array: preferential
 * path profiling (Vaswani, Nori, Chilimbi, "Preferential Path Profiling:
 * Compactly Numbering Interesting Paths", POPL 2007) applied to calling
 * contexts.
 *
 * A watched set I holds k-contexts, each a path of 1 to KCC_PPP_MAX_K + 1
 * routines, outermost first.  A context c = r_0 ... r_m is matched by an
 * activation whose call stack ends with c, so one activation matches one
 * suffix of each length: the counts are those of the k-CCF (kcc ccf).
 *
 * The call-edge graph that spells I is unrolled by position, position 0
 * being the callee and position j its j-th caller, so recursion becomes a
 * DAG:  s -> (m, r_0) -> (m - 1, r_1) -> ... -> (0, r_m) -> t.
 * The edge out of s names both the outermost routine and the length, so
 * contexts of different lengths are different paths.  ComputePPPIncrements
 * (Figure 10 of the paper) gives every edge an increment such that the
 * contexts of I sum to distinct numbers in [0, range), range = delta * |I|
 * with delta >= 1 as small as that construction gives.
 *
 * At run time a shadow stack keeps, per pending activation, the dense id
 * of its routine and of the edge from its caller (both found once, at the
 * call, and memoised per caller as in the k-SF builder).  The numbers of
 * all suffixes of the current stack are then partial sums of at most k + 2
 * table entries, found innermost first and stopped at the first edge that
 * is not in the DAG.  A context outside I may still sum into the range
 * (an alias, Section 2.3 of the paper): every slot keeps the routines of
 * its context and a number is counted only when they match the stack, so
 * no context outside I is ever counted as inside.  The check stands in
 * for the paper's second, Ball-Larus, numbering: the unrolled DAG can have
 * more than 2^64 paths, the routine ids cannot overflow.
 *
 * Like the rest of lbr/, nothing here allocates: kcc_ppp_mem_size() tells
 * how much memory a watched set needs and kcc_ppp_build() works in it.
 */
#ifndef KCC_PPP_H
#define KCC_PPP_H

#include "kcc_shim.h"

#define KCC_PPP_MAX_K		8	/* call edges per watched context */
#define KCC_PPP_MAX_CTX		65536	/* contexts in a watched set */
#define KCC_PPP_MAX_RANGE	4194304	/* numbers (counters) */
#define KCC_PPP_NONE		((s32)0x80000000)	/* edge not in the DAG */
#define KCC_PPP_MAX_METRICS	4	/* charged counters beside the calls */

/* Why kcc_ppp_build() refused a watched set; err_ctx names the context. */
enum kcc_ppp_err {
	KCC_PPP_OK = 0,
	KCC_PPP_E_EMPTY,	/* no context, or a context of no routine */
	KCC_PPP_E_TOO_LONG,	/* more than KCC_PPP_MAX_K call edges */
	KCC_PPP_E_TOO_MANY,	/* more than KCC_PPP_MAX_CTX contexts */
	KCC_PPP_E_DUP,		/* a context given twice */
	KCC_PPP_E_RANGE,	/* numbers do not fit max_range */
	KCC_PPP_E_MEM,		/* the memory block is too small */
};

struct kcc_ppp {
	u32 nctx;		/* |I| */
	u32 range;		/* numbers used: delta = range / nctx */
	u32 kmax;		/* longest context, in call edges */
	u32 nroutines;		/* distinct routines of I */
	u32 nedges;		/* distinct (caller, callee) pairs of I */
	u32 rmask;		/* routine hash table: rmask + 1 slots */
	u32 emask;		/* edge hash table: emask + 1 slots */
	enum kcc_ppp_err err;
	u32 err_ctx;		/* index of the context err is about */
	u64 *label;		/* [nroutines] routine labels */
	u32 *rhash;		/* [rmask + 1] routine ids, KCC_NIL empty */
	u32 *ehash;		/* [emask + 1] edge ids, KCC_NIL empty */
	u32 *ecaller;		/* [nedges] caller routine id */
	u32 *ecallee;		/* [nedges] callee routine id */
	s32 *ew;		/* [nedges * KCC_PPP_MAX_K] callee position */
	s32 *w_outer;		/* [nroutines * (KCC_PPP_MAX_K + 1)]: */
				/* (m, r) -> t, r outermost at position m */
	s32 *w_callee;		/* [nroutines] s -> (0, r) */
	u32 *ctx_off;		/* [nctx] first routine of context i in ctx_rid */
	u32 *ctx_len;		/* [nctx] routines of context i */
	u32 *ctx_rid;		/* routine ids of the contexts, outermost first */
	u32 *ctx_num;		/* [nctx] the number of context i */
	u32 *ctx_inner;		/* [nctx] i less its outermost routine, */
				/* when that is in I; else KCC_NIL */
	u32 *slot;		/* [range] context numbered so, or KCC_NIL */
	u32 *slot_tag;		/* [range] its length and outermost routine */
	/* Optional: kcc_ppp_set_ranges(); call labels are then addresses. */
	const struct kcc_ppp_range *ranges;
	u32 nranges;
};

/*
 * Where the labels of I are routine ids and the calls replayed carry
 * addresses inside routines (kcc.ko's labels, kcc_stitch.h): the address
 * ranges of the routines, sorted by start, disjoint, each [start, end)
 * with the label the contexts of I use for its routine.  A routine may
 * have several ranges (a name defined in two objects).
 */
struct kcc_ppp_range {
	u64 start;
	u64 end;
	u64 label;
};

/*
 * Call labels are addresses from now on, mapped to routines through
 * @ranges (kept by reference, not copied).  0, or -EINVAL when the
 * ranges are empty, not sorted, overlap or have start >= end.
 */
int kcc_ppp_set_ranges(struct kcc_ppp *p, const struct kcc_ppp_range *ranges,
		       u32 nranges);
/* The label of the routine holding @addr, or false when none does. */
bool kcc_ppp_resolve(const struct kcc_ppp *p, u64 addr, u64 *label);

/*
 * Memory for a watched set of @nctx contexts holding @nlabels routine
 * labels in all, with at most @max_range numbers; 0 when the sizes are
 * out of bounds.  The block holds the tables and the scratch of the
 * construction.
 */
size_t kcc_ppp_mem_size(u32 nctx, u32 nlabels, u32 max_range);
/*
 * Number the contexts of I: context i is the @lens[i] labels starting at
 * @labels[sum of lens[0..i-1]], outermost first.  Returns 0, or -EINVAL
 * (empty, too long, duplicate), -E2BIG (too many contexts, numbers over
 * @max_range) or -ENOMEM (block too small), with p->err and p->err_ctx
 * saying which context.  Deterministic: the same I gives the same numbers.
 */
int kcc_ppp_build(struct kcc_ppp *p, void *mem, size_t mem_size,
		  const u64 *labels, const u32 *lens, u32 nctx, u32 max_range);
const char *kcc_ppp_strerror(enum kcc_ppp_err err);

/* Routine id of @label, KCC_NIL when no watched context names it. */
u32 kcc_ppp_routine(const struct kcc_ppp *p, u64 label);
/* Edge id of (@caller, @callee) routine ids, KCC_NIL when not in I. */
u32 kcc_ppp_edge(const struct kcc_ppp *p, u32 caller, u32 callee);

/*
 * Counting while calls and returns are replayed.  counts has p->range
 * entries; the shadow stack is caller memory as for the k-SF builder.
 */
struct kcc_ppp_frame {
	u32 rid;		/* routine id, KCC_NIL: not watched */
	u32 eid;		/* edge from the caller, KCC_NIL: none */
	u32 memo;		/* memo_* hold this activation's last callee */
	u32 memo_rid;
	u32 memo_eid;
	/*
	 * Labels in [memo_lo, memo_hi) give memo_rid: one label without
	 * ranges, else the callee's whole range (or the gap between two),
	 * so any address inside the routine hits.
	 */
	u64 memo_lo;
	u64 memo_hi;
};

struct kcc_ppp_run {
	const struct kcc_ppp *p;
	u64 *counts;		/* [p->range] */
	struct kcc_ppp_frame *stack;
	u32 stack_cap;
	u32 depth;
	u64 calls;		/* call events */
	u64 matched;		/* watched contexts counted (a call counts */
				/* once per watched suffix) */
	u64 unwatched;		/* calls none of whose suffixes is watched */
	u64 aliased;		/* numbers in range refused by the check */
	u64 stack_drops;	/* calls deeper than stack_cap */
	u64 bad_returns;	/* returns with an empty stack */
	/*
	 * Weighted calls (kcc_ppp_call_w()) and charged metrics
	 * (kcc_ppp_charge()), for kcc.ko's per-task arrays.  Residual:
	 * what no watched context took, weight or delta summed.
	 */
	u64 weight;		/* call weights summed */
	u64 resid_calls;	/* weights of calls with no watched suffix */
	u64 *metrics;		/* [p->range * nmetrics] or NULL */
	u32 nmetrics;		/* <= KCC_PPP_MAX_METRICS */
	u64 charged[KCC_PPP_MAX_METRICS];	/* deltas charged, by metric */
	u64 resid[KCC_PPP_MAX_METRICS];		/* of which to no watched context */
};

int kcc_ppp_run_init(struct kcc_ppp_run *r, const struct kcc_ppp *p,
		     u64 *counts, struct kcc_ppp_frame *stack, u32 stack_cap);
void kcc_ppp_call(struct kcc_ppp_run *r, u64 label);
int kcc_ppp_return(struct kcc_ppp_run *r);
/*
 * A call of weight @w: counts[number] += w for every watched suffix; a
 * weight of 0 pushes the frame without counting anything (a sampled
 * stack anchored before a burst, kcc_ksf_enter()).  kcc_ppp_call() is
 * kcc_ppp_call_w(r, label, 1).
 */
void kcc_ppp_call_w(struct kcc_ppp_run *r, u64 label, u64 w);
/*
 * Metrics beside the calls: @metrics has p->range * @nmetrics entries,
 * zeroed here; metric m (1-based, as kcc_ksf_charge()) of number n is
 * metrics[n * nmetrics + m - 1].  0 or -EINVAL.
 */
int kcc_ppp_run_metrics(struct kcc_ppp_run *r, u64 *metrics, u32 nmetrics);
/* Add @delta to metric @metric of every watched suffix of the stack. */
void kcc_ppp_charge(struct kcc_ppp_run *r, u32 metric, u64 delta);
/*
 * The counts by context of I, in the order kcc_ppp_build() was given
 * them: for context i, counts then the metrics, 1 + r->nmetrics u64 at
 * @out + i * (1 + r->nmetrics) (KCC_REC_WATCH's layout).
 */
void kcc_ppp_export(const struct kcc_ppp_run *r, u64 *out);
/* Forget the pending activations (kcc_ksf_clear_stack()). */
static inline void kcc_ppp_clear_stack(struct kcc_ppp_run *r)
{
	r->depth = 0;
}

/*
 * The number of the suffix of @len routines of the current stack when it
 * is a watched context, else KCC_NIL (the counting uses the same walk).
 */
u32 kcc_ppp_lookup(struct kcc_ppp_run *r, u32 len);

#endif /* KCC_PPP_H */
