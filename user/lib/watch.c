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
#include "profile.h"
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

/* Labels: ids of @st, new names added; @warn: say which were new. */
static int watch_intern(struct watch *w, struct symtab *st, bool warn)
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
			if (warn && id >= nr)
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

int watch__resolve(struct watch *w, struct symtab *st)
{
	return watch_intern(w, st, true);
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

int watch__report(const struct profile *p, FILE *out)
{
	const char *list = profile__info_get(p, "watch"), *l;
	uint64_t tot[KCC_WATCH_NR_CTRS] = { 0 }, res[KCC_WATCH_NR_CTRS] = { 0 };
	uint64_t *sum, aliased = 0, drops = 0;
	uint32_t n = 0, range = 0, ntasks = 0, r, i, c, j;
	const char *evname = "events";

	for (r = 0; r < p->nr_runs; r++) {
		const struct stream *s = &p->runs[r].s;

		for (i = 0; i < s->nr_watch; i++) {
			if (n && s->watch[i].nr_contexts != n)
				return -EINVAL;
			n = s->watch[i].nr_contexts;
			range = s->watch[i].range;
		}
	}
	if (!n)
		return -ENOENT;
	/* The list must name exactly n contexts. */
	for (l = list, c = 0; l && *l; c++) {
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	if (!list || c != n) {
		fprintf(stderr, "kcc: the profile's watch records count %u contexts, its watch list %u\n",
			n, list ? c : 0);
		return -EINVAL;
	}
	sum = calloc((size_t)n * KCC_WATCH_NR_CTRS, sizeof(*sum));
	if (!sum)
		return -ENOMEM;
	for (r = 0; r < p->nr_runs; r++) {
		const struct stream *s = &p->runs[r].s;

		if (s->nr_ctrs > KCC_CTR_EVENTS)
			evname = p->runs[0].s.desc[KCC_CTR_EVENTS].name;
		for (i = 0; i < s->nr_watch; i++) {
			const struct stream_watch *w = &s->watch[i];

			for (c = 0; c < (size_t)n * KCC_WATCH_NR_CTRS; c++)
				sum[c] += w->counts[c];
			for (j = 0; j < KCC_WATCH_NR_CTRS; j++) {
				tot[j] += w->totals[j];
				res[j] += w->residual[j];
			}
			aliased += w->aliased;
			drops += w->stack_drops;
			ntasks++;
		}
	}
	fprintf(out, "# watched contexts: %u in %u numbers (delta %.3f), exact counts (KCC_REC_WATCH), %u tasks\n",
		n, range, (double)range / n, ntasks);
	fprintf(out, "# calls\t%s\tsamples\tcontext\n", evname);
	for (l = list, c = 0; c < n; c++) {
		const char *e = strchr(l, '\n');
		int len = e ? (int)(e - l) : (int)strlen(l);

		fprintf(out, "%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%.*s\n",
			sum[c * KCC_WATCH_NR_CTRS], sum[c * KCC_WATCH_NR_CTRS + 1],
			sum[c * KCC_WATCH_NR_CTRS + 2], len, l);
		l = e ? e + 1 : l + len;
	}
	fprintf(out, "# total: calls=%" PRIu64 " %s=%" PRIu64 " samples=%" PRIu64 "\n",
		tot[0], evname, tot[1], tot[2]);
	fprintf(out, "# residual: calls=%" PRIu64 " %s=%" PRIu64 " samples=%" PRIu64 " aliases=%" PRIu64 " stack_drops=%" PRIu64 "\n",
		res[0], evname, res[1], res[2], aliased, drops);
	free(sum);
	return 0;
}

/* ---- kcc record --watch: routine names to address ranges ------------ */

static int range_cmp(const void *a, const void *b)
{
	const struct kcc_watch_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->routine > y->routine) - (x->routine < y->routine);
}

static int add_range(struct watch_upload *u, uint64_t start, uint64_t end,
		     uint32_t routine)
{
	struct kcc_watch_range *r;

	if (u->nr_ranges == u->cap_ranges) {
		uint32_t cap = u->cap_ranges ? 2 * u->cap_ranges : 64;

		r = realloc(u->ranges, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		u->ranges = r;
		u->cap_ranges = cap;
	}
	r = &u->ranges[u->nr_ranges++];
	memset(r, 0, sizeof(*r));
	r->start = start;
	r->end = end;
	r->routine = routine;
	return 0;
}

/* The ranges of the watched routines defined in @so, mapped at @m. */
static int object_ranges(struct watch_upload *u, const struct symtab *names,
			 const struct symobj *so, uint64_t start, uint64_t end,
			 uint64_t pgoff)
{
	uint32_t i, id;
	int ret;

	for (i = 0; i < so->nr_syms; i++) {
		const struct sym *s = &so->syms[i];
		const char *name = sym__name(so, s);
		uint64_t off_end = s->size ? s->off + s->size :
				   i + 1 < so->nr_syms ? so->syms[i + 1].off : s->off + 1;
		char *dm = NULL;

		if (symtab__find(names, name, strlen(name), &id)) {
			dm = sym__demangle(name);
			if (!dm)
				return -ENOMEM;
			ret = symtab__find(names, dm, strlen(dm), &id);
			free(dm);
			if (ret)
				continue;
		}
		/* The part of the routine this mapping holds. */
		if (off_end <= pgoff || s->off >= pgoff + (end - start))
			continue;
		ret = add_range(u, start + (s->off > pgoff ? s->off - pgoff : 0),
				start + (off_end - pgoff < end - start ?
					 off_end - pgoff : end - start), id);
		if (ret)
			return ret;
	}
	return 0;
}

int watch__upload_pid(struct watch *w, int pid, struct watch_upload *u)
{
	struct symtab names;
	char path[64], *line = NULL, *seen = NULL;
	size_t lcap = 0;
	uint32_t i, j, nr;
	FILE *f;
	int ret;

	memset(u, 0, sizeof(*u));
	ret = symtab__init(&names);
	if (ret)
		return ret;
	ret = watch_intern(w, &names, false);
	if (ret)
		goto out;
	nr = symtab__nr(&names);
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		goto out;
	}
	while (getline(&line, &lcap, f) != -1 && !ret) {
		unsigned long long start, end, pgoff;
		char perm[8], file[4096];
		struct symobj so;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start,
			   &end, perm, &pgoff, file) < 4 ||
		    perm[2] != 'x' || file[0] != '/')
			continue;
		if (symobj__load(&so, file) == -ENOMEM)
			ret = -ENOMEM;
		else
			ret = object_ranges(u, &names, &so, start, end, pgoff);
		symobj__exit(&so);
	}
	free(line);
	fclose(f);
	if (ret)
		goto out;

	/* Sorted; a routine found twice at the same place once. */
	qsort(u->ranges, u->nr_ranges, sizeof(*u->ranges), range_cmp);
	for (i = 0, j = 0; i < u->nr_ranges; i++) {
		if (j && !range_cmp(&u->ranges[j - 1], &u->ranges[i]))
			continue;
		if (j && u->ranges[i].start < u->ranges[j - 1].end) {
			fprintf(stderr, "kcc: %s: routines '%s' and '%s' share addresses in process %d: watch one of them\n",
				w->name, symtab__name(&names, u->ranges[j - 1].routine),
				symtab__name(&names, u->ranges[i].routine), pid);
			ret = -EINVAL;
			goto out;
		}
		u->ranges[j++] = u->ranges[i];
	}
	u->nr_ranges = j;
	seen = calloc(nr ? nr : 1, 1);
	if (!seen) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < u->nr_ranges; i++)
		seen[u->ranges[i].routine] = 1;
	for (i = 0; i < nr; i++) {
		if (!seen[i]) {
			fprintf(stderr, "kcc: %s: unknown routine '%s': not in process %d's executable or libraries\n",
				w->name, symtab__name(&names, i), pid);
			ret = -ENOENT;
		}
	}
	if (ret)
		goto out;
	ret = watch__build(w);
	if (ret)
		goto out;
	u->paths = calloc(w->nlabels, sizeof(*u->paths));
	if (!u->paths) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nlabels; i++)
		u->paths[i] = (uint32_t)w->labels[i];
	memset(&u->arg, 0, sizeof(u->arg));
	u->arg.size = sizeof(u->arg);
	u->arg.k = w->p.kmax ? w->p.kmax : 1;
	u->arg.range = w->p.range;
	u->arg.nr_routines = nr;
	u->arg.nr_ranges = u->nr_ranges;
	u->arg.nr_contexts = w->n;
	u->arg.nr_labels = w->nlabels;
	u->arg.ranges = (uintptr_t)u->ranges;
	u->arg.lens = (uintptr_t)w->lens;
	u->arg.paths = (uintptr_t)u->paths;
out:
	free(seen);
	symtab__exit(&names);
	if (ret)
		watch__upload_exit(u);
	return ret;
}

void watch__upload_exit(struct watch_upload *u)
{
	free(u->ranges);
	free(u->paths);
	memset(u, 0, sizeof(*u));
}

char *watch__list(const struct watch *w)
{
	size_t len = 0, at = 0;
	uint32_t i;
	char *s;

	for (i = 0; i < w->n; i++)
		len += strlen(w->paths[i]) + 1;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	for (i = 0; i < w->n; i++)
		at += sprintf(s + at, "%s%s", i ? "\n" : "", w->paths[i]);
	s[at] = '\0';
	return s;
}
