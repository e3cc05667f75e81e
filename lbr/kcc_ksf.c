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
#include "kcc_hcct.h"
#include "kcc_ppp.h"

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
	u32 i;

	if (!f || !k || !stack || !stack_cap)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->f = f;
	s->k = k;
	s->stack = stack;
	s->stack_cap = stack_cap;
	s->slab_div = k == KCC_K_INF ? 0 : 1 + kcc_div_u64(~0ull, k);
	/* Frames keep their memo across pushes (see kcc_ksf_push()). */
	for (i = 0; i < stack_cap; i++) {
		stack[i].t = KCC_NIL;
		stack[i].b = KCC_NIL;
		stack[i].memo_t = KCC_NIL;
	}
	return 0;
}

void kcc_ksf_clear_stack(struct kcc_ksf *s)
{
	s->depth = 0;
	s->slab_pos = 0;
	if (s->ppp)
		kcc_ppp_clear_stack(s->ppp);
}

u32 kcc_ksf_rewind(struct kcc_ksf *s)
{
	u32 n = s->depth < s->stack_cap ? s->depth : s->stack_cap;

	kcc_ksf_clear_stack(s);
	if (s->f->pr || s->ppp)
		return 0;
	/* No frame from the first one whose push lost a location on. */
	return n < s->lost_at ? n : s->lost_at;
}

u32 kcc_ksf_keep(struct kcc_ksf *s, u32 top, const void *label, long stride,
		 u32 n)
{
	u32 d = s->depth, k = s->k, i;
	u32 room = d < top ? top - d : 0;
	const struct kcc_frame *first = &s->stack[d], *fr = first, *end;
	const u8 *l = label;

	if (n > room)
		n = room;
	if (!n)
		return 0;
	/*
	 * Below @top no frame lost a location (kcc_ksf_rewind()), so each
	 * was pushed with a memo hit or a lookup that set its caller's
	 * memo: the label of a frame above the bottom one is the memo label
	 * of the frame below it, which is read with the frames instead of
	 * from the frame's node.  The bottom frame has no frame below.
	 */
	if (!d) {
		if (kcc_forest_node(s->f, fr->t)->label != *(const u64 *)l)
			return 0;
		fr++;
		l += stride;
	}
	for (end = first + n; fr < end; fr++, l += stride)
		if (fr[-1].memo_label != *(const u64 *)l)
			break;
	i = (u32)(fr - first);
	s->depth = d + i;
	if (k != KCC_K_INF)
		s->slab_pos = (s->slab_pos + i) % k;
	return i;
}

/*
 * What a call or a return changes besides the forest and the frames,
 * held in locals: kcc_ksf_replay() keeps them in registers for a whole
 * batch instead of storing and reloading them around every frame write.
 */
struct kcc_ksf_regs {
	u32 depth;
	u32 slab_pos;
	u32 max_depth;
	u32 lost_at;
	u64 lost_calls;
	u64 stack_drops;
};

/*
 * What a push reads from the builder and its forest and never writes,
 * loaded once a batch: lbr/ is built with -fno-strict-aliasing, so each
 * counter a push adds to would otherwise make the next one load them
 * again.  The node block does not move while a builder runs.
 */
struct kcc_ksf_env {
	struct kcc_forest *f;
	u8 *nodes;
	size_t node_stride;
	struct kcc_frame *stack;
	u32 stack_cap;
	u32 k;
	bool inf;		/* k == KCC_K_INF */
	/*
	 * The slab position is not stepped: a boundary is found from the
	 * depth (slab_div), and the position stored from it at the end.
	 */
	bool lazy;
	u64 slab_div;
};

static __always_inline void kcc_ksf_load(const struct kcc_ksf *s,
					 struct kcc_ksf_regs *r,
					 struct kcc_ksf_env *e)
{
	r->depth = s->depth;
	r->slab_pos = s->slab_pos;
	r->max_depth = s->max_depth;
	r->lost_at = s->lost_at;
	r->lost_calls = s->lost_calls;
	r->stack_drops = s->stack_drops;
	e->f = s->f;
	e->nodes = s->f->nodes;
	e->node_stride = s->f->stride;
	e->stack = s->stack;
	e->stack_cap = s->stack_cap;
	e->k = s->k;
	e->inf = s->k == KCC_K_INF;
	e->lazy = false;
	e->slab_div = s->slab_div;
}

static __always_inline void kcc_ksf_store(struct kcc_ksf *s,
					  const struct kcc_ksf_regs *r)
{
	s->depth = r->depth;
	s->slab_pos = r->slab_pos;
	s->max_depth = r->max_depth;
	s->lost_at = r->lost_at;
	s->lost_calls = r->lost_calls;
	s->stack_drops = r->stack_drops;
}

/*
 * Plain: no pruning, no watched contexts, no variance gathered.  The
 * batch entry points test it once and run a loop compiled for it.
 */
static __always_inline bool kcc_ksf_plain(const struct kcc_ksf *s)
{
	return !s->f->pr && !s->ppp && !s->acc;
}

/*
 * Slab boundaries fall at depths that are multiples of k (Figure 7).  A
 * builder of the CCT (k = KCC_K_INF) has none: @e->inf, which the loops
 * over a batch know where they are compiled.  A plain k-SF's loops do
 * not step the position (@e->lazy): the lookups are a few pushes in
 * the many, and a multiply tells a boundary from the depth there.
 */
static __always_inline void kcc_ksf_slab_up(const struct kcc_ksf_env *e,
					    struct kcc_ksf_regs *r)
{
	if (!e->inf && !e->lazy && ++r->slab_pos == e->k)
		r->slab_pos = 0;
}

/*
 * The push at this depth starts a slab tree.  The slab position is the
 * depth's, depth % k, wherever the builder stores them.
 */
static __always_inline bool kcc_ksf_boundary(const struct kcc_ksf_env *e,
					     const struct kcc_ksf_regs *r)
{
	if (e->lazy)
		return (u64)r->depth * e->slab_div <= e->slab_div - 1;
	return r->slab_pos == 0 && !e->inf;
}

static __always_inline void kcc_ksf_slab_down(const struct kcc_ksf_env *e,
					      struct kcc_ksf_regs *r)
{
	if (!e->inf && !e->lazy)
		r->slab_pos = r->slab_pos ? r->slab_pos - 1 : e->k - 1;
}

/*
 * In a pruned forest a remembered child may have been deleted, and its
 * index reused: the memo holds only if the nodes still are the children
 * (label, parent) the lookups would find.  A child deleted and created
 * again at the same index is the same context, so that case is right too.
 */
static bool kcc_ksf_memo_ok(const struct kcc_forest *f,
			    const struct kcc_frame *up, u64 label,
			    bool boundary)
{
	const struct kcc_node *n = kcc_forest_node(f, up->memo_t);
	u32 pb = boundary ? up->t : up->b;

	if (n->label != label || n->parent != (boundary ? KCC_ROOT_SLAB : up->t))
		return false;
	if (up->memo_b == KCC_NIL)
		return pb == KCC_NIL;
	n = kcc_forest_node(f, up->memo_b);
	return pb != KCC_NIL && n->label == label && n->parent == pb;
}

/* Pin the nodes of the pending frames of a pruned forest's builder. */
void kcc_ksf_pin(struct kcc_ksf *s)
{
	u32 d, n = s->depth < s->stack_cap ? s->depth : s->stack_cap;

	if (!s->f->pr)
		return;
	for (d = 0; d < n; d++) {
		kcc_fprune_pin(s->f, s->stack[d].t);
		kcc_fprune_pin(s->f, s->stack[d].b);
	}
}

static void kcc_ksf_acc_empty(struct kcc_ksf_acc *acc)
{
	u32 i;

	acc->n = 0;
	for (i = 0; i < KCC_ACC_SLOTS / 8; i++)
		acc->words[i] = 0;
}

void kcc_ksf_acc_start(struct kcc_ksf_acc *acc, u32 cap)
{
	acc->cap = cap;
	kcc_ksf_acc_empty(acc);
}

void kcc_ksf_acc_fold(const struct kcc_ksf *s)
{
	struct kcc_ksf_acc *acc = s->acc;
	u32 i;

	for (i = 0; i < acc->n; i++) {
		const struct kcc_ksf_acc_ent *a = &acc->ent[i];
		u64 *c = &kcc_forest_ctr(s->f, a->node)[s->var_ctr];

		/*
		 * y^2 - y n = y (y - n); above 2^32, no bound.  A share of
		 * a pool can weigh under 1 (y < n), which is no sample of
		 * fewer calls than it counts: nothing added.
		 */
		if (a->y > a->n)
			*c = kcc_add_sat(*c, a->y >> 32 ? ~0ull :
					 a->y * (a->y - a->n));
	}
	kcc_ksf_acc_empty(acc);
}

/* Gather an activation of weight @w counted at location @node. */
static __always_inline void
kcc_ksf_acc_add(const struct kcc_ksf *s, u32 node, u64 w)
{
	struct kcc_ksf_acc *acc = s->acc;
	struct kcc_ksf_acc_ent *a;
	u32 h;

	for (;;) {
		for (h = (node * 0x9e3779b1u) >> 26; acc->slot[h];
		     h = (h + 1) % KCC_ACC_SLOTS) {
			a = &acc->ent[acc->slot[h] - 1];
			if (a->node == node)
				goto found;
		}
		if (acc->n < acc->cap)
			break;
		/* Full: what is gathered goes in now (a smaller cluster). */
		kcc_ksf_acc_fold(s);
	}
	acc->slot[h] = (u8)(acc->n + 1);
	a = &acc->ent[acc->n++];
	a->node = node;
	a->n = 0;
	a->y = 0;
found:
	a->n++;
	a->y = kcc_add_sat(a->y, w);
}

/* An activation of weight @w counted at locations @t and @b. */
static void kcc_ksf_acc_call(const struct kcc_ksf *s, u32 t, u32 b, u64 w)
{
	if (t != KCC_NIL)
		kcc_ksf_acc_add(s, t, w);
	if (b != KCC_NIL)
		kcc_ksf_acc_add(s, b, w);
}

/* Count @inc activations at location @idx. */
static __always_inline void kcc_ksf_count(const struct kcc_ksf_env *e,
					  u32 idx, u64 inc, bool plain)
{
	if (plain)
		((struct kcc_node *)(e->nodes + idx * e->node_stride))->
			ctr[KCC_CTR_CALLS] += inc;
	else
		kcc_forest_bump(e->f, idx, KCC_CTR_CALLS, inc);
}

/* @plain: kcc_ksf_plain(s), known where the loop was compiled. */
static __always_inline void kcc_ksf_push(const struct kcc_ksf *s,
					 const struct kcc_ksf_env *e,
					 struct kcc_ksf_regs *r, u64 label,
					 u64 inc, bool plain)
{
	struct kcc_forest *f = e->f;
	u32 d = r->depth;	/* |S| - 1 before the push */
	struct kcc_frame *up, *fr;
	bool lost;
	u32 t, b;

	if (!plain && s->ppp)
		kcc_ppp_call_w(s->ppp, label, inc);
	if (unlikely(d >= e->stack_cap)) {
		/* Deeper than we can remember: keep depth for alignment. */
		r->depth++;
		kcc_ksf_slab_up(e, r);
		r->stack_drops += inc;
		return;
	}

	/* The new frame, and at a positive depth its caller's below it. */
	fr = &e->stack[d];
	up = d ? fr - 1 : fr;
	if (likely(d) && up->memo_t != KCC_NIL && up->memo_label == label &&
	    (plain || likely(!f->pr) ||
	     kcc_ksf_memo_ok(f, up, label, kcc_ksf_boundary(e, r)))) {
		/*
		 * The memo is set only by a push that lost nothing: t is a
		 * node, and b is one wherever the frame below had one to
		 * move (below the first slab, but after a loss further
		 * down).  What follows the lookups below, for that case.
		 */
		t = up->memo_t;
		b = up->memo_b;
		/* Usually none lost: KCC_NIL already, nothing to store. */
		if (unlikely(r->lost_at != KCC_NIL) && r->lost_at >= d)
			r->lost_at = KCC_NIL;
		kcc_ksf_count(e, t, inc, plain);
		if (b != KCC_NIL)
			kcc_ksf_count(e, b, inc, plain);
		else if (unlikely(d >= e->k))
			r->lost_calls += inc;
		if (!plain && unlikely(s->acc) && inc)
			kcc_ksf_acc_call(s, t, b, inc - s->acc_exact);
	} else {
		if (d == 0) {
			/* Top region (lines 2-16) at the program root. */
			b = KCC_NIL;
			t = kcc_forest_get(f, KCC_ROOT_TOP, label);
			lost = t == KCC_NIL;
		} else {
			/* t's parent: a slab root's, or t, KCC_NIL if lost. */
			u32 pt = up->t;

			b = up->b;
			if (kcc_ksf_boundary(e, r)) {
				b = pt;
				pt = KCC_ROOT_SLAB;
			}
			if (b == KCC_NIL) {
				/* Top region (lines 2-16) only. */
				t = pt != KCC_NIL ? kcc_forest_get(f, pt, label) :
				    KCC_NIL;
				lost = t == KCC_NIL;
			} else {
				/*
				 * Both regions (lines 2-25): one label, two
				 * parents, its hash terms worked out once.
				 */
				u64 hl = kcc_forest_hash_label(f, label);

				t = pt != KCC_NIL ?
				    kcc_forest_get_hl(f, pt, label, hl) : KCC_NIL;
				b = kcc_forest_get_hl(f, b, label, hl);
				lost = t == KCC_NIL || b == KCC_NIL;
			}
			/* A full pool: do not remember the loss. */
			if (!lost) {
				up->memo_label = label;
				up->memo_t = t;
				up->memo_b = b;
			}
		}
		/*
		 * The lowest pending frame whose push lost a location: none
		 * of the frames below it is missing one (those above it
		 * are, or hang under it), and kcc_ksf_rewind() takes back
		 * none from it on.  A push at or below it leaves the frames
		 * below d pending, and it was not among them.
		 */
		if (r->lost_at >= d)
			r->lost_at = lost ? d : KCC_NIL;
		/*
		 * The activation reaches the k-CCF through t in the first
		 * slab (the depth-0 tree is read whole) and through b below
		 * it (the top region of a slab tree is cleared by
		 * kcc_inv_k()): it is lost exactly when that location is.
		 * t is counted below the first slab too, because the slab
		 * root it belongs to becomes the bottom location of the
		 * next slab.
		 */
		if (t != KCC_NIL)
			kcc_ksf_count(e, t, inc, plain);
		if (b != KCC_NIL)
			kcc_ksf_count(e, b, inc, plain);
		if (unlikely((d < e->k ? t : b) == KCC_NIL))
			r->lost_calls += inc;
		if (!plain && unlikely(s->acc) && inc)
			kcc_ksf_acc_call(s, t, b, inc - s->acc_exact);
	}

	/*
	 * A frame pushed again with the same locations keeps its memo:
	 * the memo maps (t, b, label) to the children, which never move
	 * in a k-SF, and the slab position is the depth's.  An anchored
	 * stack prefix that repeats from sample to sample is then entered
	 * with one compare a frame instead of two lookups.
	 */
	if (fr->t != t || fr->b != b) {
		fr->t = t;
		fr->b = b;
		fr->memo_t = KCC_NIL;
	}
	r->depth = d + 1;
	kcc_ksf_slab_up(e, r);
	if (unlikely(r->depth > r->max_depth))
		r->max_depth = r->depth;
}

static __always_inline void kcc_ksf_push1(struct kcc_ksf *s, u64 label,
					  u64 inc)
{
	struct kcc_ksf_regs r;
	struct kcc_ksf_env e;

	kcc_ksf_load(s, &r, &e);
	kcc_ksf_push(s, &e, &r, label, inc, false);
	kcc_ksf_store(s, &r);
}

void kcc_ksf_add_at(struct kcc_ksf *s, u32 t, u32 b, u64 w)
{
	if (t != KCC_NIL)
		kcc_forest_bump(s->f, t, KCC_CTR_CALLS, w);
	if (b != KCC_NIL)
		kcc_forest_bump(s->f, b, KCC_CTR_CALLS, w);
	if (unlikely(s->acc) && w)
		kcc_ksf_acc_call(s, t, b, w);
}

void kcc_ksf_call(struct kcc_ksf *s, u64 label)
{
	s->calls++;
	kcc_ksf_push1(s, label, 1);
}

void kcc_ksf_call_w(struct kcc_ksf *s, u64 label, u64 weight)
{
	s->calls++;
	kcc_ksf_push1(s, label, weight);
}

void kcc_ksf_enter(struct kcc_ksf *s, u64 label)
{
	kcc_ksf_push1(s, label, 0);
}

/* @plain, @inf: kcc_ksf_plain(s), k == KCC_K_INF, as for the replay. */
static __always_inline void kcc_ksf_enter_loop(struct kcc_ksf *s,
					       const u8 *l, long stride, u32 n,
					       bool plain, bool inf)
{
	struct kcc_ksf_regs r;
	struct kcc_ksf_env e;
	u32 i;

	kcc_ksf_load(s, &r, &e);
	e.inf = inf;
	e.lazy = plain && !inf;
	for (i = 0; i < n; i++, l += stride)
		kcc_ksf_push(s, &e, &r, *(const u64 *)l, 0, plain);
	if (e.lazy)
		r.slab_pos = r.depth % e.k;
	kcc_ksf_store(s, &r);
}

void kcc_ksf_enter_n(struct kcc_ksf *s, const void *label, long stride,
		     u32 n)
{
	if (!kcc_ksf_plain(s))
		kcc_ksf_enter_loop(s, label, stride, n, false,
				   s->k == KCC_K_INF);
	else if (s->k == KCC_K_INF)
		kcc_ksf_enter_loop(s, label, stride, n, true, true);
	else
		kcc_ksf_enter_loop(s, label, stride, n, true, false);
}

int kcc_ksf_return(struct kcc_ksf *s)
{
	if (s->ppp)
		kcc_ppp_return(s->ppp);
	if (unlikely(!s->depth)) {
		s->bad_returns++;
		return -EINVAL;
	}
	s->depth--;
	if (s->k != KCC_K_INF)
		s->slab_pos = s->slab_pos ? s->slab_pos - 1 : s->k - 1;
	s->returns++;
	return 0;
}

/*
 * @plain: kcc_ksf_plain(s); @inf: k == KCC_K_INF.  Where they are
 * constants, the loop is compiled for them: a plain forest's loop of a
 * k-SF does not step the slab position at all (e->lazy), it finds a
 * boundary from the depth where a push misses its memo.
 */
static __always_inline void kcc_ksf_replay_loop(struct kcc_ksf *s,
						const u64 *ev, size_t n,
						bool plain, bool inf)
{
	struct kcc_ksf_regs r;
	struct kcc_ksf_env e;
	u64 bad = 0, calls;
	u32 depth0 = s->depth;
	size_t i;

	kcc_ksf_load(s, &r, &e);
	e.inf = inf;
	e.lazy = plain && !inf;
	for (i = 0; i < n; i++) {
		u64 ev_i = ev[i];

		if (ev_i == KCC_EV_RET) {
			if (!plain && s->ppp)
				kcc_ppp_return(s->ppp);
			if (unlikely(!r.depth)) {
				bad++;
				continue;
			}
			r.depth--;
			kcc_ksf_slab_down(&e, &r);
		} else {
			kcc_ksf_push(s, &e, &r, ev_i, 1, plain);
		}
	}
	if (e.lazy)
		r.slab_pos = r.depth % e.k;
	kcc_ksf_store(s, &r);
	/*
	 * A call adds one to the depth, a return takes one off, a bad
	 * return neither: calls - returns is the depth's change, calls +
	 * returns the n - bad events that were not bad.  Nothing counted
	 * a call.
	 */
	calls = (n - bad + (u64)r.depth - depth0) / 2;
	s->calls += calls;
	s->returns += n - bad - calls;
	s->bad_returns += bad;
}

/**
 * kcc_ksf_replay() - a batch of call and return events
 * @s:		builder state
 * @ev:		@n events: a label is a call, KCC_EV_RET a return
 * @n:		number of events
 *
 * The same as kcc_ksf_call() or kcc_ksf_return() per event, with the
 * depth, slab position and statistics kept in registers for the batch.
 */
void kcc_ksf_replay(struct kcc_ksf *s, const u64 *ev, size_t n)
{
	if (!kcc_ksf_plain(s))
		kcc_ksf_replay_loop(s, ev, n, false, s->k == KCC_K_INF);
	else if (s->k == KCC_K_INF)
		kcc_ksf_replay_loop(s, ev, n, true, true);
	else
		kcc_ksf_replay_loop(s, ev, n, true, false);
}

void kcc_ksf_charge(struct kcc_ksf *s, u32 metric, u64 delta)
{
	struct kcc_frame *fr;

	if (KCC_WARN_ON(metric == 0 || metric > s->f->nmetrics))
		return;
	if (s->ppp)
		kcc_ppp_charge(s->ppp, metric, delta);
	if (!s->depth || s->depth > s->stack_cap) {
		s->lost_charges++;
		return;
	}
	fr = &s->stack[s->depth - 1];
	if (fr->t != KCC_NIL)
		kcc_forest_bump(s->f, fr->t, metric, delta);
	if (fr->b != KCC_NIL)
		kcc_forest_bump(s->f, fr->b, metric, delta);
	/* Lost exactly when the call was: see kcc_ksf_push(). */
	if ((s->depth - 1 < s->k ? fr->t : fr->b) == KCC_NIL)
		s->lost_charges++;
}

void kcc_ksf_charge2(struct kcc_ksf *s, u32 ma, u64 da, u32 mb, u64 db)
{
	u32 d = s->depth, nm = s->f->nmetrics;
	const struct kcc_frame *fr;
	u64 *c;

	/* Pruned, watched or a bad metric: one by one, as the caller asked. */
	if (unlikely(s->f->pr || s->ppp || !ma || ma > nm || !mb || mb > nm)) {
		kcc_ksf_charge(s, ma, da);
		kcc_ksf_charge(s, mb, db);
		return;
	}
	if (!d || d > s->stack_cap) {
		s->lost_charges += 2;
		return;
	}
	fr = &s->stack[d - 1];
	if (fr->t != KCC_NIL) {
		c = kcc_forest_ctr(s->f, fr->t);
		c[ma] += da;
		c[mb] += db;
	}
	if (fr->b != KCC_NIL) {
		c = kcc_forest_ctr(s->f, fr->b);
		c[ma] += da;
		c[mb] += db;
	}
	if ((d - 1 < s->k ? fr->t : fr->b) == KCC_NIL)
		s->lost_charges += 2;
}
