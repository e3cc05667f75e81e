// SPDX-License-Identifier: GPL-2.0
/*
 * lbrsim.c - simulated LBR sampling over exact call/return events, the
 * symbol maps of its address layout, and random programs to feed it.
 *
 * The simulator keeps the exact stack and the last KCC_INJECT_MAX_BRANCHES
 * call/return records in a ring, as the hardware keeps its last N branch
 * records with call-stack filtering.  A sample copies what the handlers
 * would read at that instant: the frame-pointer walk (ip, then return
 * addresses, innermost first, cut at stack_depth) and the newest
 * lbr_depth records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lbrsim.h"

#define LBRSIM_BASE		0x400000ull	/* first routine */
#define LBRSIM_LOADER_SITE	0x1010ull	/* top-level calls come from here */
#define LBRSIM_LOADER_LEN	5
#define LBRSIM_IPS		4		/* sampled ips per routine */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* splitmix64: a tiny, seedable generator with good output. */
static uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

/* Uniform in [0, n), n > 0. */
static uint32_t below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rnd(s) >> 32) * (uint64_t)n) >> 32);
}

int lbrsim__init(struct lbrsim *sim, uint32_t nr_routines,
		 const struct lbrsim_opts *o, lbrsim_emit_fn emit, void *arg)
{
	uint64_t cursor = LBRSIM_BASE, rng;
	uint32_t r;

	memset(sim, 0, sizeof(*sim));
	if (!o->period || o->lbr_depth > KCC_INJECT_MAX_BRANCHES ||
	    !o->stack_depth || o->stack_depth > KCC_INJECT_MAX_STACK ||
	    nr_routines > LBRSIM_MAX_ROUTINES || !emit)
		return -EINVAL;
	sim->o = *o;
	sim->nr = nr_routines;
	sim->emit = emit;
	sim->arg = arg;
	sim->rt = calloc(nr_routines ? nr_routines : 1, sizeof(*sim->rt));
	sim->stack_cap = 256;
	sim->stack = malloc(sim->stack_cap * sizeof(*sim->stack));
	if (!sim->rt || !sim->stack) {
		lbrsim__exit(sim);
		return -ENOMEM;
	}

	rng = o->seed ^ 0x6c627273696d0000ull;	/* "lbrsim" */
	sim->rng = mix64(rng + 1);
	for (r = 0; r < nr_routines; r++) {
		struct lbrsim_routine *rt = &sim->rt[r];
		/* 64 bytes to 4 KB, 16-byte aligned, like compiled code. */
		uint64_t size = 64 + 16 * (uint64_t)below(&rng, 250);

		rt->start = cursor;
		rt->end = cursor + size;
		rt->nsites = 1 + (uint32_t)(size / 256);
		rt->rate = o->max_rate ? below(&rng, o->max_rate + 1) : 1;
		cursor = rt->end + 16 * (uint64_t)below(&rng, 4);
	}
	return 0;
}

void lbrsim__exit(struct lbrsim *sim)
{
	free(sim->rt);
	free(sim->stack);
	sim->rt = NULL;
	sim->stack = NULL;
}

/*
 * The call site f uses to call g and its instruction length: a fixed
 * function of (f, g), so repeated calls give repeated records.
 */
static void lbrsim__site(const struct lbrsim *sim, uint32_t f, uint32_t g,
			 uint64_t *from, uint64_t *ret)
{
	static const uint8_t lens[] = { 2, 3, 5, 5, 5, 6, 7 };
	const struct lbrsim_routine *rt = &sim->rt[f];
	uint64_t h = mix64(((uint64_t)f << 32 | g) ^ sim->o.seed);
	uint64_t stride = (rt->end - rt->start - 24) / rt->nsites;
	uint64_t site = rt->start + 8 + (h % rt->nsites) * stride;

	*from = site;
	*ret = site + lens[mix64(h) % sizeof(lens)];
}

static void lbrsim__record(struct lbrsim *sim, uint64_t from, uint64_t to,
			   uint32_t kind)
{
	struct kcc_branch *b = &sim->ring[sim->ring_head];

	b->from = from;
	b->to = to;
	b->kind = kind;
	b->__reserved = 0;
	sim->ring_head = (sim->ring_head + 1) % KCC_INJECT_MAX_BRANCHES;
	if (sim->ring_n < KCC_INJECT_MAX_BRANCHES)
		sim->ring_n++;
	sim->window++;
}

static int lbrsim__sample(struct lbrsim *sim)
{
	struct sample_buf *sb = &sim->sb;
	uint32_t flags = 0, nbr, i;
	uint64_t d = sim->depth, j;

	sample_buf__init(sb, 0, sim->pending);
	if (d) {
		const struct lbrsim_routine *rt =
			&sim->rt[sim->stack[d - 1].routine];
		uint64_t size = rt->end - rt->start;
		uint64_t hot = below(&sim->rng, LBRSIM_IPS);

		/* A few hot instructions per routine take the events. */
		sample_buf__push_stack(sb, rt->start +
				       mix64(rt->start * LBRSIM_IPS + hot) % size);
		for (j = 1; j < d; j++) {
			if (sb->hdr.nr_stack == sim->o.stack_depth) {
				flags |= KCC_SAMPLE_TRUNCATED;
				break;
			}
			sample_buf__push_stack(sb, sim->stack[d - j].ret);
		}
	}
	sb->hdr.flags = flags;

	nbr = sim->ring_n < sim->o.lbr_depth ? sim->ring_n : sim->o.lbr_depth;
	for (i = 0; i < nbr; i++) {
		const struct kcc_branch *b = &sim->ring[
			(sim->ring_head + KCC_INJECT_MAX_BRANCHES - 1 - i) %
			KCC_INJECT_MAX_BRANCHES];

		sample_buf__push_branch(sb, b->from, b->to, b->kind);
	}

	if (sim->window > sim->max_window)
		sim->max_window = sim->window;
	if (sim->window > sim->o.lbr_depth ||
	    (sim->samples && sim->window == sim->o.lbr_depth))
		sim->uncovered++;
	sim->sample_window = sim->window;
	if (flags)
		sim->truncated++;
	sim->samples++;
	sim->pending = 0;
	sim->window = 0;
	return sim->emit(sim->arg, &sb->hdr);
}

int lbrsim__call(struct lbrsim *sim, uint32_t routine)
{
	uint64_t from, ret, ev;

	if (routine >= sim->nr)
		return -EINVAL;
	if (sim->depth == sim->stack_cap) {
		struct lbrsim_frame *s;

		s = realloc(sim->stack, 2 * sim->stack_cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		sim->stack = s;
		sim->stack_cap *= 2;
	}
	if (sim->depth) {
		lbrsim__site(sim, sim->stack[sim->depth - 1].routine, routine,
			     &from, &ret);
	} else {
		from = LBRSIM_LOADER_SITE;
		ret = LBRSIM_LOADER_SITE + LBRSIM_LOADER_LEN;
	}
	sim->stack[sim->depth].routine = routine;
	sim->stack[sim->depth].ret = ret;
	sim->depth++;
	lbrsim__record(sim, from, sim->rt[routine].start, KCC_BR_CALL);

	sim->calls++;
	ev = sim->o.max_rate ? sim->rt[routine].rate : 1;
	sim->events += ev;
	sim->pending += ev;
	if (sim->pending >= sim->o.period)
		return lbrsim__sample(sim);
	return 0;
}

int lbrsim__return(struct lbrsim *sim)
{
	const struct lbrsim_frame *fr;

	if (!sim->depth)
		return -EINVAL;
	fr = &sim->stack[--sim->depth];
	/* The ret instruction is the routine's last byte. */
	lbrsim__record(sim, sim->rt[fr->routine].end - 1, fr->ret, KCC_BR_RET);
	sim->returns++;
	return 0;
}

int lbrsim__run(struct lbrsim *sim, const uint32_t *ev, uint64_t n)
{
	uint64_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if (ev[i] == LBRSIM_RET)
			ret = lbrsim__return(sim);
		else
			ret = lbrsim__call(sim, ev[i]);
		if (ret)
			return ret;
	}
	return 0;
}

int lbrsim__finish(struct lbrsim *sim)
{
	return sim->window ? lbrsim__sample(sim) : 0;
}

uint32_t lbrsim__routine_of(const struct lbrsim *sim, uint64_t addr)
{
	uint32_t lo = 0, hi = sim->nr;

	/* Routines are laid out by increasing id. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < sim->rt[mid].start)
			hi = mid;
		else if (addr >= sim->rt[mid].end)
			lo = mid + 1;
		else
			return mid;
	}
	return LBRSIM_NONE;
}

int lbrsim__write_map(const struct lbrsim *sim, const struct symtab *names,
		      FILE *out)
{
	uint32_t r;

	for (r = 0; r < sim->nr; r++) {
		fprintf(out, "%" PRIx64 " %" PRIx64 " ", sim->rt[r].start,
			sim->rt[r].end);
		if (names)
			fprintf(out, "%s\n", symtab__name(names, r));
		else
			fprintf(out, "r%u\n", r);
	}
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

/* ---- symbol maps ---------------------------------------------------- */

static int addrmap_cmp(const void *a, const void *b)
{
	const struct addrmap_ent *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int addrmap__parse(struct addrmap *am, char *line, uint32_t *cap)
{
	unsigned long long start, end;
	int name_off = 0, name_end = 0;
	struct addrmap_ent *e;
	const char *rest;

	if (sscanf(line, "%llx %llx %n%*s%n", &start, &end, &name_off,
		   &name_end) != 2 || !name_end)
		return -EINVAL;
	if (start >= end)
		return -EINVAL;
	for (rest = line + name_end; *rest == ' ' || *rest == '\t'; rest++)
		;
	if (*rest && *rest != '\n')
		return -EINVAL;
	if (am->nr == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		e = realloc(am->e, (size_t)*cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		am->e = e;
	}
	e = &am->e[am->nr];
	e->start = start;
	e->end = end;
	if (symtab__intern(&am->names, line + name_off, name_end - name_off,
			   &e->id))
		return -ENOMEM;
	am->nr++;
	return 0;
}

int addrmap__read(struct addrmap *am, const char *path)
{
	uint32_t cap = 0, i;
	uint64_t lineno = 0;
	size_t len = 0;
	char *line = NULL;
	FILE *in;
	int ret;

	memset(am, 0, sizeof(*am));
	ret = symtab__init(&am->names);
	if (ret)
		return ret;
	in = fopen(path, "re");
	if (!in) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		goto cleanup;
	}
	while (getline(&line, &len, in) > 0) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		ret = addrmap__parse(am, line, &cap);
		if (ret) {
			fprintf(stderr, "kcc: %s:%" PRIu64 ": %s\n", path, lineno,
				ret == -EINVAL ? "expected 'START END NAME' (hex, START < END)" :
				strerror(-ret));
			goto cleanup;
		}
	}
	if (ferror(in)) {
		ret = -EIO;
		fprintf(stderr, "kcc: %s: read error\n", path);
		goto cleanup;
	}
	qsort(am->e, am->nr, sizeof(*am->e), addrmap_cmp);
	for (i = 1; i < am->nr; i++) {
		if (am->e[i].start < am->e[i - 1].end) {
			fprintf(stderr, "kcc: %s: ranges of %s and %s overlap\n",
				path, symtab__name(&am->names, am->e[i - 1].id),
				symtab__name(&am->names, am->e[i].id));
			ret = -EINVAL;
			goto cleanup;
		}
	}
	ret = 0;
cleanup:
	free(line);
	if (in)
		fclose(in);
	if (ret)
		addrmap__exit(am);
	return ret;
}

void addrmap__exit(struct addrmap *am)
{
	free(am->e);
	symtab__exit(&am->names);
	memset(am, 0, sizeof(*am));
}

uint32_t addrmap__lookup(const struct addrmap *am, uint64_t addr)
{
	uint32_t lo = 0, hi = am->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < am->e[mid].start)
			hi = mid;
		else if (addr >= am->e[mid].end)
			lo = mid + 1;
		else
			return am->e[mid].id;
	}
	return LBRSIM_NONE;
}

/* ---- synthetic programs --------------------------------------------- */

#define GEN_MAX_CALLEES	6

struct gen_routine {
	uint32_t callee[GEN_MAX_CALLEES];
	uint32_t ncallees;
	uint32_t p_call;	/* per mille: chance of one more call */
	bool chain;		/* calls its first callee once, then returns */
};

struct gen_frame {
	uint32_t routine;
	uint32_t calls;		/* calls made so far by this activation */
};

static int gen_push(struct trace *t, uint32_t ev)
{
	if (t->nr == t->cap) {
		uint64_t cap = t->cap ? 2 * t->cap : 4096;
		uint32_t *p = realloc(t->ev, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->ev = p;
		t->cap = cap;
	}
	t->ev[t->nr++] = ev;
	return 0;
}

/* Skewed towards the front of a list of @n: min of two uniform draws. */
static uint32_t gen_skewed(uint64_t *rng, uint32_t n)
{
	uint32_t a = below(rng, n), b = below(rng, n);

	return a < b ? a : b;
}

static void gen_graph(struct gen_routine *g, uint32_t nr, uint64_t *rng)
{
	uint32_t r, j, runs;

	for (r = 0; r < nr; r++) {
		struct gen_routine *x = &g[r];

		/* A quarter of the routines are leaves; r0 is a main loop. */
		x->ncallees = r == 0 ? GEN_MAX_CALLEES :
			      below(rng, 4) == 0 ? 0 :
			      1 + below(rng, GEN_MAX_CALLEES);
		x->p_call = r == 0 ? 990 : 200 + below(rng, 350);
		for (j = 0; j < x->ncallees; j++) {
			uint32_t how = below(rng, 100);

			if (r && how < 10)		/* direct recursion */
				x->callee[j] = r;
			else if (how < 25)		/* anything: cycles */
				x->callee[j] = below(rng, nr);
			else if (r + 1 < nr)		/* mostly downwards */
				x->callee[j] = r + 1 + gen_skewed(rng, nr - r - 1);
			else
				x->callee[j] = below(rng, nr);
		}
	}
	/* Runs of 5..40 routines each calling the next: deep chains. */
	for (runs = nr / 16; runs > 0; runs--) {
		uint32_t from = 1 + below(rng, nr), len = 5 + below(rng, 36);

		for (r = from; r < nr - 1 && r < from + len; r++) {
			if (!g[r].ncallees)
				g[r].ncallees = 1;
			g[r].callee[0] = r + 1;
			g[r].chain = true;
		}
	}
}

int lbrsim__gen_trace(struct trace *t, const struct lbrsim_gen *gp)
{
	uint64_t rng = gp->seed ^ 0x67656e0000000000ull;	/* "gen" */
	uint32_t nr = gp->routines, r, d = 0;
	struct gen_routine *g = NULL;
	struct gen_frame *stk = NULL;
	uint8_t *called = NULL;
	char name[16];
	int ret;

	if (!nr || nr > LBRSIM_MAX_ROUTINES || !gp->max_depth)
		return -EINVAL;
	ret = trace__init(t);
	if (ret)
		return ret;
	ret = -ENOMEM;
	g = calloc(nr, sizeof(*g));
	stk = calloc((size_t)gp->max_depth, sizeof(*stk));
	called = calloc(nr, 1);
	if (!g || !stk || !called)
		goto cleanup;
	for (r = 0; r < nr; r++) {
		uint32_t id;

		snprintf(name, sizeof(name), "r%u", r);
		if (symtab__intern(&t->syms, name, strlen(name), &id))
			goto cleanup;
	}
	gen_graph(g, nr, &rng);

	while (t->nr < gp->events) {
		struct gen_frame *top = d ? &stk[d - 1] : NULL;
		const struct gen_routine *x = top ? &g[top->routine] : NULL;
		uint32_t callee = 0;
		bool call;

		if (!top) {
			/* Mostly r0, sometimes another entry (a thread). */
			callee = below(&rng, 10) ? 0 : below(&rng, nr);
			call = true;
		} else if (d >= gp->max_depth || !x->ncallees) {
			call = false;
		} else if (x->chain) {
			call = top->calls == 0 && below(&rng, 100) < 95;
			callee = x->callee[0];
		} else {
			call = below(&rng, 1000) < x->p_call;
			callee = x->callee[gen_skewed(&rng, x->ncallees)];
		}
		if (!call) {
			ret = gen_push(t, TRACE_RET);
			if (ret)
				goto cleanup;
			d--;
			t->returns++;
			continue;
		}
		ret = gen_push(t, callee);
		if (ret)
			goto cleanup;
		if (top)
			top->calls++;
		stk[d].routine = callee;
		stk[d].calls = 0;
		d++;
		t->calls++;
		called[callee] = 1;
		if (d > t->max_depth)
			t->max_depth = d;
	}
	while (d) {
		ret = gen_push(t, TRACE_RET);
		if (ret)
			goto cleanup;
		d--;
		t->returns++;
	}
	for (r = 0; r < nr; r++)
		t->routines += called[r];
	ret = 0;
cleanup:
	free(g);
	free(stk);
	free(called);
	if (ret)
		trace__exit(t);
	return ret;
}
