/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report.h - from a profile to k-calling-context forests with routine
 * names, and out in the formats of kcc report.
 *
 * The kernel labels each routine by some user address inside it.  Each
 * task's k-SF is relabelled node by node (address -> map -> object ->
 * function) and re-joined, in node order, into the forest of its group:
 * nodes whose relabelled root paths are equal merge and add their
 * counters.  Relabelling commutes with the k-SF construction, so the
 * result is the k-SF of the routine-level trace, and the join of the
 * k-SFs of several threads is a k-SF whose inv_k is the sum of theirs.
 * inv_k then gives the group's k-CCF.
 *
 * Counts of a k-CCF node are inclusive: every activation whose context
 * ends with the node's path.  The exclusive count (the node's count less
 * its children's) is the number of activations whose k-context is the
 * path exactly; the top list, folded stacks, pprof samples and JSON
 * contexts use those, so their totals add up to the group's total.
 */
#ifndef KCC_REPORT_H
#define KCC_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "symtab.h"

enum report_format {
	FMT_TEXT,
	FMT_FOLDED,
	FMT_JSON,
	FMT_PPROF,
	FMT_SVG,
};

enum report_group {
	GROUP_PROCESS,		/* one forest per command name (default) */
	GROUP_THREAD,		/* one per task */
	GROUP_ALL,		/* one for everything selected */
	GROUP_CGROUP,		/* one per cgroup v2 (KCC_REC_CGROUP) */
};

#define REPORT_MAX_IDS	64

struct report_ids {
	uint32_t nr;		/* 0: no filter */
	uint32_t v[REPORT_MAX_IDS];
};

/*
 * Parse "ID[,ID...]" (process or thread ids) into @ids: 0, or -EINVAL
 * for an empty item, a non-number or more than REPORT_MAX_IDS.
 */
int report_ids__parse(struct report_ids *ids, const char *s);

struct report_opts {
	const char *name;	/* input, for headers */
	uint32_t k;		/* KCC_K_INF, or call edges */
	bool k_set;		/* else the recorded k */
	int sort;		/* counter index; -1: events, else calls */
	double percent_limit;	/* hide contexts below this share */
	const char *routine;	/* --routine NAME */
	const char *dso;	/* --dso OBJ[,OBJ...]: routines of these */
	double similar;		/* --similar X (percent), 0: off */
	double hot;		/* --hot PHI (fraction), 0: off */
	bool srcline;
	bool ci;		/* --ci: the calls column's 95% interval */
	enum report_format format;
	enum report_group group;
	/* filters (comma lists on the command line); none: all */
	const char *comm;	/* "name[,name...]", NULL: all */
	struct report_ids pids;
	struct report_ids tids;
	uint32_t max_nodes;	/* k-CCF node cap per group, 0: default */
	bool fleet_labels;	/* pprof: hostname, kernel, comm, build_id */
};

struct report_grp {
	char name[256];
	/* The cgroup of all its tasks (profile__cgroup()), or NULL. */
	const char *cgroup;
	bool cgroup_mixed;	/* tasks of different cgroups (or none) */
	uint32_t nr_tasks;
	uint32_t tgid;		/* one of them, for labels */
	uint64_t samples;
	uint64_t node_drops;
	uint64_t stack_drops;
	uint64_t stitch_errors;
	uint64_t lost_charges;
	uint32_t pruned;	/* forests with hot contexts only */
	uint64_t pruned_samples; /* their samples */
	struct pool ksf;	/* relabelled, joined k-SF */
	struct pool kccf;	/* its k-CCF */
	uint64_t kccf_drops;
	uint64_t *excl;		/* per k-CCF node, nr_ctrs counters */
	uint64_t total[STREAM_MAX_CTRS];
	/*
	 * The view every format renders (report__build() makes it once):
	 * keep: nodes of the view (--routine's trees, the --similar or
	 * --hot pruned forest; all by default); vexcl: a kept node's count
	 * less its kept children's (excl when all are kept), so folded
	 * stacks of the shown nodes redraw the kept forest; shown: kept,
	 * non-zero and not under --percent-limit (a row of the top list, a
	 * folded line, a pprof sample, a JSON self count); vinc: the sum of
	 * vexcl over the shown nodes of a kept subtree (SVG widths, tree
	 * counts); vtotal: the sum of the shown vexcl.
	 */
	uint8_t *keep;
	uint8_t *shown;
	uint64_t *vexcl;	/* per node, nr_ctrs counters */
	uint64_t *vinc;
	uint64_t vtotal[STREAM_MAX_CTRS];
};

/*
 * A routine is a symbol of an object: same-named static functions of two
 * objects are two routines.  The objects are the profile's, one per
 * (path, build-id) whatever the run.
 */
#define REPORT_NO_OBJ	UINT32_MAX

struct report_obj {
	const char *path;
	const uint8_t *build_id;
	uint32_t build_id_len;
};

struct report_fn {
	char *name;		/* shown: demangled, "[dso]" added if ambiguous */
	char *sym;		/* the symbol as the object names it */
	uint32_t obj;		/* REPORT_NO_OBJ: the address is unmapped */
	char *file;		/* --srcline: full source path, or NULL */
	int line;
	char *srcline;		/* "file:line", or NULL */
};

/* The stitch_* counters of struct kcc_status. */
#define REPORT_STITCH_REASONS	8

/*
 * The 95% interval of the calls of counters @c (a node's, nr_ctrs of
 * them): false when the report has none to give (report.h var_ctr).
 */
struct report;
bool report__calls_ci95(const struct report *r, const uint64_t *c,
			uint64_t *lo, uint64_t *hi);

struct report {
	struct profile *p;
	struct report_opts o;
	uint32_t k_src;		/* recorded k */
	uint32_t k;
	uint32_t nr_ctrs;	/* per node, calls_var included */
	uint32_t nr_cols;	/* shown: nr_ctrs but calls_var */
	/*
	 * KCC_CTR_CALLS_VAR when every run has it and counted its calls
	 * (the calls column is an estimate with a variance); -1 otherwise.
	 */
	int var_ctr;
	int sort;		/* resolved counter index */
	struct kcc_metric_desc desc[STREAM_MAX_CTRS];
	bool calls_valid;	/* every run replayed bursts */
	uint32_t source;	/* KCC_SOURCE_* of run 0 */
	struct symtab names;	/* routine label -> its (object, symbol) key */
	struct report_fn *fns;	/* per label */
	uint32_t nr_fns;
	struct report_obj *objs;
	uint32_t nr_objs;
	struct report_grp *groups;
	uint32_t nr_groups;
	uint64_t unsymbolized;	/* labels that found no function */
	/* sums over the runs' status */
	uint64_t st_samples, st_processed, st_dropped[KCC_DROP_NR];
	uint64_t st_bursts_replayed, st_bursts_skipped, st_stitch_errors;
	/* Counted calls (ABI 1.2): struct kcc_status calls_*, summed. */
	uint64_t st_calls_samples, st_calls_counter, st_calls_exact;
	uint64_t st_calls_scaled, st_calls_unplaced;
	uint64_t st_calls_bursts_exact, st_calls_bursts_scaled;
	/* ABI 1.3, a calls counter beside the event (KCC_HDR_CALLS_COUNTER) */
	uint64_t st_calls_after_last, st_calls_unread;
	uint64_t st_br_wrong_path;	/* records a PMU tagged wrong-path */
	uint64_t st_cgroup_other;	/* samples outside a -G session's cgroup */
	bool calls_counter;
	bool calls_hybrid;	/* ABI 1.5, KCC_HDR_CALLS_HYBRID: read at every sample too */
	bool after_last_unknown;	/* a run imported from perf.data */
	uint64_t st_node_drops;
	/* memory that follows the work: folding and pruning in kcc.ko */
	uint64_t st_folded, st_pruned, st_evicted;
	uint32_t hcct_phi_ppm, hcct_eps_ppm;	/* the largest of the runs */
	/* the sampled perf events (ABI 1.1 status), summed over the runs */
	uint64_t ev_enabled_ns, ev_running_ns, ev_throttles;
	uint32_t ev_nr, ev_errors;
	uint64_t st_stitch[REPORT_STITCH_REASONS]; /* kcc_status stitch_* */
};

/*
 * Build the groups' k-CCFs.  Errors are printed (naming o->name);
 * returns 0, -EINVAL (a usage problem: k above the recorded k, unknown
 * routine, ...) or -ENOMEM.
 */
int report__build(struct report *r, struct profile *p,
		  const struct report_opts *o);
void report__exit(struct report *r);

static inline bool report__shown(const struct report *r,
				 const struct report_grp *g, uint32_t v)
{
	return g->shown[v];
}

/* Name of routine label @id of the k-CCF. */
static inline const char *report__name(const struct report *r, uint64_t id)
{
	return id < r->nr_fns ? r->fns[id].name : "?";
}

/* "file:line" of routine @id (--srcline), NULL when unknown. */
static inline const char *report__srcline(const struct report *r,
					  uint64_t id)
{
	return id < r->nr_fns ? r->fns[id].srcline : NULL;
}

/* The object of routine @id, NULL for unmapped addresses. */
static inline const struct report_obj *report__obj(const struct report *r,
						   uint64_t id)
{
	return id < r->nr_fns && r->fns[id].obj != REPORT_NO_OBJ ?
	       &r->objs[r->fns[id].obj] : NULL;
}

/* Base name of the object of routine @id ("[unknown]" when none). */
const char *report__dso(const struct report *r, uint64_t id);

/*
 * The routine shown as @name (its demangled name, or "name [dso]"):
 * 0 and its label in *id, or -ENOENT.  Several routines may share a
 * name shown without the object; report__match() tells each of them.
 */
int report__find(const struct report *r, const char *name, uint32_t *id);
/* Does routine @id answer to @name ("name", "name [dso]" or the symbol)? */
bool report__match(const struct report *r, uint32_t id, const char *name);

/*
 * The children of every node of @f in one array: those of node v are
 * kids[first[v] .. first[v + 1]), the roots those of v = f->count, in
 * node order.  Nodes with @keep[v] == 0 are left out when @keep is given.
 * The caller frees *first and *kids, also after -ENOMEM.
 */
int forest__children(const struct kcc_forest *f, const uint8_t *keep,
		     uint32_t **first, uint32_t **kids);

/* Path of k-CCF node @v of @g, outermost caller first, ';'-separated. */
int report__path(const struct report *r, const struct report_grp *g,
		 uint32_t v, struct sbuf *out);

/* Display name of counter @i ("calls", "cache-misses", ...). */
const char *report__ctr_name(const struct report *r, uint32_t i);

/*
 * The text report.  The other formats (report_fmt.h, pprof.h, svg.h)
 * render the same view over this model; the model calls none of them.
 */
int report__text(struct report *r, FILE *out);

/*
 * Exclusive k-contexts of every group as sorted (path, counters) rows:
 * used by kcc diff.
 */
struct report_row {
	char *path;
	uint64_t ctr[STREAM_MAX_CTRS];
};

int report__rows(const struct report *r, struct report_row **rows,
		 size_t *nr);
void report_rows__free(struct report_row *rows, size_t nr);

#endif /* KCC_REPORT_H */
