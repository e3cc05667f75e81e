/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - call/return traces in memory, read from the text or the
 * binary format (Documentation/trace-format.rst) and written back.
 *
 * An event is one u32: TRACE_RET for a return, otherwise the symtab id of
 * the routine called.  Four bytes an event keeps a 100M-event trace at
 * 400 MB, and the builders replay it as often as their pools need.
 *
 * The array always holds a balanced trace: strict reading refuses
 * anything else, tolerant reading drops returns that have nothing to
 * return from and appends the returns that close pending calls.
 */
#ifndef KCC_TRACE_H
#define KCC_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "symtab.h"

#define TRACE_RET	0xffffffffu

/* The binary format's header: magic, then the version byte. */
#define TRACE_MAGIC	"KCCTRC"	/* followed by a NUL byte */
#define TRACE_MAGIC_LEN	7
#define TRACE_VERSION	1
#define TRACE_HDR_LEN	8

enum trace_rec {
	TRACE_REC_RETURN = 0,
	TRACE_REC_DEFINE = 1,
	TRACE_REC_END = 2,
	TRACE_REC_CALL0 = 3,	/* call of symbol id v - 3 */
};

struct trace {
	uint32_t *ev;		/* balanced events: TRACE_RET or symbol id */
	uint64_t nr;		/* events in ev */
	uint64_t cap;
	struct symtab syms;
	/* What the file held, before tolerant mode balanced it. */
	uint64_t calls;		/* call events */
	uint64_t returns;	/* return events */
	uint64_t bad_returns;	/* returns with an empty stack (ignored) */
	uint64_t closed;	/* pending calls closed at the end */
	uint64_t max_depth;	/* most pending calls at any time */
	uint32_t routines;	/* distinct routines called */
	bool binary;		/* read from the binary format */
};

int trace__init(struct trace *t);
void trace__exit(struct trace *t);
/* Append event @ev (a routine id or TRACE_RET): 0 or -ENOMEM. */
int trace__push(struct trace *t, uint32_t ev);
/*
 * Read @path ("-" for stdin) in kcc's text or binary format, detecting
 * which by its magic.  Errors are reported on stderr as
 * "kcc: FILE:LINE: reason" (text) or "kcc: FILE: offset N: reason"
 * (binary).  Return: 0 or -errno (-EINVAL for a malformed trace).
 * trace__read() (trace_file.h) also reads the tracing runtime's traces.
 */
int trace__read_kcc(struct trace *t, const char *path, bool tolerant);
/* The name trace__read() uses in messages for @path. */
const char *trace__display_name(const char *path);

/* Return: 0 or -errno from the stream. */
int trace__write_binary(const struct trace *t, FILE *out);
int trace__write_text(const struct trace *t, FILE *out);

#endif /* KCC_TRACE_H */
