// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-import.c - kcc import: a kcc profile from a perf.data file, for
 * machines where kcc.ko cannot be loaded.  Each sample of perf record -j
 * any_call,any_ret,u,save_type --call-graph fp becomes the struct
 * kcc_sample kcc.ko would have captured (the user part of the callchain
 * is the frame-pointer walk, the branch stack the burst, the period the
 * delta) and goes through the same lbr/ stitching and k-SF code, one
 * forest per thread; the executable mappings of the file name the
 * routines as kcc record's do.
 *
 * perf.data rather than perf script output: the binary records keep the
 * branch types (save_type), the period and the full callchain without
 * depending on perf script's text format, which changes between perf
 * versions.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "evspec.h"
#include "perfdata.h"
#include "profile.h"
#include "samples.h"
#include "stream.h"

#define CMD "kcc import"

/* perf's default kernel.perf_event_max_stack: a walk this long was cut. */
#define IMPORT_MAX_STACK_DEF	127

static void import_usage(void)
{
	printf(
"usage: kcc import [-k K] [-o FILE] [--calls-event EVENT] PERF.DATA\n"
"\n"
"Turn a perf.data file into a kcc profile, through the stitching and\n"
"k-SF code kcc.ko runs: the path for machines where the module cannot be\n"
"loaded.  Record with branch types and frame-pointer callchains:\n"
"\n"
"  perf record -e EVENT -j any_call,any_ret,u,save_type --call-graph fp\n"
"\n"
"With two events (-e MISSES -e CALLS), name the calls event: its samples\n"
"give the bursts (call counts), the other event's samples charge their\n"
"events to the sampled stack, as kcc record --calls-event does.\n"
"\n"
"With a calls counter read at every sample of the event (a group with\n"
"leader sampling, -e '{EVENT,CALLS}:S'), name the counter: each burst is\n"
"joined or weighted by the calls since the thread's previous sample, as\n"
"kcc record counts them.  Record with --per-thread (one counter a\n"
"thread: per-CPU counters give no count since the previous sample) and,\n"
"before Linux 6.12, --no-inherit (no group reads of inherited events).\n"
"\n"
"Options:\n"
"  -k K                 context length kept, 1..64 or inf (default 3)\n"
"  -o FILE              output profile (default kcc.data; '-': stdout)\n"
"  --calls-event EVENT  the calls event or counter of a two-event file,\n"
"                       named as perf recorded it or as for kcc record -e\n"
"                       (kcc_lbr/calls/, r00c4, ...)\n"
"  -h, --help           this help\n"
"\n"
"EXAMPLES\n"
"  perf record -e cycles -j any_call,any_ret,u,save_type --call-graph fp -- ./a.out\n"
"  kcc import perf.data && kcc report\n"
"  perf record -e kcc_lbr/misses/ -e kcc_lbr/calls/ -j any_call,any_ret,u,save_type \\\n"
"       --call-graph fp -- ./a.out\n"
"  kcc import --calls-event kcc_lbr/calls/ -o a.kcc perf.data\n"
"  perf record --per-thread --no-inherit -e '{cache-misses,br_inst_retired.near_call}:S' \\\n"
"       -j any_call,any_ret,u,save_type --call-graph fp -- ./a.out\n"
"  kcc import --calls-event br_inst_retired.near_call perf.data\n");
}

struct itask {
	uint32_t tid, pid;
	char comm[16];
	bool exited;
	uint64_t samples;
	uint64_t counted;	/* the calls counter's value at the last sample */
	uint64_t counted_id;	/* and its id */
	struct stitcher sr;
};

struct import {
	struct perfdata pd;
	uint32_t k;
	int calls_ev;		/* event of the bursts */
	int main_ev;		/* event charged; == calls_ev with one event */
	int counter_ev;		/* the calls counter read at samples, or -1 */
	uint64_t unread;	/* samples whose read has no counter value */
	struct itask *tasks;
	uint32_t nr_tasks, cap_tasks;
	struct stream_map *maps;
	uint32_t nr_maps, cap_maps;
	struct sample_buf sb;
	uint64_t samples, processed, no_stack, lbr_depth;
	uint64_t cut;		/* walks cut at an unmapped return address */
	uint32_t max_stack;
};

static struct itask *import_task(struct import *im, uint32_t pid, uint32_t tid)
{
	struct stitcher_opts so = { .k = im->k, .seed = 1, .no_join = true };
	struct itask *t;
	uint32_t i;

	for (i = im->nr_tasks; i > 0; i--)
		if (im->tasks[i - 1].tid == tid)
			return &im->tasks[i - 1];
	if (im->nr_tasks == im->cap_tasks) {
		uint32_t cap = im->cap_tasks ? 2 * im->cap_tasks : 16;

		t = realloc(im->tasks, cap * sizeof(*t));
		if (!t)
			return NULL;
		im->tasks = t;
		im->cap_tasks = cap;
	}
	t = &im->tasks[im->nr_tasks];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	if (stitcher__init(&t->sr, &so))
		return NULL;
	im->nr_tasks++;
	return t;
}

static int import_map(struct import *im, const struct perfdata_rec *r)
{
	struct stream_map *m;

	if (!r->m.len)
		return 0;
	if (im->nr_maps == im->cap_maps) {
		uint32_t cap = im->cap_maps ? 2 * im->cap_maps : 64;

		m = realloc(im->maps, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		im->maps = m;
		im->cap_maps = cap;
	}
	m = &im->maps[im->nr_maps];
	m->path = strdup(r->m.path);
	if (!m->path)
		return -ENOMEM;
	m->tgid = r->pid;
	m->image = 0;	/* perf data has no images: one per pid */
	m->start = r->m.start;
	m->end = r->m.start + r->m.len;
	m->pgoff = r->m.pgoff;
	m->ino = r->m.ino;
	im->nr_maps++;
	return 0;
}

/*
 * Whether @addr lies in an executable mapping of process @pid: 1, 0, or
 * -1 when the file has no mapping of @pid at all (nothing to judge by).
 */
static int import_mapped(const struct import *im, uint32_t pid, uint64_t addr)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < im->nr_maps; i++) {
		const struct stream_map *m = &im->maps[i];

		if (m->tgid != pid)
			continue;
		if (addr >= m->start && addr < m->end)
			return 1;
		any = true;
	}
	return any ? 0 : -1;
}

/*
 * A group read at the sample (perf record -e '{EVENT,CALLS}:S'): the
 * calls its thread retired since its previous sample, the difference
 * of the counter's values, as kcc.ko reads its calls counter at every
 * sample (KCC_SAMPLE_CALLS, saturated as there).  A read without the
 * counter's value leaves the sample uncounted (calls_unread).
 */
static void import_counted(struct import *im, struct itask *t,
			   const struct perfdata_rec *r)
{
	uint64_t n, prev = t->counted;
	bool other;
	uint32_t i;

	for (i = 0; i < r->s.nr_read; i++)
		if (r->s.read_ev[i] == im->counter_ev)
			break;
	if (i == r->s.nr_read) {
		im->unread++;
		return;
	}
	/*
	 * Another counter of the thread (perf's per-CPU events: record
	 * with --per-thread) counted from elsewhere: no count here.
	 */
	other = t->samples && r->s.read_id[i] != t->counted_id;
	t->counted = r->s.read_val[i];
	t->counted_id = r->s.read_id[i];
	if (other || t->counted < prev) {
		im->unread++;
		return;
	}
	n = t->counted - prev;
	im->sb.hdr.flags |= KCC_SAMPLE_CALLS;
	if (n > UINT32_MAX) {
		n = UINT32_MAX;
		im->sb.hdr.flags |= KCC_SAMPLE_CALLS_SAT;
	}
	im->sb.hdr.calls = (uint32_t)n;
}

/*
 * One perf sample as kcc.ko would have captured it: the user part of the
 * callchain (the sampled ip, then the return addresses) and, for the
 * burst event, the branch stack; the calls event charges no events.
 */
static int import_sample(struct import *im, const struct perfdata_rec *r)
{
	uint64_t i, n = 0, nbr = 0, start = r->s.nr_chain;
	bool calls = (int)r->s.ev == im->calls_ev;
	uint32_t flags = 0;
	struct itask *t;
	int ret;

	if ((int)r->s.ev != im->calls_ev && (int)r->s.ev != im->main_ev)
		return 0;
	im->samples++;
	for (i = 0; i < r->s.nr_chain; i++)
		if (r->s.chain[i] == PERF_CONTEXT_USER) {
			start = i + 1;
			break;
		}
	while (start + n < r->s.nr_chain && r->s.chain[start + n] < PERF_CONTEXT_MAX)
		n++;
	if (!n) {
		im->no_stack++;
		return 0;
	}
	/*
	 * perf's frame-pointer walk goes on through frames a frameless
	 * routine left (code bytes read as return addresses) where kcc.ko's
	 * stops; cut it, as kcc.ko would, at the first return address in no
	 * executable mapping.
	 */
	for (i = 1; i < n; i++)
		if (!import_mapped(im, r->pid, r->s.chain[start + i])) {
			n = i;
			flags |= KCC_SAMPLE_TRUNCATED;
			im->cut++;
			break;
		}
	if (n >= im->max_stack)
		flags |= KCC_SAMPLE_TRUNCATED;
	if (n > KCC_INJECT_MAX_STACK) {
		n = KCC_INJECT_MAX_STACK;
		flags |= KCC_SAMPLE_TRUNCATED;
	}
	t = import_task(im, r->pid, r->tid);
	if (!t)
		return -ENOMEM;
	sample_buf__init(&im->sb, flags, calls && im->calls_ev != im->main_ev ?
			 0 : r->s.period);
	if (im->counter_ev >= 0)
		import_counted(im, t, r);
	/* A counted burst of the calls event: at a retired call, as kcc.ko flags it. */
	if (calls && im->calls_ev != im->main_ev &&
	    (im->sb.hdr.flags & KCC_SAMPLE_CALLS))
		im->sb.hdr.flags |= KCC_SAMPLE_CALLS_DRAW;
	for (i = 0; i < n; i++)
		sample_buf__push_stack(&im->sb, r->s.chain[start + i]);
	if (calls) {
		nbr = r->s.nr_br < KCC_INJECT_MAX_BRANCHES ? r->s.nr_br :
		      KCC_INJECT_MAX_BRANCHES;
		if (r->s.nr_br > im->lbr_depth)
			im->lbr_depth = r->s.nr_br;
	}
	for (i = 0; i < nbr; i++)
		sample_buf__push_branch(&im->sb, r->s.br[i].from, r->s.br[i].to,
					kcc_br_kind_perf(r->s.br[i].type));
	ret = stitcher__sample(&t->sr, &im->sb.hdr);
	if (ret)
		return ret;
	t->samples++;
	im->processed++;
	return 0;
}

/* Which events of the file drive the bursts and the events. */
static int import_events(struct import *im, const char *calls_spec)
{
	const struct perfdata *pd = &im->pd;
	char err[EVSPEC_ERR_LEN];
	struct evspec es;
	uint32_t i;

	if (!calls_spec) {
		if (pd->nr_ev != 1) {
			fprintf(stderr, "kcc: %u events in the file: name the calls event with --calls-event\n",
				pd->nr_ev);
			return -EINVAL;
		}
		im->calls_ev = im->main_ev = 0;
	} else {
		/* The name perf recorded, else the event it encodes here. */
		im->calls_ev = -1;
		for (i = 0; i < pd->nr_ev && im->calls_ev < 0; i++)
			if (!strcmp(pd->ev[i].name, calls_spec))
				im->calls_ev = i;
		if (im->calls_ev < 0 &&
		    evspec__parse(&es, calls_spec, NULL, err)) {
			fprintf(stderr, "kcc: %s (and no event of the file has that name)\n",
				err);
			return -EINVAL;
		}
		for (i = 0; i < pd->nr_ev && im->calls_ev < 0; i++) {
			const struct perf_event_attr *a = &pd->ev[i].attr;

			if (a->type == es.type && a->config == es.config &&
			    a->config1 == es.config1)
				im->calls_ev = i;
		}
		if (im->calls_ev < 0) {
			fprintf(stderr, "kcc: --calls-event %s: no such event in the file\n",
				calls_spec);
			return -EINVAL;
		}
		if (pd->nr_ev > 2) {
			fprintf(stderr, "kcc: %u events in the file: kcc takes one, or one and the calls event\n",
				pd->nr_ev);
			return -EINVAL;
		}
		im->main_ev = pd->nr_ev == 2 ? 1 - im->calls_ev : im->calls_ev;
		/*
		 * A calls event that never samples is a counter read at
		 * the other event's samples (a group with :S): the bursts
		 * are that event's, each with the calls since the previous.
		 */
		if (pd->nr_ev == 2 && !pd->ev[im->calls_ev].attr.sample_period) {
			const struct perf_event_attr *m = &pd->ev[im->main_ev].attr;

			if (!(m->sample_type & PERF_SAMPLE_READ) ||
			    !(m->read_format & PERF_FORMAT_ID)) {
				fprintf(stderr, "kcc: --calls-event %s counts without sampling, and %s has no group read: record with -e '{%s,%s}:S'\n",
					calls_spec, pd->ev[im->main_ev].name,
					pd->ev[im->main_ev].name, calls_spec);
				return -EINVAL;
			}
			im->counter_ev = im->calls_ev;
			im->calls_ev = im->main_ev;
		}
	}
	for (i = 0; i < pd->nr_ev; i++) {
		const struct perf_event_attr *a = &pd->ev[i].attr;
		const char *what = NULL;

		if (!(a->sample_type & PERF_SAMPLE_TID))
			what = "thread ids (PERF_SAMPLE_TID)";
		else if (!(a->sample_type & PERF_SAMPLE_CALLCHAIN))
			what = "callchains: record with --call-graph fp";
		else if ((int)i == im->calls_ev &&
			 !(a->sample_type & PERF_SAMPLE_BRANCH_STACK))
			what = "branch stacks: record with -j any_call,any_ret,u,save_type";
		else if ((int)i == im->calls_ev &&
			 !(a->branch_sample_type & PERF_SAMPLE_BRANCH_TYPE_SAVE))
			what = "branch types: record with -j any_call,any_ret,u,save_type";
		if (what) {
			fprintf(stderr, "kcc: event %s has no %s\n",
				pd->ev[i].name[0] ? pd->ev[i].name : "0", what);
			return -EINVAL;
		}
	}
	im->max_stack = pd->ev[im->calls_ev].attr.sample_max_stack ?:
			IMPORT_MAX_STACK_DEF;
	return 0;
}

static void import_desc(struct kcc_metric_desc *d, const struct perfdata_event *e)
{
	memset(d, 0, sizeof(*d));
	d->type = e->attr.type;
	d->config = e->attr.config;
	if (e->name[0])
		/* Cut to the field, as kcc record cuts -e names. */
		memcpy(d->name, e->name, strnlen(e->name, sizeof(d->name) - 1));
	else
		snprintf(d->name, sizeof(d->name), "type%u/%#" PRIx64,
			 e->attr.type, (uint64_t)e->attr.config);
}

/* The stream kcc.ko would have given for the same run. */
static int import_stream(struct import *im, struct sbuf *b)
{
	struct kcc_metric_desc desc[KCC_NR_CTRS];
	struct kcc_stream_header h;
	struct kcc_stitch_calls calls = { 0 };
	bool two = im->calls_ev != im->main_ev;
	bool counter = im->counter_ev >= 0;
	uint32_t i;
	int ret;

	stream__default_header(&h, desc, im->k, KCC_SOURCE_LBR,
			       KCC_HDR_CALLS_VALID | KCC_HDR_IMPORTED |
			       (two ? KCC_HDR_CALLS_EVENT : 0) |
			       (counter ? KCC_HDR_CALLS_COUNTER : 0));
	h.lbr_depth = im->lbr_depth;
	h.sample_period = im->pd.ev[im->main_ev].attr.sample_period;
	h.status.samples = im->samples;
	h.status.processed = im->processed;
	h.status.dropped[KCC_DROP_NO_STACK] = im->no_stack;
	import_desc(&desc[KCC_CTR_EVENTS], &im->pd.ev[im->main_ev]);
	if (two || counter) {
		int c = counter ? im->counter_ev : im->calls_ev;

		desc[KCC_CTR_CALLS].type = im->pd.ev[c].attr.type;
		desc[KCC_CTR_CALLS].config = im->pd.ev[c].attr.config;
	}
	h.status.calls_unread = im->unread;
	for (i = 0; i < im->nr_tasks; i++) {
		const struct kcc_stitch *st = &im->tasks[i].sr.st;

		stitcher__finish(&im->tasks[i].sr);
		kcc_stitch_calls_add(&calls, &st->calls);
		h.status.bursts_replayed += st->bursts_replayed;
		h.status.branches += st->branches;
		h.status.stitch_errors += st->stitch_errors;
		h.status.nodes += im->tasks[i].sr.pool.f.count;
		h.status.tasks += im->tasks[i].samples != 0;
	}
	kcc_stitch_calls_export(&h.status, &calls);
	ret = stream__write_header(b, &h, desc);
	for (i = 0; i < im->nr_tasks && !ret; i++) {
		struct itask *it = &im->tasks[i];
		struct stream_task t = {
			.pid = it->tid, .tgid = it->pid,
			.flags = it->exited ? KCC_TASK_EXITED : 0,
			.samples = it->samples,
			.stitch_errors = it->sr.st.stitch_errors,
			.ksf = it->sr.pool,
		};

		/* kcc.ko has a forest only for the sampled threads. */
		if (!it->samples)
			continue;
		memcpy(t.comm, it->comm, sizeof(it->comm));
		ret = stream__write_task(b, &t, KCC_NR_CTRS);
	}
	/* [vdso], //anon, ...: no file to read symbols from. */
	for (i = 0; i < im->nr_maps && !ret; i++)
		if (im->maps[i].path[0] == '/')
			ret = stream__write_map(b, &im->maps[i]);
	return ret ? ret : stream__write_end(b);
}

static int import_read(struct import *im)
{
	struct perfdata_rec r;
	struct itask *t;
	int ret;

	while ((ret = perfdata__next(&im->pd, &r)) > 0) {
		switch (r.kind) {
		case PERFDATA_SAMPLE:
			ret = import_sample(im, &r);
			break;
		case PERFDATA_MMAP:
			ret = import_map(im, &r);
			break;
		case PERFDATA_COMM:
			t = import_task(im, r.pid, r.tid);
			if (t)
				snprintf(t->comm, sizeof(t->comm), "%s", r.comm);
			ret = t ? 0 : -ENOMEM;
			break;
		case PERFDATA_EXIT:
			t = import_task(im, r.pid, r.tid);
			if (t)
				t->exited = true;
			ret = t ? 0 : -ENOMEM;
			break;
		default:
			ret = 0;
			break;
		}
		if (ret)
			return ret;
	}
	return ret;
}

static void import_exit(struct import *im)
{
	uint32_t i;

	for (i = 0; i < im->nr_tasks; i++)
		stitcher__exit(&im->tasks[i].sr);
	free(im->tasks);
	for (i = 0; i < im->nr_maps; i++)
		free(im->maps[i].path);
	free(im->maps);
	perfdata__exit(&im->pd);
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "calls-event", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "kcc.data", *calls = NULL, *path;
	struct import im = { .k = 3, .counter_ev = -1 };
	struct sbuf b = { 0 };
	struct profile p;
	void *buf = NULL;
	size_t len;
	int c, ret;

	while ((c = getopt_long(argc, argv, ":k:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (parse_k(optarg, &im.k) || !im.k ||
			    (im.k > KCC_K_MAX && im.k != KCC_K_INF))
				return usage_error(CMD, "bad -k '%s': expected 1..%d or 'inf'",
						   optarg, KCC_K_MAX);
			break;
		case 'o':
			output = optarg;
			break;
		case 'C':
			calls = optarg;
			break;
		case 'h':
			import_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	if (usage_one_operand(CMD, argc, argv, "perf.data file", &path))
		return KCC_EXIT_USAGE;
	if (!strcmp(output, "-") && isatty(1))
		return usage_error(CMD, "refusing to write a binary profile to a terminal");

	ret = read_whole_file(path, STREAM_MAX_BYTES, false, &buf, &len);
	if (ret)
		return KCC_EXIT_ERROR;
	profile__init(&p);
	ret = perfdata__open(&im.pd, buf, len);
	if (ret == -EINVAL)
		fprintf(stderr, "kcc: %s: %s\n", path, im.pd.err);
	if (!ret)
		ret = import_events(&im, calls);
	if (!ret) {
		ret = import_read(&im);
		if (ret == -EINVAL)
			fprintf(stderr, "kcc: %s: %s\n", path, im.pd.err);
	}
	if (!ret)
		ret = import_stream(&im, &b);
	if (!ret) {
		ret = profile__add_stream(&p, b.p, b.len, path);
		b.p = NULL;
	}
	if (!ret) {
		ret = profile__add_objects(&p, 0);
		if (ret > 0)
			fprintf(stderr, "kcc: warning: %d mapped objects could not be read: their routines stay unnamed\n",
				ret);
		ret = ret < 0 ? ret : record__write_profile(&p, output);
	}
	if (!ret)
		fprintf(stderr, "kcc: wrote %s (%u tasks, %" PRIu64 " of %" PRIu64 " samples, %" PRIu64 " without a user stack, %" PRIu64 " walks cut at an unmapped address)\n",
			output, p.runs[0].s.nr_tasks, im.processed, im.samples,
			im.no_stack, im.cut);
	else if (ret == -ENOMEM)
		fprintf(stderr, "kcc: %s: out of memory\n", path);
	sbuf__exit(&b);
	profile__exit(&p);
	import_exit(&im);
	free(buf);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
