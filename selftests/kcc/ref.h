/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ref.h - what the kcc selftests compare the lbr/ core against: seeded
 * random traces and brute-force profiles computed straight from the
 * definitions of the k-CCF paper, with their own hash map so that a bug
 * in the core's forest cannot hide itself by appearing on both sides.
 *
 * A reference map stores labelled paths as (parent entry, label) pairs.
 * For the k-CCF the parent of a path is the path without its outermost
 * routine, so an entry chain read from an entry towards the root lists
 * the routines in calling order and the map has the shape of a k-CCF
 * tree; for the CCT the parent is the context without its innermost
 * routine.  Paths are compared with a forest by walking the forest from
 * its roots and looking every node up in the map.
 */
#ifndef KCC_SELFTEST_REF_H
#define KCC_SELFTEST_REF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcc_forest.h"

#define REF_NONE	0xffffffffu	/* parent of a root; no entry */
#define REF_SLAB	0xfffffffeu	/* parent of a k-SF slab root */
#define REF_RET		0xffffffffu	/* trace event: return */
#define REF_NOCAP	0xffffffffu	/* no depth cap */

static inline void *ref_alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "ref: out of memory (%zu bytes)\n", size);
		exit(1);
	}
	return p;
}

/* The kcc_forest memory block must be 8-byte aligned: calloc is. */
static inline void *ref_forest_new(struct kcc_forest *f, u32 capacity,
				   u32 nmetrics)
{
	size_t sz = kcc_forest_mem_size(capacity, nmetrics);
	void *mem = ref_alloc(sz);

	if (kcc_forest_init(f, mem, sz, capacity, nmetrics)) {
		fprintf(stderr, "ref: kcc_forest_init(%u) refused\n",
			capacity);
		exit(1);
	}
	return mem;
}

/* ---- deterministic randomness (splitmix64) ---------------------------- */

static inline u64 ref_rand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline u32 ref_below(u64 *s, u32 n)
{
	return (u32)(((ref_rand(s) >> 32) * (u64)n) >> 32);
}

/* Skewed towards 0: the minimum of @skew uniform draws in [0, n). */
static inline u32 ref_skewed(u64 *s, u32 n, u32 skew)
{
	u32 v = ref_below(s, n);

	while (--skew > 0) {
		u32 w = ref_below(s, n);

		if (w < v)
			v = w;
	}
	return v;
}

/*
 * Labels are spread over all 64 bits (id 0 is label 0) so that the core
 * is exercised with kernel-address-like labels; the multiplier is odd, so
 * labels are distinct and ref_id() gets the id back for messages.
 */
#define REF_LABEL_MUL	0xd6e8feb86659fd93ull

static inline u64 ref_label(u32 id)
{
	return (u64)id * REF_LABEL_MUL;
}

static inline u64 ref_id(u64 label)
{
	u64 inv = REF_LABEL_MUL;
	int i;

	for (i = 0; i < 6; i++)		/* Newton: inverse mod 2^64 */
		inv *= 2 - REF_LABEL_MUL * inv;
	return label * inv;
}

/* ---- traces ------------------------------------------------------------ */

struct ref_trace {
	u32 *ev;		/* routine id of a call, or REF_RET */
	size_t n;
	size_t cap;
	u32 nr;			/* routines: ids 0 .. nr - 1 */
	u32 max_depth;
	u64 calls;
	/* a routine called at depth 0 is also called below depth 0 */
	bool top_reentered;
};

static inline void ref_trace_add(struct ref_trace *t, u32 e)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->ev = realloc(t->ev, t->cap * sizeof(*t->ev));
		if (!t->ev) {
			fprintf(stderr, "ref: out of memory\n");
			exit(1);
		}
	}
	t->ev[t->n++] = e;
}

static inline void ref_trace_free(struct ref_trace *t)
{
	free(t->ev);
	memset(t, 0, sizeof(*t));
}

/* Depth, call count and top-level re-entry, from the events alone. */
static inline void ref_trace_scan(struct ref_trace *t)
{
	u8 *top = ref_alloc(t->nr), *deep = ref_alloc(t->nr);
	u32 d = 0, i;
	size_t j;

	t->max_depth = 0;
	t->calls = 0;
	for (j = 0; j < t->n; j++) {
		u32 e = t->ev[j];

		if (e == REF_RET) {
			d--;
			continue;
		}
		t->calls++;
		if (d == 0)
			top[e] = 1;
		else
			deep[e] = 1;
		if (++d > t->max_depth)
			t->max_depth = d;
	}
	t->top_reentered = false;
	for (i = 0; i < t->nr; i++)
		if (top[i] && deep[i])
			t->top_reentered = true;
	free(top);
	free(deep);
}

struct ref_gen {
	u32 nr;		/* routines, 2 .. 200 */
	u32 len;	/* events before the pending calls are closed */
	u32 maxd;	/* deepest context */
	u32 call_pct;	/* chance that a non-top event is a call */
	u32 skew;	/* popularity skew: 1 uniform, larger more skewed */
	u32 self_pct;	/* chance that a call is a direct recursion */
	bool dag;	/* callee id > caller id: no recursion, root 0 */
	bool forest;	/* top-level calls to any routine, not only 0 */
};

static inline void ref_gen_random(struct ref_gen *g, u64 *rng)
{
	u32 shape = ref_below(rng, 10);

	memset(g, 0, sizeof(*g));
	g->nr = 2 + ref_below(rng, 199);
	g->len = ref_below(rng, 5001);
	g->skew = 1 + ref_below(rng, 4);
	g->dag = ref_below(rng, 3) == 0;
	g->forest = ref_below(rng, 4) == 0;
	g->self_pct = ref_below(rng, 3) == 0 ? 10 + ref_below(rng, 50) : 0;
	if (shape == 0) {		/* tiny, empty included */
		g->len = ref_below(rng, 12);
		g->maxd = 1 + ref_below(rng, 5);
		g->call_pct = 50;
	} else if (shape <= 2) {	/* deep chains */
		g->maxd = 100 + ref_below(rng, 101);
		g->call_pct = 85 + ref_below(rng, 13);
		g->dag = false;
	} else {
		g->maxd = 1 + ref_below(rng, 40);
		g->call_pct = 35 + ref_below(rng, 35);
	}
}

/* A well-formed trace: every call returns, no return on an empty stack. */
static inline void ref_gen_trace(struct ref_trace *t, const struct ref_gen *g,
				 u64 *rng)
{
	u32 *stk = ref_alloc((g->maxd + 1) * sizeof(u32));
	u32 d = 0;

	memset(t, 0, sizeof(*t));
	t->nr = g->nr;
	while (t->n < g->len) {
		u32 callee;

		if (d == 0) {
			callee = g->forest ? ref_skewed(rng, g->nr, g->skew) : 0;
		} else if (d >= g->maxd || ref_below(rng, 100) >= g->call_pct) {
			ref_trace_add(t, REF_RET);
			d--;
			continue;
		} else if (g->dag) {
			u32 caller = stk[d - 1];

			if (caller == g->nr - 1) {
				ref_trace_add(t, REF_RET);
				d--;
				continue;
			}
			callee = caller + 1 +
				 ref_skewed(rng, g->nr - caller - 1, g->skew);
		} else if (ref_below(rng, 100) < g->self_pct) {
			callee = stk[d - 1];
		} else {
			callee = ref_skewed(rng, g->nr, g->skew);
		}
		ref_trace_add(t, callee);
		stk[d++] = callee;
	}
	while (d--)
		ref_trace_add(t, REF_RET);
	free(stk);
	ref_trace_scan(t);
}

/* ---- reference maps ------------------------------------------------------ */

struct ref_ent {
	u64 label;
	u32 parent;	/* entry index, REF_NONE or REF_SLAB */
	u32 len;	/* call edges: 0 for a root */
	u64 cnt;	/* activations */
	u64 full;	/* k-CCF: activations where the path is the whole context */
};

struct ref_map {
	struct ref_ent *e;
	u32 n;
	u32 cap;
	u32 *tab;	/* open addressing, entry index or REF_NONE */
	u32 mask;
};

static inline u64 ref_hash(u32 parent, u64 label)
{
	/* murmur3's finaliser: unrelated to the core's hash on purpose */
	u64 h = label ^ ((u64)parent * 0xff51afd7ed558ccdull);

	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

static inline void ref_map_init(struct ref_map *m)
{
	memset(m, 0, sizeof(*m));
	m->mask = 1023;
	m->tab = ref_alloc((m->mask + 1) * sizeof(u32));
	memset(m->tab, 0xff, (m->mask + 1) * sizeof(u32));
}

static inline void ref_map_free(struct ref_map *m)
{
	free(m->e);
	free(m->tab);
	memset(m, 0, sizeof(*m));
}

static inline u32 ref_map_find(const struct ref_map *m, u32 parent, u64 label)
{
	u32 i = (u32)ref_hash(parent, label) & m->mask;

	for (;; i = (i + 1) & m->mask) {
		u32 x = m->tab[i];

		if (x == REF_NONE)
			return REF_NONE;
		if (m->e[x].label == label && m->e[x].parent == parent)
			return x;
	}
}

static inline void ref_map_grow(struct ref_map *m)
{
	u32 nmask = 2 * m->mask + 1, x;

	free(m->tab);
	m->mask = nmask;
	m->tab = ref_alloc((nmask + 1) * sizeof(u32));
	memset(m->tab, 0xff, (nmask + 1) * sizeof(u32));
	for (x = 0; x < m->n; x++) {
		u32 i = (u32)ref_hash(m->e[x].parent, m->e[x].label) & nmask;

		while (m->tab[i] != REF_NONE)
			i = (i + 1) & nmask;
		m->tab[i] = x;
	}
}

static inline u32 ref_map_get(struct ref_map *m, u32 parent, u64 label)
{
	u32 x = ref_map_find(m, parent, label), i;
	struct ref_ent *e;

	if (x != REF_NONE)
		return x;
	if (2 * (m->n + 1) > m->mask)
		ref_map_grow(m);
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 1024;
		m->e = realloc(m->e, (size_t)m->cap * sizeof(*m->e));
		if (!m->e) {
			fprintf(stderr, "ref: out of memory\n");
			exit(1);
		}
	}
	x = m->n++;
	e = &m->e[x];
	memset(e, 0, sizeof(*e));
	e->label = label;
	e->parent = parent;
	e->len = parent >= REF_SLAB ? 0 : m->e[parent].len + 1;
	i = (u32)ref_hash(parent, label) & m->mask;
	while (m->tab[i] != REF_NONE)
		i = (i + 1) & m->mask;
	m->tab[i] = x;
	return x;
}

/* Entries that are paths of at most @maxlen call edges. */
static inline u32 ref_map_count(const struct ref_map *m, u32 maxlen)
{
	u32 x, n = 0;

	for (x = 0; x < m->n; x++)
		n += m->e[x].len <= maxlen;
	return n;
}

/*
 * Every path activated by the trace (Definitions 1 and 2): a call at
 * depth d activates, for q = 0 .. d - 1, its q-context, i.e. the last
 * q + 1 routines of the current context.  One map holds all lengths: the
 * count of a path does not depend on k, a k-CCF is the entries of length
 * at most k.  Calls deeper than @cap are left out, as if they (and their
 * returns) were not in the trace.
 */
static inline void ref_kccf(struct ref_map *m, const struct ref_trace *t,
			    u32 cap)
{
	u64 *ctx = ref_alloc(((size_t)t->max_depth + 1) * sizeof(u64));
	u32 d = 0, q;
	size_t j;

	ref_map_init(m);
	for (j = 0; j < t->n; j++) {
		u32 x = REF_NONE;

		if (t->ev[j] == REF_RET) {
			d--;
			continue;
		}
		ctx[d++] = ref_label(t->ev[j]);
		if (d > cap)
			continue;
		for (q = 0; q < d; q++) {
			x = ref_map_get(m, x, ctx[d - 1 - q]);
			m->e[x].cnt++;
		}
		m->e[x].full++;
	}
	free(ctx);
}

/* The CCT: one entry per distinct full context, counting activations. */
static inline void ref_cct(struct ref_map *m, const struct ref_trace *t,
			   u32 cap)
{
	u32 *stk = ref_alloc(((size_t)t->max_depth + 1) * sizeof(u32));
	u32 d = 0;
	size_t j;

	ref_map_init(m);
	for (j = 0; j < t->n; j++) {
		u32 x;

		if (t->ev[j] == REF_RET) {
			d--;
			continue;
		}
		if (d >= cap) {
			d++;
			continue;
		}
		x = ref_map_get(m, d ? stk[d - 1] : REF_NONE,
				ref_label(t->ev[j]));
		m->e[x].cnt++;
		stk[d++] = x;
	}
	free(stk);
}

/* Routine ids along an entry chain, from the entry towards its root. */
static inline void ref_map_path(const struct ref_map *m, u32 x, char *buf,
				size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (; x < REF_SLAB && o + 24 < len; x = m->e[x].parent)
		o += snprintf(buf + o, len - o, "%s%llu", o ? "," : "",
			      (unsigned long long)ref_id(m->e[x].label));
}

/* Routine ids from a forest node up to its root. */
static inline void ref_forest_path(const struct kcc_forest *f, u32 i,
				   char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (; o + 24 < len; i = kcc_forest_node(f, i)->parent) {
		o += snprintf(buf + o, len - o, "%s%llu", o ? "," : "",
			      (unsigned long long)
			      ref_id(kcc_forest_node(f, i)->label));
		if (kcc_is_root_parent(kcc_forest_node(f, i)->parent))
			break;
	}
}

#define REF_SUBSET	1	/* the forest may miss entries */
#define REF_AT_MOST	2	/* forest counts may be below the entry's */
#define REF_KINDS	4	/* slab roots map to REF_SLAB, top roots to NONE */

/*
 * Map the nodes of @f to the entries of @m (@ids: f->count slots, may be
 * NULL) and compare activation counters.  Without flags the forest must
 * hold exactly the entries of length <= @maxlen, each once, with equal
 * counts.  Returns 0 or -1 with the first difference in @why.
 */
static inline int ref_match(const struct kcc_forest *f, const struct ref_map *m,
			    u32 maxlen, unsigned int flags, u32 *ids,
			    char *why, size_t whylen)
{
	u32 *map = ids ? ids : ref_alloc(((size_t)f->count + 1) * sizeof(u32));
	u8 *seen = ref_alloc((size_t)m->n + 1);
	u32 i, nodes = 0, want;
	char path[160];
	int ret = -1;

	for (i = 0; i < f->count; i++) {
		const struct kcc_node *n = kcc_forest_node(f, i);
		u32 p = n->parent, key, x;
		u64 c = n->ctr[KCC_CTR_CALLS];

		map[i] = REF_NONE;
		if (p == KCC_FREE)
			continue;
		nodes++;
		if (p == KCC_ROOT_SLAB && (flags & REF_KINDS)) {
			key = REF_SLAB;
		} else if (kcc_is_root_parent(p)) {
			key = REF_NONE;
		} else if (p >= i) {
			snprintf(why, whylen, "node %u stored before its parent %u",
				 i, p);
			goto out;
		} else {
			key = map[p];
			if (key == REF_NONE)
				goto extra;
		}
		x = ref_map_find(m, key, n->label);
		if (x == REF_NONE || m->e[x].len > maxlen)
			goto extra;
		if (seen[x]) {
			ref_forest_path(f, i, path, sizeof(path));
			snprintf(why, whylen, "path <%s> held twice", path);
			goto out;
		}
		seen[x] = 1;
		if (c != m->e[x].cnt &&
		    !((flags & REF_AT_MOST) && c < m->e[x].cnt)) {
			ref_forest_path(f, i, path, sizeof(path));
			snprintf(why, whylen, "path <%s>: count %llu, expected %llu",
				 path, (unsigned long long)c,
				 (unsigned long long)m->e[x].cnt);
			goto out;
		}
		map[i] = x;
		continue;
extra:
		ref_forest_path(f, i, path, sizeof(path));
		snprintf(why, whylen, "path <%s> (count %llu) should not be there",
			 path, (unsigned long long)c);
		goto out;
	}
	want = ref_map_count(m, maxlen);
	if (!(flags & REF_SUBSET) && nodes != want) {
		for (i = 0; i < m->n; i++)
			if (!seen[i] && m->e[i].len <= maxlen)
				break;
		ref_map_path(m, i < m->n ? i : 0, path, sizeof(path));
		snprintf(why, whylen, "%u nodes, expected %u; missing <%s> (count %llu)",
			 nodes, want, path,
			 i < m->n ? (unsigned long long)m->e[i].cnt : 0ull);
		goto out;
	}
	ret = 0;
out:
	if (!ids)
		free(map);
	free(seen);
	return ret;
}

/*
 * A forest copied into a map (root kinds kept apart), e.g. an unbounded
 * k-SF as the reference for a bounded one.  @ids as for ref_match().
 */
static inline int ref_from_forest(struct ref_map *m, const struct kcc_forest *f,
				  u32 *ids)
{
	u32 i;

	ref_map_init(m);
	for (i = 0; i < f->count; i++) {
		const struct kcc_node *n = kcc_forest_node(f, i);
		u32 key;

		ids[i] = REF_NONE;
		if (n->parent == KCC_FREE)
			continue;
		if (n->parent == KCC_ROOT_SLAB)
			key = REF_SLAB;
		else if (kcc_is_root_parent(n->parent))
			key = REF_NONE;
		else if (n->parent < i && ids[n->parent] != REF_NONE)
			key = ids[n->parent];
		else
			return -1;
		ids[i] = ref_map_get(m, key, n->label);
		m->e[ids[i]].cnt += n->ctr[KCC_CTR_CALLS];
	}
	return 0;
}

/* ---- running traces through the core ------------------------------------ */

struct ref_ksf {
	struct kcc_forest f;
	struct kcc_ksf s;
	void *mem;
	struct kcc_frame *stack;
};

/* Build a k-SF (or with k = KCC_K_INF the CCT) of @t in a fresh pool. */
static inline void ref_ksf_build(struct ref_ksf *r, const struct ref_trace *t,
				 u32 k, u32 capacity, u32 stack_cap)
{
	size_t j;

	r->mem = ref_forest_new(&r->f, capacity, 0);
	r->stack = ref_alloc((size_t)stack_cap * sizeof(*r->stack));
	if (kcc_ksf_init(&r->s, &r->f, k, r->stack, stack_cap)) {
		fprintf(stderr, "ref: kcc_ksf_init(k=%u) refused\n", k);
		exit(1);
	}
	for (j = 0; j < t->n; j++) {
		if (t->ev[j] == REF_RET)
			kcc_ksf_return(&r->s);
		else
			kcc_ksf_call(&r->s, ref_label(t->ev[j]));
	}
}

static inline void ref_ksf_free(struct ref_ksf *r)
{
	free(r->mem);
	free(r->stack);
	memset(r, 0, sizeof(*r));
}

#endif /* KCC_SELFTEST_REF_H */
