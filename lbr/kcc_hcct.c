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

/* ---- Stream-Summary ---------------------------------------------------- */

size_t kcc_ss_mem_size(u32 m)
{
	/*
	 * bcnt per bucket and err per counter first (8-byte alignment);
	 * mon, snext, sprev, sbkt per counter; bhead, bnext, bprev per
	 * bucket.  At most m distinct counts exist at once, so m buckets
	 * do.
	 */
	return 2 * (size_t)m * sizeof(u64) + 7 * (size_t)m * sizeof(u32);
}

void kcc_ss_init(struct kcc_ss *ss, void *mem, u32 m, u32 *slot)
{
	u32 i;

	ss->slot = slot;
	ss->bcnt = mem;
	ss->err = ss->bcnt + m;
	ss->mon = (u32 *)(ss->err + m);
	ss->snext = ss->mon + m;
	ss->sprev = ss->snext + m;
	ss->sbkt = ss->sprev + m;
	ss->bhead = ss->sbkt + m;
	ss->bnext = ss->bhead + m;
	ss->bprev = ss->bnext + m;
	ss->m = m;
	ss->nmon = 0;
	ss->bmin = KCC_NIL;
	for (i = 0; i < m; i++)
		ss->bnext[i] = i + 1 < m ? i + 1 : KCC_NIL;
	ss->bfree = 0;
}

/* A bucket of count @c after bucket @prev (KCC_NIL: first). */
static u32 kcc_bkt_new(struct kcc_ss *ss, u32 prev, u64 c)
{
	u32 b = ss->bfree, next = prev == KCC_NIL ? ss->bmin : ss->bnext[prev];

	ss->bfree = ss->bnext[b];
	ss->bcnt[b] = c;
	ss->bhead[b] = KCC_NIL;
	ss->bprev[b] = prev;
	ss->bnext[b] = next;
	if (next != KCC_NIL)
		ss->bprev[next] = b;
	if (prev != KCC_NIL)
		ss->bnext[prev] = b;
	else
		ss->bmin = b;
	return b;
}

static void kcc_bkt_free(struct kcc_ss *ss, u32 b)
{
	u32 prev = ss->bprev[b], next = ss->bnext[b];

	if (next != KCC_NIL)
		ss->bprev[next] = prev;
	if (prev != KCC_NIL)
		ss->bnext[prev] = next;
	else
		ss->bmin = next;
	ss->bnext[b] = ss->bfree;
	ss->bfree = b;
}

static void kcc_slot_link(struct kcc_ss *ss, u32 s, u32 b)
{
	u32 first = ss->bhead[b];

	ss->sbkt[s] = b;
	ss->sprev[s] = KCC_NIL;
	ss->snext[s] = first;
	if (first != KCC_NIL)
		ss->sprev[first] = s;
	ss->bhead[b] = s;
}

static void kcc_slot_unlink(struct kcc_ss *ss, u32 s)
{
	u32 b = ss->sbkt[s], prev = ss->sprev[s], next = ss->snext[s];

	if (next != KCC_NIL)
		ss->sprev[next] = prev;
	if (prev != KCC_NIL)
		ss->snext[prev] = next;
	else
		ss->bhead[b] = next;
}

/*
 * Counter @s goes from its bucket's count c to c + w: one step for
 * w = 1, a walk over the buckets below c + w otherwise.
 */
static void kcc_slot_inc(struct kcc_ss *ss, u32 s, u64 w)
{
	u32 b = ss->sbkt[s], at = b, next = ss->bnext[b];
	u64 c = ss->bcnt[b] + w;

	while (next != KCC_NIL && ss->bcnt[next] < c) {
		at = next;
		next = ss->bnext[next];
	}
	if (at == b && (next == KCC_NIL || ss->bcnt[next] != c) &&
	    ss->bhead[b] == s && ss->snext[s] == KCC_NIL) {
		/* Alone in its bucket: the order is kept by a bump. */
		ss->bcnt[b] = c;
		return;
	}
	/*
	 * Free an emptied bucket before taking one: m counters never need
	 * more than m buckets, even for a moment.  @at is then another.
	 */
	kcc_slot_unlink(ss, s);
	if (ss->bhead[b] == KCC_NIL) {
		if (at == b)
			at = ss->bprev[b];
		kcc_bkt_free(ss, b);
	}
	if (next != KCC_NIL && ss->bcnt[next] == c)
		kcc_slot_link(ss, s, next);
	else
		kcc_slot_link(ss, s, kcc_bkt_new(ss, at, c));
}

u32 kcc_ss_offer(struct kcc_ss *ss, u32 v, u64 w)
{
	u32 s = ss->slot[v], e;

	if (s != KCC_NIL) {
		kcc_slot_inc(ss, s, w);
		return KCC_NIL;
	}
	if (ss->nmon < ss->m) {
		/* A free counter: count w, exact. */
		s = ss->nmon++;
		ss->mon[s] = v;
		ss->slot[v] = s;
		ss->err[s] = 0;
		if (ss->bmin == KCC_NIL || ss->bcnt[ss->bmin] != 0)
			kcc_bkt_new(ss, KCC_NIL, 0);
		kcc_slot_link(ss, s, ss->bmin);
		kcc_slot_inc(ss, s, w);
		return KCC_NIL;
	}
	/* Take a smallest counter over: count min + w, error min. */
	s = ss->bhead[ss->bmin];
	e = ss->mon[s];
	ss->err[s] = ss->bcnt[ss->bmin];
	ss->slot[e] = KCC_NIL;
	ss->mon[s] = v;
	ss->slot[v] = s;
	kcc_slot_inc(ss, s, w);
	return e;
}

void kcc_ss_push_max(struct kcc_ss *ss, u32 v, u64 c, u64 err)
{
	u32 s = ss->nmon++, last = ss->bmin;

	/* The caller goes up: the last bucket is found from the newest. */
	if (s)
		last = ss->sbkt[s - 1];
	ss->mon[s] = v;
	ss->slot[v] = s;
	ss->err[s] = err;
	if (last == KCC_NIL || ss->bcnt[last] != c)
		last = kcc_bkt_new(ss, last, c);
	kcc_slot_link(ss, s, last);
}

/* ---- HCCT ------------------------------------------------------------- */

static size_t kcc_hcct_bytes(u32 capacity, u32 m)
{
	/* The summary, then nchild, slot per node, then on_stack. */
	return kcc_ss_mem_size(m) + 2 * (size_t)capacity * sizeof(u32) +
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

	if (!m || m >= KCC_NIL || mem_size < kcc_hcct_mem_size(capacity, m))
		return -EINVAL;
	memset(h, 0, sizeof(*h));
	ret = kcc_forest_init(&h->f, mem, fsz, capacity, 0);
	if (ret)
		return ret;
	h->nchild = (u32 *)(p + kcc_ss_mem_size(m));
	kcc_ss_init(&h->ss, p, m, h->nchild + capacity);
	h->on_stack = (u8 *)(h->ss.slot + capacity);
	h->cursor = KCC_NIL;
	return 0;
}

static inline u64 kcc_hcct_cnt(const struct kcc_hcct *h, u32 v)
{
	return kcc_forest_ctr(&h->f, v)[0];
}

/* Delete @v and its ancestors while nothing needs them any more. */
static void kcc_hcct_prune(struct kcc_hcct *h, u32 v)
{
	while (h->ss.slot[v] == KCC_NIL && !h->on_stack[v] && !h->nchild[v]) {
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
	u32 e;

	h->n++;
	e = kcc_ss_offer(&h->ss, v, 1);
	kcc_forest_ctr(&h->f, v)[0] = kcc_ss_count(&h->ss, h->ss.slot[v]);
	if (e != KCC_NIL) {
		kcc_forest_ctr(&h->f, e)[0] = 0;
		kcc_hcct_prune(h, e);
	}
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
		h->ss.slot[v] = KCC_NIL;
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

	for (i = 0; i < h->ss.nmon; i++) {
		u32 v = h->ss.mon[i], u = v, prev = KCC_NIL, d;

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
			if (dst->nmetrics && h->ss.slot[u] != KCC_NIL)
				kcc_forest_ctr(dst, d)[1] = kcc_hcct_cnt(h, u) -
					h->ss.err[h->ss.slot[u]];
			map[u] = d;
		}
	}
	return hot;
}

/* ---- pruned k-SF and CCT forests (kcc.ko) ------------------------------ */

static u32 kcc_fprune_m(u32 capacity)
{
	return capacity / 4 ? capacity / 4 : 1;
}

/* The summary, 8-byte aligned for the u64 sort keys in the scratch. */
static size_t kcc_fprune_ss_size(u32 capacity)
{
	return (kcc_ss_mem_size(kcc_fprune_m(capacity)) + 7) & ~(size_t)7;
}

size_t kcc_fprune_mem_size(u32 capacity)
{
	/* The summary, then nchild, pin, 2 scratch and slot per node. */
	return kcc_fprune_ss_size(capacity) + 5 * (size_t)capacity * sizeof(u32);
}

static int kcc_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u32 kcc_fprune_reclaim(struct kcc_forest *f);

int kcc_fprune_start(struct kcc_fprune *p, void *mem, size_t mem_size,
		     struct kcc_forest *f, u32 ctr)
{
	u32 cap = f->capacity, m = kcc_fprune_m(cap), i, j, n;
	u8 *q = mem;
	u64 *key;

	if (f->pr || ctr > f->nmetrics || f->live != f->count ||
	    ((unsigned long)mem & 7) || mem_size < kcc_fprune_mem_size(cap))
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	q += kcc_fprune_ss_size(cap);
	p->nchild = (u32 *)q;
	p->pin = p->nchild + cap;
	p->scratch = p->pin + cap;
	kcc_ss_init(&p->ss, mem, m, p->scratch + 2 * (size_t)cap);
	p->ctr = ctr;
	p->pin_seq = 1;
	memset(p->nchild, 0, 2 * (size_t)cap * sizeof(u32));
	memset(p->ss.slot, 0xff, (size_t)cap * sizeof(u32));

	/*
	 * The m largest counts get the counters, exact: a count is what
	 * the node saw, nothing was lost before.  Sorting (count, index)
	 * keys clamps counts at 2^32 - 1 for the order only.
	 */
	key = (u64 *)p->scratch;
	for (i = 0; i < f->count; i++) {
		const struct kcc_node *nd = kcc_forest_node(f, i);
		u64 c = kcc_forest_ctr(f, i)[ctr];

		p->n += c;
		if (!kcc_is_root_parent(nd->parent))
			p->nchild[nd->parent]++;
		key[i] = (c < 0xffffffffull ? c : 0xffffffffull) << 32 | i;
	}
	kcc_sort(key, f->count, sizeof(*key), kcc_cmp_u64);
	p->reclaim = kcc_fprune_reclaim;
	n = f->count < m ? f->count : m;
	for (j = f->count - n; j < f->count; j++) {
		i = (u32)key[j];
		kcc_ss_push_max(&p->ss, i, kcc_forest_ctr(f, i)[ctr], 0);
	}
	f->pr = p;
	return 0;
}

/* Delete @v and its ancestors while nothing needs them any more. */
static void kcc_fprune_drop(struct kcc_forest *f, u32 v)
{
	struct kcc_fprune *p = f->pr;

	while (p->ss.slot[v] == KCC_NIL && !p->nchild[v] &&
	       p->pin[v] != p->pin_seq) {
		u32 up = kcc_forest_node(f, v)->parent;

		kcc_forest_del(f, v);
		p->evicted++;
		if (kcc_is_root_parent(up))
			return;
		p->nchild[up]--;
		v = up;
	}
}

/*
 * The pool is full: a leaf monitored by a smallest counter, not pinned,
 * loses the counter and goes.  Only the smallest bucket is looked at,
 * and at most 16 of its counters: O(1), and the counter handed over has
 * the smallest count, as a Space-Saving takeover needs.  The caller
 * gives it to the node it creates (kcc_forest_insert()).
 */
static u32 kcc_fprune_reclaim(struct kcc_forest *f)
{
	struct kcc_fprune *p = f->pr;
	struct kcc_ss *ss = &p->ss;
	u32 s, tries = 0;

	if (ss->nmon < ss->m || ss->bmin == KCC_NIL)
		return KCC_NIL;
	for (s = ss->bhead[ss->bmin]; s != KCC_NIL && tries < 16;
	     s = ss->snext[s], tries++) {
		u32 e = ss->mon[s];

		if (p->nchild[e] || p->pin[e] == p->pin_seq)
			continue;
		ss->err[s] = ss->bcnt[ss->bmin];
		ss->slot[e] = KCC_NIL;
		ss->mon[s] = KCC_NIL;
		kcc_fprune_drop(f, e);
		return s;
	}
	return KCC_NIL;
}

void kcc_fprune_sweep(struct kcc_forest *f)
{
	u32 i;

	for (i = 0; i < f->count; i++)
		if (kcc_forest_node(f, i)->parent != KCC_FREE)
			kcc_fprune_drop(f, i);
}

u32 kcc_fprune_eps_ppm(const struct kcc_forest *f)
{
	return f->pr ? (u32)((1000000ull + f->pr->ss.m - 1) / f->pr->ss.m) : 0;
}

void kcc_fprune_touch(struct kcc_forest *f, u32 idx, u32 ctr, u64 inc)
{
	struct kcc_fprune *p = f->pr;
	u32 e;

	p->pin[idx] = p->pin_seq;
	if (ctr != p->ctr || !inc)
		return;
	p->n += inc;
	e = kcc_ss_offer(&p->ss, idx, inc);
	if (e != KCC_NIL)
		kcc_fprune_drop(f, e);
}

u32 kcc_forest_topo(const struct kcc_forest *f, u32 *order, u32 *map)
{
	u32 n = 0, i;

	for (i = 0; i < f->count; i++)
		map[i] = KCC_NIL;
	for (i = 0; i < f->count; i++) {
		u32 u = i, top = n;

		if (kcc_forest_node(f, i)->parent == KCC_FREE)
			continue;
		/* Unplaced ancestors, deepest first, at the end of @order. */
		while (map[u] == KCC_NIL) {
			u32 up = kcc_forest_node(f, u)->parent;

			map[u] = KCC_FREE;	/* on the way */
			order[n++] = u;
			if (kcc_is_root_parent(up))
				break;
			u = up;
		}
		/* Reverse them: parents first. */
		for (u = 0; u < (n - top) / 2; u++) {
			u32 x = order[top + u];

			order[top + u] = order[n - 1 - u];
			order[n - 1 - u] = x;
		}
		for (u = top; u < n; u++)
			map[order[u]] = u;
	}
	return n;
}
