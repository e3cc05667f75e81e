// SPDX-License-Identifier: GPL-2.0
/*
 * evalsim.c - the profiling methods of kcc eval over an exact trace (see
 * evalsim.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "evalsim.h"
#include "ksfdump.h"
#include "lbrsim.h"
#include "samples.h"

/* Label of a frame no routine holds (truncated walk): no symtab id. */
#define EVAL_UNKNOWN	0xfffffffeull

#define EVAL_POOL_MIN	4096u

const char *const evalsim_method_name[EM_NR] = {
	[EM_STACK]	= "stack",
	[EM_STATIC]	= "static",
	[EM_ADAPTIVE]	= "adaptive",
	[EM_LBR]	= "lbr",
	[EM_LBR_JOIN]	= "lbr-join",
	[EM_LBR_AB]	= "lbr-ab",
	[EM_LBR_2EV]	= "lbr-2ev",
	[EM_LBR_HYB]	= "lbr-hyb",
};

int evalsim__method(const char *name)
{
	int m;

	for (m = 0; m < EM_NR; m++)
		if (!strcmp(name, evalsim_method_name[m]))
			return m;
	return -EINVAL;
}

void evalsim__exit(struct evalsim_result *r)
{
	pool__exit(&r->kccf);
}

/* ---- the sampling schedule ------------------------------------------ */

struct schedule {
	uint64_t rng;
	uint32_t period;
	uint32_t jitter;	/* percent */
};

static uint32_t sched_next(struct schedule *s)
{
	uint32_t j = (uint32_t)((uint64_t)s->period * s->jitter / 100);

	if (!j)
		return s->period;
	/* xorshift64: the same seed gives every method the same samples. */
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->period - j + (uint32_t)(s->rng % (2 * (uint64_t)j + 1));
}

static int no_emit(void *arg, const struct kcc_sample *s)
{
	return 0;
}

/* The sampled event as every method sees it. */
struct ev_model {
	uint64_t *at_call;	/* events a call of each routine adds */
	uint64_t *stretch;	/* events a stretch of it on top adds */
	uint32_t period;	/* events per sample, on average */
};

static void ev_model_free(struct ev_model *em)
{
	free(em->at_call);
	em->at_call = NULL;
	em->stretch = NULL;
}

/* The period, in calls, as a whole number of calls (lbr-2ev, quanta). */
static uint32_t whole_period(const struct evalsim_opts *o, uint32_t by)
{
	uint64_t d = (uint64_t)by * (o->period_div ? o->period_div : 1);
	uint64_t p = o->period / d;

	return p ? (uint32_t)p : 1;
}

/*
 * The events each routine adds, as lbrsim draws them from the seed (a
 * call adds 1 when the event is the call), and the period in events
 * that gives one sample every o->period / o->period_div calls on
 * average over @t, so that a period means the same sampling cost
 * whatever the event.
 */
static int event_model(const struct trace *t, const struct evalsim_opts *o,
		       struct ev_model *em)
{
	struct lbrsim_opts lo = {
		.period = 1, .stack_depth = 1, .max_rate = o->max_rate,
		.max_cost = o->max_cost, .seed = o->seed,
	};
	uint32_t nr = symtab__nr(&t->syms) ? symtab__nr(&t->syms) : 1, i;
	uint32_t div = o->period_div ? o->period_div : 1, *stack;
	uint64_t events = 0, calls = 0, d = 0, p;
	struct lbrsim sim;
	double mean;
	int ret;

	ret = lbrsim__init(&sim, nr, &lo, no_emit, NULL);
	if (ret)
		return ret;
	em->at_call = malloc(2 * (size_t)nr * sizeof(*em->at_call));
	stack = malloc((t->max_depth + 1) * sizeof(*stack));
	if (!em->at_call || !stack) {
		lbrsim__exit(&sim);
		free(stack);
		ev_model_free(em);
		return -ENOMEM;
	}
	em->stretch = em->at_call + nr;
	for (i = 0; i < nr; i++) {
		em->at_call[i] = lbrsim__call_events(&lo, &sim.rt[i]);
		em->stretch[i] = lbrsim__stretch_events(&lo, &sim.rt[i]);
	}
	lbrsim__exit(&sim);
	/* The trace is balanced and never deeper than max_depth. */
	for (p = 0; p < t->nr; p++) {
		if (d)
			events += em->stretch[stack[d - 1]];
		if (t->ev[p] == TRACE_RET) {
			d -= d != 0;
			continue;
		}
		calls++;
		events += em->at_call[t->ev[p]];
		if (d <= t->max_depth)
			stack[d++] = t->ev[p];
	}
	free(stack);
	mean = calls ? (double)o->period * (double)events /
		       ((double)calls * div) : (double)o->period / div;
	mean += 0.5;
	em->period = mean < 1 ? 1 : mean > 0x7fffffff ? 0x7fffffff :
		     (uint32_t)mean;
	return 0;
}

/* inv_k of the k-SF @src into @dst, grown until nothing is dropped. */
static int build_kccf(struct pool *dst, const struct kcc_forest *src,
		      uint32_t k)
{
	uint32_t cap = src->count < EVAL_POOL_MIN / 2 ? EVAL_POOL_MIN :
		       2 * src->count;
	int ret;

	for (;;) {
		ret = ksf__pool_init(dst, cap, src->nmetrics);
		if (ret)
			return ret;
		ret = kcc_inv_k(src, k, k, &dst->f, NULL);
		if (ret != -ENOSPC || cap >= 0x80000000u)
			break;
		pool__exit(dst);
		cap *= 2;
	}
	if (ret)
		pool__exit(dst);
	return ret;
}

/* ---- LBR and stack sampling: lbrsim, then the lbr/ stitcher ---------- */

struct lbr_run {
	struct lbrsim sim;
	struct stitcher sr;
	struct schedule sched;
	struct schedule csched;	/* lbr-2ev: the calls event's */
	struct evalsim_result *r;
	uint64_t uncovered;	/* sim.uncovered at the previous sample */
	uint64_t last_calls;	/* sim.calls at the previous sample */
	uint32_t quantum;	/* weight_calls: calls per replay of a burst */
	uint32_t trim;
	uint64_t tstack[KCC_INJECT_MAX_STACK + 1];
	struct sample_buf tb;
};

/*
 * The sample as it would have been @n records earlier: the @n newest
 * records are undone on the stack (a return puts its routine back on
 * top, a call removes the frame it made) and left out of the burst.
 */
static const struct kcc_sample *trim_sample(struct lbr_run *lr,
					    const struct kcc_sample *s)
{
	const struct kcc_branch *br = kcc_sample_branches(s);
	uint32_t n = lr->trim < s->nr_branches ? lr->trim : s->nr_branches;
	uint32_t m = s->nr_stack, flags = s->flags, i;
	uint64_t *st = lr->tstack;

	memcpy(st, kcc_sample_stack(s), m * sizeof(*st));
	for (i = 0; i < n; i++) {
		if (br[i].kind == KCC_BR_RET) {
			if (m == KCC_INJECT_MAX_STACK) {
				m--;
				flags |= KCC_SAMPLE_TRUNCATED;
			}
			memmove(st + 1, st, m * sizeof(*st));
			st[0] = br[i].from;
			if (m)
				st[1] = br[i].to;
			m++;
		} else if (m) {
			memmove(st, st + 1, --m * sizeof(*st));
		}
	}
	sample_buf__init(&lr->tb, flags, s->delta);
	for (i = 0; i < m; i++)
		sample_buf__push_stack(&lr->tb, st[i]);
	for (i = n; i < s->nr_branches; i++)
		sample_buf__push_branch(&lr->tb, br[i].from, br[i].to,
					br[i].kind);
	return &lr->tb.hdr;
}

static int lbr_emit(void *arg, const struct kcc_sample *s)
{
	struct lbr_run *lr = arg;
	uint64_t before = lr->sr.st.bursts_replayed;
	uint64_t joined = lr->sr.st.bursts_joined;
	uint64_t times = 1, since = lr->sim.calls - lr->last_calls;
	const struct kcc_branch *br = kcc_sample_branches(s);
	uint32_t i;
	int ret;

	lr->last_calls = lr->sim.calls;
	if (lr->trim && s->nr_branches) {
		s = trim_sample(lr, s);
		br = kcc_sample_branches(s);
	}
	/*
	 * Weighting by calls, emulated: the stitcher takes no weight, so a
	 * burst standing for @since calls is replayed since / quantum times
	 * (rounded), each burst counted on its own (no joining).
	 */
	if (lr->quantum && s->nr_branches)
		times = (since + lr->quantum / 2) / lr->quantum;
	ret = 0;
	while (!ret && times--) {
		ret = stitcher__sample(&lr->sr, s);
		if (times)
			kcc_stitch_break(&lr->sr.st);
	}
	if (lr->sr.st.bursts_replayed != before)
		for (i = 0; i < s->nr_branches; i++)
			lr->r->replayed += br[i].kind == KCC_BR_CALL;
	/*
	 * lbrsim has just counted this sample as uncovered when more
	 * records passed since the previous one than the LBR holds: the
	 * two bursts cannot share a record, so a join is a false one.
	 */
	if (lr->sr.st.bursts_joined != joined &&
	    lr->sim.uncovered != lr->uncovered)
		lr->r->false_joins++;
	lr->uncovered = lr->sim.uncovered;
	/* The next sample comes after a period drawn afresh. */
	if (lr->sim.calls_sample)
		lr->sim.o.calls_period = sched_next(&lr->csched);
	else
		lr->sim.o.period = sched_next(&lr->sched);
	return ret;
}

static uint64_t to_routine(void *arg, uint64_t label)
{
	uint32_t r = lbrsim__routine_of(arg, label);

	return r == LBRSIM_NONE ? EVAL_UNKNOWN : r;
}

static int lbr_run(const struct trace *t, enum evalsim_method m,
		   const struct evalsim_opts *o, struct evalsim_result *r)
{
	/* Bursts at a calls event of its own (two events, hybrid). */
	bool two = m == EM_LBR_2EV || m == EM_LBR_HYB;
	struct stitcher_opts so = {
		.k = o->k,
		.rr_inv = m == EM_LBR_AB ? o->rr_inv : 0,
		.table = o->table,
		.sig_depth = o->sig_depth,
		.seed = o->seed,
		.no_join = m == EM_LBR || two,
	};
	struct lbrsim_opts lo = {
		.lbr_depth = m == EM_STACK ? 0 : o->lbr_depth,
		.stack_depth = o->stack_depth,
		.max_rate = o->max_rate,
		.seed = o->seed,
		.effects = o->effects,
		.max_cost = o->max_cost,
		/* Stack samples carry no records to count calls in. */
		.count_calls = (o->count_calls && m != EM_STACK) ||
			       m == EM_LBR_HYB,
		.hybrid = m == EM_LBR_HYB,
	};
	struct lbr_run *lr;
	struct pool rel = { 0 };
	struct ev_model em;
	int ret;

	ret = event_model(t, o, &em);
	if (ret)
		return ret;
	ev_model_free(&em);
	lr = calloc(1, sizeof(*lr));
	if (!lr)
		return -ENOMEM;
	lr->r = r;
	lr->trim = o->trim;
	/* 16 replays for a mean period: weights within about 3%. */
	if (o->weight_calls && !o->count_calls && m != EM_STACK && !two)
		lr->quantum = whole_period(o, 16);
	lr->sched.rng = o->seed;
	lr->sched.period = em.period;
	lr->sched.jitter = o->jitter;
	lo.period = sched_next(&lr->sched);
	if (two) {
		/*
		 * Its own generator, seeded as lbr's: the bursts are those
		 * of lbr sampling calls (--miss-rate 0), the miss samples
		 * those of lbr.
		 */
		lr->csched.rng = o->seed;
		lr->csched.period = o->calls_period ? o->calls_period :
				    whole_period(o, 1);
		lr->csched.jitter = o->jitter;
		lo.calls_period = sched_next(&lr->csched);
	}

	ret = stitcher__init(&lr->sr, &so);
	if (ret)
		goto free_lr;
	ret = lbrsim__init(&lr->sim, symtab__nr(&t->syms) ? symtab__nr(&t->syms) : 1,
			   &lo, lbr_emit, lr);
	if (ret)
		goto exit_stitcher;
	ret = lbrsim__run(&lr->sim, t->ev, t->nr);
	if (!ret)
		ret = lbrsim__finish(&lr->sim);
	if (ret)
		goto exit_sim;
	/* The thread exits: kcc.ko's kcc_task_fold() or last snapshot. */
	stitcher__finish(&lr->sr);

	r->samples = lr->sim.samples;
	r->calls = lr->sim.calls;
	r->bursts = lr->sr.st.bursts_replayed;
	r->skipped = lr->sr.st.bursts_skipped;
	r->joined = lr->sr.st.bursts_joined;
	r->stitch_errors = lr->sr.st.stitch_errors;
	r->cnt = lr->sr.st.cnt;
	r->counted = lr->sr.st.calls;
	r->uncovered = lr->sim.uncovered;
	r->ctr = m == EM_STACK ? KCC_CTR_SAMPLES : KCC_CTR_CALLS;

	/* Addresses to routines, merging what they split, then inv_k. */
	ret = ksf__relabel(&rel, &lr->sr.pool.f, to_routine, &lr->sim);
	if (!ret)
		ret = build_kccf(&r->kccf, &rel.f, o->k);
	pool__exit(&rel);
exit_sim:
	lbrsim__exit(&lr->sim);
exit_stitcher:
	stitcher__exit(&lr->sr);
free_lr:
	free(lr);
	return ret;
}

/* ---- static and adaptive bursting over the exact trace ---------------- */

struct burst_run {
	struct pool p;
	struct kcc_ksf s;
	struct kcc_frame *kstack;
	uint32_t *ex;		/* the exact stack, routine ids */
	uint64_t *sig;		/* the walked stack, innermost first */
	struct kcc_burst b;
	void *bmem;
	struct schedule sched;
	uint64_t depth;		/* of ex */
	uint64_t pending;	/* events since the previous sample */
	uint64_t next;		/* events the next sample is due at */
	uint64_t since;		/* calls since the previous sample */
	uint32_t left;		/* calls the burst still traces */
	uint32_t w;		/* the burst's weight */
};

static void burst_free(struct burst_run *br)
{
	pool__exit(&br->p);
	free(br->kstack);
	free(br->ex);
	free(br->sig);
	free(br->bmem);
}

/* A sample: walk the stack, decide, anchor, and trace the next calls. */
static int burst_sample(struct burst_run *br, enum evalsim_method m,
			const struct evalsim_opts *o, struct evalsim_result *r)
{
	uint32_t n, j;
	bool truncated;
	int ret;

	br->next = sched_next(&br->sched);
	r->samples++;
	if (br->left)
		return 0;	/* a sample inside a burst: no new one */

	n = br->depth < o->stack_depth ? (uint32_t)br->depth : o->stack_depth;
	truncated = br->depth > n;
	for (j = 0; j < n; j++)
		br->sig[j] = br->ex[br->depth - 1 - j];
	br->w = m == EM_STATIC ? 1 : kcc_burst_decide(&br->b, br->sig, n);
	/*
	 * A burst stands for the calls since the previous sample, not for
	 * the events: without this, phases rich in events are
	 * over-represented (Documentation/fidelity.rst).
	 */
	if (o->weight_calls)
		br->w = (uint32_t)(br->since < 0xffffffffu / (br->w ? br->w : 1) ?
				   br->w * br->since : 0xffffffffu);
	br->since = 0;
	if (!br->w) {
		r->skipped++;
		return 0;
	}
	if (br->p.f.capacity - br->p.f.count < 2 * (n + 2 + o->burst)) {
		uint64_t c = 2 * (uint64_t)br->p.f.capacity +
			     2 * (n + 2 + o->burst);

		ret = ksf__pool_grow(&br->p, c > 0xfffff000u ?
				     0xfffff000u : (uint32_t)c);
		if (ret)
			return ret;
	}
	kcc_ksf_clear_stack(&br->s);
	if (truncated)
		kcc_ksf_enter(&br->s, EVAL_UNKNOWN);
	for (j = n; j > 0; j--)
		kcc_ksf_enter(&br->s, br->sig[j - 1]);
	br->left = o->burst;
	r->bursts++;
	return 0;
}

static int burst_run(const struct trace *t, enum evalsim_method m,
		     const struct evalsim_opts *o, struct evalsim_result *r)
{
	uint32_t cap = t->max_depth + 2;
	struct burst_run br = {
		.sched = { .rng = o->seed, .jitter = o->jitter },
	};
	struct ev_model em = { 0 };
	uint64_t i;
	size_t bsize;
	int ret;

	if (t->max_depth > 0xfffffff0u)
		return -E2BIG;
	ret = event_model(t, o, &em);
	if (ret)
		return ret;
	br.sched.period = em.period;
	ret = -ENOMEM;
	br.kstack = calloc(cap, sizeof(*br.kstack));
	br.ex = calloc(cap, sizeof(*br.ex));
	br.sig = calloc(o->stack_depth ? o->stack_depth : 1, sizeof(*br.sig));
	if (!br.kstack || !br.ex || !br.sig)
		goto cleanup;
	ret = ksf__pool_init(&br.p, EVAL_POOL_MIN, 0);
	if (ret)
		goto cleanup;
	ret = kcc_ksf_init(&br.s, &br.p.f, o->k, br.kstack, cap);
	if (ret)
		goto cleanup;
	if (m == EM_ADAPTIVE) {
		bsize = kcc_burst_mem_size(o->table);
		ret = -ENOMEM;
		br.bmem = calloc(1, bsize);
		if (!br.bmem)
			goto cleanup;
		ret = kcc_burst_init(&br.b, br.bmem, bsize, o->table,
				     o->rr_inv, o->sig_depth, o->seed);
		if (ret)
			goto cleanup;
	}

	br.next = sched_next(&br.sched);
	for (i = 0; i < t->nr; i++) {
		uint32_t e = t->ev[i];

		/*
		 * The stretch that ends here (max_cost): its samples see
		 * the stack before the event, as many as fall in it.
		 */
		if (br.depth && em.stretch[br.ex[br.depth - 1]]) {
			br.pending += em.stretch[br.ex[br.depth - 1]];
			while (br.pending >= br.next) {
				br.pending -= br.next;
				ret = burst_sample(&br, m, o, r);
				if (ret)
					goto cleanup;
			}
		}
		if (e == TRACE_RET) {
			br.depth--;
			if (br.left)
				kcc_ksf_return(&br.s);
			continue;
		}
		br.ex[br.depth++] = e;
		r->calls++;
		br.since++;
		if (br.left) {
			kcc_ksf_call_w(&br.s, e, br.w);
			r->replayed++;
			if (!--br.left)
				kcc_ksf_clear_stack(&br.s);
		}
		/* Events at calls: one sample at most. */
		br.pending += em.at_call[e];
		if (br.pending < br.next)
			continue;
		br.pending = 0;
		ret = burst_sample(&br, m, o, r);
		if (ret)
			goto cleanup;
	}
	r->ctr = KCC_CTR_CALLS;
	ret = build_kccf(&r->kccf, &br.p.f, o->k);
cleanup:
	burst_free(&br);
	ev_model_free(&em);
	return ret;
}

int evalsim__run(const struct trace *t, enum evalsim_method m,
		 const struct evalsim_opts *o, struct evalsim_result *r)
{
	memset(r, 0, sizeof(*r));
	if (m >= EM_NR || !o->k || !o->period || o->jitter > 99 ||
	    !o->seed || !o->stack_depth)
		return -EINVAL;
	if (m == EM_STATIC || m == EM_ADAPTIVE)
		return burst_run(t, m, o, r);
	return lbr_run(t, m, o, r);
}
