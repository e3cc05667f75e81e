// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-report.c - kcc report: k-contexts of a profile, with symbols.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "debuginfod.h"
#include "report_fmt.h"
#include "watch.h"

#define CMD "kcc report"

static void report_usage(void)
{
	printf(
"usage: kcc report [options] [PROFILE]\n"
"\n"
"Print the k-calling-context forest of PROFILE (default kcc.data; a\n"
"profile from kccread or kcc record, or a bare /dev/kcc stream): which\n"
"short call paths (k-contexts) ran and caused the sampled events, with\n"
"routine names.  One forest per process (command name) unless told.\n"
"\n"
"Options:\n"
"  -i, --input FILE     the profile (or give it as the operand)\n"
"  -k, --k K            contexts of at most K call edges (default: the\n"
"                       recorded k; at most the recorded k)\n"
"  --sort METRIC        misses (the sampled event, default), calls,\n"
"                       samples, or a metric name of the profile\n"
"  --percent-limit P    hide contexts below P%% of the total\n"
"  --routine NAME       the tree of NAME: every k-context leading to it\n"
"  --similar X          x%%-similar view: contexts with at least X%% of\n"
"                       their routine's count, as trees\n"
"  --hot PHI            hot contexts: count >= PHI * total (0 < PHI <= 1)\n"
"  --ci                 a column of the 95%% interval of calls, +-H, where\n"
"                       calls are estimated (a calls counter or event);\n"
"                       '-' where calls are not an estimate\n"
"  --srcline            file:line of each routine (needs the binaries\n"
"                       or their debuginfo)\n"
"  --buildid-dir DIR    the build-id cache for objects recorded without\n"
"                       symbols (--build-ids) and not at their path:\n"
"                       DIR/.build-id/xx/.../elf, as perf buildid-cache\n"
"                       fills it (default ~/.debug, '' for none)\n"
"  --debuginfod[=URLS]  fetch the debuginfo of objects not found here by\n"
"                       build-id from URLS (default: DEBUGINFOD_URLS,\n"
"                       which alone turns it on too)\n"
"  --format FMT         text (default), folded, json, pprof, svg\n"
"  --stdio              the text format (perf's habit; the default)\n"
"  -o FILE              write to FILE instead of stdout\n"
"  --pid PID[,PID...]   only these processes\n"
"  --tid TID[,TID...]   only these threads\n"
"  --comm NAME[,NAME..] only threads or processes of these names\n"
"  --dso OBJ[,OBJ...]   only routines of these objects (base names or\n"
"                       paths) and their callers\n"
"  --per-thread         one forest per thread\n"
"  --all                one forest for everything selected\n"
"  --per-cgroup         one forest per cgroup v2 (system-wide profiles\n"
"                       name each task's cgroup; pprof labels it)\n"
"  --max-nodes N        cap on k-CCF nodes per forest\n"
"  --export-watch FILE  with --hot or --routine: write the contexts of the\n"
"                       view to FILE as a watch file (kcc watch), one\n"
"                       'outermost;...;callee' a line, contexts of more\n"
"                       than 8 call edges left out\n"
"  --watched            only the watched contexts (kcc record --watch):\n"
"                       their exact counts and the residual\n"
"  -h, --help           this help\n"
"\n"
"A profile recorded with kcc record --watch also has exact counts of the\n"
"watched contexts, from kcc.ko's arrays: the text report ends with them,\n"
"one '<calls>TAB<events>TAB<samples>TAB<context>' line each in watch-file\n"
"order (every activation or sample whose stack ends with the context,\n"
"summed over all tasks), then '# total:' and '# residual:' lines (what\n"
"no watched context took).\n"
"\n"
"Text: one line per k-context, sorted by METRIC, with its share of the\n"
"total and every counter; counts are exclusive (activations whose\n"
"k-context is exactly that path), so they add up to the total.  The\n"
"header names the source and the samples dropped; calls are shown as\n"
"'-' when no burst was replayed (frame-pointer source).\n"
"\n"
"EXAMPLES\n"
"  kcc report                              top k-contexts of kcc.data\n"
"  kcc report --routine memcpy --k 2 p.kcc every 2-context of memcpy\n"
"  kcc report --format folded p.kcc | flamegraph.pl > f.svg\n"
"  kcc report --format pprof -o p.pb.gz p.kcc && go tool pprof -top p.pb.gz\n"
"  kcc report --format svg -o flame.svg p.kcc\n");
}

/* --watched: the watched contexts alone. */
static int report_watched(const struct profile *p, const char *outpath)
{
	FILE *out = outpath ? fopen(outpath, "w") : stdout;
	int ret;

	if (!out) {
		perror(outpath);
		return -errno;
	}
	ret = watch__report(p, out);
	if (ret == -ENOENT)
		fprintf(stderr, "kcc: the profile has no watched contexts (kcc record --watch)\n");
	if (out != stdout && fclose(out) && !ret)
		ret = -EIO;
	return ret;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * --export-watch: the kept contexts of every group, each once, sorted.
 * A path of more than 8 call edges cannot be watched and is counted
 * out loud.
 */
static int export_watch(const struct report *r, const char *file)
{
	size_t n = 0, cap = 0, i, skipped = 0, written = 0;
	char **paths = NULL;
	uint32_t gi, v;
	FILE *out;
	int ret = 0;

	for (gi = 0; gi < r->nr_groups && !ret; gi++) {
		const struct report_grp *g = &r->groups[gi];

		for (v = 0; v < g->kccf.f.count && !ret; v++) {
			struct sbuf sb = { 0 };

			if (!g->keep[v])
				continue;
			if (n == cap) {
				char **np;

				cap = cap ? 2 * cap : 256;
				np = realloc(paths, cap * sizeof(*np));
				if (!np) {
					ret = -ENOMEM;
					break;
				}
				paths = np;
			}
			ret = report__path(r, g, v, &sb);
			if (!ret)
				paths[n++] = (char *)sb.p;
			else
				sbuf__exit(&sb);
		}
	}
	out = ret ? NULL : fopen(file, "w");
	if (!ret && !out) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", file, strerror(errno));
	}
	if (out) {
		if (n)
			qsort(paths, n, sizeof(*paths), str_cmp);
		fprintf(out, "# kcc watch file: %s of %s\n",
			r->o.routine ? "--routine" : "--hot", r->o.name);
		for (i = 0; i < n && !ret; i++) {
			if (i && !strcmp(paths[i], paths[i - 1]))
				continue;
			ret = watch__put(out, paths[i]);
			if (ret == -EINVAL) {
				skipped++;
				ret = 0;
			} else if (!ret) {
				written++;
			}
		}
		if (fclose(out) && !ret)
			ret = -EIO;
		if (ret)
			fprintf(stderr, "kcc: %s: write error\n", file);
		else if (skipped)
			fprintf(stderr, "kcc: %s: %zu contexts of more than 8 call edges left out\n",
				file, skipped);
		if (!ret && !written)
			fprintf(stderr, "kcc: %s: warning: the view is empty, no context written\n",
				file);
	}
	if (ret == -ENOMEM)
		fprintf(stderr, "kcc: out of memory\n");
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return ret;
}

enum {
	OPT_K = 256, OPT_SORT, OPT_PERCENT, OPT_ROUTINE, OPT_SIMILAR, OPT_HOT,
	OPT_SRCLINE, OPT_FORMAT, OPT_PID, OPT_TID, OPT_COMM, OPT_PER_THREAD,
	OPT_ALL, OPT_MAX_NODES, OPT_STDIO, OPT_DEBUGINFOD, OPT_DSO,
	OPT_BUILDID_DIR, OPT_PER_CGROUP,
	OPT_EXPORT_WATCH, OPT_WATCHED, OPT_CI,
};

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "k", required_argument, NULL, OPT_K },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT },
		{ "routine", required_argument, NULL, OPT_ROUTINE },
		{ "dso", required_argument, NULL, OPT_DSO },
		{ "similar", required_argument, NULL, OPT_SIMILAR },
		{ "hot", required_argument, NULL, OPT_HOT },
		{ "srcline", no_argument, NULL, OPT_SRCLINE },
		{ "ci", no_argument, NULL, OPT_CI },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "max-nodes", required_argument, NULL, OPT_MAX_NODES },
		{ "export-watch", required_argument, NULL, OPT_EXPORT_WATCH },
		{ "watched", no_argument, NULL, OPT_WATCHED },
		{ "input", required_argument, NULL, 'i' },
		{ "stdio", no_argument, NULL, OPT_STDIO },
		{ "debuginfod", optional_argument, NULL, OPT_DEBUGINFOD },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "per-cgroup", no_argument, NULL, OPT_PER_CGROUP },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const fmts[] = {
		[FMT_TEXT] = "text", [FMT_FOLDED] = "folded", [FMT_JSON] = "json",
		[FMT_PPROF] = "pprof", [FMT_SVG] = "svg",
	};
	struct report_opts o = { .sort = -1 };
	const char *path = "kcc.data", *outpath = NULL, *sort = NULL;
	const char *input = NULL, *urls, *export = NULL;
	bool stdio = false, format_set = false, watched = false;
	struct profile p;
	struct report r;
	FILE *out = stdout;
	double x;
	int c, ret, i;

	while ((c = getopt_long(argc, argv, ":o:i:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
		case OPT_K:
			if (!strcmp(optarg, "inf")) {
				o.k = KCC_K_INF;
			} else if (parse_u32(optarg, &o.k) || o.k > KCC_K_MAX) {
				return usage_error(CMD, "bad --k '%s': expected 0..%d or 'inf'",
						   optarg, KCC_K_MAX);
			}
			o.k_set = true;
			break;
		case OPT_SORT:
			sort = optarg;
			break;
		case OPT_PERCENT:
			if (parse_double(optarg, &x) || x < 0 || x > 100)
				return usage_error(CMD, "bad --percent-limit '%s': expected 0..100",
						   optarg);
			o.percent_limit = x;
			break;
		case OPT_ROUTINE:
			o.routine = optarg;
			break;
		case OPT_DSO:
			o.dso = optarg;
			break;
		case OPT_SIMILAR:
			if (parse_double(optarg, &x) || !(x > 0) || x > 100)
				return usage_error(CMD, "bad --similar '%s': expected a percentage in (0, 100]",
						   optarg);
			o.similar = x;
			break;
		case OPT_HOT:
			if (parse_double(optarg, &x) || !(x > 0) || x > 1)
				return usage_error(CMD, "bad --hot '%s': expected a fraction in (0, 1]",
						   optarg);
			o.hot = x;
			break;
		case OPT_SRCLINE:
			o.srcline = true;
			break;
		case OPT_CI:
			o.ci = true;
			break;
		case OPT_FORMAT:
			for (i = 0; i < 5; i++)
				if (!strcmp(optarg, fmts[i]))
					break;
			if (i == 5)
				return usage_error(CMD, "bad --format '%s': expected text, folded, json, pprof or svg",
						   optarg);
			o.format = i;
			format_set = true;
			break;
		case OPT_PID:
			if (report_ids__parse(&o.pids, optarg))
				return usage_error(CMD, "bad --pid '%s': expected PID[,PID...]",
						   optarg);
			break;
		case OPT_TID:
			if (report_ids__parse(&o.tids, optarg))
				return usage_error(CMD, "bad --tid '%s': expected TID[,TID...]",
						   optarg);
			break;
		case OPT_COMM:
			o.comm = optarg;
			break;
		case OPT_PER_THREAD:
			o.group = GROUP_THREAD;
			break;
		case OPT_ALL:
			o.group = GROUP_ALL;
			break;
		case OPT_MAX_NODES:
			if (parse_u32(optarg, &o.max_nodes) || !o.max_nodes ||
			    o.max_nodes >= KCC_NIL - 3)
				return usage_error(CMD, "bad --max-nodes '%s'", optarg);
			break;
		case OPT_WATCHED:
			watched = true;
			break;
		case OPT_EXPORT_WATCH:
			export = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		case OPT_STDIO:
			stdio = true;
			break;
		case OPT_BUILDID_DIR:
			profile__set_buildid_dir(optarg);
			break;
		case OPT_PER_CGROUP:
			o.group = GROUP_CGROUP;
			break;
		case OPT_DEBUGINFOD:
			/*
			 * The variable libdebuginfod, gdb and perf read.  The
			 * value is after '=' in this argument (optional
			 * argument), read there to keep optarg non-NULL.
			 */
			urls = strchr(argv[optind - 1], '=');
			if (urls && urls[1])
				setenv("DEBUGINFOD_URLS", urls + 1, 1);
			else if (!debuginfod__enabled())
				return usage_error(CMD, "--debuginfod: give the servers (--debuginfod=URLS) or set DEBUGINFOD_URLS");
			break;
		case 'h':
			report_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (input && optind < argc)
		return usage_error(CMD, "-i %s and '%s': give the profile once", input,
				   argv[optind]);
	if (input)
		path = input;
	else if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	/* perf's --stdio: the text report, which is kcc's only interface. */
	if (stdio && format_set && o.format != FMT_TEXT)
		return usage_error(CMD, "--stdio is the text format: not with --format %s",
				   fmts[o.format]);
	if ((o.similar > 0) + (o.hot > 0) + (o.routine != NULL) > 1)
		return usage_error(CMD, "--routine, --similar and --hot are different views: pick one");
	if (export && !(o.hot > 0) && !o.routine)
		return usage_error(CMD, "--export-watch needs a view to export: --hot PHI or --routine NAME");
	if ((o.format == FMT_PPROF || o.format == FMT_SVG) && !outpath &&
	    isatty(1) && o.format == FMT_PPROF)
		return usage_error(CMD, "pprof output is binary: use -o FILE or a pipe");
	o.name = strcmp(path, "-") ? path : "<stdin>";

	ret = profile__read(&p, path);
	if (ret) {
		profile__exit(&p);
		return KCC_EXIT_ERROR;
	}
	if (sort) {
		const struct stream *s = &p.runs[0].s;

		if (!strcmp(sort, "misses") || !strcmp(sort, "events"))
			o.sort = KCC_CTR_EVENTS;
		else if (!strcmp(sort, "calls"))
			o.sort = KCC_CTR_CALLS;
		else if (!strcmp(sort, "samples"))
			o.sort = stream__metric(s, "samples");
		else
			o.sort = stream__metric(s, sort);
		if (o.sort < 0 || (uint32_t)o.sort >= s->nr_ctrs) {
			profile__exit(&p);
			return usage_error(CMD, "bad --sort '%s': this profile has no such metric",
					   sort);
		}
		if (o.sort == KCC_CTR_CALLS &&
		    !(s->hdr.flags & KCC_HDR_CALLS_VALID)) {
			fprintf(stderr, "kcc: %s: calls were not measured (no bursts replayed): cannot sort by calls\n",
				o.name);
			profile__exit(&p);
			return KCC_EXIT_ERROR;
		}
	}

	if (watched) {
		ret = report_watched(&p, outpath);
		profile__exit(&p);
		return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
	}
	ret = report__build(&r, &p, &o);
	if (!ret && export)
		ret = export_watch(&r, export);
	if (!ret) {
		if (outpath) {
			out = fopen(outpath, "w");
			if (!out) {
				perror(outpath);
				ret = -1;
			}
		}
		if (!ret) {
			ret = report__print(&r, out);
			/* The watched contexts close the text report. */
			if (!ret && o.format == FMT_TEXT) {
				int wr = watch__report(&p, out);

				if (wr && wr != -ENOENT)
					ret = wr;
			}
			if (ret && ret != -ENOENT)
				fprintf(stderr, "kcc: %s: %s\n", o.name, strerror(-ret));
			if (out != stdout && fclose(out) && !ret) {
				fprintf(stderr, "kcc: %s: write error\n", outpath);
				ret = -EIO;
			}
		}
	}
	report__exit(&r);
	profile__exit(&p);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
