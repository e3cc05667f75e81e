/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ksfdump.h - a canonical text form of a forest (k-SF, CCT, k-CCF) and
 * relabelling with re-joining, to compare forests built from different
 * label spaces (addresses, routine ids).
 *
 * The dump has one line per node with at least one non-zero printed
 * counter:
 *
 *	KIND PATH C0 [C1 ...]
 *
 * KIND is "top" (tree starting at depth 0) or "slab" (tree starting at a
 * slab boundary), PATH the labels from the root down to the node joined
 * by ';' (lower-case hex without 0x, or names), C0.. the counters in
 * decimal (calls, then the metrics).  Lines are sorted bytewise.  Nodes
 * whose printed counters are all zero (frames a stitcher anchored and
 * nothing counted) are left out, so two forests dump equal exactly when
 * they hold the same non-zero counters on the same root paths.
 */
#ifndef KCC_KSFDUMP_H
#define KCC_KSFDUMP_H

#include <stdint.h>
#include <stdio.h>

#include "ccf.h"
#include "kcc_forest.h"
#include "symtab.h"

/*
 * Dump @f to @out.  @names: label -> name, NULL for hex labels.  @nctrs:
 * counters printed per node (1 = calls only), 0 for all of them.
 * Return: 0 or -errno.
 */
int ksf__dump(const struct kcc_forest *f, const struct symtab *names,
	      uint32_t nctrs, FILE *out);
/* The same into a malloc'ed string, NULL when out of memory. */
char *ksf__dump_string(const struct kcc_forest *f, const struct symtab *names,
		       uint32_t nctrs);

/* A pool of @capacity nodes with @nmetrics metrics: 0 or -errno. */
int ksf__pool_init(struct pool *p, uint32_t capacity, uint32_t nmetrics);
/*
 * Move @p to a pool of @capacity nodes.  Nodes keep their indices (they
 * are re-inserted in index order and nothing was deleted), so a k-SF
 * builder's shadow stack, which points at &p->f, stays valid.
 */
int ksf__pool_grow(struct pool *p, uint32_t capacity);

typedef uint64_t (*ksf_relabel_fn)(void *arg, uint64_t label);

/*
 * Rebuild @src into a new pool @dst with every label mapped through @fn:
 * nodes whose mapped root paths (and root kinds) are equal become one
 * node with the sum of their counters.  Relabelling commutes with the
 * k-SF construction, so the k-SF of an address-labelled run relabelled
 * to routines is the k-SF of the routine-level run.  0 or -errno.
 */
int ksf__relabel(struct pool *dst, const struct kcc_forest *src,
		 ksf_relabel_fn fn, void *arg);

#endif /* KCC_KSFDUMP_H */
