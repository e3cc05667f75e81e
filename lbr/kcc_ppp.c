// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_ppp.c - preferential path numbering of watched k-contexts
 * (ComputePPPIncrements, Figure 10 of the PPP paper) and the array
 * counting it allows.  See kcc_ppp.h for the DAG and the check.
 *
 * The construction is O(L (k + 1) log |I|) for L routines in all: one
 * lexicographic sort of I gives every prefix an id (two contexts share a
 * prefix iff they share its id), then each position is one sort of the
 * contexts through it by (node, edge, prefix), so that the edges out of a
 * node, and the prefixes through an edge, are runs of that order.
 */
#include "kcc_forest.h"
#include "kcc_ppp.h"

#define PPP_K1		(KCC_PPP_MAX_K + 1)
#define PPP_ID_BITS	20	/* routine and prefix ids: < 9 * 65536 + 1 */

static u32 ppp_pow2(u32 n)
{
	u32 c = 16;

	while (c < n)
		c <<= 1;
	return c;
}

/* Scratch of the construction, laid out after the tables. */
struct ppp_layout {
	size_t label, rhash, ehash, ecaller, ecallee, ew, w_outer, w_callee;
	size_t ctx_off, ctx_len, ctx_rid, ctx_num, ctx_inner, slot, slot_tag;
	size_t order, pfx, pid, cis, key, total;
};

static size_t ppp_put(size_t *at, size_t n, size_t size)
{
	size_t off = (*at + 7) & ~(size_t)7;

	*at = off + n * size;
	return off;
}

static bool ppp_layout(struct ppp_layout *l, u32 nctx, u32 nlabels,
		       u32 max_range)
{
	u32 cap = ppp_pow2(2 * nlabels);
	size_t at = 0;

	if (!nctx || nctx > KCC_PPP_MAX_CTX || nlabels < nctx ||
	    nlabels > nctx * PPP_K1 || !max_range ||
	    max_range > KCC_PPP_MAX_RANGE)
		return false;
	l->label = ppp_put(&at, nlabels, sizeof(u64));
	l->rhash = ppp_put(&at, cap, sizeof(u32));
	l->ehash = ppp_put(&at, cap, sizeof(u32));
	l->ecaller = ppp_put(&at, nlabels, sizeof(u32));
	l->ecallee = ppp_put(&at, nlabels, sizeof(u32));
	l->ew = ppp_put(&at, (size_t)nlabels * KCC_PPP_MAX_K, sizeof(s32));
	l->w_outer = ppp_put(&at, (size_t)nlabels * PPP_K1, sizeof(s32));
	l->w_callee = ppp_put(&at, nlabels, sizeof(s32));
	l->ctx_off = ppp_put(&at, nctx, sizeof(u32));
	l->ctx_len = ppp_put(&at, nctx, sizeof(u32));
	l->ctx_rid = ppp_put(&at, nlabels, sizeof(u32));
	l->ctx_num = ppp_put(&at, nctx, sizeof(u32));
	l->ctx_inner = ppp_put(&at, nctx, sizeof(u32));
	l->slot = ppp_put(&at, max_range, sizeof(u32));
	l->slot_tag = ppp_put(&at, max_range, sizeof(u32));
	l->order = ppp_put(&at, nctx, sizeof(u32));
	l->pfx = ppp_put(&at, nlabels, sizeof(u32));
	l->pid = ppp_put(&at, nctx, sizeof(s64));
	l->cis = ppp_put(&at, (size_t)nlabels + 1, sizeof(s64));
	l->key = ppp_put(&at, nctx, sizeof(u64));
	l->total = at;
	return true;
}

size_t kcc_ppp_mem_size(u32 nctx, u32 nlabels, u32 max_range)
{
	struct ppp_layout l;

	return ppp_layout(&l, nctx, nlabels, max_range) ? l.total : 0;
}

const char *kcc_ppp_strerror(enum kcc_ppp_err err)
{
	switch (err) {
	case KCC_PPP_OK:
		return "no error";
	case KCC_PPP_E_EMPTY:
		return "empty watched set or context";
	case KCC_PPP_E_TOO_LONG:
		return "context longer than 8 call edges";
	case KCC_PPP_E_TOO_MANY:
		return "more than 65536 watched contexts";
	case KCC_PPP_E_DUP:
		return "context given twice";
	case KCC_PPP_E_RANGE:
		return "numbering needs more counters than allowed";
	case KCC_PPP_E_MEM:
		return "memory block too small";
	}
	return "unknown error";
}

/* splitmix64's finaliser: the tables hold what I names, nothing else. */
static inline u32 ppp_hash(u64 x, u32 mask)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (u32)x & mask;
}

u32 kcc_ppp_routine(const struct kcc_ppp *p, u64 label)
{
	u32 h = ppp_hash(label, p->rmask), r;

	while ((r = p->rhash[h]) != KCC_NIL) {
		if (p->label[r] == label)
			return r;
		h = (h + 1) & p->rmask;
	}
	return KCC_NIL;
}

static inline u64 ppp_edge_key(u32 caller, u32 callee)
{
	return (u64)caller << 32 | callee;
}

u32 kcc_ppp_edge(const struct kcc_ppp *p, u32 caller, u32 callee)
{
	u32 h = ppp_hash(ppp_edge_key(caller, callee), p->emask), e;

	while ((e = p->ehash[h]) != KCC_NIL) {
		if (p->ecaller[e] == caller && p->ecallee[e] == callee)
			return e;
		h = (h + 1) & p->emask;
	}
	return KCC_NIL;
}

static u32 ppp_intern(struct kcc_ppp *p, u64 label)
{
	u32 h = ppp_hash(label, p->rmask), r;

	while ((r = p->rhash[h]) != KCC_NIL) {
		if (p->label[r] == label)
			return r;
		h = (h + 1) & p->rmask;
	}
	r = p->nroutines++;
	p->label[r] = label;
	p->rhash[h] = r;
	return r;
}

static u32 ppp_edge_intern(struct kcc_ppp *p, u32 caller, u32 callee)
{
	u32 h = ppp_hash(ppp_edge_key(caller, callee), p->emask), e, j;

	while ((e = p->ehash[h]) != KCC_NIL) {
		if (p->ecaller[e] == caller && p->ecallee[e] == callee)
			return e;
		h = (h + 1) & p->emask;
	}
	e = p->nedges++;
	p->ecaller[e] = caller;
	p->ecallee[e] = callee;
	for (j = 0; j < KCC_PPP_MAX_K; j++)
		p->ew[(size_t)e * KCC_PPP_MAX_K + j] = KCC_PPP_NONE;
	p->ehash[h] = e;
	return e;
}

/* Heapsort of u32 items: no allocation, no recursion, O(n log n). */
typedef int (*ppp_cmp_t)(const void *ctx, u32 a, u32 b);

static void ppp_sift(u32 *v, u32 i, u32 n, ppp_cmp_t cmp, const void *ctx)
{
	for (;;) {
		u32 c = 2 * i + 1, t;

		if (c >= n)
			return;
		if (c + 1 < n && cmp(ctx, v[c + 1], v[c]) > 0)
			c++;
		if (cmp(ctx, v[c], v[i]) <= 0)
			return;
		t = v[c];
		v[c] = v[i];
		v[i] = t;
		i = c;
	}
}

static void ppp_sort(u32 *v, u32 n, ppp_cmp_t cmp, const void *ctx)
{
	u32 i, t;

	for (i = n / 2; i-- > 0;)
		ppp_sift(v, i, n, cmp, ctx);
	for (i = n; i-- > 1;) {
		t = v[0];
		v[0] = v[i];
		v[i] = t;
		ppp_sift(v, 0, i, cmp, ctx);
	}
}

/* Routine @i of context @c counted from the callee (kcc_ppp.h's r'_i). */
static inline u32 ppp_rev(const struct kcc_ppp *p, u32 c, u32 i)
{
	return p->ctx_rid[p->ctx_off[c] + p->ctx_len[c] - 1 - i];
}

/* Contexts lexicographically from the callee out, a prefix first. */
static int ppp_cmp_ctx(const void *ctx, u32 a, u32 b)
{
	const struct kcc_ppp *p = ctx;
	u32 la = p->ctx_len[a], lb = p->ctx_len[b], i;

	for (i = 0; i < la && i < lb; i++)
		if (ppp_rev(p, a, i) != ppp_rev(p, b, i))
			return ppp_rev(p, a, i) < ppp_rev(p, b, i) ? -1 : 1;
	if (la != lb)
		return la < lb ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int ppp_cmp_key(const void *ctx, u32 a, u32 b)
{
	const u64 *key = ctx;

	if (key[a] != key[b])
		return key[a] < key[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

struct ppp_scratch {
	u32 *order;
	u32 *pfx;	/* pfx[off + L - 1]: id of the prefix of L routines */
	s64 *pid;	/* partial identifiers */
	s64 *cis;	/* cumulative interval size per prefix id */
	u64 *key;	/* (node, edge target, prefix) of each context */
};

#define PPP_EDGE_SHIFT	PPP_ID_BITS
#define PPP_NODE_SHIFT	(PPP_ID_BITS + 24)
#define PPP_PFX_MASK	((1ull << PPP_ID_BITS) - 1)

/*
 * Lines 2-21 of Figure 10 for the contexts keyed in s->key, sorted in
 * v[0..n): every run of equal key >> PPP_EDGE_SHIFT is the paths of one
 * edge, every run of equal key one prefix through it.  Edges of a node
 * are processed in the order of their targets.  The weights go to
 * *w(edge) through @store; false when one does not fit an s32.
 */
typedef s32 *(*ppp_store_t)(struct kcc_ppp *p, u64 key, u32 pos);

static bool ppp_level(struct kcc_ppp *p, struct ppp_scratch *s,
		      const u32 *v, u32 n, ppp_store_t store, u32 pos)
{
	u32 a = 0;

	while (a < n) {
		u64 ekey = s->key[v[a]] >> PPP_EDGE_SHIFT;
		s64 w = 0;
		bool have = false;
		u32 b = a, i, q;
		s32 *slot;

		while (b < n && s->key[v[b]] >> PPP_EDGE_SHIFT == ekey)
			b++;
		/* Lines 3-12: the largest weight any prefix needs. */
		for (i = a; i < b; i = q) {
			u64 k = s->key[v[i]];
			s64 mn = s->pid[v[i]];

			for (q = i; q < b && s->key[v[q]] == k; q++)
				if (s->pid[v[q]] < mn)
					mn = s->pid[v[q]];
			if (!have || s->cis[k & PPP_PFX_MASK] - mn > w)
				w = s->cis[k & PPP_PFX_MASK] - mn;
			have = true;
		}
		if (w <= KCC_PPP_NONE || w > 0x7fffffffll)
			return false;
		slot = store(p, s->key[v[a]], pos);
		*slot = (s32)w;
		/* Lines 14-20. */
		for (i = a; i < b; i = q) {
			u64 k = s->key[v[i]];
			s64 mx;

			s->pid[v[i]] += w;
			mx = s->pid[v[i]];
			for (q = i + 1; q < b && s->key[v[q]] == k; q++) {
				s->pid[v[q]] += w;
				if (s->pid[v[q]] > mx)
					mx = s->pid[v[q]];
			}
			s->cis[k & PPP_PFX_MASK] = mx + 1;
		}
		a = b;
	}
	return true;
}

/*
 * The edge out of node (@pos, callee) with key @key: to t, which ends a
 * context whose outermost routine is that node, or to (@pos + 1, caller).
 */
static s32 *ppp_store_edge(struct kcc_ppp *p, u64 key, u32 pos)
{
	u32 callee = (u32)(key >> PPP_NODE_SHIFT);
	u32 tgt = (u32)((key >> PPP_EDGE_SHIFT) & 0xffffff), e;

	if (!tgt)
		return &p->w_outer[(size_t)callee * PPP_K1 + pos];
	e = ppp_edge_intern(p, tgt - 1, callee);
	return &p->ew[(size_t)e * KCC_PPP_MAX_K + pos];
}

/* The edge s -> (0, callee). */
static s32 *ppp_store_s_edge(struct kcc_ppp *p, u64 key, u32 pos)
{
	return &p->w_callee[(key >> PPP_EDGE_SHIFT) & 0xffffff];
}

/* Length and outermost routine of a context: most aliases differ there. */
static inline u32 ppp_tag(u32 m, u32 outer)
{
	return m << PPP_ID_BITS | outer;
}

static int ppp_fail(struct kcc_ppp *p, enum kcc_ppp_err err, u32 ctx,
		    int ret)
{
	p->err = err;
	p->err_ctx = ctx;
	return ret;
}

static void ppp_tables(struct kcc_ppp *p, u8 *m, const struct ppp_layout *l,
		       u32 nctx, u32 nlabels)
{
	u32 cap = ppp_pow2(2 * nlabels), i;

	p->label = (u64 *)(m + l->label);
	p->rhash = (u32 *)(m + l->rhash);
	p->ehash = (u32 *)(m + l->ehash);
	p->ecaller = (u32 *)(m + l->ecaller);
	p->ecallee = (u32 *)(m + l->ecallee);
	p->ew = (s32 *)(m + l->ew);
	p->w_outer = (s32 *)(m + l->w_outer);
	p->w_callee = (s32 *)(m + l->w_callee);
	p->ctx_off = (u32 *)(m + l->ctx_off);
	p->ctx_len = (u32 *)(m + l->ctx_len);
	p->ctx_rid = (u32 *)(m + l->ctx_rid);
	p->ctx_num = (u32 *)(m + l->ctx_num);
	p->ctx_inner = (u32 *)(m + l->ctx_inner);
	p->slot = (u32 *)(m + l->slot);
	p->slot_tag = (u32 *)(m + l->slot_tag);
	p->rmask = cap - 1;
	p->emask = cap - 1;
	for (i = 0; i < cap; i++) {
		p->rhash[i] = KCC_NIL;
		p->ehash[i] = KCC_NIL;
	}
	for (i = 0; i < nlabels; i++)
		p->w_callee[i] = KCC_PPP_NONE;
	for (i = 0; i < nlabels * PPP_K1; i++)
		p->w_outer[i] = KCC_PPP_NONE;
}

/*
 * Prefix ids from the lexicographic order: in it, the longest prefix a
 * context shares with any context before it is the one it shares with
 * its predecessor.  -EINVAL on a duplicate.
 */
static int ppp_prefixes(struct kcc_ppp *p, struct ppp_scratch *s)
{
	u32 next = 0, i, j, prev = KCC_NIL;

	for (i = 0; i < p->nctx; i++) {
		u32 c = s->order[i], len = p->ctx_len[c], cp = 0;

		if (prev != KCC_NIL) {
			while (cp < len && cp < p->ctx_len[prev] &&
			       ppp_rev(p, prev, cp) == ppp_rev(p, c, cp))
				cp++;
			if (cp == len && len == p->ctx_len[prev])
				return ppp_fail(p, KCC_PPP_E_DUP, c, -EINVAL);
		}
		/* pfx[off + j]: the callee and its j nearest callers */
		for (j = 0; j < len; j++)
			s->pfx[p->ctx_off[c] + j] = j < cp ?
				s->pfx[p->ctx_off[prev] + j] : next++;
		prev = c;
	}
	return 0;
}

/*
 * ComputePPPIncrements on the DAG s -> (0, r'_0) -> ... -> (m, r'_m) -> t
 * (r'_i: the i-th caller out from the callee), in reverse topological
 * order: the positions from kmax down to 0, then s.
 */
static int ppp_number(struct kcc_ppp *p, struct ppp_scratch *s,
		      u32 nlabels, u32 max_range)
{
	u32 j, c, n, sid = nlabels;	/* sid: the empty prefix at s */

	for (c = 0; c < p->nctx; c++)
		s->pid[c] = 0;
	for (c = 0; c <= nlabels; c++)
		s->cis[c] = 0;
	for (j = p->kmax + 1; j-- > 0;) {
		n = 0;
		for (c = 0; c < p->nctx; c++) {
			u32 m = p->ctx_len[c] - 1;
			u64 node, tgt;

			if (m < j)
				continue;
			node = ppp_rev(p, c, j);
			tgt = j == m ? 0 : ppp_rev(p, c, j + 1) + 1;
			s->key[c] = node << PPP_NODE_SHIFT |
				    tgt << PPP_EDGE_SHIFT |
				    s->pfx[p->ctx_off[c] + j];
			s->order[n++] = c;
		}
		ppp_sort(s->order, n, ppp_cmp_key, s->key);
		if (!ppp_level(p, s, s->order, n, ppp_store_edge, j))
			return ppp_fail(p, KCC_PPP_E_RANGE, 0, -E2BIG);
	}
	for (c = 0; c < p->nctx; c++) {
		s->key[c] = (u64)ppp_rev(p, c, 0) << PPP_EDGE_SHIFT | sid;
		s->order[c] = c;
	}
	ppp_sort(s->order, p->nctx, ppp_cmp_key, s->key);
	if (!ppp_level(p, s, s->order, p->nctx, ppp_store_s_edge, 0))
		return ppp_fail(p, KCC_PPP_E_RANGE, 0, -E2BIG);
	if (s->cis[sid] > max_range)
		return ppp_fail(p, KCC_PPP_E_RANGE, 0, -E2BIG);
	p->range = (u32)s->cis[sid];
	for (n = 0; n < p->range; n++) {
		p->slot[n] = KCC_NIL;
		p->slot_tag[n] = KCC_NIL;
	}
	for (c = 0; c < p->nctx; c++) {
		s64 num = s->pid[c];

		/* Lemma 5: distinct numbers in [0, cis(s)). */
		if (KCC_WARN_ON(num < 0 || num >= p->range ||
				p->slot[num] != KCC_NIL))
			return ppp_fail(p, KCC_PPP_E_RANGE, c, -E2BIG);
		p->slot[num] = c;
		p->slot_tag[num] = ppp_tag(p->ctx_len[c] - 1,
					   p->ctx_rid[p->ctx_off[c]]);
		p->ctx_num[c] = (u32)num;
	}
	return 0;
}

/*
 * ctx_inner[c]: the context of I that is c without its outermost routine,
 * KCC_NIL when there is none.  Prefix ids name callee-first paths, so
 * that context is the one whose whole path has the id of c's prefix of
 * len - 1 routines.  The cis scratch (nlabels + 1 entries) is free now.
 */
static void ppp_inner(struct kcc_ppp *p, struct ppp_scratch *s, u32 nlabels)
{
	u32 c, i;

	for (i = 0; i <= nlabels; i++)
		s->cis[i] = KCC_NIL;
	for (c = 0; c < p->nctx; c++)
		s->cis[s->pfx[p->ctx_off[c] + p->ctx_len[c] - 1]] = c;
	for (c = 0; c < p->nctx; c++)
		p->ctx_inner[c] = p->ctx_len[c] < 2 ? KCC_NIL :
			(u32)s->cis[s->pfx[p->ctx_off[c] + p->ctx_len[c] - 2]];
}

int kcc_ppp_build(struct kcc_ppp *p, void *mem, size_t mem_size,
		  const u64 *labels, const u32 *lens, u32 nctx, u32 max_range)
{
	struct ppp_scratch s;
	struct ppp_layout l;
	u32 i, j, nlabels = 0;
	u8 *m = mem;
	int ret;

	memset(p, 0, sizeof(*p));
	if (!nctx)
		return ppp_fail(p, KCC_PPP_E_EMPTY, 0, -EINVAL);
	if (nctx > KCC_PPP_MAX_CTX)
		return ppp_fail(p, KCC_PPP_E_TOO_MANY, KCC_PPP_MAX_CTX, -E2BIG);
	for (i = 0; i < nctx; i++) {
		if (!lens[i])
			return ppp_fail(p, KCC_PPP_E_EMPTY, i, -EINVAL);
		if (lens[i] > PPP_K1)
			return ppp_fail(p, KCC_PPP_E_TOO_LONG, i, -EINVAL);
		nlabels += lens[i];
	}
	if (!ppp_layout(&l, nctx, nlabels, max_range ? max_range : 1) ||
	    !mem || mem_size < l.total)
		return ppp_fail(p, KCC_PPP_E_MEM, 0, -ENOMEM);

	ppp_tables(p, m, &l, nctx, nlabels);
	s.order = (u32 *)(m + l.order);
	s.pfx = (u32 *)(m + l.pfx);
	s.pid = (s64 *)(m + l.pid);
	s.cis = (s64 *)(m + l.cis);
	s.key = (u64 *)(m + l.key);

	p->nctx = nctx;
	for (i = 0, nlabels = 0; i < nctx; i++) {
		p->ctx_off[i] = nlabels;
		p->ctx_len[i] = lens[i];
		if (lens[i] - 1 > p->kmax)
			p->kmax = lens[i] - 1;
		for (j = 0; j < lens[i]; j++, nlabels++)
			p->ctx_rid[nlabels] = ppp_intern(p, labels[nlabels]);
		s.order[i] = i;
	}
	ppp_sort(s.order, nctx, ppp_cmp_ctx, p);
	ret = ppp_prefixes(p, &s);
	if (!ret)
		ret = ppp_number(p, &s, nlabels, max_range);
	if (!ret)
		ppp_inner(p, &s, nlabels);
	if (ret) {
		enum kcc_ppp_err err = p->err;
		u32 ctx = p->err_ctx;

		memset(p, 0, sizeof(*p));
		return ppp_fail(p, err, ctx, ret);
	}
	return 0;
}

int kcc_ppp_run_init(struct kcc_ppp_run *r, const struct kcc_ppp *p,
		     u64 *counts, struct kcc_ppp_frame *stack, u32 stack_cap)
{
	u32 i;

	if (!p || !p->range || !counts || !stack || !stack_cap)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->p = p;
	r->counts = counts;
	r->stack = stack;
	r->stack_cap = stack_cap;
	for (i = 0; i < p->range; i++)
		counts[i] = 0;
	/* Frames keep their memo across pushes (kcc_ppp_call_w()). */
	for (i = 0; i < stack_cap; i++) {
		stack[i].rid = KCC_NIL;
		stack[i].memo = 0;
	}
	return 0;
}

/* Do the routines of context @c match the @m + 1 innermost frames? */
static inline bool ppp_match(const struct kcc_ppp *p, u32 c,
			     const struct kcc_ppp_frame *top, u32 m)
{
	const u32 *rid = p->ctx_rid + p->ctx_off[c];
	u32 i;

	if (p->ctx_len[c] != m + 1)
		return false;
	for (i = 0; i <= m; i++)
		if (rid[m - i] != top[-(s32)i].rid)
			return false;
	return true;
}

/*
 * Is the slot @num the suffix of @m + 1 routines of the stack, whose
 * outermost routine is @outer and whose inner m routines are context
 * @prev of I (KCC_NIL: they are not a context of I)?  Length and outer
 * routine first (the tag); then, when c without its outermost routine is
 * a context of I, it must be @prev, which was checked the same way one
 * step in: O(1).  Only a context whose inner part is not watched is
 * compared routine by routine.
 */
static __always_inline bool ppp_check(const struct kcc_ppp *p, s64 num,
				      u32 c, u32 m, u32 outer, u32 prev,
				      const struct kcc_ppp_frame *top)
{
	if (p->slot_tag[num] != ppp_tag(m, outer))
		return false;
	if (!m)
		return true;
	if (p->ctx_inner[c] != KCC_NIL)
		return p->ctx_inner[c] == prev;
	return ppp_match(p, c, top, m);
}

/*
 * Walk the suffixes of the stack innermost first.  With @arr, add @inc
 * to arr[number * stride] of every watched one and return how many there
 * were; otherwise return the number of the suffix of @want + 1 routines
 * (KCC_NIL when it is not watched).
 */
static __always_inline u32 ppp_walk(struct kcc_ppp_run *r, u32 want,
				    u64 *arr, u32 stride, u64 inc)
{
	const struct kcc_ppp *p = r->p;
	const struct kcc_ppp_frame *top, *f;
	u32 d = r->depth, m, c, hits = 0, prev = KCC_NIL;
	bool count = !!arr;
	s64 n, num;
	s32 w;

	if (!d || d > r->stack_cap)
		return count ? 0 : KCC_NIL;
	top = &r->stack[d - 1];
	if (top->rid == KCC_NIL || p->w_callee[top->rid] == KCC_PPP_NONE)
		return count ? 0 : KCC_NIL;
	n = p->w_callee[top->rid];
	for (m = 0;; m++) {
		f = top - m;
		w = p->w_outer[(size_t)f->rid * PPP_K1 + m];
		if (w != KCC_PPP_NONE) {
			num = n + w;
			if (num >= 0 && num < p->range) {
				c = p->slot[num];
				if (ppp_check(p, num, c, m, f->rid, prev, top)) {
					if (!count && m == want)
						return (u32)num;
					if (count) {
						arr[(size_t)num * stride] += inc;
						hits++;
					}
					prev = c;
				} else {
					r->aliased += count;
					prev = KCC_NIL;
				}
			} else {
				prev = KCC_NIL;
			}
		} else {
			prev = KCC_NIL;
		}
		if (m == p->kmax || m + 1 >= d || m == want)
			break;
		if (f->eid == KCC_NIL)
			break;
		w = p->ew[(size_t)f->eid * KCC_PPP_MAX_K + m];
		if (w == KCC_PPP_NONE)
			break;
		n += w;
	}
	return count ? hits : KCC_NIL;
}

int kcc_ppp_set_ranges(struct kcc_ppp *p, const struct kcc_ppp_range *ranges,
		       u32 nranges)
{
	u32 i;

	if (!ranges || !nranges)
		return -EINVAL;
	for (i = 0; i < nranges; i++) {
		if (ranges[i].start >= ranges[i].end)
			return -EINVAL;
		if (i && ranges[i].start < ranges[i - 1].end)
			return -EINVAL;
	}
	p->ranges = ranges;
	p->nranges = nranges;
	return 0;
}

/* Binary search: the last range starting at or below @addr. */
bool kcc_ppp_resolve(const struct kcc_ppp *p, u64 addr, u64 *label)
{
	u32 lo = 0, hi = p->nranges;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (p->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->ranges[lo - 1].end)
		return false;
	*label = p->ranges[lo - 1].label;
	return true;
}

/*
 * The routine id of @label, and the labels [*lo, *hi) that have the same
 * one: the label alone, or with ranges the range that holds it (the gap
 * between two ranges when none does).
 */
static u32 ppp_routine_of(const struct kcc_ppp *p, u64 label, u64 *lo,
			  u64 *hi)
{
	u32 a = 0, b = p->nranges;

	if (!p->nranges) {
		*lo = label;
		*hi = label + 1;	/* ~0 wraps: an empty memo, never hit */
		return kcc_ppp_routine(p, label);
	}
	while (a < b) {
		u32 mid = a + (b - a) / 2;

		if (p->ranges[mid].start <= label)
			a = mid + 1;
		else
			b = mid;
	}
	if (a && label < p->ranges[a - 1].end) {
		*lo = p->ranges[a - 1].start;
		*hi = p->ranges[a - 1].end;
		return kcc_ppp_routine(p, p->ranges[a - 1].label);
	}
	*lo = a ? p->ranges[a - 1].end : 0;
	*hi = a < p->nranges ? p->ranges[a].start : ~0ull;
	return KCC_NIL;
}

void kcc_ppp_call_w(struct kcc_ppp_run *r, u64 label, u64 w)
{
	const struct kcc_ppp *p = r->p;
	struct kcc_ppp_frame *up, *fr;
	u32 d = r->depth, rid, eid, hits;

	if (w) {
		r->calls++;
		r->weight += w;
	}
	if (unlikely(d >= r->stack_cap)) {
		r->depth++;
		r->stack_drops += !!w;
		r->resid_calls += w;
		return;
	}
	up = d ? &r->stack[d - 1] : NULL;
	if (up && up->memo && label - up->memo_lo < up->memo_hi - up->memo_lo) {
		rid = up->memo_rid;
		eid = up->memo_eid;
	} else {
		u64 lo, hi;

		rid = ppp_routine_of(p, label, &lo, &hi);
		eid = KCC_NIL;
		if (up && up->rid != KCC_NIL && rid != KCC_NIL)
			eid = kcc_ppp_edge(p, up->rid, rid);
		if (up) {
			up->memo_lo = lo;
			up->memo_hi = hi;
			up->memo_rid = rid;
			up->memo_eid = eid;
			up->memo = 1;
		}
	}
	/*
	 * A frame pushed again for the same routine keeps its memo: it maps
	 * a callee label to that callee's routine and edge from this
	 * routine, which do not change.  A stack anchored again at every
	 * sample (kcc_ksf_enter()) then costs one compare a frame.
	 */
	fr = &r->stack[d];
	if (fr->rid != rid)
		fr->memo = 0;
	fr->rid = rid;
	fr->eid = eid;
	r->depth = d + 1;
	if (!w)
		return;
	hits = ppp_walk(r, KCC_NIL, r->counts, 1, w);
	r->matched += hits;
	if (!hits) {
		r->unwatched++;
		r->resid_calls += w;
	}
}

void kcc_ppp_call(struct kcc_ppp_run *r, u64 label)
{
	kcc_ppp_call_w(r, label, 1);
}

int kcc_ppp_return(struct kcc_ppp_run *r)
{
	if (!r->depth) {
		r->bad_returns++;
		return -EINVAL;
	}
	r->depth--;
	return 0;
}

int kcc_ppp_run_metrics(struct kcc_ppp_run *r, u64 *metrics, u32 nmetrics)
{
	if (!metrics || !nmetrics || nmetrics > KCC_PPP_MAX_METRICS)
		return -EINVAL;
	r->metrics = metrics;
	r->nmetrics = nmetrics;
	memset(metrics, 0, (size_t)r->p->range * nmetrics * sizeof(u64));
	return 0;
}

void kcc_ppp_charge(struct kcc_ppp_run *r, u32 metric, u64 delta)
{
	u32 hits;

	if (!r->metrics || !metric || metric > r->nmetrics)
		return;
	r->charged[metric - 1] += delta;
	hits = ppp_walk(r, KCC_NIL, r->metrics + metric - 1, r->nmetrics,
			delta);
	if (!hits)
		r->resid[metric - 1] += delta;
}

void kcc_ppp_export(const struct kcc_ppp_run *r, u64 *out)
{
	const struct kcc_ppp *p = r->p;
	u32 i, m;

	for (i = 0; i < p->nctx; i++) {
		u32 n = p->ctx_num[i];

		*out++ = r->counts[n];
		for (m = 0; m < r->nmetrics; m++)
			*out++ = r->metrics[(size_t)n * r->nmetrics + m];
	}
}

u32 kcc_ppp_lookup(struct kcc_ppp_run *r, u32 len)
{
	if (!len || len > PPP_K1)
		return KCC_NIL;
	return ppp_walk(r, len - 1, NULL, 0, 0);
}
