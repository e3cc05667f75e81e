// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-hcct.c - kcc hcct: the Hot Calling Context Tree of a trace.
 */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "ccf.h"
#include "trace_file.h"

#define CMD "kcc hcct"
/* 1/EPS counters: beyond this the summary is no longer small. */
#define HCCT_MAX_COUNTERS	(1u << 24)

static void hcct_usage(void)
{
	printf(
"usage: kcc hcct [--phi PHI] [--eps EPS] [--guaranteed] [--tolerant] TRACE\n"
"\n"
"Print the Hot Calling Context Tree of TRACE: every full calling context\n"
"activated at least floor(PHI * N) times out of N calls, found online\n"
"with floor(1/EPS) + 1 Space-Saving counters, and the ancestors that\n"
"connect them.  Estimates exceed true counts by less than EPS * N.\n"
"\n"
"Options:\n"
"  --phi PHI     hotness threshold as a fraction of all calls\n"
"                (default 0.01)\n"
"  --eps EPS     accuracy, 0 < EPS < PHI (default PHI / 10)\n"
"  --guaranteed  a second column with the guaranteed count, estimate\n"
"                minus its error: the true count is at least that, so a\n"
"                context whose guaranteed count reaches the threshold is\n"
"                hot for sure ('sure=' in the summary line counts them)\n"
"  --tolerant    ignore returns with an empty stack and close pending\n"
"                calls at the end, with a warning\n"
"  -h, --help    this help\n"
"\n"
"Output: '<estimate>TAB<root;...;context>' per node, sorted by number of\n"
"routines then bytewise (an ancestor kept only to connect hot contexts\n"
"shows its estimate, 0 if no longer monitored), then\n"
"'# N=<calls> threshold=<floor(PHI N)> hot=<hot contexts> counters=<m>'.\n"
"With --guaranteed: '<estimate>TAB<guaranteed>TAB<path>', and the summary\n"
"line ends with ' sure=<contexts hot for sure>'.\n"
"\n"
"EXAMPLES\n"
"  kcc hcct trace.txt\n"
"  kcc hcct --phi 0.05 --eps 0.001 trace.bin\n"
"  kcc hcct --phi 0.01 --eps 0.005 --guaranteed trace.txt\n");
}

enum {
	OPT_PHI = 256,
	OPT_EPS,
	OPT_GUARANTEED,
	OPT_TOLERANT,
};

int cmd_hcct(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "phi", required_argument, NULL, OPT_PHI },
		{ "eps", required_argument, NULL, OPT_EPS },
		{ "guaranteed", no_argument, NULL, OPT_GUARANTEED },
		{ "tolerant", no_argument, NULL, OPT_TOLERANT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double phi = 0.01, eps = 0, inv;
	bool have_eps = false, tolerant = false, guaranteed = false;
	const char *path, *name;
	uint32_t phi_ppm, m;
	struct trace t;
	struct hcct hc;
	int ch, ret;

	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_PHI:
			if (parse_double(optarg, &phi) || !(phi > 0) || phi > 1)
				return usage_error(CMD, "bad --phi '%s': expected a fraction in (0, 1]",
						   optarg);
			break;
		case OPT_EPS:
			if (parse_double(optarg, &eps) || !(eps > 0) || eps >= 1)
				return usage_error(CMD, "bad --eps '%s': expected a fraction in (0, 1)",
						   optarg);
			have_eps = true;
			break;
		case OPT_GUARANTEED:
			guaranteed = true;
			break;
		case OPT_TOLERANT:
			tolerant = true;
			break;
		case 'h':
			hcct_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, ch, argv);
		}
	}
	if (!have_eps)
		eps = phi / 10;
	if (!(eps < phi))
		return usage_error(CMD, "--eps must be smaller than --phi");
	/* The core takes PHI in parts per million. */
	phi_ppm = (uint32_t)llround(phi * 1e6);
	if (!phi_ppm)
		return usage_error(CMD, "--phi below one part per million");
	/* 1/EPS computed in binary can land just below an integer. */
	inv = floor(1 / eps * (1 + 1e-12));
	if (inv >= HCCT_MAX_COUNTERS)
		return usage_error(CMD, "--eps too small: more than %u counters",
				   HCCT_MAX_COUNTERS);
	m = (uint32_t)inv + 1;

	ret = usage_one_operand(CMD, argc, argv, "trace file", &path);
	if (ret)
		return ret;
	name = trace__display_name(path);

	if (trace__init(&t)) {
		fprintf(stderr, "kcc: out of memory\n");
		return KCC_EXIT_ERROR;
	}
	ret = trace__read(&t, path, tolerant);
	if (ret)
		goto cleanup;
	ret = hcct__build(&hc, &t, phi_ppm, m);
	if (ret) {
		fprintf(stderr, "kcc: %s: cannot build the HCCT: %s\n", name,
			strerror(-ret));
		goto cleanup;
	}
	ret = hcct__print(&hc, &t.syms, guaranteed, stdout);
	if (ret)
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
	hcct__exit(&hc);
cleanup:
	trace__exit(&t);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
