// SPDX-License-Identifier: GPL-2.0
/*
 * exec_name_test.c - kcc report names a process after the image its
 * tasks ran.  kcc record -- CMD forks kcc and execs CMD in the child, so
 * the session sees the child first as "kcc" (image 0, ended by the exec:
 * KCC_TASK_EXITED | KCC_TASK_EXEC), then as CMD (image 1, same pid and
 * start).  The stream here is that: a two-thread stream of
 * stream__from_trace() whose first task record is made the pre-exec
 * leader and whose second the post-exec one.  The report must give two
 * processes, "kcc" and the command, one task each, not one "kcc" of two
 * tasks (the demo's "# process: kcc, 2 tasks").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktap.h"
#include "report_fmt.h"

static int two_calls(struct trace *t)
{
	static const char *const names[] = { "main", "work" };
	uint32_t id, i;

	if (trace__init(t))
		return -1;
	t->ev = malloc(8 * sizeof(*t->ev));
	if (!t->ev)
		return -1;
	for (i = 0; i < 2; i++)
		if (symtab__intern(&t->syms, names[i], strlen(names[i]), &id))
			return -1;
	/* Two top-level calls: one for each of the two threads. */
	for (i = 0; i < 2; i++) {
		t->ev[t->nr++] = 0;
		t->ev[t->nr++] = 1;
		t->ev[t->nr++] = TRACE_RET;
		t->ev[t->nr++] = TRACE_RET;
	}
	t->calls = t->returns = 4;
	t->max_depth = 2;
	return 0;
}

int main(void)
{
	struct stream_gen g = {
		.k = 2, .threads = 2, .tgid = 7, .comm = "demo_workload",
		.base = 0x400000, .jitter = 1,
	};
	struct report_opts o = { .name = "test", .sort = -1 };
	struct stream s;
	struct sbuf b = { 0 }, nb = { 0 };
	struct profile p;
	struct report r;
	struct trace t;
	uint32_t i;
	int ret;

	ksft_print_header();
	ksft_set_plan(3);
	if (two_calls(&t) || stream__from_trace(&b, &t, &g))
		ksft_exit_fail_msg("stream setup\n");
	ret = stream__parse(&s, b.p, b.len);
	if (ret || s.nr_tasks != 2)
		ksft_exit_fail_msg("stream parse: %d, %u tasks\n", ret, s.nr_tasks);
	/* tasks[0]: the child before its exec; tasks[1]: after it. */
	snprintf(s.tasks[0].comm, sizeof(s.tasks[0].comm), "kcc");
	s.tasks[0].pid = 7;
	s.tasks[0].flags = KCC_TASK_EXITED | KCC_TASK_EXEC;
	snprintf(s.tasks[1].comm, sizeof(s.tasks[1].comm), "demo_workload");
	s.tasks[1].pid = 7;
	s.tasks[1].start_time_ns = s.tasks[0].start_time_ns;
	s.tasks[1].flags = 1u << KCC_TASK_IMAGE_SHIFT;
	for (i = 0; i < s.nr_maps; i++)
		s.maps[i].image = 1;
	ret = stream__write(&s, &nb);
	stream__exit(&s);
	if (ret)
		ksft_exit_fail_msg("stream write: %d\n", ret);
	profile__init(&p);
	ret = profile__add_stream(&p, nb.p, nb.len, "exec");
	nb.p = NULL;
	if (!ret)
		ret = report__build(&r, &p, &o);
	if (ret)
		ksft_exit_fail_msg("report: %d\n", ret);
	for (i = 0; i < r.nr_groups; i++)
		ksft_print_msg("process %s, %u tasks\n", r.groups[i].name,
			       r.groups[i].nr_tasks);
	ksft_test_result(r.nr_groups == 2, "two processes: before and after the exec\n");
	ksft_test_result(r.nr_groups == 2 && !strcmp(r.groups[0].name, "kcc") &&
			 r.groups[0].nr_tasks == 1,
			 "the image before the exec is kcc, one task\n");
	ksft_test_result(r.nr_groups == 2 &&
			 !strcmp(r.groups[1].name, "demo_workload") &&
			 r.groups[1].nr_tasks == 1,
			 "the image after it is named after the command, one task\n");
	report__exit(&r);
	profile__exit(&p);
	sbuf__exit(&b);
	sbuf__exit(&nb);
	trace__exit(&t);
	ksft_finished();
}
