// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_hcct.c - Hot Calling Context Tree from a Space-Saving summary.
 *
 * The stream items are calling contexts, i.e. CCT nodes: each call offers
 * the node it moves to.  Space-Saving keeps m counters; an item without a
 * counter takes the smallest one over, inheriting its value plus one, and
 * remembers that value as its overestimation bound.  The MCCT keeps only
 * what the summary and the running program need: monitored nodes, their
 * ancestors and the pending activations.  A node that needs none of these
 * reasons is deleted at once, so the tree stays O(m + depth) large.
 */
#include "kcc_hcct.h"

static size_t kcc_hcct_bytes(u32 capacity, u32 m)
{
	/* err, nchild, heap_pos per node; heap per counter; on_stack */
	return 3 * (size_t)capacity * sizeof(u32) + (size_t)m * sizeof(u32) +
	       capacity;
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
	int ret;

	if (!m || mem_size < kcc_hcct_mem_size(capacity, m))
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	ret = kcc_forest_init(&h->f, mem, fsz, capacity, 0);
	if (ret)
		return ret;
	h->err = (u32 *)p;
	h->nchild = h->err + capacity;
	h->heap_pos = h->nchild + capacity;
	h->heap = h->heap_pos + capacity;
	h->on_stack = (u8 *)(h->heap + m);
	h->m = m;
	h->cursor = KCC_NIL;
	return 0;
}

static inline u64 kcc_hcct_cnt(const struct kcc_hcct *h, u32 v)
{
	return kcc_forest_ctr(&h->f, v)[0];
}

static void kcc_heap_set(struct kcc_hcct *h, u32 pos, u32 v)
{
	h->heap[pos] = v;
	h->heap_pos[v] = pos;
}

static void kcc_heap_up(struct kcc_hcct *h, u32 pos)
{
	u32 v = h->heap[pos];

	while (pos) {
		u32 up = (pos - 1) / 2;

		if (kcc_hcct_cnt(h, h->heap[up]) <= kcc_hcct_cnt(h, v))
			break;
		kcc_heap_set(h, pos, h->heap[up]);
		pos = up;
	}
	kcc_heap_set(h, pos, v);
}

static void kcc_heap_down(struct kcc_hcct *h, u32 pos)
{
	u32 v = h->heap[pos];

	for (;;) {
		u32 c = 2 * pos + 1;

		if (c >= h->nmon)
			break;
		if (c + 1 < h->nmon &&
		    kcc_hcct_cnt(h, h->heap[c + 1]) < kcc_hcct_cnt(h, h->heap[c]))
			c++;
		if (kcc_hcct_cnt(h, v) <= kcc_hcct_cnt(h, h->heap[c]))
			break;
		kcc_heap_set(h, pos, h->heap[c]);
		pos = c;
	}
	kcc_heap_set(h, pos, v);
}

/* Delete @v and its ancestors while nothing needs them any more. */
static void kcc_hcct_prune(struct kcc_hcct *h, u32 v)
{
	while (h->heap_pos[v] == KCC_NIL && !h->on_stack[v] && !h->nchild[v]) {
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
	u64 *c = kcc_forest_ctr(&h->f, v);
	u32 e;

	h->n++;
	if (h->heap_pos[v] != KCC_NIL) {
		c[0]++;
		kcc_heap_down(h, h->heap_pos[v]);
		return;
	}
	if (h->nmon < h->m) {
		c[0] = 1;
		h->err[v] = 0;
		kcc_heap_set(h, h->nmon++, v);
		kcc_heap_up(h, h->nmon - 1);
		return;
	}
	/* Take the smallest counter over. */
	e = h->heap[0];
	c[0] = kcc_hcct_cnt(h, e) + 1;
	h->err[v] = (u32)(c[0] - 1 > 0xffffffffu ? 0xffffffffu : c[0] - 1);
	kcc_forest_ctr(&h->f, e)[0] = 0;
	h->heap_pos[e] = KCC_NIL;
	kcc_heap_set(h, 0, v);
	kcc_heap_down(h, 0);
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
		h->err[v] = 0;
		h->nchild[v] = 0;
		h->heap_pos[v] = KCC_NIL;
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
		u32 v = h->heap[i], u = v, prev = KCC_NIL, d;

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
			map[u] = d;
		}
	}
	return hot;
}
