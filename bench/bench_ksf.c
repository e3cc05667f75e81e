// SPDX-License-Identifier: GPL-2.0
/*
 * bench_ksf - how fast the lbr/ core builds a CCT and k-slab forests
 * online, and how much memory a node costs, on a synthetic call/return
 * trace shaped like a real program's.
 *
 * Usage: bench_ksf [-n EVENTS] [-s SEED] [-r ROUTINES] [-R REPEAT]
 *
 * The trace is generated in memory first (4 bytes an event) so that the
 * timed loops measure the core and not trace decoding.  Every figure is
 * the best of REPEAT runs over the same forest memory, which is reused,
 * so page faults of the first touch are not counted: the kernel module
 * preallocates its pools too.  Nothing is asserted; the targets are
 * printed next to the figures.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kcc_forest.h"
#include "kcc_hcct.h"
#include "kcc_stitch.h"
#include "lbrsim.h"
#include "trace_file.h"

#define EV_RET		0xffffffffu	/* trace event: return */
#define MAX_DEG		12		/* callees per routine */
#define DEPTH_LO	10		/* the stack stays within these */
#define DEPTH_HI	100
#define STACK_CAP	128		/* shadow stack frames, > DEPTH_HI */
#define BURST_PM	900		/* per mille of steps that are short calls */
#define SUB_MAX		3		/* calls of a short subtree */
#define LOOP_DEFAULT	8		/* see Documentation/benchmark.rst */
#define SKEW_DEFAULT	4
#define BATCH		4096		/* events per kcc_ksf_replay() */
#define SPINE_PM	900		/* per mille of spine calls on the hot path */

/* Targets, printed rather than asserted. */
#define TARGET_KSF1_RATIO	1.3	/* 1-SF time / CCT time */
#define TARGET_CCT_MCALLS	100.0	/* CCT calls per second, millions */
#define TARGET_BYTES_NODE	32.0	/* incl. the hash index */

struct opts {
	u64 events;
	u64 seed;
	u32 routines;
	u32 repeat;
	u32 hcct_m;	/* 0: the default three counter counts */
	const char *only;	/* NULL, or one section: build, invk, hcct,
				 * sample */
	u32 loop;	/* mean repetitions of a short call subtree */
	u32 skew;	/* call site choice: min of skew uniform draws */
	const char *path;	/* a kcc trace instead of the generator */
	u32 period;	/* calls per LBR sample */
	bool counted;	/* samples carry their calls (KCC_SAMPLE_CALLS) */
	bool one_k;	/* build section: only the forest of k */
	u32 k;
};

static bool section(const struct opts *o, const char *name)
{
	return !o->only || !strcmp(o->only, name);
}

struct btrace {
	u32 *ev;		/* routine id, or EV_RET */
	u64 *lev;		/* the same as labels, KCC_EV_RET: replay input */
	u64 n;
	u64 calls;
	u32 max_depth;
	u32 min_depth;		/* after the initial descent */
	u64 *label;		/* per routine: an address-like label */
	u32 nr;
};

/* ---- deterministic randomness (splitmix64) ------------------------------ */

static u64 rnd(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static u32 below(u64 *s, u32 n)
{
	return (u32)(((rnd(s) >> 32) * (u64)n) >> 32);
}

/* Skewed towards 0: the minimum of @skew uniform draws in [0, n). */
static u32 skewed(u64 *s, u32 n, u32 skew)
{
	u32 v = below(s, n);

	while (--skew > 0) {
		u32 w = below(s, n);

		if (w < v)
			v = w;
	}
	return v;
}

/* Zipf(1) over routine ranks, by inverse transform on the CDF. */
static u32 zipf(u64 *s, const double *cdf, u32 n)
{
	double u = (double)(rnd(s) >> 11) * 0x1.0p-53;
	u32 lo = 0, hi = n - 1;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "bench_ksf: out of memory (%zu x %zu bytes)\n",
			n, size);
		exit(1);
	}
	return p;
}

/*
 * The program behind the trace: routine 0 is main; every routine calls
 * 1..MAX_DEG callees drawn from a Zipf(1) popularity over all routines,
 * so a few utility routines are called from everywhere and most are
 * rare.  Popular routines calling popular routines make call cycles
 * (mutual recursion); one routine in 16 also calls itself.  A call site
 * is picked with a bias towards the first callees, as real code has a
 * hot path.
 *
 * The stack follows the way programs run: nine steps in ten are short
 * calls (one to three nested activations) from the current frame, and
 * the deeper "spine" of long-lived frames drifts up and down around a
 * target depth that itself sweeps between DEPTH_LO and DEPTH_HI.  The
 * spine mostly takes its routine's first call site, so that, as in real
 * programs, the number of distinct contexts grows much more slowly than
 * the number of calls.
 */
static int btrace__generate(struct btrace *t, const struct opts *o)
{
	u32 nr = o->routines, depth = 0, target = DEPTH_LO, u, j;
	double *cdf = xcalloc(nr, sizeof(*cdf));
	u32 *deg = xcalloc(nr, sizeof(*deg));
	u32 *callee = xcalloc((size_t)nr * MAX_DEG, sizeof(*callee));
	u32 stack[DEPTH_HI + 2];
	u32 last_sub[(DEPTH_HI + 2) * SUB_MAX], last_n[DEPTH_HI + 2] = { 0 };
	u64 s = o->seed, i = 0, addr = 0xffffffff81000000ull;
	double sum = 0;

	t->nr = nr;
	t->n = o->events;
	t->ev = malloc(t->n * sizeof(*t->ev));
	t->label = xcalloc(nr, sizeof(*t->label));
	if (!t->ev) {
		fprintf(stderr, "bench_ksf: cannot hold %" PRIu64 " events: %s\n",
			t->n, strerror(errno));
		free(cdf);
		free(deg);
		free(callee);
		return -ENOMEM;
	}

	for (u = 0; u < nr; u++)
		sum += 1.0 / (u + 1);
	for (u = 0, cdf[0] = 0; u < nr; u++)
		cdf[u] = (u ? cdf[u - 1] : 0) + 1.0 / (u + 1) / sum;
	cdf[nr - 1] = 1.0;

	for (u = 0; u < nr; u++) {
		/* Kernel text addresses, routines 16..4096 bytes long. */
		t->label[u] = addr;
		addr += 16 * (1 + skewed(&s, 256, 2));
		deg[u] = 1 + below(&s, MAX_DEG);
		for (j = 0; j < deg[u]; j++)
			callee[u * MAX_DEG + j] = zipf(&s, cdf, nr);
		if (below(&s, 16) == 0)
			callee[u * MAX_DEG + below(&s, deg[u])] = u;
	}

	t->calls = 0;
	t->max_depth = 0;
	t->min_depth = DEPTH_HI;
	stack[depth++] = 0;
	t->ev[i++] = 0;
	while (i < t->n) {
		u32 top = stack[depth - 1];
		u32 *cl = &callee[top * MAX_DEG];
		u32 r = below(&s, 1000);

		if ((i & 0xffff) == 0) {
			/* Sweep the range every 2^23 events, with jitter. */
			u32 phase = (i >> 16) & 127;
			u32 tri = phase < 64 ? phase : 128 - phase;

			target = DEPTH_LO + 2 + tri * (DEPTH_HI - DEPTH_LO - 4) / 64;
			target = target + below(&s, 9) - 4;
		}
		if (depth > DEPTH_LO && depth < DEPTH_HI - 3 && r < BURST_PM &&
		    i + 2 * SUB_MAX < t->n) {
			/*
			 * A short-lived subtree: 1 to 3 nested calls.  With
			 * probability 1 - 1/loop it repeats the previous
			 * subtree of the same activation, as a loop body
			 * does; otherwise a new one is drawn.
			 */
			u32 *sub = &last_sub[depth * SUB_MAX], n, c;

			if (last_n[depth] && below(&s, o->loop) != 0) {
				n = last_n[depth];
			} else {
				c = cl[skewed(&s, deg[top], o->skew)];
				sub[0] = c;
				n = 1;
				while (n < SUB_MAX && below(&s, 3) == 0) {
					c = callee[c * MAX_DEG +
						   skewed(&s, deg[c], o->skew)];
					sub[n++] = c;
				}
				last_n[depth] = n;
			}
			for (j = 0; j < n; j++)
				t->ev[i++] = sub[j];
			t->calls += n;
			if (depth + n > t->max_depth)
				t->max_depth = depth + n;
			while (n--)
				t->ev[i++] = EV_RET;
			continue;
		}
		if (depth <= DEPTH_LO ||
		    (depth < DEPTH_HI &&
		     below(&s, 100) < (depth < target ? 55u : 45u))) {
			u32 c = below(&s, 1000) < SPINE_PM ? cl[0] :
				cl[skewed(&s, deg[top], o->skew)];

			stack[depth++] = c;
			last_n[depth] = 0;	/* a new activation */
			t->ev[i++] = c;
			t->calls++;
		} else {
			last_n[depth] = 0;
			depth--;
			t->ev[i++] = EV_RET;
		}
		if (depth > t->max_depth)
			t->max_depth = depth;
		if (t->calls > 2 * DEPTH_LO && depth < t->min_depth)
			t->min_depth = depth;
	}
	t->calls++;	/* main */
	free(cdf);
	free(deg);
	free(callee);
	return 0;
}

/*
 * A kcc trace (text or binary, e.g. one make eval recorded) instead of
 * the generator.  Routine i gets an address-like label: 16-byte aligned,
 * 64 bytes apart, as functions of a small program would be.
 */
static int btrace__load(struct btrace *t, const char *path)
{
	u32 d = 0, u;
	struct trace kt;
	u64 i;
	int ret;

	if (trace__init(&kt))
		return -ENOMEM;
	ret = trace__read(&kt, path, false);
	if (ret) {
		trace__exit(&kt);
		return ret;
	}
	t->nr = kt.syms.nr ? kt.syms.nr : 1;
	t->n = kt.nr;
	t->ev = xcalloc(t->n, sizeof(*t->ev));
	t->label = xcalloc(t->nr, sizeof(*t->label));
	for (u = 0; u < t->nr; u++)
		t->label[u] = 0x400000 + 64ull * u;
	t->calls = 0;
	t->max_depth = 0;
	t->min_depth = 0;
	for (i = 0; i < t->n; i++) {
		t->ev[i] = kt.ev[i] == TRACE_RET ? EV_RET : kt.ev[i];
		if (t->ev[i] == EV_RET) {
			d--;
			continue;
		}
		t->calls++;
		if (++d > t->max_depth)
			t->max_depth = d;
	}
	trace__exit(&kt);
	return 0;
}

/* The events as labels, the input of kcc_ksf_replay(). */
static void btrace__labels(struct btrace *t)
{
	u64 i;

	t->lev = xcalloc(t->n, sizeof(*t->lev));
	for (i = 0; i < t->n; i++)
		t->lev[i] = t->ev[i] == EV_RET ? KCC_EV_RET :
			    t->label[t->ev[i]];
}

/* ---- construction ------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * One pass over the trace; false if the forest filled up.  Per event
 * through kcc_ksf_call()/kcc_ksf_return(), or in batches of BATCH
 * events through kcc_ksf_replay().  Both read the same label array.
 * The timed passes are functions of their own, never inlined, so that
 * bench/insns.sh can count their instructions alone (callgrind
 * --toggle-collect).
 */
static bool build(const struct btrace *t, struct kcc_forest *f, u32 k,
		  struct kcc_frame *stack, bool stop_when_full, bool batch)
{
	const u64 *lev = t->lev;
	struct kcc_ksf s;
	u64 i;

	kcc_forest_reset(f);
	kcc_ksf_init(&s, f, k, stack, STACK_CAP);
	if (batch) {
		for (i = 0; i < t->n; i += BATCH)
			kcc_ksf_replay(&s, lev + i,
				       t->n - i < BATCH ? t->n - i : BATCH);
		return !f->drops;
	}
	for (i = 0; i < t->n; i++) {
		u64 e = lev[i];

		if (e == KCC_EV_RET) {
			kcc_ksf_return(&s);
		} else {
			kcc_ksf_call(&s, e);
			if (stop_when_full && unlikely(f->drops))
				return false;
		}
	}
	return !f->drops;
}

static __attribute__((noinline)) void
pass_events(const struct btrace *t, struct kcc_forest *f, u32 k,
	    struct kcc_frame *stack)
{
	build(t, f, k, stack, false, false);
}

static __attribute__((noinline)) void
pass_replay(const struct btrace *t, struct kcc_forest *f, u32 k,
	    struct kcc_frame *stack)
{
	build(t, f, k, stack, false, true);
}

struct forest_mem {
	struct kcc_forest f;
	void *mem;
	u32 cap;
};

static void forest_mem__free(struct forest_mem *m)
{
	free(m->mem);
	m->mem = NULL;
}

static int forest_mem__alloc(struct forest_mem *m, u32 cap)
{
	size_t sz = kcc_forest_mem_size(cap, 0);

	forest_mem__free(m);
	/* Page-aligned and not zeroed: reset() writes what must be. */
	if (posix_memalign(&m->mem, 4096, sz)) {
		fprintf(stderr, "bench_ksf: cannot allocate %zu bytes for %u nodes\n",
			sz, cap);
		return -ENOMEM;
	}
	m->cap = cap;
	return kcc_forest_init(&m->f, m->mem, sz, cap, 0);
}

static u32 with_headroom(u64 n)
{
	n += n / 4 + 1024;
	return n < KCC_FREE ? (u32)n : KCC_FREE - 1;
}

struct result {
	const char *name;
	u32 k;
	u32 nodes;
	u32 cap;
	u32 buckets;
	u32 stride;
	double secs;		/* per event */
	double secs_batch;	/* kcc_ksf_replay() */
};

/*
 * Size the forest (doubling until the trace fits; a pass stops at the
 * first drop), give it 25% headroom as a preallocating caller would,
 * then time the best of o->repeat full passes.
 */
static int time_build(const struct btrace *t, const struct opts *o, u32 k,
		      struct forest_mem *m, struct kcc_frame *stack,
		      struct result *r)
{
	u32 cap = 1u << 20, i;
	int ret;

	while (1) {
		ret = forest_mem__alloc(m, cap);
		if (ret)
			return ret;
		if (build(t, &m->f, k, stack, true, false))
			break;
		if (cap >= KCC_FREE / 2) {
			fprintf(stderr, "bench_ksf: forest does not fit in %u nodes\n",
				cap);
			return -ENOSPC;
		}
		cap *= 2;
	}
	ret = forest_mem__alloc(m, with_headroom(m->f.count));
	if (ret)
		return ret;

	r->k = k;
	r->secs = INFINITY;
	r->secs_batch = INFINITY;
	for (i = 0; i < 2 * o->repeat; i++) {
		double t0 = now(), dt;

		/* Alternate, so that load on the machine hits both alike. */
		if (i & 1)
			pass_replay(t, &m->f, k, stack);
		else
			pass_events(t, &m->f, k, stack);
		dt = now() - t0;
		if (i & 1 && dt < r->secs_batch)
			r->secs_batch = dt;
		else if (!(i & 1) && dt < r->secs)
			r->secs = dt;
	}
	r->nodes = m->f.count;
	r->cap = m->f.capacity;
	r->buckets = m->f.bucket_mask + 1;
	r->stride = m->f.stride;
	return 0;
}

/* Bytes a node costs when the pool is full: stride plus bucket share. */
static double bytes_full(const struct result *r)
{
	return r->stride + (double)sizeof(u32) * r->buckets / r->cap;
}

static void print_build(const struct btrace *t, const struct result *r,
			const struct result *cct)
{
	size_t mem = kcc_forest_mem_size(r->cap, 0);
	double full = bytes_full(r);

	printf("%-6s %10u %6.2f%% %9.1f %8.2f %9.1f %8.2f %9.1f %9.1f %7.2fx\n",
	       r->name, r->nodes, 100.0 * r->nodes / t->calls,
	       t->calls / r->secs / 1e6, r->secs * 1e9 / t->calls,
	       t->calls / r->secs_batch / 1e6,
	       r->secs_batch * 1e9 / t->calls,
	       (double)mem / r->nodes, full,
	       r->secs_batch / cct->secs_batch);
}

/*
 * inv_k from the k-SF held in @src: sized like the builds, best of
 * o->repeat.
 */
static int time_invk(const struct opts *o, const struct result *src_r,
		     struct forest_mem *src, struct forest_mem *dst)
{
	u32 cap = with_headroom(2ull * src->f.count), i;
	double best = INFINITY;
	int ret;

	while (1) {
		ret = forest_mem__alloc(dst, cap);
		if (ret)
			return ret;
		ret = kcc_inv_k(&src->f, src_r->k, src_r->k, &dst->f, NULL);
		if (ret != -ENOSPC)
			break;
		cap = cap >= KCC_FREE / 2 ? KCC_FREE - 1 : cap * 2;
	}
	if (ret) {
		fprintf(stderr, "bench_ksf: kcc_inv_k(k=%u): %s\n", src_r->k,
			strerror(-ret));
		return ret;
	}
	for (i = 0; i < o->repeat; i++) {
		double t0, dt;

		kcc_forest_reset(&dst->f);
		t0 = now();
		kcc_inv_k(&src->f, src_r->k, src_r->k, &dst->f, NULL);
		dt = now() - t0;
		if (dt < best)
			best = dt;
	}
	printf("%u      %10u %12u %10.1f %10.1f\n", src_r->k, src->f.count,
	       dst->f.count, best * 1e3, best * 1e9 / src->f.count);
	return 0;
}

static __attribute__((noinline)) void pass_hcct(const struct btrace *t,
						struct kcc_hcct *h)
{
	u64 j;

	for (j = 0; j < t->n; j++) {
		if (t->lev[j] == KCC_EV_RET)
			kcc_hcct_return(h);
		else
			kcc_hcct_call(h, t->lev[j]);
	}
}

static __attribute__((noinline)) void pass_evict(struct kcc_hcct *h,
						 u64 calls)
{
	u64 i;

	kcc_hcct_call(h, 1);
	for (i = 0; i < calls; i++) {
		kcc_hcct_call(h, (i & 1) ? 2 + i % 97 : 1000 + i);
		kcc_hcct_return(h);
	}
}

/*
 * The HCCT with m Space-Saving counters over the same trace: the MCCT
 * pool starts at 2m plus the deepest stack and doubles until no call is
 * dropped; then the best of o->repeat passes.
 */
static int time_hcct(const struct btrace *t, const struct opts *o, u32 m)
{
	u64 want = 2ull * m + t->max_depth + 1024;
	double best = INFINITY;
	struct kcc_hcct h;
	void *mem = NULL;
	u32 cap, i;

	cap = want < KCC_FREE ? (u32)want : KCC_FREE - 1;
	for (i = 0; i < o->repeat + 1; i++) {
		size_t sz = kcc_hcct_mem_size(cap, m);
		double t0, dt;

		if (!mem)
			mem = malloc(sz);
		if (!mem || kcc_hcct_init(&h, mem, sz, cap, m)) {
			fprintf(stderr, "bench_ksf: cannot set up an HCCT of %u nodes\n",
				cap);
			free(mem);
			return -ENOMEM;
		}
		t0 = now();
		pass_hcct(t, &h);
		dt = now() - t0;
		if (h.drops) {
			if (cap >= KCC_FREE / 2)
				return -ENOSPC;
			cap *= 2;
			free(mem);
			mem = NULL;
			i--;
			continue;
		}
		/* The first complete pass warms the pool up. */
		if (i && dt < best)
			best = dt;
	}
	printf("%8u %10u %9.1f %8.2f\n", m, h.f.live,
	       t->calls / best / 1e6, best * 1e9 / t->calls);
	free(mem);
	return 0;
}

/*
 * Space-Saving's worst case: every other call is a context never seen
 * before, which takes the smallest counter over, while 97 hot contexts
 * keep the counts apart.  A heap pays O(log m) for each takeover; the
 * Stream-Summary a constant.
 */
static int time_hcct_evict(const struct opts *o, u32 m, u64 calls)
{
	u32 cap = 2 * m + 64, r;
	size_t sz = kcc_hcct_mem_size(cap, m);
	void *mem = malloc(sz);
	double best = INFINITY;
	struct kcc_hcct h;

	if (!mem)
		return -ENOMEM;
	for (r = 0; r < o->repeat; r++) {
		double t0;

		kcc_hcct_init(&h, mem, sz, cap, m);
		t0 = now();
		pass_evict(&h, calls);
		t0 = now() - t0;
		if (t0 < best)
			best = t0;
	}
	printf("%8u %10u %9.1f %8.2f  (a new context every other call)\n",
	       m, h.f.live, calls / best / 1e6, best * 1e9 / calls);
	free(mem);
	return h.drops ? -ENOSPC : 0;
}

/* ---- the kernel's per-sample path ---------------------------------------- */

struct sample_set {
	u8 *buf;		/* packed struct kcc_sample, as injected */
	size_t len, cap;
	u64 n;
	u64 stack_entries;
	u64 branches;
};

static int sample_set__add(void *arg, const struct kcc_sample *smp)
{
	struct sample_set *ss = arg;

	if (ss->len + smp->size > ss->cap) {
		size_t cap = ss->cap ? 2 * ss->cap : 1 << 20;
		u8 *p;

		while (cap < ss->len + smp->size)
			cap *= 2;
		p = realloc(ss->buf, cap);
		if (!p)
			return -ENOMEM;
		ss->buf = p;
		ss->cap = cap;
	}
	memcpy(ss->buf + ss->len, smp, smp->size);
	ss->len += smp->size;
	ss->n++;
	ss->stack_entries += smp->nr_stack;
	ss->branches += smp->nr_branches;
	return 0;
}

/*
 * A fresh k-SF and its stitcher.  Not timed: kcc.ko sets a task's forest
 * up once and never resets it in place, so clearing the buckets is no
 * part of the per-sample cost.
 */
static void stitch_start(struct kcc_stitch *st, struct kcc_forest *f, u32 k,
			 struct kcc_frame *stack, u32 stack_cap,
			 struct kcc_stitch_frame *frames, u32 frames_cap)
{
	kcc_forest_reset(f);
	kcc_stitch_init(st, f, k, stack, stack_cap, frames, frames_cap, NULL);
}

/* Every sample through @st; false if the forest filled up. */
static bool stitch_all(const struct sample_set *ss, struct kcc_stitch *st)
{
	size_t off;

	for (off = 0; off < ss->len;) {
		const struct kcc_sample *smp = (const void *)(ss->buf + off);

		kcc_stitch_sample(st, smp);
		off += smp->size;
	}
	return !st->ksf.f->drops;
}

/* The timed pass: what bench/insns.sh counts. */
static __attribute__((noinline)) void
pass_samples(const struct sample_set *ss, struct kcc_stitch *st)
{
	stitch_all(ss, st);
}

/*
 * What kcc.ko does per sample, at k = 3: undo the burst against the
 * stack walk, anchor the stack, replay the records, charge the sample.
 * The samples are those of kcc's LBR simulator (user/harness/lbrsim.c):
 * one every o->period calls, a 32-record call-stack LBR and a full stack
 * walk.  Instruction counts come from bench/insns.sh (callgrind).
 */
static int time_samples(const struct btrace *t, const struct opts *o)
{
	struct lbrsim_opts lo = { .period = o->period, .lbr_depth = 32,
				  .stack_depth = KCC_INJECT_MAX_STACK,
				  .seed = 1, .count_calls = o->counted };
	u32 stack_cap = KCC_INJECT_MAX_STACK + KCC_INJECT_MAX_BRANCHES;
	u32 frames_cap = stack_cap, cap = 1u << 16, nmet = KCC_NR_CTRS - 1;
	struct kcc_stitch_frame *frames = NULL;
	struct sample_set ss = { 0 };
	struct kcc_frame *stack = NULL;
	struct kcc_stitch st;
	struct kcc_forest f;
	double best = INFINITY;
	struct lbrsim sim;
	void *mem = NULL;
	int ret;
	u32 i;

	ret = lbrsim__init(&sim, t->nr, &lo, sample_set__add, &ss);
	if (ret)
		return ret;
	ret = lbrsim__run(&sim, t->ev, t->n);
	if (!ret)
		ret = lbrsim__finish(&sim);
	lbrsim__exit(&sim);
	if (ret || !ss.n)
		goto out;
	stack = xcalloc(stack_cap, sizeof(*stack));
	frames = xcalloc(frames_cap, sizeof(*frames));
	for (;;) {
		size_t sz = kcc_forest_mem_size(cap, nmet);

		free(mem);
		mem = malloc(sz);
		if (!mem || kcc_forest_init(&f, mem, sz, cap, nmet)) {
			ret = -ENOMEM;
			goto out;
		}
		stitch_start(&st, &f, 3, stack, stack_cap, frames,
			     frames_cap);
		if (stitch_all(&ss, &st))
			break;
		cap *= 2;
	}
	for (i = 0; i < o->repeat; i++) {
		double t0, dt;

		stitch_start(&st, &f, 3, stack, stack_cap, frames, frames_cap);
		t0 = now();
		pass_samples(&ss, &st);
		dt = now() - t0;
		if (dt < best)
			best = dt;
	}
	printf("%10" PRIu64 " %8.1f %8.1f %10u %10.1f %9.2f\n", ss.n,
	       (double)ss.stack_entries / ss.n, (double)ss.branches / ss.n,
	       f.count, best * 1e9 / ss.n, ss.n / best / 1e6);
out:
	free(mem);
	free(stack);
	free(frames);
	free(ss.buf);
	return ret;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bench_ksf [-n EVENTS] [-s SEED] [-r ROUTINES] [-R REPEAT]\n"
		"                 [-m COUNTERS] [-o SECTION] [-l LOOP] [-k SKEW]\n"
		"                 [-K K] [-t TRACE] [-p PERIOD] [-C]\n"
		"\n"
		"Times the online construction of the CCT and of k-slab forests\n"
		"(k = 1, 2, 3, 8) and inv_k (k = 1, 2, 3) on a synthetic trace.\n"
		"\n"
		"  -n EVENTS    call and return events (default 100000000)\n"
		"  -s SEED      trace generator seed (default 1)\n"
		"  -r ROUTINES  distinct routines (default 4096)\n"
		"  -R REPEAT    runs per figure, the best is shown (default 3)\n"
		"  -m COUNTERS  HCCT with this many counters only\n"
		"  -K K         build section: only the CCT (inf) or the K-SF\n"
		"  -o SECTION   only build, invk, hcct or sample (e.g. under callgrind)\n"
		"  -l LOOP      a short call subtree repeats LOOP times on average\n"
		"               (default %u; 1: never)\n"
		"  -k SKEW      call site choice: the smallest of SKEW uniform draws,\n"
		"               larger is more concentrated (default %u)\n"
		"  -t TRACE     a kcc trace (text or binary) instead of the generator\n"
		"  -p PERIOD    calls per LBR sample in the sample section (default 1000)\n"
"  -C           samples carry the calls since the previous one, as with a\n"
"               calls counter: bursts weighted, their variance kept\n"
		"\n"
		"EXAMPLES\n"
		"  bench_ksf                 the figures of Documentation/benchmark.rst\n"
		"  bench_ksf -n 10000000     a quick run\n"
		"  bench_ksf -t bzip2.trace  a trace make eval recorded\n", LOOP_DEFAULT,
		SKEW_DEFAULT);
}

static int parse_u64(const char *s, u64 *v, u64 min, u64 max)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || x < min || x > max)
		return -EINVAL;
	*v = x;
	return 0;
}

int main(int argc, char **argv)
{
	static const u32 ks[] = { KCC_K_INF, 1, 2, 3, 8 };
	static const char *const names[] = { "CCT", "1-SF", "2-SF", "3-SF",
					     "8-SF" };
	struct opts o = { .events = 100000000, .seed = 1, .routines = 4096,
			  .repeat = 3, .loop = LOOP_DEFAULT, .period = 1000,
			  .skew = SKEW_DEFAULT };
	struct result res[5] = { 0 };
	struct forest_mem src = { 0 }, dst = { 0 };
	struct kcc_frame *stack = NULL;
	struct btrace t = { 0 };
	double t0;
	int c, bad = 0, ret = 1;
	u64 v = 0;
	size_t i;

	while ((c = getopt(argc, argv, "n:s:r:R:m:o:l:k:K:t:p:Ch")) != -1) {
		switch (c) {
		case 'C':
			o.counted = true;
			break;
		case 'l':
			bad = parse_u64(optarg, &v, 1, 1000);
			o.loop = v;
			break;
		case 'k':
			bad = parse_u64(optarg, &v, 1, 64);
			o.skew = v;
			break;
		case 't':
			o.path = optarg;
			break;
		case 'K':
			o.one_k = true;
			if (!strcmp(optarg, "inf")) {
				o.k = KCC_K_INF;
			} else {
				bad = parse_u64(optarg, &v, 1, 8);
				o.k = v;
			}
			break;
		case 'p':
			bad = parse_u64(optarg, &v, 1, 1u << 30);
			o.period = v;
			break;
		case 'm':
			bad = parse_u64(optarg, &v, 1, 1u << 24);
			o.hcct_m = v;
			break;
		case 'o':
			o.only = optarg;
			bad = !section(&o, "build") + !section(&o, "invk") +
			      !section(&o, "hcct") + !section(&o, "sample") != 3;
			break;
		case 'n':
			bad = parse_u64(optarg, &o.events, 1000, 1ull << 33);
			break;
		case 's':
			bad = parse_u64(optarg, &o.seed, 0, ~0ull);
			break;
		case 'r':
			bad = parse_u64(optarg, &v, 16, 1u << 24);
			o.routines = v;
			break;
		case 'R':
			bad = parse_u64(optarg, &v, 1, 100);
			o.repeat = v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "bench_ksf: bad value '%s' for -%c\n",
				optarg, c);
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	t0 = now();
	if (o.path) {
		ret = btrace__load(&t, o.path);
		if (ret) {
			fprintf(stderr, "bench_ksf: %s: %s\n", o.path,
				strerror(-ret));
			ret = 1;
			goto cleanup;
		}
		ret = 1;
		if (t.max_depth >= STACK_CAP) {
			fprintf(stderr, "bench_ksf: %s: depth %u above %u\n",
				o.path, t.max_depth, STACK_CAP);
			goto cleanup;
		}
		printf("kcc bench_ksf: %s: %" PRIu64 " events, %" PRIu64 " calls, %u routines, depth up to %u (read in %.1f s)\n",
		       o.path, t.n, t.calls, t.nr, t.max_depth, now() - t0);
	} else {
		if (btrace__generate(&t, &o))
			goto cleanup;
		printf("kcc bench_ksf: %" PRIu64 " events, %" PRIu64 " calls, %u routines, depth %u..%u, loops repeat %u times on average, seed %" PRIu64 " (generated in %.1f s)\n",
		       t.n, t.calls, t.nr, t.min_depth, t.max_depth, o.loop,
		       o.seed, now() - t0);
	}
	btrace__labels(&t);
	printf("best of %u runs; a call's time includes its return; B/node: forest memory incl. hash index\n"
	       "per node used (25%% headroom), and node stride + bucket share at full capacity\n"
	       "wall-clock figures on a shared machine are noisy: bench/insns.sh counts instructions\n\n",
	       o.repeat);

	stack = xcalloc(STACK_CAP, sizeof(*stack));
	if (section(&o, "build"))
		printf("                            per event           kcc_ksf_replay()\n"
		       "struct      nodes  nodes/call  Mcalls/s  ns/call  Mcalls/s  ns/call  B/node used  full  vs CCT\n");
	for (i = 0; i < 5 && section(&o, "build"); i++) {
		if (o.one_k && ks[i] != o.k)
			continue;
		res[i].name = names[i];
		if (time_build(&t, &o, ks[i], &src, stack, &res[i]))
			goto cleanup;
		print_build(&t, &res[i], o.one_k ? &res[i] : &res[0]);
		fflush(stdout);
	}

	if (section(&o, "invk")) {
		printf("\ninv_k from the k-SF (k-CCF of the same k), best of %u\n",
		       o.repeat);
		printf("k      k-SF nodes  k-CCF nodes       ms  ns/SF node\n");
	}
	for (i = 1; i <= 3 && section(&o, "invk"); i++) {
		struct result r = res[i];

		/* Rebuild the k-SF: src last held the 8-SF. */
		if (time_build(&t, &(struct opts){ .repeat = 1 }, ks[i], &src,
			       stack, &r))
			goto cleanup;
		if (time_invk(&o, &r, &src, &dst))
			goto cleanup;
	}

	if (section(&o, "hcct")) {
		printf("\nHCCT (Space-Saving over full contexts), best of %u\n",
		       o.repeat);
		printf("counters MCCT nodes  Mcalls/s  ns/call\n");
	}
	for (i = 0; i < 3 && section(&o, "hcct"); i++) {
		u32 m = o.hcct_m ? o.hcct_m :
			(i == 0 ? 1000 : i == 1 ? 10000 : 100000) + 1;

		if (time_hcct(&t, &o, m) ||
		    time_hcct_evict(&o, m, t.calls))
			goto cleanup;
		if (o.hcct_m)
			break;
	}

	if (section(&o, "sample")) {
		printf("\nper LBR sample at k = 3 (stitch, anchor, replay, charge), one every %u calls, best of %u\n",
		       o.period, o.repeat);
		printf("   samples    stack  records  3-SF nodes  ns/sample  Msamples/s\n");
		if (time_samples(&t, &o))
			goto cleanup;
	}
	if (o.only)
		goto done;
	printf("\ntargets (not asserted):\n");
	printf("  1-SF time <= %.1fx CCT time:    %.2fx  %s\n",
	       TARGET_KSF1_RATIO, res[1].secs_batch / res[0].secs_batch,
	       res[1].secs_batch / res[0].secs_batch <= TARGET_KSF1_RATIO ?
	       "met" : "MISSED");
	printf("  CCT >= %.0f M calls/s:          %.1f (replay), %.1f (per event)  %s\n",
	       TARGET_CCT_MCALLS, t.calls / res[0].secs_batch / 1e6,
	       t.calls / res[0].secs / 1e6,
	       t.calls / res[0].secs_batch / 1e6 >= TARGET_CCT_MCALLS ?
	       "met" : "MISSED");
	printf("  <= %.0f bytes/node incl. index: %.1f at full capacity  %s\n",
	       TARGET_BYTES_NODE, bytes_full(&res[0]),
	       bytes_full(&res[0]) <= TARGET_BYTES_NODE ? "met" : "MISSED");
done:
	ret = 0;
cleanup:
	forest_mem__free(&src);
	forest_mem__free(&dst);
	free(stack);
	free(t.ev);
	free(t.lev);
	free(t.label);
	return ret;
}
