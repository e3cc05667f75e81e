// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_hcct.c - Hot Calling Context Tree from a Space-Saving summary.
 *
 * The stream items are calling contexts, i.e. CCT nodes: each call offers
 * the node it moves to.  Space-Saving keeps m counters; an item without a
 * counter takes the smallest one over, inheriting its value plus one, and
 * remembers that value as its overestimation bound.  The counters sit in
 * a Stream-Summary (see kcc_hcct.h), so each call costs O(1) whatever m.  The MCCT keeps only
 * what the summary and the running program need: monitored nodes, their
 * ancestors and the pending activations.  A node that needs none of these
 * reasons is deleted at once, so the tree stays O(m + depth) large.
 */
#include "kcc_hcct.h"

static size_t kcc_hcct_bytes(u32 capacity, u32 m)
{
	/*
	 * bcnt per bucket and err per counter first (the forest block
	 * keeps 8-byte alignment); nchild, slot per node; mon, snext,
	 * sprev, sbkt per counter; bhead, bnext, bprev per bucket;
	 * on_stack.  At most m distinct counts exist at once, so m
	 * buckets do.
	 */
	return 2 * (size_t)m * sizeof(u64) + 2 * (size_t)capacity * sizeof(u32) +
	       7 * (size_t)m * sizeof(u32) + capacity;
}

size_t kcc_hcct_mem_size(u32 capacity, u32 m)
{
	return kcc_forest_mem_size(capacity, 0) + kcc_hcct_bytes(capacity, m);
}

int kcc_hcct_init(struct kcc_hcct *h, void *mem, size_t mem_size,
		  u32 capacity, u32 m)
{
	size_t fsz = kcc_forest_mem_size(capacity, 0);
	u8 *p = (u8 *)mem + fsz;
	u32 i;
	int ret;

	if (!m || m >= KCC_NIL || mem_size < kcc_hcct_mem_size(capacity, m))
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	ret = kcc_forest_init(&h->f, mem, fsz, capacity, 0);
	if (ret)
		return ret;
	h->bcnt = (u64 *)p;
	h->err = h->bcnt + m;
	h->nchild = (u32 *)(h->err + m);
	h->slot = h->nchild + capacity;
	h->mon = h->slot + capacity;
	h->snext = h->mon + m;
	h->sprev = h->snext + m;
	h->sbkt = h->sprev + m;
	h->bhead = h->sbkt + m;
	h->bnext = h->bhead + m;
	h->bprev = h->bnext + m;
	h->on_stack = (u8 *)(h->bprev + m);
	h->m = m;
	h->cursor = KCC_NIL;
	h->bmin = KCC_NIL;
	for (i = 0; i < m; i++)
		h->bnext[i] = i + 1 < m ? i + 1 : KCC_NIL;
	h->bfree = 0;
	return 0;
}

static inline u64 kcc_hcct_cnt(const struct kcc_hcct *h, u32 v)
{
	return kcc_forest_ctr(&h->f, v)[0];
}

/* A bucket of count @c after bucket @prev (KCC_NIL: first). */
static u32 kcc_bkt_new(struct kcc_hcct *h, u32 prev, u64 c)
{
	u32 b = h->bfree, next = prev == KCC_NIL ? h->bmin : h->bnext[prev];

	h->bfree = h->bnext[b];
	h->bcnt[b] = c;
	h->bhead[b] = KCC_NIL;
	h->bprev[b] = prev;
	h->bnext[b] = next;
	if (next != KCC_NIL)
		h->bprev[next] = b;
	if (prev != KCC_NIL)
		h->bnext[prev] = b;
	else
		h->bmin = b;
	return b;
}

static void kcc_bkt_free(struct kcc_hcct *h, u32 b)
{
	u32 prev = h->bprev[b], next = h->bnext[b];

	if (next != KCC_NIL)
		h->bprev[next] = prev;
	if (prev != KCC_NIL)
		h->bnext[prev] = next;
	else
		h->bmin = next;
	h->bnext[b] = h->bfree;
	h->bfree = b;
}

static void kcc_slot_link(struct kcc_hcct *h, u32 s, u32 b)
{
	u32 first = h->bhead[b];

	h->sbkt[s] = b;
	h->sprev[s] = KCC_NIL;
	h->snext[s] = first;
	if (first != KCC_NIL)
		h->sprev[first] = s;
	h->bhead[b] = s;
}

static void kcc_slot_unlink(struct kcc_hcct *h, u32 s)
{
	u32 b = h->sbkt[s], prev = h->sprev[s], next = h->snext[s];

	if (next != KCC_NIL)
		h->sprev[next] = prev;
	if (prev != KCC_NIL)
		h->snext[prev] = next;
	else
		h->bhead[b] = next;
}

/* Counter @s goes from its bucket's count c to c + 1. */
static void kcc_slot_inc(struct kcc_hcct *h, u32 s)
{
	u32 b = h->sbkt[s], next = h->bnext[b];
	u64 c = h->bcnt[b] + 1;
	bool join = next != KCC_NIL && h->bcnt[next] == c;

	kcc_forest_ctr(&h->f, h->mon[s])[0] = c;
	if (!join && h->bhead[b] == s && h->snext[s] == KCC_NIL) {
		/* Alone in its bucket: the order is kept by a bump. */
		h->bcnt[b] = c;
		return;
	}
	kcc_slot_unlink(h, s);
	kcc_slot_link(h, s, join ? next : kcc_bkt_new(h, b, c));
	if (h->bhead[b] == KCC_NIL)
		kcc_bkt_free(h, b);
}

/* Delete @v and its ancestors while nothing needs them any more. */
static void kcc_hcct_prune(struct kcc_hcct *h, u32 v)
{
	while (h->slot[v] == KCC_NIL && !h->on_stack[v] && !h->nchild[v]) {
		u32 p = kcc_forest_node(&h->f, v)->parent;

		kcc_forest_del(&h->f, v);
		if (kcc_is_root_parent(p))
			return;
		h->nchild[p]--;
		v = p;
	}
}

static void kcc_hcct_offer(struct kcc_hcct *h, u32 v)
{
	u32 s = h->slot[v], e;
	u64 c;

	h->n++;
	if (s != KCC_NIL) {
		kcc_slot_inc(h, s);
		return;
	}
	if (h->nmon < h->m) {
		/* A free counter: count 1, exact. */
		s = h->nmon++;
		h->mon[s] = v;
		h->slot[v] = s;
		h->err[s] = 0;
		kcc_forest_ctr(&h->f, v)[0] = 1;
		if (h->bmin == KCC_NIL || h->bcnt[h->bmin] != 1)
			kcc_bkt_new(h, KCC_NIL, 1);
		kcc_slot_link(h, s, h->bmin);
		return;
	}
	/* Take a smallest counter over: count min + 1, error min. */
	s = h->bhead[h->bmin];
	e = h->mon[s];
	c = h->bcnt[h->bmin];
	h->err[s] = c;
	kcc_forest_ctr(&h->f, e)[0] = 0;
	h->slot[e] = KCC_NIL;
	h->mon[s] = v;
	h->slot[v] = s;
	kcc_slot_inc(h, s);
	kcc_hcct_prune(h, e);
}

void kcc_hcct_call(struct kcc_hcct *h, u64 label)
{
	u32 parent = h->cursor == KCC_NIL ? KCC_ROOT_TOP : h->cursor;
	u32 before = h->f.live;
	u32 v;

	if (h->lost_depth) {
		h->lost_depth++;
		h->drops++;
		return;
	}
	v = kcc_forest_get(&h->f, parent, label);
	if (v == KCC_NIL) {
		h->lost_depth = 1;
		h->drops++;
		return;
	}
	if (h->f.live != before) {
		h->nchild[v] = 0;
		h->slot[v] = KCC_NIL;
		if (parent != KCC_ROOT_TOP)
			h->nchild[parent]++;
	}
	h->on_stack[v] = 1;
	h->cursor = v;
	h->depth++;
	kcc_hcct_offer(h, v);
}

int kcc_hcct_return(struct kcc_hcct *h)
{
	u32 v = h->cursor, p;

	if (h->lost_depth) {
		h->lost_depth--;
		return 0;
	}
	if (!h->depth) {
		h->bad_returns++;
		return -EINVAL;
	}
	p = kcc_forest_node(&h->f, v)->parent;
	h->on_stack[v] = 0;
	h->cursor = kcc_is_root_parent(p) ? KCC_NIL : p;
	h->depth--;
	kcc_hcct_prune(h, v);
	return 0;
}

u64 kcc_hcct_threshold(const struct kcc_hcct *h, u32 phi_ppm)
{
	/* floor(phi N) without overflow for any N below 2^64. */
	u64 q = kcc_div_u64(h->n, 1000000), r = h->n - q * 1000000;

	return q * phi_ppm + kcc_div_u64(r * phi_ppm, 1000000);
}

int kcc_hcct_export(const struct kcc_hcct *h, u32 phi_ppm,
		    struct kcc_forest *dst, u32 *scratch)
{
	u32 *map = scratch, *down = scratch + h->f.count;
	u64 thr = kcc_hcct_threshold(h, phi_ppm);
	int hot = 0;
	u32 i;

	for (i = 0; i < h->f.count; i++)
		map[i] = KCC_NIL;

	for (i = 0; i < h->nmon; i++) {
		u32 v = h->mon[i], u = v, prev = KCC_NIL, d;

		if (kcc_hcct_cnt(h, v) < thr)
			continue;
		hot++;
		/* Reverse the unexported part of the path, then copy it. */
		while (!kcc_is_root_parent(u) && map[u] == KCC_NIL) {
			down[u] = prev;
			prev = u;
			u = kcc_forest_node(&h->f, u)->parent;
		}
		d = kcc_is_root_parent(u) ? KCC_ROOT_TOP : map[u];
		for (u = prev; u != KCC_NIL; u = down[u]) {
			d = kcc_forest_get(dst, d, kcc_forest_node(&h->f, u)->label);
			if (d == KCC_NIL)
				return -ENOSPC;
			kcc_forest_ctr(dst, d)[0] = kcc_hcct_cnt(h, u);
			if (dst->nmetrics && h->slot[u] != KCC_NIL)
				kcc_forest_ctr(dst, d)[1] =
					kcc_hcct_cnt(h, u) - h->err[h->slot[u]];
			map[u] = d;
		}
	}
	return hot;
}
