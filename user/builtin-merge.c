// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-merge.c - kcc merge: several profiles into one.
 *
 * Each input run is kept as a run of the output, with its own maps and
 * symbol copies (addresses only mean something inside their run).  The
 * forests join when kcc report relabels them: a k-SF join is a k-SF, and
 * inv_k of the join is the sum of the inputs' k-CCFs, so merging is
 * associative and commutative in what any report shows.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "profile.h"

#define CMD "kcc merge"

static void merge_usage(void)
{
	printf(
"usage: kcc merge [--force] -o OUTPUT PROFILE...\n"
"\n"
"Combine profiles (or bare streams) of runs of the same k into one\n"
"profile: reports of OUTPUT count what all inputs counted.  Profiles of\n"
"different events are refused: their counts do not add up.\n"
"\n"
"Options:\n"
"  -o FILE     the merged profile ('-': stdout, not a terminal)\n"
"  --force     merge profiles of different events all the same (the\n"
"              first input's names are kept)\n"
"  -h, --help  this help\n"
"\n"
"EXAMPLES\n"
"  kcc merge -o all.kcc run1.kcc run2.kcc run3.kcc\n"
"  kcc report all.kcc\n");
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	bool force = false;
	char why[128];
	struct profile acc, in;
	FILE *out;
	int c, i, ret = 0;

	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			merge_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (!outpath)
		return usage_error(CMD, "-o OUTPUT is required");
	if (optind >= argc)
		return usage_error(CMD, "no input profiles");
	if (!strcmp(outpath, "-") && isatty(1))
		return usage_error(CMD, "refusing to write a binary profile to a terminal");

	profile__init(&acc);
	for (i = optind; i < argc && !ret; i++) {
		ret = profile__read(&in, argv[i]);
		if (!ret) {
			/* Symbols of a bare stream are read now, from its maps. */
			if (in.bare && profile__add_objects(&in, 0) < 0)
				ret = -ENOMEM;
			if (!ret && !force && acc.nr_runs &&
			    profile__same_events(&acc, &in, why, sizeof(why))) {
				fprintf(stderr, "kcc: %s: other events than %s (%s): use --force to merge them all the same\n",
					argv[i], argv[optind], why);
				ret = -EINVAL;
			}
			if (!ret)
				ret = profile__append(&acc, &in, argv[i]);
		}
		profile__exit(&in);
	}
	if (!ret) {
		out = strcmp(outpath, "-") ? fopen(outpath, "w") : stdout;
		if (!out) {
			perror(outpath);
			ret = -1;
		} else {
			ret = profile__write(&acc, out);
			if ((out != stdout && fclose(out)) || ret) {
				fprintf(stderr, "kcc: %s: write error\n", outpath);
				ret = -1;
			}
		}
	}
	profile__exit(&acc);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
