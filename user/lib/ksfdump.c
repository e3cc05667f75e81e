// SPDX-License-Identifier: GPL-2.0
/*
 * ksfdump.c - canonical dumps of forests, relabelling and pool growth.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ksfdump.h"
#include "stream.h"

int ksf__pool_init(struct pool *p, uint32_t capacity, uint32_t nmetrics)
{
	return pool__alloc(p, capacity, nmetrics);
}

int ksf__pool_grow(struct pool *p, uint32_t capacity)
{
	const struct kcc_forest *src = &p->f;
	struct pool bigger;
	uint32_t i;
	int ret;

	if (capacity < src->count)
		return -EINVAL;
	ret = ksf__pool_init(&bigger, capacity, src->nmetrics);
	if (ret)
		return ret;
	for (i = 0; i < src->count; i++) {
		const struct kcc_node *n = kcc_forest_node(src, i);
		uint32_t j;

		if (n->parent == KCC_FREE)
			break;
		j = kcc_forest_get(&bigger.f, n->parent, n->label);
		if (j != i) {
			pool__exit(&bigger);
			return -EFAULT;
		}
		kcc_forest_add_ctrs(&bigger.f, j, src, i);
	}
	if (i < src->count) {
		/* A deleted node: indices cannot be kept. */
		pool__exit(&bigger);
		return -EINVAL;
	}
	bigger.f.drops = src->drops;
	pool__exit(p);
	*p = bigger;
	return 0;
}

int ksf__relabel(struct pool *dst, const struct kcc_forest *src,
		 ksf_relabel_fn fn, void *arg)
{
	uint32_t *map, i;
	int ret;

	map = malloc(((size_t)src->count + 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	ret = ksf__pool_init(dst, src->count, src->nmetrics);
	if (ret)
		goto cleanup;
	for (i = 0; i < src->count; i++) {
		const struct kcc_node *n = kcc_forest_node(src, i);
		uint32_t parent = n->parent;

		map[i] = KCC_NIL;
		if (parent == KCC_FREE)
			continue;
		if (!kcc_is_root_parent(parent)) {
			/* Parents are stored before their children. */
			if (parent >= i || map[parent] == KCC_NIL) {
				ret = -EINVAL;
				goto cleanup;
			}
			parent = map[parent];
		}
		map[i] = kcc_forest_get(&dst->f, parent, fn(arg, n->label));
		if (map[i] == KCC_NIL) {
			ret = -ENOSPC;
			goto cleanup;
		}
		kcc_forest_add_ctrs(&dst->f, map[i], src, i);
	}
	ret = 0;
cleanup:
	if (ret && dst->mem)
		pool__exit(dst);
	free(map);
	return ret;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The line of node @i in *@line, NULL when its printed counters are all
 * zero.  @path has room for f->count entries.  0 or -errno.
 */
static int dump_line(const struct kcc_forest *f, uint32_t i,
		     const struct symtab *names, uint32_t nctrs,
		     uint32_t *path, char **line)
{
	const uint64_t *c = kcc_forest_ctr(f, i);
	uint32_t n = 0, j, v = i;
	bool any = false;
	size_t len = 0;
	char *buf = NULL;
	FILE *m;

	*line = NULL;
	for (j = 0; j < nctrs; j++)
		any |= c[j] != 0;
	if (!any)
		return 0;
	for (;;) {
		const struct kcc_node *nd = kcc_forest_node(f, v);

		/* A root path longer than the forest: a cycle, corrupt. */
		if (n == f->count)
			return -EINVAL;
		path[n++] = v;
		if (kcc_is_root_parent(nd->parent))
			break;
		v = nd->parent;
	}

	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	fputs(kcc_forest_node(f, path[n - 1])->parent == KCC_ROOT_SLAB ?
	      "slab " : "top ", m);
	for (j = n; j > 0; j--) {
		uint64_t label = kcc_forest_node(f, path[j - 1])->label;

		if (j < n)
			putc(';', m);
		if (names)
			fputs(symtab__name(names, label), m);
		else
			fprintf(m, "%" PRIx64, label);
	}
	for (j = 0; j < nctrs; j++)
		fprintf(m, " %" PRIu64, c[j]);
	putc('\n', m);
	if (fclose(m)) {
		free(buf);
		return -ENOMEM;
	}
	*line = buf;
	return 0;
}

static int dump_lines(const struct kcc_forest *f, const struct symtab *names,
		      uint32_t nctrs, char ***linesp, uint32_t *nrp)
{
	uint32_t *path = malloc(((size_t)f->count + 1) * sizeof(*path));
	char **lines = malloc(((size_t)f->count + 1) * sizeof(*lines));
	uint32_t i, nr = 0;
	int ret = -ENOMEM;

	if (!nctrs || nctrs > 1 + f->nmetrics)
		nctrs = 1 + f->nmetrics;
	if (!path || !lines)
		goto fail;
	for (i = 0; i < f->count; i++) {
		if (kcc_forest_node(f, i)->parent == KCC_FREE)
			continue;
		ret = dump_line(f, i, names, nctrs, path, &lines[nr]);
		if (ret)
			goto fail;
		if (lines[nr])
			nr++;
	}
	free(path);
	qsort(lines, nr, sizeof(*lines), line_cmp);
	*linesp = lines;
	*nrp = nr;
	return 0;
fail:
	while (lines && nr)
		free(lines[--nr]);
	free(lines);
	free(path);
	return ret;
}

int ksf__dump(const struct kcc_forest *f, const struct symtab *names,
	      uint32_t nctrs, FILE *out)
{
	uint32_t nr, i;
	char **lines;
	int ret;

	ret = dump_lines(f, names, nctrs, &lines, &nr);
	if (ret)
		return ret;
	for (i = 0; i < nr; i++) {
		fputs(lines[i], out);
		free(lines[i]);
	}
	free(lines);
	if (ferror(out))
		return -EIO;
	return 0;
}

char *ksf__dump_string(const struct kcc_forest *f, const struct symtab *names,
		       uint32_t nctrs)
{
	size_t len = 0;
	char *buf = NULL;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	if (ksf__dump(f, names, nctrs, m)) {
		fclose(m);
		free(buf);
		return NULL;
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}
