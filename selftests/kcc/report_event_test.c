// SPDX-License-Identifier: GPL-2.0
/*
 * report_event_test.c - the event line of kcc report's header: which
 * event produced the samples (its name and encoding, config1/config2 of
 * ABI 1.1) and how much of the time it could sample (descheduled time,
 * throttles, events in the ERROR state), from the status a stream
 * carries.  Streams come from stream__from_trace() with the status and
 * the event descriptor set here; the expected lines follow from those
 * values and the format documented in Documentation/kcc-abi.rst.
 *
 * The status grows by appending, and with it the stream header: a stream
 * of ABI 1.0 (status up to __reserved) and one of a newer module (status
 * longer than this reader's) must both parse, descriptors and tasks
 * intact, with the fields a 1.0 stream lacks read as zero.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "report_fmt.h"

struct ev_case {
	const char *what;
	uint32_t type;
	uint64_t config, config2;
	const char *name;
	uint64_t enabled, running, throttles;
	uint32_t nr, errors;
	const char *line;	/* expected, NULL: no event line */
};

static const struct ev_case cases[] = {
	{ "all the time running: encoding only", 0, 3, 0, "cache-misses",
	  2000000000ull, 2000000000ull, 0, 2, 0,
	  "# event: cache-misses (type 0, config 0x3), 2 perf events, enabled 2.000 s, running 2.000 s" },
	{ "descheduled a quarter, throttled, one in ERROR, config2", 9, 1, 7,
	  "kcc_lbr/calls/", 2000000000ull, 1500000000ull, 3, 2, 1,
	  "# event: kcc_lbr/calls/ (type 9, config 0x1, config1 0, config2 0x7), 2 perf events, enabled 2.000 s, running 1.500 s (25.0% descheduled: fewer samples), throttled 3 times (each until the next tick), 1 never scheduled (ERROR state)" },
	{ "injected samples: no event line", ~0u, 0, 0, "events",
	  0, 0, 0, 0, 0, NULL },
};

static int one_trace(struct trace *t)
{
	static const char *const names[] = { "main", "work" };
	uint32_t id, i;

	if (trace__init(t))
		return -1;
	t->ev = malloc(4 * sizeof(*t->ev));
	if (!t->ev)
		return -1;
	for (i = 0; i < 2; i++)
		if (symtab__intern(&t->syms, names[i], strlen(names[i]), &id))
			return -1;
	t->ev[t->nr++] = 0;
	t->ev[t->nr++] = 1;
	t->ev[t->nr++] = TRACE_RET;
	t->ev[t->nr++] = TRACE_RET;
	t->calls = t->returns = 2;
	t->max_depth = 2;
	return 0;
}

/* The "# event:" line of the report of @c, or "" when there is none. */
static int event_line(const struct trace *t, const struct ev_case *c,
		      char *line, size_t len)
{
	struct stream_gen g = {
		.k = 2, .threads = 1, .tgid = 7, .comm = "test",
		.base = 0x400000, .jitter = 1,
	};
	struct report_opts o = { .name = "test", .sort = -1 };
	struct kcc_stream_header *h;
	struct kcc_metric_desc *d;
	struct sbuf b = { 0 };
	struct profile p;
	struct report r;
	char *mem = NULL, *at, *nl;
	size_t mlen = 0;
	FILE *f;
	int ret;

	line[0] = '\0';
	ret = stream__from_trace(&b, t, &g);
	if (ret)
		return ret;
	h = (struct kcc_stream_header *)b.p;
	d = (struct kcc_metric_desc *)(h + 1);
	d[KCC_CTR_EVENTS].type = c->type;
	d[KCC_CTR_EVENTS].config = c->config;
	snprintf(d[KCC_CTR_EVENTS].name, sizeof(d->name), "%s", c->name);
	h->status.ev_config2 = c->config2;
	h->status.ev_enabled_ns = c->enabled;
	h->status.ev_running_ns = c->running;
	h->status.ev_throttles = c->throttles;
	h->status.ev_nr = c->nr;
	h->status.ev_errors = c->errors;

	profile__init(&p);
	ret = profile__add_stream(&p, b.p, b.len, "test");
	if (ret)
		goto out;
	ret = report__build(&r, &p, &o);
	f = open_memstream(&mem, &mlen);
	if (!ret && f)
		ret = report__print(&r, f);
	if (f)
		fclose(f);
	report__exit(&r);
	if (!ret && mem && (at = strstr(mem, "# event: "))) {
		nl = strchr(at, '\n');
		snprintf(line, len, "%.*s", nl ? (int)(nl - at) : (int)strlen(at),
			 at);
	}
out:
	free(mem);
	profile__exit(&p);
	return ret;
}

/*
 * The stream of @t with its status cut to ABI 1.0 (@delta < 0 bytes) or
 * grown by @delta zero bytes, parsed: 0 when the descriptors, the task
 * and its nodes come through and the ABI 1.1 fields read as zero.
 */
static int resized(const struct trace *t, long delta)
{
	struct stream_gen g = {
		.k = 2, .threads = 1, .tgid = 7, .comm = "test",
		.base = 0x400000, .jitter = 1,
	};
	size_t cut = offsetof(struct kcc_stream_header, status) +
		     offsetof(struct kcc_status, ev_config1);
	struct kcc_stream_header *h;
	struct sbuf b = { 0 };
	struct profile p;
	uint8_t *nb;
	size_t nlen;
	int ret;

	ret = stream__from_trace(&b, t, &g);
	if (ret)
		return ret;
	h = (struct kcc_stream_header *)b.p;
	h->status.ev_nr = 5;	/* must vanish with a 1.0 status */
	if (delta < 0)
		delta = -(long)(sizeof(*h) - cut);
	nlen = b.len + delta;
	nb = calloc(1, nlen);
	if (!nb)
		return -ENOMEM;
	/* The header up to the cut, the (absent or zero) tail, the rest. */
	memcpy(nb, b.p, cut);
	memcpy(nb + cut + (sizeof(*h) - cut) + delta, b.p + sizeof(*h),
	       b.len - sizeof(*h));
	if (delta > 0)
		memcpy(nb + cut, b.p + cut, sizeof(*h) - cut);
	((struct kcc_stream_header *)nb)->header_size += delta;
	sbuf__exit(&b);
	profile__init(&p);
	ret = profile__add_stream(&p, nb, nlen, "resized");
	if (!ret && (strcmp(p.runs[0].s.desc[KCC_CTR_CALLS].name, "calls") ||
		     p.runs[0].s.nr_tasks != 1 ||
		     p.runs[0].s.hdr.status.ev_nr != (delta < 0 ? 0 : 5)))
		ret = -EINVAL;
	profile__exit(&p);
	return ret;
}

int main(void)
{
	char line[512];
	struct trace t;
	size_t i;

	ksft_print_header();
	ksft_set_plan(sizeof(cases) / sizeof(cases[0]) + 2);
	if (one_trace(&t))
		ksft_exit_fail_msg("trace setup\n");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ev_case *c = &cases[i];
		int ret = event_line(&t, c, line, sizeof(line));

		if (ret || strcmp(line, c->line ? c->line : ""))
			ksft_print_msg("got '%s' (%d)\n", line, ret);
		ksft_test_result(!ret && !strcmp(line, c->line ? c->line : ""),
				 "%s\n", c->what);
	}
	ksft_test_result(!resized(&t, -1),
			 "a stream of ABI 1.0 (shorter status) parses, new fields zero\n");
	ksft_test_result(!resized(&t, 16),
			 "a stream with a status longer than this reader's parses\n");
	trace__exit(&t);
	ksft_finished();
}
