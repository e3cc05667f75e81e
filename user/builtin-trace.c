// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-trace.c - kcc trace convert: between the text and the binary
 * trace formats.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "trace_file.h"

#define CMD "kcc trace"
#define CMD_CONVERT "kcc trace convert"

static void trace_usage(FILE *out)
{
	fprintf(out,
"usage: kcc trace convert [--to binary|text] [-o OUT] [--tolerant] IN\n"
"\n"
"Read the trace IN (text or binary, detected by its magic; '-' for stdin)\n"
"and write it to OUT (default stdout) in the other format.  The input is\n"
"checked completely before anything is written, so a bad trace never\n"
"leaves a partial output behind.\n"
"\n"
"Options:\n"
"  --to binary|text   output format (default binary)\n"
"  -o, --output OUT   output file, '-' for stdout; a binary trace is\n"
"                     never written to a terminal\n"
"  --tolerant         drop returns with an empty stack and close pending\n"
"                     calls at the end instead of failing\n"
"  -h, --help         this help\n"
"\n"
"EXAMPLES\n"
"  kcc trace convert -o trace.bin trace.txt\n"
"  kcc trace convert --to text trace.bin | head\n"
"  some-tracer | kcc trace convert --tolerant -o trace.bin -\n");
}

enum {
	OPT_TO = 256,
	OPT_TOLERANT,
};

static int cmd_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, OPT_TO },
		{ "output", required_argument, NULL, 'o' },
		{ "tolerant", no_argument, NULL, OPT_TOLERANT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in, *outpath = "-", *outname;
	bool text = false, tolerant = false, to_stdout, regular = false;
	FILE *out = NULL;
	struct stat sb;
	struct trace t;
	int ch, ret, status = KCC_EXIT_ERROR;

	while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_TO:
			if (!strcmp(optarg, "text"))
				text = true;
			else if (!strcmp(optarg, "binary"))
				text = false;
			else
				return usage_error(CMD_CONVERT, "bad --to '%s': expected 'binary' or 'text'",
						   optarg);
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_TOLERANT:
			tolerant = true;
			break;
		case 'h':
			trace_usage(stdout);
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD_CONVERT, ch, argv);
		}
	}
	ret = usage_one_operand(CMD_CONVERT, argc, argv, "input trace", &in);
	if (ret)
		return ret;
	to_stdout = !strcmp(outpath, "-");
	outname = to_stdout ? "<stdout>" : outpath;
	if (!text && to_stdout && isatty(STDOUT_FILENO))
		return usage_error(CMD_CONVERT,
				   "refusing to write a binary trace to a terminal (use -o FILE or a redirection)");

	if (trace__init(&t)) {
		fprintf(stderr, "kcc: out of memory\n");
		return KCC_EXIT_ERROR;
	}
	/* All of the input first: a bad trace must not clobber OUT. */
	if (trace__read(&t, in, tolerant))
		goto cleanup;

	if (to_stdout) {
		out = stdout;
	} else {
		out = fopen(outpath, "w");
		if (!out) {
			fprintf(stderr, "kcc: %s: %s\n", outname,
				strerror(errno));
			goto cleanup;
		}
		setvbuf(out, NULL, _IOFBF, 1 << 20);
		/* Only a regular file's partial output is ours to remove. */
		regular = !fstat(fileno(out), &sb) && S_ISREG(sb.st_mode);
	}
	errno = 0;
	ret = text ? trace__write_text(&t, out) : trace__write_binary(&t, out);
	if (!to_stdout && fclose(out) && !ret)
		ret = -errno;
	if (ret) {
		fprintf(stderr, "kcc: %s: write error: %s\n", outname,
			strerror(-ret));
		if (regular)
			unlink(outpath);
		goto cleanup;
	}
	status = KCC_EXIT_OK;
cleanup:
	trace__exit(&t);
	return status;
}

int cmd_trace(int argc, char **argv)
{
	if (argc < 2)
		return usage_error(CMD, "which trace command? (convert)");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		trace_usage(stdout);
		return KCC_EXIT_OK;
	}
	if (!strcmp(argv[1], "convert"))
		return cmd_convert(argc - 1, argv + 1);
	return usage_error(CMD, "'%s' is not a trace command (convert)",
			   argv[1]);
}
