// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-serve.c - kcc serve: one long-running kcc.ko session served
 * over HTTP the way fleet profilers (Parca, Grafana Pyroscope, Alloy)
 * scrape Go programs, in the net/http/pprof convention:
 *
 *   GET /debug/pprof/profile?seconds=N  pprof of the k-contexts seen in
 *                                       the next N seconds (the reply
 *                                       comes when the window closes)
 *   GET /debug/pprof/                   an index of the above
 *   GET /metrics                        Prometheus text exposition
 *
 * The session is configured and started once (record__configure(), the
 * set-up kcc record uses) and never restarted: a window is the
 * difference of two snapshots of its forests, taken when the request
 * arrives and N seconds later.  Nodes are matched by their root path
 * (parent matched, same label), so a node the module created, folded or
 * evicted in between is counted from what the later snapshot holds.
 *
 * The HTTP/1.1 server is hand-written, a single poll() loop: Debian has
 * no small embeddable C HTTP server that profilers use for this
 * (libmicrohttpd is a general web server with its own thread pools; the
 * handful of GET routes here need less code than its glue).  Bounded:
 * request head size (8 KiB), time to send the request and to take the
 * reply (--timeout), clients at once (--max-clients; the next one gets
 * 503), window length (--max-seconds).  Every reply closes the
 * connection.  A bad request is answered with a 4xx and touches nothing
 * but its own connection.
 *
 * --push URL sends a window every --push-every seconds to a Pyroscope
 * server's POST /ingest (format=pprof: a multipart form with the gzipped
 * profile and its sample_type_config), as Pyroscope's agents push.  The
 * windows are contiguous: one snapshot ends a window and begins the next.
 * A forked child sends each one with the --timeout bound, so a slow or
 * dead receiver never holds the loop; a window due while the last one is
 * still being sent is counted as skipped, and /metrics counts every
 * outcome.  Plain HTTP only: put a local proxy in front for TLS or
 * authentication, as for the scraped endpoint.
 *
 * --stream-file FILE (repeatable) replaces the device with profiles on
 * disk, snapshot i reading FILE i (the last one once they run out): the
 * test source that needs no kcc.ko (selftests/kcc/serve.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netdb.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "pprof.h"
#include "profile.h"
#include "report.h"

#define CMD "kcc serve"

#define SERVE_HEAD_MAX		8192	/* request line and headers */
#define SERVE_MAX_FILES		16	/* --stream-file */
#define SERVE_DEFAULT_SECONDS	30	/* as net/http/pprof */
#define SERVE_PUSH_EVERY	10	/* s, as Pyroscope's agents upload */

static void serve_usage(void)
{
	printf(
"usage: kcc serve [options] [-a | -p PID]\n"
"\n"
"Keep one kcc.ko session running (every task by default, or process PID)\n"
"and serve it over HTTP, in the convention of Go's net/http/pprof:\n"
"  GET /debug/pprof/profile?seconds=N   pprof of the next N seconds\n"
"  GET /debug/pprof/                    index\n"
"  GET /metrics                         Prometheus text format\n"
"The session is never restarted: a window is the difference of two\n"
"snapshots of its forests.\n"
"\n"
"Options:\n"
"  -a                every task (default)\n"
"  -G, --cgroup CG   only the tasks of cgroup v2 CG and below (as kcc\n"
"                    record -G); profiles are labelled cgroup=CG\n"
"  -p PID            process PID (threads and children follow)\n"
"  -e EVENT, -c PERIOD, -F FREQ, -k K, --source S, --device PATH\n"
"                    as kcc record\n"
"  --listen ADDR:PORT  where to listen (default 127.0.0.1:6060); an\n"
"                    address other than loopback needs --allow-remote\n"
"  --unix PATH       listen on a Unix socket instead\n"
"  --allow-remote    allow a non-loopback --listen address.  kcc serve\n"
"                    has no authentication and its profiles name every\n"
"                    routine and process of the machine: put an\n"
"                    authenticating reverse proxy in front\n"
"  --max-seconds N   longest window (default 300)\n"
"  --max-clients N   connections at once (default 16; more get 503)\n"
"  --timeout SEC     time a client has to send its request and to take\n"
"                    the reply (default 10)\n"
"  --push URL        also POST a window every --push-every seconds to\n"
"                    the Pyroscope server at URL (http://HOST[:PORT][/PATH];\n"
"                    /ingest is added unless PATH ends with it), as\n"
"                    format=pprof, named --push-name with the labels\n"
"                    hostname and kernel; plain HTTP only\n"
"  --push-every SEC  window length of --push (default 10)\n"
"  --push-name NAME  application name of --push (default kcc)\n"
"  --stream-file F   no module: snapshot i is the profile F given i-th\n"
"                    (the last once they run out); for tests\n"
"  -h, --help        this help\n"
"\n"
"EXAMPLES\n"
"  kcc serve -a &\n"
"  go tool pprof http://127.0.0.1:6060/debug/pprof/profile?seconds=10\n"
"  curl -s http://127.0.0.1:6060/metrics\n"
"  kcc serve -a --push http://pyroscope:4040\n"
"  kcc serve --unix /run/kcc.sock -p 1234\n");
}

enum {
	OPT_SOURCE = 256, OPT_DEVICE, OPT_LISTEN, OPT_UNIX, OPT_ALLOW_REMOTE,
	OPT_MAX_SECONDS, OPT_MAX_CLIENTS, OPT_TIMEOUT, OPT_STREAM_FILE,
	OPT_PUSH, OPT_PUSH_EVERY, OPT_PUSH_NAME,
};

enum conn_state { C_FREE, C_READ, C_WAIT, C_WRITE };

struct conn {
	enum conn_state state;
	int fd;
	uint64_t deadline_ns;	/* C_READ, C_WRITE: drop the client then */
	uint64_t due_ns;	/* C_WAIT: when the window closes */
	char head[SERVE_HEAD_MAX];
	size_t head_len;
	struct profile *base;	/* C_WAIT: the window's first snapshot */
	uint64_t base_wall_ns;
	char *out;		/* C_WRITE: the reply */
	size_t out_len, out_off;
};

struct server {
	struct kcc_config cfg;
	const char *device;
	int dev;		/* the session's descriptor, -1 with files */
	const char *files[SERVE_MAX_FILES];
	uint32_t nr_files, next_file;
	char **argv;
	uint32_t max_seconds, max_clients, timeout_s;
	int lfd;
	struct conn *conns;
	/* counted for /metrics */
	uint64_t requests, windows, errors_4xx, errors_5xx, rejected, timeouts;
	uint64_t start_wall_ns;
	char hostname[256], release[65];
	char comm[17];		/* -p: the target's */
	const char *cgroup;	/* -G: as given */
	char cgroup_path[4096];	/* as the cgroup2 root names it */
	int cgroup_fd;		/* its directory, open while serving */
	/* --push */
	const char *push_url, *push_name;
	char push_host[256], push_port[8], push_path[1024];
	uint32_t push_every;
	struct profile *push_base;	/* the window's first snapshot */
	uint64_t push_base_wall_ns, push_due_ns;
	pid_t push_child;		/* sending a window, or 0 */
	uint64_t push_ok, push_failed, push_skipped;
};

static volatile sig_atomic_t stop_now;

static void on_signal(int sig)
{
	stop_now = 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- snapshots and windows --------------------------------------------- */

static void snap_free(struct profile *p)
{
	if (p) {
		profile__exit(p);
		free(p);
	}
}

/*
 * A snapshot of the session as a profile of one run; with @objects the
 * mapped objects' symbols are copied too (a window's end).  With @twin,
 * the same snapshot once more, without objects, in *@twin: the next
 * window's start, so that consecutive windows leave nothing between.
 */
static int snap_take(struct server *sv, bool objects, struct profile **pp,
		     struct profile **twin)
{
	struct profile *p = calloc(1, sizeof(*p));
	struct profile *t = twin ? calloc(1, sizeof(*t)) : NULL;
	void *buf = NULL;
	size_t len;
	int ret = 0;

	if (!p || (twin && !t)) {
		free(p);
		free(t);
		return -ENOMEM;
	}
	profile__init(p);
	if (t)
		profile__init(t);
	if (sv->dev < 0) {
		uint32_t i = sv->next_file < sv->nr_files ?
			     sv->next_file : sv->nr_files - 1;

		sv->next_file++;
		ret = profile__read(p, sv->files[i]);
		if (!ret && t)
			ret = profile__read(t, sv->files[i]);
	} else {
		ret = kccdev__snapshot(sv->dev, sv->device, false, &buf, &len);
		if (!ret)
			ret = profile__add_stream(p, buf, len, sv->device);
		if (!ret && t)
			ret = profile__add_stream(t, buf, len, sv->device);
		/* Unreadable objects only leave routines unnamed. */
		if (!ret && objects)
			ret = profile__add_objects(p, 0) < 0 ? -ENOMEM : 0;
		/* Removed cgroups only leave their label out. */
		if (!ret && objects)
			ret = profile__add_cgroups(p, 0) < 0 ? -ENOMEM : 0;
	}
	if (!ret && (!p->nr_runs || (t && !t->nr_runs)))
		ret = -EINVAL;
	if (ret) {
		snap_free(p);
		snap_free(t);
		return ret;
	}
	*pp = p;
	if (twin)
		*twin = t;
	return 0;
}

static uint64_t sub(uint64_t a, uint64_t b)
{
	/* Less than before: reset in between, so all of it is new. */
	return a >= b ? a - b : a;
}

/*
 * @nt's counts less @ot's, node by node: a node of @nt is matched in
 * @ot by its parent's match and its label (the streams' node order puts
 * parents first).
 */
static int task_diff(struct stream_task *nt, const struct stream_task *ot,
		     uint32_t nr_ctrs)
{
	const struct kcc_forest *of = &ot->ksf.f;
	struct kcc_forest *f = &nt->ksf.f;
	uint32_t *map, i, c;

	map = malloc(((size_t)f->count + 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (i = 0; i < f->count; i++) {
		const struct kcc_node *n = kcc_forest_node(f, i);
		uint32_t op;

		if (n->parent == KCC_FREE) {
			map[i] = KCC_NIL;
			continue;
		}
		op = kcc_is_root_parent(n->parent) ? n->parent :
		     n->parent < i ? map[n->parent] : KCC_NIL;
		map[i] = op == KCC_NIL ? KCC_NIL :
			 kcc_forest_find(of, op, n->label);
		if (map[i] == KCC_NIL)
			continue;
		for (c = 0; c < nr_ctrs; c++)
			kcc_forest_ctr(f, i)[c] = sub(kcc_forest_ctr(f, i)[c],
						      kcc_forest_ctr(of, map[i])[c]);
	}
	free(map);
	nt->samples = sub(nt->samples, ot->samples);
	nt->node_drops = sub(nt->node_drops, ot->node_drops);
	nt->stack_drops = sub(nt->stack_drops, ot->stack_drops);
	nt->stitch_errors = sub(nt->stitch_errors, ot->stitch_errors);
	nt->lost_charges = sub(nt->lost_charges, ot->lost_charges);
	return 0;
}

/* The window: @end's run 0 less @base's, in place. */
static int window_diff(struct profile *end, const struct profile *base)
{
	struct stream *s = &end->runs[0].s;
	const struct stream *b = &base->runs[0].s;
	struct kcc_status *st = &s->hdr.status;
	const struct kcc_status *bt = &b->hdr.status;
	uint32_t i, j;
	int ret;

	if (s->nr_ctrs != b->nr_ctrs)
		return -EINVAL;
	for (i = 0; i < s->nr_tasks; i++) {
		struct stream_task *t = &s->tasks[i];

		for (j = 0; j < b->nr_tasks; j++) {
			const struct stream_task *o = &b->tasks[j];

			if (o->pid == t->pid &&
			    o->start_time_ns == t->start_time_ns)
				break;
		}
		if (j == b->nr_tasks)
			continue;	/* new in the window: all of it */
		ret = task_diff(t, &b->tasks[j], s->nr_ctrs);
		if (ret)
			return ret;
	}
	st->samples = sub(st->samples, bt->samples);
	st->processed = sub(st->processed, bt->processed);
	for (i = 0; i < KCC_DROP_NR; i++)
		st->dropped[i] = sub(st->dropped[i], bt->dropped[i]);
	st->bursts_replayed = sub(st->bursts_replayed, bt->bursts_replayed);
	st->bursts_skipped = sub(st->bursts_skipped, bt->bursts_skipped);
	st->stitch_errors = sub(st->stitch_errors, bt->stitch_errors);
	st->node_drops = sub(st->node_drops, bt->node_drops);
	return 0;
}

/* What @write writes of @r, in a buffer of memory (@out, @len). */
static int to_memory(struct report *r, int (*write)(struct report *, FILE *),
		     char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);
	int ret;

	if (!f)
		return -errno;
	ret = write(r, f);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}

/*
 * The gzipped pprof of the window from @base (taken at @base_wall_ns) to
 * now, in @out; with @types, its sample types as Pyroscope's
 * sample_type_config, and with @next the snapshot that ended it.
 */
static int window_pprof(struct server *sv, const struct profile *base,
			uint64_t base_wall_ns, char **out, size_t *len,
			char **types, struct profile **next)
{
	struct report_opts o = {
		.sort = -1, .name = "kcc serve", .fleet_labels = true,
	};
	struct profile *end = NULL;
	struct report r;
	uint64_t wall = now_ns(CLOCK_REALTIME);
	int ret;

	memset(&r, 0, sizeof(r));
	ret = snap_take(sv, true, &end, next);
	if (ret)
		return ret;
	ret = window_diff(end, base);
	/* The window's machine and clocks, for labels and time_nanos. */
	if (!ret)
		ret = profile__info_begin(end, "kcc", sv->argv, KCC_VERSION);
	if (!ret && sv->cgroup)
		ret = profile__info_set(end, "cgroup", sv->cgroup_path);
	if (!ret) {
		end->info.start_ns = base_wall_ns;
		end->info.duration_ns = wall - base_wall_ns;
		ret = report__build(&r, end, &o);
	}
	if (!ret && types) {
		size_t tlen;

		ret = to_memory(&r, report__pprof_types, types, &tlen);
	}
	if (!ret)
		ret = to_memory(&r, report__pprof, out, len);
	if (ret && types) {
		free(*types);
		*types = NULL;
	}
	if (ret && next) {
		snap_free(*next);
		*next = NULL;
	}
	report__exit(&r);
	snap_free(end);
	return ret;
}

/* ---- replies ------------------------------------------------------------ */

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

/* @c's reply: status @code, @body of @len bytes (taken: freed later). */
static void reply(struct server *sv, struct conn *c, int code,
		  const char *type, char *body, size_t len)
{
	char *msg = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&msg, &mlen);

	if (code >= 500)
		sv->errors_5xx++;
	else if (code >= 400)
		sv->errors_4xx++;
	if (f) {
		fprintf(f, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n",
			code, status_text(code), type, len);
		if (code == 200 && !strcmp(type, "application/octet-stream"))
			fputs("Content-Disposition: attachment; filename=\"profile\"\r\n", f);
		fputs("\r\n", f);
		if (len)
			fwrite(body, 1, len, f);
		if (fclose(f)) {
			free(msg);
			msg = NULL;
		}
	}
	free(body);
	free(c->out);
	c->out = msg;
	c->out_len = msg ? mlen : 0;
	c->out_off = 0;
	c->state = C_WRITE;
	c->deadline_ns = now_ns(CLOCK_MONOTONIC) + sv->timeout_s * 1000000000ull;
}

static void reply_text(struct server *sv, struct conn *c, int code,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void reply_text(struct server *sv, struct conn *c, int code,
		       const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		s = NULL;
		n = 0;
	}
	reply(sv, c, code, "text/plain; charset=utf-8", s, (size_t)n);
}

static const char *drop_names[KCC_DROP_NR] = {
	"ring_full", "no_task", "task_cap", "mem_cap", "bad_sample",
	"no_stack", "stopped", "budget",
};

/* The session's status: KCC_IOC_STATUS, or the last file's header. */
static int session_status(struct server *sv, struct kcc_status *st)
{
	struct profile *p;
	uint32_t keep;
	int ret;

	memset(st, 0, sizeof(*st));
	if (sv->dev >= 0) {
		st->size = sizeof(*st);
		return ioctl(sv->dev, KCC_IOC_STATUS, st) ? -errno : 0;
	}
	/* Files: the latest one read, without moving on. */
	keep = sv->next_file;
	sv->next_file = keep ? keep - 1 : 0;
	ret = snap_take(sv, false, &p, NULL);
	sv->next_file = keep;
	if (ret)
		return ret;
	*st = p->runs[0].s.hdr.status;
	snap_free(p);
	return 0;
}

/* Prometheus text exposition format 0.0.4. */
static void serve_metrics(struct server *sv, struct conn *c)
{
	struct kcc_status st;
	char *body = NULL, lab[512];
	size_t len = 0;
	FILE *f;
	int i;

	if (session_status(sv, &st)) {
		reply_text(sv, c, 503, "kcc serve: the session's status cannot be read\n");
		return;
	}
	f = open_memstream(&body, &len);
	if (!f) {
		reply_text(sv, c, 500, "out of memory\n");
		return;
	}
	snprintf(lab, sizeof(lab), "hostname=\"%s\",kernel=\"%s\",session=\"%u\"%s%s%s",
		 sv->hostname, sv->release, st.session_id,
		 sv->comm[0] ? ",comm=\"" : "", sv->comm, sv->comm[0] ? "\"" : "");
#define COUNTER(name, help, v) \
	fprintf(f, "# HELP kcc_" name " " help "\n# TYPE kcc_" name " counter\nkcc_" name "{%s} %llu\n", \
		lab, (unsigned long long)(v))
#define GAUGE(name, help, v) \
	fprintf(f, "# HELP kcc_" name " " help "\n# TYPE kcc_" name " gauge\nkcc_" name "{%s} %llu\n", \
		lab, (unsigned long long)(v))
	fprintf(f, "# HELP kcc_info The session: its k and source, and kcc's version.\n# TYPE kcc_info gauge\n");
	fprintf(f, "kcc_info{%s,k=\"%u\",source=\"%u\",version=\"%s\"} 1\n",
		lab, st.k, st.source, KCC_VERSION);
	COUNTER("samples_total", "Samples taken by the handlers.", st.samples);
	COUNTER("samples_processed_total", "Samples applied to a forest.", st.processed);
	fprintf(f, "# HELP kcc_samples_dropped_total Samples dropped, by reason.\n# TYPE kcc_samples_dropped_total counter\n");
	for (i = 0; i < KCC_DROP_NR; i++) {
		/* A reason newer than this table is named by its number. */
		char num[16];

		snprintf(num, sizeof(num), "%d", i);
		fprintf(f, "kcc_samples_dropped_total{%s,reason=\"%s\"} %llu\n",
			lab, drop_names[i] ? drop_names[i] : num,
			(unsigned long long)st.dropped[i]);
	}
	COUNTER("bursts_replayed_total", "Bursts replayed into a forest.", st.bursts_replayed);
	COUNTER("bursts_skipped_total", "Bursts skipped by adaptive bursting.", st.bursts_skipped);
	COUNTER("bursts_joined_total", "Bursts overlapping the previous one.", st.bursts_joined);
	COUNTER("stitch_errors_total", "Bursts inconsistent with the stack.", st.stitch_errors);
	COUNTER("node_drops_total", "Forest node creations refused.", st.node_drops);
	GAUGE("nodes", "Forest nodes in use.", st.nodes);
	GAUGE("memory_bytes", "Forest memory of this session.", st.bytes);
	GAUGE("memory_all_bytes", "Forest memory of every session.", st.bytes_all);
	GAUGE("memory_budget_bytes", "The max_bytes budget the sessions share.", st.max_bytes_all);
	GAUGE("tasks", "Tasks with a forest.", st.tasks);
	GAUGE("tasks_exited", "Tasks with a forest that have exited.", st.tasks_exited);
	GAUGE("serve_start_time_seconds", "When kcc serve started, Unix time.",
	      sv->start_wall_ns / 1000000000ull);
	COUNTER("http_requests_total", "Requests kcc serve answered.", sv->requests);
	COUNTER("http_windows_total", "Profile windows served.", sv->windows);
	COUNTER("http_client_errors_total", "Replies with a 4xx status.", sv->errors_4xx);
	COUNTER("http_server_errors_total", "Replies with a 5xx status.", sv->errors_5xx);
	COUNTER("http_rejected_total", "Connections refused: --max-clients.", sv->rejected);
	COUNTER("http_timeouts_total", "Clients dropped after --timeout.", sv->timeouts);
	if (sv->push_url) {
		fprintf(f, "# HELP kcc_push_windows_total Windows of --push, by outcome: sent (a 2xx reply), failed (no 2xx reply, or not made), skipped (the last one still being sent).\n# TYPE kcc_push_windows_total counter\n");
		fprintf(f, "kcc_push_windows_total{%s,result=\"sent\"} %llu\n", lab,
			(unsigned long long)sv->push_ok);
		fprintf(f, "kcc_push_windows_total{%s,result=\"failed\"} %llu\n", lab,
			(unsigned long long)sv->push_failed);
		fprintf(f, "kcc_push_windows_total{%s,result=\"skipped\"} %llu\n", lab,
			(unsigned long long)sv->push_skipped);
	}
#undef COUNTER
#undef GAUGE
	if (fclose(f)) {
		free(body);
		reply_text(sv, c, 500, "out of memory\n");
		return;
	}
	reply(sv, c, 200, "text/plain; version=0.0.4; charset=utf-8", body, len);
}

static void serve_index(struct server *sv, struct conn *c)
{
	reply_text(sv, c, 200,
		"kcc serve: k-calling-context profiles of a running kcc.ko session\n"
		"\n"
		"/debug/pprof/profile?seconds=N  pprof of the next N seconds (1..%u, default %d):\n"
		"                                samples are k-contexts; values calls, the event, samples\n"
		"/metrics                        the session's counters, Prometheus text format\n",
		sv->max_seconds, SERVE_DEFAULT_SECONDS);
}

/* "seconds=N" of @query (NULL: none): 0 and *@secs, or -EINVAL. */
static int query_seconds(const char *query, uint32_t max, uint32_t *secs)
{
	const char *q = query;

	*secs = SERVE_DEFAULT_SECONDS < max ? SERVE_DEFAULT_SECONDS : max;
	while (q && *q) {
		size_t n = strcspn(q, "&");

		if (!strncmp(q, "seconds=", 8)) {
			char v[16];
			size_t vl = n - 8;

			if (vl == 0 || vl >= sizeof(v))
				return -EINVAL;
			memcpy(v, q + 8, vl);
			v[vl] = 0;
			if (parse_u32(v, secs) || !*secs || *secs > max)
				return -EINVAL;
		}
		q += n + (q[n] == '&');
	}
	return 0;
}

/* A whole request head is in @c: route it. */
static void serve_request(struct server *sv, struct conn *c)
{
	char *line = c->head, *sp1, *sp2, *path, *query;
	uint32_t secs;
	int ret;

	sv->requests++;
	line[strcspn(line, "\r\n")] = 0;
	sp1 = strchr(line, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/1.", 7)) {
		reply_text(sv, c, 400, "malformed request line\n");
		return;
	}
	*sp1 = *sp2 = 0;
	path = sp1 + 1;
	if (strcmp(line, "GET")) {
		reply_text(sv, c, 405, "only GET\n");
		return;
	}
	query = strchr(path, '?');
	if (query)
		*query++ = 0;
	if (!strcmp(path, "/metrics")) {
		serve_metrics(sv, c);
	} else if (!strcmp(path, "/debug/pprof/") || !strcmp(path, "/debug/pprof")) {
		serve_index(sv, c);
	} else if (!strcmp(path, "/debug/pprof/profile")) {
		if (query_seconds(query, sv->max_seconds, &secs)) {
			reply_text(sv, c, 400, "bad seconds: expected an integer 1..%u\n",
				   sv->max_seconds);
			return;
		}
		ret = snap_take(sv, false, &c->base, NULL);
		if (ret) {
			reply_text(sv, c, 503, "kcc serve: no snapshot of the session: %s\n",
				   strerror(-ret));
			return;
		}
		c->base_wall_ns = now_ns(CLOCK_REALTIME);
		c->due_ns = now_ns(CLOCK_MONOTONIC) + secs * 1000000000ull;
		c->state = C_WAIT;
	} else {
		reply_text(sv, c, 404, "not found: %s (see /debug/pprof/)\n", path);
	}
}

static void window_close(struct server *sv, struct conn *c)
{
	char *out = NULL;
	size_t len = 0;
	int ret = window_pprof(sv, c->base, c->base_wall_ns, &out, &len,
			       NULL, NULL);

	snap_free(c->base);
	c->base = NULL;
	if (ret) {
		reply_text(sv, c, 500, "kcc serve: the window cannot be made: %s\n",
			   strerror(-ret));
		return;
	}
	sv->windows++;
	reply(sv, c, 200, "application/octet-stream", out, len);
}

/* ---- --push ------------------------------------------------------------- */

/* URL is http://HOST[:PORT][/PATH]: 0, or -EINVAL (said on stderr). */
static int push_parse_url(struct server *sv, const char *url)
{
	const char *h = url, *end, *colon;
	size_t hl, pl;

	if (strncmp(h, "http://", 7)) {
		fprintf(stderr, "kcc serve: --push '%s': expected http://HOST[:PORT][/PATH] (plain HTTP; put a local proxy in front for TLS)\n",
			url);
		return -EINVAL;
	}
	h += 7;
	end = h + strcspn(h, "/");
	if (*h == '[') {			/* [v6]:port */
		const char *rb = memchr(h, ']', end - h);

		if (!rb)
			goto bad;
		colon = rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
		hl = rb - h - 1;
		h++;
	} else {
		colon = memchr(h, ':', end - h);
		hl = (colon ? colon : end) - h;
	}
	if (!hl || hl >= sizeof(sv->push_host))
		goto bad;
	memcpy(sv->push_host, h, hl);
	sv->push_host[hl] = 0;
	if (colon) {
		uint32_t port;
		char num[8];
		size_t nl = end - colon - 1;

		if (!nl || nl >= sizeof(num))
			goto bad;
		memcpy(num, colon + 1, nl);
		num[nl] = 0;
		if (parse_u32(num, &port) || !port || port > 65535)
			goto bad;
		snprintf(sv->push_port, sizeof(sv->push_port), "%u", port);
	} else {
		strcpy(sv->push_port, "80");
	}
	pl = strlen(end);
	while (pl && end[pl - 1] == '/')
		pl--;
	if (pl + sizeof("/ingest") > sizeof(sv->push_path) ||
	    strcspn(end, "?# \r\n") < strlen(end))
		goto bad;
	memcpy(sv->push_path, end, pl);
	sv->push_path[pl] = 0;
	if (pl < 7 || strcmp(sv->push_path + pl - 7, "/ingest"))
		strcat(sv->push_path, "/ingest");
	return 0;
bad:
	fprintf(stderr, "kcc serve: --push '%s': expected http://HOST[:PORT][/PATH]\n",
		url);
	return -EINVAL;
}

/* @s percent-encoded for a query value, to @f. */
static void url_encode(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '~')
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

/*
 * The request of one window (from and until in whole seconds, both
 * rounded down, so that one window's until is the next one's from):
 * POST /ingest?name=NAME{hostname=..,kernel=..}
 * &from=&until=&format=pprof&spyName=kcc, a multipart/form-data body
 * with the parts "profile" (the gzipped pprof) and "sample_type_config"
 * (JSON), as Pyroscope's HTTP API documents them.
 */
static int push_request(struct server *sv, const char *pb, size_t pb_len,
			const char *types, uint64_t from_ns, uint64_t until_ns,
			char **req, size_t *req_len)
{
	static const char boundary[] = "kcc-serve-window-8f3a1c5e";
	char *body = NULL, *labels = NULL;
	size_t body_len = 0;
	FILE *f;

	if (asprintf(&labels, "%s{hostname=%s,kernel=%s%s%s}", sv->push_name,
		     sv->hostname, sv->release,
		     sv->cgroup ? ",cgroup=" : "",
		     sv->cgroup ? sv->cgroup_path : "") < 0)
		return -ENOMEM;
	f = open_memstream(&body, &body_len);
	if (!f) {
		free(labels);
		return -ENOMEM;
	}
	fprintf(f, "--%s\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"profile.pprof\"\r\n"
		   "Content-Type: application/octet-stream\r\n\r\n", boundary);
	fwrite(pb, 1, pb_len, f);
	fprintf(f, "\r\n--%s\r\nContent-Disposition: form-data; name=\"sample_type_config\"; filename=\"sample_type_config.json\"\r\n"
		   "Content-Type: application/json\r\n\r\n%s\r\n--%s--\r\n",
		boundary, types, boundary);
	if (fclose(f)) {
		free(body);
		free(labels);
		return -ENOMEM;
	}
	f = open_memstream(req, req_len);
	if (!f) {
		free(body);
		free(labels);
		return -ENOMEM;
	}
	fprintf(f, "POST %s?name=", sv->push_path);
	url_encode(f, labels);
	fprintf(f, "&from=%llu&until=%llu&format=pprof&spyName=kcc HTTP/1.1\r\n"
		   "Host: %s:%s\r\nUser-Agent: kcc/%s\r\n"
		   "Content-Type: multipart/form-data; boundary=%s\r\n"
		   "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		(unsigned long long)(from_ns / 1000000000ull),
		(unsigned long long)(until_ns / 1000000000ull),
		sv->push_host, sv->push_port, KCC_VERSION, boundary, body_len);
	fwrite(body, 1, body_len, f);
	free(body);
	free(labels);
	if (fclose(f)) {
		free(*req);
		*req = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * In the child: send @req and read the status line; exit 0 on a 2xx.
 * The whole exchange is bounded by --timeout (SIGALRM ends the child).
 */
static void __attribute__((noreturn))
push_child_send(struct server *sv, const char *req, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	char status[64];
	size_t off = 0;
	ssize_t n;
	int fd = -1, code;

	signal(SIGALRM, SIG_DFL);
	alarm(sv->timeout_s);
	if (getaddrinfo(sv->push_host, sv->push_port, &hints, &ai))
		_exit(2);
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		_exit(3);
	while (off < len) {
		n = write(fd, req + off, len - off);
		if (n <= 0)
			_exit(4);
		off += n;
	}
	off = 0;
	while (off < sizeof(status) - 1 && !memchr(status, '\n', off)) {
		n = read(fd, status + off, sizeof(status) - 1 - off);
		if (n <= 0)
			break;
		off += n;
	}
	status[off] = 0;
	if (sscanf(status, "HTTP/1.%*d %d", &code) != 1)
		_exit(5);
	_exit(code >= 200 && code < 300 ? 0 : 1);
}

/* A child that ended: its outcome counted. */
static void push_reap(struct server *sv, bool wait)
{
	int st;
	pid_t r;

	if (!sv->push_child)
		return;
	r = waitpid(sv->push_child, &st, wait ? 0 : WNOHANG);
	if (r != sv->push_child)
		return;
	sv->push_child = 0;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		sv->push_ok++;
	else
		sv->push_failed++;
}

/* The next window, when due: sent by a child, the loop goes on. */
static void push_tick(struct server *sv, uint64_t now)
{
	struct profile *next = NULL;
	char *pb = NULL, *types = NULL, *req = NULL;
	size_t pb_len = 0, req_len = 0;
	uint64_t wall;
	pid_t pid;
	int ret;

	push_reap(sv, false);
	if (!sv->push_url || now < sv->push_due_ns)
		return;
	sv->push_due_ns = now + sv->push_every * 1000000000ull;
	if (sv->push_child) {
		/* The receiver is slower than the windows: this one waits. */
		sv->push_skipped++;
		return;
	}
	wall = now_ns(CLOCK_REALTIME);
	ret = window_pprof(sv, sv->push_base, sv->push_base_wall_ns, &pb,
			   &pb_len, &types, &next);
	if (ret) {
		sv->push_failed++;
		return;
	}
	ret = push_request(sv, pb, pb_len, types, sv->push_base_wall_ns,
			   wall, &req, &req_len);
	free(pb);
	free(types);
	snap_free(sv->push_base);
	sv->push_base = next;
	sv->push_base_wall_ns = wall;
	if (ret) {
		sv->push_failed++;
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		push_child_send(sv, req, req_len);
	free(req);
	if (pid < 0)
		sv->push_failed++;
	else
		sv->push_child = pid;
}

/* ---- connections -------------------------------------------------------- */

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	snap_free(c->base);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->state = C_FREE;
}

static void conn_read(struct server *sv, struct conn *c)
{
	ssize_t n = read(c->fd, c->head + c->head_len,
			 sizeof(c->head) - 1 - c->head_len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->head_len += n;
	c->head[c->head_len] = 0;
	if (strstr(c->head, "\r\n\r\n") || strstr(c->head, "\n\n")) {
		serve_request(sv, c);
		return;
	}
	if (c->head_len == sizeof(c->head) - 1)
		reply_text(sv, c, 431, "request head above %d bytes\n",
			   SERVE_HEAD_MAX - 1);
}

static void conn_write(struct conn *c)
{
	ssize_t n;

	if (!c->out) {
		conn_close(c);
		return;
	}
	n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->out_off += n;
	if (c->out_off == c->out_len) {
		shutdown(c->fd, SHUT_WR);
		conn_close(c);
	}
}

static void serve_accept(struct server *sv)
{
	static const char busy[] =
		"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	int fd = accept4(sv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	uint32_t i;
	ssize_t n;

	if (fd < 0)
		return;
	for (i = 0; i < sv->max_clients; i++)
		if (sv->conns[i].state == C_FREE)
			break;
	if (i == sv->max_clients) {
		sv->rejected++;
		sv->errors_5xx++;
		/* Best effort: a full socket buffer just loses the reply. */
		n = write(fd, busy, sizeof(busy) - 1);
		(void)n;
		close(fd);
		return;
	}
	sv->conns[i].fd = fd;
	sv->conns[i].state = C_READ;
	sv->conns[i].deadline_ns = now_ns(CLOCK_MONOTONIC) +
				   sv->timeout_s * 1000000000ull;
}

static int serve_loop(struct server *sv)
{
	struct pollfd *pfd = calloc(sv->max_clients + 1, sizeof(*pfd));
	uint32_t i, n;

	if (!pfd)
		return -ENOMEM;
	while (!stop_now) {
		uint64_t now = now_ns(CLOCK_MONOTONIC), next = now + 1000000000ull;
		struct conn *map[sv->max_clients];

		push_tick(sv, now);
		if (sv->push_url && sv->push_due_ns < next)
			next = sv->push_due_ns;

		pfd[0].fd = sv->lfd;
		pfd[0].events = POLLIN;
		n = 1;
		for (i = 0; i < sv->max_clients; i++) {
			struct conn *c = &sv->conns[i];

			if (c->state == C_FREE)
				continue;
			if (c->state == C_WAIT) {
				if (c->due_ns <= now)
					window_close(sv, c);
				else if (c->due_ns < next)
					next = c->due_ns;
				/* A client that hangs up ends its window. */
				if (c->state == C_WAIT) {
					pfd[n].fd = c->fd;
					pfd[n].events = POLLRDHUP;
					map[n - 1] = c;
					n++;
				}
				continue;
			}
			if (c->deadline_ns <= now) {
				sv->timeouts++;
				conn_close(c);
				continue;
			}
			if (c->deadline_ns < next)
				next = c->deadline_ns;
			pfd[n].fd = c->fd;
			pfd[n].events = c->state == C_READ ? POLLIN : POLLOUT;
			map[n - 1] = c;
			n++;
		}
		if (poll(pfd, n, (int)((next - now) / 1000000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			free(pfd);
			return -errno;
		}
		for (i = 1; i < n; i++) {
			struct conn *c = map[i - 1];

			if (!pfd[i].revents)
				continue;
			if (c->state == C_READ)
				conn_read(sv, c);
			else if (c->state == C_WRITE)
				conn_write(c);
			else if (pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR))
				conn_close(c);
		}
		if (pfd[0].revents & POLLIN)
			serve_accept(sv);
	}
	free(pfd);
	return 0;
}

/* ---- set-up ------------------------------------------------------------- */

static bool loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

/*
 * The numeric address ADDR:PORT or [V6]:PORT in @ss (no name lookup:
 * the static kcc of the guests has no NSS).  0 or -EINVAL.
 */
static int parse_listen(const char *s, struct sockaddr_storage *ss,
			socklen_t *len)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN];
	size_t hl = colon ? (size_t)(colon - s) : 0;
	uint32_t port;

	if (!colon || parse_u32(colon + 1, &port) || port > 65535)
		return -EINVAL;
	if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']') {
		s++;
		hl -= 2;
	}
	if (!hl || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = 0;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*len = sizeof(*s4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*len = sizeof(*s6);
		return 0;
	}
	return -EINVAL;
}

/* Listen on ADDR:PORT ([V6]:PORT) or the Unix socket @unix_path. */
static int serve_listen(const char *listen_on, const char *unix_path,
			bool allow_remote)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1, err;

	if (unix_path) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		if (strlen(unix_path) >= sizeof(sun.sun_path)) {
			fprintf(stderr, "kcc: %s: socket path too long\n", unix_path);
			return -EINVAL;
		}
		strcpy(sun.sun_path, unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		unlink(unix_path);
		if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) || listen(fd, 64)) {
			err = -errno;
			fprintf(stderr, "kcc: %s: %s\n", unix_path, strerror(errno));
			close(fd);
			return err == -EINVAL ? -EIO : err;
		}
		return fd;
	}
	if (parse_listen(listen_on, &ss, &sl)) {
		fprintf(stderr, "kcc: --listen '%s': expected ADDRESS:PORT, numeric (127.0.0.1:6060, [::1]:6060)\n",
			listen_on);
		return -EINVAL;
	}
	if (!loopback((struct sockaddr *)&ss) && !allow_remote) {
		fprintf(stderr, "kcc: --listen '%s': not a loopback address: kcc serve has no authentication; give --allow-remote and put an authenticating reverse proxy in front\n",
			listen_on);
		return -EPERM;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 64)) {
		err = -errno;
		fprintf(stderr, "kcc: %s: %s\n", listen_on, strerror(errno));
		if (fd >= 0)
			close(fd);
		/* -EINVAL and -EPERM are the usage errors of cmd_serve(). */
		return err == -EINVAL || err == -EPERM ? -EIO : err;
	}
	return fd;
}

/* The device session, configured and started once. */
static int serve_session(struct server *sv)
{
	struct kcc_version v = { 0 };
	int fd, ret;

	fd = kccdev__open(sv->device, &v);
	if (fd < 0)
		return fd;
	/*
	 * The calls counter kcc record takes by default, not the hybrid:
	 * each window's RESET would drop the calls its pools hold.
	 */
	record__default_calls(&sv->cfg, v.minor, false);
	if (sv->cgroup) {
		sv->cgroup_fd = record__cgroup(sv->device, &v, sv->cgroup,
					       &sv->cfg, sv->cgroup_path,
					       sizeof(sv->cgroup_path));
		if (sv->cgroup_fd < 0) {
			close(fd);
			return sv->cgroup_fd;
		}
	}
	ret = record__configure(fd, sv->device, &v, &sv->cfg);
	if (!ret && ioctl(fd, KCC_IOC_START)) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: start: %s\n", sv->device, strerror(errno));
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static void serve_machine(struct server *sv)
{
	struct utsname u;
	char path[64];
	FILE *f;

	if (gethostname(sv->hostname, sizeof(sv->hostname) - 1))
		strcpy(sv->hostname, "unknown");
	if (!uname(&u))
		snprintf(sv->release, sizeof(sv->release), "%s", u.release);
	if (sv->cfg.target != KCC_TARGET_PID)
		return;
	snprintf(path, sizeof(path), "/proc/%u/comm", sv->cfg.pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(sv->comm, sizeof(sv->comm), f))
			sv->comm[strcspn(sv->comm, "\n")] = 0;
		fclose(f);
	}
	/* Label values are quoted: nothing that would end the quote. */
	for (char *s = sv->comm; *s; s++)
		if (*s == '"' || *s == '\\' || *s < ' ')
			*s = '_';
}

/* Where it listens, the port found when PORT was 0 (tests use that). */
static void serve_announce(struct server *sv, const char *unix_path)
{
	const char *what = sv->nr_files ? "stream files" : sv->device;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (unix_path) {
		fprintf(stderr, "kcc: serving %s on unix:%s\n", what, unix_path);
		return;
	}
	memset(&ss, 0, sizeof(ss));
	getsockname(sv->lfd, (struct sockaddr *)&ss, &sl);
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		port = ntohs(s6->sin6_port);
		fprintf(stderr, "kcc: serving %s on http://[%s]:%u/\n", what, host, port);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		port = ntohs(s4->sin_port);
		fprintf(stderr, "kcc: serving %s on http://%s:%u/\n", what, host, port);
	}
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "unix", required_argument, NULL, OPT_UNIX },
		{ "allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE },
		{ "max-seconds", required_argument, NULL, OPT_MAX_SECONDS },
		{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "stream-file", required_argument, NULL, OPT_STREAM_FILE },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "push-every", required_argument, NULL, OPT_PUSH_EVERY },
		{ "push-name", required_argument, NULL, OPT_PUSH_NAME },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct server sv = {
		.cfg = {
			.size = sizeof(struct kcc_config),
			.k = 3,
			.source = KCC_SOURCE_AUTO,
			.target = KCC_TARGET_ALL,
		},
		.device = KCC_DEVICE,
		.dev = -1,
		.argv = argv,
		.max_seconds = 300,
		.max_clients = 16,
		.timeout_s = 10,
		.lfd = -1,
		.cgroup_fd = -1,
		.push_every = SERVE_PUSH_EVERY,
		.push_name = "kcc",
	};
	const char *listen_on = "127.0.0.1:6060", *unix_path = NULL;
	bool allow_remote = false, have_p = false, have_a = false;
	bool have_c = false, have_f = false;
	uint32_t x, i;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":e:c:F:k:p:aG:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (record__parse_event(optarg, &sv.cfg))
				return KCC_EXIT_USAGE;
			break;
		case 'c':
			if (parse_u32(optarg, &x) || !x)
				return usage_error(CMD, "bad -c '%s': expected a positive period", optarg);
			sv.cfg.sample_period = x;
			sv.cfg.flags &= ~KCC_CFG_FREQ;
			have_c = true;
			break;
		case 'F':
			if (record__parse_freq(CMD, optarg, &sv.cfg))
				return KCC_EXIT_USAGE;
			have_f = true;
			break;
		case 'k':
			if (parse_k(optarg, &sv.cfg.k) || !sv.cfg.k ||
			    (sv.cfg.k > KCC_K_MAX && sv.cfg.k != KCC_K_INF))
				return usage_error(CMD, "bad -k '%s': expected 1..%d or 'inf'",
						   optarg, KCC_K_MAX);
			break;
		case OPT_SOURCE:
			if (!strcmp(optarg, "auto"))
				sv.cfg.source = KCC_SOURCE_AUTO;
			else if (!strcmp(optarg, "lbr"))
				sv.cfg.source = KCC_SOURCE_LBR;
			else if (!strcmp(optarg, "fp"))
				sv.cfg.source = KCC_SOURCE_FP;
			else
				return usage_error(CMD, "bad --source '%s': expected auto, lbr or fp",
						   optarg);
			break;
		case 'p':
			if (parse_u32(optarg, &x) || !x || x > 0x7fffffff)
				return usage_error(CMD, "bad -p '%s': expected a process id", optarg);
			sv.cfg.pid = x;
			sv.cfg.target = KCC_TARGET_PID;
			have_p = true;
			break;
		case 'a':
			have_a = true;
			break;
		case 'G':
			sv.cgroup = optarg;
			break;
		case OPT_DEVICE:
			sv.device = optarg;
			break;
		case OPT_LISTEN:
			listen_on = optarg;
			break;
		case OPT_UNIX:
			unix_path = optarg;
			break;
		case OPT_ALLOW_REMOTE:
			allow_remote = true;
			break;
		case OPT_MAX_SECONDS:
			if (parse_u32(optarg, &sv.max_seconds) || !sv.max_seconds ||
			    sv.max_seconds > 86400)
				return usage_error(CMD, "bad --max-seconds '%s': expected 1..86400", optarg);
			break;
		case OPT_MAX_CLIENTS:
			if (parse_u32(optarg, &sv.max_clients) || !sv.max_clients ||
			    sv.max_clients > 1024)
				return usage_error(CMD, "bad --max-clients '%s': expected 1..1024", optarg);
			break;
		case OPT_TIMEOUT:
			if (parse_u32(optarg, &sv.timeout_s) || !sv.timeout_s ||
			    sv.timeout_s > 3600)
				return usage_error(CMD, "bad --timeout '%s': expected 1..3600 seconds", optarg);
			break;
		case OPT_STREAM_FILE:
			if (sv.nr_files == SERVE_MAX_FILES)
				return usage_error(CMD, "more than %d --stream-file", SERVE_MAX_FILES);
			sv.files[sv.nr_files++] = optarg;
			break;
		case OPT_PUSH:
			sv.push_url = optarg;
			break;
		case OPT_PUSH_EVERY:
			if (parse_u32(optarg, &sv.push_every) || !sv.push_every ||
			    sv.push_every > 3600)
				return usage_error(CMD, "bad --push-every '%s': expected 1..3600 seconds", optarg);
			break;
		case OPT_PUSH_NAME:
			if (!*optarg || strcspn(optarg, "{}=,\"") < strlen(optarg) ||
			    strlen(optarg) > 128)
				return usage_error(CMD, "bad --push-name '%s': expected 1..128 characters, none of {}=,\"",
						   optarg);
			sv.push_name = optarg;
			break;
		case 'h':
			serve_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (optind < argc)
		return usage_error(CMD, "unexpected argument '%s'", argv[optind]);
	if (have_p && have_a)
		return usage_error(CMD, "give one of -p PID or -a");
	if (sv.cgroup && (have_p || sv.nr_files))
		return usage_error(CMD, "-G filters the system-wide session: not with -p or --stream-file");
	if (sv.nr_files && have_p)
		return usage_error(CMD, "--stream-file replaces the session: not with -p");
	if (have_c && have_f)
		return usage_error(CMD, "give one of -c PERIOD or -F FREQ");
	if (sv.push_url && push_parse_url(&sv, sv.push_url))
		return KCC_EXIT_USAGE;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	serve_machine(&sv);
	sv.conns = calloc(sv.max_clients, sizeof(*sv.conns));
	if (!sv.conns)
		return KCC_EXIT_ERROR;
	for (i = 0; i < sv.max_clients; i++)
		sv.conns[i].fd = -1;
	sv.lfd = serve_listen(listen_on, unix_path, allow_remote);
	if (sv.lfd < 0) {
		free(sv.conns);
		return sv.lfd == -EPERM || sv.lfd == -EINVAL ? KCC_EXIT_USAGE :
		       KCC_EXIT_ERROR;
	}
	if (!sv.nr_files) {
		sv.dev = serve_session(&sv);
		if (sv.dev < 0) {
			ret = sv.dev;
			goto cleanup;
		}
	}
	sv.start_wall_ns = now_ns(CLOCK_REALTIME);
	if (sv.push_url) {
		ret = snap_take(&sv, false, &sv.push_base, NULL);
		if (ret) {
			fprintf(stderr, "kcc serve: --push: no snapshot of the session: %s\n",
				strerror(-ret));
			goto cleanup;
		}
		sv.push_base_wall_ns = now_ns(CLOCK_REALTIME);
		sv.push_due_ns = now_ns(CLOCK_MONOTONIC) +
				 sv.push_every * 1000000000ull;
	}
	serve_announce(&sv, unix_path);
	ret = serve_loop(&sv);
cleanup:
	if (sv.push_child) {
		kill(sv.push_child, SIGTERM);
		push_reap(&sv, true);
	}
	snap_free(sv.push_base);
	for (i = 0; i < sv.max_clients; i++)
		if (sv.conns[i].state != C_FREE)
			conn_close(&sv.conns[i]);
	free(sv.conns);
	if (sv.dev >= 0) {
		if (ioctl(sv.dev, KCC_IOC_STOP) && errno != EINVAL)
			fprintf(stderr, "kcc: %s: stop: %s\n", sv.device, strerror(errno));
		close(sv.dev);
	}
	close(sv.lfd);
	if (unix_path)
		unlink(unix_path);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
