/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbrsim.h - an LBR sampling simulator: from an exact call/return event
 * stream to the samples kcc.ko would capture from the same run with a
 * PMU event, call-stack LBR filtering (calls and returns only) and a
 * frame-pointer stack walk.  Documentation/stitching.rst describes it.
 *
 * Every routine gets a synthetic code range: its entry is the start of
 * the range, a few call sites lie inside it, each with a call instruction
 * of 2 to 7 bytes (the lengths of x86 call encodings), and one ret
 * instruction sits at its last byte.  A call of g by f uses the call site
 * of f chosen by hashing (f, g), so a loop that calls g again and again
 * produces the same record each time, as a real one would.  Top-level
 * calls come from a loader range that belongs to no routine.  Samples
 * therefore carry addresses that behave like real ones: labels inside a
 * routine differ, return addresses follow call instructions, and
 * lbrsim__routine_of() maps any of them back to the routine.
 *
 *	struct lbrsim sim;
 *	lbrsim__init(&sim, nr_routines, &opts, emit, arg);
 *	lbrsim__run(&sim, events, nr_events);	(or lbrsim__call/_return)
 *	lbrsim__finish(&sim);
 *	lbrsim__exit(&sim);
 *
 * emit() gets each sample as KCC_IOC_INJECT takes it; it is only valid
 * during the call.
 */
#ifndef KCC_LBRSIM_H
#define KCC_LBRSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "samples.h"
#include "symtab.h"
#include "trace.h"

#define LBRSIM_RET	0xffffffffu	/* event: a return (as TRACE_RET) */
#define LBRSIM_NONE	0xffffffffu	/* address of no routine */
#define LBRSIM_MAX_ROUTINES	(1u << 24)
#define LBRSIM_MAX_COST		(1u << 16)	/* max_cost, at most */

/*
 * lbrsim_opts.effects: what real code and hardware do to samples
 * (Documentation/stitching.rst, "Effects").  None changes the exact
 * trace; each changes what a sample shows of it.
 */
#define LBRSIM_FX_LEAF	(1u << 0)	/* a quarter of the routines are
					 * frameless leaves: on top, their
					 * caller is missing from the walk */
#define LBRSIM_FX_LIB	(1u << 1)	/* an eighth are library routines
					 * without frame pointers, half of
					 * them using it as a register */
#define LBRSIM_FX_PLT	(1u << 2)	/* calls into the library go
					 * through PLT stubs */
#define LBRSIM_FX_TAIL	(1u << 3)	/* calls followed by the caller's
					 * return are jumps, a quarter of
					 * the (caller, callee) pairs
					 * (lbrsim__run() only) */
#define LBRSIM_FX_SIGNAL (1u << 4)	/* a 32nd of the routines are signal
					 * handlers, run on the interrupted
					 * routine half the time */
#define LBRSIM_FX_SKID	(1u << 5)	/* registers and LBR -2..2 records
					 * apart */
#define LBRSIM_FX_WIPE	(1u << 6)	/* LBR cleared at context switches,
					 * one record in 4096 */
#define LBRSIM_FX_FAR	(1u << 7)	/* a far branch from the kernel
					 * newest in one burst in 64 */
#define LBRSIM_FX_ALL	0xffu

/* Addresses of no routine the effects produce. */
#define LBRSIM_RESTORER		0x2000ull	/* signal return trampoline */
#define LBRSIM_PLT_BASE		0x100000000000ull /* 16-byte stub per routine */
#define LBRSIM_GARBAGE		0x7ff000000000ull /* what a clobbered rbp reads */

struct lbrsim_opts {
	uint32_t period;	/* events per sample, >= 1 */
	uint32_t lbr_depth;	/* records per burst, 0..KCC_INJECT_MAX_BRANCHES */
	uint32_t stack_depth;	/* entries per stack walk, 1..KCC_INJECT_MAX_STACK */
	uint32_t max_rate;	/* 0: the event is a call; else each call of
				 * routine r adds rate(r) events, a per-routine
				 * constant in 0..max_rate (cache misses, say) */
	uint64_t seed;		/* layout, ips and rates */
	uint32_t effects;	/* LBRSIM_FX_* */
	uint32_t calls_period;	/* 0: one event.  Else two events, as kcc.ko
				 * samples with a calls event: the event
				 * above gives samples without records,
				 * retired calls every calls_period calls
				 * give the bursts (delta 0: they charge
				 * no events) */
	bool hybrid;		/* with calls_period and count_calls, the
				 * hybrid estimate: the event's samples keep
				 * their records too, every sample carries
				 * the calls since the previous one of either
				 * event; the event's pool what their records
				 * miss (KCC_SAMPLE_CALLS_POOL), the calls
				 * event's draw the pool (_DRAW) */
	bool count_calls;	/* samples with records carry the calls since
				 * the previous such sample (KCC_SAMPLE_CALLS),
				 * as a calls counter read at the sample does */
	bool every_period;	/* one sample per period the events reached
				 * (delta = period), not one per call: with
				 * max_rate above period, several samples
				 * land between two calls, as time or miss
				 * samples do in a loop without calls */
	uint32_t max_cost;	/* 0: events accrue at calls.  Else the
				 * program takes time between its events
				 * (see "Time" below): each routine costs
				 * cost(r) in 1..max_cost per stretch, and
				 * the event accrues over the stretches;
				 * implies every_period */
};

/*
 * Time.  A stretch is what a routine runs while on top of the stack
 * between two events (its entry or a return to it, then a call or its
 * return): the loops of its own code.  With max_cost, each stretch of
 * routine r lasts cost(r) units, a per-routine constant drawn
 * log-uniformly in 1..max_cost from the seed (most stretches short, a
 * few long: loops without calls, in which many samples fall), so an
 * activation that makes m calls costs (m + 1) cost(r).  The sampled
 * event accrues over the stretches: the time itself when max_rate is 0,
 * else rate(r) misses per unit.  Samples land inside stretches, between
 * two events, and see the stack and the records as they stand there;
 * calls add no events (the calls event of two-event runs still counts
 * calls).  Traces carry no times, so the costs are the model's.
 */

typedef int (*lbrsim_emit_fn)(void *arg, const struct kcc_sample *s);

struct lbrsim_routine {
	uint64_t start;		/* entry address */
	uint64_t end;		/* one past the last byte */
	uint32_t nsites;	/* call sites */
	uint32_t rate;		/* events per call (max_rate mode) */
	uint32_t fx;		/* LBRSIM_RT_* */
	uint32_t cost;		/* time units per stretch (max_cost mode) */
};

/* Events a call of @r adds; 0 with max_cost (they accrue over time). */
static inline uint64_t lbrsim__call_events(const struct lbrsim_opts *o,
					   const struct lbrsim_routine *r)
{
	if (o->max_cost)
		return 0;
	return o->max_rate ? r->rate : 1;
}

/* Events a stretch of @r on top adds (max_cost mode; else 0). */
static inline uint64_t lbrsim__stretch_events(const struct lbrsim_opts *o,
					      const struct lbrsim_routine *r)
{
	if (!o->max_cost)
		return 0;
	return (uint64_t)r->cost * (o->max_rate ? r->rate : 1);
}

#define LBRSIM_RT_LEAF		(1u << 0)	/* frameless when on top */
#define LBRSIM_RT_LIB		(1u << 1)	/* library: frameless, PLT */
#define LBRSIM_RT_CLOBBER	(1u << 2)	/* uses rbp as a register */
#define LBRSIM_RT_HANDLER	(1u << 3)	/* a signal handler */

struct lbrsim_frame {
	uint32_t routine;
	uint32_t fx;		/* LBRSIM_FR_* */
	uint64_t ret;		/* return address into the caller */
};

#define LBRSIM_FR_TAIL		(1u << 0)	/* entered by a jump */
#define LBRSIM_FR_SIGNAL	(1u << 1)	/* entered by a signal */
#define LBRSIM_FR_GONE		(1u << 2)	/* its tail callee returned for it */

struct lbrsim {
	struct lbrsim_opts o;
	uint32_t nr;			/* routines of the trace */
	struct lbrsim_routine *rt;	/* nr entries, by increasing start */
	struct lbrsim_frame *stack;	/* the exact stack */
	uint64_t depth;
	uint64_t stack_cap;
	struct kcc_branch ring[KCC_INJECT_MAX_BRANCHES];
	uint32_t ring_head;		/* next slot to write */
	uint32_t ring_n;		/* records held, <= lbr_depth */
	uint64_t pending;		/* events since the last sample */
	uint64_t calls_pending;		/* calls since the last calls sample */
	uint64_t calls_since;		/* calls since the last sample with records */
	bool calls_sample;		/* the sample being emitted is one of
					 * the calls event */
	uint64_t window;		/* records since the last sample */
	uint64_t rng;
	uint64_t fx_rng;		/* effects draw from their own stream */
	struct lbrsim_frame *skid;	/* the stack some records ago */
	uint64_t skid_cap;
	lbrsim_emit_fn emit;
	void *arg;
	struct sample_buf sb;
	/* Statistics. */
	uint64_t calls;
	uint64_t returns;
	uint64_t events;
	uint64_t time;		/* units elapsed (max_cost mode) */
	uint64_t samples;
	uint64_t calls_samples;	/* of which of the calls event */
	uint64_t truncated;	/* samples with a truncated stack */
	uint64_t sample_window;	/* records since the previous sample, for
				 * the sample being emitted */
	uint64_t max_window;	/* most records between two samples */
	uint64_t uncovered;	/* samples whose burst does not reach the
				 * previous sample's newest record (window
				 * >= lbr_depth; the first sample: window >
				 * lbr_depth): calls may be missed, and no
				 * overlap is there to be joined */
};

/* 0, or -EINVAL for bad options, -ENOMEM. */
int lbrsim__init(struct lbrsim *sim, uint32_t nr_routines,
		 const struct lbrsim_opts *o, lbrsim_emit_fn emit, void *arg);
void lbrsim__exit(struct lbrsim *sim);

/*
 * One event.  Returns 0, what emit() returned when not 0, -EINVAL for a
 * routine out of range or a return with an empty stack, -ENOMEM.
 */
int lbrsim__call(struct lbrsim *sim, uint32_t routine);
int lbrsim__return(struct lbrsim *sim);
/* @ev[i]: a routine id or LBRSIM_RET. */
int lbrsim__run(struct lbrsim *sim, const uint32_t *ev, uint64_t n);
/* lbrsim__call() of a call made by a jump (a tail call, no record). */
int lbrsim__tail_call(struct lbrsim *sim, uint32_t routine);

/* "leaf,lib,..." (or "all", "none") into LBRSIM_FX_*; 0 or -EINVAL. */
int lbrsim__parse_effects(const char *list, uint32_t *fx);
/*
 * The sample a profiler takes when the thread ends: emitted when a
 * record was added since the last sample, so that every call is in some
 * burst.  Its stack is empty when the trace is balanced.
 */
int lbrsim__finish(struct lbrsim *sim);

/* Routine holding @addr, LBRSIM_NONE outside every routine. */
uint32_t lbrsim__routine_of(const struct lbrsim *sim, uint64_t addr);

/*
 * The layout as a symbol map: one line "START END NAME" per routine,
 * addresses in hex, END exclusive; names from @names (r<id> when NULL).
 * With LBRSIM_FX_PLT, a line per stub too, named after its routine.
 */
int lbrsim__write_map(const struct lbrsim *sim, const struct symtab *names,
		      FILE *out);

/* ---- symbol maps ---------------------------------------------------- */

struct addrmap_ent {
	uint64_t start;
	uint64_t end;
	uint32_t id;		/* symtab id of the name */
};

struct addrmap {
	struct addrmap_ent *e;	/* sorted by start, disjoint */
	uint32_t nr;
	struct symtab names;
};

/*
 * Read a map written by lbrsim__write_map().  Errors go to stderr as
 * "kcc: FILE:LINE: reason".  0, -EINVAL, or -errno.
 */
int addrmap__read(struct addrmap *am, const char *path);
void addrmap__exit(struct addrmap *am);
/* Symtab id of the routine holding @addr, or LBRSIM_NONE. */
uint32_t addrmap__lookup(const struct addrmap *am, uint64_t addr);

/* ---- synthetic programs --------------------------------------------- */

struct lbrsim_gen {
	uint64_t seed;
	uint64_t events;	/* call and return events, about */
	uint32_t routines;	/* >= 1 */
	uint32_t max_depth;	/* deepest context, >= 1 */
};

/*
 * A random program run: a call graph with skewed callee choice, direct
 * and mutual recursion and a few long chains, walked from r0 until about
 * @events events, then every pending call returns.  Names are r0, r1, ...
 * Returns 0 or -errno; @t is initialised here.
 */
int lbrsim__gen_trace(struct trace *t, const struct lbrsim_gen *g);

#endif /* KCC_LBRSIM_H */
