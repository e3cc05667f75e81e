// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-valence.c - kcc valence: the Valence encoding table of an
 * executable (annotate), and the decoding of a check run's samples
 * against the program's true stacks (check).  See Documentation/valence.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "valence_prog.h"

#define CMD "kcc valence"

static void valence_usage(void)
{
	printf(
"usage: kcc valence annotate [-o TABLE] PROGRAM\n"
"       kcc valence check TABLE CHECKFILE\n"
"\n"
"annotate: build the call graph of PROGRAM from its direct calls and its\n"
"symbol table, give it Valence levels, edge and cyclic codes, and write\n"
"the encoding table that kcc_valence_rt.o applies (KCC_VALENCE_TABLE).\n"
"\n"
"check: decode every sample of a run with KCC_VALENCE_CHECK=CHECKFILE\n"
"and compare it with the thread's true stack at that sample; print\n"
"exactness and encoding lengths (Valence and PCCE, in 64-bit words).\n"
"Exit status 1 when a sample decoded to a wrong context.\n"
"\n"
"Options:\n"
"  -o FILE     table file (default: PROGRAM.valence)\n"
"  -h, --help  this help\n"
"\n"
"EXAMPLES\n"
"  cc -O2 -finstrument-functions -o prog prog.c kcc_valence_rt.o\n"
"  kcc valence annotate ./prog\n"
"  KCC_VALENCE_TABLE=prog.valence KCC_VALENCE_CHECK=prog.chk ./prog\n"
"  kcc valence check prog.valence prog.chk\n");
}

static int valence_annotate(const char *prog, const char *outpath)
{
	struct valence_prog p;
	char err[256], def[4096];
	FILE *f;
	int ret;

	ret = valence_prog__from_elf(&p, prog, err, sizeof(err));
	if (ret) {
		fprintf(stderr, CMD ": %s\n", err);
		return KCC_EXIT_ERROR;
	}
	if (!outpath) {
		snprintf(def, sizeof(def), "%s.valence", prog);
		outpath = def;
	}
	f = fopen(outpath, "w");
	if (!f) {
		fprintf(stderr, CMD ": %s: %s\n", outpath, strerror(errno));
		valence_prog__exit(&p);
		return KCC_EXIT_ERROR;
	}
	ret = valence_prog__write(&p, f);
	if (fclose(f) || ret) {
		fprintf(stderr, CMD ": %s: write error\n", outpath);
		valence_prog__exit(&p);
		return KCC_EXIT_ERROR;
	}
	printf("%s: %u routines, %u direct call sites (%u cyclic), %u other calls escaped at run time\n",
	       outpath, p.nr_nodes, p.v.nr_edges, p.v.nr_cyc, p.indirect);
	printf("%s: %u SCCs, highest level %u bits (%u acyclic words), cyclic codes of %u bits\n",
	       outpath, p.v.nr_scc, p.v.max_level, p.v.acyc_words,
	       p.v.rec_len);
	valence_prog__exit(&p);
	return KCC_EXIT_OK;
}

static int valence_check(const char *table, const char *check)
{
	struct valence_check_stats st;
	struct valence_prog p;
	char err[256];
	FILE *f;
	int ret;

	f = fopen(table, "r");
	if (!f) {
		fprintf(stderr, CMD ": %s: %s\n", table, strerror(errno));
		return KCC_EXIT_ERROR;
	}
	ret = valence_prog__read(&p, f, err, sizeof(err));
	fclose(f);
	if (ret) {
		fprintf(stderr, CMD ": %s: %s\n", table, err);
		return KCC_EXIT_ERROR;
	}
	f = fopen(check, "r");
	if (!f) {
		fprintf(stderr, CMD ": %s: %s\n", check, strerror(errno));
		valence_prog__exit(&p);
		return KCC_EXIT_ERROR;
	}
	ret = valence_prog__check(&p, f, &st, stderr);
	fclose(f);
	valence_prog__exit(&p);
	if (ret) {
		fprintf(stderr, CMD ": %s: not a check file of this table\n",
			check);
		return KCC_EXIT_ERROR;
	}
	printf("samples %llu exact %llu wrong %llu torn %llu overflow %llu undecodable %llu\n",
	       (unsigned long long)st.samples, (unsigned long long)st.exact,
	       (unsigned long long)st.wrong, (unsigned long long)st.torn,
	       (unsigned long long)st.overflow,
	       (unsigned long long)st.undecodable);
	printf("escaped frames %llu; words per sample: valence %.2f (max %u), pcce %.2f\n",
	       (unsigned long long)st.escaped_frames,
	       st.exact ? (double)st.words / (double)st.exact : 0.0,
	       st.max_words,
	       st.exact ? (double)st.pcce_words / (double)st.exact : 0.0);
	return st.wrong || st.undecodable || !st.samples ? KCC_EXIT_ERROR :
		KCC_EXIT_OK;
}

int cmd_valence(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outpath = NULL;
	int c;

	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			valence_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (optind >= argc)
		return usage_error(CMD, "no subcommand (annotate, check)");
	if (!strcmp(argv[optind], "annotate")) {
		if (argc - optind != 2)
			return usage_error(CMD, "annotate takes one PROGRAM");
		return valence_annotate(argv[optind + 1], outpath);
	}
	if (!strcmp(argv[optind], "check")) {
		if (argc - optind != 3)
			return usage_error(CMD, "check takes TABLE and CHECKFILE");
		return valence_check(argv[optind + 1], argv[optind + 2]);
	}
	return usage_error(CMD, "unknown subcommand '%s'", argv[optind]);
}
