// SPDX-License-Identifier: GPL-2.0
/*
 * valence.c - Valence annotation (Algorithms 1 and 3) and decoding
 * (Algorithms 2 and 4) of calling contexts; see valence.h.
 *
 * Where the paper leaves a choice open:
 * - bits(k) is the width that tells k values apart, ceil(log2(k)), so a
 *   single caller level or a single edge costs no bit;
 * - the super nodes of Algorithm 3's acyclic graph are Tarjan's SCCs,
 *   numbered in completion order, which is a reverse topological order;
 * - cyclic code 0 is the escape tag, so cyclic codes start at 1.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "valence.h"

static uint32_t clog2(uint64_t k)
{
	uint32_t b = 0;

	while (b < 64 && (1ull << b) < k)
		b++;
	return b;
}

struct tarjan {
	struct valence *v;
	const uint32_t *first;	/* CSR of out-edges by caller */
	const uint32_t *out;
	uint32_t *index, *low, *stack, *frame_node, *frame_edge;
	uint8_t *on;
	uint32_t next, sp;
};

/* Iterative Tarjan: a binary's call chains are deeper than a C stack. */
static void tarjan__run(struct tarjan *t, uint32_t root)
{
	struct valence *v = t->v;
	uint32_t *scc = v->scc;
	uint32_t depth = 0;

	t->frame_node[0] = root;
	t->frame_edge[0] = t->first[root];
	t->index[root] = t->low[root] = t->next++;
	t->stack[t->sp++] = root;
	t->on[root] = 1;
	while (1) {
		uint32_t n = t->frame_node[depth];

		if (t->frame_edge[depth] < t->first[n + 1]) {
			uint32_t c = v->edges[t->out[t->frame_edge[depth]++]].callee;

			if (t->index[c] == UINT32_MAX) {
				depth++;
				t->frame_node[depth] = c;
				t->frame_edge[depth] = t->first[c];
				t->index[c] = t->low[c] = t->next++;
				t->stack[t->sp++] = c;
				t->on[c] = 1;
			} else if (t->on[c] && t->index[c] < t->low[n]) {
				t->low[n] = t->index[c];
			}
			continue;
		}
		if (t->low[n] == t->index[n]) {
			uint32_t w, id = v->nr_scc++;

			do {
				w = t->stack[--t->sp];
				t->on[w] = 0;
				scc[w] = id;
			} while (w != n);
		}
		if (!depth)
			break;
		depth--;
		if (t->low[n] < t->low[t->frame_node[depth]])
			t->low[t->frame_node[depth]] = t->low[n];
	}
}

static int valence__label_sccs(struct valence *v, uint32_t **firstp,
			       uint32_t **outp)
{
	uint32_t n = v->nr_nodes, i;
	uint32_t *first = calloc(n + 1, sizeof(*first));
	uint32_t *out = malloc((v->nr_edges + 1) * sizeof(*out));
	uint32_t *fill = calloc(n + 1, sizeof(*fill));
	struct tarjan t = { .v = v };
	int err = -ENOMEM;

	t.index = malloc((n + 1) * sizeof(uint32_t));
	t.low = malloc((n + 1) * sizeof(uint32_t));
	t.stack = malloc((n + 1) * sizeof(uint32_t));
	t.frame_node = malloc((n + 1) * sizeof(uint32_t));
	t.frame_edge = malloc((n + 1) * sizeof(uint32_t));
	t.on = calloc(n + 1, 1);
	if (!first || !out || !fill || !t.index || !t.low || !t.stack ||
	    !t.frame_node || !t.frame_edge || !t.on)
		goto cleanup;
	for (i = 0; i < v->nr_edges; i++)
		first[v->edges[i].caller + 1]++;
	for (i = 0; i < n; i++)
		first[i + 1] += first[i];
	for (i = 0; i < v->nr_edges; i++) {
		uint32_t c = v->edges[i].caller;

		out[first[c] + fill[c]++] = i;
	}
	t.first = first;
	t.out = out;
	memset(t.index, 0xff, n * sizeof(uint32_t));
	for (i = 0; i < n; i++)
		if (t.index[i] == UINT32_MAX)
			tarjan__run(&t, i);
	*firstp = first;
	*outp = out;
	first = out = NULL;
	err = 0;
cleanup:
	free(first);
	free(out);
	free(fill);
	free(t.index);
	free(t.low);
	free(t.stack);
	free(t.frame_node);
	free(t.frame_edge);
	free(t.on);
	return err;
}

/* Algorithm 1's annotate over the SCC graph, in topological order. */
static int valence__annotate_acyc(struct valence *v)
{
	uint32_t *cnt = calloc(v->nr_scc, sizeof(*cnt));
	uint32_t *start = calloc(v->nr_scc + 1, sizeof(*start));
	uint32_t *in = malloc((v->nr_edges + 1) * sizeof(*in));
	uint32_t *lvl = malloc((v->nr_edges + 1) * sizeof(*lvl));
	uint32_t *lvcnt = malloc((v->nr_edges + 1) * sizeof(*lvcnt));
	uint32_t i, s;
	int err = -ENOMEM;

	if (!cnt || !start || !in || !lvl || !lvcnt)
		goto cleanup;
	for (i = 0; i < v->nr_edges; i++)
		if (!v->ops[i].kind)
			start[v->scc[v->edges[i].callee] + 1]++;
	for (s = 0; s < v->nr_scc; s++)
		start[s + 1] += start[s];
	for (i = 0; i < v->nr_edges; i++)
		if (!v->ops[i].kind) {
			uint32_t c = v->scc[v->edges[i].callee];

			in[start[c] + cnt[c]++] = i;
		}
	err = -E2BIG;
	for (s = v->nr_scc; s-- > 0;) {
		struct valence_sup *sup = &v->sup[s];
		uint32_t nin = start[s + 1] - start[s], *e = in + start[s];
		uint32_t nlv = 0, maxlen = 0, j, k;

		/* Level codes in order of first appearance (lines 9-20). */
		for (j = 0; j < nin; j++) {
			uint32_t pl = v->sup[v->scc[v->edges[e[j]].caller]].level;

			for (k = 0; k < nlv && lvl[k] != pl; k++)
				;
			if (k == nlv) {
				lvl[nlv] = pl;
				lvcnt[nlv++] = 0;
			}
			lvcnt[k]++;
		}
		sup->nlv = nlv;
		sup->lv = malloc((nlv + 1) * sizeof(uint32_t));
		sup->ew = malloc((nlv + 1) * sizeof(uint32_t));
		sup->off = malloc((nlv + 1) * sizeof(uint32_t));
		sup->cnt = malloc((nlv + 1) * sizeof(uint32_t));
		sup->emap = malloc((nin + 1) * sizeof(uint32_t));
		if (!sup->lv || !sup->ew || !sup->off || !sup->cnt ||
		    !sup->emap) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (k = 0; k < nlv; k++) {
			sup->lv[k] = lvl[k];
			sup->ew[k] = clog2(lvcnt[k]);
			sup->off[k] = k ? sup->off[k - 1] + sup->cnt[k - 1] : 0;
			sup->cnt[k] = lvcnt[k];
			if (lvl[k] + sup->ew[k] > maxlen)
				maxlen = lvl[k] + sup->ew[k];
			lvcnt[k] = 0;
		}
		sup->lvlen = clog2(nlv);
		sup->level = maxlen + sup->lvlen;
		if (sup->level > 64 * KCC_VALENCE_ACYC_WORDS || sup->lvlen > 32)
			goto cleanup;
		if (sup->level > v->max_level)
			v->max_level = sup->level;
		/* Instrument (lines 30-35): two fields, zero bits omitted. */
		for (j = 0; j < nin; j++) {
			struct valence_op *op = &v->ops[e[j]];
			uint32_t pl = v->sup[v->scc[v->edges[e[j]].caller]].level;

			for (k = 0; lvl[k] != pl; k++)
				;
			sup->emap[sup->off[k] + lvcnt[k]] = e[j];
			op->kind = VALENCE_OP_ACYC;
			op->pos[0] = pl;
			op->width[0] = sup->ew[k];
			op->val[0] = lvcnt[k]++;
			op->pos[1] = sup->level - sup->lvlen;
			op->width[1] = sup->lvlen;
			op->val[1] = k;
		}
	}
	err = 0;
cleanup:
	free(cnt);
	free(start);
	free(in);
	free(lvl);
	free(lvcnt);
	return err;
}

/* PCCE on the same graph: back edges of a DFS from every root, numCC. */
static int valence__pcce(struct valence *v, const uint32_t *first,
			 const uint32_t *out)
{
	uint32_t n = v->nr_nodes, i, j, sp;
	uint8_t *state = calloc(n + 1, 1);
	uint32_t *node = malloc((n + 1) * sizeof(*node));
	uint32_t *it = malloc((n + 1) * sizeof(*it));
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	uint32_t *indeg = calloc(n + 1, sizeof(*indeg));
	long double *num = calloc(n + 1, sizeof(*num));
	uint32_t nord = 0;
	int err = -ENOMEM;

	v->back = calloc(v->nr_edges + 1, 1);
	v->pcce_bits = calloc(n + 1, sizeof(double));
	if (!state || !node || !it || !order || !indeg || !num || !v->back ||
	    !v->pcce_bits)
		goto cleanup;
	for (i = 0; i < v->nr_edges; i++)
		indeg[v->edges[i].callee]++;
	/* Roots first (no callers), then whatever is left unvisited. */
	for (j = 0; j < 2 * n; j++) {
		uint32_t r = j % n;

		if (state[r] || (j < n && indeg[r]))
			continue;
		sp = 0;
		node[0] = r;
		it[0] = first[r];
		state[r] = 1;
		while (1) {
			uint32_t m = node[sp];

			if (it[sp] < first[m + 1]) {
				uint32_t e = out[it[sp]++], c = v->edges[e].callee;

				if (state[c] == 1) {
					v->back[e] = 1;
				} else if (!state[c]) {
					state[c] = 1;
					node[++sp] = c;
					it[sp] = first[c];
				}
				continue;
			}
			state[m] = 2;
			order[nord++] = m;
			if (!sp--)
				break;
		}
	}
	/*
	 * numCC over forward edges in topological order (reverse postorder);
	 * targets of back edges get the dummy root's one context too.
	 */
	for (i = 0; i < n; i++)
		num[i] = 0;
	for (i = 0; i < v->nr_edges; i++)
		if (v->back[i])
			num[v->edges[i].callee] = 1;
	for (j = nord; j-- > 0;) {
		uint32_t m = order[j];

		if (!num[m])
			num[m] = 1;	/* a root: the dummy root's edge */
		for (i = first[m]; i < first[m + 1]; i++)
			if (!v->back[out[i]])
				num[v->edges[out[i]].callee] += num[m];
	}
	for (i = 0; i < n; i++)
		v->pcce_bits[i] = (double)log2l(num[i]);
	err = 0;
cleanup:
	free(state);
	free(node);
	free(it);
	free(order);
	free(indeg);
	free(num);
	return err;
}

static int edge__cmp_site(const void *a, const void *b, void *ops)
{
	uint64_t x = ((struct valence_op *)ops)[*(const uint32_t *)a].site;
	uint64_t y = ((struct valence_op *)ops)[*(const uint32_t *)b].site;

	return x < y ? -1 : x > y;
}

int valence__annotate(struct valence *v, uint32_t nr_nodes,
		      const struct valence_edge *edges, uint32_t nr_edges)
{
	uint32_t *first = NULL, *out = NULL, i;
	int err;

	memset(v, 0, sizeof(*v));
	v->nr_nodes = nr_nodes;
	v->nr_edges = nr_edges;
	v->edges = malloc((nr_edges + 1) * sizeof(*edges));
	v->ops = calloc(nr_edges + 1, sizeof(*v->ops));
	v->scc = calloc(nr_nodes + 1, sizeof(*v->scc));
	v->cyc_edge = calloc(nr_edges + 1, sizeof(*v->cyc_edge));
	err = -ENOMEM;
	if (!v->edges || !v->ops || !v->scc || !v->cyc_edge)
		goto fail;
	err = -EINVAL;
	for (i = 0; i < nr_edges; i++)
		if (edges[i].caller >= nr_nodes || edges[i].callee >= nr_nodes)
			goto fail;
	memcpy(v->edges, edges, nr_edges * sizeof(*edges));
	err = valence__label_sccs(v, &first, &out);
	if (err)
		goto fail;
	v->sup = calloc(v->nr_scc + 1, sizeof(*v->sup));
	err = -ENOMEM;
	if (!v->sup)
		goto fail;
	/* Algorithm 3, lines 5-10: every cyclic edge its own code. */
	for (i = 0; i < nr_edges; i++) {
		v->ops[i].site = edges[i].site;
		v->ops[i].caller = edges[i].caller;
		v->ops[i].callee = edges[i].callee;
		if (v->scc[edges[i].caller] == v->scc[edges[i].callee])
			v->cyc_edge[v->nr_cyc++] = i;
	}
	v->rec_len = clog2(v->nr_cyc + 1);
	if (!v->rec_len)
		v->rec_len = 1;
	for (i = 0; i < v->nr_cyc; i++) {
		struct valence_op *op = &v->ops[v->cyc_edge[i]];

		op->kind = VALENCE_OP_CYC;
		op->width[0] = v->rec_len;
		op->val[0] = i + 1;
	}
	err = valence__annotate_acyc(v);
	if (err)
		goto fail;
	v->acyc_words = v->max_level ? (v->max_level + 63) / 64 : 1;
	err = valence__pcce(v, first, out);
	if (err)
		goto fail;
	v->by_site = malloc((nr_edges + 1) * sizeof(*v->by_site));
	err = -ENOMEM;
	if (!v->by_site)
		goto fail;
	v->site_edge = malloc((nr_edges + 1) * sizeof(*v->site_edge));
	if (!v->site_edge)
		goto fail;
	for (i = 0; i < nr_edges; i++)
		v->site_edge[i] = i;
	qsort_r(v->site_edge, nr_edges, sizeof(*v->site_edge), edge__cmp_site,
		v->ops);
	for (i = 0; i < nr_edges; i++)
		v->by_site[i] = v->ops[v->site_edge[i]];
	free(first);
	free(out);
	return 0;
fail:
	free(first);
	free(out);
	valence__exit_graph(v);
	return err;
}

void valence__exit_graph(struct valence *v)
{
	uint32_t s;

	for (s = 0; v->sup && s < v->nr_scc; s++) {
		free(v->sup[s].lv);
		free(v->sup[s].ew);
		free(v->sup[s].off);
		free(v->sup[s].cnt);
		free(v->sup[s].emap);
	}
	free(v->sup);
	free(v->edges);
	free(v->ops);
	free(v->scc);
	free(v->cyc_edge);
	free(v->by_site);
	free(v->site_edge);
	free(v->back);
	free(v->pcce_bits);
	memset(v, 0, sizeof(*v));
}

const struct valence_op *valence__lookup(const struct valence *v,
					 uint64_t site)
{
	uint32_t lo = 0, hi = v->nr_edges;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (v->by_site[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->nr_edges && v->by_site[lo].site == site ?
		&v->by_site[lo] : NULL;
}

void valence__area_init(const struct valence *v, struct kcc_valence_area *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->cur = KCC_VALENCE_NO_NODE;
	a->root = KCC_VALENCE_NO_NODE;
	a->acyc_words = v->acyc_words;
}

static int valence__put_frame(struct valence_frame *out, uint32_t max,
			      uint32_t *nr, uint32_t node, uint64_t site,
			      uint32_t escaped)
{
	if (*nr >= max)
		return -E2BIG;
	out[*nr].node = node;
	out[*nr].site = site;
	out[*nr].escaped = escaped;
	(*nr)++;
	return 0;
}

/* Algorithm 2's loop body: the acyclic edge that entered m, or -EINVAL. */
static int64_t valence__decode_acyc(const struct valence *v,
				    const __u64 *acyc, uint32_t m)
{
	const struct valence_sup *s = &v->sup[v->scc[m]];
	uint32_t lc, ec, e;

	if (!s->nlv)
		return -EINVAL;
	lc = valence__get_bits(acyc, s->level - s->lvlen, s->lvlen);
	if (lc >= s->nlv)
		return -EINVAL;
	ec = valence__get_bits(acyc, s->lv[lc], s->ew[lc]);
	if (ec >= s->cnt[lc])
		return -EINVAL;
	e = s->emap[s->off[lc] + ec];
	if (v->scc[v->edges[e].callee] != v->scc[m] || v->edges[e].callee != m)
		return -EINVAL;
	return e;
}

int valence__decode(const struct valence *v, const struct kcc_valence_area *a,
		    struct valence_frame *out, uint32_t max)
{
	uint32_t nw = v->acyc_words;
	__u64 acyc[KCC_VALENCE_ACYC_WORDS];
	uint32_t top = a->rec_bits, m = a->cur, nr = 0, i;
	int err;

	if (a->seq & 1)
		return -EAGAIN;
	if (a->rec_over)
		return -EOVERFLOW;
	if (a->size != sizeof(*a) || a->acyc_words != nw || a->__reserved ||
	    top > VALENCE_REC_BITS)
		return -EINVAL;
	if (m == KCC_VALENCE_NO_NODE)
		return -ENOENT;
	memcpy(acyc, a->acyc, sizeof(acyc));
	while (1) {
		uint32_t tag = 0;
		int64_t e;

		if (m >= v->nr_nodes)
			return -EINVAL;
		if (top) {	/* Algorithm 4: the stack first when it fits */
			if (top < v->rec_len)
				return -EINVAL;
			tag = valence__get_bits(a->rec, top - v->rec_len,
						v->rec_len);
		}
		if (top && !tag) {
			struct valence_escape x;

			if (valence__escape_read(a->rec, top, v->rec_len, &x))
				return -EINVAL;
			if (x.callee == m) {
				err = valence__put_frame(out, max, &nr, m,
							 x.site, 1);
				if (err)
					return err;
				for (i = 0; i < nw; i++)
					acyc[i] = i < x.k ? valence__get_bits(a->rec,
						x.base + 64 * i, 64) : 0;
				top = x.base;
				if (x.caller == KCC_VALENCE_NO_NODE) {
					if (top)
						return -EINVAL;
					break;
				}
				m = x.caller;
				continue;
			}
		} else if (top) {
			if (tag > v->nr_cyc)
				return -EINVAL;
			e = v->cyc_edge[tag - 1];
			if (v->edges[e].callee == m) {
				err = valence__put_frame(out, max, &nr, m,
							 v->edges[e].site, 0);
				if (err)
					return err;
				top -= v->rec_len;
				m = v->edges[e].caller;
				continue;
			}
		}
		if (!top && m == a->root) {
			/*
			 * The thread's outermost call.  Another way into the
			 * root without a record would be a call from its own
			 * descendant: a cyclic edge, which is on the stack.
			 */
			err = valence__put_frame(out, max, &nr, m,
						 a->root_site, 1);
			if (err)
				return err;
			break;
		}
		if (!top && !v->sup[v->scc[m]].nlv) {
			/* A root of the graph entered without a call. */
			err = valence__put_frame(out, max, &nr, m, 0, 0);
			if (err)
				return err;
			break;
		}
		e = valence__decode_acyc(v, acyc, m);
		if (e < 0)
			return (int)e;
		err = valence__put_frame(out, max, &nr, m, v->edges[e].site, 0);
		if (err)
			return err;
		m = v->edges[e].caller;
	}
	for (i = 0; i < nr / 2; i++) {
		struct valence_frame t = out[i];

		out[i] = out[nr - 1 - i];
		out[nr - 1 - i] = t;
	}
	return (int)nr;
}

uint32_t valence__words(const struct valence *v,
			const struct kcc_valence_area *a)
{
	uint32_t bits = a->cur < v->nr_nodes ?
		v->sup[v->scc[a->cur]].level : 0;
	uint32_t w = (bits + 63) / 64 + (a->rec_bits + 63) / 64;

	return w ? w : 1;
}
