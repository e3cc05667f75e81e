// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-record.c - kcc record: configure a /dev/kcc session, run or
 * attach, stop, and write the profile.
 *
 * With -- CMD the command is forked first and held on a pipe until the
 * session runs, so its first instructions are already sampled; its pid
 * is the target (threads and children follow, KCC_TARGET_PID).  The
 * profile is written the way kccread writes one.
 *
 * --trace FILE needs no module: it makes the stream a process running the
 * call trace FILE would give (stream__from_trace()), which is how the
 * whole userspace path is tested on machines without kcc.ko.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "cgroup.h"
#include "evspec.h"
#include "profile.h"
#include "trace_file.h"
#include "watch.h"
#include "valence_stream.h"

#define CMD "kcc record"

static void record_usage(void)
{
	printf(
"usage: kcc record [options] -- CMD [ARGS...]\n"
"       kcc record [options] -p PID | -a\n"
"       kcc record --trace TRACE [-k K] [--threads N] [-o FILE]\n"
"\n"
"Profile with kcc.ko: sample EVENT every PERIOD occurrences, replay the\n"
"calls around each sample into k-slab forests, then write the profile\n"
"(what kccread writes) to FILE, default kcc.data.\n"
"\n"
"Options:\n"
"  -e EVENT          as perf names it: cache-misses (default), cycles,\n"
"                    instructions, branch-misses, cpu-clock, ...; rNNNN (raw\n"
"                    config, hex); PMU/TERM,.../ (sysfs event_source PMUs:\n"
"                    cpu/event=0xc4,umask=0x20/, kcc_lbr/calls/); or a\n"
"                    libpfm4 name (BR_INST_RETIRED:NEAR_CALL)\n"
"  -c PERIOD         events per sample (default: the module's)\n"
"  --calls-event EVENT  a second event, retired calls, whose samples take\n"
"                    the branch records (LBR source): call counts at its\n"
"                    own period, unbiased by EVENT, which is then sampled\n"
"                    without records (kcc_lbr/calls/, BR_INST_RETIRED:NEAR_CALL)\n"
"  --calls-period N  calls per sample of --calls-event or --calls-hybrid\n"
"                    (default: the module's)\n"
"  --calls-hybrid EVENT  both: -e EVENT keeps its branch records and each\n"
"                    of its bursts counts exactly the calls it holds since\n"
"                    the thread's previous sample; the calls it misses wait\n"
"                    for the next burst of EVENT (retired calls, sampled at\n"
"                    --calls-period), which spreads them: exact where\n"
"                    samples are dense, unbiased where they are not (per\n"
"                    process: not with -a).  Default with the LBR source\n"
"                    for -p and a command, on the calls event named below,\n"
"                    unless -e EVENT is that event (kcc.ko ABI 1.9)\n"
"  --calls-counter EVENT  count retired calls beside -e EVENT and read the\n"
"                    count at each of its samples (LBR source): each burst\n"
"                    then adds exactly the calls since the thread's previous\n"
"                    sample (with -a a counter per CPU, taken off at every\n"
"                    context switch).  Default with the LBR source for -a\n"
"                    and where -e EVENT is the calls event: the PMU's own\n"
"                    calls event (kcc_lbr/calls/) or BR_INST_RETIRED:NEAR_CALL\n"
"                    where libpfm4 knows it; where none opens, the header\n"
"                    says the calls are the records replayed, not a count\n"
"  --no-calls-counter  replay every burst whole (calls seen in bursts)\n"
"  -F FREQ           samples per second of each thread (or CPU with -a),\n"
"                    1..100000, instead of -c: the kernel adjusts the\n"
"                    period, each sample charges the period it came at\n"
"  -k K              context length kept, 1..64 or inf (default 3)\n"
"  --source S        auto (default), lbr, fp or valence (a program built\n"
"                    with kcc_valence_rt.o: exact full contexts; -k inf)\n"
"  --valence-table F  the encoding table of kcc valence annotate (default:\n"
"                    $KCC_VALENCE_TABLE, else PROGRAM.valence)\n"
"  -p PID            attach to process PID until it exits or Ctrl-C\n"
"  -a                every task, until Ctrl-C or --duration\n"
"  -G, --cgroup CG   with -a: only the tasks of cgroup v2 CG and below\n"
"                    (a path relative to the cgroup2 mount, as perf -G,\n"
"                    or under it); the others' samples are counted, not\n"
"                    kept\n"
"  --duration SEC    stop after SEC seconds\n"
"  --stack-depth N   user frames walked per sample, 1..512 (default:\n"
"                    the module's stack_depth, 128; perf's is 127): each\n"
"                    frame is a read in the sample's interrupt, so a deep\n"
"                    walk costs handler time (Documentation/benchmark.rst)\n"
"  --burst-rr N      adaptive bursting: replay 1 in N bursts of seen contexts\n"
"  --device PATH     the device (default /dev/kcc)\n"
"  -o FILE           output profile ('-': stdout, not a terminal)\n"
"  --per-process     one forest per process image: its threads' forests\n"
"                    folded into one (a smaller profile; kcc report's\n"
"                    per-thread view then shows processes); not with\n"
"                    --watch\n"
"  --build-ids       objects by path and build-id, without their symbol\n"
"                    tables (perf's way: a smaller profile; kcc report\n"
"                    reads the symbols from the objects, a build-id cache\n"
"                    or debuginfod); the vDSO keeps its table\n"
"  --trace TRACE     no module: the stream of call trace TRACE\n"
"  --threads N       with --trace: spread top-level calls over N threads\n"
"  --stream          with --trace: write the bare stream /dev/kcc would give\n"
"  --join MODE       none (default), unique or longest: join the bursts\n"
"                    of one thread whose LBR windows overlap (samples\n"
"                    fewer branches apart than the LBR holds), so that\n"
"                    no call is counted twice (Documentation/stitching.rst)\n"
"  --watch FILE      also count the k-contexts of the watch FILE exactly,\n"
"                    in kcc.ko's arrays beside the forests (kcc report\n"
"                    shows them): 'a;b;c' lines, routines outermost first,\n"
"                    at most 8 call edges, as kcc report --export-watch\n"
"                    writes; routines are found by name in the target's\n"
"                    executable and libraries (with -- CMD: those mapped\n"
"                    when it reaches its entry point)\n"
"  -h, --help        this help\n"
"\n"
"EXAMPLES\n"
"  kcc record -- ./a.out input.txt && kcc report\n"
"  kcc record -e cycles -c 100000 -k 2 -p 1234 --duration 10\n"
"  kcc record -F 99 -a --duration 30 -o fleet.kcc\n"
"  kcc record --source lbr -e BR_INST_RETIRED:NEAR_CALL -c 10007 -- ./a.out\n"
"  kcc record --source lbr -e cache-misses --calls-event \\\n"
"             BR_INST_RETIRED:NEAR_CALL --calls-period 10007 -- ./a.out\n"
"  kcc record --trace t.txt -k 2 -o t.kcc && kcc report t.kcc\n"
"  kcc report --hot 0.01 --export-watch hot.w && \\\n"
"  kcc record --source lbr --watch hot.w -- ./a.out && kcc report --watched\n"
"  kcc record --source valence -e cpu-clock -- ./prog && kcc report -k 2\n");
}

/* --per-process; on failure the profile keeps its threads: lose nothing. */
static void record__fold(struct profile *p)
{
	int err = profile__fold_processes(p, 0);

	if (err)
		fprintf(stderr, "kcc: warning: --per-process: %s: one forest per thread kept\n",
			profile__fold_error(err));
}

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
	stop_now = 1;
}

enum {
	OPT_SOURCE = 256, OPT_DURATION, OPT_BURST_RR, OPT_DEVICE, OPT_TRACE,
	OPT_THREADS, OPT_STREAM, OPT_CALLS_EVENT, OPT_CALLS_PERIOD, OPT_WATCH,
	OPT_CALLS_COUNTER, OPT_NO_CALLS_COUNTER, OPT_CALLS_HYBRID,
	OPT_JOIN,
	OPT_VALENCE_TABLE, OPT_BUILD_IDS, OPT_PER_PROCESS, OPT_STACK_DEPTH,
};

struct record_opts {
	struct kcc_config cfg;
	const char *device;
	const char *output;
	const char *trace;
	uint32_t threads;
	uint32_t duration;
	bool stream;		/* --trace: the bare stream, as the device gives */
	bool build_ids;		/* --build-ids: objects without symbol tables */
	bool per_process;	/* --per-process: one forest per process image */
	const char *cgroup;	/* -G: the cgroup v2 of a system-wide session */
	int cgroup_fd;		/* its directory, open until the end */
	const char *watch_file;	/* --watch */
	struct watch watch;
	char **cmd;
	char **argv;		/* kcc record's own, for the profile's INFO */
	int exec_errno;		/* the command's execvp() failed so */
	bool no_counter;	/* --no-calls-counter */
	bool calls_default;	/* the calls counter is the default one */
	/* --source valence: the program, its table (read at start) */
	const char *vtable;
	char *vexe;
	struct valence_prog vprog;
};

int record__parse_event(const char *s, struct kcc_config *c)
{
	char err[EVSPEC_ERR_LEN];
	struct evspec ev;

	if (evspec__parse(&ev, s, NULL, err)) {
		fprintf(stderr, "kcc: %s\n", err);
		return -EINVAL;
	}
	c->event_type = ev.type;
	c->event_config = ev.config;
	c->event_config1 = ev.config1;
	c->event_config2 = ev.config2;
	c->flags |= KCC_CFG_EVENT;
	/* The name the stream's metric carries, cut to its field. */
	memset(c->event_name, 0, sizeof(c->event_name));
	memcpy(c->event_name, ev.name,
	       strnlen(ev.name, sizeof(c->event_name) - 1));
	return 0;
}

int record__parse_freq(const char *cmd, const char *s, struct kcc_config *c)
{
	uint32_t x;

	if (parse_u32(s, &x) || !x || x > KCC_FREQ_MAX) {
		usage_error(cmd, "bad -F '%s': expected 1..%d samples per second",
			    s, KCC_FREQ_MAX);
		return -EINVAL;
	}
	c->sample_period = x;
	c->flags |= KCC_CFG_FREQ;
	return 0;
}

/*
 * --calls-event: the second event, the one the bursts are taken at;
 * --calls-counter (@counter): the calls counted beside -e EVENT.
 */
static int parse_calls_event(const char *s, struct kcc_config *c,
			     bool counter, bool hybrid)
{
	char err[EVSPEC_ERR_LEN];
	struct evspec ev;

	if (evspec__parse(&ev, s, NULL, err)) {
		fprintf(stderr, "kcc: %s\n", err);
		return -EINVAL;
	}
	if (ev.config2) {
		fprintf(stderr, "kcc: --calls-%s '%s': config2 is not in the ABI for the calls event\n",
			counter ? "counter" : hybrid ? "hybrid" : "event", s);
		return -EINVAL;
	}
	c->calls_flags = KCC_CALLS_EVENT | (counter ? KCC_CALLS_COUNTER : 0) |
			 (hybrid ? KCC_CALLS_HYBRID : 0);
	c->calls_event_type = ev.type;
	c->calls_event_config = ev.config;
	c->calls_event_config1 = ev.config1;
	return 0;
}

static void record_clear_counter(struct kcc_config *c)
{
	c->calls_flags = 0;
	c->calls_event_type = 0;
	c->calls_event_config = 0;
	c->calls_event_config1 = 0;
}

/*
 * The default of the LBR source, for a module of ABI 1.@minor: the calls
 * event of the sampled event's PMU (evspec__calls_counter()), when there
 * is one to name.  Per task and with @pools, the hybrid estimate (ABI
 * 1.9, where kcc.ko counts the calls instead when that event cannot be
 * sampled): its error shrinks with the calls event's samples, where the
 * counter's bias on time and miss events does not
 * (Documentation/fidelity.rst, "The default estimate").  System-wide,
 * without @pools (windows, watched contexts), before ABI 1.9, or where
 * the sampled event is that calls event, the counter (ABI 1.3).
 * Whether the event
 * opens is kcc.ko's to find: where it does not, the session runs on the
 * one event and the header says so (KCC_HDR_CALLS_FALLBACK).
 */
bool record__default_calls(struct kcc_config *c, unsigned int minor,
			   bool pools)
{
	char spec[EVSPEC_NAME_LEN + 16];
	bool hybrid = pools && c->target == KCC_TARGET_PID && minor >= 9;

	if (minor < 3 || c->calls_flags ||
	    (c->source != KCC_SOURCE_AUTO && c->source != KCC_SOURCE_LBR))
		return false;
	if (evspec__calls_counter(c->event_type, NULL, spec, sizeof(spec)))
		return false;
	if (parse_calls_event(spec, c, !hybrid, hybrid)) {
		record_clear_counter(c);
		return false;
	}
	/*
	 * Sampled at retired calls already: the event's own bursts are
	 * where calls are, and a second sampled event would only spread
	 * the calls over fewer bursts.
	 */
	if (hybrid && c->calls_event_type == c->event_type &&
	    c->calls_event_config == c->event_config &&
	    c->calls_event_config1 == c->event_config1)
		c->calls_flags = KCC_CALLS_EVENT | KCC_CALLS_COUNTER;
	return true;
}

/*
 * An existing regular file @output becomes @output.old, as perf keeps
 * perf.data.old.
 */
static int keep_old(const char *output)
{
	struct stat st;
	char *old;
	int ret = 0;

	if (!strcmp(output, "-") || stat(output, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (asprintf(&old, "%s.old", output) < 0)
		return -ENOMEM;
	if (rename(output, old)) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: cannot keep it as %s: %s\n", output, old,
			strerror(errno));
	}
	free(old);
	return ret;
}

int record__write_profile(struct profile *p, const char *output)
{
	FILE *out;
	int ret;

	ret = keep_old(output);
	if (ret)
		return ret;
	out = strcmp(output, "-") ? fopen(output, "w") : stdout;

	if (!out) {
		fprintf(stderr, "kcc: %s: %s\n", output, strerror(errno));
		return -errno;
	}
	ret = profile__write(p, out);
	if ((out != stdout && fclose(out)) || ret) {
		fprintf(stderr, "kcc: %s: write error\n", output);
		return -EIO;
	}
	return 0;
}

/*
 * Before any session: the command must be found and executable, as
 * execvp() would look for it; else the shell's 127 or 126.  The exec
 * error pipe of record_device() catches what this cannot foresee.
 */
static int check_command(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];
	int err = ENOENT;

	if (strchr(cmd, '/')) {
		if (!access(cmd, X_OK))
			return 0;
		err = errno;
	} else {
		if (!path)
			path = "/bin:/usr/bin";
		while (*path) {
			size_t n = strcspn(path, ":");
			struct stat st;

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", cmd);
			if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
				if (!access(buf, X_OK))
					return 0;
				err = EACCES;
			}
			path += n + (path[n] == ':');
		}
	}
	fprintf(stderr, "kcc: %s: %s\n", cmd,
		err == ENOENT && !strchr(cmd, '/') ? "command not found" : strerror(err));
	return err == ENOENT ? KCC_EXIT_NOTFOUND : KCC_EXIT_NOEXEC;
}

/*
 * --source valence: the absolute path of the program (as its mapping
 * names it) and its encoding table, read before anything runs; the
 * command gets the same table through KCC_VALENCE_TABLE.
 */
static int record_valence_setup(struct record_opts *ro)
{
	const char *dirs = getenv("PATH"), *path;
	char buf[4096], err[256], *tab = NULL;
	FILE *f;
	int ret;

	if (ro->cfg.pid) {
		snprintf(buf, sizeof(buf), "/proc/%d/exe", ro->cfg.pid);
		ro->vexe = realpath(buf, NULL);
	} else if (strchr(ro->cmd[0], '/')) {
		ro->vexe = realpath(ro->cmd[0], NULL);
	} else {
		for (dirs = dirs ? dirs : "/bin:/usr/bin"; *dirs && !ro->vexe;) {
			size_t n = strcspn(dirs, ":");

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n,
				 n ? dirs : ".", ro->cmd[0]);
			if (!access(buf, X_OK))
				ro->vexe = realpath(buf, NULL);
			dirs += n + (dirs[n] == ':');
		}
	}
	if (!ro->vexe) {
		fprintf(stderr, "kcc: --source valence: cannot find the program's file\n");
		return -ENOENT;
	}
	path = ro->vtable ? ro->vtable : getenv("KCC_VALENCE_TABLE");
	if (!path) {
		if (asprintf(&tab, "%s.valence", ro->vexe) < 0)
			return -ENOMEM;
		path = tab;
	}
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s (the table of kcc valence annotate: --valence-table)\n",
			path, strerror(errno));
		free(tab);
		return ret;
	}
	ret = valence_prog__read(&ro->vprog, f, err, sizeof(err));
	fclose(f);
	if (ret)
		fprintf(stderr, "kcc: %s: %s\n", path, err);
	else if (setenv("KCC_VALENCE_TABLE", path, 1))
		ret = -errno;
	free(tab);
	return ret;
}

/* The snapshot's Valence records, decoded into its trees. */
static int record_valence_decode(struct record_opts *ro, void **buf,
				 size_t *len)
{
	struct valence_stream_stats st;
	char err[256];
	void *nb;
	size_t nl;
	int ret;

	ret = valence_stream__decode(*buf, *len, &ro->vprog, ro->vexe, &nb,
				     &nl, &st, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "kcc: %s: valence records: %s\n", ro->device,
			ret == -EINVAL ? err : strerror(-ret));
		return ret;
	}
	if (*len >= sizeof(struct kcc_stream_header)) {
		const struct kcc_status *ks =
			&((const struct kcc_stream_header *)*buf)->status;

		fprintf(stderr, "kcc.ko: valence samples %llu, fallback %llu, torn %llu, bad %llu, fault %llu, overflow %llu, not kept %llu\n",
			(unsigned long long)ks->valence_samples,
			(unsigned long long)ks->valence_fallback,
			(unsigned long long)ks->valence_torn,
			(unsigned long long)ks->valence_bad,
			(unsigned long long)ks->valence_fault,
			(unsigned long long)ks->valence_overflow,
			(unsigned long long)ks->valence_table_full);
	}
	free(*buf);
	*buf = nb;
	*len = nl;
	valence_stream__print(&st, stderr);
	return 0;
}

static int record_trace(const struct record_opts *ro)
{
	struct stream_gen g = {
		.k = ro->cfg.k, .threads = ro->threads, .tgid = 1000,
		.comm = "trace", .base = 0x400000, .jitter = 1,
	};
	struct sbuf b = { 0 };
	struct profile p;
	struct symobj so;
	struct watch w;
	struct trace t;
	uint32_t i;
	int ret;

	memset(&w, 0, sizeof(w));
	if (trace__init(&t))
		return -ENOMEM;
	profile__init(&p);
	p.by_build_id = ro->build_ids;
	memset(&so, 0, sizeof(so));
	ret = trace__read(&t, ro->trace, false);
	if (ret)
		goto cleanup;
	/* --watch: counted beside the forests as kcc.ko counts them. */
	if (ro->watch_file) {
		ret = watch__read(&w, ro->watch_file);
		if (!ret)
			ret = watch__resolve(&w, &t.syms);
		if (!ret)
			ret = watch__build(&w);
		if (ret)
			goto cleanup;
		g.watch = &w.p;
	}
	ret = stream__from_trace(&b, &t, &g);
	if (ret) {
		fprintf(stderr, "kcc: %s: cannot make a stream: %s\n", ro->trace,
			strerror(-ret));
		goto cleanup;
	}
	if (ro->stream) {
		FILE *out = strcmp(ro->output, "-") ? fopen(ro->output, "w") : stdout;

		if (!out || fwrite(b.p, 1, b.len, out) != b.len ||
		    (out != stdout && fclose(out))) {
			fprintf(stderr, "kcc: %s: write error\n", ro->output);
			ret = -EIO;
		}
		goto cleanup;
	}
	ret = profile__add_stream(&p, b.p, b.len, ro->trace);
	b.p = NULL;
	if (!ret && ro->per_process)
		record__fold(&p);
	if (!ret)
		ret = profile__info_begin(&p, "kcc", ro->argv, KCC_VERSION);
	if (!ret && ro->watch_file) {
		char *list = watch__list(&w);

		ret = list ? profile__info_set(&p, "watch", list) : -ENOMEM;
		free(list);
	}
	if (ret)
		goto cleanup;
	/* The trace's routines are the symbols of the synthetic mapping. */
	so.path = strdup(STREAM_GEN_PATH);
	ret = so.path ? 0 : -ENOMEM;
	for (i = 0; i < symtab__nr(&t.syms) && !ret; i++)
		ret = symobj__add(&so, (uint64_t)i * STREAM_GEN_STRIDE,
				  STREAM_GEN_STRIDE, symtab__name(&t.syms, i));
	symobj__finish(&so);
	if (!ret)
		ret = profile__add_object(&p, 0, 1, 0, &so);
	if (!ret)
		ret = record__write_profile(&p, ro->output);
cleanup:
	symobj__exit(&so);
	sbuf__exit(&b);
	profile__exit(&p);
	trace__exit(&t);
	watch__exit(&w);
	return ret;
}

#if defined(__x86_64__)
/*
 * Run a command stopped at its exec up to its entry point, so that the
 * dynamic loader has mapped its libraries: a breakpoint at AT_ENTRY
 * (/proc/PID/auxv), then the instruction and rip restored.
 */
static int run_to_entry(pid_t pid)
{
	struct user_regs_struct regs;
	uint64_t av[2], entry = 0;
	char path[64];
	long word;
	int status;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fread(av, sizeof(av), 1, f) == 1 && av[0] != AT_NULL)
		if (av[0] == AT_ENTRY)
			entry = av[1];
	fclose(f);
	if (!entry)
		return -ENOENT;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL);
	if (errno)
		return -errno;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry,
		   (void *)((word & ~0xffL) | 0xcc)) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL) ||
	    waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP)
		return -ECHILD;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word) ||
	    ptrace(PTRACE_GETREGS, pid, NULL, &regs))
		return -errno;
	regs.rip = entry;
	return ptrace(PTRACE_SETREGS, pid, NULL, &regs) ? -errno : 0;
}
#else
static int run_to_entry(pid_t pid)
{
	return 0;	/* the executable alone: libraries are mapped later */
}
#endif

/*
 * --watch, after CONFIGURE: with a command, let it exec (it stops there,
 * PTRACE_TRACEME) and run to its entry point; resolve the watched
 * routines in the process's mappings and upload them.  Any error leaves
 * the session without a watched set and the command never runs.
 */
static int record_watch(struct record_opts *ro, int fd, struct profile *p,
			pid_t *child, int *go_w, int exec_err)
{
	struct watch_upload u;
	pid_t pid = *child > 0 ? *child : ro->cfg.pid;
	char *list;
	int status, ret, err;

	if (*child > 0) {
		if (write(*go_w, "g", 1) != 1)
			return -errno;
		close(*go_w);
		*go_w = -1;
		if (waitpid(*child, &status, 0) != *child)
			return -errno;
		if (!WIFSTOPPED(status)) {
			/* execvp() failed: the child said why. */
			*child = -1;
			if (read(exec_err, &err, sizeof(err)) == sizeof(err)) {
				fprintf(stderr, "kcc: %s: %s\n", ro->cmd[0], strerror(err));
				ro->exec_errno = err;
				return -err;
			}
			return -ECHILD;
		}
		ret = run_to_entry(*child);
		if (ret) {
			fprintf(stderr, "kcc: %s: cannot run it to its entry point: %s\n",
				ro->cmd[0], strerror(-ret));
			return ret;
		}
	}
	ret = watch__upload_pid(&ro->watch, pid, &u);
	if (ret)
		return ret;
	if (ioctl(fd, KCC_IOC_WATCH, &u.arg)) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: watch: %s%s\n", ro->device, strerror(errno),
			errno == ENOTTY ? " (this kcc.ko predates --watch)" :
			errno == E2BIG ? " (over kcc.ko's caps or max_bytes)" : "");
	}
	list = ret ? NULL : watch__list(&ro->watch);
	if (!ret)
		ret = list ? profile__info_set(p, "watch", list) : -ENOMEM;
	if (!ret)
		fprintf(stderr, "kcc: watching %u contexts (%u routines, %u ranges, %u counters a task)\n",
			u.arg.nr_contexts, u.arg.nr_routines, u.arg.nr_ranges,
			u.arg.range);
	free(list);
	watch__upload_exit(&u);
	return ret;
}

/*
 * A refused period under kcc.ko's floor of counting events (its
 * parameter period_min; the clock's is 10 us) is said as such.
 */
static bool record__under_floor(const char *device,
				const struct kcc_config *cfg)
{
	unsigned long long floor = 1000, p = 0;
	FILE *f = fopen("/sys/module/kcc/parameters/period_min", "r");

	if (f) {
		if (fscanf(f, "%llu", &floor) != 1)
			floor = 1000;
		fclose(f);
	}
	if (!(cfg->flags & KCC_CFG_FREQ) && cfg->sample_period &&
	    cfg->sample_period < floor)
		p = cfg->sample_period;
	else if (cfg->calls_sample_period && cfg->calls_sample_period < floor)
		p = cfg->calls_sample_period;
	if (!p)
		return false;
	fprintf(stderr, "kcc: %s: configure: period %llu is under kcc.ko's floor: %llu events for a counting event (its parameter period_min), 10000 ns for a clock\n",
		device, p, floor);
	return true;
}

/*
 * Configure the session of @cfg on @fd, the device @device opened with
 * kccdev__open() (ABI @v); the reason of a refusal is printed.  0 or
 * -errno.  kcc record and kcc serve set their sessions up with it.
 */
int record__configure(int fd, const char *device, const struct kcc_version *v,
		      struct kcc_config *cfg)
{
	/* ABI 1.0 modules know neither config1/2 nor event names. */
	if (v->minor < 1) {
		if (cfg->event_config1 || cfg->event_config2) {
			fprintf(stderr, "kcc: %s: ABI %u.%u has no config1/config2: load kcc.ko of ABI %d.%d\n",
				device, v->major, v->minor, KCC_ABI_MAJOR,
				KCC_ABI_MINOR);
			return -EOPNOTSUPP;
		}
		cfg->size = offsetof(struct kcc_config, event_config1);
	}
	if (ioctl(fd, KCC_IOC_CONFIGURE, cfg)) {
		int ret = -errno;

		if (errno == EINVAL && record__under_floor(device, cfg))
			return ret;
		fprintf(stderr, "kcc: %s: configure: %s%s\n", device, strerror(errno),
			errno == EOPNOTSUPP || errno == ENOENT ?
			" (event or source not available here)" :
			errno == EBUSY ? " (too many sessions: kcc.ko max_sessions)" :
			errno == EACCES ? " (not allowed: perf_event_paranoid, CAP_PERFMON, or another user's process)" :
			errno == E2BIG ? " (this kcc.ko predates --calls-event)" : "");
		return ret;
	}
	return 0;
}

int record__cgroup(const char *device, const struct kcc_version *v,
		   const char *name, struct kcc_config *cfg, char *path,
		   size_t len)
{
	char why[4200];
	int fd;

	if (v->minor < 7) {
		fprintf(stderr, "kcc: %s: ABI %u.%u has no cgroup filter (-G): load kcc.ko of ABI %d.%d\n",
			device, v->major, v->minor, KCC_ABI_MAJOR,
			KCC_ABI_MINOR);
		return -EOPNOTSUPP;
	}
	fd = cgroup__open(name, path, len, why, sizeof(why));
	if (fd < 0) {
		fprintf(stderr, "kcc: -G %s: %s\n", name, why);
		return fd;
	}
	cfg->flags |= KCC_CFG_CGROUP;
	cfg->pid = fd;
	return fd;
}

/* What an ABI 1.2 module lacks that @ro asks for, or NULL. */
static const char *record_abi12_lack(const struct record_opts *ro)
{
	if (ro->cfg.flags & KCC_CFG_FREQ)
		return "samples by period only (-c), not by frequency (-F)";
	if (ro->cfg.calls_flags & KCC_CALLS_COUNTER)
		return "cannot count calls beside the sampled event";
	return NULL;
}

static int record_device(struct record_opts *ro)
{
	struct kcc_version v = { 0 };
	struct profile p;
	pid_t child = -1;
	int fd, go[2] = { -1, -1 }, exec_err[2] = { -1, -1 }, ret, status, err;
	void *buf = NULL;
	size_t len;
	uint32_t hf;
	time_t t0 = time(NULL);
	bool traced = false;

	profile__init(&p);
	p.by_build_id = ro->build_ids;
	ret = profile__info_begin(&p, "kcc", ro->argv, KCC_VERSION);
	fd = ret ? ret : kccdev__open(ro->device, &v);
	if (fd < 0) {
		profile__exit(&p);
		return fd;
	}
	if (ro->cmd) {
		/* exec_err: the child's errno if execvp() fails, else EOF. */
		if (pipe(go) || pipe2(exec_err, O_CLOEXEC)) {
			ret = -errno;
			goto cleanup;
		}
		child = fork();
		if (child < 0) {
			ret = -errno;
			goto cleanup;
		}
		if (!child) {
			char c;

			close(go[1]);
			close(exec_err[0]);
			close(fd);
			/* Wait for the session: EOF without a byte means no. */
			if (read(go[0], &c, 1) != 1)
				_exit(127);
			/* --watch: stop at the exec (record_watch()). */
			if (ro->watch_file && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
				_exit(127);
			execvp(ro->cmd[0], ro->cmd);
			err = errno;
			if (write(exec_err[1], &err, sizeof(err)) != sizeof(err))
				_exit(127);
			_exit(127);
		}
		close(go[0]);
		go[0] = -1;
		close(exec_err[1]);
		exec_err[1] = -1;
		ro->cfg.pid = child;
	}
	if (ro->cgroup) {
		char path[4096];

		ret = record__cgroup(ro->device, &v, ro->cgroup, &ro->cfg,
				     path, sizeof(path));
		if (ret < 0)
			goto cleanup;
		ro->cgroup_fd = ret;
		ret = profile__info_set(&p, "cgroup", path);
		if (ret)
			goto cleanup;
	}
	if (!ro->no_counter && !ro->cfg.calls_flags)
		ro->calls_default = record__default_calls(&ro->cfg, v.minor,
							   !ro->watch_file);
	/* --calls-period alone: only a sampled calls event has one. */
	if (ro->cfg.calls_sample_period &&
	    (ro->cfg.calls_flags & (KCC_CALLS_EVENT | KCC_CALLS_COUNTER)) !=
	    KCC_CALLS_EVENT) {
		fprintf(stderr, "kcc: --calls-period: the calls here are counted, not sampled (-a, -e EVENT is the calls event, no calls event to name, or kcc.ko before ABI 1.9): give --calls-hybrid or --calls-event\n");
		ret = -EINVAL;
		goto cleanup;
	}
	if (v.minor < 5 && (ro->cfg.calls_flags & KCC_CALLS_HYBRID)) {
		fprintf(stderr, "kcc: %s: ABI %u.%u has no hybrid estimate (--calls-hybrid): load kcc.ko of ABI %d.%d\n",
			ro->device, v.major, v.minor, KCC_ABI_MAJOR,
			KCC_ABI_MINOR);
		ret = -EOPNOTSUPP;
		goto cleanup;
	}
	if (v.minor < 3) {
		const char *lack = record_abi12_lack(ro);

		if (lack) {
			fprintf(stderr, "kcc: %s: ABI %u.%u %s: load kcc.ko of ABI %d.%d\n",
				ro->device, v.major, v.minor, lack,
				KCC_ABI_MAJOR, KCC_ABI_MINOR);
			ret = -EOPNOTSUPP;
			goto cleanup;
		}
	}
	ret = record__configure(fd, ro->device, &v, &ro->cfg);
	if (ret)
		goto cleanup;
	if (ro->watch_file) {
		ret = record_watch(ro, fd, &p, &child, &go[1], exec_err[0]);
		traced = child > 0;
		if (ret)
			goto cleanup;
	}
	if (ioctl(fd, KCC_IOC_START)) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: start: %s\n", ro->device, strerror(errno));
		goto cleanup;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (child > 0) {
		if (traced) {
			if (ptrace(PTRACE_DETACH, child, NULL, NULL)) {
				ret = -errno;
				goto cleanup;
			}
			traced = false;
		} else if (write(go[1], "g", 1) != 1) {
			ret = -errno;
			goto cleanup;
		}
		if (go[1] >= 0)
			close(go[1]);
		go[1] = -1;
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
		child = -1;
	} else {
		while (!stop_now) {
			if (ro->duration && time(NULL) - t0 >= ro->duration)
				break;
			if (ro->cfg.target == KCC_TARGET_PID &&
			    kill(ro->cfg.pid, 0) && errno == ESRCH)
				break;
			usleep(100000);
		}
	}
	if (ioctl(fd, KCC_IOC_STOP) && errno != EINVAL)
		fprintf(stderr, "kcc: %s: stop: %s\n", ro->device, strerror(errno));
	profile__info_end(&p);
	if (exec_err[0] >= 0 && read(exec_err[0], &err, sizeof(err)) == sizeof(err)) {
		/* The command never ran: nothing to profile, nothing written. */
		fprintf(stderr, "kcc: %s: %s\n", ro->cmd[0], strerror(err));
		ro->exec_errno = err;
		ret = -err;
		goto cleanup;
	}
	ret = kccdev__snapshot(fd, ro->device, false, &buf, &len);
	if (!ret && ro->cfg.source == KCC_SOURCE_VALENCE)
		ret = record_valence_decode(ro, &buf, &len);
	if (ret)
		goto cleanup;
	ret = profile__add_stream(&p, buf, len, ro->device);
	if (!ret && ro->per_process)
		record__fold(&p);
	if (ret)
		goto cleanup;
	hf = p.runs[0].s.hdr.flags;
	if ((hf & KCC_HDR_CALLS_FALLBACK) && (hf & KCC_HDR_CALLS_COUNTER)) {
		/* A hybrid whose calls event counts but cannot sample. */
		if (!ro->calls_default)
			fprintf(stderr, "kcc: warning: %s: the calls event cannot be sampled here: calls were counted beside -e EVENT instead (as --calls-counter does), not spread by the hybrid estimate\n",
				ro->device);
	} else if ((hf & KCC_HDR_CALLS_FALLBACK) && !ro->calls_default)
		fprintf(stderr, "kcc: warning: %s: the calls event cannot be %s here: bursts were taken at the samples of -e EVENT (one event)%s\n",
			ro->device,
			ro->cfg.calls_flags & KCC_CALLS_COUNTER ? "counted" : "sampled",
			ro->cfg.calls_flags & KCC_CALLS_COUNTER ?
			", replayed whole: calls are the records seen, not a count" : "");
	else if ((hf & KCC_HDR_CALLS_FALLBACK) &&
		 p.runs[0].s.hdr.source == KCC_SOURCE_LBR)
		fprintf(stderr, "kcc: warning: %s: no calls counter here: every burst was replayed whole, so calls are the records seen, not a count (kcc report says so)\n",
			ro->device);
	ret = profile__add_cgroups(&p, 0);
	if (ret > 0)
		fprintf(stderr, "kcc: warning: %d cgroups could not be named (removed since, or no cgroup2 mount here)\n",
			ret);
	if (ret < 0)
		goto cleanup;
	ret = profile__add_objects(&p, 0);
	if (ret > 0)
		fprintf(stderr, "kcc: warning: %d mapped objects could not be read: their routines stay unnamed\n",
			ret);
	ret = ret < 0 ? ret : record__write_profile(&p, ro->output);
	if (!ret)
		fprintf(stderr, "kcc: wrote %s (%u tasks)\n", ro->output,
			p.runs[0].s.nr_tasks);
cleanup:
	if (child > 0 && traced)
		kill(child, SIGKILL);	/* stopped at its exec: never ran */
	if (child > 0) {
		/* Never started: closing the pipe makes it exit. */
		if (go[1] >= 0)
			close(go[1]);
		go[1] = -1;
		waitpid(child, &status, 0);
	}
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (exec_err[0] >= 0)
		close(exec_err[0]);
	if (exec_err[1] >= 0)
		close(exec_err[1]);
	if (ro->cgroup_fd >= 0)
		close(ro->cgroup_fd);
	ro->cgroup_fd = -1;
	close(fd);
	profile__exit(&p);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "burst-rr", required_argument, NULL, OPT_BURST_RR },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "stream", no_argument, NULL, OPT_STREAM },
		{ "build-ids", no_argument, NULL, OPT_BUILD_IDS },
		{ "per-process", no_argument, NULL, OPT_PER_PROCESS },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "stack-depth", required_argument, NULL, OPT_STACK_DEPTH },
		{ "calls-event", required_argument, NULL, OPT_CALLS_EVENT },
		{ "calls-period", required_argument, NULL, OPT_CALLS_PERIOD },
		{ "calls-counter", required_argument, NULL, OPT_CALLS_COUNTER },
		{ "no-calls-counter", no_argument, NULL, OPT_NO_CALLS_COUNTER },
		{ "calls-hybrid", required_argument, NULL, OPT_CALLS_HYBRID },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "join", required_argument, NULL, OPT_JOIN },
		{ "valence-table", required_argument, NULL, OPT_VALENCE_TABLE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct record_opts ro = {
		.cfg = {
			.size = sizeof(struct kcc_config),
			.k = 3,
			.source = KCC_SOURCE_AUTO,
			.target = KCC_TARGET_PID,
			/* 0/0 without KCC_CFG_EVENT: the module's default */
			.event_type = 0,
			.event_config = 0,
		},
		.device = KCC_DEVICE,
		.output = "kcc.data",
		.cgroup_fd = -1,
		.threads = 1,
		.argv = argv,
	};
	bool have_p = false, have_a = false, have_freq = false;
	bool have_period = false;
	uint32_t x;
	int c, ret;

	/* '+': stop at the command's own arguments. */
	while ((c = getopt_long(argc, argv, "+:e:c:F:k:p:aG:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (record__parse_event(optarg, &ro.cfg))
				return KCC_EXIT_USAGE;
			break;
		case 'c':
			if (parse_u32(optarg, &x) || !x)
				return usage_error(CMD, "bad -c '%s': expected a positive period", optarg);
			ro.cfg.sample_period = x;
			have_period = true;
			break;
		case OPT_CALLS_EVENT:
		case OPT_CALLS_COUNTER:
		case OPT_CALLS_HYBRID:
			if (ro.cfg.calls_flags & KCC_CALLS_EVENT)
				return usage_error(CMD, "--calls-event, --calls-counter and --calls-hybrid: give one");
			if (parse_calls_event(optarg, &ro.cfg,
					      c == OPT_CALLS_COUNTER,
					      c == OPT_CALLS_HYBRID))
				return KCC_EXIT_USAGE;
			break;
		case OPT_NO_CALLS_COUNTER:
			ro.no_counter = true;
			break;
		case OPT_CALLS_PERIOD:
			if (parse_u32(optarg, &x) || !x)
				return usage_error(CMD, "bad --calls-period '%s': expected a positive period",
						   optarg);
			ro.cfg.calls_sample_period = x;
			break;
		case 'F':
			if (record__parse_freq(CMD, optarg, &ro.cfg))
				return KCC_EXIT_USAGE;
			have_freq = true;
			break;
		case 'k':
			if (!strcmp(optarg, "inf"))
				ro.cfg.k = KCC_K_INF;
			else if (parse_u32(optarg, &ro.cfg.k) || !ro.cfg.k ||
				 ro.cfg.k > KCC_K_MAX)
				return usage_error(CMD, "bad -k '%s': expected 1..%d or 'inf'",
						   optarg, KCC_K_MAX);
			break;
		case OPT_SOURCE:
			if (!strcmp(optarg, "auto"))
				ro.cfg.source = KCC_SOURCE_AUTO;
			else if (!strcmp(optarg, "lbr"))
				ro.cfg.source = KCC_SOURCE_LBR;
			else if (!strcmp(optarg, "fp"))
				ro.cfg.source = KCC_SOURCE_FP;
			else if (!strcmp(optarg, "valence"))
				ro.cfg.source = KCC_SOURCE_VALENCE;
			else
				return usage_error(CMD, "bad --source '%s': expected auto, lbr, fp or valence",
						   optarg);
			break;
		case 'p':
			if (parse_u32(optarg, &x) || !x || x > 0x7fffffff)
				return usage_error(CMD, "bad -p '%s': expected a process id", optarg);
			ro.cfg.pid = x;
			have_p = true;
			break;
		case 'a':
			have_a = true;
			break;
		case 'G':
			ro.cgroup = optarg;
			break;
		case OPT_DURATION:
			if (parse_u32(optarg, &ro.duration) || !ro.duration)
				return usage_error(CMD, "bad --duration '%s': expected seconds", optarg);
			break;
		case OPT_STACK_DEPTH:
			if (parse_u32(optarg, &ro.cfg.stack_depth) ||
			    !ro.cfg.stack_depth ||
			    ro.cfg.stack_depth > KCC_INJECT_MAX_STACK)
				return usage_error(CMD, "bad --stack-depth '%s': expected 1..%d",
						   optarg, KCC_INJECT_MAX_STACK);
			break;
		case OPT_BURST_RR:
			if (parse_u32(optarg, &ro.cfg.burst_rr_inv))
				return usage_error(CMD, "bad --burst-rr '%s'", optarg);
			break;
		case OPT_DEVICE:
			ro.device = optarg;
			break;
		case 'o':
			ro.output = optarg;
			break;
		case OPT_TRACE:
			ro.trace = optarg;
			break;
		case OPT_THREADS:
			if (parse_u32(optarg, &ro.threads) || !ro.threads ||
			    ro.threads > 1024)
				return usage_error(CMD, "bad --threads '%s': expected 1..1024", optarg);
			break;
		case OPT_STREAM:
			ro.stream = true;
			break;
		case OPT_BUILD_IDS:
			ro.build_ids = true;
			break;
		case OPT_PER_PROCESS:
			ro.per_process = true;
			break;
		case OPT_VALENCE_TABLE:
			ro.vtable = optarg;
			break;
		case OPT_WATCH:
			ro.watch_file = optarg;
			break;
		case OPT_JOIN:
			ro.cfg.flags &= ~(KCC_CFG_JOIN_UNIQUE | KCC_CFG_JOIN_LONGEST);
			if (!strcmp(optarg, "unique"))
				ro.cfg.flags |= KCC_CFG_JOIN_UNIQUE;
			else if (!strcmp(optarg, "longest"))
				ro.cfg.flags |= KCC_CFG_JOIN_LONGEST;
			else if (strcmp(optarg, "none"))
				return usage_error(CMD, "bad --join '%s': expected none, unique or longest", optarg);
			break;
		case 'h':
			record_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc && !strcmp(argv[optind - 1], "--"))
		ro.cmd = argv + optind;
	else if (optind < argc)
		ro.cmd = argv + optind;
	if (have_freq && have_period)
		return usage_error(CMD, "-c PERIOD and -F FREQ: give one");
	if (have_freq && ro.trace)
		return usage_error(CMD, "-F samples with kcc.ko: not with --trace");
	if (!strcmp(ro.output, "-") && isatty(1))
		return usage_error(CMD, "refusing to write a binary profile to a terminal");
	/* Without a calls option, the period is the default hybrid's. */
	if (ro.cfg.calls_sample_period &&
	    (ro.cfg.calls_flags & KCC_CALLS_COUNTER || ro.no_counter))
		return usage_error(CMD, "--calls-period needs --calls-event or --calls-hybrid");
	if (ro.no_counter && (ro.cfg.calls_flags & KCC_CALLS_COUNTER))
		return usage_error(CMD, "--calls-counter and --no-calls-counter: give one");
	if ((ro.cfg.calls_flags & KCC_CALLS_EVENT) &&
	    ro.cfg.source == KCC_SOURCE_FP)
		return usage_error(CMD, "--calls-event needs branch records: not with --source fp");
	if (ro.per_process && ro.watch_file)
		return usage_error(CMD, "--per-process: watched contexts are counted per thread: not with --watch");
	if (ro.per_process && ro.stream)
		return usage_error(CMD, "--per-process folds the profile: not with --stream");
	if (ro.trace) {
		if (ro.cfg.calls_flags & KCC_CALLS_EVENT)
			return usage_error(CMD, "--calls-event samples with kcc.ko: not with --trace");
		if (have_p || have_a || ro.cmd)
			return usage_error(CMD, "--trace replaces -p, -a and a command");
		ret = record_trace(&ro);
		return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
	}
	if (have_p + have_a + (ro.cmd != NULL) != 1)
		return usage_error(CMD, "give exactly one of -p PID, -a or -- CMD");
	if (have_a) {
		ro.cfg.target = KCC_TARGET_ALL;
		ro.cfg.pid = 0;
	}
	if (ro.cgroup && !have_a)
		return usage_error(CMD, "-G samples a cgroup's tasks on every CPU: give -a too");
	if (have_a && (ro.cfg.calls_flags & KCC_CALLS_HYBRID))
		return usage_error(CMD, "--calls-hybrid keeps a pool per thread: -p PID or -- CMD, not -a");
	/*
	 * Watched contexts count what the bursts replay; the spread of
	 * the hybrid's pools adds to forest nodes only.
	 */
	if (ro.watch_file && (ro.cfg.calls_flags & KCC_CALLS_HYBRID))
		return usage_error(CMD, "--calls-hybrid spreads its pools over forest nodes, not watched contexts: not with --watch");
	if (ro.watch_file && have_a)
		return usage_error(CMD, "--watch needs one process to resolve routines in: -p PID or -- CMD, not -a");
	if (ro.cmd) {
		ret = check_command(ro.cmd[0]);
		if (ret)
			return ret;
	}
	if (ro.vtable && ro.cfg.source != KCC_SOURCE_VALENCE)
		return usage_error(CMD, "--valence-table needs --source valence");
	if (ro.cfg.source == KCC_SOURCE_VALENCE) {
		if (have_a)
			return usage_error(CMD, "--source valence profiles one program: -p PID or -- CMD");
		if (ro.cfg.calls_flags & KCC_CALLS_EVENT)
			return usage_error(CMD, "--calls-event needs branch records: not with --source valence");
		/* Full contexts: kcc report gives every k from them. */
		ro.cfg.k = KCC_K_INF;
		if (record_valence_setup(&ro)) {
			valence_prog__exit(&ro.vprog);
			free(ro.vexe);
			return KCC_EXIT_ERROR;
		}
	}
	/* A bad watch file is refused before anything runs. */
	if (ro.watch_file && watch__read(&ro.watch, ro.watch_file)) {
		ret = -EINVAL;
	} else {
		ret = record_device(&ro);
		if (ro.watch_file)
			watch__exit(&ro.watch);
	}
	if (ro.cfg.source == KCC_SOURCE_VALENCE) {
		valence_prog__exit(&ro.vprog);
		free(ro.vexe);
	}
	if (ro.exec_errno)
		return ro.exec_errno == ENOENT ? KCC_EXIT_NOTFOUND : KCC_EXIT_NOEXEC;
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
