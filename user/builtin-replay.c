// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-replay.c - kcc replay: stitch a sample file into a k-SF with
 * the same lbr/ code kcc.ko runs, and print the forest or its k-CCF.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "ccf.h"
#include "ksfdump.h"
#include "lbrsim.h"
#include "samples.h"

#define CMD "kcc replay"

static void replay_usage(void)
{
	printf(
"usage: kcc replay -k K [options] SAMPLES\n"
"\n"
"Stitch the samples of SAMPLES (a sample file, '-' for stdin) onto a\n"
"k-slab forest exactly as kcc.ko does for injected samples: each burst of\n"
"call/return records is undone against its stack, anchored at absolute\n"
"depth and replayed (overlapping bursts are joined only with --join),\n"
"and each sample's event count is charged to its context.\n"
"\n"
"Options:\n"
"  -k K                 slab height / context length: 1, 2, ... or inf\n"
"                       (0 too with --format ccf)\n"
"  --format ksf|ccf     the k-SF in the canonical dump format (default),\n"
"                       or the k-CCF in the paths format of 'kcc ccf'\n"
"  --map MAP            symbol map 'START END NAME' (kcc synth --map-out):\n"
"                       labels become routine names and nodes of one\n"
"                       routine are merged\n"
"  -c N                 ksf format: print the first N counters (1: calls)\n"
"  --rr N               adaptive bursting: replay 1 burst in N of\n"
"                       contexts seen before, weighted N (default 0: off)\n"
"  --table E            history table entries, a power of 2 (default 4096)\n"
"  --sig-depth S        stack entries in a context signature (default 8)\n"
"  --seed X             seed of the bursting decisions (default 1)\n"
"  --join unique|longest|none\n"
"                       overlap with the previous burst: none (default,\n"
"                       as kcc.ko: every burst whole), used only when\n"
"                       unique, or the longest one (dense sampling)\n"
"  --stats              print only the stitching statistics (key: value)\n"
"  -h, --help           this help\n"
"\n"
"KSF format: 'KIND PATH CALLS EVENTS SAMPLES CALLS_VAR' per node with a\n"
"non-zero counter (CALLS_VAR: the variance of estimated calls), KIND top\n"
"or slab, PATH the labels from the root joined by ';' (hex addresses, 0\n"
"for [unknown], or names with --map), sorted bytewise.\n"
"\n"
"EXAMPLES\n"
"  kcc synth --seed 1 -o s.smp --map-out s.map --trace-out s.trace\n"
"  kcc replay -k 2 s.smp\n"
"  kcc replay -k 2 --format ccf --map s.map s.smp\n"
"  kcc replay -k 3 --rr 10 --seed 5 --stats s.smp\n");
}

enum {
	OPT_FORMAT = 256,
	OPT_MAP,
	OPT_RR,
	OPT_TABLE,
	OPT_SIG_DEPTH,
	OPT_SEED,
	OPT_JOIN,
	OPT_STATS,
};

/* Labels to names: symbols from the map, hex otherwise. */
struct namer {
	const struct addrmap *map;	/* NULL: hex */
	struct symtab *out;
	int err;
};

static uint64_t namer__label(void *arg, uint64_t label)
{
	struct namer *n = arg;
	uint32_t id = 0, r = n->map ? addrmap__lookup(n->map, label) : LBRSIM_NONE;
	const char *name = NULL;
	char buf[24];

	if (label == KCC_LABEL_UNKNOWN) {
		name = "[unknown]";
	} else if (r != LBRSIM_NONE) {
		name = symtab__name(&n->map->names, r);
	} else {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, label);
		name = buf;
	}
	if (symtab__intern(n->out, name, strlen(name), &id))
		n->err = -ENOMEM;
	return id;
}

static int print_stats(const struct stitcher *sr, FILE *out)
{
	const struct kcc_stitch *st = &sr->st;
	const struct kcc_forest *f = &sr->pool.f;

	fprintf(out,
		"samples: %" PRIu64 "\nbursts_replayed: %" PRIu64 "\nbursts_skipped: %" PRIu64 "\nbursts_joined: %" PRIu64 "\njoin_ambiguous: %" PRIu64 "\nbranches: %" PRIu64 "\nstitch_errors: %" PRIu64 "\ncalls: %" PRIu64 "\nlost_charges: %" PRIu64 "\nnodes: %u\nnode_drops: %" PRIu64 "\n",
		st->samples, st->bursts_replayed, st->bursts_skipped,
		st->bursts_joined, st->join_ambiguous, st->branches,
		st->stitch_errors, st->ksf.calls, st->ksf.lost_charges,
		f->count, f->drops);
	fprintf(out,
		"leaf_repaired: %" PRIu64 "\nwalk_repaired: %" PRIu64 "\nwalk_cut: %" PRIu64 "\nskid_repaired: %" PRIu64 "\nunrecorded: %" PRIu64 "\nunmatched_return: %" PRIu64 "\nfar_skipped: %" PRIu64 "\nbelow_walk: %" PRIu64 "\n",
		st->cnt.leaf_repaired, st->cnt.walk_repaired, st->cnt.walk_cut,
		st->cnt.skid_repaired, st->cnt.unrecorded,
		st->cnt.unmatched_return, st->cnt.far_skipped,
		st->cnt.below_walk);
	if (sr->burst_mem)
		fprintf(out, "burst_new: %" PRIu64 "\nburst_reenabled: %" PRIu64 "\nburst_skipped: %" PRIu64 "\n",
			sr->burst.new_contexts, sr->burst.reenabled,
			sr->burst.skipped);
	return ferror(out) ? -EIO : 0;
}

/* The k-CCF of the relabelled k-SF, in the paths format of kcc ccf. */
static int print_ccf(const struct kcc_forest *rel, uint32_t src_k, uint32_t k,
		     struct trace *names, FILE *out)
{
	uint32_t cap = rel->count < 1024 ? 1024 : rel->count, i;
	struct ccf c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.trace = names;
	c.k = k;
	for (;;) {
		ret = ksf__pool_init(&c.kccf, cap, 0);
		if (ret)
			return ret;
		ret = kcc_inv_k(rel, src_k, k, &c.kccf.f, NULL);
		if (ret != -ENOSPC || cap >= 0x7ffff000u)
			break;
		pool__exit(&c.kccf);
		cap *= 2;
	}
	if (ret)
		goto cleanup;
	/* Contexts that only took events (no replayed call) are not shown. */
	c.keep = malloc((size_t)c.kccf.f.count + 1);
	ret = -ENOMEM;
	if (!c.keep)
		goto cleanup;
	for (i = 0; i < c.kccf.f.count; i++)
		c.keep[i] = kcc_forest_ctr(&c.kccf.f, i)[KCC_CTR_CALLS] != 0;
	c.kccf_nodes = c.kccf.f.count;
	ret = ccf__print_paths(&c, out);
cleanup:
	ccf__exit(&c);
	return ret;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "map", required_argument, NULL, OPT_MAP },
		{ "rr", required_argument, NULL, OPT_RR },
		{ "table", required_argument, NULL, OPT_TABLE },
		{ "sig-depth", required_argument, NULL, OPT_SIG_DEPTH },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "join", required_argument, NULL, OPT_JOIN },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stitcher_opts so = { .table = 4096, .sig_depth = 8, .seed = 1,
				     .no_join = true };
	const char *map_path = NULL, *path, *name;
	bool have_k = false, ccf = false, stats = false;
	struct addrmap map = { 0 };
	struct namer nm = { NULL, NULL, 0 };
	struct stitcher sr;
	struct samples ss;
	struct trace names;
	struct pool rel = { 0 };
	uint32_t k = 0, nctrs = 0;
	unsigned long long seed;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":k:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (parse_k(optarg, &k))
				return usage_error(CMD, "bad -k '%s': expected a non-negative integer or 'inf'",
						   optarg);
			have_k = true;
			break;
		case 'c':
			if (parse_u32(optarg, &nctrs) || !nctrs ||
			    nctrs > KCC_NR_CTRS)
				return usage_error(CMD, "bad -c '%s': expected 1 .. %u",
						   optarg, KCC_NR_CTRS);
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "ccf"))
				ccf = true;
			else if (!strcmp(optarg, "ksf"))
				ccf = false;
			else
				return usage_error(CMD, "bad --format '%s': expected 'ksf' or 'ccf'",
						   optarg);
			break;
		case OPT_MAP:
			map_path = optarg;
			break;
		case OPT_RR:
			if (parse_u32(optarg, &so.rr_inv))
				return usage_error(CMD, "bad --rr '%s': expected a non-negative integer", optarg);
			break;
		case OPT_TABLE:
			if (parse_u32(optarg, &so.table) || !so.table ||
			    (so.table & (so.table - 1)) || so.table > (1u << 26))
				return usage_error(CMD, "bad --table '%s': expected a power of 2 up to 2^26",
						   optarg);
			break;
		case OPT_SIG_DEPTH:
			if (parse_u32(optarg, &so.sig_depth) || !so.sig_depth)
				return usage_error(CMD, "bad --sig-depth '%s': expected a positive integer",
						   optarg);
			break;
		case OPT_SEED:
			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg || *optarg == '-' || !seed)
				return usage_error(CMD, "bad --seed '%s': expected a non-zero integer",
						   optarg);
			so.seed = seed;
			break;
		case OPT_JOIN:
			so.no_join = !strcmp(optarg, "none");
			so.longest_join = !strcmp(optarg, "longest");
			if (!so.no_join && !so.longest_join &&
			    strcmp(optarg, "unique"))
				return usage_error(CMD, "bad --join '%s': expected 'longest', 'unique' or 'none'",
						   optarg);
			break;
		case OPT_STATS:
			stats = true;
			break;
		case 'h':
			replay_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (!have_k)
		return usage_error(CMD, "-k K is required");
	if (!k && !ccf)
		return usage_error(CMD, "-k 0 has no k-SF: use --format ccf or k >= 1");
	ret = usage_one_operand(CMD, argc, argv, "sample file", &path);
	if (ret)
		return ret;
	name = strcmp(path, "-") ? path : "<stdin>";
	/* inv_k needs k <= k'; a 0-SF does not exist, a 1-SF serves k = 0. */
	so.k = k ? k : 1;

	if (trace__init(&names)) {
		fprintf(stderr, "kcc: out of memory\n");
		return KCC_EXIT_ERROR;
	}
	if (map_path) {
		ret = addrmap__read(&map, map_path);
		if (ret)
			goto exit_names;
		nm.map = &map;
	}
	ret = samples__read(&ss, path);
	if (ret)
		goto exit_map;
	ret = stitcher__init(&sr, &so);
	if (ret) {
		fprintf(stderr, "kcc: cannot set up stitching: %s\n",
			strerror(-ret));
		goto exit_samples;
	}
	ret = stitcher__samples(&sr, &ss);
	if (ret) {
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
		goto exit_stitcher;
	}

	if (stats) {
		ret = print_stats(&sr, stdout);
	} else if (ccf || map_path) {
		nm.out = &names.syms;
		ret = ksf__relabel(&rel, &sr.pool.f, namer__label, &nm);
		if (!ret)
			ret = nm.err;
		if (!ret && ccf)
			ret = print_ccf(&rel.f, so.k, k, &names, stdout);
		else if (!ret)
			ret = ksf__dump(&rel.f, &names.syms, nctrs, stdout);
	} else {
		ret = ksf__dump(&sr.pool.f, NULL, nctrs, stdout);
	}
	if (ret)
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
	pool__exit(&rel);
exit_stitcher:
	stitcher__exit(&sr);
exit_samples:
	samples__exit(&ss);
exit_map:
	if (map_path)
		addrmap__exit(&map);
exit_names:
	trace__exit(&names);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
