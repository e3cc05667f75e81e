// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_ksf.c - online k-slab forest construction (Figure 7 of the k-CCF
 * paper), constant time per call and per return.
 *
 * The context of depth d (d pending activations) keeps two locations: t in
 * the top region of the tree that starts at the last slab boundary (the
 * deepest depth that is a multiple of k, not above d - 1) and b in the
 * bottom region of the tree that starts one slab higher.  A call at a slab
 * boundary demotes t to b and restarts t at a root.  The shadow stack
 * keeps <t, b> per pending activation, so a return is a pop.
 */
#include "kcc_forest.h"

/**
 * kcc_ksf_init() - start a k-SF (or, with @k = KCC_K_INF, a CCT) in @f
 * @s:		builder state
 * @f:		forest the slabs are stored in; not reset
 * @k:		slab height, >= 1 or KCC_K_INF
 * @stack:	shadow stack of @stack_cap frames
 * @stack_cap:	deepest depth recorded
 *
 * Return: 0 or -EINVAL.
 */
int kcc_ksf_init(struct kcc_ksf *s, struct kcc_forest *f, u32 k,
		 struct kcc_frame *stack, u32 stack_cap)
{
	if (!f || !k || !stack || !stack_cap)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->f = f;
	s->k = k;
	s->stack = stack;
	s->stack_cap = stack_cap;
	return 0;
}

void kcc_ksf_clear_stack(struct kcc_ksf *s)
{
	s->depth = 0;
}

static void kcc_ksf_push(struct kcc_ksf *s, u64 label, u64 inc)
{
	struct kcc_forest *f = s->f;
	u32 d = s->depth;	/* |S| - 1 before the push */
	u32 t, b;

	if (unlikely(d >= s->stack_cap)) {
		/* Deeper than we can remember: keep depth for alignment. */
		s->depth++;
		s->stack_drops += inc;
		return;
	}

	if (d == 0) {
		t = KCC_NIL;
		b = KCC_NIL;
	} else {
		t = s->stack[d - 1].t;
		b = s->stack[d - 1].b;
	}

	/* Top region (lines 2-16). */
	if (d == 0) {
		b = KCC_NIL;
		t = kcc_forest_get(f, KCC_ROOT_TOP, label);
	} else if (s->k != KCC_K_INF && d % s->k == 0) {
		b = t;
		t = kcc_forest_get(f, KCC_ROOT_SLAB, label);
	} else if (t != KCC_NIL) {
		t = kcc_forest_get(f, t, label);
	}
	if (likely(t != KCC_NIL))
		kcc_forest_ctr(f, t)[KCC_CTR_CALLS] += inc;
	else
		s->lost_calls += inc;

	/* Bottom region (lines 17-25). */
	if (b != KCC_NIL) {
		b = kcc_forest_get(f, b, label);
		if (likely(b != KCC_NIL))
			kcc_forest_ctr(f, b)[KCC_CTR_CALLS] += inc;
	}

	s->stack[d].t = t;
	s->stack[d].b = b;
	s->depth = d + 1;
	if (s->depth > s->max_depth)
		s->max_depth = s->depth;
}

void kcc_ksf_call(struct kcc_ksf *s, u64 label)
{
	s->calls++;
	kcc_ksf_push(s, label, 1);
}

void kcc_ksf_call_w(struct kcc_ksf *s, u64 label, u64 weight)
{
	s->calls++;
	kcc_ksf_push(s, label, weight);
}

void kcc_ksf_enter(struct kcc_ksf *s, u64 label)
{
	kcc_ksf_push(s, label, 0);
}

int kcc_ksf_return(struct kcc_ksf *s)
{
	if (unlikely(!s->depth)) {
		s->bad_returns++;
		return -EINVAL;
	}
	s->depth--;
	s->returns++;
	return 0;
}

void kcc_ksf_charge(struct kcc_ksf *s, u32 metric, u64 delta)
{
	struct kcc_frame *fr;

	if (KCC_WARN_ON(metric == 0 || metric > s->f->nmetrics))
		return;
	if (!s->depth || s->depth > s->stack_cap) {
		s->lost_charges++;
		return;
	}
	fr = &s->stack[s->depth - 1];
	if (fr->t == KCC_NIL)
		s->lost_charges++;
	else
		kcc_forest_ctr(s->f, fr->t)[metric] += delta;
	if (fr->b != KCC_NIL)
		kcc_forest_ctr(s->f, fr->b)[metric] += delta;
}
