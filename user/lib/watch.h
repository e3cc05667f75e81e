/* SPDX-License-Identifier: GPL-2.0 */
/*
 * watch.h - watch files: the k-contexts whose counts kcc keeps exactly,
 * in an array numbered by preferential path profiling (lbr/kcc_ppp.h).
 *
 * A watch file is text, one context a line, routines outermost first and
 * separated by ';' (the paths of kcc ccf and kcc report --format folded):
 *
 *	# comment
 *	main;parse;lex
 *	lex
 *
 * Blank lines and lines starting with '#' are ignored, as is white space
 * at either end of a line.  A context has 1 to 9 routines (at most 8 call
 * edges), a file at most 65536 contexts, each given once.
 */
#ifndef KCC_WATCH_H
#define KCC_WATCH_H

#include <stdint.h>
#include <stdio.h>
#include <linux/kcc.h>

#include "kcc_ppp.h"
#include "symbols.h"
#include "symtab.h"
#include "trace.h"

struct watch {
	const char *name;	/* the file, for messages */
	char **paths;		/* [n] "a;b;c" as read */
	uint32_t *line;		/* [n] line number of each context */
	uint32_t *lens;		/* [n] routines per context */
	uint64_t *labels;	/* routine labels, once resolved */
	char **names;		/* the routine names, nlabels of them */
	uint32_t n;
	uint32_t nlabels;
	struct kcc_ppp p;
	void *mem;
};

/* 0, or -errno with the reason on stderr ("kcc: FILE:LINE: ..."). */
int watch__read(struct watch *w, const char *path);
/*
 * Labels are the trace's routine ids.  A name the trace lacks is added to
 * @st, so its contexts count 0 (a watch file made from another run), with
 * a warning on stderr.  0 or -ENOMEM.
 */
int watch__resolve(struct watch *w, struct symtab *st);
/* Number the contexts (kcc_ppp_build()); errors name the line. */
int watch__build(struct watch *w);
void watch__exit(struct watch *w);

struct watch_counts {
	uint64_t *counts;	/* [p.range] */
	uint64_t calls;
	uint64_t matched;
	uint64_t unwatched;
	uint64_t aliased;
};

/* Replay @t and count; 0 or -ENOMEM.  Free wc->counts. */
int watch__count_trace(const struct watch *w, const struct trace *t,
		       struct watch_counts *wc);
/*
 * One line per context in file order, "<count>TAB<path>", as kcc ccf
 * prints them, then '#' lines with the numbering and the residual.
 */
void watch__print(const struct watch *w, const struct watch_counts *wc,
		  FILE *out);

/*
 * kcc report: the exact counts of the watched contexts that kcc.ko kept
 * (KCC_REC_WATCH, summed over the tasks of every run), named by the
 * profile's INFO key "watch" (the contexts, one a line, in upload
 * order, as kcc record --watch stores them).  -ENOENT when the profile
 * has none, -EINVAL when the two disagree.
 */
struct profile;
int watch__report(const struct profile *p, FILE *out);

/*
 * kcc record --watch: the KCC_IOC_WATCH argument for process @pid, the
 * routines of @w found by name (or demangled name) in the symbols of
 * the executable objects it maps now (symbols.h), numbered by
 * kcc_ppp_build() as kcc.ko will number them.  Errors (an unknown
 * routine, two watched routines at one address, what watch__build()
 * refuses) are printed; 0 or -errno.
 */
struct watch_upload {
	struct kcc_watch arg;
	struct kcc_watch_range *ranges;
	uint32_t nr_ranges, cap_ranges;
	uint32_t *paths;
};
int watch__upload_pid(struct watch *w, int pid, struct watch_upload *u);
void watch__upload_exit(struct watch_upload *u);
/* The contexts, one a line in file order (INFO "watch"); malloc()ed. */
char *watch__list(const struct watch *w);

/* A watch file line for a path, with a check of what fits one. */
int watch__put(FILE *out, const char *path);

#endif /* KCC_WATCH_H */
