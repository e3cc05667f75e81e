// SPDX-License-Identifier: GPL-2.0
/*
 * accuracy - degree of overlap and hot-edge coverage (user/harness/accuracy.c)
 * on hand-made k-CCF pairs whose answers are worked out in the comments
 * from the definitions of Section 3 of the adaptive bursting paper, and
 * on a k-CCF built from a trace compared with itself and with a copy
 * whose counts are all scaled; and the absolute figures (abs_err,
 * calls_ratio), which see the scaling that overlap and coverage cannot.
 *
 * Forests are written as "path=count" items separated by spaces, a path
 * being routine letters from the k-CCF root down: "ra=6" is the node of
 * routine r called by a, with 6 calls.  Parents are listed first.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accuracy.h"
#include "ccf.h"
#include "ktap.h"
#include "trace_file.h"

#define CAP	64

struct hf {
	struct kcc_forest f;
	void *mem;
};

static void hf_build(struct hf *h, const char *spec)
{
	size_t size = kcc_forest_mem_size(CAP, 0);
	const char *p = spec;

	h->mem = malloc(size);
	if (!h->mem || kcc_forest_init(&h->f, h->mem, size, CAP, 0))
		ksft_exit_fail_msg("no memory for a forest\n");
	while (*p) {
		u32 node = KCC_ROOT_TOP;
		char *end;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		while (*p != '=') {
			node = kcc_forest_get(&h->f, node, (u64)*p);
			if (node == KCC_NIL)
				ksft_exit_fail_msg("forest full: %s\n", spec);
			p++;
		}
		kcc_forest_ctr(&h->f, node)[KCC_CTR_CALLS] =
			strtoull(p + 1, &end, 10);
		p = end;
	}
}

static void hf_free(struct hf *h)
{
	free(h->mem);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

/*
 * Compare approx with exact at k, thresholds t1 and t2 (0: unused); the
 * test passes when overlap and both coverages are as given.
 */
static void check(const char *what, const char *exact, const char *approx,
		  u32 k, u32 flags, double t1, double t2, double overlap,
		  double c1, double c2)
{
	struct acc_opts o = { .k = k, .flags = flags, .nr_t = 2,
			      .t = { t1, t2 } };
	struct accuracy acc;
	struct hf e, a;
	int ret;

	hf_build(&e, exact);
	hf_build(&a, approx);
	ret = accuracy__compare(&e.f, &a.f, &o, &acc);
	if (ret || !near(acc.overlap, overlap) || !near(acc.cover[0], c1) ||
	    !near(acc.cover[1], c2))
		ksft_print_msg("%s: ret %d overlap %.6f (want %.6f) cover %.6f %.6f (want %.6f %.6f)\n",
			       what, ret, acc.overlap, overlap, acc.cover[0],
			       acc.cover[1], c1, c2);
	ksft_test_result(!ret && near(acc.overlap, overlap) &&
			 near(acc.cover[0], c1) && near(acc.cover[1], c2),
			 "%s\n", what);
	hf_free(&e);
	hf_free(&a);
}

/*
 * The absolute figures of approx against exact: the test passes when
 * the sum of |w1 - w2| is @diff and the weights are @w1 and @w2, and
 * abs_err and calls_ratio are their quotients.
 */
static void check_abs(const char *what, const char *exact, const char *approx,
		      u32 k, u32 flags, u64 diff, u64 w1, u64 w2)
{
	struct acc_opts o = { .k = k, .flags = flags, .nr_t = 1,
			      .t = { 0.1 } };
	struct accuracy acc;
	struct hf e, a;
	bool ok;
	int ret;

	hf_build(&e, exact);
	hf_build(&a, approx);
	ret = accuracy__compare(&e.f, &a.f, &o, &acc);
	ok = !ret && acc.abs_diff == diff && acc.weight_approx == w1 &&
	     acc.weight_exact == w2 &&
	     near(acc.abs_err, (double)diff / (double)w2) &&
	     near(acc.calls_ratio, (double)w1 / (double)w2);
	if (!ok)
		ksft_print_msg("%s: ret %d sum |w1 - w2| %" PRIu64 " (want %" PRIu64 ") W1 %" PRIu64 " (want %" PRIu64 ") W2 %" PRIu64 " (want %" PRIu64 ") abs_err %.6f calls_ratio %.6f\n",
			       what, ret, acc.abs_diff, diff, acc.weight_approx,
			       w1, acc.weight_exact, w2, acc.abs_err,
			       acc.calls_ratio);
	ksft_test_result(ok, "%s\n", what);
	hf_free(&e);
	hf_free(&a);
}

/*
 * Two roots of one label, one of each kind (a k-SF's slab root and a
 * k-CCF's top root): one item.  Exact A = 7; approx 3 + 4.
 */
static void check_two_roots(void)
{
	struct acc_opts o = { .k = 1, .nr_t = 1, .t = { 0.1 } };
	struct accuracy acc;
	struct hf e, a;
	u32 top, slab;

	hf_build(&e, "A=7");
	hf_build(&a, "A=3");
	top = kcc_forest_find(&a.f, KCC_ROOT_TOP, 'A');
	slab = kcc_forest_get(&a.f, KCC_ROOT_SLAB, 'A');
	if (top == KCC_NIL || slab == KCC_NIL)
		ksft_exit_fail_msg("no memory for a forest\n");
	kcc_forest_ctr(&a.f, slab)[KCC_CTR_CALLS] = 4;
	ksft_test_result(!accuracy__compare(&e.f, &a.f, &o, &acc) &&
			 acc.abs_diff == 0 && near(acc.abs_err, 0) &&
			 near(acc.calls_ratio, 1),
			 "a path under both root kinds is one item: 3 + 4 = 7, abs_err 0\n");
	hf_free(&e);
	hf_free(&a);
}

/* A k-CCF of a real trace against itself and against 7 times itself. */
static void check_trace(void)
{
	static const char text[] =
		"call m\ncall a\ncall b\nreturn\ncall c\nreturn\nreturn\n"
		"call b\ncall a\ncall c\nreturn\nreturn\nreturn\n"
		"call a\nreturn\ncall c\nreturn\ncall c\ncall a\nreturn\n"
		"return\nreturn\n";
	struct acc_opts o = { .k = 2, .nr_t = 2, .t = { 0.1, 0.05 } };
	struct ccf_opts co = { .k = 2 };
	char path[] = "/tmp/kcc-accuracy.XXXXXX";
	struct accuracy acc, acc7;
	struct hf scaled;
	struct trace t;
	struct ccf c;
	u32 i;
	int fd;

	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, sizeof(text) - 1) != sizeof(text) - 1)
		ksft_exit_fail_msg("cannot write %s\n", path);
	close(fd);
	if (trace__init(&t) || trace__read(&t, path, false) ||
	    ccf__build(&c, &t, &co))
		ksft_exit_fail_msg("cannot build the k-CCF of %s\n", path);
	unlink(path);

	accuracy__compare(&c.kccf.f, &c.kccf.f, &o, &acc);
	ksft_test_result(near(acc.overlap, 1) && near(acc.cover[0], 1) &&
			 near(acc.cover[1], 1) &&
			 acc.weight_exact == t.calls &&
			 acc.items_common == acc.items_exact &&
			 acc.abs_diff == 0 && near(acc.calls_ratio, 1),
			 "a trace's 2-CCF against itself: 1, 1, 1; weights sum to the calls; abs_err 0, calls_ratio 1\n");

	/* The same nodes, inserted in the same order, counts times 7. */
	hf_build(&scaled, "");
	for (i = 0; i < c.kccf.f.count; i++) {
		const struct kcc_node *n = kcc_forest_node(&c.kccf.f, i);
		u32 j = kcc_forest_get(&scaled.f, n->parent, n->label);

		if (j != i)
			ksft_exit_fail_msg("copy out of order\n");
		kcc_forest_ctr(&scaled.f, j)[0] = 7 * n->ctr[0];
	}
	accuracy__compare(&c.kccf.f, &scaled.f, &o, &acc7);
	ksft_test_result(near(acc7.overlap, 1) && near(acc7.cover[0], 1) &&
			 acc7.weight_approx == 7 * t.calls,
			 "counts scaled by 7 (1/RR compensation): still 1\n");
	ksft_test_result(acc7.abs_diff == 6 * t.calls &&
			 near(acc7.abs_err, 6) && near(acc7.calls_ratio, 7),
			 "counts scaled by 7: abs_err 6, calls_ratio 7 (%.4f, %.4f)\n",
			 acc7.abs_err, acc7.calls_ratio);
	hf_free(&scaled);
	ccf__exit(&c);
	trace__exit(&t);
}

int main(void)
{
	struct acc_opts o = { .k = 1, .nr_t = 1, .t = { 0.1 } };
	struct accuracy acc;
	struct hf e, a;

	ksft_print_header();
	ksft_set_plan(23);

	check("identical forests: overlap 1, coverage 1",
	      "r=10 ra=6 rb=3 a=6 ar=6", "r=10 ra=6 rb=3 a=6 ar=6",
	      1, 0, 0.1, 0.05, 1, 1, 1);

	check("no common item: overlap 0, coverage 0",
	      "r=4 s=4", "a=5 b=5", 1, 0, 0.1, 0.5, 0, 0, 0);

	/*
	 * Roots only (k = 0 items).  Exact 50/30/20 -> .5 .3 .2; approx
	 * 60/40 -> .6 .4: overlap = min(.5,.6) + min(.3,.4) = .8.
	 * T = .5: exact hot {A 50, B 30 >= 25}, approx {A 60, B 40 >= 30}:
	 * 2/2.  T = .7: exact {A} (B 30 < 35), approx {A} (40 < 42): 1/1.
	 */
	check("flat profile, rare routine missed: overlap .8",
	      "A=50 B=30 C=20", "A=60 B=40", 1, 0, 0.5, 0.7, 0.8, 1, 1);

	/*
	 * Approx 10/40: .2 .8 -> overlap min(.5,.2) + min(.3,.8) = .5.  T = .5: approx hot
	 * {B} only (10 < 20): 1 of exact's {A, B}; T = .7: exact {A},
	 * approx {B}: 0.
	 */
	check("hottest routine underestimated: coverage 1/2 then 0",
	      "A=50 B=30 C=20", "A=10 B=40", 1, 0, 0.5, 0.7, 0.5, 0.5, 0);

	/*
	 * k = 1, k-context items.  Exact: r=10 with callers a 6, b 3, so
	 * 1 call of r at depth 0: items r 1, ra 6, rb 3 (W 10).  Approx:
	 * r=5 all from a: items ra 5 (r's own weight is 0, not an item).
	 * Overlap = min(.6, 1) = .6.  T = .1: exact hot {r 1 >= .6, ra,
	 * rb}, approx {ra}: 1/3.  T = .4: exact {ra} (rb 3 < 2.4? no:
	 * 3 >= 2.4, so {ra, rb}), approx {ra}: 1/2.
	 */
	check("k-context weights: a node's own calls minus its children's",
	      "r=10 ra=6 rb=3", "r=5 ra=5", 1, 0, 0.1, 0.4, 0.6,
	      1.0 / 3, 0.5);

	/*
	 * The same pair, every node an item with its full count: exact
	 * r 10, ra 6, rb 3 (W 19), approx r 5, ra 5 (W 10):
	 * min(10/19, .5) + min(6/19, .5) = .5 + 6/19.  T = .1: exact hot
	 * {r, ra, rb}, approx {r, ra}: 2/3.  T = .5: exact {r, ra} (3 <
	 * 5), approx {r, ra}: 1.
	 */
	check("ACC_INCLUSIVE: every node, counts as stored",
	      "r=10 ra=6 rb=3", "r=5 ra=5", 1, ACC_INCLUSIVE, 0.1, 0.5,
	      0.5 + 6.0 / 19, 2.0 / 3, 1);

	/*
	 * Items are label paths, not labels: x called by a and y called
	 * by b in one, the other way round in the other.  Roots weigh 0.
	 */
	check("same labels under other parents: overlap 0",
	      "x=5 xa=5 y=5 yb=5", "x=5 xb=5 y=5 ya=5", 1, 0, 0.1, 0.5,
	      0, 0, 0);

	/*
	 * Threshold is inclusive: w >= T * hottest.  Exact 10 and 1 at
	 * T = .1: both hot; approx 10 only: 1/2.  At T = .11 only 10.
	 */
	check("hot threshold: w >= T * hottest, boundary included",
	      "A=10 B=1", "A=10", 1, 0, 0.1, 0.11, 10.0 / 11, 0.5, 1);

	/* k = 2: rab = 4 is a full 2-context; ra = 4 has no own calls. */
	check("k = 2: deepest nodes keep their whole count",
	      "r=5 ra=4 rab=4", "r=4 ra=4 rab=4", 2, 0, 0.1, 0.5,
	      0.8, 0.5, 1);

	/* KCC_K_INF: CCT counts are exclusive already, kept as they are. */
	check("k = infinity (CCTs): node counts are the edge weights",
	      "m=1 ma=2 mab=3", "m=1 ma=2 mab=3", KCC_K_INF, 0, 0.5, 1,
	      1, 1, 1);

	/* Empty approximate forest: 0 everywhere, no error. */
	hf_build(&e, "A=3");
	hf_build(&a, "");
	ksft_test_result(!accuracy__compare(&e.f, &a.f, &o, &acc) &&
			 acc.overlap == 0 && acc.cover[0] == 0,
			 "empty approximation: overlap 0, coverage 0\n");
	/* An exact forest that weighs nothing cannot be compared with. */
	ksft_test_result(accuracy__compare(&a.f, &e.f, &o, &acc) == -EINVAL,
			 "exact forest of weight 0: -EINVAL\n");
	o.t[0] = 0;
	ksft_test_result(accuracy__compare(&e.f, &e.f, &o, &acc) == -EINVAL,
			 "threshold 0: -EINVAL\n");
	hf_free(&e);
	hf_free(&a);

	/*
	 * Absolute figures.  Every call counted 3 times, k = 1: items
	 * exact r 1, ra 6, rb 3 (W2 10), approx r 3, ra 18, rb 9 (W1 30):
	 * |3 - 1| + |18 - 6| + |9 - 3| = 20, abs_err 2, calls_ratio 3.
	 */
	check_abs("every call counted 3 times: abs_err 2, calls_ratio 3",
		  "r=10 ra=6 rb=3", "r=30 ra=18 rb=9", 1, 0, 20, 30, 10);
	/*
	 * Roots only: C missing from approx counts its 20, D missing from
	 * exact its 10: 10 + 10 + 20 + 10 = 50 of 100; W1 110.
	 */
	check_abs("contexts missing on either side count with 0 there",
		  "A=50 B=30 C=20", "A=60 B=40 D=10", 1, 0, 50, 110, 100);
	/* The right total in the wrong place: ratio 1, abs_err 1. */
	check_abs("all calls given to one context: calls_ratio 1, abs_err 1",
		  "A=50 B=50", "A=100", 1, 0, 100, 100, 100);
	/*
	 * k-context weights: exact r 1, ra 6, rb 3; approx r 0, ra 5:
	 * 1 + 1 + 3 = 5 of 10; W1 5.
	 */
	check_abs("abs_err over k-context weights (own calls minus children's)",
		  "r=10 ra=6 rb=3", "r=5 ra=5", 1, 0, 5, 5, 10);
	/* ACC_INCLUSIVE: r 10/5, ra 6/5, rb 3/0: 5 + 1 + 3 = 9 of 19. */
	check_abs("ACC_INCLUSIVE: abs_err over every node's full count",
		  "r=10 ra=6 rb=3", "r=5 ra=5", 1, ACC_INCLUSIVE, 9, 10, 19);
	/* k = 2: the level-2 node keeps its count: rab 4/8, ra 0, r 1/0. */
	check_abs("k = 2: abs_err counts the deepest nodes whole",
		  "r=5 ra=4 rab=4", "r=8 ra=8 rab=8", 2, 0, 5, 8, 5);
	check_two_roots();

	check_trace();
	ksft_finished();
}
