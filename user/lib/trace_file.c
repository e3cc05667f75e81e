// SPDX-License-Identifier: GPL-2.0
/*
 * trace_file.c - read a trace in any format kcc knows (trace_file.h).
 */
#include "ftrace_rt.h"
#include "trace_file.h"

int trace__read(struct trace *t, const char *path, bool tolerant)
{
	/* Traces of the kcc runtime (tools/kcc-trace): files or a directory. */
	if (ftrace_rt__match(path))
		return ftrace_rt__read(t, path, tolerant, NULL);
	return trace__read_kcc(t, path, tolerant);
}
