// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-synth.c - kcc synth: a random program run, sampled by the LBR
 * simulator into a sample file (Documentation/stitching.rst).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "lbrsim.h"
#include "samples.h"
#include "trace.h"

#define CMD "kcc synth"

static void synth_usage(void)
{
	printf(
"usage: kcc synth --seed S [options] -o SAMPLES\n"
"\n"
"Generate a random program run (a call graph with skewed callee choice,\n"
"direct and mutual recursion and long call chains), lay its routines out\n"
"at synthetic code addresses and sample it the way kcc.ko samples with\n"
"LBR: every P events a sample with the stack walk and the last D\n"
"call/return records.  The samples go to SAMPLES in the sample file\n"
"format that 'kcc replay' reads and KCC_IOC_INJECT takes.\n"
"\n"
"Options:\n"
"  --seed S            random seed (required); equal seeds, equal output\n"
"  --events N          call and return events, about (default 10000)\n"
"  --routines R        routines r0 .. r<R-1> (default 50)\n"
"  --max-depth D       deepest call stack (default 200)\n"
"  --period P          events per sample (default 1)\n"
"  --rate MAX          the event is not a call: each call of a routine\n"
"                      adds a fixed 0..MAX events (default 0: calls)\n"
"  --lbr-depth D       records per burst, 0..64 (default 32)\n"
"  --stack-depth M     stack entries per walk, 1..512 (default 127);\n"
"                      deeper stacks are cut and flagged truncated\n"
"  --effects LIST      shape the samples as real code and hardware do:\n"
"                      leaf,lib,plt,tail,signal,skid,wipe,far, all or\n"
"                      none (default; see kcc eval --help)\n"
"  -o FILE             sample file to write ('-' for stdout)\n"
"  --trace-out FILE    also write the exact trace (text format)\n"
"  --map-out FILE      also write the symbol map 'START END NAME'\n"
"  -v                  statistics on stderr\n"
"  -h, --help          this help\n"
"\n"
"EXAMPLES\n"
"  kcc synth --seed 1 -o s.smp --trace-out s.trace --map-out s.map\n"
"  kcc replay -k 2 --format ccf --map s.map s.smp   # compare with:\n"
"  kcc ccf -k 2 s.trace\n"
"  kcc synth --seed 7 --period 50 --rate 3 --lbr-depth 16 -o m.smp\n");
}

enum {
	OPT_SEED = 256,
	OPT_EVENTS,
	OPT_ROUTINES,
	OPT_MAX_DEPTH,
	OPT_PERIOD,
	OPT_RATE,
	OPT_LBR_DEPTH,
	OPT_STACK_DEPTH,
	OPT_TRACE_OUT,
	OPT_MAP_OUT,
	OPT_EFFECTS,
};

static int parse_u64(const char *s, uint64_t *v)
{
	unsigned long long x;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

struct synth_out {
	FILE *f;
	int err;
};

static int synth_emit(void *arg, const struct kcc_sample *s)
{
	struct synth_out *o = arg;

	o->err = samples__write(o->f, s);
	return o->err;
}

static FILE *open_out(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "we") : stdout;

	if (!f)
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	int ret = 0;

	if (fflush(f) || ferror(f))
		ret = -(errno ? errno : EIO);
	if (f != stdout && fclose(f) && !ret)
		ret = -(errno ? errno : EIO);
	if (ret)
		fprintf(stderr, "kcc: %s: write error: %s\n", path,
			strerror(-ret));
	return ret;
}

int cmd_synth(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "events", required_argument, NULL, OPT_EVENTS },
		{ "routines", required_argument, NULL, OPT_ROUTINES },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "period", required_argument, NULL, OPT_PERIOD },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "lbr-depth", required_argument, NULL, OPT_LBR_DEPTH },
		{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
		{ "trace-out", required_argument, NULL, OPT_TRACE_OUT },
		{ "map-out", required_argument, NULL, OPT_MAP_OUT },
		{ "effects", required_argument, NULL, OPT_EFFECTS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lbrsim_gen g = { .events = 10000, .routines = 50,
				.max_depth = 200 };
	struct lbrsim_opts o = { .period = 1, .lbr_depth = 32,
				 .stack_depth = 127 };
	const char *out = NULL, *trace_out = NULL, *map_out = NULL;
	struct synth_out so = { NULL, 0 };
	bool have_seed = false, verbose = false;
	struct lbrsim sim;
	struct trace t;
	FILE *f;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":o:vh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SEED:
			if (parse_u64(optarg, &g.seed))
				return usage_error(CMD, "bad --seed '%s': expected an integer", optarg);
			have_seed = true;
			break;
		case OPT_EVENTS:
			if (parse_u64(optarg, &g.events) || !g.events ||
			    g.events > (1ull << 30))
				return usage_error(CMD, "bad --events '%s': expected 1 .. 2^30", optarg);
			break;
		case OPT_ROUTINES:
			if (parse_u32(optarg, &g.routines) || !g.routines ||
			    g.routines > LBRSIM_MAX_ROUTINES)
				return usage_error(CMD, "bad --routines '%s': expected 1 .. %u",
						   optarg, LBRSIM_MAX_ROUTINES);
			break;
		case OPT_MAX_DEPTH:
			if (parse_u32(optarg, &g.max_depth) || !g.max_depth ||
			    g.max_depth > 100000)
				return usage_error(CMD, "bad --max-depth '%s': expected 1 .. 100000", optarg);
			break;
		case OPT_PERIOD:
			if (parse_u32(optarg, &o.period) || !o.period)
				return usage_error(CMD, "bad --period '%s': expected a positive integer", optarg);
			break;
		case OPT_RATE:
			if (parse_u32(optarg, &o.max_rate) || o.max_rate > 1000000)
				return usage_error(CMD, "bad --rate '%s': expected 0 .. 1000000", optarg);
			break;
		case OPT_LBR_DEPTH:
			if (parse_u32(optarg, &o.lbr_depth) ||
			    o.lbr_depth > KCC_INJECT_MAX_BRANCHES)
				return usage_error(CMD, "bad --lbr-depth '%s': expected 0 .. %u",
						   optarg, KCC_INJECT_MAX_BRANCHES);
			break;
		case OPT_STACK_DEPTH:
			if (parse_u32(optarg, &o.stack_depth) || !o.stack_depth ||
			    o.stack_depth > KCC_INJECT_MAX_STACK)
				return usage_error(CMD, "bad --stack-depth '%s': expected 1 .. %u",
						   optarg, KCC_INJECT_MAX_STACK);
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_TRACE_OUT:
			trace_out = optarg;
			break;
		case OPT_MAP_OUT:
			map_out = optarg;
			break;
		case OPT_EFFECTS:
			if (lbrsim__parse_effects(optarg, &o.effects))
				return usage_error(CMD, "bad --effects '%s' (leaf,lib,plt,tail,signal,skid,wipe,far, all or none)",
						   optarg);
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			synth_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (!have_seed)
		return usage_error(CMD, "--seed S is required");
	if (!out)
		return usage_error(CMD, "-o FILE is required");
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	o.seed = g.seed;

	ret = lbrsim__gen_trace(&t, &g);
	if (ret) {
		fprintf(stderr, "kcc: cannot generate a trace: %s\n",
			strerror(-ret));
		return KCC_EXIT_ERROR;
	}
	ret = lbrsim__init(&sim, symtab__nr(&t.syms), &o, synth_emit, &so);
	if (ret) {
		fprintf(stderr, "kcc: cannot set up the simulator: %s\n",
			strerror(-ret));
		goto exit_trace;
	}

	so.f = open_out(out);
	ret = -EIO;
	if (!so.f)
		goto exit_sim;
	ret = samples__write_header(so.f);
	if (!ret)
		ret = lbrsim__run(&sim, t.ev, t.nr);
	if (!ret)
		ret = lbrsim__finish(&sim);
	if (ret) {
		fprintf(stderr, "kcc: %s: %s\n", out, strerror(-ret));
		if (so.f != stdout)
			fclose(so.f);
		goto exit_sim;
	}
	ret = close_out(so.f, out);
	if (ret)
		goto exit_sim;

	if (trace_out) {
		f = open_out(trace_out);
		ret = f ? trace__write_text(&t, f) : -EIO;
		if (f && !ret)
			ret = close_out(f, trace_out);
		else if (f && f != stdout)
			fclose(f);
		if (ret)
			goto exit_sim;
	}
	if (map_out) {
		f = open_out(map_out);
		ret = f ? lbrsim__write_map(&sim, &t.syms, f) : -EIO;
		if (f && !ret)
			ret = close_out(f, map_out);
		else if (f && f != stdout)
			fclose(f);
		if (ret)
			goto exit_sim;
	}
	if (verbose)
		fprintf(stderr,
			"events: %" PRIu64 "\ncalls: %" PRIu64 "\nmax_depth: %" PRIu64 "\nsamples: %" PRIu64 "\ntruncated: %" PRIu64 "\nmax_window: %" PRIu64 "\nuncovered: %" PRIu64 "\n",
			(uint64_t)t.nr, sim.calls, (uint64_t)t.max_depth,
			sim.samples, sim.truncated, sim.max_window,
			sim.uncovered);
	ret = 0;
exit_sim:
	lbrsim__exit(&sim);
exit_trace:
	trace__exit(&t);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
