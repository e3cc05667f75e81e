// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-diff.c - kcc diff: which k-contexts gained or lost between two
 * profiles, each normalised by its own total so that runs of different
 * lengths compare.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "report.h"

#define CMD "kcc diff"

static void diff_usage(void)
{
	printf(
"usage: kcc diff [options] BASELINE NEW\n"
"\n"
"Compare the exclusive k-contexts of two profiles (all tasks of each\n"
"joined): for every k-context whose share of the total changed, print\n"
"the change in percentage points, both shares and both counts, largest\n"
"change first.  Identical profiles print nothing but the header.\n"
"\n"
"Options:\n"
"  -k, --k K          compare K-contexts (default: both profiles' k, which\n"
"                     must be equal unless --force: then the smaller)\n"
"  --sort METRIC      misses (default), calls, samples or a metric name\n"
"  --percent-limit P  hide changes below P percentage points\n"
"  --pid PID[,PID...], --comm NAME[,NAME...]   select tasks in both\n"
"  --force            compare profiles of different events or k\n"
"  --stdio            accepted (perf's habit): the output is text\n"
"  -h, --help         this help\n"
"\n"
"EXAMPLES\n"
"  kcc diff before.kcc after.kcc\n"
"  kcc diff --sort calls --k 1 a.kcc b.kcc\n");
}

struct side {
	struct profile p;
	struct report r;
	struct report_row *rows;
	size_t nr;
	uint64_t total;
	bool built;
};

struct delta {
	const char *path;
	double a, b;
	uint64_t ca, cb;
};

static int delta_cmp(const void *x, const void *y)
{
	const struct delta *p = x, *q = y;
	double dp = fabs(p->b - p->a), dq = fabs(q->b - q->a);

	if (dp != dq)
		return dp > dq ? -1 : 1;
	return strcmp(p->path, q->path);
}

static int sort_index(const struct stream *s, const char *sort)
{
	if (!sort || !strcmp(sort, "misses") || !strcmp(sort, "events"))
		return s->nr_ctrs > KCC_CTR_EVENTS ? KCC_CTR_EVENTS : 0;
	if (!strcmp(sort, "calls"))
		return KCC_CTR_CALLS;
	return stream__metric(s, sort);
}

static int side_load(struct side *sd, const char *path, struct report_opts *o,
		     const char *sort)
{
	uint32_t g;
	int ret;

	o->name = path;
	o->sort = sort_index(&sd->p.runs[0].s, sort);
	if (o->sort < 0) {
		fprintf(stderr, "kcc: %s: no metric '%s'\n", path, sort);
		return -EINVAL;
	}
	ret = report__build(&sd->r, &sd->p, o);
	sd->built = true;
	if (ret)
		return ret;
	for (g = 0; g < sd->r.nr_groups; g++)
		sd->total += sd->r.groups[g].total[sd->r.sort];
	return report__rows(&sd->r, &sd->rows, &sd->nr);
}

static void side_exit(struct side *sd)
{
	report_rows__free(sd->rows, sd->nr);
	if (sd->built)
		report__exit(&sd->r);
	profile__exit(&sd->p);
}

int cmd_diff(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "k", required_argument, NULL, 'k' },
		{ "sort", required_argument, NULL, 's' },
		{ "percent-limit", required_argument, NULL, 'l' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'c' },
		{ "force", no_argument, NULL, 'f' },
		{ "stdio", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_opts o = { .group = GROUP_ALL };
	struct side a = { 0 }, b = { 0 };
	struct delta *d = NULL;
	const char *sort = NULL;
	bool force = false;
	char why[128];
	double limit = 0, x;
	size_t i = 0, j = 0, n = 0;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (!strcmp(optarg, "inf"))
				o.k = KCC_K_INF;
			else if (parse_u32(optarg, &o.k) || o.k > KCC_K_MAX)
				return usage_error(CMD, "bad --k '%s'", optarg);
			o.k_set = true;
			break;
		case 's':
			sort = optarg;
			break;
		case 'l':
			if (parse_double(optarg, &limit) || limit < 0 || limit > 100)
				return usage_error(CMD, "bad --percent-limit '%s'", optarg);
			break;
		case 'p':
			if (report_ids__parse(&o.pids, optarg))
				return usage_error(CMD, "bad --pid '%s': expected PID[,PID...]",
						   optarg);
			break;
		case 'f':
			force = true;
			break;
		case 'S':
			break;
		case 'c':
			o.comm = optarg;
			break;
		case 'h':
			diff_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (argc - optind != 2)
		return usage_error(CMD, "expected two profiles: BASELINE NEW");

	ret = profile__read(&a.p, argv[optind]);
	if (!ret)
		ret = profile__read(&b.p, argv[optind + 1]);
	if (ret)
		goto cleanup;
	if (profile__same_events(&a.p, &b.p, why, sizeof(why)) && !force) {
		fprintf(stderr, "kcc: %s and %s count different events (%s): use --force to compare them all the same\n",
			argv[optind], argv[optind + 1], why);
		ret = -EINVAL;
		goto cleanup;
	}
	if (!o.k_set) {
		uint32_t ka = a.p.runs[0].s.hdr.k, kb = b.p.runs[0].s.hdr.k;

		if (ka != kb && !force) {
			fprintf(stderr, "kcc: %s has k %u, %s has k %u: give -k K (at most the smaller) or --force\n",
				argv[optind], ka, argv[optind + 1], kb);
			ret = -EINVAL;
			goto cleanup;
		}
		/* Both sides at the smaller recorded k. */
		o.k = ka < kb ? ka : kb;
		o.k_set = true;
	}
	ret = side_load(&a, argv[optind], &o, sort);
	if (!ret)
		ret = side_load(&b, argv[optind + 1], &o, sort);
	if (ret)
		goto cleanup;

	d = calloc(a.nr + b.nr + 1, sizeof(*d));
	if (!d) {
		ret = -ENOMEM;
		goto cleanup;
	}
	while (i < a.nr || j < b.nr) {
		int cmp = i == a.nr ? 1 : j == b.nr ? -1 :
			  strcmp(a.rows[i].path, b.rows[j].path);
		uint64_t ca = cmp <= 0 ? a.rows[i].ctr[a.r.sort] : 0;
		uint64_t cb = cmp >= 0 ? b.rows[j].ctr[b.r.sort] : 0;

		d[n].path = cmp <= 0 ? a.rows[i].path : b.rows[j].path;
		d[n].ca = ca;
		d[n].cb = cb;
		d[n].a = a.total ? 100.0 * ca / a.total : 0;
		d[n].b = b.total ? 100.0 * cb / b.total : 0;
		if (d[n].a != d[n].b && fabs(d[n].b - d[n].a) >= limit)
			n++;
		if (cmp <= 0)
			i++;
		if (cmp >= 0)
			j++;
	}
	qsort(d, n, sizeof(*d), delta_cmp);
	printf("# kcc diff: %s -> %s\n# metric: %s, each side normalised by its total (%" PRIu64 " -> %" PRIu64 ")\n",
	       argv[optind], argv[optind + 1], a.r.desc[a.r.sort].name,
	       a.total, b.total);
	printf("#   delta   baseline       new  baseline-count   new-count  k-context\n");
	for (i = 0; i < n; i++) {
		x = d[i].b - d[i].a;
		printf("%+8.2f%% %9.2f%% %9.2f%% %15" PRIu64 " %11" PRIu64 "  %s\n",
		       x, d[i].a, d[i].b, d[i].ca, d[i].cb, d[i].path);
	}
cleanup:
	free(d);
	side_exit(&a);
	side_exit(&b);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
