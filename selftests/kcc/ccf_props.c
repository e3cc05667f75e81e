// SPDX-License-Identifier: GPL-2.0
/*
 * ccf_props - the k-CCF built by the core, from a k-SF and from a CCT,
 * against a brute-force profile taken straight from Definitions 1-3 of
 * the k-CCF paper, on seeded random traces; plus the counter properties
 * (a)-(c) of Section 4.1 and Lemma 2.
 *
 * Usage: ccf_props [TRACES [FIRST_SEED]]	(default 1000 traces, seed 0)
 * A failure names the seed; "ccf_props 1 SEED" replays that trace alone.
 */
#include <stdarg.h>
#include <inttypes.h>

#include "ktap.h"
#include "ref.h"

static const u32 ks[] = { 0, 1, 2, 3, 5, 8, KCC_K_INF };
#define NK	(sizeof(ks) / sizeof(ks[0]))

enum prop {
	P_KSF,		/* inv_k(k-SF) == brute force */
	P_CCT,		/* inv_k(CCT) == brute force */
	P_A,		/* (a) parent >= child */
	P_B,		/* (b) as stated in the paper, where it applies */
	P_BGEN,		/* (b) for every trace, with the correction term */
	P_C,		/* (c) as stated in the paper, where it applies */
	P_CGEN,		/* (c) for every trace, with the correction term */
	P_L2SIZE,	/* Lemma 2: |k-SF| <= 2 |CCT| */
	P_L2DEPTH,	/* Lemma 2: k-SF trees at most 2k - 1 deep */
	NPROP
};

static const char *const prop_name[NPROP] = {
	[P_KSF]		= "inv_k(k-SF) equals the brute-force k-CCF",
	[P_CCT]		= "inv_k(CCT) equals the brute-force k-CCF",
	[P_A]		= "(a) c(parent) >= c(child)",
	[P_B]		= "(b) c(node) == sum of children, top routine not re-entered",
	[P_BGEN]	= "(b') c(node) == sum of children + whole-context activations",
	[P_C]		= "(c) sum of leaf counters == calls, top routine not re-entered",
	[P_CGEN]	= "(c') sum of leaf counters + inner whole-context activations == calls",
	[P_L2SIZE]	= "Lemma 2: |k-SF| <= 2 |CCT|",
	[P_L2DEPTH]	= "Lemma 2: k-SF tree depth <= 2k - 1",
};

struct outcome {
	u64 traces;	/* traces the property was checked on */
	u64 failed;
	u64 seed;	/* first failing seed */
	char why[320];
};

static struct outcome res[NPROP][NK];
static struct outcome cct_res;

static __attribute__((format(printf, 3, 4)))
void fail(struct outcome *o, u64 seed, const char *fmt, ...)
{
	va_list ap;

	if (!o->failed++) {
		o->seed = seed;
		va_start(ap, fmt);
		vsnprintf(o->why, sizeof(o->why), fmt, ap);
		va_end(ap);
	}
}

static void report(const struct outcome *o, const char *what)
{
	if (o->failed)
		ksft_print_msg("%" PRIu64 " of %" PRIu64 " traces failed; first: seed %" PRIu64 ": %s\n",
			       o->failed, o->traces, o->seed, o->why);
	ksft_test_result(!o->failed && o->traces, "%s (%" PRIu64 " traces)\n",
			 what, o->traces);
}

static const char *kname(u32 k, char *buf)
{
	if (k == KCC_K_INF)
		return "inf";
	sprintf(buf, "%u", k);
	return buf;
}

static void check_props(const struct kcc_forest *d, const struct ref_map *m,
			const u32 *ids, u32 k, unsigned int ki,
			const struct ref_trace *t, const u8 *is_top, u64 seed)
{
	u64 *sum = ref_alloc(((size_t)d->count + 1) * sizeof(u64));
	u32 *level = ref_alloc(((size_t)d->count + 1) * sizeof(u32));
	u8 *inner = ref_alloc((size_t)d->count + 1);
	u64 leaves = 0, inner_full = 0;
	bool paper = !t->top_reentered;
	bool fa = false, fb = false, fbg = false;
	u32 i;

	for (i = 0; i < d->count; i++) {
		u32 p = kcc_forest_node(d, i)->parent;

		if (kcc_is_root_parent(p)) {
			level[i] = 0;
		} else {
			level[i] = level[p] + 1;
			sum[p] += kcc_forest_ctr(d, i)[KCC_CTR_CALLS];
			inner[p] = 1;
		}
	}
	res[P_A][ki].traces++;
	res[P_BGEN][ki].traces++;
	res[P_CGEN][ki].traces++;
	if (paper) {
		res[P_B][ki].traces++;
		res[P_C][ki].traces++;
	}

	for (i = 0; i < d->count; i++) {
		const struct kcc_node *n = kcc_forest_node(d, i);
		u64 c = n->ctr[KCC_CTR_CALLS];
		u64 full = ids[i] == REF_NONE ? 0 : m->e[ids[i]].full;
		u64 id = ref_id(n->label);
		char path[160];

		if (!kcc_is_root_parent(n->parent) &&
		    kcc_forest_ctr(d, n->parent)[KCC_CTR_CALLS] < c && !fa) {
			fa = true;
			ref_forest_path(d, i, path, sizeof(path));
			fail(&res[P_A][ki], seed, "<%s>: %" PRIu64 " above its parent",
			     path, c);
		}
		/*
		 * A node at level q < k stands for a path pi of q edges.  An
		 * activation of pi made below depth q + 1 also activates the
		 * (q + 1)-context that adds the caller of pi's outermost
		 * routine: one child.  An activation at depth exactly q + 1
		 * (pi is the whole context) activates nothing longer.  Hence
		 * c = sum(children) + full(pi) for every node above level k;
		 * nodes at level k are leaves by construction and (b) says
		 * nothing useful about them.
		 */
		if (level[i] < k && c != sum[i] + full && !fbg) {
			fbg = true;
			ref_forest_path(d, i, path, sizeof(path));
			fail(&res[P_BGEN][ki], seed,
			     "<%s>: %" PRIu64 " != children %" PRIu64 " + whole %" PRIu64,
			     path, c, sum[i], full);
		}
		/*
		 * The paper's (b) assumes the root function is never called
		 * recursively.  With several top-level routines that reads:
		 * no routine called at depth 0 is ever called deeper.  Then
		 * full(pi) > 0 exactly when pi starts with a top-level
		 * routine, and such a node is a leaf (its outermost routine
		 * never has a caller), so the statement applies to the nodes
		 * above level k whose routine is not a top-level one.
		 */
		if (paper && level[i] < k && id < t->nr && !is_top[id] &&
		    c != sum[i] && !fb) {
			fb = true;
			ref_forest_path(d, i, path, sizeof(path));
			fail(&res[P_B][ki], seed, "<%s>: %" PRIu64 " != children %" PRIu64,
			     path, c, sum[i]);
		}
		if (!inner[i])
			leaves += c;
		else if (level[i] < k)
			inner_full += full;
	}
	/*
	 * Each call has one longest activated path.  It is a leaf when it
	 * has k edges; when it is shorter it is the whole context, and it
	 * is an inner node only if the same path is also activated as a
	 * suffix of a deeper context, which needs a top-level routine to
	 * be re-entered.
	 */
	if (leaves + inner_full != t->calls)
		fail(&res[P_CGEN][ki], seed,
		     "leaves %" PRIu64 " + inner whole %" PRIu64 " != calls %" PRIu64,
		     leaves, inner_full, t->calls);
	if (paper && leaves != t->calls)
		fail(&res[P_C][ki], seed, "leaves %" PRIu64 " != calls %" PRIu64,
		     leaves, t->calls);
	free(sum);
	free(level);
	free(inner);
}

static void check_ksf_state(struct outcome *o, const struct ref_ksf *r,
			    const struct ref_trace *t, u64 seed)
{
	const struct kcc_ksf *s = &r->s;

	if (s->calls != t->calls || s->returns != t->calls || s->depth ||
	    s->max_depth != t->max_depth || s->stack_drops || s->lost_calls ||
	    s->bad_returns || r->f.drops)
		fail(o, seed,
		     "k=%u: calls %" PRIu64 "/%" PRIu64 " returns %" PRIu64 " depth %u max_depth %u/%u drops %" PRIu64 "/%" PRIu64 "/%" PRIu64,
		     s->k, s->calls, t->calls, s->returns, s->depth,
		     s->max_depth, t->max_depth, s->stack_drops,
		     s->lost_calls, r->f.drops);
}

static void one_trace(u64 seed)
{
	struct ref_map ccf, cct;
	struct ref_trace t;
	struct ref_ksf c;
	struct ref_gen g;
	u64 rng = seed * 0x2545f4914f6cdd1dull + 1;
	u32 stack_cap, ki, i;
	u8 *is_top;
	size_t j;
	char why[320];

	ref_gen_random(&g, &rng);
	ref_gen_trace(&t, &g, &rng);
	ref_kccf(&ccf, &t, REF_NOCAP);
	ref_cct(&cct, &t, REF_NOCAP);
	stack_cap = t.max_depth + 1;

	is_top = ref_alloc(t.nr);
	for (j = 0, i = 0; j < t.n; j++) {
		if (t.ev[j] == REF_RET) {
			i--;
		} else {
			if (!i)
				is_top[t.ev[j]] = 1;
			i++;
		}
	}

	/* The CCT itself first: every k = inf result below rests on it. */
	ref_ksf_build(&c, &t, KCC_K_INF, t.calls + 1, stack_cap);
	cct_res.traces++;
	check_ksf_state(&cct_res, &c, &t, seed);
	if (ref_match(&c.f, &cct, KCC_K_INF, 0, NULL, why, sizeof(why)))
		fail(&cct_res, seed, "%s", why);

	for (ki = 0; ki < NK; ki++) {
		u32 k = ks[ki];
		u32 kp = k == KCC_K_INF ? k : (k ? k : 1);
		u32 want = ref_map_count(&ccf, k), maxlvl = 0;
		struct kcc_forest d1, d2;
		void *m1, *m2;
		u32 *ids;
		struct ref_ksf s;
		int r1, r2;

		ref_ksf_build(&s, &t, kp, 2 * cct.n + 16, stack_cap);
		res[P_KSF][ki].traces++;
		check_ksf_state(&res[P_KSF][ki], &s, &t, seed);

		res[P_L2SIZE][ki].traces++;
		if (s.f.count > 2 * (u64)cct.n)
			fail(&res[P_L2SIZE][ki], seed, "k-SF %u nodes, CCT %u",
			     s.f.count, cct.n);
		res[P_L2DEPTH][ki].traces++;
		for (i = 0; i < s.f.count; i++) {
			u32 l = kcc_forest_level(&s.f, i);

			if (l > maxlvl)
				maxlvl = l;
		}
		/* For k = inf the k-SF is the CCT: as deep as the trace. */
		if (k == KCC_K_INF ? t.calls && maxlvl != t.max_depth - 1 :
		    maxlvl > 2 * kp - 1)
			fail(&res[P_L2DEPTH][ki], seed, "k'=%u: a tree of depth %u",
			     kp, maxlvl);

		m1 = ref_forest_new(&d1, want + 16, 0);
		m2 = ref_forest_new(&d2, want + 16, 0);
		ids = ref_alloc(((size_t)want + 17) * sizeof(u32));
		r1 = kcc_inv_k(&s.f, kp, k, &d1, NULL);
		r2 = kcc_inv_k(&c.f, KCC_K_INF, k, &d2, NULL);

		res[P_CCT][ki].traces++;
		if (r2)
			fail(&res[P_CCT][ki], seed, "kcc_inv_k() = %d", r2);
		else if (ref_match(&d2, &ccf, k, 0, NULL, why, sizeof(why)))
			fail(&res[P_CCT][ki], seed, "%s", why);

		if (r1) {
			fail(&res[P_KSF][ki], seed, "kcc_inv_k() = %d", r1);
		} else if (ref_match(&d1, &ccf, k, 0, ids, why, sizeof(why))) {
			fail(&res[P_KSF][ki], seed, "%s", why);
		} else {
			/* Only on a forest known to be the k-CCF. */
			check_props(&d1, &ccf, ids, k, ki, &t, is_top, seed);
		}
		free(ids);
		free(m1);
		free(m2);
		ref_ksf_free(&s);
	}

	ref_ksf_free(&c);
	free(is_top);
	ref_map_free(&ccf);
	ref_map_free(&cct);
	ref_trace_free(&t);
}

/*
 * The generator must produce what the properties are about, or the
 * aggregated lines pass on nothing: recursion, deep chains, forests and
 * traces where the paper's (b) and (c) apply.
 */
static void check_coverage(u64 ntraces, u64 first)
{
	u64 seed, deep = 0, empty = 0, rec = 0, plain = 0, multi = 0;

	for (seed = first; seed < first + ntraces; seed++) {
		u64 rng = seed * 0x2545f4914f6cdd1dull + 1;
		struct ref_trace t;
		struct ref_gen g;
		u32 *stk, d = 0, tops = 0;
		bool r = false;
		size_t j;

		ref_gen_random(&g, &rng);
		ref_gen_trace(&t, &g, &rng);
		stk = ref_alloc(((size_t)t.max_depth + 1) * sizeof(u32));
		for (j = 0; j < t.n; j++) {
			u32 e = t.ev[j], i;

			if (e == REF_RET) {
				d--;
				continue;
			}
			for (i = 0; i < d; i++)
				r |= stk[i] == e;
			tops += d == 0;
			stk[d++] = e;
		}
		deep += t.max_depth >= 150;
		empty += t.n == 0;
		rec += r;
		plain += !t.top_reentered && t.calls > 100;
		multi += tops > 1;
		free(stk);
		ref_trace_free(&t);
	}
	ksft_print_msg("traces: %" PRIu64 " deep (>= 150), %" PRIu64 " empty, %" PRIu64 " recursive, %" PRIu64 " with several top-level calls, %" PRIu64 " without top re-entry\n",
		       deep, empty, rec, multi, plain);
	ksft_test_result(ntraces < 1000 ||
			 (deep && empty && rec && multi && plain),
			 "random traces cover deep, empty, recursive, forest and non-reentrant cases\n");
}

int main(int argc, char **argv)
{
	u64 ntraces = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000;
	u64 first = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
	unsigned int p, ki;
	char kb[16];
	u64 seed;

	ksft_print_header();
	ksft_set_plan(2 + NPROP * NK);
	check_coverage(ntraces, first);

	for (seed = first; seed < first + ntraces; seed++)
		one_trace(seed);

	report(&cct_res, "CCT (k-SF with k = inf) equals the brute-force CCT");
	for (p = 0; p < NPROP; p++) {
		for (ki = 0; ki < NK; ki++) {
			char what[160];

			snprintf(what, sizeof(what), "%s, k=%s", prop_name[p],
				 kname(ks[ki], kb));
			report(&res[p][ki], what);
		}
	}
	ksft_finished();
}
