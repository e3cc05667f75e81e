/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ftrace_fmt.h - the file format written by the kcc tracing runtime
 * (tools/kcc-trace/kcc_trace_rt.c, for programs built with
 * -finstrument-functions) and read by user/lib/ftrace_rt.c.  Shared by
 * both, so it depends on nothing but <stdint.h>.
 *
 * One file per thread: a 16-byte header, then records.  Every number is
 * an unsigned LEB128 varint, as in the kcc binary trace format.
 *
 *	header	"KCCFTR\0", version byte, __u32 pid, __u32 tid (host order)
 *	record	v = varint; kind = v & 3, arg = v >> 2
 *	  kind 1  entry of the (routine, call site) of id arg, then zigzag
 *	          varint: sp - previous sp
 *	  kind 2  exit of the same, then the same sp delta
 *	  kind 0  control, arg one of:
 *	    FTR_CTL_END     varint: enter + exit records written; last record
 *	    FTR_CTL_DEFINE  varints: routine address, call site (the return
 *	                    address into the caller); the pair gets the next
 *	                    id (0, 1, ...)
 *	    FTR_CTL_MAP     varints start, end, file offset, path length, then
 *	                    the path bytes: an executable mapping
 *	    FTR_CTL_LOST    varint: events dropped (reentered hook, no memory)
 *	  kind 3  invalid
 *
 * The "sp" is the stack address of the hook's frame, a fixed distance
 * below the stack pointer of the instrumented routine at the hook call.
 * It is what lets the reader see frames left by longjmp(), exceptions
 * and exit() without their exit event: a live caller's sp is always above
 * its callee's.  An exit's sp may differ from its entry's (alloca(), an
 * exit hook made a sibling call), but never rises above the caller's.
 * The previous sp starts at 0.
 */
#ifndef KCC_FTRACE_FMT_H
#define KCC_FTRACE_FMT_H

#define FTR_MAGIC	"KCCFTR"	/* followed by a NUL byte */
#define FTR_MAGIC_LEN	7
#define FTR_VERSION	1
#define FTR_HDR_LEN	16

#define FTR_KIND_CTL	0
#define FTR_KIND_ENTER	1
#define FTR_KIND_EXIT	2

#define FTR_CTL_END	0
#define FTR_CTL_DEFINE	1
#define FTR_CTL_MAP	2
#define FTR_CTL_LOST	3

/* File names: <dir>/kcc-<pid>-<tid>.kft */
#define FTR_SUFFIX	".kft"

#endif /* KCC_FTRACE_FMT_H */
