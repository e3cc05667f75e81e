// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-watch.c - kcc watch: exact counts of watched k-contexts on a
 * trace, in an array numbered by preferential path profiling.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "trace_file.h"
#include "watch.h"

#define CMD "kcc watch"

static void watch_usage(void)
{
	printf(
"usage: kcc watch -w FILE [options] TRACE\n"
"\n"
"Count the k-contexts listed in the watch FILE exactly on TRACE: every\n"
"activation whose call stack ends with a watched context counts once for\n"
"it, as in kcc ccf.  The contexts are numbered compactly (preferential\n"
"path profiling), so the counts live in an array of about one counter a\n"
"context; a context outside FILE is never counted as one of it.\n"
"\n"
"FILE: one context a line, routines outermost first separated by ';'\n"
"(at most 8 call edges), '#' comments; kcc report --export-watch writes\n"
"one.  TRACE is a text or binary trace, '-' for stdin.\n"
"\n"
"Options:\n"
"  -w, --watch FILE     the watched contexts\n"
"  --tolerant           ignore returns with an empty stack and close\n"
"                       pending calls at the end, with a warning\n"
"  -h, --help           this help\n"
"\n"
"Output: '<activations>TAB<path>' per context in FILE order, then\n"
"'# contexts=N numbers=R delta=R/N' and '# calls=C watched=W\n"
"residual=U aliases=A': W counts (call, watched context) pairs, U the\n"
"calls none of whose contexts is watched, A the numbers that fell in the\n"
"range for a context outside FILE and were refused.\n"
"\n"
"EXAMPLES\n"
"  kcc ccf -k 2 trace.txt | sort -rn | head -20 | cut -f2 > hot.watch\n"
"  kcc watch -w hot.watch trace.txt\n");
}

enum { OPT_TOLERANT = 256 };

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "watch", required_argument, NULL, 'w' },
		{ "tolerant", no_argument, NULL, OPT_TOLERANT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *file = NULL, *path;
	struct watch_counts wc = { 0 };
	bool tolerant = false;
	struct watch w;
	struct trace t;
	int ch, ret;

	while ((ch = getopt_long(argc, argv, ":w:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'w':
			file = optarg;
			break;
		case OPT_TOLERANT:
			tolerant = true;
			break;
		case 'h':
			watch_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, ch, argv);
		}
	}
	if (!file)
		return usage_error(CMD, "-w FILE is required");
	ret = usage_one_operand(CMD, argc, argv, "trace file", &path);
	if (ret)
		return ret;
	if (trace__init(&t)) {
		fprintf(stderr, "kcc: out of memory\n");
		return KCC_EXIT_ERROR;
	}
	ret = watch__read(&w, file);
	if (!ret)
		ret = trace__read(&t, path, tolerant);
	if (!ret)
		ret = watch__resolve(&w, &t.syms);
	if (!ret)
		ret = watch__build(&w);
	if (!ret) {
		ret = watch__count_trace(&w, &t, &wc);
		if (ret)
			fprintf(stderr, "kcc: out of memory\n");
	}
	if (!ret)
		watch__print(&w, &wc, stdout);
	free(wc.counts);
	watch__exit(&w);
	trace__exit(&t);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
