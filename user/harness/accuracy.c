// SPDX-License-Identifier: GPL-2.0
/*
 * accuracy.c - degree of overlap and hot-edge coverage of two k-CCFs
 * (see accuracy.h).
 *
 * One pass per forest computes the item weights (children's counts are
 * subtracted from their parent, which is stored earlier), one pass over
 * the approximate forest maps each node to the exact node of the same
 * label path through the exact forest's (parent, label) index, and the
 * sums follow.  O(n) time and three arrays of n words.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"

/*
 * Item weights of @f: exclusive (k-context) weights unless @inclusive.
 * @w has f->count entries; returns the total, *max the largest.
 */
static uint64_t item_weights(const struct kcc_forest *f, uint32_t k,
			     uint32_t ctr, bool inclusive, uint64_t *w,
			     uint64_t *max)
{
	uint64_t total = 0;
	uint32_t i;

	*max = 0;
	for (i = 0; i < f->count; i++)
		w[i] = kcc_forest_ctr(f, i)[ctr];
	/*
	 * A k-CCF node's count includes its children's; a CCT's counts are
	 * exclusive already.  Children come after their parent and their
	 * count is read from the node, so the order of subtraction does
	 * not matter.  The clamp only guards a forest that breaks the
	 * parent >= children rule, which inv_k never produces.
	 */
	if (!inclusive && k != KCC_K_INF) {
		for (i = 0; i < f->count; i++) {
			const struct kcc_node *n = kcc_forest_node(f, i);
			uint64_t c = n->ctr[ctr];

			if (kcc_is_root_parent(n->parent))
				continue;
			w[n->parent] -= w[n->parent] < c ? w[n->parent] : c;
		}
	}
	for (i = 0; i < f->count; i++) {
		total += w[i];
		if (w[i] > *max)
			*max = w[i];
	}
	return total;
}

/* @map[i]: the node of @to with the label path of node i of @from. */
static void map_nodes(const struct kcc_forest *to,
		      const struct kcc_forest *from, uint32_t *map)
{
	uint32_t i;

	for (i = 0; i < from->count; i++) {
		const struct kcc_node *n = kcc_forest_node(from, i);
		uint32_t p = kcc_is_root_parent(n->parent) ? n->parent :
			     map[n->parent];

		map[i] = KCC_NIL;
		if (p == KCC_NIL)
			continue;
		/* inv_k makes every root a KCC_ROOT_TOP: try both kinds. */
		if (kcc_is_root_parent(p)) {
			map[i] = kcc_forest_find(to, KCC_ROOT_TOP, n->label);
			if (map[i] == KCC_NIL)
				map[i] = kcc_forest_find(to, KCC_ROOT_SLAB,
							 n->label);
		} else {
			map[i] = kcc_forest_find(to, p, n->label);
		}
	}
}

int accuracy__compare(const struct kcc_forest *exact,
		      const struct kcc_forest *approx,
		      const struct acc_opts *o, struct accuracy *acc)
{
	bool inclusive = o->flags & ACC_INCLUSIVE;
	uint64_t *we = NULL, *wa = NULL, *wm = NULL, maxe, maxa;
	uint32_t *map = NULL, i, j;
	size_t ne = exact->count ? exact->count : 1;
	size_t na = approx->count ? approx->count : 1;
	uint8_t *hot_e = NULL;
	int ret = -ENOMEM;

	memset(acc, 0, sizeof(*acc));
	if (o->nr_t > ACC_MAX_T || o->approx_ctr > approx->nmetrics)
		return -EINVAL;
	for (j = 0; j < o->nr_t; j++)
		if (!(o->t[j] > 0 && o->t[j] <= 1))
			return -EINVAL;

	we = malloc(ne * sizeof(*we));
	hot_e = malloc(ne);
	wa = malloc(na * sizeof(*wa));
	map = malloc(na * sizeof(*map));
	wm = calloc(ne, sizeof(*wm));
	if (!we || !hot_e || !wa || !map || !wm)
		goto cleanup;

	acc->weight_exact = item_weights(exact, o->k, KCC_CTR_CALLS, inclusive,
					  we, &maxe);
	acc->weight_approx = item_weights(approx, o->k, o->approx_ctr,
					   inclusive, wa, &maxa);
	if (!acc->weight_exact) {
		ret = -EINVAL;
		goto cleanup;
	}
	for (i = 0; i < exact->count; i++)
		acc->items_exact += we[i] != 0;
	for (i = 0; i < approx->count; i++)
		acc->items_approx += wa[i] != 0;

	map_nodes(exact, approx, map);

	if (acc->weight_approx) {
		double sum = 0;

		for (i = 0; i < approx->count; i++) {
			double pa, pe;

			if (map[i] == KCC_NIL || !wa[i] || !we[map[i]])
				continue;
			acc->items_common++;
			pa = (double)wa[i] / (double)acc->weight_approx;
			pe = (double)we[map[i]] / (double)acc->weight_exact;
			sum += pa < pe ? pa : pe;
		}
		acc->overlap = sum > 1 ? 1 : sum;
	}

	/*
	 * Absolute error, on the weights as counted.  Approximate items
	 * are gathered on the exact item of their label path first: two
	 * nodes of one path (a root of each kind) are one item.
	 */
	for (i = 0; i < approx->count; i++) {
		if (map[i] == KCC_NIL)
			acc->abs_diff += wa[i];
		else
			wm[map[i]] += wa[i];
	}
	for (i = 0; i < exact->count; i++)
		acc->abs_diff += wm[i] > we[i] ? wm[i] - we[i] : we[i] - wm[i];
	acc->abs_err = (double)acc->abs_diff / (double)acc->weight_exact;
	acc->calls_ratio = (double)acc->weight_approx /
			   (double)acc->weight_exact;

	for (j = 0; j < o->nr_t; j++) {
		/* w >= T * hottest, as in Figure 2 of the paper. */
		double te = o->t[j] * (double)maxe;
		double ta = o->t[j] * (double)maxa;

		for (i = 0; i < exact->count; i++) {
			hot_e[i] = we[i] && (double)we[i] >= te;
			acc->hot_exact[j] += hot_e[i];
		}
		for (i = 0; i < approx->count; i++) {
			if (!wa[i] || (double)wa[i] < ta || map[i] == KCC_NIL)
				continue;
			acc->hot_found[j] += hot_e[map[i]];
		}
		acc->cover[j] = acc->hot_exact[j] ?
				(double)acc->hot_found[j] / acc->hot_exact[j] : 0;
	}
	ret = 0;
cleanup:
	free(we);
	free(hot_e);
	free(wa);
	free(map);
	free(wm);
	return ret;
}

int64_t accuracy__diff(const struct kcc_forest *exact,
		       const struct kcc_forest *approx, uint32_t approx_ctr)
{
	size_t ne = exact->count ? exact->count : 1;
	size_t na = approx->count ? approx->count : 1;
	uint32_t *to_e = malloc(na * sizeof(*to_e));
	uint32_t *to_a = malloc(ne * sizeof(*to_a));
	int64_t diff = 0;
	uint32_t i;

	if (!to_e || !to_a || approx_ctr > approx->nmetrics) {
		diff = approx_ctr > approx->nmetrics ? -EINVAL : -ENOMEM;
		goto cleanup;
	}
	map_nodes(exact, approx, to_e);
	map_nodes(approx, exact, to_a);
	for (i = 0; i < approx->count; i++) {
		uint64_t c = kcc_forest_ctr(approx, i)[approx_ctr];

		if (to_e[i] == KCC_NIL)
			diff += c != 0;
		else
			diff += c != kcc_forest_ctr(exact, to_e[i])[KCC_CTR_CALLS];
	}
	/* Paths of the exact forest the approximation lacks altogether. */
	for (i = 0; i < exact->count; i++)
		if (to_a[i] == KCC_NIL)
			diff += kcc_forest_ctr(exact, i)[KCC_CTR_CALLS] != 0;
cleanup:
	free(to_e);
	free(to_a);
	return diff;
}

int accuracy__ci95(const struct kcc_forest *exact,
		   const struct kcc_forest *approx, uint32_t k,
		   uint32_t var_ctr, struct acc_ci *ci)
{
	size_t ne = exact->count ? exact->count : 1;
	size_t na = approx->count ? approx->count : 1;
	uint64_t *we, *wa, *va, *wm, *vm, max, total, in = 0;
	uint32_t *map, i;
	int ret = -ENOMEM;

	memset(ci, 0, sizeof(*ci));
	if (!var_ctr || var_ctr > approx->nmetrics)
		return -EINVAL;
	we = malloc(ne * sizeof(*we));
	wa = malloc(na * sizeof(*wa));
	va = malloc(na * sizeof(*va));
	map = malloc(na * sizeof(*map));
	wm = calloc(ne, sizeof(*wm));
	vm = calloc(ne, sizeof(*vm));
	if (!we || !wa || !va || !map || !wm || !vm)
		goto cleanup;
	total = item_weights(exact, k, KCC_CTR_CALLS, false, we, &max);
	item_weights(approx, k, KCC_CTR_CALLS, false, wa, &max);
	/* Variances of disjoint parts add up, as the counts do. */
	item_weights(approx, k, var_ctr, false, va, &max);
	map_nodes(exact, approx, map);
	for (i = 0; i < approx->count; i++) {
		if (map[i] == KCC_NIL)
			continue;
		wm[map[i]] += wa[i];
		vm[map[i]] = kcc_add_sat(vm[map[i]], va[i]);
	}
	for (i = 0; i < exact->count; i++) {
		double d = fabs((double)wm[i] - (double)we[i]);

		if (!we[i])
			continue;
		ci->items++;
		if (vm[i] == UINT64_MAX || d <= 1.96 * sqrt((double)vm[i])) {
			ci->covered++;
			in += we[i];
		}
	}
	ci->calls_covered = total ? (double)in / (double)total : 0;
	ret = 0;
cleanup:
	free(we);
	free(wa);
	free(va);
	free(map);
	free(wm);
	free(vm);
	return ret;
}
