// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-ccf.c - kcc ccf: the k-calling-context forest of a trace.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "ccf.h"
#include "trace_file.h"

#define CMD "kcc ccf"

static void ccf_usage(void)
{
	printf(
"usage: kcc ccf -k K [options] TRACE\n"
"\n"
"Print the k-calling-context forest (k-CCF) of TRACE: for every routine,\n"
"each path of at most K call edges that led to it, with the number of\n"
"activations of that path.  K = 0 is a vertex profile, K = 1 an edge\n"
"profile, K = inf the full calling context tree.  TRACE is a text or\n"
"binary trace (Documentation/trace-format.rst), '-' for stdin.\n"
"\n"
"Options:\n"
"  -k K                 context length in call edges: 0, 1, 2, ... or inf\n"
"  --from ksf|cct       build a k-slab forest online (default) or the\n"
"                       full CCT, then apply inv_k; the output is the same\n"
"  --format paths|tree  one line per context (default), or each k-CCF\n"
"                       tree indented, callee at the root, hottest first\n"
"  --stats              print only statistics (key: value)\n"
"  --tolerant           ignore returns with an empty stack and close\n"
"                       pending calls at the end, with a warning\n"
"  --similar X          keep only contexts with at least X%% of the\n"
"                       activations of their routine (0 < X <= 100)\n"
"  --prune-chains       drop every chain that leads to a leaf but its\n"
"                       first node (tree format shows '(+N pruned)')\n"
"  --expand-chains      --prune-chains, and the tree format names the\n"
"                       pruned routines, rebuilt from the source forest:\n"
"                       '(+N pruned: outermost;...;caller)'\n"
"  --max-nodes N        fixed budget of N nodes per forest; on overflow\n"
"                       warn and print what was kept\n"
"  -h, --help           this help\n"
"\n"
"Paths format: '<activations>TAB<outermost;...;caller;callee>', sorted by\n"
"number of routines, then bytewise.\n"
"\n"
"EXAMPLES\n"
"  printf 'call r\\ncall a\\nreturn\\nreturn\\n' | kcc ccf -k 1 -\n"
"  kcc ccf -k 2 --format tree trace.txt\n"
"  kcc ccf -k inf --similar 90 trace.bin\n"
"  kcc ccf -k 3 --stats trace.txt\n"
"  kcc ccf -k 8 --expand-chains --format tree trace.txt\n");
}

enum {
	OPT_FROM = 256,
	OPT_FORMAT,
	OPT_STATS,
	OPT_TOLERANT,
	OPT_SIMILAR,
	OPT_PRUNE_CHAINS,
	OPT_EXPAND_CHAINS,
	OPT_MAX_NODES,
};

int cmd_ccf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "from", required_argument, NULL, OPT_FROM },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "tolerant", no_argument, NULL, OPT_TOLERANT },
		{ "similar", required_argument, NULL, OPT_SIMILAR },
		{ "prune-chains", no_argument, NULL, OPT_PRUNE_CHAINS },
		{ "expand-chains", no_argument, NULL, OPT_EXPAND_CHAINS },
		{ "max-nodes", required_argument, NULL, OPT_MAX_NODES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ccf_opts o = { 0 };
	bool have_k = false, stats = false, tolerant = false, tree = false;
	bool chains = false, expand = false;
	uint32_t similar_bp = 0;
	const char *path, *name;
	struct trace t;
	struct ccf c;
	double x;
	int ch, ret;

	while ((ch = getopt_long(argc, argv, ":k:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'k':
			if (parse_k(optarg, &o.k))
				return usage_error(CMD, "bad -k '%s': expected a non-negative integer or 'inf'",
						   optarg);
			have_k = true;
			break;
		case OPT_FROM:
			if (!strcmp(optarg, "cct"))
				o.from_cct = true;
			else if (!strcmp(optarg, "ksf"))
				o.from_cct = false;
			else
				return usage_error(CMD, "bad --from '%s': expected 'ksf' or 'cct'",
						   optarg);
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "tree"))
				tree = true;
			else if (!strcmp(optarg, "paths"))
				tree = false;
			else
				return usage_error(CMD, "bad --format '%s': expected 'paths' or 'tree'",
						   optarg);
			break;
		case OPT_STATS:
			stats = true;
			break;
		case OPT_TOLERANT:
			tolerant = true;
			break;
		case OPT_SIMILAR:
			if (parse_double(optarg, &x) || !(x > 0) || x > 100)
				return usage_error(CMD, "bad --similar '%s': expected a percentage in (0, 100]",
						   optarg);
			/* The core compares in basis points. */
			similar_bp = (uint32_t)llround(x * 100);
			if (!similar_bp)
				similar_bp = 1;
			break;
		case OPT_PRUNE_CHAINS:
			chains = true;
			break;
		case OPT_EXPAND_CHAINS:
			chains = true;
			expand = true;
			break;
		case OPT_MAX_NODES:
			if (parse_u32(optarg, &o.max_nodes) || !o.max_nodes ||
			    o.max_nodes >= KCC_FREE)
				return usage_error(CMD, "bad --max-nodes '%s': expected a positive node count",
						   optarg);
			break;
		case 'h':
			ccf_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, ch, argv);
		}
	}
	if (!have_k)
		return usage_error(CMD, "-k K is required");
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

	ret = ccf__build(&c, &t, &o);
	if (ret) {
		fprintf(stderr, "kcc: %s: cannot build the %s-CCF: %s\n", name,
			o.k == KCC_K_INF ? "inf" : "k", strerror(-ret));
		goto cleanup;
	}
	if (c.lost_calls || c.kccf_drops || c.src.f.drops)
		fprintf(stderr,
			"kcc: %s: warning: node budget exceeded: %s dropped %" PRIu64 " nodes (%" PRIu64 " calls lost), k-CCF dropped %" PRIu64 " nodes\n",
			name, c.src_k == KCC_K_INF ? "CCT" : "k-SF",
			c.src.f.drops, c.lost_calls, c.kccf_drops);

	if (similar_bp)
		ret = ccf__prune_similar(&c, similar_bp);
	if (!ret && chains)
		ret = ccf__prune_chains(&c);
	c.expand_chains = expand;
	if (!ret) {
		if (stats)
			ret = ccf__print_stats(&c, stdout);
		else if (tree)
			ret = ccf__print_tree(&c, stdout);
		else
			ret = ccf__print_paths(&c, stdout);
	}
	if (ret)
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
	ccf__exit(&c);
cleanup:
	trace__exit(&t);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
