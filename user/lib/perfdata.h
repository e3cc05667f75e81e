/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfdata.h - a reader of the perf.data files `perf record` writes (the
 * file format, not the pipe format), enough for kcc import: the events
 * (perf_event_attr and, from the HEADER_EVENT_DESC feature, their names),
 * and the records kcc needs: samples (tid, period, counter values read,
 * callchain, branch stack), executable mappings, thread names and exits.
 *
 * No Debian library reads perf.data (perf's own reader is not packaged
 * as a library); the format is the kernel's records behind a small file
 * header, described in the kernel tree's
 * tools/perf/Documentation/perf.data-file-format.txt.  Little-endian
 * files of a little-endian host only.
 *
 *	struct perfdata pd;
 *	perfdata__open(&pd, buf, len);
 *	while ((ret = perfdata__next(&pd, &rec)) > 0)
 *		...
 *	perfdata__exit(&pd);
 */
#ifndef KCC_PERFDATA_H
#define KCC_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#define PERFDATA_NAME_LEN	64
#define PERFDATA_MAX_READ	8	/* counter values kept of a sample */

struct perfdata_event {
	struct perf_event_attr attr;	/* what the file has of it, rest 0 */
	uint64_t *ids;			/* sample ids of this event */
	uint32_t nr_ids;
	char name[PERFDATA_NAME_LEN];	/* "" when the file names none */
};

/* The kinds of perfdata_rec: the PERF_RECORD_* kcc uses. */
enum perfdata_kind {
	PERFDATA_SAMPLE,
	PERFDATA_MMAP,		/* executable file mappings only */
	PERFDATA_COMM,
	PERFDATA_EXIT,
	PERFDATA_OTHER,		/* anything else: skipped */
};

struct perfdata_rec {
	enum perfdata_kind kind;
	uint64_t off;			/* file offset of the record */
	uint32_t pid, tid;
	union {
		struct {
			uint32_t ev;	/* index into perfdata.ev */
			uint64_t period;
			const uint64_t *chain;	/* PERF_CONTEXT_* markers kept */
			uint64_t nr_chain;
			const struct perf_branch_entry *br;	/* newest first */
			uint64_t nr_br;
			/*
			 * PERF_SAMPLE_READ: the values of the sample's
			 * counters (its group's, with PERF_FORMAT_GROUP), by
			 * event (-1 where the file names no event of an id)
			 * and id (0 without PERF_FORMAT_ID).  The first
			 * PERFDATA_MAX_READ only.
			 */
			uint32_t nr_read;
			int32_t read_ev[PERFDATA_MAX_READ];
			uint64_t read_id[PERFDATA_MAX_READ];
			uint64_t read_val[PERFDATA_MAX_READ];
		} s;
		struct {
			uint64_t start, len, pgoff, ino;
			const char *path;	/* NUL-terminated in the buffer */
		} m;
		const char *comm;	/* NUL-terminated in the buffer */
	};
};

struct perfdata {
	const uint8_t *buf;
	size_t len;
	struct perfdata_event *ev;
	uint32_t nr_ev;
	uint64_t pos, end;		/* the data section being read */
	char err[160];			/* why the last call failed */
	/* aligned copies of a sample's callchain and branch stack */
	void *scratch[2];
	size_t scratch_cap[2];
	bool oom;
};

/*
 * Read the header, the events and their names from the @len bytes at
 * @buf (kept, not copied).  0, -EINVAL (not a perf.data file, or
 * damaged: pd->err says why) or -ENOMEM.  perfdata__exit() either way.
 */
int perfdata__open(struct perfdata *pd, const void *buf, size_t len);
void perfdata__exit(struct perfdata *pd);
/*
 * The next record into @r: 1, 0 at the end, -EINVAL (pd->err), -ENOMEM.
 * Its pointers are valid until the next call (a callchain or branch
 * stack that is not 8-byte aligned in the file is copied).
 */
int perfdata__next(struct perfdata *pd, struct perfdata_rec *r);

#endif /* KCC_PERFDATA_H */
