// SPDX-License-Identifier: GPL-2.0
/*
 * kccread.c - read the kcc stream (/dev/kcc or a saved stream), add what
 * symbolization needs (each mapped object's build-id and symbol table,
 * read now, while the files are there) and write a profile file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "profile.h"
#include "symbols.h"

#define EXIT_USAGE	2

/*
 * With --symfs DIR, read each mapped object from DIR/<its path> when
 * there is such a file (a copy of the machine's files, e.g. a guest's);
 * the profile keeps the mapped path.  The copy is another file: its
 * inode is not compared.  Returns how many objects were found there,
 * or -ENOMEM.
 */
static int add_symfs_objects(struct profile *p, const char *symfs)
{
	struct stream *s = &p->runs[0].s;
	int found = 0, ret;
	uint32_t i;

	for (i = 0; i < s->nr_maps; i++) {
		const struct stream_map *m = &s->maps[i];
		struct symobj so;
		struct stat st;
		char *path;

		if (profile__obj(p, 0, m) || m->path[0] != '/')
			continue;
		if (asprintf(&path, "%s%s", symfs, m->path) < 0)
			return -ENOMEM;
		memset(&so, 0, sizeof(so));
		if (stat(path, &st) || !S_ISREG(st.st_mode) ||
		    symobj__load(&so, path)) {
			symobj__exit(&so);
			free(path);
			continue;
		}
		free(path);
		free(so.path);
		so.path = strdup(m->path);
		if (!so.path) {
			symobj__exit(&so);
			return -ENOMEM;
		}
		ret = profile__add_object(p, 0, m->ino, 0, &so);
		if (ret) {
			symobj__exit(&so);
			return ret;
		}
		found++;
	}
	return found;
}

static void usage(FILE *out)
{
	fprintf(out,
"usage: kccread [options] [DEVICE|STREAM]\n"
"\n"
"Read a snapshot of a kcc session from DEVICE (default /dev/kcc), or a\n"
"stream saved earlier, check it, add the build-id and a copy of the\n"
"symbol table of every mapped object (Documentation/profile-format.rst)\n"
"and write the profile to standard output.  The session read is the one\n"
"kcc.ko started at load (autostart=1) unless --session names another\n"
"(ids: /sys/class/misc/kcc/sessions).\n"
"\n"
"Options:\n"
"  -o FILE         write to FILE instead of standard output\n"
"  --session ID    read session ID (another user's needs CAP_PERFMON)\n"
"  --raw           write the stream as read, without symbols\n"
"  --symfs DIR     read each mapped object from DIR/<path> first (the\n"
"                  files of another machine, e.g. a guest's)\n"
"  --per-process   one forest per process image, its threads' folded\n"
"                  into one (kcc report's default view, in fewer bytes)\n"
"  --build-ids     record objects by path and build-id without their\n"
"                  symbol tables (perf's way: a smaller profile, named\n"
"                  where kcc report finds the objects, a build-id cache\n"
"                  or debuginfod); the vDSO and objects without a\n"
"                  build-id keep theirs\n"
"  -q, --quiet     no progress or warnings on stderr\n"
"  -h, --help      this help\n"
"  -V, --version   print the version and the ABI this kccread speaks\n"
"\n"
"Exit status: 0 success, 1 error (no module, permissions, ABI mismatch,\n"
"malformed stream), 2 usage error.\n"
"\n"
"EXAMPLES\n"
"  kccread > app.kcc && kcc report app.kcc\n"
"  kccread -o app.kcc /dev/kcc\n"
"  kccread --session 3 -o other.kcc\n"
"  kccread saved.stream > saved.kcc\n");
}

static int usage_err(const char *msg, const char *arg)
{
	fprintf(stderr, "kccread: %s%s%s\nTry 'kccread --help' for more information.\n",
		msg, arg ? " " : "", arg ? arg : "");
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "raw", no_argument, NULL, 'r' },
		{ "symfs", required_argument, NULL, 's' },
		{ "build-ids", no_argument, NULL, 'B' },
		{ "per-process", no_argument, NULL, 'P' },
		{ "session", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = KCC_DEVICE, *outpath = NULL, *symfs = NULL;
	struct kcc_attach at = { .size = sizeof(at) };
	bool session = false;
	char *end;
	bool raw = false, quiet = false, by_id = false, per_proc = false;
	bool progress, is_dev;
	struct profile p;
	struct stat st;
	FILE *out = stdout;
	void *buf = NULL;
	size_t len = 0;
	int c, ret, fold;

	kcc_progname = "kccread";
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qhV", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 'r':
			raw = true;
			break;
		case 's':
			symfs = optarg;
			break;
		case 'B':
			by_id = true;
			break;
		case 'P':
			per_proc = true;
			break;
		case 'S':
			errno = 0;
			at.session_id = strtoul(optarg, &end, 0);
			if (errno || !*optarg || *end || !at.session_id ||
			    at.session_id != strtoull(optarg, NULL, 0))
				return usage_err("--session: not a session id:", optarg);
			session = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kccread %s (kcc ABI %d.%d, stream %d, profile %d)\n",
			       KCC_VERSION, KCC_ABI_MAJOR, KCC_ABI_MINOR, KCC_STREAM_VERSION,
			       PROF_VERSION);
			return 0;
		case ':':
			return usage_err("option needs a value:", argv[optind - 1]);
		default:
			return usage_err("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		in = argv[optind++];
	if (optind < argc)
		return usage_err("unexpected argument", argv[optind]);
	if (!outpath && isatty(1))
		return usage_err("refusing to write a binary profile to a terminal: redirect it or use -o FILE", NULL);
	progress = !quiet && isatty(2);
	if (symfs && (stat(symfs, &st) || !S_ISDIR(st.st_mode))) {
		fprintf(stderr, "kccread: --symfs %s: not a directory\n", symfs);
		return 1;
	}

	is_dev = !stat(in, &st) && S_ISCHR(st.st_mode);
	if (session && !is_dev)
		return usage_err("--session needs a device, not", in);
	if (is_dev) {
		struct kcc_version v;
		int fd = kccdev__open(in, &v);

		if (fd < 0)
			return 1;
		if (session && ioctl(fd, KCC_IOC_ATTACH, &at)) {
			fprintf(stderr, "kccread: %s: session %u: %s%s\n", in,
				at.session_id, strerror(errno),
				errno == ENOTTY ? " (this kcc.ko has one session only)" :
				errno == ENOENT ? " (no such session: see /sys/class/misc/kcc/sessions)" :
				errno == EACCES ? " (another user's session: CAP_PERFMON needed)" : "");
			close(fd);
			return 1;
		}
		ret = kccdev__snapshot(fd, in, progress, &buf, &len);
		close(fd);
	} else {
		if (!strcmp(in, KCC_DEVICE) && access(in, F_OK)) {
			fprintf(stderr, "kccread: %s: %s: is the kcc module loaded? (modprobe kcc, or insmod kcc.ko)\n",
				in, strerror(errno));
			return 1;
		}
		ret = read_whole_file(in, STREAM_MAX_BYTES, progress, &buf, &len);
	}
	if (ret)
		return 1;

	profile__init(&p);
	p.by_build_id = by_id;
	if (len >= 8 && !memcmp(buf, PROF_MAGIC, 8)) {
		free(buf);
		fprintf(stderr, "kccread: %s: already a profile\n", in);
		return 1;
	}
	ret = profile__add_stream(&p, buf, len,
				  strcmp(in, "-") ? in : "<stdin>");
	if (ret)
		goto cleanup;
	fold = per_proc ? profile__fold_processes(&p, 0) : 0;
	if (fold)
		/* The profile is kept as it came: nothing is lost. */
		fprintf(stderr, "kccread: warning: --per-process: %s: one forest per thread kept\n",
			profile__fold_error(fold));
	/* Only a live snapshot is known to be of this machine, now. */
	if (!raw && is_dev) {
		ret = profile__info_snapshot(&p, NULL, argv, KCC_VERSION);
		if (ret)
			goto cleanup;
		/* The cgroups are this machine's, now. */
		ret = profile__add_cgroups(&p, 0);
		if (ret > 0 && !quiet)
			fprintf(stderr, "kccread: warning: %d cgroup%s could not be named\n",
				ret, ret == 1 ? "" : "s");
		ret = ret < 0 ? ret : 0;
		if (ret)
			goto cleanup;
	}
	if (!raw) {
		ret = symfs ? add_symfs_objects(&p, symfs) : 0;
		if (ret < 0)
			goto cleanup;
		ret = profile__add_objects(&p, 0);
		if (ret > 0 && !quiet)
			fprintf(stderr, "kccread: warning: %d mapped object%s could not be read: %s routines stay unnamed\n",
				ret, ret == 1 ? "" : "s", ret == 1 ? "its" : "their");
		ret = ret < 0 ? ret : 0;
		if (ret)
			goto cleanup;
	}
	if (outpath) {
		out = fopen(outpath, "w");
		if (!out) {
			fprintf(stderr, "kccread: %s: %s\n", outpath, strerror(errno));
			ret = -errno;
			goto cleanup;
		}
	}
	if (raw)
		fwrite(p.runs[0].raw, 1, p.runs[0].raw_len, out);
	else
		ret = profile__write(&p, out);
	if (fflush(out) || ferror(out) || ret) {
		fprintf(stderr, "kccread: %s: write error\n",
			outpath ? outpath : "<stdout>");
		ret = -EIO;
	}
	if (out != stdout)
		fclose(out);
	if (!ret && progress)
		fprintf(stderr, "kccread: %u tasks, %u maps, %u objects\n",
			p.runs[0].s.nr_tasks, p.runs[0].s.nr_maps, p.nr_objs);
cleanup:
	profile__exit(&p);
	return ret ? 1 : 0;
}
