// SPDX-License-Identifier: GPL-2.0
/*
 * builtin-dump.c - kcc dump: the k-SF of every task of a stream or a
 * profile in the canonical text form of ksfdump.h, so that the forest
 * the module built and the one a userspace replay built can be compared
 * with diff(1).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "ksfdump.h"
#include "profile.h"

#define CMD "kcc dump"

static void dump_usage(void)
{
	printf(
"usage: kcc dump [-c N] [--pid PID] [--tid TID] STREAM|PROFILE\n"
"\n"
"Print each task's k-slab forest as recorded, labels in hex:\n"
"\n"
"  task RUN TID TGID COMM k=K nodes=N flags=F\n"
"  KIND PATH C0 C1 ...\n"
"\n"
"KIND is top or slab, PATH the labels from the root down joined by ';',\n"
"C0.. the counters (calls first).  Node lines are sorted; nodes whose\n"
"counters are all zero are left out (Documentation/profile-format.rst).\n"
"\n"
"Options:\n"
"  -c N        print the first N counters only (1: calls)\n"
"  --pid PID   tasks of process PID only\n"
"  --tid TID   task TID only\n"
"  -h, --help  this help\n"
"\n"
"EXAMPLES\n"
"  kcc dump /tmp/kcc.stream > kernel.dump\n"
"  kcc dump -c 1 kcc.data\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t nctrs = 0, pid = 0, tid = 0, run, i;
	bool have_pid = false, have_tid = false;
	const char *name;
	struct profile p;
	int c, ret = 0;

	while ((c = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_u32(optarg, &nctrs) || !nctrs)
				return usage_error(CMD, "bad -c '%s': expected a positive count", optarg);
			break;
		case 'p':
			if (parse_u32(optarg, &pid))
				return usage_error(CMD, "bad --pid '%s'", optarg);
			have_pid = true;
			break;
		case 't':
			if (parse_u32(optarg, &tid))
				return usage_error(CMD, "bad --tid '%s'", optarg);
			have_tid = true;
			break;
		case 'h':
			dump_usage();
			return KCC_EXIT_OK;
		default:
			return usage_bad_option(CMD, c, argv);
		}
	}
	ret = usage_one_operand(CMD, argc, argv, "stream or profile", &name);
	if (ret)
		return ret;
	if (profile__read(&p, name)) {
		profile__exit(&p);
		return KCC_EXIT_ERROR;
	}
	for (run = 0; run < p.nr_runs && !ret; run++) {
		const struct stream *s = &p.runs[run].s;

		for (i = 0; i < s->nr_tasks && !ret; i++) {
			const struct stream_task *t = &s->tasks[i];

			if ((have_pid && t->tgid != pid) || (have_tid && t->pid != tid))
				continue;
			printf("task %u %u %u %s k=", run, t->pid, t->tgid, t->comm);
			if (s->hdr.k == KCC_K_INF)
				printf("inf");
			else
				printf("%u", s->hdr.k);
			printf(" nodes=%u flags=%u\n", t->ksf.f.count, t->flags);
			ret = ksf__dump(&t->ksf.f, NULL, nctrs, stdout);
		}
	}
	if (ret)
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
	profile__exit(&p);
	return ret ? KCC_EXIT_ERROR : KCC_EXIT_OK;
}
