/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_file.h - a trace file in any format kcc reads: its own text and
 * binary formats (trace.h, Documentation/trace-format.rst) or the traces
 * of the tracing runtime (ftrace_rt.h, tools/kcc-trace).
 *
 * Both readers build the model of trace.h; choosing between them is
 * here, above both, so that trace.c does not depend on a reader that
 * depends on it.
 */
#ifndef KCC_TRACE_FILE_H
#define KCC_TRACE_FILE_H

#include <stdbool.h>

#include "trace.h"

/*
 * Read @path ("-" for stdin): a runtime trace (a file with its magic, or
 * a directory of them) through ftrace_rt__read(), else
 * trace__read_kcc().  Errors are reported on stderr as those readers do.
 * Return: 0 or -errno (-EINVAL for a malformed trace).
 */
int trace__read(struct trace *t, const char *path, bool tolerant);

#endif /* KCC_TRACE_FILE_H */
