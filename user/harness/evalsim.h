/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evalsim.h - approximate k-CCFs of an exact trace, as the profiling
 * methods compared by kcc eval would build them (Documentation/
 * fidelity.rst):
 *
 *	stack		sampled stack walking (Section 4.2 of the adaptive
 *			bursting paper): a frame-pointer sample per period,
 *			no branch records; kcc's KCC_SOURCE_FP path
 *	static		static bursting (Section 5.1): at each sample the
 *			stack is walked, then the next B calls are traced
 *	adaptive	adaptive bursting with re-enablement (Section 5.3):
 *			the same, with bursts of already seen contexts
 *			taken one time in RR_INV and weighted RR_INV, the
 *			decision made by lbr/kcc_burst.c
 *	lbr		kcc: LBR bursts stitched onto the sampled stack,
 *			every burst on its own (no cross-sample joining)
 *	lbr-join	kcc as it runs by default: overlapping bursts joined
 *	lbr-ab		kcc with adaptive bursting (burst_rr_inv)
 *	lbr-2ev		kcc with two events: the event above attributed at
 *			its samples (stack only), the bursts taken at the
 *			samples of a second event, retired calls, at its
 *			own period (a sample every PERIOD calls)
 *
 * The LBR and stack methods go through user/harness/lbrsim.c (samples in
 * the KCC_IOC_INJECT format) and the lbr/ stitcher, exactly as injected
 * samples go through kcc.ko; their address labels are mapped back to
 * routines by re-joining the k-SF.  The two bursting baselines follow
 * the exact trace directly with the lbr/ k-SF builder.  All methods share
 * one sampling schedule: the event is a call, or with max_rate a
 * synthetic event (cache misses, say) of which each call of routine r
 * adds rate(r), drawn per routine in 0..max_rate from the seed; a sample
 * is taken every PERIOD calls on average (the period in events is scaled
 * by the trace's mean rate), each period drawn uniformly within +-JITTER%
 * from a seeded generator, so that sampling does not lock onto a loop.
 *
 * With max_cost the program takes time between its events (lbrsim.h,
 * "Time"): the event is time, or misses at a per-routine rate per unit
 * of time, and accrues over the stretches a routine runs on top of the
 * stack between two events; samples land inside those stretches, as
 * many as fall there.  A period below one call (period_div) then gives
 * several samples a call.
 */
#ifndef KCC_EVALSIM_H
#define KCC_EVALSIM_H

#include <stdbool.h>
#include <stdint.h>

#include "ccf.h"
#include "kcc_stitch.h"
#include "trace.h"

enum evalsim_method {
	EM_STACK,
	EM_STATIC,
	EM_ADAPTIVE,
	EM_LBR,
	EM_LBR_JOIN,
	EM_LBR_AB,
	EM_LBR_2EV,
	EM_LBR_HYB,
	EM_NR
};

struct evalsim_opts {
	uint32_t k;		/* call edges, >= 1 */
	uint32_t period;	/* calls per sample on average, >= 1 */
	uint32_t period_div;	/* 0 or 1; else a sample every period /
				 * period_div calls on average */
	uint32_t jitter;	/* percent, 0..99 */
	uint32_t lbr_depth;	/* records per burst, 0..KCC_INJECT_MAX_BRANCHES */
	uint32_t stack_depth;	/* entries per stack walk */
	uint32_t burst;		/* calls per burst (static, adaptive) */
	uint32_t rr_inv;	/* re-enable one burst in rr_inv */
	uint32_t table;		/* history table entries */
	uint32_t sig_depth;	/* stack entries hashed into a signature */
	uint32_t max_rate;	/* 0: the event is a call; else synthetic
				 * per-routine event rates 0..max_rate */
	uint64_t seed;		/* non-zero */
	bool weight_calls;	/* weight each burst by the calls since
				 * the previous sample (LBR methods: the
				 * burst replayed once per period / 16
				 * calls, the stitcher taking no weight) */
	uint32_t effects;	/* LBR and stack methods: LBRSIM_FX_* */
	uint32_t trim;		/* LBR methods: leave out the newest records
				 * of each burst, the sample taken that many
				 * records earlier (a stitching experiment) */
	uint32_t calls_period;	/* lbr-2ev, lbr-hyb: calls per sample of the
				 * calls event; 0: the period above */
	uint32_t max_cost;	/* 0: the event accrues at calls; else time
				 * passes between events, each routine's
				 * stretches costing 1..max_cost units */
	bool count_calls;	/* LBR methods: samples with records carry
				 * the calls since the previous one
				 * (KCC_SAMPLE_CALLS), the stitcher counts
				 * each call once; not with weight_calls */
};

struct evalsim_result {
	struct pool kccf;	/* approximate k-CCF, labels = trace symtab ids */
	uint32_t ctr;		/* counter of kccf to compare: calls, or
				 * samples for EM_STACK */
	uint64_t samples;
	uint64_t calls;		/* calls of the trace */
	uint64_t replayed;	/* call events traced or replayed in bursts */
	uint64_t bursts;	/* bursts replayed */
	uint64_t skipped;	/* bursts adaptive bursting skipped */
	uint64_t joined;	/* bursts joined with the previous one */
	uint64_t false_joins;	/* of which could not overlap it (lbrsim
				 * saw more records in between than fit) */
	uint64_t stitch_errors;
	uint64_t uncovered;	/* LBR methods: bursts that did not reach
				 * the previous sample's (lbrsim.h) */
	struct kcc_stitch_counts cnt;	/* the stitcher's repairs and drops */
	struct kcc_stitch_calls counted; /* count_calls: what the counts did */
};

extern const char *const evalsim_method_name[EM_NR];

/* The method called @name, or -EINVAL. */
int evalsim__method(const char *name);

/*
 * Run @m over @t and leave its k-CCF in @r (free with evalsim__exit()).
 * Returns 0 or -errno.
 */
int evalsim__run(const struct trace *t, enum evalsim_method m,
		 const struct evalsim_opts *o, struct evalsim_result *r);
void evalsim__exit(struct evalsim_result *r);

#endif /* KCC_EVALSIM_H */
