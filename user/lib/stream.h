/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stream.h - the /dev/kcc read() stream (include/uapi/linux/kcc.h) in
 * memory: its header, one k-slab forest per task and the executable
 * mappings of the profiled processes.
 *
 * The parser trusts nothing it reads.  Every count is checked against
 * the bytes that are actually there before anything is allocated, so a
 * hostile stream costs at most a small multiple of its own size; every
 * node's parent must come before it (the kernel stores nodes after their
 * parents, and inv_k and the pruning code rely on that order); a
 * (parent, label) pair appears at most once per task.  The first problem
 * found stops the parse with the byte offset of the field at fault.
 *
 * Readers skip records of types they do not know (the uapi rule); a
 * stream must end with exactly one KCC_REC_END, anything after it or a
 * missing END is an error (a truncated snapshot).
 */
#ifndef KCC_STREAM_H
#define KCC_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/kcc.h>

#include "ccf.h"

/* Counters a node may carry: calls plus the core's metrics. */
#define STREAM_MAX_CTRS		(1 + KCC_MAX_METRICS)
/* Name error messages start with: "kcc" unless a tool says otherwise. */
extern const char *kcc_progname;

/* Default cap on a stream read into memory. */
#define STREAM_MAX_BYTES	(1ull << 32)

struct stream_task {
	uint32_t pid;
	uint32_t tgid;
	uint64_t start_time_ns;
	char comm[17];			/* NUL-terminated copy */
	uint32_t flags;			/* KCC_TASK_*, image in bits 16-31 */
	uint64_t samples;
	uint64_t node_drops;
	uint64_t stack_drops;
	uint64_t stitch_errors;
	uint64_t lost_charges;
	uint64_t cgroup_id;		/* KCC_REC_CGROUP, 0: none */
	/*
	 * The task's k-SF (or CCT with k = KCC_K_INF), nmetrics =
	 * nr_ctrs - 1.  Node i of the record is node i of the forest.
	 */
	struct pool ksf;
};

struct stream_map {
	uint32_t tgid;
	uint32_t image;		/* process image, as task flags say it */
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t ino;
	char *path;
};

/* A KCC_REC_WATCH: a task's exact counts of the watched contexts. */
struct stream_watch {
	uint32_t pid;
	uint32_t tgid;
	uint64_t start_time_ns;
	uint32_t nr_contexts;
	uint32_t nr_ctrs;
	uint32_t range;
	uint64_t totals[KCC_WATCH_NR_CTRS];
	uint64_t residual[KCC_WATCH_NR_CTRS];
	uint64_t aliased;
	uint64_t stack_drops;
	uint64_t *counts;		/* [nr_contexts * nr_ctrs] */
};

struct stream {
	struct kcc_stream_header hdr;	/* as read; status included */
	struct kcc_metric_desc desc[STREAM_MAX_CTRS];
	uint32_t nr_ctrs;		/* hdr.nr_ctrs */
	struct stream_task *tasks;
	uint32_t nr_tasks;
	struct stream_map *maps;
	uint32_t nr_maps;
	struct stream_watch *watch;	/* KCC_REC_WATCH records */
	uint32_t nr_watch;
	uint64_t unknown_recs;		/* records of unknown types skipped */
	uint32_t last_rec;		/* type of the record parsed last */
	uint64_t size;			/* bytes up to and including END */
	/* Why the last parse failed, and where. */
	uint64_t err_off;
	char err[160];
};

/*
 * Parse @len bytes at @buf.  Returns 0, -EINVAL (malformed: s->err and
 * s->err_off say why and where) or -ENOMEM.  @s is initialised here and
 * must be released with stream__exit() whatever the result.
 */
int stream__parse(struct stream *s, const void *buf, size_t len);
void stream__exit(struct stream *s);
/* Print "kcc: NAME: offset N: reason" for the last failed parse. */
void stream__perror(const struct stream *s, const char *name);

/*
 * The whole of @path ("-": stdin; devices and pipes read to EOF) in a
 * malloc()ed buffer, refusing more than @max bytes.  Errors are printed
 * as "kcc: PATH: reason".  Returns 0 or -errno (-EFBIG past @max).
 * @progress, when true, shows the bytes read so far on stderr.
 */
int read_whole_file(const char *path, uint64_t max, bool progress,
		    void **buf, size_t *len);

/* Metric index of @name ("calls", "samples", "cache-misses", ...) or -1. */
int stream__metric(const struct stream *s, const char *name);

/* ---- writing ------------------------------------------------------------ */

/*
 * Growing byte buffer a stream is serialised into.  Writers keep the
 * 8-byte alignment of every record.
 */
struct sbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int err;			/* first -errno, sticky */
};

void sbuf__exit(struct sbuf *b);
void *sbuf__append(struct sbuf *b, const void *data, size_t len);
void sbuf__pad8(struct sbuf *b);

/*
 * Serialise @s (header, then per task its record and nodes, then the
 * maps, then END) in the uapi format: stream__parse() of the result
 * gives @s back.  Returns 0 or -ENOMEM.
 */
int stream__write(const struct stream *s, struct sbuf *out);

/*
 * Fold the threads of each process image (same tgid and image) into one
 * task, as kcc.ko folds exited threads: pid = tgid, the leader's start
 * and name, KCC_TASK_FOLDED, the union of their forests with counters
 * summed, their statistics summed; EXITED (EXEC) only if every thread
 * had it.  A k-SF is a union of labelled trees whose counters the k-CCF
 * sums, so a report per process is the same after as before; per
 * thread, each process is one.  Processes of one thread are left as
 * they were.  Returns 0, -EINVAL when @s has watch records (counted per
 * thread) or records this reader does not know, or -ENOMEM (@s then
 * unchanged).
 */
int stream__fold_processes(struct stream *s);

/* Writers for building streams piece by piece (tests, kcc record --trace). */
int stream__write_header(struct sbuf *b, const struct kcc_stream_header *h,
			 const struct kcc_metric_desc *desc);
int stream__write_task(struct sbuf *b, const struct stream_task *t,
		       uint32_t nr_ctrs);
/* A KCC_REC_WATCH of task @t from its counting state @r (kcc_ppp.h). */
struct kcc_ppp_run;
int stream__write_watch(struct sbuf *b, const struct stream_task *t,
			const struct kcc_ppp_run *r);
int stream__write_map(struct sbuf *b, const struct stream_map *m);
int stream__write_end(struct sbuf *b);

/*
 * Does @s carry the variance of its estimated calls (ABI 1.4): a fourth
 * counter, KCC_CTR_CALLS_VAR, of no perf event, named "calls_var"?
 */
bool stream__has_calls_var(const struct stream *s);

/* Default header: version, magic, sizes and the standard metrics. */
void stream__default_header(struct kcc_stream_header *h,
			    struct kcc_metric_desc *desc, uint32_t k,
			    uint32_t source, uint32_t flags);

/*
 * A stream made from a call trace, as the module would export it for a
 * process that ran the trace: routine i of the trace's symbol table is
 * the STREAM_GEN_STRIDE bytes at base + i * STRIDE of one mapping of
 * STREAM_GEN_PATH (file offset = i * STRIDE); every call is labelled by
 * an address inside its routine (a pseudo-random one with @jitter), and
 * charged (i + 1) events and one sample.  Top-level calls go round-robin
 * to @threads tasks of process @tgid.  kcc record --trace and the tests
 * use it until the module produces streams.
 */
#define STREAM_GEN_STRIDE	64
#define STREAM_GEN_PATH		"[trace]"

struct stream_gen {
	uint32_t k;
	uint32_t threads;
	uint32_t tgid;
	const char *comm;
	uint64_t base;
	uint64_t jitter;	/* 0: labels at routine starts; else a seed */
	/*
	 * Watched contexts over the trace's routine ids, or NULL: counted
	 * beside each thread's k-SF as kcc.ko does (the k-SF builder
	 * drives lbr/kcc_ppp, labels found in the routines' ranges), one
	 * KCC_REC_WATCH after each task record.  Ranges are set here.
	 */
	struct kcc_ppp *watch;
};

int stream__from_trace(struct sbuf *out, const struct trace *t,
		       const struct stream_gen *g);

/*
 * Open the kcc device @path and check its ABI major version.  Errors
 * are explained on stderr (module not loaded, permissions, wrong ABI).
 * Returns the descriptor or -errno (-EPROTO for an ABI mismatch).
 */
int kccdev__open(const char *path, struct kcc_version *v);
/* One snapshot of the session owned by @fd (seek to 0, read to EOF). */
int kccdev__snapshot(int fd, const char *path, bool progress, void **buf,
		     size_t *len);

/* An empty forest of @capacity nodes with @nmetrics metrics in @p. */
int pool__alloc(struct pool *p, uint32_t capacity, uint32_t nmetrics);

#endif /* KCC_STREAM_H */
