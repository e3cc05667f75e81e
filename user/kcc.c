// SPDX-License-Identifier: GPL-2.0
/*
 * kcc.c - the kcc command: dispatch to a subcommand, git and perf style.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "ccf", cmd_ccf, "k-calling-context forest of a trace" },
	{ "hcct", cmd_hcct, "hot calling context tree of a trace" },
	{ "trace", cmd_trace, "convert traces between text and binary" },
	{ "record", cmd_record, "profile a command, a process or the system" },
	{ "report", cmd_report, "k-contexts of a profile, with symbols" },
	{ "diff", cmd_diff, "k-contexts that gained or lost between profiles" },
	{ "merge", cmd_merge, "combine profiles into one" },
	{ "dump", cmd_dump, "canonical per-task k-SF dump of a stream or profile" },
	{ "eval", cmd_eval, "accuracy of sampled k-CCFs against a trace" },
	{ "synth", cmd_synth, "simulated LBR samples of a random program" },
	{ "replay", cmd_replay, "stitch a sample file into a k-SF or k-CCF" },
	{ "watch", cmd_watch, "exact counts of watched k-contexts on a trace" },
	{ "import", cmd_import, "a profile from perf.data (no module needed)" },
	{ "serve", cmd_serve, "a session served over HTTP: pprof windows, metrics" },
	{ "valence", cmd_valence, "Valence encoding tables and their check" },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: kcc [--version] [--help] <command> [<args>]\n"
		"\n"
		"kcc reports how often each calling context of at most k call\n"
		"edges ran (k-calling-context profiling).\n"
		"\n"
		"Commands:\n");
	for (i = 0; i < NR_CMDS; i++)
		fprintf(out, "   %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(out,
		"\n"
		"EXAMPLES\n"
		"   kcc ccf -k 2 trace.txt          2-contexts with their call counts\n"
		"   kcc hcct --phi 0.05 trace.txt   contexts above 5%% of all calls\n"
		"   kcc trace convert -o t.bin t.txt\n"
		"   kcc record -- ./app && kcc report   profile a command, top k-contexts\n"
		"   kcc report --format svg -o f.svg     flame graph of kcc.data\n"
		"\n"
		"See 'kcc <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name;
	size_t i;
	int c, ret;

	opterr = 0;
	/* '+': options after the command name belong to the command. */
	while ((c = getopt_long(argc, argv, "+:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return KCC_EXIT_OK;
		case 'V':
			printf("kcc version %s\n", KCC_VERSION);
			return KCC_EXIT_OK;
		default:
			return usage_bad_option("kcc", c, argv);
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return KCC_EXIT_USAGE;
	}

	name = argv[optind];
	argc -= optind;
	argv += optind;
	if (!strcmp(name, "help")) {
		if (argc < 2) {
			usage(stdout);
			return KCC_EXIT_OK;
		}
		/* "kcc help ccf" is "kcc ccf --help". */
		name = argv[1];
		argv[0] = argv[1];
		argv[1] = "--help";
		argc = 2;
	}

	for (i = 0; i < NR_CMDS; i++) {
		if (strcmp(name, cmds[i].name))
			continue;
		/* Each command parses its options from scratch. */
		optind = 0;
		opterr = 0;
		setvbuf(stdout, NULL, _IOFBF, 1 << 20);
		ret = cmds[i].fn(argc, argv);
		if (fflush(stdout) || ferror(stdout)) {
			fprintf(stderr, "kcc: <stdout>: write error: %s\n",
				strerror(errno ? errno : EIO));
			if (!ret)
				ret = KCC_EXIT_ERROR;
		}
		return ret;
	}
	return usage_error("kcc", "'%s' is not a kcc command", name);
}
