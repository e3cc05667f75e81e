// SPDX-License-Identifier: GPL-2.0
/*
 * watch.c - watch files (watch.h) and exact counts of their contexts on
 * a trace, through the lbr/ numbering.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kcc_forest.h"
#include "watch.h"

static int watch_err(const struct watch *w, uint32_t line, const char *fmt,
		     const char *arg)
{
	fprintf(stderr, "kcc: %s:%u: ", w->name, line);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Check one path and count its routines; -EINVAL with the reason. */
static int watch_check(const struct watch *w, uint32_t line, const char *s,
		       uint32_t *len)
{
	const char *p = s;
	uint32_t n = 1;

	for (;;) {
		const char *e = strchr(p, ';');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (!l)
			return watch_err(w, line, "empty routine name in '%s'",
					 s);
		if (!e)
			break;
		p = e + 1;
		n++;
	}
	if (n > KCC_PPP_MAX_K + 1)
		return watch_err(w, line,
				 "'%s' is longer than 8 call edges (k <= 8)",
				 s);
	*len = n;
	return 0;
}

int watch__read(struct watch *w, const char *path)
{
	uint32_t lineno = 0, cap = 0, len;
	char *buf = NULL, *s;
	size_t bcap = 0;
	FILE *f;
	int ret = 0;

	memset(w, 0, sizeof(*w));
	w->name = path;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		return ret;
	}
	while (getline(&buf, &bcap, f) != -1) {
		lineno++;
		s = trim(buf);
		if (!*s || *s == '#')
			continue;
		ret = watch_check(w, lineno, s, &len);
		if (ret)
			break;
		if (w->n == KCC_PPP_MAX_CTX) {
			ret = watch_err(w, lineno,
					"more than 65536 contexts%s", "");
			break;
		}
		if (w->n == cap) {
			char **np;
			uint32_t *nl, *nn;

			cap = cap ? 2 * cap : 64;
			np = realloc(w->paths, cap * sizeof(*np));
			if (np)
				w->paths = np;
			nl = realloc(w->line, cap * sizeof(*nl));
			if (nl)
				w->line = nl;
			nn = realloc(w->lens, cap * sizeof(*nn));
			if (nn)
				w->lens = nn;
			if (!np || !nl || !nn) {
				ret = -ENOMEM;
				break;
			}
		}
		w->paths[w->n] = strdup(s);
		if (!w->paths[w->n]) {
			ret = -ENOMEM;
			break;
		}
		w->line[w->n] = lineno;
		w->lens[w->n++] = len;
		w->nlabels += len;
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		fprintf(stderr, "kcc: %s: read error\n", path);
	}
	if (!ret && !w->n)
		ret = watch_err(w, lineno, "no context to watch%s", "");
	if (ret == -ENOMEM)
		fprintf(stderr, "kcc: out of memory\n");
	free(buf);
	fclose(f);
	return ret;
}

int watch__resolve(struct watch *w, struct symtab *st)
{
	uint32_t i, j = 0, id, nr = symtab__nr(st);
	int ret;

	w->labels = calloc(w->nlabels ? w->nlabels : 1, sizeof(*w->labels));
	if (!w->labels)
		return -ENOMEM;
	for (i = 0; i < w->n; i++) {
		const char *p = w->paths[i];

		for (;;) {
			const char *e = strchr(p, ';');
			size_t l = e ? (size_t)(e - p) : strlen(p);

			ret = symtab__intern(st, p, l, &id);
			if (ret)
				return ret;
			if (id >= nr)
				fprintf(stderr, "kcc: %s:%u: warning: the trace never calls '%.*s': its contexts count 0\n",
					w->name, w->line[i], (int)l, p);
			w->labels[j++] = id;
			if (!e)
				break;
			p = e + 1;
		}
	}
	return 0;
}

int watch__build(struct watch *w)
{
	size_t sz = kcc_ppp_mem_size(w->n, w->nlabels, KCC_PPP_MAX_RANGE);
	int ret;

	w->mem = sz ? malloc(sz) : NULL;
	if (!w->mem) {
		fprintf(stderr, "kcc: out of memory\n");
		return -ENOMEM;
	}
	ret = kcc_ppp_build(&w->p, w->mem, sz, w->labels, w->lens, w->n,
			    KCC_PPP_MAX_RANGE);
	if (ret) {
		uint32_t c = w->p.err_ctx < w->n ? w->p.err_ctx : 0;

		fprintf(stderr, "kcc: %s:%u: %s: '%s'\n", w->name, w->line[c],
			kcc_ppp_strerror(w->p.err), w->paths[c]);
	}
	return ret;
}

void watch__exit(struct watch *w)
{
	uint32_t i;

	for (i = 0; i < w->n; i++)
		free(w->paths[i]);
	free(w->paths);
	free(w->line);
	free(w->lens);
	free(w->labels);
	free(w->mem);
	memset(w, 0, sizeof(*w));
}

int watch__count_trace(const struct watch *w, const struct trace *t,
		       struct watch_counts *wc)
{
	uint32_t cap = t->max_depth ? (uint32_t)t->max_depth : 1;
	struct kcc_ppp_frame *stack;
	struct kcc_ppp_run run;
	uint64_t e;

	memset(wc, 0, sizeof(*wc));
	wc->counts = calloc(w->p.range, sizeof(*wc->counts));
	stack = calloc(cap, sizeof(*stack));
	if (!wc->counts || !stack ||
	    kcc_ppp_run_init(&run, &w->p, wc->counts, stack, cap)) {
		free(stack);
		free(wc->counts);
		wc->counts = NULL;
		return -ENOMEM;
	}
	for (e = 0; e < t->nr; e++) {
		if (t->ev[e] == TRACE_RET)
			kcc_ppp_return(&run);
		else
			kcc_ppp_call(&run, t->ev[e]);
	}
	wc->calls = run.calls;
	wc->matched = run.matched;
	wc->unwatched = run.unwatched;
	wc->aliased = run.aliased;
	free(stack);
	return 0;
}

void watch__print(const struct watch *w, const struct watch_counts *wc,
		  FILE *out)
{
	uint32_t i;

	for (i = 0; i < w->n; i++)
		fprintf(out, "%" PRIu64 "\t%s\n", wc->counts[w->p.ctx_num[i]],
			w->paths[i]);
	fprintf(out, "# contexts=%u numbers=%u delta=%.3f\n", w->n,
		w->p.range, (double)w->p.range / w->n);
	fprintf(out, "# calls=%" PRIu64 " watched=%" PRIu64 " residual=%" PRIu64 " aliases=%" PRIu64 "\n",
		wc->calls, wc->matched, wc->unwatched, wc->aliased);
}

int watch__put(FILE *out, const char *path)
{
	uint32_t n = 1;
	const char *p;

	for (p = path; *p; p++)
		n += *p == ';';
	if (n > KCC_PPP_MAX_K + 1 || *path == '#' || strchr(path, '\n'))
		return -EINVAL;
	return fprintf(out, "%s\n", path) < 0 ? -EIO : 0;
}
