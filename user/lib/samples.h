/* SPDX-License-Identifier: GPL-2.0 */
/*
 * samples.h - sample files: the samples of one thread, in the exact
 * packed form KCC_IOC_INJECT takes (Documentation/stitching.rst).
 *
 *	offset 0   "KCCSMP\0\0"		8 bytes
 *	offset 8   __u32 version		SAMPLES_VERSION
 *	offset 12  __u32 header_size	SAMPLES_HDR_LEN, for growth
 *	offset 16  struct kcc_sample records, back to back
 *
 * Everything after the header can be handed to KCC_IOC_INJECT as it is:
 * a record carries no thread id, one file holds one thread's samples, in
 * the order they were taken.  Nothing in the file depends on k.
 */
#ifndef KCC_SAMPLES_H
#define KCC_SAMPLES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ccf.h"
#include "kcc_stitch.h"

#define SAMPLES_MAGIC		"KCCSMP\0"	/* 8 bytes with the final NUL */
#define SAMPLES_MAGIC_LEN	8
#define SAMPLES_VERSION		1u
#define SAMPLES_HDR_LEN		16

/* Bytes of the largest sample KCC_IOC_INJECT accepts. */
#define SAMPLE_MAX_SIZE	(sizeof(struct kcc_sample) +			\
			 KCC_INJECT_MAX_STACK * sizeof(__u64) +		\
			 KCC_INJECT_MAX_BRANCHES * sizeof(struct kcc_branch))

/* A sample file read into memory and checked, record by record. */
struct samples {
	uint64_t *buf;		/* the records, 8-byte aligned */
	size_t len;		/* bytes at buf */
	uint64_t nr;		/* records */
};

/*
 * Read and check @path ("-" for stdin).  Errors go to stderr as
 * "kcc: FILE: offset N: reason" with N the file offset of the bad
 * record or field.  Return: 0, -EINVAL for a malformed file, or -errno.
 */
int samples__read(struct samples *ss, const char *path);
void samples__exit(struct samples *ss);

/* The record at byte @off of the body (0 first); next at off + size. */
static inline const struct kcc_sample *samples__at(const struct samples *ss,
						   size_t off)
{
	return (const struct kcc_sample *)((const char *)ss->buf + off);
}

/* What kcc_sample_why()'s code means, for messages. */
const char *samples__strerror(uint32_t why);

/* Writing: the header once, then each sample.  0 or -errno. */
int samples__write_header(FILE *out);
int samples__write(FILE *out, const struct kcc_sample *s);

/*
 * A sample under construction, with room for the largest one.  Fill
 * stack[] and br[], then samples__finish() sets the header's counts and
 * size.
 */
struct sample_buf {
	union {
		struct kcc_sample hdr;
		uint64_t raw[SAMPLE_MAX_SIZE / sizeof(uint64_t)];
	};
};

void sample_buf__init(struct sample_buf *sb, uint32_t flags, uint64_t delta);
/* 0, or -E2BIG when the array is full. */
int sample_buf__push_stack(struct sample_buf *sb, uint64_t addr);
/*
 * Branches must be pushed after the whole stack (newest first): they
 * follow the stack array in memory.
 */
int sample_buf__push_branch(struct sample_buf *sb, uint64_t from, uint64_t to,
			    uint32_t kind);

/* ---- stitching samples into a k-SF in userspace ---------------------- */

/*
 * The lbr/ stitcher over a pool that grows, with a shadow stack and
 * scratch deep enough for any sample KCC_IOC_INJECT accepts (so nothing
 * is dropped for depth), and optional adaptive bursting.
 */
#define STITCHER_DEPTH	(KCC_INJECT_MAX_STACK + KCC_INJECT_MAX_BRANCHES + 1)

struct stitcher_opts {
	uint32_t k;		/* slab height >= 1 or KCC_K_INF */
	uint32_t rr_inv;	/* adaptive bursting: 0 off */
	uint32_t table;		/* history table entries, a power of two */
	uint32_t sig_depth;	/* stack entries per signature */
	uint64_t seed;		/* non-zero */
	bool no_join;		/* forget every burst: no overlap is used */
	bool longest_join;	/* KCC_JOIN_LONGEST rather than KCC_JOIN_UNIQUE */
	uint32_t max_nodes;	/* fixed forest size, 0 to grow */
};

struct stitcher {
	struct pool pool;	/* the k-SF, KCC_NR_CTRS counters a node */
	struct kcc_frame *stack;
	struct kcc_stitch_frame *frames;
	struct kcc_stitch st;
	struct kcc_burst burst;
	void *burst_mem;
	bool no_join;
	bool fixed;
};

int stitcher__init(struct stitcher *sr, const struct stitcher_opts *o);
void stitcher__exit(struct stitcher *sr);
/* Apply one checked sample: 0 or -errno (-ENOMEM growing the pool). */
int stitcher__sample(struct stitcher *sr, const struct kcc_sample *s);
/* Every sample of @ss in order. */
int stitcher__samples(struct stitcher *sr, const struct samples *ss);
/* The samples are over: a hybrid pool goes to the last burst (kcc_stitch_finish()). */
void stitcher__finish(struct stitcher *sr);

#endif /* KCC_SAMPLES_H */
