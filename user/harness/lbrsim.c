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

/*
 * Which effects a routine is subject to: drawn from its own hash, so
 * that the layout and the ips stay those of a run without effects.
 */
static uint32_t lbrsim__routine_fx(uint64_t seed, uint32_t r)
{
	uint64_t h = mix64(seed ^ ((uint64_t)r << 20) ^ 0x5f6678ull);
	uint32_t fx = 0;

	if ((h & 3) == 0)
		fx |= LBRSIM_RT_LEAF;
	if (((h >> 2) & 7) == 0) {
		fx |= LBRSIM_RT_LIB;
		if ((h >> 5) & 1)
			fx |= LBRSIM_RT_CLOBBER;
	}
	if (((h >> 6) & 31) == 0)
		fx |= LBRSIM_RT_HANDLER;
	return fx;
}

/*
 * Time units per stretch of routine @r, log-uniform in 1..max_cost: a
 * power of two drawn first, then a value below the next.  From a hash
 * of its own, so that the layout, the rates and the ips stay those of
 * a run without time.
 */
static uint32_t lbrsim__routine_cost(uint64_t seed, uint32_t r, uint32_t max)
{
	uint64_t h = mix64(seed ^ ((uint64_t)r << 24) ^ 0x636f7374ull);
	uint32_t bits = 0, e, c;

	while (bits < 31 && (2u << bits) <= max)
		bits++;
	e = (uint32_t)((h & 0xffffffffull) % (bits + 1));
	c = (1u << e) | (uint32_t)((h >> 32) & ((1u << e) - 1));
	return c < max ? c : max;
}

int lbrsim__init(struct lbrsim *sim, uint32_t nr_routines,
		 const struct lbrsim_opts *o, lbrsim_emit_fn emit, void *arg)
{
	uint64_t cursor = LBRSIM_BASE, rng;
	uint32_t r;

	memset(sim, 0, sizeof(*sim));
	if (!o->period || o->lbr_depth > KCC_INJECT_MAX_BRANCHES ||
	    !o->stack_depth || o->stack_depth > KCC_INJECT_MAX_STACK ||
	    o->max_cost > LBRSIM_MAX_COST ||
	    nr_routines > LBRSIM_MAX_ROUTINES || !emit)
		return -EINVAL;
	sim->o = *o;
	/* Time passes between calls: several samples may land there. */
	if (o->max_cost)
		sim->o.every_period = true;
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
		rt->fx = lbrsim__routine_fx(o->seed, r);
		if (o->max_cost)
			rt->cost = lbrsim__routine_cost(o->seed, r,
							o->max_cost);
	}
	/* Only the loader is below the first routine, stubs above all. */
	if (cursor > LBRSIM_PLT_BASE) {
		lbrsim__exit(sim);
		return -EINVAL;
	}
	sim->fx_rng = mix64(o->seed ^ 0x6566666563747300ull);	/* "effects" */
	return 0;
}

void lbrsim__exit(struct lbrsim *sim)
{
	free(sim->rt);
	free(sim->stack);
	free(sim->skid);
	sim->rt = NULL;
	sim->stack = NULL;
	sim->skid = NULL;
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

	/* Another task was switched in: its records replaced ours. */
	if ((sim->o.effects & LBRSIM_FX_WIPE) && !below(&sim->fx_rng, 4096))
		sim->ring_n = 0;
	b->from = from;
	b->to = to;
	b->kind = kind;
	b->__reserved = 0;
	sim->ring_head = (sim->ring_head + 1) % KCC_INJECT_MAX_BRANCHES;
	if (sim->ring_n < KCC_INJECT_MAX_BRANCHES)
		sim->ring_n++;
	sim->window++;
}

static bool lbrsim__fx(const struct lbrsim *sim, uint32_t fx)
{
	return sim->o.effects & fx;
}

static bool lbrsim__rt_fx(const struct lbrsim *sim, uint32_t r, uint32_t fx)
{
	return sim->rt[r].fx & fx;
}

/* The newest record but @i, 0 = newest; i < ring_n. */
static const struct kcc_branch *lbrsim__ring_at(const struct lbrsim *sim,
						uint32_t i)
{
	return &sim->ring[(sim->ring_head + KCC_INJECT_MAX_BRANCHES - 1 - i) %
			  KCC_INJECT_MAX_BRANCHES];
}

/*
 * The frame-pointer walk of @fr[0..d) as kcc.ko reads it: the ip, then
 * each return address the frame chain holds.  A frameless routine's
 * return address is not on the chain (a frameless leaf only when on
 * top, a library routine anywhere, a tail callee's was never pushed);
 * a signal handler's is the restorer; a library routine that uses rbp
 * as a register leaves garbage to the callee that saved it, and the
 * walk stops there.
 */
static uint32_t lbrsim__walk(struct lbrsim *sim, const struct lbrsim_frame *fr,
			     uint64_t d)
{
	struct sample_buf *sb = &sim->sb;
	bool lib = lbrsim__fx(sim, LBRSIM_FX_LIB);
	const struct lbrsim_routine *rt;
	uint64_t size, hot, j;

	if (!d)
		return 0;
	rt = &sim->rt[fr[d - 1].routine];
	size = rt->end - rt->start;
	hot = below(&sim->rng, LBRSIM_IPS);
	/* A few hot instructions per routine take the events. */
	sample_buf__push_stack(sb, rt->start +
			       mix64(rt->start * LBRSIM_IPS + hot) % size);
	if (lib && (rt->fx & LBRSIM_RT_CLOBBER))
		goto garbage;
	for (j = d - 1; j >= 1; j--) {
		const struct lbrsim_frame *f = &fr[j];
		bool omit = (f->fx & LBRSIM_FR_TAIL) ||
			    (lib && lbrsim__rt_fx(sim, f->routine, LBRSIM_RT_LIB)) ||
			    (j == d - 1 && lbrsim__fx(sim, LBRSIM_FX_LEAF) &&
			     lbrsim__rt_fx(sim, f->routine, LBRSIM_RT_LEAF));

		if (!omit) {
			if (sb->hdr.nr_stack == sim->o.stack_depth)
				return KCC_SAMPLE_TRUNCATED;
			sample_buf__push_stack(sb, (f->fx & LBRSIM_FR_SIGNAL) ?
					       LBRSIM_RESTORER : f->ret);
		}
		if (lib && lbrsim__rt_fx(sim, fr[j - 1].routine,
					 LBRSIM_RT_CLOBBER))
			goto garbage;
	}
	return 0;
garbage:
	if (sb->hdr.nr_stack < sim->o.stack_depth)
		sample_buf__push_stack(sb, LBRSIM_GARBAGE +
				       8 * (rnd(&sim->fx_rng) & 0xffffff));
	return KCC_SAMPLE_TRUNCATED;
}

/*
 * The stack @n records ago, into sim->skid: the newest records undone
 * on a copy (a call removes its frame, a return puts back a plain
 * frame of the routine it left).  Returns its depth, or -ENOMEM.
 */
static int64_t lbrsim__stack_before(struct lbrsim *sim, uint32_t n)
{
	uint64_t d = sim->depth, i;

	if (sim->skid_cap < d + n + 1) {
		struct lbrsim_frame *s;
		uint64_t cap = 2 * (d + n + 1);

		s = realloc(sim->skid, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		sim->skid = s;
		sim->skid_cap = cap;
	}
	memcpy(sim->skid, sim->stack, d * sizeof(*sim->stack));
	for (i = 0; i < n; i++) {
		const struct kcc_branch *b = lbrsim__ring_at(sim, i);
		uint32_t r = lbrsim__routine_of(sim, b->from);

		if (b->kind == KCC_BR_CALL) {
			if (d)
				d--;
		} else if (r != LBRSIM_NONE) {
			sim->skid[d].routine = r;
			sim->skid[d].fx = 0;
			sim->skid[d].ret = b->to;
			d++;
		}
	}
	return (int64_t)d;
}

/*
 * One sample.  With two events (calls_period), @calls says which: the
 * calls event carries the records and no events, the other one the
 * events and no records.
 */
static int lbrsim__sample(struct lbrsim *sim, bool calls)
{
	struct sample_buf *sb = &sim->sb;
	uint32_t flags, nbr, first = 0, i;
	const struct lbrsim_frame *fr = sim->stack;
	int64_t d = (int64_t)sim->depth;
	bool two = sim->o.calls_period != 0;
	uint64_t take = sim->o.every_period && sim->pending > sim->o.period ?
			sim->o.period : sim->pending;

	sample_buf__init(sb, 0, two && calls ? 0 : take);
	nbr = sim->ring_n < sim->o.lbr_depth ? sim->ring_n : sim->o.lbr_depth;
	if (two && !calls && !sim->o.hybrid)
		nbr = 0;
	if (lbrsim__fx(sim, LBRSIM_FX_SKID)) {
		uint32_t skid = below(&sim->fx_rng, 5);

		if (skid > 2) {
			/* The registers were read 1 or 2 records earlier. */
			skid -= 2;
			d = lbrsim__stack_before(sim, skid < nbr ? skid : nbr);
			if (d < 0)
				return (int)d;
			fr = sim->skid;
		} else {
			/* The LBR froze 0..2 records before the sample. */
			first = skid < nbr ? skid : nbr;
		}
	}
	flags = lbrsim__walk(sim, fr, (uint64_t)d);
	sb->hdr.flags = flags;
	if (sim->o.count_calls && (!two || calls || sim->o.hybrid)) {
		sb->hdr.flags |= KCC_SAMPLE_CALLS;
		if (two && sim->o.hybrid)
			sb->hdr.flags |= KCC_SAMPLE_CALLS_POOL;
		/* A burst at a retired call: kcc.ko flags it so. */
		if (two && calls)
			sb->hdr.flags |= KCC_SAMPLE_CALLS_DRAW;
		if (sim->calls_since > 0xffffffffull) {
			sb->hdr.flags |= KCC_SAMPLE_CALLS_SAT;
			sb->hdr.calls = 0xffffffffu;
		} else {
			sb->hdr.calls = (uint32_t)sim->calls_since;
		}
		sim->calls_since = 0;
	}

	if (lbrsim__fx(sim, LBRSIM_FX_FAR) && nbr &&
	    !below(&sim->fx_rng, 64)) {
		/* SYSRET back to the sampled ip: a kernel source, OTHER. */
		sample_buf__push_branch(sb, 0xffffffff81000000ull +
					below(&sim->fx_rng, 1u << 20),
					kcc_sample_stack(&sb->hdr)[0],
					KCC_BR_OTHER);
		nbr--;
	}
	for (i = first; i < nbr; i++) {
		const struct kcc_branch *b = lbrsim__ring_at(sim, i);

		sample_buf__push_branch(sb, b->from, b->to, b->kind);
	}

	sim->calls_sample = two && calls;
	if (flags)
		sim->truncated++;
	sim->samples++;
	if (two && !calls) {
		sim->pending -= take;
		return sim->emit(sim->arg, &sb->hdr);
	}
	if (sim->window > sim->max_window)
		sim->max_window = sim->window;
	if (sim->window > sim->o.lbr_depth ||
	    ((two ? sim->calls_samples : sim->samples - 1) &&
	     sim->window == sim->o.lbr_depth))
		sim->uncovered++;
	sim->sample_window = sim->window;
	if (two) {
		sim->calls_samples++;
		sim->calls_pending = 0;
	} else {
		sim->pending -= take;
	}
	sim->window = 0;
	return sim->emit(sim->arg, &sb->hdr);
}

/* The samples the pending events are due, one per period or one in all. */
static int lbrsim__due(struct lbrsim *sim)
{
	while (sim->pending >= sim->o.period) {
		int err = lbrsim__sample(sim, false);

		if (err || !sim->o.every_period)
			return err;
	}
	return 0;
}

/*
 * max_cost: the stretch that ends at this event, spent by the routine
 * on top; its samples see the state before the event.
 */
static int lbrsim__elapse(struct lbrsim *sim)
{
	const struct lbrsim_frame *top;
	const struct lbrsim_routine *rt;
	uint64_t ev;

	if (!sim->o.max_cost || !sim->depth)
		return 0;
	top = &sim->stack[sim->depth - 1];
	/* A routine whose tail callee returned for it is already gone. */
	if (top->fx & LBRSIM_FR_GONE)
		return 0;
	rt = &sim->rt[top->routine];
	ev = lbrsim__stretch_events(&sim->o, rt);
	sim->time += rt->cost;
	sim->events += ev;
	sim->pending += ev;
	return lbrsim__due(sim);
}

/* How a call is made, as far as the records and the walk show it. */
#define LBRSIM_CALL_TAIL	1	/* a jump: no record, no frame */

static int lbrsim__do_call(struct lbrsim *sim, uint32_t routine, uint32_t how)
{
	uint64_t from, ret, to, ev;
	uint32_t fx = 0;
	int err;

	if (routine >= sim->nr)
		return -EINVAL;
	err = lbrsim__elapse(sim);
	if (err)
		return err;
	if (sim->depth >= sim->stack_cap) {
		uint64_t cap = sim->stack_cap ? 2 * sim->stack_cap : 256;
		struct lbrsim_frame *s;

		s = realloc(sim->stack, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		sim->stack = s;
		sim->stack_cap = cap;
	}
	to = sim->rt[routine].start;
	if (sim->depth) {
		uint32_t caller = sim->stack[sim->depth - 1].routine;

		lbrsim__site(sim, caller, routine, &from, &ret);
		if (lbrsim__fx(sim, LBRSIM_FX_PLT) &&
		    lbrsim__rt_fx(sim, routine, LBRSIM_RT_LIB) &&
		    !lbrsim__rt_fx(sim, caller, LBRSIM_RT_LIB))
			to = LBRSIM_PLT_BASE + 16 * (uint64_t)routine;
		if (how == LBRSIM_CALL_TAIL)
			fx = LBRSIM_FR_TAIL;
		else if (lbrsim__fx(sim, LBRSIM_FX_SIGNAL) &&
			 lbrsim__rt_fx(sim, routine, LBRSIM_RT_HANDLER) &&
			 below(&sim->fx_rng, 2))
			fx = LBRSIM_FR_SIGNAL;
	} else {
		from = LBRSIM_LOADER_SITE;
		ret = LBRSIM_LOADER_SITE + LBRSIM_LOADER_LEN;
	}
	sim->stack[sim->depth].routine = routine;
	sim->stack[sim->depth].fx = fx;
	sim->stack[sim->depth].ret = ret;
	sim->depth++;
	if (!fx)
		lbrsim__record(sim, from, to, KCC_BR_CALL);

	sim->calls++;
	sim->calls_since++;
	ev = lbrsim__call_events(&sim->o, &sim->rt[routine]);
	sim->events += ev;
	sim->pending += ev;
	if (sim->o.calls_period &&
	    ++sim->calls_pending >= sim->o.calls_period) {
		err = lbrsim__sample(sim, true);
		if (err)
			return err;
	}
	return lbrsim__due(sim);
}

int lbrsim__call(struct lbrsim *sim, uint32_t routine)
{
	return lbrsim__do_call(sim, routine, 0);
}

int lbrsim__tail_call(struct lbrsim *sim, uint32_t routine)
{
	return lbrsim__do_call(sim, routine,
			       lbrsim__fx(sim, LBRSIM_FX_TAIL) && sim->depth ?
			       LBRSIM_CALL_TAIL : 0);
}

int lbrsim__return(struct lbrsim *sim)
{
	const struct lbrsim_frame *fr;
	uint64_t to;
	int err;

	if (!sim->depth)
		return -EINVAL;
	err = lbrsim__elapse(sim);
	if (err)
		return err;
	fr = &sim->stack[--sim->depth];
	sim->returns++;
	/* Its tail callee's return already left it. */
	if (fr->fx & LBRSIM_FR_GONE)
		return 0;
	to = fr->ret;
	if (fr->fx & LBRSIM_FR_SIGNAL) {
		to = LBRSIM_RESTORER;
	} else if ((fr->fx & LBRSIM_FR_TAIL) && sim->depth) {
		/*
		 * Into the caller of the first routine of the chain of
		 * tail calls; the routines of the chain are gone.
		 */
		struct lbrsim_frame *c = &sim->stack[sim->depth - 1];

		c->fx |= LBRSIM_FR_GONE;
		while ((c->fx & LBRSIM_FR_TAIL) && c > sim->stack) {
			c--;
			c->fx |= LBRSIM_FR_GONE;
		}
		to = (c->fx & LBRSIM_FR_SIGNAL) ? LBRSIM_RESTORER : c->ret;
	}
	/* The ret instruction is the routine's last byte. */
	lbrsim__record(sim, sim->rt[fr->routine].end - 1, to, KCC_BR_RET);
	return 0;
}

/*
 * Calls that can be tail calls: the caller returns right after the
 * callee; a quarter of them, chosen by hashing the pair, are jumps.
 * @tail: one bit per event.  0 or -ENOMEM.
 */
static int lbrsim__tails(const struct lbrsim *sim, const uint32_t *ev,
			 uint64_t n, uint8_t *tail)
{
	uint64_t *open, d = 0, cap = 256, i;

	open = malloc(cap * sizeof(*open));
	if (!open)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t c;

		if (ev[i] != LBRSIM_RET) {
			if (d == cap) {
				uint64_t *p = realloc(open, 2 * cap * sizeof(*p));

				if (!p) {
					free(open);
					return -ENOMEM;
				}
				open = p;
				cap *= 2;
			}
			open[d++] = i;
			continue;
		}
		if (!d)
			continue;
		c = open[--d];
		if (d && i + 1 < n && ev[i + 1] == LBRSIM_RET &&
		    (mix64(((uint64_t)ev[open[d - 1]] << 32 | ev[c]) ^
			   sim->o.seed ^ 0x7461696cull) & 3) == 0)
			tail[c] = 1;
	}
	free(open);
	return 0;
}

int lbrsim__run(struct lbrsim *sim, const uint32_t *ev, uint64_t n)
{
	uint8_t *tail = NULL;
	uint64_t i;
	int ret = 0;

	if (lbrsim__fx(sim, LBRSIM_FX_TAIL)) {
		tail = calloc(n ? n : 1, 1);
		if (!tail)
			return -ENOMEM;
		ret = lbrsim__tails(sim, ev, n, tail);
	}
	for (i = 0; i < n && !ret; i++) {
		if (ev[i] == LBRSIM_RET)
			ret = lbrsim__return(sim);
		else if (tail && tail[i])
			ret = lbrsim__tail_call(sim, ev[i]);
		else
			ret = lbrsim__call(sim, ev[i]);
	}
	free(tail);
	return ret;
}

int lbrsim__finish(struct lbrsim *sim)
{
	return sim->window ? lbrsim__sample(sim, true) : 0;
}

uint32_t lbrsim__routine_of(const struct lbrsim *sim, uint64_t addr)
{
	uint32_t lo = 0, hi = sim->nr;

	/* A stub is labelled with the routine it jumps to. */
	if (addr >= LBRSIM_PLT_BASE &&
	    addr < LBRSIM_PLT_BASE + 16 * (uint64_t)sim->nr)
		return (uint32_t)((addr - LBRSIM_PLT_BASE) / 16);

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
	/* PLT stubs, named after the routine they reach. */
	for (r = 0; lbrsim__fx(sim, LBRSIM_FX_PLT) && r < sim->nr; r++) {
		uint64_t stub = LBRSIM_PLT_BASE + 16 * (uint64_t)r;

		if (!lbrsim__rt_fx(sim, r, LBRSIM_RT_LIB))
			continue;
		fprintf(out, "%" PRIx64 " %" PRIx64 " ", stub, stub + 16);
		if (names)
			fprintf(out, "%s\n", symtab__name(names, r));
		else
			fprintf(out, "r%u\n", r);
	}
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

static const char *const lbrsim_fx_names[] = {
	"leaf", "lib", "plt", "tail", "signal", "skid", "wipe", "far",
};

int lbrsim__parse_effects(const char *list, uint32_t *fx)
{
	const char *p = list;

	*fx = 0;
	if (!strcmp(list, "none"))
		return 0;
	if (!strcmp(list, "all")) {
		*fx = LBRSIM_FX_ALL;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < sizeof(lbrsim_fx_names) / sizeof(lbrsim_fx_names[0]); i++)
			if (len == strlen(lbrsim_fx_names[i]) &&
			    !strncmp(p, lbrsim_fx_names[i], len))
				break;
		if (i == sizeof(lbrsim_fx_names) / sizeof(lbrsim_fx_names[0]))
			return -EINVAL;
		*fx |= 1u << i;
		p += len;
		if (*p == ',' && *++p == '\0')
			return -EINVAL;
	}
	return *fx ? 0 : -EINVAL;
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
