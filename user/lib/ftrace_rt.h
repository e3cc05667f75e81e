/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ftrace_rt.h - reading the traces of the kcc tracing runtime
 * (tools/kcc-trace, format in ftrace_fmt.h) into a struct trace.
 *
 * The runtime records addresses and stack positions; the reader names
 * every routine from the ELF symbol table of the file mapped at its
 * address, and mends the stack the way the program really unwound it:
 *
 *  - an entry whose sp is above the sp of frames still open proves those
 *    frames gone (longjmp() out of them, an exception, a coroutine that
 *    yielded by longjmp()): they get their returns first.  At an equal
 *    sp the frame is gone unless the entry is of another routine inlined
 *    into it (same call site);
 *  - an exit closes the topmost open activation of its routine from its
 *    call site that the exit's sp allows (not above the caller's sp),
 *    and the frames above that one, which were left without an exit; an
 *    exit of a routine not open at all (a forked child's first exits)
 *    is ignored and counted;
 *  - frames still open at the end (exit() called deep down) are closed.
 *
 * The result is a balanced trace, like every struct trace.  A directory
 * is read as all the *.kft files in it, one thread after the other in
 * (pid, tid) order: the k-CCF of the whole program is the union of the
 * threads' forests.
 */
#ifndef KCC_FTRACE_RT_H
#define KCC_FTRACE_RT_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

struct ftrace_stats {
	uint32_t files;		/* thread files read */
	uint64_t unwound;	/* frames closed because their sp was passed */
	uint64_t orphan_exits;	/* exits of routines not open (ignored) */
	uint64_t lost;		/* events the runtime dropped */
	uint64_t unnamed;	/* routines without a symbol */
};

/*
 * Does @path look like a runtime trace: a regular file with the magic,
 * or a directory?  Pipes are never opened here (and runtime traces are
 * read from files only: they are mapped).
 */
bool ftrace_rt__match(const char *path);

/*
 * Read @path (a .kft file or a directory of them) into @t, initialised
 * and empty.  Without @tolerant a file that lacks its end record (the
 * program died) is an error.  Errors: "kcc: FILE: offset N: reason" on
 * stderr, -EINVAL (malformed) or -errno.  @st may be NULL.
 */
int ftrace_rt__read(struct trace *t, const char *path, bool tolerant,
		    struct ftrace_stats *st);

#endif /* KCC_FTRACE_RT_H */
