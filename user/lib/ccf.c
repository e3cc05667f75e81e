// SPDX-License-Identifier: GPL-2.0
/*
 * ccf.c - from a trace to a k-CCF or an HCCT, and out as text.
 *
 * A k-CCF is built as the paper builds it: replay the trace into a k-SF
 * (or a CCT) online, then apply inv_k.  The source pool grows without a
 * replay: nodes are stored after their parents, so re-inserting them in
 * index order into a bigger forest gives every node its old index back
 * and the shadow stack of the builder stays valid.  The k-CCF pool is
 * rebuilt from the source when inv_k runs out of room, which costs O(kn)
 * per attempt and happens O(log n) times.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ccf.h"

#define POOL_MIN	1024u
#define POOL_MAX	0xfffff000u	/* below the core's KCC_FREE */

static bool is_root(const struct kcc_forest *f, uint32_t i)
{
	return kcc_is_root_parent(kcc_forest_node(f, i)->parent);
}

static uint64_t calls_of(const struct kcc_forest *f, uint32_t i)
{
	return kcc_forest_ctr(f, i)[KCC_CTR_CALLS];
}

void pool__exit(struct pool *p)
{
	free(p->mem);
	p->mem = NULL;
	memset(&p->f, 0, sizeof(p->f));
}

static int pool__init_metrics(struct pool *p, uint32_t capacity,
			      uint32_t nmetrics)
{
	size_t size = kcc_forest_mem_size(capacity, nmetrics);

	p->mem = malloc(size);
	if (!p->mem)
		return -ENOMEM;
	return kcc_forest_init(&p->f, p->mem, size, capacity, nmetrics);
}

static int pool__init(struct pool *p, uint32_t capacity)
{
	return pool__init_metrics(p, capacity, 0);
}

/*
 * Copy the nodes of @src with @keep set (all when NULL) into a new pool of
 * @capacity nodes.  A kept node's parent must be kept.  Without @keep
 * every node keeps its index.
 */
static int pool__copy(struct pool *dst, const struct kcc_forest *src,
		      const uint8_t *keep, uint32_t capacity)
{
	uint32_t *map = NULL, i;
	int ret;

	ret = pool__init(dst, capacity);
	if (ret)
		return ret;
	if (keep) {
		map = malloc(((size_t)src->count + 1) * sizeof(*map));
		if (!map) {
			pool__exit(dst);
			return -ENOMEM;
		}
	}
	for (i = 0; i < src->count; i++) {
		const struct kcc_node *n = kcc_forest_node(src, i);
		uint32_t parent = n->parent, j;

		if (keep && !keep[i])
			continue;
		if (!kcc_is_root_parent(parent) && map)
			parent = map[parent];
		j = kcc_forest_get(&dst->f, parent, n->label);
		if (j == KCC_NIL || (!keep && j != i)) {
			free(map);
			pool__exit(dst);
			return -EFAULT;
		}
		kcc_forest_add_ctrs(&dst->f, j, src, i);
		if (map)
			map[i] = j;
	}
	free(map);
	return 0;
}

static int pool__grow(struct pool *p)
{
	struct pool bigger;
	uint32_t cap;
	int ret;

	if (p->f.capacity >= POOL_MAX)
		return -ENOSPC;
	cap = p->f.capacity > POOL_MAX / 2 ? POOL_MAX : p->f.capacity * 2;
	ret = pool__copy(&bigger, &p->f, NULL, cap);
	if (ret)
		return ret;
	pool__exit(p);
	*p = bigger;
	return 0;
}

int pool__build_ksf(struct pool *p, const struct trace *t, uint32_t k,
		    uint32_t max_nodes, uint64_t *lost_calls)
{
	struct kcc_frame *stack;
	struct kcc_ksf s;
	uint32_t cap;
	uint64_t i;
	int ret;

	/* The trace is balanced and its depth known: the stack is exact. */
	cap = t->max_depth > 0xfffffffeu ? 0xfffffffeu :
	      (uint32_t)(t->max_depth ? t->max_depth : 1);
	stack = malloc((size_t)cap * sizeof(*stack));
	if (!stack)
		return -ENOMEM;

	ret = pool__init(p, max_nodes ? max_nodes : POOL_MIN);
	if (ret)
		goto cleanup;
	ret = kcc_ksf_init(&s, &p->f, k, stack, cap);
	if (ret)
		goto cleanup;

	for (i = 0; i < t->nr; i++) {
		uint32_t e = t->ev[i];

		if (e == TRACE_RET) {
			kcc_ksf_return(&s);
			continue;
		}
		/* A call creates at most two nodes: t and b. */
		if (unlikely(p->f.capacity - p->f.count < 2) && !max_nodes) {
			ret = pool__grow(p);
			if (ret && ret != -ENOSPC)
				goto cleanup;
		}
		kcc_ksf_call(&s, e);
	}
	if (lost_calls)
		*lost_calls = s.lost_calls + s.stack_drops;
	ret = 0;
cleanup:
	if (ret)
		pool__exit(p);
	free(stack);
	return ret;
}

uint32_t pool__roots(const struct pool *p)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->f.count; i++)
		n += is_root(&p->f, i);
	return n;
}

int ccf__build(struct ccf *c, const struct trace *t,
	       const struct ccf_opts *o)
{
	uint32_t cap;
	int ret;

	memset(c, 0, sizeof(*c));
	c->trace = t;
	c->k = o->k;
	c->max_nodes = o->max_nodes;
	/* inv_k needs k <= k'; a 0-SF does not exist, a 1-SF serves k = 0. */
	c->src_k = o->from_cct ? KCC_K_INF : (o->k ? o->k : 1);

	ret = pool__build_ksf(&c->src, t, c->src_k, o->max_nodes,
			      &c->lost_calls);
	if (ret)
		return ret;

	if (o->max_nodes) {
		cap = o->max_nodes;
	} else {
		cap = c->src.f.count < POOL_MIN ? POOL_MIN : c->src.f.count;
		if (cap <= POOL_MAX / 2)
			cap *= 2;
	}
	for (;;) {
		ret = pool__init(&c->kccf, cap);
		if (ret)
			goto fail;
		free(c->witness);
		c->witness = malloc((size_t)cap * sizeof(*c->witness));
		if (!c->witness) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = kcc_inv_k(&c->src.f, c->src_k, c->k, &c->kccf.f,
				c->witness);
		if (ret != -ENOSPC || o->max_nodes || cap >= POOL_MAX)
			break;
		pool__exit(&c->kccf);
		cap = cap > POOL_MAX / 2 ? POOL_MAX : cap * 2;
	}
	c->kccf_drops = c->kccf.f.drops;
	if (ret && ret != -ENOSPC)
		goto fail;
	c->kccf_nodes = c->kccf.f.count;
	c->shown = c->kccf.f.count;
	return 0;

fail:
	ccf__exit(c);
	return ret;
}

void ccf__exit(struct ccf *c)
{
	pool__exit(&c->src);
	pool__exit(&c->kccf);
	free(c->keep);
	free(c->chain_len);
	free(c->chain_leaf);
	free(c->witness);
	c->keep = NULL;
	c->chain_len = NULL;
	c->chain_leaf = NULL;
	c->witness = NULL;
}

int ccf__prune_similar(struct ccf *c, uint32_t x_bp)
{
	const struct kcc_forest *f = &c->kccf.f;
	uint32_t n = f->count ? f->count : 1, kept, i, j;
	uint8_t *keep = malloc(n);
	uint32_t *scratch = malloc((size_t)n * sizeof(*scratch));
	struct pool pruned;
	int ret = -ENOMEM;

	if (!keep || !scratch)
		goto cleanup;
	kept = kcc_prune_similar(f, KCC_CTR_CALLS, x_bp, keep, scratch);
	/*
	 * Materialised rather than masked, so that chain pruning, when
	 * asked for too, sees the similar forest's leaves.
	 */
	ret = pool__copy(&pruned, f, keep, kept ? kept : 1);
	if (ret)
		goto cleanup;
	/* The copy keeps the kept nodes in order: witnesses move down. */
	for (i = 0, j = 0; i < f->count; i++)
		if (keep[i])
			c->witness[j++] = c->witness[i];
	pool__exit(&c->kccf);
	c->kccf = pruned;
	c->shown = c->kccf.f.count;
	c->pruned = true;
cleanup:
	free(keep);
	free(scratch);
	return ret;
}

int ccf__prune_chains(struct ccf *c)
{
	const struct kcc_forest *f = &c->kccf.f;
	uint32_t n = f->count ? f->count : 1;
	uint32_t *scratch = malloc(2 * (size_t)n * sizeof(*scratch));
	int ret = -ENOMEM;

	free(c->keep);
	free(c->chain_len);
	free(c->chain_leaf);
	c->keep = malloc(n);
	c->chain_len = malloc((size_t)n * sizeof(*c->chain_len));
	c->chain_leaf = malloc((size_t)n * sizeof(*c->chain_leaf));
	if (!c->keep || !c->chain_len || !c->chain_leaf || !scratch)
		goto cleanup;
	c->shown = kcc_prune_chains(f, c->keep, c->chain_len, c->chain_leaf,
				    scratch);
	c->pruned = true;
	ret = 0;
cleanup:
	free(scratch);
	return ret;
}

/* ---- printing ------------------------------------------------------------ */

/*
 * Every node's path as one string, built from its parent's (stored
 * earlier): the k-CCF spells a node's path from the node to its root
 * (outermost caller first), the HCCT from the root down to the node.
 */
struct paths {
	char *arena;
	size_t *off;
	uint32_t *nroutines;
};

static void paths__exit(struct paths *ps)
{
	free(ps->arena);
	free(ps->off);
	free(ps->nroutines);
}

static int paths__build(struct paths *ps, const struct kcc_forest *f,
			const struct symtab *st, bool root_first)
{
	size_t *len, total = 0;
	uint32_t i, n = f->count ? f->count : 1;
	int ret = -ENOMEM;

	memset(ps, 0, sizeof(*ps));
	len = malloc((size_t)n * sizeof(*len));
	ps->off = malloc((size_t)n * sizeof(*ps->off));
	ps->nroutines = malloc((size_t)n * sizeof(*ps->nroutines));
	if (!len || !ps->off || !ps->nroutines)
		goto cleanup;

	for (i = 0; i < f->count; i++) {
		const struct kcc_node *nd = kcc_forest_node(f, i);

		len[i] = strlen(symtab__name(st, nd->label));
		ps->nroutines[i] = 1;
		if (!kcc_is_root_parent(nd->parent)) {
			len[i] += 1 + len[nd->parent];
			ps->nroutines[i] += ps->nroutines[nd->parent];
		}
		ps->off[i] = total;
		total += len[i] + 1;
		if (total < len[i])
			goto cleanup;
	}
	ps->arena = malloc(total ? total : 1);
	if (!ps->arena)
		goto cleanup;

	for (i = 0; i < f->count; i++) {
		const struct kcc_node *nd = kcc_forest_node(f, i);
		const char *name = symtab__name(st, nd->label);
		size_t nlen = strlen(name);
		char *s = ps->arena + ps->off[i];

		if (kcc_is_root_parent(nd->parent)) {
			memcpy(s, name, nlen + 1);
		} else if (root_first) {
			size_t plen = len[i] - nlen - 1;

			memcpy(s, ps->arena + ps->off[nd->parent], plen);
			s[plen] = ';';
			memcpy(s + plen + 1, name, nlen + 1);
		} else {
			/* the name is followed by ";" and the rest of the path: NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
			memcpy(s, name, nlen);
			s[nlen] = ';';
			memcpy(s + nlen + 1, ps->arena + ps->off[nd->parent],
			       len[i] - nlen);
		}
	}
	ret = 0;
cleanup:
	free(len);
	if (ret)
		paths__exit(ps);
	return ret;
}

static int paths__cmp(const void *a, const void *b, void *arg)
{
	const struct paths *ps = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (ps->nroutines[x] != ps->nroutines[y])
		return ps->nroutines[x] < ps->nroutines[y] ? -1 : 1;
	return strcmp(ps->arena + ps->off[x], ps->arena + ps->off[y]);
}

/*
 * "<ctr[0]>\t<path>" per node with @keep set, in the CLI's order; with
 * @second, "<ctr[0]>\t<ctr[1]>\t<path>".
 */
static int paths__print(const struct kcc_forest *f, const struct symtab *st,
			const uint8_t *keep, bool root_first, bool second,
			FILE *out)
{
	struct paths ps;
	uint32_t *idx, i, n = 0;
	int ret;

	ret = paths__build(&ps, f, st, root_first);
	if (ret)
		return ret;
	idx = malloc(((size_t)f->count + 1) * sizeof(*idx));
	if (!idx) {
		paths__exit(&ps);
		return -ENOMEM;
	}
	for (i = 0; i < f->count; i++)
		if (!keep || keep[i])
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), paths__cmp, &ps);
	for (i = 0; i < n; i++) {
		fprintf(out, "%" PRIu64 "\t", calls_of(f, idx[i]));
		if (second)
			fprintf(out, "%" PRIu64 "\t",
				kcc_forest_ctr(f, idx[i])[1]);
		fprintf(out, "%s\n", ps.arena + ps.off[idx[i]]);
	}
	free(idx);
	paths__exit(&ps);
	return 0;
}

/*
 * Sorting a large k-CCF by path string spends its time in strcmp over
 * long shared prefixes.  Two paths with as many routines compare as their
 * first differing routine does, provided no name contains ';': inside
 * the path a name is followed by ';', at its end by NUL, so one rank of
 * the names for each terminator turns every comparison into integer
 * compares along the two parent chains, and the strings are never built.
 */
struct rank_ctx {
	const struct kcc_forest *f;
	const struct symtab *st;
	const uint32_t *nroutines;	/* per node */
	uint32_t *rank_mid;		/* per symbol, as "name;" */
	uint32_t *rank_end;		/* per symbol, as "name" */
};

static int name_cmp_mid(const void *a, const void *b, void *arg)
{
	const struct symtab *st = arg;
	const unsigned char *x = (const void *)symtab__name(st, *(const uint32_t *)a);
	const unsigned char *y = (const void *)symtab__name(st, *(const uint32_t *)b);

	for (;; x++, y++) {
		unsigned char cx = *x ? *x : ';', cy = *y ? *y : ';';

		if (cx != cy)
			return cx < cy ? -1 : 1;
		if (!*x || !*y)
			return 0;
	}
}

static int name_cmp_end(const void *a, const void *b, void *arg)
{
	const struct symtab *st = arg;

	return strcmp(symtab__name(st, *(const uint32_t *)a),
		      symtab__name(st, *(const uint32_t *)b));
}

static int rank_cmp(const void *a, const void *b, void *arg)
{
	const struct rank_ctx *rc = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (rc->nroutines[x] != rc->nroutines[y])
		return rc->nroutines[x] < rc->nroutines[y] ? -1 : 1;
	while (x != y) {
		const struct kcc_node *nx = kcc_forest_node(rc->f, x);
		const struct kcc_node *ny = kcc_forest_node(rc->f, y);

		if (nx->label != ny->label) {
			const uint32_t *r = kcc_is_root_parent(nx->parent) ?
					    rc->rank_end : rc->rank_mid;

			return r[nx->label] < r[ny->label] ? -1 : 1;
		}
		if (kcc_is_root_parent(nx->parent))
			break;
		x = nx->parent;
		y = ny->parent;
	}
	return 0;
}

/*
 * The length and the ranks of the first routines packed into one integer
 * that orders like the paths; only equal keys need the parent chains.
 */
struct path_key {
	uint64_t key;
	uint32_t idx;
};

static int key_cmp(const void *a, const void *b, void *arg)
{
	const struct path_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return rank_cmp(&x->idx, &y->idx, arg);
}

#define KEY_LEN_BITS	20

static uint64_t path_key(const struct rank_ctx *rc, uint32_t v, uint32_t bits)
{
	uint32_t len = rc->nroutines[v], room = 64 - KEY_LEN_BITS;
	uint64_t key;

	/* Saturating keeps the order: ties fall back to rank_cmp(). */
	key = len < (1u << KEY_LEN_BITS) ? len : (1u << KEY_LEN_BITS) - 1;
	while (room >= bits) {
		const struct kcc_node *nd = kcc_forest_node(rc->f, v);
		bool last = kcc_is_root_parent(nd->parent);

		key = key << bits |
		      (last ? rc->rank_end : rc->rank_mid)[nd->label];
		room -= bits;
		if (last)
			break;
		v = nd->parent;
	}
	return key << room;
}

static int ranks__build(struct rank_ctx *rc)
{
	uint32_t n = symtab__nr(rc->st), i, *ids;

	rc->rank_mid = malloc(((size_t)n + 1) * sizeof(uint32_t));
	rc->rank_end = malloc(((size_t)n + 1) * sizeof(uint32_t));
	ids = malloc(((size_t)n + 1) * sizeof(*ids));
	if (!rc->rank_mid || !rc->rank_end || !ids) {
		free(ids);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		ids[i] = i;
	qsort_r(ids, n, sizeof(*ids), name_cmp_mid, (void *)rc->st);
	for (i = 0; i < n; i++)
		rc->rank_mid[ids[i]] = i;
	qsort_r(ids, n, sizeof(*ids), name_cmp_end, (void *)rc->st);
	for (i = 0; i < n; i++)
		rc->rank_end[ids[i]] = i;
	free(ids);
	return 0;
}

int ccf__print_paths(const struct ccf *c, FILE *out)
{
	const struct kcc_forest *f = &c->kccf.f;
	const struct symtab *st = &c->trace->syms;
	struct rank_ctx rc = { .f = f, .st = st };
	uint32_t *nroutines, i, n = 0, bits = 1;
	struct path_key *idx;
	int ret = -ENOMEM;

	for (i = 0; i < symtab__nr(st); i++)
		if (strchr(symtab__name(st, i), ';'))
			return paths__print(f, st, c->keep, false, false, out);

	nroutines = malloc(((size_t)f->count + 1) * sizeof(*nroutines));
	idx = malloc(((size_t)f->count + 1) * sizeof(*idx));
	if (!nroutines || !idx || ranks__build(&rc))
		goto cleanup;
	for (i = 0; i < f->count; i++) {
		uint32_t p = kcc_forest_node(f, i)->parent;

		nroutines[i] = kcc_is_root_parent(p) ? 1 : nroutines[p] + 1;
	}
	rc.nroutines = nroutines;
	while (bits < 32 && (1ull << bits) < symtab__nr(st))
		bits++;
	for (i = 0; i < f->count; i++) {
		if (c->keep && !c->keep[i])
			continue;
		idx[n].idx = i;
		idx[n++].key = path_key(&rc, i, bits);
	}
	qsort_r(idx, n, sizeof(*idx), key_cmp, &rc);

	for (i = 0; i < n; i++) {
		uint32_t v = idx[i].idx;

		fprintf(out, "%" PRIu64 "\t", calls_of(f, v));
		for (;;) {
			const struct kcc_node *nd = kcc_forest_node(f, v);

			fputs_unlocked(symtab__name(st, nd->label), out);
			if (kcc_is_root_parent(nd->parent))
				break;
			putc_unlocked(';', out);
			v = nd->parent;
		}
		putc_unlocked('\n', out);
	}
	ret = 0;
cleanup:
	free(nroutines);
	free(idx);
	free(rc.rank_mid);
	free(rc.rank_end);
	return ret;
}

struct tree_ctx {
	const struct kcc_forest *f;
	const struct symtab *st;
};

/* Hottest first; ties by name, then by index to stay deterministic. */
static int tree__cmp(const void *a, const void *b, void *arg)
{
	const struct tree_ctx *tc = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t cx = calls_of(tc->f, x), cy = calls_of(tc->f, y);
	int r;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	r = strcmp(symtab__name(tc->st, kcc_forest_node(tc->f, x)->label),
		   symtab__name(tc->st, kcc_forest_node(tc->f, y)->label));
	if (r)
		return r;
	return x < y ? -1 : x > y;
}

/*
 * " (+N pruned: outermost;...;caller)" for chain head @v: the pruned
 * nodes sit at levels L + 1 .. L + N below the head at level L, and the
 * ancestors of the leaf's witness in the source forest spell them (the
 * witness joined its reversed root path into the k-CCF to make the
 * leaf), outermost first as in the paths format.
 */
static void chain__print(const struct ccf *c, uint32_t v, FILE *out)
{
	const struct kcc_forest *f = &c->kccf.f, *src = &c->src.f;
	uint32_t n = c->chain_len[v], u = c->witness[c->chain_leaf[v]];
	uint32_t level = kcc_forest_level(f, v), q, *up;

	fprintf(out, " (+%" PRIu32 " pruned:", n);
	up = malloc(((size_t)n + 1) * sizeof(*up));
	if (!up) {
		fputs(" ?)", out);
		return;
	}
	for (q = 0; q <= level + n; q++) {
		if (q > level)
			up[q - level - 1] = u;
		u = kcc_forest_node(src, u)->parent;
	}
	for (q = n; q-- > 0;)
		fprintf(out, "%s%s", q + 1 == n ? " " : ";",
			symtab__name(&c->trace->syms,
				     kcc_forest_node(src, up[q])->label));
	fputc(')', out);
	free(up);
}

int ccf__print_tree(const struct ccf *c, FILE *out)
{
	const struct kcc_forest *f = &c->kccf.f;
	struct tree_ctx tc = { .f = f, .st = &c->trace->syms };
	uint32_t n = f->count, i, nroots = 0, sp = 0;
	/* first[p]..first[p + 1] index p's children in kids; roots at n. */
	uint32_t *first, *kids, *fill, *stack, *depth;
	int ret = -ENOMEM;

	first = calloc((size_t)n + 2, sizeof(*first));
	kids = malloc(((size_t)n + 1) * sizeof(*kids));
	fill = malloc(((size_t)n + 2) * sizeof(*fill));
	stack = malloc(((size_t)n + 1) * sizeof(*stack));
	depth = malloc(((size_t)n + 1) * sizeof(*depth));
	if (!first || !kids || !fill || !stack || !depth)
		goto cleanup;

	for (i = 0; i < n; i++) {
		uint32_t p = kcc_forest_node(f, i)->parent;

		if (c->keep && !c->keep[i])
			continue;
		first[kcc_is_root_parent(p) ? n : p]++;
	}
	for (i = 0, sp = 0; i <= n; i++) {
		uint32_t cnt = first[i];

		first[i] = sp;
		fill[i] = sp;
		sp += cnt;
	}
	first[n + 1] = sp;
	for (i = 0; i < n; i++) {
		uint32_t p = kcc_forest_node(f, i)->parent;

		if (c->keep && !c->keep[i])
			continue;
		kids[fill[kcc_is_root_parent(p) ? n : p]++] = i;
	}
	for (i = 0; i <= n; i++)
		qsort_r(kids + first[i], first[i + 1] - first[i],
			sizeof(*kids), tree__cmp, &tc);

	/* Depth first, explicitly: an infinite-k tree is as deep as the trace. */
	nroots = first[n + 1] - first[n];
	sp = 0;
	for (i = nroots; i-- > 0;) {
		stack[sp] = kids[first[n] + i];
		depth[sp++] = 0;
	}
	while (sp) {
		uint32_t v = stack[--sp], d = depth[sp], j;

		fprintf(out, "%" PRIu64 "\t%*s%s", calls_of(f, v), (int)(2 * d),
			"", symtab__name(tc.st, kcc_forest_node(f, v)->label));
		if (c->chain_len && c->chain_len[v] && c->expand_chains)
			chain__print(c, v, out);
		else if (c->chain_len && c->chain_len[v])
			fprintf(out, " (+%" PRIu32 " pruned)", c->chain_len[v]);
		fputc('\n', out);
		for (j = first[v + 1]; j-- > first[v];) {
			stack[sp] = kids[j];
			depth[sp++] = d + 1;
		}
	}
	ret = 0;
cleanup:
	free(first);
	free(kids);
	free(fill);
	free(stack);
	free(depth);
	return ret;
}

int ccf__print_stats(const struct ccf *c, FILE *out)
{
	const struct trace *t = c->trace;
	uint32_t ksf_k = c->k ? c->k : 1;
	struct pool cct = { 0 }, ksf = { 0 };
	const struct pool *cctp, *ksfp;
	int ret;

	/* Reuse the source forest for whichever of the two it already is. */
	if (c->src_k == KCC_K_INF) {
		cctp = &c->src;
	} else {
		ret = pool__build_ksf(&cct, t, KCC_K_INF, c->max_nodes, NULL);
		if (ret)
			goto cleanup;
		cctp = &cct;
	}
	if (c->src_k == ksf_k) {
		ksfp = &c->src;
	} else if (ksf_k == KCC_K_INF) {
		ksfp = cctp;
	} else {
		ret = pool__build_ksf(&ksf, t, ksf_k, c->max_nodes, NULL);
		if (ret)
			goto cleanup;
		ksfp = &ksf;
	}

	fprintf(out, "events: %" PRIu64 "\n", t->calls + t->returns);
	fprintf(out, "calls: %" PRIu64 "\n", t->calls);
	fprintf(out, "returns: %" PRIu64 "\n", t->returns);
	fprintf(out, "routines: %" PRIu32 "\n", t->routines);
	fprintf(out, "max_depth: %" PRIu64 "\n", t->max_depth);
	fprintf(out, "cct_nodes: %" PRIu32 "\n", cctp->f.count);
	fprintf(out, "ksf_nodes: %" PRIu32 "\n", ksfp->f.count);
	fprintf(out, "kccf_nodes: %" PRIu32 "\n", c->kccf_nodes);
	fprintf(out, "ksf_trees: %" PRIu32 "\n", pool__roots(ksfp));
	fprintf(out, "bytes_per_node: %.2f\n", ksfp->f.count ?
		(double)kcc_forest_mem_size(ksfp->f.count, 0) / ksfp->f.count :
		0.0);
	/* A pruned view also says how much of the k-CCF it shows. */
	if (c->pruned)
		fprintf(out, "kccf_shown: %" PRIu32 "\n", c->shown);
	ret = 0;
cleanup:
	pool__exit(&cct);
	pool__exit(&ksf);
	return ret;
}

/* ---- hot calling context tree ----------------------------------------- */

static int hcct__replay(struct hcct *hc, const struct trace *t, uint32_t cap)
{
	size_t size = kcc_hcct_mem_size(cap, hc->m);
	uint64_t i;
	int ret;

	free(hc->mem);
	hc->mem = malloc(size);
	if (!hc->mem)
		return -ENOMEM;
	ret = kcc_hcct_init(&hc->h, hc->mem, size, cap, hc->m);
	if (ret)
		return ret;
	for (i = 0; i < t->nr; i++) {
		uint32_t e = t->ev[i];

		if (e == TRACE_RET) {
			kcc_hcct_return(&hc->h);
		} else {
			kcc_hcct_call(&hc->h, e);
			if (unlikely(hc->h.drops))
				return -ENOSPC;
		}
	}
	return 0;
}

int hcct__build(struct hcct *hc, const struct trace *t, uint32_t phi_ppm,
		uint32_t m)
{
	uint64_t want;
	uint32_t cap, *scratch = NULL;
	int ret;

	memset(hc, 0, sizeof(*hc));
	hc->phi_ppm = phi_ppm;
	hc->m = m;

	/*
	 * The MCCT holds the monitored contexts, their ancestors and the
	 * pending activations; start from m plus the deepest stack and
	 * double when the tree needs more.
	 */
	want = 2 * (uint64_t)m + t->max_depth + POOL_MIN;
	cap = want > POOL_MAX ? POOL_MAX : (uint32_t)want;
	for (;;) {
		ret = hcct__replay(hc, t, cap);
		if (ret != -ENOSPC)
			break;
		if (cap >= POOL_MAX)
			goto fail;
		cap = cap > POOL_MAX / 2 ? POOL_MAX : cap * 2;
	}
	if (ret)
		goto fail;

	/* ctr[1]: the guaranteed count, estimate minus error. */
	ret = pool__init_metrics(&hc->hot, hc->h.f.count ? hc->h.f.count : 1,
				 1);
	if (ret)
		goto fail;
	scratch = malloc(2 * ((size_t)hc->h.f.count + 1) * sizeof(*scratch));
	if (!scratch) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = kcc_hcct_export(&hc->h, phi_ppm, &hc->hot.f, scratch);
	free(scratch);
	if (ret < 0)
		goto fail;
	hc->nhot = ret;
	hc->threshold = kcc_hcct_threshold(&hc->h, phi_ppm);
	return 0;

fail:
	hcct__exit(hc);
	return ret;
}

int hcct__print(const struct hcct *hc, const struct symtab *st,
		bool guaranteed, FILE *out)
{
	const struct kcc_forest *f = &hc->hot.f;
	int ret = paths__print(f, st, NULL, true, guaranteed, out);
	uint32_t i, sure = 0;

	if (ret)
		return ret;
	fprintf(out, "# N=%" PRIu64 " threshold=%" PRIu64 " hot=%d counters=%" PRIu32,
		hc->h.n, hc->threshold, hc->nhot, hc->m);
	if (guaranteed) {
		/* Hot for sure: even the guaranteed count reaches it. */
		for (i = 0; i < f->count; i++)
			sure += calls_of(f, i) >= hc->threshold &&
				kcc_forest_ctr(f, i)[1] >= hc->threshold;
		fprintf(out, " sure=%" PRIu32, sure);
	}
	fputc('\n', out);
	return 0;
}

void hcct__exit(struct hcct *hc)
{
	free(hc->mem);
	hc->mem = NULL;
	pool__exit(&hc->hot);
}
