// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-eval.c - kcc eval: how close sampled profiles come to the exact
 * k-CCF of a trace (Documentation/fidelity.rst).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kcc.h>

#include "accuracy.h"
#include "builtin.h"
#include "ccf.h"
#include "evalsim.h"
#include "profile.h"
#include "report.h"
#include "lbrsim.h"
#include "trace_file.h"

#define CMD "kcc eval"
#define MAX_LIST 16

static void eval_usage(void)
{
	printf(
"usage: kcc eval [options] TRACE...\n"
"       kcc eval --profile PROFILE [-k LIST] [-T LIST] [--comm NAME] TRACE\n"
"\n"
"Replay each TRACE (an exact call/return trace: text, binary, or the\n"
"files of the kcc tracing runtime) through simulated sampling, build the\n"
"k-CCF each profiling method would report, and compare it with the exact\n"
"k-CCF: degree of overlap and hot-edge coverage (Zhuang et al., PLDI'06,\n"
"Section 3) over k-contexts, the share of calls each method had to\n"
"trace or replay, and two figures on the counts themselves, which the\n"
"shares cannot see: abs_err, the sum over k-contexts of |calls counted -\n"
"calls made| over all calls made, and calls_ratio, all calls counted over\n"
"all calls made (0 and 1 for a perfect profile).\n"
"\n"
"Methods: stack (sampled stack walking), static (static bursting),\n"
"adaptive (adaptive bursting with re-enablement), lbr (kcc, bursts\n"
"stitched one by one), lbr-join (kcc, overlapping bursts joined: its\n"
"default), lbr-ab (kcc with adaptive bursting), lbr-2ev (kcc with two\n"
"events: the sampled event attributed at its samples, the bursts taken\n"
"at the samples of retired calls, one every PERIOD calls on average),\n"
"lbr-hyb (kcc's hybrid estimate: both events take bursts and carry the\n"
"calls since the previous sample of either; a burst counts its newest\n"
"records exactly and pools the calls they miss, the calls event's\n"
"bursts spread the pool).\n"
"\n"
"Options:\n"
"  -k LIST              context lengths (default 1,2,3,5)\n"
"  -m, --methods LIST   methods (default all, in the order above)\n"
"  -p, --period N[/D]   calls per sample, on average (default 1000); N/D\n"
"                       for fractions: 1/16 is 16 samples a call (with\n"
"                       --time: without it, samples land at calls)\n"
"  --jitter PCT         each period drawn within +-PCT%% (default 50)\n"
"  -d, --lbr-depth N    LBR records per burst, 0..64 (default 32)\n"
"  --stack-depth N      frames per stack walk, 1..512 (default 127)\n"
"  -b, --burst N        calls per burst of static/adaptive (default 16)\n"
"  --rr N               adaptive: re-enable 1 burst in N (default 20)\n"
"  --table N            adaptive: history entries, power of 2 (default 2048)\n"
"  --sig-depth N        adaptive: frames per signature (default 8)\n"
"  --miss-rate N        the sampled event: each call of a routine adds\n"
"                       its rate of events, drawn per routine in 0..N, as\n"
"                       cache misses would (default 16); 0: the event is\n"
"                       the call itself\n"
"  --time               the program takes time between calls: each\n"
"                       stretch a routine runs on top of the stack costs\n"
"                       its cost, drawn per routine in 1..--max-cost\n"
"                       units; the event accrues over the stretches (time\n"
"                       with --miss-rate 0, else misses per unit) and\n"
"                       samples land inside them, several if they are long\n"
"  --max-cost N         the longest stretch, with --time (default 4096)\n"
"  --calls-period N     lbr-2ev, lbr-hyb: calls per sample of the calls\n"
"                       event (default: the period of -p)\n"
"  --count-calls        LBR methods: each sample with records carries the\n"
"                       calls since the previous one (KCC_SAMPLE_CALLS);\n"
"                       the stitcher counts each call once, or weights\n"
"                       the burst to add exactly that many\n"
"  --seed N             seed of layouts, rates and schedules (default 1)\n"
"  --weight-calls       weight each burst by the calls since the previous\n"
"                       sample (a second counter on retired calls would\n"
"                       give them); LBR methods emulate the weight by\n"
"                       replaying a burst once per period/16 calls\n"
"  --effects LIST       what real code and hardware do to the samples of\n"
"                       the lbr and stack methods: leaf (frameless\n"
"                       leaves), lib (frameless libraries, some using\n"
"                       rbp as a register), plt (PLT stubs), tail (tail\n"
"                       calls), signal (signal handlers), skid, wipe\n"
"                       (LBR cleared at context switches), far (stray\n"
"                       far-branch records); all; none (default)\n"
"  --trim N             LBR methods: leave the N newest records of each\n"
"                       burst out, as if sampled N records earlier\n"
"  -T LIST              hot-edge thresholds (default 0.1,0.05)\n"
"  --inclusive          items are all k-CCF nodes with their full counts\n"
"                       instead of k-contexts\n"
"  --sweep P=LIST       repeat for each value of parameter P: period,\n"
"                       depth, burst, rr or trim\n"
"  --name NAME          program name in the output (default: the file's)\n"
"  --tsv                tab-separated values with a header line\n"
"  --profile PROFILE    instead: compare the calls of PROFILE (kcc record,\n"
"                       the LBR source) with the exact k-CCF of TRACE, the\n"
"                       trace of the same run; routines are matched by\n"
"                       name; -k defaults to 1 up to the recorded k (3 at\n"
"                       most); the profile's processes are joined, or only\n"
"                       those named NAME with --comm\n"
"  --check-exact        instead: at period 1 with a full stack, check that\n"
"                       lbr (one record a burst) and stack give the exact\n"
"                       k-CCF bit for bit; exit 1 if not\n"
"  -h, --help           this help\n"
"\n"
"EXAMPLES\n"
"  kcc eval -k 2,3 trace.bin\n"
"  kcc eval --tsv --sweep period=100,1000,10000 -m lbr-join,stack t.bin\n"
"  kcc eval --check-exact -k 1,2,3,5 trace.bin\n"
"  kcc eval --profile kcc.data -k 1,2,3 run.trace\n"
"  kcc eval -k 3 -m lbr,stack --effects leaf,lib,plt,skid trace.bin\n"
"  kcc eval -k 3 -m lbr --time --count-calls --sweep period=100,1,1/16 t.bin\n");
}

enum {
	OPT_JITTER = 256,
	OPT_STACK_DEPTH,
	OPT_RR,
	OPT_TABLE,
	OPT_SIG_DEPTH,
	OPT_MISS_RATE,
	OPT_SEED,
	OPT_INCLUSIVE,
	OPT_SWEEP,
	OPT_NAME,
	OPT_TSV,
	OPT_CHECK,
	OPT_TRIM,
	OPT_WEIGHT_CALLS,
	OPT_PROFILE,
	OPT_COMM,
	OPT_EFFECTS,
	OPT_TIME,
	OPT_MAX_COST,
	OPT_COUNT_CALLS,
	OPT_CALLS_PERIOD,
};

#define EVAL_MAX_COST	4096u	/* --time: the longest stretch, default */

struct eval {
	struct evalsim_opts so;
	struct acc_opts ao;
	uint32_t ks[MAX_LIST], nk;
	uint32_t methods[EM_NR], nm;
	const char *sweep;		/* NULL, "period", "depth", ... */
	uint32_t sweep_v[MAX_LIST], nsweep;
	uint32_t sweep_div[MAX_LIST];	/* period: the fractions' D */
	const char *name;
	bool tsv;
	bool check;
	bool k_set;
	const char *profile;		/* --profile: compare it with the trace */
	const char *comm;
};

#define LIST_LEN 256

/*
 * The comma-separated items of @s, split in @buf (LIST_LEN bytes) and
 * pointed to from @tok (MAX_LIST entries): how many, or -EINVAL for
 * none, too many or a list too long.
 */
static int split_list(const char *s, char *buf, char **tok)
{
	char *t, *save;
	int n = 0;

	if (strlen(s) >= LIST_LEN)
		return -EINVAL;
	strcpy(buf, s);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n == MAX_LIST)
			return -EINVAL;
		tok[n++] = t;
	}
	return n ? n : -EINVAL;
}

/* "1,2,3" into @v; 0 or -EINVAL. */
static int parse_list(const char *s, uint32_t *v, uint32_t *n)
{
	char buf[LIST_LEN], *tok[MAX_LIST];
	int nr = split_list(s, buf, tok), i;

	if (nr < 0)
		return nr;
	for (i = 0; i < nr; i++)
		if (parse_u32(tok[i], &v[i]))
			return -EINVAL;
	*n = nr;
	return 0;
}

/* A period "N" or "N/D" calls, N and D >= 1: 0 or -EINVAL. */
static int parse_period(const char *s, uint32_t *p, uint32_t *div)
{
	char buf[32], *slash;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	*div = 1;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		if (parse_u32(slash + 1, div) || !*div)
			return -EINVAL;
	}
	return parse_u32(buf, p) || !*p ? -EINVAL : 0;
}

/* --sweep P=LIST: periods may be fractions, the others are whole. */
static int parse_sweep(struct eval *e, const char *p, const char *s)
{
	char buf[LIST_LEN], *tok[MAX_LIST];
	int nr = split_list(s, buf, tok), i;

	if (nr < 0)
		return nr;
	for (i = 0; i < nr; i++) {
		e->sweep_div[i] = 1;
		if (!strcmp(p, "period") ?
		    parse_period(tok[i], &e->sweep_v[i], &e->sweep_div[i]) :
		    parse_u32(tok[i], &e->sweep_v[i]))
			return -EINVAL;
	}
	e->nsweep = nr;
	return 0;
}

static int parse_methods(struct eval *e, const char *s)
{
	char buf[LIST_LEN], *tok[MAX_LIST];
	int nr = split_list(s, buf, tok), i, m;

	if (nr < 0 || nr > EM_NR)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		m = evalsim__method(tok[i]);
		if (m < 0)
			return -EINVAL;
		e->methods[i] = m;
	}
	e->nm = nr;
	return 0;
}

static int parse_thresholds(struct eval *e, const char *s)
{
	char buf[LIST_LEN], *tok[MAX_LIST];
	int nr = split_list(s, buf, tok), i;
	double t;

	if (nr < 0 || nr > ACC_MAX_T)
		return -EINVAL;
	for (i = 0; i < nr; i++) {
		if (parse_double(tok[i], &t) || !(t > 0 && t <= 1))
			return -EINVAL;
		e->ao.t[i] = t;
	}
	e->ao.nr_t = nr;
	return 0;
}

static const char *program_name(const char *path, char *buf, size_t size)
{
	char *dot, *base;

	snprintf(buf, size, "%s", path);
	/* basename() may return @buf itself: no snprintf() onto itself. */
	base = basename(buf);
	memmove(buf, base, strlen(base) + 1);
	dot = strchr(buf, '.');
	if (dot && dot != buf)
		*dot = '\0';
	return buf;
}

/* The last columns of both TSV tables: accuracy of calls, error bars. */
static const char tsv_tail[] =
	"\tabs_err\tcalls_ratio\tci95_items\tci95_covered\tci95_calls\n";

/* Their error bar columns: "-" for calls that are no estimate. */
static void print_ci_tsv(const struct acc_ci *ci)
{
	if (ci)
		printf("\t%u\t%u\t%.4f\n", ci->items, ci->covered,
		       ci->calls_covered);
	else
		printf("\t-\t-\t-\n");
}

static void print_header(const struct eval *e)
{
	uint32_t j;

	if (e->tsv) {
		printf("program\tk\tmethod\tperiod\tdepth\tburst\trr");
		printf("\toverlap");
		for (j = 0; j < e->ao.nr_t; j++)
			printf("\thot@%g", e->ao.t[j]);
		printf("\treplayed_pct\tsamples\tbursts\tjoined\tskipped\tstitch_errors\titems_exact\titems_approx\tfalse_joins");
		printf("\tleaf_repaired\twalk_repaired\twalk_cut\tskid_repaired\tunrecorded\tunmatched_return\tfar_skipped\tbelow_walk");
		fputs(tsv_tail, stdout);
		return;
	}
	printf("%-10s %3s %-9s", "program", "k", "method");
	if (e->sweep)
		printf(" %8s", e->sweep);
	printf(" %8s", "overlap");
	for (j = 0; j < e->ao.nr_t; j++) {
		char h[24];

		snprintf(h, sizeof(h), "hot@%g", e->ao.t[j]);
		printf(" %8s", h);
	}
	printf(" %9s %9s %8s %8s %8s\n", "replayed%", "samples", "abs_err",
	       "ratio", "ci95");
}

/* The period in calls: "N", or N/D as a decimal (TSV) or "N/D" (text). */
static const char *period_str(const struct evalsim_opts *so, bool tsv,
			      char *buf, size_t size)
{
	if (so->period_div <= 1)
		snprintf(buf, size, "%u", so->period);
	else if (tsv)
		snprintf(buf, size, "%.6g", (double)so->period / so->period_div);
	else
		snprintf(buf, size, "%u/%u", so->period, so->period_div);
	return buf;
}

static void print_row(const struct eval *e, const char *prog, uint32_t k,
		      enum evalsim_method m, const struct evalsim_opts *so,
		      const struct evalsim_result *r,
		      const struct accuracy *acc, const struct acc_ci *ci,
		      uint32_t sweep_v)
{
	double rep = r->calls ? 100.0 * r->replayed / r->calls : 0;
	char pbuf[32];
	uint32_t j;

	if (e->tsv) {
		printf("%s\t%u\t%s\t%s\t%u\t%u\t%u\t%.4f", prog, k,
		       evalsim_method_name[m],
		       period_str(so, true, pbuf, sizeof(pbuf)), so->lbr_depth,
		       so->burst, so->rr_inv, 100 * acc->overlap);
		for (j = 0; j < e->ao.nr_t; j++)
			printf("\t%.4f", 100 * acc->cover[j]);
		printf("\t%.4f\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%" PRIu64,
		       rep, r->samples, r->bursts, r->joined, r->skipped,
		       r->stitch_errors, acc->items_exact, acc->items_approx,
		       r->false_joins);
		for (j = 0; j < sizeof(r->cnt) / sizeof(uint64_t); j++)
			printf("\t%" PRIu64, ((const uint64_t *)&r->cnt)[j]);
		printf("\t%.4f\t%.4f", acc->abs_err, acc->calls_ratio);
		print_ci_tsv(ci);
		return;
	}
	printf("%-10s %3u %-9s", prog, k, evalsim_method_name[m]);
	if (e->sweep && !strcmp(e->sweep, "period"))
		printf(" %8s", period_str(so, false, pbuf, sizeof(pbuf)));
	else if (e->sweep)
		printf(" %8u", sweep_v);
	printf(" %7.2f%%", 100 * acc->overlap);
	for (j = 0; j < e->ao.nr_t; j++)
		printf(" %7.2f%%", 100 * acc->cover[j]);
	printf(" %8.3f%% %9" PRIu64 " %8.4f %8.4f", rep, r->samples,
	       acc->abs_err, acc->calls_ratio);
	if (ci)
		printf(" %7.2f%%\n", 100 * ci->calls_covered);
	else
		printf(" %8s\n", "-");
	if (so->effects && r->bursts)
		printf("%-10s %3s   stitching: leaf %" PRIu64 ", walk %" PRIu64 " repaired, %" PRIu64 " cut, skid %" PRIu64 ", unrecorded %" PRIu64 ", unmatched returns %" PRIu64 ", far %" PRIu64 ", below walk %" PRIu64 ", errors %" PRIu64 "\n",
		       "", "", r->cnt.leaf_repaired, r->cnt.walk_repaired,
		       r->cnt.walk_cut, r->cnt.skid_repaired,
		       r->cnt.unrecorded, r->cnt.unmatched_return,
		       r->cnt.far_skipped, r->cnt.below_walk,
		       r->stitch_errors);
}

static int set_sweep(struct evalsim_opts *so, const char *p, uint32_t v,
		     uint32_t div)
{
	if (!strcmp(p, "period")) {
		so->period = v;
		so->period_div = div;
	} else if (!strcmp(p, "depth"))
		so->lbr_depth = v;
	else if (!strcmp(p, "burst"))
		so->burst = v;
	else if (!strcmp(p, "rr"))
		so->rr_inv = v;
	else if (!strcmp(p, "trim"))
		so->trim = v;
	else
		return -EINVAL;
	return 0;
}

static int eval_trace(struct eval *e, const char *path)
{
	char nbuf[256];
	const char *prog = e->name ? e->name :
			   program_name(path, nbuf, sizeof(nbuf));
	uint32_t ki, mi, si, nsweep = e->sweep ? e->nsweep : 1;
	struct trace t;
	int ret;

	ret = trace__init(&t);
	if (ret)
		return ret;
	ret = trace__read(&t, path, false);
	if (ret)
		goto out;
	if (!t.calls) {
		fprintf(stderr, "kcc: %s: no calls to evaluate\n",
			trace__display_name(path));
		ret = -EINVAL;
		goto out;
	}
	for (ki = 0; ki < e->nk; ki++) {
		struct ccf_opts co = { .k = e->ks[ki] };
		struct ccf exact;

		ret = ccf__build(&exact, &t, &co);
		if (ret) {
			fprintf(stderr, "kcc: %s: k-CCF: %s\n",
				trace__display_name(path), strerror(-ret));
			goto out;
		}
		for (mi = 0; mi < e->nm; mi++) {
			for (si = 0; si < nsweep; si++) {
				struct evalsim_opts so = e->so;
				struct acc_opts ao = e->ao;
				struct evalsim_result r;
				struct accuracy acc;
				struct acc_ci ci;
				bool has_ci;
				uint32_t m = e->methods[mi];

				so.k = e->ks[ki];
				if (e->sweep)
					set_sweep(&so, e->sweep, e->sweep_v[si],
						  e->sweep_div[si]);
				ret = evalsim__run(&t, m, &so, &r);
				if (ret) {
					fprintf(stderr, "kcc: %s: %s: %s\n",
						trace__display_name(path),
						evalsim_method_name[m],
						strerror(-ret));
					ccf__exit(&exact);
					goto out;
				}
				ao.k = so.k;
				ao.approx_ctr = r.ctr;
				ret = accuracy__compare(&exact.kccf.f, &r.kccf.f,
							&ao, &acc);
				/* Counted calls are estimates with a variance. */
				has_ci = !ret && r.counted.samples &&
					 r.ctr == KCC_CTR_CALLS &&
					 r.kccf.f.nmetrics >= KCC_CTR_CALLS_VAR;
				if (has_ci)
					ret = accuracy__ci95(&exact.kccf.f,
							     &r.kccf.f, so.k,
							     KCC_CTR_CALLS_VAR,
							     &ci);
				if (!ret)
					print_row(e, prog, so.k, m, &so, &r, &acc,
						  has_ci ? &ci : NULL,
						  e->sweep ? e->sweep_v[si] : 0);
				evalsim__exit(&r);
				fflush(stdout);
				if (ret) {
					ccf__exit(&exact);
					goto out;
				}
			}
		}
		ccf__exit(&exact);
	}
out:
	trace__exit(&t);
	return ret;
}

/*
 * At period 1 every call is sampled: with a full stack walk, one record
 * per burst (the call itself) puts each call in its exact context, and
 * a stack sample at each call counts each context's calls: both must
 * equal the exact k-CCF, node for node and count for count.
 */
static int check_exact(struct eval *e, const char *path)
{
	static const enum evalsim_method ms[] = { EM_LBR, EM_STACK, EM_LBR_2EV };
	struct trace t;
	uint32_t ki, mi;
	int ret, bad = 0;

	ret = trace__init(&t);
	if (ret)
		return ret;
	ret = trace__read(&t, path, false);
	if (ret)
		goto out;
	for (ki = 0; ki < e->nk; ki++) {
		struct ccf_opts co = { .k = e->ks[ki] };
		struct ccf exact;

		ret = ccf__build(&exact, &t, &co);
		if (ret)
			goto out;
		for (mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
			struct evalsim_opts so = e->so;
			struct evalsim_result r;
			int64_t diff;

			so.k = e->ks[ki];
			so.period = 1;
			so.period_div = 1;
			so.jitter = 0;
			so.lbr_depth = 1;
			/*
			 * lbr-2ev keeps the miss event: its samples must
			 * not change the call counts the calls event gives.
			 */
			if (ms[mi] != EM_LBR_2EV)
				so.max_rate = 0;
			so.trim = 0;
			so.effects = 0;
			so.max_cost = 0;
			so.count_calls = false;
			so.stack_depth = KCC_INJECT_MAX_STACK;
			ret = evalsim__run(&t, ms[mi], &so, &r);
			if (ret) {
				ccf__exit(&exact);
				goto out;
			}
			diff = accuracy__diff(&exact.kccf.f, &r.kccf.f, r.ctr);
			printf("%s k=%u %s: %" PRId64 " of %u contexts differ, %" PRIu64 " samples, %" PRIu64 " stitch errors\n",
			       trace__display_name(path), so.k,
			       evalsim_method_name[ms[mi]], diff,
			       exact.kccf.f.count, r.samples, r.stitch_errors);
			bad |= diff != 0 || r.stitch_errors;
			evalsim__exit(&r);
		}
		ccf__exit(&exact);
	}
	ret = bad ? 1 : 0;
out:
	trace__exit(&t);
	return ret;
}

/*
 * @g's k-CCF with every label the id of its routine's name in @names (the
 * trace's), or an id past them for a routine the trace never called, so
 * that accuracy__compare() matches contexts by routine name.  A caller
 * the trace never saw (a routine built without the tracing runtime:
 * __libc_start_call_main above main, qsort between main and its
 * comparator) is left out of the contexts through it, as the trace
 * leaves it out of its stacks: its callers join its callee's node, and
 * its own count, which that node already holds (a k-CCF node counts
 * every activation whose context ends with its path), is not added.
 */
static int relabel(const struct report *r, const struct report_grp *g,
		   const struct symtab *names, struct pool *out)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t *map, v, nr = symtab__nr(names);
	int ret;

	ret = pool__alloc(out, f->count ? f->count : 1, 1);
	if (ret)
		return ret;
	map = calloc(f->count ? f->count : 1, sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (v = 0; v < f->count; v++) {
		const struct kcc_node *n = kcc_forest_node(f, v);
		const char *name = report__name(r, n->label);
		bool root = kcc_is_root_parent(n->parent);
		uint32_t parent = root ? n->parent : map[n->parent];
		uint32_t id;
		uint64_t label;

		if (!symtab__find(names, name, strlen(name), &id)) {
			label = id;
		} else if (!root) {
			map[v] = parent;
			continue;
		} else {
			label = (uint64_t)nr + n->label;
		}
		map[v] = kcc_forest_get(&out->f, parent, label);
		if (map[v] == KCC_NIL) {
			free(map);
			return -ENOMEM;
		}
		kcc_forest_ctr(&out->f, map[v])[KCC_CTR_CALLS] +=
			kcc_forest_ctr(f, v)[KCC_CTR_CALLS];
		/* Counter 1: the calls' variance, where the profile has it. */
		if (r->var_ctr >= 0)
			kcc_forest_ctr(&out->f, map[v])[1] +=
				kcc_forest_ctr(f, v)[r->var_ctr];
	}
	free(map);
	return 0;
}

/*
 * --profile: the profile of a kcc record run against the exact k-CCF of
 * the trace the same run wrote, at each k.
 */
static int eval_profile(struct eval *e, const char *ppath, const char *tpath)
{
	struct profile p;
	struct trace t;
	uint32_t ki, j, krec;
	char nbuf[64];
	const char *prog = e->name ? e->name :
			   program_name(tpath, nbuf, sizeof(nbuf));
	int ret;

	profile__init(&p);
	ret = trace__init(&t);
	if (ret)
		return ret;
	ret = trace__read(&t, tpath, false);
	if (!ret)
		ret = profile__read(&p, ppath);
	if (ret)
		goto out;
	if (!t.calls) {
		fprintf(stderr, "kcc: %s: no calls to evaluate\n",
			trace__display_name(tpath));
		ret = -EINVAL;
		goto out;
	}
	krec = p.runs[0].s.hdr.k;
	if (!e->k_set) {
		e->nk = 0;
		for (ki = 1; ki <= 3 && ki <= krec; ki++)
			e->ks[e->nk++] = ki;
	}
	if (e->tsv) {
		printf("program\tk\toverlap");
		for (j = 0; j < e->ao.nr_t; j++)
			printf("\thot@%g", e->ao.t[j]);
		printf("\tcalls_profile\tcalls_exact\titems_exact\titems_profile\titems_common");
		fputs(tsv_tail, stdout);
	} else {
		printf("%-10s %3s %8s", "program", "k", "overlap");
		for (j = 0; j < e->ao.nr_t; j++) {
			char h[24];

			snprintf(h, sizeof(h), "hot@%g", e->ao.t[j]);
			printf(" %8s", h);
		}
		printf(" %13s %13s %6s %6s %6s %8s %8s %13s %8s\n", "calls_profile",
		       "calls_exact", "exact", "prof", "common", "abs_err",
		       "ratio", "ci95_covered", "of_calls");
	}
	for (ki = 0; ki < e->nk && !ret; ki++) {
		struct report_opts ro = {
			.name = ppath, .k = e->ks[ki], .k_set = true, .sort = -1,
			.group = GROUP_ALL, .comm = e->comm,
		};
		struct ccf_opts co = { .k = e->ks[ki] };
		struct acc_opts ao = e->ao;
		struct pool approx = { 0 };
		struct accuracy acc;
		struct acc_ci ci;
		struct report r;
		struct ccf exact;

		ret = report__build(&r, &p, &ro);
		if (ret) {
			report__exit(&r);
			break;
		}
		if (!r.nr_groups || !r.calls_valid) {
			fprintf(stderr, "kcc: %s: %s\n", ppath, !r.nr_groups ?
				"no samples (of that command)" :
				"calls were not measured (no bursts replayed: not the lbr source)");
			report__exit(&r);
			ret = -EINVAL;
			break;
		}
		ret = relabel(&r, &r.groups[0], &t.syms, &approx);
		if (!ret)
			ret = ccf__build(&exact, &t, &co);
		if (!ret) {
			ao.k = e->ks[ki];
			ao.approx_ctr = KCC_CTR_CALLS;
			ret = accuracy__compare(&exact.kccf.f, &approx.f, &ao, &acc);
			if (!ret && r.var_ctr >= 0)
				ret = accuracy__ci95(&exact.kccf.f, &approx.f,
						     e->ks[ki], 1, &ci);
			ccf__exit(&exact);
		}
		if (!ret) {
			printf(e->tsv ? "%s\t%u\t%.4f" : "%-10s %3u %8.4f", prog,
			       e->ks[ki], acc.overlap);
			for (j = 0; j < e->ao.nr_t; j++)
				printf(e->tsv ? "\t%.4f" : " %8.4f", acc.cover[j]);
			printf(e->tsv ? "\t%" PRIu64 "\t%" PRIu64 "\t%u\t%u\t%u\t%.4f\t%.4f" :
			       " %13" PRIu64 " %13" PRIu64 " %6u %6u %6u %8.4f %8.4f",
			       acc.weight_approx, acc.weight_exact,
			       acc.items_exact, acc.items_approx,
			       acc.items_common, acc.abs_err, acc.calls_ratio);
			/* Calls that are no estimate have no interval: "-". */
			if (e->tsv)
				print_ci_tsv(r.var_ctr < 0 ? NULL : &ci);
			else if (r.var_ctr < 0)
				printf(" %13s %8s\n", "-", "-");
			else
				printf(" %6u/%-6u %8.4f\n", ci.covered, ci.items,
				       ci.calls_covered);
		} else {
			fprintf(stderr, "kcc: %s: %s\n", ppath, strerror(-ret));
		}
		pool__exit(&approx);
		report__exit(&r);
	}
out:
	profile__exit(&p);
	trace__exit(&t);
	return ret;
}

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "methods", required_argument, NULL, 'm' },
		{ "period", required_argument, NULL, 'p' },
		{ "jitter", required_argument, NULL, OPT_JITTER },
		{ "lbr-depth", required_argument, NULL, 'd' },
		{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
		{ "burst", required_argument, NULL, 'b' },
		{ "rr", required_argument, NULL, OPT_RR },
		{ "table", required_argument, NULL, OPT_TABLE },
		{ "sig-depth", required_argument, NULL, OPT_SIG_DEPTH },
		{ "miss-rate", required_argument, NULL, OPT_MISS_RATE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "inclusive", no_argument, NULL, OPT_INCLUSIVE },
		{ "sweep", required_argument, NULL, OPT_SWEEP },
		{ "name", required_argument, NULL, OPT_NAME },
		{ "tsv", no_argument, NULL, OPT_TSV },
		{ "check-exact", no_argument, NULL, OPT_CHECK },
		{ "trim", required_argument, NULL, OPT_TRIM },
		{ "weight-calls", no_argument, NULL, OPT_WEIGHT_CALLS },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "effects", required_argument, NULL, OPT_EFFECTS },
		{ "time", no_argument, NULL, OPT_TIME },
		{ "max-cost", required_argument, NULL, OPT_MAX_COST },
		{ "calls-period", required_argument, NULL, OPT_CALLS_PERIOD },
		{ "count-calls", no_argument, NULL, OPT_COUNT_CALLS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct eval e = {
		.so = {
			.period = 1000, .jitter = 50, .lbr_depth = 32,
			.stack_depth = 127, .burst = 16, .rr_inv = 20,
			.table = 2048, .sig_depth = 8, .seed = 1,
			.max_rate = 16,
		},
		.ao = { .nr_t = 2, .t = { 0.1, 0.05 } },
		.ks = { 1, 2, 3, 5 }, .nk = 4,
	};
	uint32_t v, i, max_cost = EVAL_MAX_COST;
	bool time = false;
	char *eq;
	int c, ret;

	for (i = 0; i < EM_NR; i++)
		e.methods[i] = i;
	e.nm = EM_NR;

	while ((c = getopt_long(argc, argv, ":k:m:p:d:b:T:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'k':
			if (parse_list(optarg, e.ks, &e.nk))
				return usage_error(CMD, "bad -k list '%s'", optarg);
			for (i = 0; i < e.nk; i++)
				if (!e.ks[i] || e.ks[i] > KCC_K_MAX)
					return usage_error(CMD, "k must be 1..%u", KCC_K_MAX);
			e.k_set = true;
			break;
		case OPT_PROFILE:
			e.profile = optarg;
			break;
		case OPT_COMM:
			e.comm = optarg;
			break;
		case 'm':
			if (parse_methods(&e, optarg))
				return usage_error(CMD, "bad method list '%s'", optarg);
			break;
		case 'T':
			if (parse_thresholds(&e, optarg))
				return usage_error(CMD, "bad threshold list '%s' (0 < T <= 1, at most %d)",
						   optarg, ACC_MAX_T);
			break;
		case 'h':
			eval_usage();
			return KCC_EXIT_OK;
		case OPT_INCLUSIVE:
			e.ao.flags |= ACC_INCLUSIVE;
			break;
		case OPT_NAME:
			e.name = optarg;
			break;
		case OPT_TSV:
			e.tsv = true;
			break;
		case OPT_CHECK:
			e.check = true;
			break;
		case OPT_WEIGHT_CALLS:
			e.so.weight_calls = true;
			break;
		case OPT_COUNT_CALLS:
			e.so.count_calls = true;
			break;
		case OPT_TIME:
			time = true;
			break;
		case OPT_MAX_COST:
			if (parse_u32(optarg, &max_cost) || !max_cost ||
			    max_cost > LBRSIM_MAX_COST)
				return usage_error(CMD, "bad --max-cost '%s' (1..%u)",
						   optarg, LBRSIM_MAX_COST);
			time = true;
			break;
		case OPT_CALLS_PERIOD:
			if (parse_u32(optarg, &e.so.calls_period) ||
			    !e.so.calls_period)
				return usage_error(CMD, "bad --calls-period '%s': expected a positive period",
						   optarg);
			break;
		case 'p':
			if (parse_period(optarg, &e.so.period, &e.so.period_div))
				return usage_error(CMD, "bad period '%s' (N or N/D, both >= 1)",
						   optarg);
			break;
		case OPT_EFFECTS:
			if (lbrsim__parse_effects(optarg, &e.so.effects))
				return usage_error(CMD, "bad --effects '%s' (leaf,lib,plt,tail,signal,skid,wipe,far, all or none)",
						   optarg);
			break;
		case OPT_SWEEP:
			eq = strchr(optarg, '=');
			if (!eq)
				return usage_error(CMD, "bad --sweep '%s' (P=LIST)", optarg);
			*eq = '\0';
			if (set_sweep(&e.so, optarg, 1, 1) ||
			    parse_sweep(&e, optarg, eq + 1))
				return usage_error(CMD, "bad --sweep '%s=%s'", optarg, eq + 1);
			e.sweep = optarg;
			break;
		case 'd': case 'b': case OPT_JITTER:
		case OPT_STACK_DEPTH: case OPT_RR: case OPT_TABLE:
		case OPT_SIG_DEPTH: case OPT_MISS_RATE: case OPT_SEED:
		case OPT_TRIM:
			if (parse_u32(optarg, &v))
				return usage_error(CMD, "bad number '%s'", optarg);
			if (c == 'd')
				e.so.lbr_depth = v;
			else if (c == 'b')
				e.so.burst = v;
			else if (c == OPT_JITTER)
				e.so.jitter = v;
			else if (c == OPT_STACK_DEPTH)
				e.so.stack_depth = v;
			else if (c == OPT_RR)
				e.so.rr_inv = v;
			else if (c == OPT_TABLE)
				e.so.table = v;
			else if (c == OPT_SIG_DEPTH)
				e.so.sig_depth = v;
			else if (c == OPT_MISS_RATE)
				e.so.max_rate = v;
			else if (c == OPT_TRIM)
				e.so.trim = v;
			else
				e.so.seed = v;
			break;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (!e.so.period || e.so.jitter > 99 || !e.so.seed)
		return usage_error(CMD, "need period >= 1, jitter 0..99, seed >= 1");
	if (e.so.count_calls && e.so.weight_calls)
		return usage_error(CMD, "--count-calls and --weight-calls exclude each other");
	if (time)
		e.so.max_cost = max_cost;
	if (e.so.lbr_depth > KCC_INJECT_MAX_BRANCHES)
		return usage_error(CMD, "LBR depth must be 0..%u", KCC_INJECT_MAX_BRANCHES);
	if (!e.so.stack_depth || e.so.stack_depth > KCC_INJECT_MAX_STACK)
		return usage_error(CMD, "stack depth must be 1..%u", KCC_INJECT_MAX_STACK);
	if (!e.so.rr_inv || !e.so.table || (e.so.table & (e.so.table - 1)))
		return usage_error(CMD, "need --rr >= 1 and --table a power of two");
	for (i = 0; e.sweep && i < e.nsweep; i++)
		if (!e.sweep_v[i] ||
		    (!strcmp(e.sweep, "depth") && e.sweep_v[i] > KCC_INJECT_MAX_BRANCHES))
			return usage_error(CMD, "bad --sweep value %u", e.sweep_v[i]);
	if (optind >= argc)
		return usage_error(CMD, "no trace given");
	if (e.comm && !e.profile)
		return usage_error(CMD, "--comm goes with --profile");
	if (e.profile) {
		if (e.check || optind + 1 != argc)
			return usage_error(CMD, "--profile takes exactly one TRACE, without --check-exact");
		return eval_profile(&e, e.profile, argv[optind]) ?
		       KCC_EXIT_ERROR : KCC_EXIT_OK;
	}

	if (!e.check)
		print_header(&e);
	for (i = optind; i < (uint32_t)argc; i++) {
		ret = e.check ? check_exact(&e, argv[i]) : eval_trace(&e, argv[i]);
		if (ret)
			return KCC_EXIT_ERROR;
	}
	return KCC_EXIT_OK;
}
