// SPDX-License-Identifier: GPL-2.0
/*
 * report.c - relabel, join and inv_k: the k-CCFs behind kcc report, and
 * the text output.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evspec.h"
#include "report.h"

#define KCCF_MAX_NODES	(1u << 27)

static const char *const drop_names[KCC_DROP_NR] = {
	"ring-full", "no-task", "task-cap", "mem-cap", "bad-sample",
	"no-stack", "stopped", "budget",
};

/* The stitch_* counters of struct kcc_status, in order, as printed. */
static const struct {
	const char *name;
	size_t off;
} stitch_reasons[REPORT_STITCH_REASONS] = {
	{ "leaf-repaired", offsetof(struct kcc_status, stitch_leaf_repaired) },
	{ "walk-repaired", offsetof(struct kcc_status, stitch_walk_repaired) },
	{ "walk-cut", offsetof(struct kcc_status, stitch_walk_cut) },
	{ "skid-repaired", offsetof(struct kcc_status, stitch_skid_repaired) },
	{ "unrecorded-frames", offsetof(struct kcc_status, stitch_unrecorded) },
	{ "unmatched-returns", offsetof(struct kcc_status, stitch_unmatched_return) },
	{ "far-skipped", offsetof(struct kcc_status, stitch_far_skipped) },
	{ "below-walk", offsetof(struct kcc_status, stitch_below_walk) },
};

static const char *const source_names[] = {
	"auto", "lbr", "fp", "inject", "valence",
};

static const char *source_name(uint32_t s)
{
	return s < sizeof(source_names) / sizeof(source_names[0]) ?
	       source_names[s] : "unknown";
}

const char *report__ctr_name(const struct report *r, uint32_t i)
{
	return r->desc[i].name;
}

/* ---- symbolization ----------------------------------------------------- */

struct maps_idx {
	const struct stream_map **m;	/* sorted by tgid, image, start */
	uint32_t nr;
};

static int map_cmp(const void *a, const void *b)
{
	const struct stream_map *x = *(const struct stream_map * const *)a;
	const struct stream_map *y = *(const struct stream_map * const *)b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static int maps_idx__init(struct maps_idx *mi, const struct stream *s)
{
	uint32_t i;

	mi->nr = s->nr_maps;
	/* an array of pointers to maps: NOLINTNEXTLINE(bugprone-sizeof-expression) */
	mi->m = malloc(((size_t)mi->nr + 1) * sizeof(*mi->m));
	if (!mi->m)
		return -ENOMEM;
	for (i = 0; i < mi->nr; i++)
		mi->m[i] = &s->maps[i];
	/* an array of pointers to maps: NOLINTNEXTLINE(bugprone-sizeof-expression) */
	qsort(mi->m, mi->nr, sizeof(*mi->m), map_cmp);
	return 0;
}

/*
 * Last map of image @image of process @tgid starting at or below @addr:
 * an exec gives the process a new image, whose maps may overlap the old
 * one's.
 */
static const struct stream_map *maps_idx__find(const struct maps_idx *mi,
					       uint32_t tgid, uint32_t image,
					       uint64_t addr)
{
	uint32_t lo = 0, hi = mi->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct stream_map *m = mi->m[mid];

		if (m->tgid < tgid ||
		    (m->tgid == tgid && (m->image < image ||
					 (m->image == image && m->start <= addr))))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (mi->m[lo - 1]->tgid != tgid || mi->m[lo - 1]->image != image ||
	    addr >= mi->m[lo - 1]->end)
		return NULL;
	return mi->m[lo - 1];
}

/* The report's object for profile object @o: one per (path, build-id). */
static int obj_id(struct report *r, const struct profile_obj *o, uint32_t *id)
{
	const struct symobj *so = &o->so;
	struct report_obj *ro;
	uint32_t i;

	for (i = 0; i < r->nr_objs; i++) {
		ro = &r->objs[i];
		if (ro->build_id_len == so->build_id_len &&
		    !memcmp(ro->build_id, so->build_id, so->build_id_len) &&
		    !strcmp(ro->path, so->path)) {
			*id = i;
			return 0;
		}
	}
	if (!(r->nr_objs & (r->nr_objs - 1))) {
		ro = realloc(r->objs, (r->nr_objs ? 2 * (size_t)r->nr_objs : 1) *
			     sizeof(*ro));
		if (!ro)
			return -ENOMEM;
		r->objs = ro;
	}
	ro = &r->objs[r->nr_objs];
	ro->path = so->path;
	ro->build_id = so->build_id;
	ro->build_id_len = so->build_id_len;
	*id = r->nr_objs++;
	return 0;
}

/*
 * Routine @sym of object @obj as a label: the key "OBJ\x1fSYM" keeps
 * same-named symbols of different objects apart.
 */
static int intern(struct report *r, uint32_t obj, const char *sym,
		  uint32_t *id)
{
	char key[256], *big = NULL;
	const char *k = key;
	int n, ret;

	/* Once per forest node: no allocation for the usual names. */
	n = snprintf(key, sizeof(key), "%d\x1f%s",
		     obj == REPORT_NO_OBJ ? -1 : (int)obj, sym);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= sizeof(key)) {
		big = malloc((size_t)n + 1);
		if (!big)
			return -ENOMEM;
		snprintf(big, (size_t)n + 1, "%d\x1f%s",
			 obj == REPORT_NO_OBJ ? -1 : (int)obj, sym);
		k = big;
	}
	ret = symtab__intern(&r->names, k, (size_t)n, id);
	free(big);
	if (ret || *id < r->nr_fns)
		return ret;
	if (!(r->nr_fns & (r->nr_fns - 1))) {
		struct report_fn *f = realloc(r->fns, (r->nr_fns ? 2 * (size_t)r->nr_fns : 1) *
					      sizeof(*f));

		if (!f)
			return -ENOMEM;
		r->fns = f;
	}
	memset(&r->fns[*id], 0, sizeof(r->fns[*id]));
	r->fns[*id].obj = obj;
	r->fns[*id].sym = strdup(sym);
	r->nr_fns = *id + 1;
	return r->fns[*id].sym ? 0 : -ENOMEM;
}

static void set_srcline(struct report *r, uint32_t id, struct profile_obj *o,
			const struct sym *sy)
{
	struct report_fn *fn = &r->fns[id];
	struct symobj *live;
	const char *file;
	int line;

	if (fn->srcline)
		return;
	live = profile_obj__live(o);
	if (!live || symobj__srcline(live, sy->off, &file, &line))
		return;
	/* The full path: pprof -list and editors open it. */
	fn->file = strdup(file);
	fn->line = line;
	if (!fn->file || asprintf(&fn->srcline, "%s:%d", file, line) < 0)
		fn->srcline = NULL;
}

/*
 * The routine @label of a task of image @image of @tgid in @run belongs
 * to, as an id.
 */
static int symbolize(struct report *r, uint32_t run,
		     const struct maps_idx *mi, uint32_t tgid, uint32_t image,
		     uint64_t label, uint32_t *id)
{
	const struct stream_map *m;
	struct profile_obj *o;
	const struct sym *sy = NULL;
	const struct symobj *so = NULL;
	const char *base;
	uint32_t obj = REPORT_NO_OBJ;
	char buf[256];
	uint64_t off;
	int ret;

	if (label == 0)
		return intern(r, REPORT_NO_OBJ, "[unknown]", id);
	m = maps_idx__find(mi, tgid, image, label);
	if (!m) {
		r->unsymbolized++;
		snprintf(buf, sizeof(buf), "[0x%" PRIx64 "]", label);
		return intern(r, REPORT_NO_OBJ, buf, id);
	}
	off = label - m->start + m->pgoff;
	o = profile__obj(r->p, run, m);
	if (o && o->so.nr_syms) {
		so = &o->so;
	} else if (o) {
		so = profile_obj__live(o);
	}
	if (o) {
		ret = obj_id(r, o, &obj);
		if (ret)
			return ret;
	}
	if (so)
		sy = symobj__find(so, off);
	if (!sy) {
		r->unsymbolized++;
		base = strrchr(m->path, '/');
		snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]",
			 base ? base + 1 : m->path, off);
		return intern(r, obj, buf, id);
	}
	ret = intern(r, obj, sym__name(so, sy), id);
	if (!ret && r->o.srcline && o)
		set_srcline(r, *id, o, sy);
	return ret;
}

const char *report__dso(const struct report *r, uint64_t id)
{
	const struct report_obj *o = report__obj(r, id);
	const char *base;

	if (!o)
		return "[unknown]";
	base = strrchr(o->path, '/');
	return base ? base + 1 : o->path;
}

static int name_cmp(const void *a, const void *b)
{
	const struct report_fn *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/*
 * Shown names: demangled; routines of different objects that would show
 * the same name get their object's base name, "name [dso]", so that no
 * output merges them.
 */
static int name_routines(struct report *r)
{
	struct report_fn **by;
	uint32_t i, j;

	for (i = 0; i < r->nr_fns; i++) {
		r->fns[i].name = sym__demangle(r->fns[i].sym);
		if (!r->fns[i].name)
			return -ENOMEM;
	}
	if (!r->nr_fns)
		return 0;
	/* an array of pointers to routines: NOLINTNEXTLINE(bugprone-sizeof-expression) */
	by = malloc((size_t)r->nr_fns * sizeof(*by));
	if (!by)
		return -ENOMEM;
	for (i = 0; i < r->nr_fns; i++)
		by[i] = &r->fns[i];
	/* an array of pointers to routines: NOLINTNEXTLINE(bugprone-sizeof-expression) */
	qsort(by, r->nr_fns, sizeof(*by), name_cmp);
	for (i = 0; i < r->nr_fns; i = j) {
		for (j = i + 1; j < r->nr_fns && !strcmp(by[i]->name, by[j]->name); j++)
			;
		if (j == i + 1)
			continue;
		for (; i < j; i++) {
			struct report_fn *f = by[i];
			char *n;

			if (asprintf(&n, "%s [%s]", f->name,
				     report__dso(r, f - r->fns)) < 0) {
				free(by);
				return -ENOMEM;
			}
			free(f->name);
			f->name = n;
		}
	}
	free(by);
	return 0;
}

bool report__match(const struct report *r, uint32_t id, const char *name)
{
	const struct report_fn *f = &r->fns[id];
	const char *dso = report__dso(r, id);
	size_t n = strlen(name), d = strlen(dso);

	if (!strcmp(f->name, name) || !strcmp(f->sym, name))
		return true;
	/* "name" also selects each "name [dso]". */
	return strlen(f->name) == n + d + 3 && !strncmp(f->name, name, n) &&
	       !strncmp(f->name + n, " [", 2) &&
	       !strncmp(f->name + n + 2, dso, d) && f->name[n + 2 + d] == ']';
}

int report__find(const struct report *r, const char *name, uint32_t *id)
{
	uint32_t i;

	for (i = 0; i < r->nr_fns; i++) {
		if (!strcmp(r->fns[i].name, name)) {
			*id = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- grouping and joining ---------------------------------------------- */

/*
 * A process is named by its leader in the image @t ran: after an exec
 * (kcc record -- CMD forks kcc, then execs CMD) by the command, not by
 * the name it had before.
 */
static const char *process_comm(const struct stream *s,
				const struct stream_task *t)
{
	uint32_t i, img = t->flags >> KCC_TASK_IMAGE_SHIFT;
	const char *any = NULL;

	for (i = 0; i < s->nr_tasks; i++) {
		const struct stream_task *l = &s->tasks[i];

		if (l->pid != t->tgid || l->start_time_ns > t->start_time_ns)
			continue;
		if (l->flags >> KCC_TASK_IMAGE_SHIFT == img)
			return l->comm;
		if (!any)
			any = l->comm;
	}
	return any ? any : t->comm;
}

int report_ids__parse(struct report_ids *ids, const char *s)
{
	ids->nr = 0;
	for (;;) {
		unsigned long x;
		char *end;

		if (*s < '0' || *s > '9' || ids->nr == REPORT_MAX_IDS)
			return -EINVAL;
		errno = 0;
		x = strtoul(s, &end, 10);
		if (errno || x > 0x7fffffff || (*end && *end != ','))
			return -EINVAL;
		ids->v[ids->nr++] = (uint32_t)x;
		if (!*end)
			return 0;
		s = end + 1;
	}
}

static bool ids__has(const struct report_ids *ids, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < ids->nr; i++)
		if (ids->v[i] == id)
			return true;
	return !ids->nr;
}

/* Is @name one of the comma-separated @list? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (*list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, name, n))
			return true;
		list += len + (list[len] == ',');
	}
	return false;
}

static bool selected(const struct report_opts *o, const struct stream *s,
		     const struct stream_task *t)
{
	if (!ids__has(&o->pids, t->tgid) || !ids__has(&o->tids, t->pid))
		return false;
	if (o->comm && !in_list(o->comm, t->comm) &&
	    !in_list(o->comm, process_comm(s, t)))
		return false;
	return true;
}

static void group_name(const struct report *r, uint32_t run,
		       const struct stream *s, const struct stream_task *t,
		       char *buf, size_t len)
{
	const char *cg;

	switch (r->o.group) {
	case GROUP_ALL:
		snprintf(buf, len, "all");
		break;
	case GROUP_CGROUP:
		cg = profile__cgroup(r->p, run, t->cgroup_id);
		if (cg)
			snprintf(buf, len, "%s", cg);
		else if (t->cgroup_id)
			snprintf(buf, len, "[cgroup %" PRIu64 "]", t->cgroup_id);
		else
			snprintf(buf, len, "[no cgroup]");
		break;
	case GROUP_THREAD:
		snprintf(buf, len, "%s/%u", t->comm, t->pid);
		break;
	default:
		snprintf(buf, len, "%s", process_comm(s, t));
		break;
	}
}

/*
 * With GROUP_THREAD two runs may hold the same tid: such tasks are kept
 * apart by their group index, looked up here by name and run.
 */
static int find_group(struct report *r, const char *name)
{
	uint32_t i;

	for (i = 0; i < r->nr_groups; i++)
		if (!strcmp(r->groups[i].name, name))
			return (int)i;
	return -1;
}

static int new_group(struct report *r, const char *name)
{
	struct report_grp *g;

	if (!(r->nr_groups & (r->nr_groups - 1))) {
		size_t cap = r->nr_groups ? 2 * (size_t)r->nr_groups : 1;

		g = realloc(r->groups, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		r->groups = g;
	}
	g = &r->groups[r->nr_groups];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	return (int)r->nr_groups++;
}

/* Relabel task @t (of @run) and join it into the forest of @g. */
static int join_task(struct report *r, struct report_grp *g, uint32_t run,
		     const struct maps_idx *mi, const struct stream_task *t)
{
	const struct kcc_forest *src = &t->ksf.f;
	uint32_t *map, i;
	int ret = 0;

	map = malloc(((size_t)src->count + 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (i = 0; i < src->count; i++) {
		const struct kcc_node *n = kcc_forest_node(src, i);
		uint32_t parent = n->parent, id, j;

		ret = symbolize(r, run, mi, t->tgid,
				t->flags >> KCC_TASK_IMAGE_SHIFT, n->label, &id);
		if (ret)
			break;
		if (!kcc_is_root_parent(parent))
			parent = map[parent];
		j = kcc_forest_get(&g->ksf.f, parent, id);
		if (j == KCC_NIL) {
			/* The pool was sized to hold every source node. */
			ret = -ENOSPC;
			break;
		}
		kcc_forest_add_ctrs(&g->ksf.f, j, src, i);
		map[i] = j;
	}
	free(map);
	return ret;
}

static int build_kccf(struct report *r, struct report_grp *g)
{
	const struct kcc_forest *src = &g->ksf.f;
	uint32_t limit = r->o.max_nodes ? r->o.max_nodes : KCCF_MAX_NODES;
	uint64_t want = 2 * (uint64_t)src->count + 16;
	uint32_t cap = want > limit ? limit : (uint32_t)want, i, j;
	uint32_t nc = r->nr_ctrs;
	const struct kcc_forest *f;
	int ret;

	for (;;) {
		ret = pool__alloc(&g->kccf, cap, nc - 1);
		if (ret)
			return ret;
		ret = kcc_inv_k(src, r->k_src, r->k, &g->kccf.f, NULL);
		if (ret != -ENOSPC || cap >= limit)
			break;
		pool__exit(&g->kccf);
		cap = cap > limit / 2 ? limit : cap * 2;
	}
	if (ret == -ENOSPC) {
		g->kccf_drops = g->kccf.f.drops;
		fprintf(stderr, "%s: %s: %s: warning: k-CCF larger than %u nodes, %" PRIu64 " dropped\n",
			kcc_progname, r->o.name, g->name, limit, g->kccf_drops);
	} else if (ret) {
		return ret;
	}
	f = &g->kccf.f;
	g->excl = malloc(((size_t)f->count + 1) * nc * sizeof(uint64_t));
	if (!g->excl)
		return -ENOMEM;
	for (i = 0; i < f->count; i++)
		memcpy(&g->excl[(size_t)i * nc], kcc_forest_ctr(f, i),
		       nc * sizeof(uint64_t));
	for (i = 0; i < f->count; i++) {
		uint32_t p = kcc_forest_node(f, i)->parent;
		const uint64_t *c = kcc_forest_ctr(f, i);

		if (kcc_is_root_parent(p)) {
			for (j = 0; j < nc; j++)
				g->total[j] += c[j];
			continue;
		}
		/* Clamped: hostile counters may not add up. */
		for (j = 0; j < nc; j++) {
			uint64_t *e = &g->excl[(size_t)p * nc + j];

			*e = *e >= c[j] ? *e - c[j] : 0;
		}
	}
	return 0;
}

/*
 * Normal approximation: calls +- 1.96 sqrt(var), var the Horvitz-
 * Thompson estimate kcc.ko kept (uapi KCC_CTR_CALLS_VAR); a saturated
 * variance has no upper bound (UINT64_MAX).
 */
bool report__calls_ci95(const struct report *r, const uint64_t *c,
			uint64_t *lo, uint64_t *hi)
{
	double x, h;

	if (r->var_ctr < 0 || !r->calls_valid)
		return false;
	x = (double)c[KCC_CTR_CALLS];
	h = c[r->var_ctr] == UINT64_MAX ? INFINITY :
	    1.96 * sqrt((double)c[r->var_ctr]);
	*lo = x > h ? (uint64_t)floor(x - h) : 0;
	*hi = x + h >= 0x1p64 ? UINT64_MAX : (uint64_t)ceil(x + h);
	return true;
}

static double share(uint64_t x, uint64_t total)
{
	return total ? 100.0 * (double)x / (double)total : 0.0;
}

/* ---- the view: --routine, --similar, --hot, --percent-limit ------------- */

/* Is routine @id's object in --dso's list (base names or full paths)? */
static bool dso_selected(const struct report *r, uint32_t id)
{
	const struct report_obj *o = report__obj(r, id);

	return o && (in_list(r->o.dso, report__dso(r, id)) ||
		     in_list(r->o.dso, o->path));
}

static int prune(struct report *r, struct report_grp *g)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t n = f->count ? f->count : 1, v;
	uint32_t *scratch;

	g->keep = calloc(n, 1);
	if (!g->keep)
		return -ENOMEM;
	if (r->o.routine) {
		/* Every context of the routine: the trees of its roots. */
		for (v = 0; v < f->count; v++) {
			uint32_t p = kcc_forest_node(f, v)->parent;

			g->keep[v] = kcc_is_root_parent(p) ?
				     report__match(r, kcc_forest_node(f, v)->label,
						   r->o.routine) :
				     g->keep[p];
		}
	} else if (r->o.similar > 0) {
		uint32_t bp = (uint32_t)llround(r->o.similar * 100);

		scratch = malloc((size_t)n * sizeof(*scratch));
		if (!scratch)
			return -ENOMEM;
		kcc_prune_similar(f, r->sort, bp ? bp : 1, g->keep, scratch);
		free(scratch);
	} else if (r->o.hot > 0) {
		/* Hot contexts: counts only shrink away from a root. */
		double thr = floor(r->o.hot * (double)g->total[r->sort]);

		for (v = 0; v < f->count; v++)
			g->keep[v] = (double)kcc_forest_ctr(f, v)[r->sort] >= thr &&
				     kcc_forest_ctr(f, v)[r->sort] > 0;
	} else {
		memset(g->keep, 1, n);
	}
	/* --dso: only routines of those objects, and their callers. */
	for (v = 0; r->o.dso && v < f->count; v++) {
		uint32_t p = kcc_forest_node(f, v)->parent;

		if (!kcc_is_root_parent(p))
			g->keep[v] = g->keep[v] && g->keep[p];
		else if (g->keep[v])
			g->keep[v] = dso_selected(r, kcc_forest_node(f, v)->label);
	}
	return 0;
}

/* The view of group @g (report.h); nodes come after their parents. */
static int view_group(struct report *r, struct report_grp *g)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t n = f->count, nc = r->nr_ctrs, v, j;
	int ret;

	ret = prune(r, g);
	if (ret)
		return ret;
	g->shown = calloc((size_t)n + 1, 1);
	g->vexcl = calloc(((size_t)n + 1) * nc, sizeof(uint64_t));
	g->vinc = calloc(((size_t)n + 1) * nc, sizeof(uint64_t));
	if (!g->shown || !g->vexcl || !g->vinc)
		return -ENOMEM;
	for (v = 0; v < n; v++)
		if (g->keep[v])
			memcpy(&g->vexcl[(size_t)v * nc], kcc_forest_ctr(f, v),
			       nc * sizeof(uint64_t));
	for (v = 0; v < n; v++) {
		uint32_t p = kcc_forest_node(f, v)->parent;
		const uint64_t *c = kcc_forest_ctr(f, v);

		if (!g->keep[v] || kcc_is_root_parent(p))
			continue;
		/* Clamped: hostile counters may not add up. */
		for (j = 0; j < nc; j++) {
			uint64_t *e = &g->vexcl[(size_t)p * nc + j];

			*e = *e >= c[j] ? *e - c[j] : 0;
		}
	}
	for (v = 0; v < n; v++) {
		const uint64_t *e = &g->vexcl[(size_t)v * nc];
		bool any = false;

		for (j = 0; j < nc; j++)
			any |= e[j] != 0;
		g->shown[v] = g->keep[v] && any &&
			      share(e[r->sort], g->total[r->sort]) >= r->o.percent_limit;
	}
	/* Children after parents: sum the shown counts up, leaves first. */
	for (v = n; v-- > 0;) {
		uint32_t p = kcc_forest_node(f, v)->parent;
		uint64_t *vi = &g->vinc[(size_t)v * nc];

		if (!g->keep[v])
			continue;
		for (j = 0; j < nc; j++) {
			if (g->shown[v])
				vi[j] += g->vexcl[(size_t)v * nc + j];
			if (kcc_is_root_parent(p))
				g->vtotal[j] += vi[j];
			else
				g->vinc[(size_t)p * nc + j] += vi[j];
		}
	}
	return 0;
}

static int report__view(struct report *r)
{
	uint32_t gi, i;
	bool found = false;
	int ret;

	for (gi = 0; gi < r->nr_groups; gi++) {
		ret = view_group(r, &r->groups[gi]);
		if (ret)
			return ret;
	}
	if (!r->o.routine)
		return 0;
	for (i = 0; i < r->nr_fns && !found; i++)
		found = report__match(r, i, r->o.routine);
	if (!found) {
		fprintf(stderr, "%s: %s: no routine named '%s'\n", kcc_progname,
			r->o.name, r->o.routine);
		return -ENOENT;
	}
	return 0;
}

static int resolve_sort(struct report *r)
{
	int s = r->o.sort;

	if (s < 0)
		s = r->nr_ctrs > KCC_CTR_EVENTS ? KCC_CTR_EVENTS : KCC_CTR_CALLS;
	if ((uint32_t)s >= r->nr_cols) {
		fprintf(stderr, "%s: %s: the profile has no counter %d\n",
			kcc_progname, r->o.name, s);
		return -EINVAL;
	}
	r->sort = s;
	return 0;
}

int report__build(struct report *r, struct profile *p,
		  const struct report_opts *o)
{
	struct maps_idx mi = { 0 };
	uint32_t run, i, gi;
	uint64_t *need = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	r->p = p;
	r->o = *o;
	ret = symtab__init(&r->names);
	if (ret)
		return ret;
	r->k_src = p->runs[0].s.hdr.k;
	r->nr_ctrs = p->runs[0].s.nr_ctrs;
	r->source = p->runs[0].s.hdr.source;
	memcpy(r->desc, p->runs[0].s.desc, sizeof(r->desc));
	r->calls_valid = true;
	r->nr_cols = r->nr_ctrs;
	r->var_ctr = -1;
	if (stream__has_calls_var(&p->runs[0].s)) {
		r->nr_cols = KCC_CTR_CALLS_VAR;
		r->var_ctr = KCC_CTR_CALLS_VAR;
	}
	r->k = o->k_set ? o->k : r->k_src;
	if (r->k_src != KCC_K_INF && (r->k == KCC_K_INF || r->k > r->k_src)) {
		fprintf(stderr, "%s: %s: --k is above the recorded k %u: longer contexts were not kept\n",
			kcc_progname, o->name, r->k_src);
		return -EINVAL;
	}
	ret = resolve_sort(r);
	if (ret)
		return ret;

	for (run = 0; run < p->nr_runs; run++) {
		const struct stream *s = &p->runs[run].s;

		if (!(s->hdr.flags & KCC_HDR_CALLS_VALID))
			r->calls_valid = false;
		/* Calls seen in bursts, not scaled, are no estimate. */
		if (!s->hdr.status.calls_samples)
			r->var_ctr = -1;
		r->st_samples += s->hdr.status.samples;
		r->st_processed += s->hdr.status.processed;
		for (i = 0; i < KCC_DROP_NR; i++)
			r->st_dropped[i] += s->hdr.status.dropped[i];
		r->st_bursts_replayed += s->hdr.status.bursts_replayed;
		r->st_bursts_skipped += s->hdr.status.bursts_skipped;
		r->st_stitch_errors += s->hdr.status.stitch_errors;
		r->st_calls_samples += s->hdr.status.calls_samples;
		r->st_calls_counter += s->hdr.status.calls_counter;
		r->st_calls_exact += s->hdr.status.calls_exact;
		r->st_calls_scaled += s->hdr.status.calls_scaled;
		r->st_calls_unplaced += s->hdr.status.calls_unplaced;
		r->st_calls_bursts_exact += s->hdr.status.calls_bursts_exact;
		r->st_calls_bursts_scaled += s->hdr.status.calls_bursts_scaled;
		r->st_calls_after_last += s->hdr.status.calls_after_last;
		r->st_calls_unread += s->hdr.status.calls_unread;
		r->st_br_wrong_path += s->hdr.status.br_wrong_path;
		r->st_cgroup_other += s->hdr.status.cgroup_other;
		if (s->hdr.flags & KCC_HDR_CALLS_COUNTER)
			r->calls_counter = true;
		if (s->hdr.flags & KCC_HDR_CALLS_HYBRID)
			r->calls_hybrid = true;
		if (s->hdr.flags & KCC_HDR_IMPORTED)
			r->after_last_unknown = true;
		r->st_node_drops += s->hdr.status.node_drops;
		r->st_folded += s->hdr.status.tasks_folded;
		r->st_pruned += s->hdr.status.forests_pruned;
		r->st_evicted += s->hdr.status.nodes_evicted;
		if (s->hdr.status.hcct_phi_ppm > r->hcct_phi_ppm)
			r->hcct_phi_ppm = s->hdr.status.hcct_phi_ppm;
		if (s->hdr.status.hcct_eps_ppm > r->hcct_eps_ppm)
			r->hcct_eps_ppm = s->hdr.status.hcct_eps_ppm;
		r->ev_enabled_ns += s->hdr.status.ev_enabled_ns;
		r->ev_running_ns += s->hdr.status.ev_running_ns;
		r->ev_throttles += s->hdr.status.ev_throttles;
		r->ev_nr += s->hdr.status.ev_nr;
		r->ev_errors += s->hdr.status.ev_errors;
		for (i = 0; i < REPORT_STITCH_REASONS; i++)
			r->st_stitch[i] += *(const uint64_t *)((const char *)&s->hdr.status +
							       stitch_reasons[i].off);
		/* A bare stream brings no symbols: read the live files. */
		if (p->bare && profile__add_objects(p, run) < 0)
			return -ENOMEM;
	}

	/* Pass 1: groups and their node budgets. */
	for (run = 0; run < p->nr_runs; run++) {
		const struct stream *s = &p->runs[run].s;

		for (i = 0; i < s->nr_tasks; i++) {
			const struct stream_task *t = &s->tasks[i];
			char name[sizeof(r->groups[0].name)];
			const char *cg;
			int g;
			uint64_t *nn;

			if (!selected(o, s, t))
				continue;
			group_name(r, run, s, t, name, sizeof(name));
			cg = profile__cgroup(p, run, t->cgroup_id);
			g = find_group(r, name);
			if (g < 0) {
				g = new_group(r, name);
				if (g < 0) {
					ret = g;
					goto cleanup;
				}
				nn = realloc(need, ((size_t)g + 1) * sizeof(*need));
				if (!nn) {
					ret = -ENOMEM;
					goto cleanup;
				}
				need = nn;
				need[g] = 0;
				r->groups[g].tgid = t->tgid;
				r->groups[g].cgroup = cg;
			}
			/* Labelled with a cgroup only when all of it is in one. */
			if (!cg || !r->groups[g].cgroup ||
			    strcmp(cg, r->groups[g].cgroup))
				r->groups[g].cgroup_mixed = true;
			need[g] += t->ksf.f.count;
			r->groups[g].nr_tasks++;
			r->groups[g].samples += t->samples;
			r->groups[g].node_drops += t->node_drops;
			r->groups[g].stack_drops += t->stack_drops;
			r->groups[g].stitch_errors += t->stitch_errors;
			r->groups[g].lost_charges += t->lost_charges;
			if (t->flags & KCC_TASK_PRUNED) {
				r->groups[g].pruned++;
				r->groups[g].pruned_samples += t->samples;
			}
		}
	}
	for (gi = 0; gi < r->nr_groups; gi++)
		if (r->groups[gi].cgroup_mixed)
			r->groups[gi].cgroup = NULL;
	for (gi = 0; gi < r->nr_groups; gi++) {
		/* need has nr_groups entries, allocated above: NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
		if (need[gi] >= KCC_FREE) {
			ret = -E2BIG;
			goto cleanup;
		}
		ret = pool__alloc(&r->groups[gi].ksf, (uint32_t)need[gi],
				  r->nr_ctrs - 1);
		if (ret)
			goto cleanup;
	}

	/* Pass 2: relabel and join. */
	for (run = 0; run < p->nr_runs; run++) {
		const struct stream *s = &p->runs[run].s;

		ret = maps_idx__init(&mi, s);
		if (ret)
			goto cleanup;
		for (i = 0; i < s->nr_tasks && !ret; i++) {
			const struct stream_task *t = &s->tasks[i];
			char name[sizeof(r->groups[0].name)];

			if (!selected(o, s, t))
				continue;
			group_name(r, run, s, t, name, sizeof(name));
			ret = join_task(r, &r->groups[find_group(r, name)], run,
					&mi, t);
		}
		free(mi.m);
		mi.m = NULL;
		if (ret)
			goto cleanup;
	}

	ret = name_routines(r);
	if (ret)
		goto cleanup;
	for (gi = 0; gi < r->nr_groups; gi++) {
		ret = build_kccf(r, &r->groups[gi]);
		if (ret)
			goto cleanup;
	}
	ret = report__view(r);
cleanup:
	free(need);
	if (ret == -ENOMEM || ret == -ENOSPC || ret == -E2BIG)
		fprintf(stderr, "%s: %s: %s\n", kcc_progname, o->name,
			strerror(-ret));
	return ret;
}

void report__exit(struct report *r)
{
	uint32_t i;

	for (i = 0; i < r->nr_groups; i++) {
		pool__exit(&r->groups[i].ksf);
		pool__exit(&r->groups[i].kccf);
		free(r->groups[i].excl);
		free(r->groups[i].keep);
		free(r->groups[i].shown);
		free(r->groups[i].vexcl);
		free(r->groups[i].vinc);
	}
	for (i = 0; i < r->nr_fns; i++) {
		free(r->fns[i].name);
		free(r->fns[i].sym);
		free(r->fns[i].file);
		free(r->fns[i].srcline);
	}
	free(r->fns);
	free(r->objs);
	free(r->groups);
	symtab__exit(&r->names);
	memset(r, 0, sizeof(*r));
}

int report__path(const struct report *r, const struct report_grp *g,
		 uint32_t v, struct sbuf *out)
{
	const struct kcc_forest *f = &g->kccf.f;

	for (;;) {
		const struct kcc_node *n = kcc_forest_node(f, v);
		const char *name = report__name(r, n->label);

		sbuf__append(out, name, strlen(name));
		if (kcc_is_root_parent(n->parent))
			break;
		sbuf__append(out, ";", 1);
		v = n->parent;
	}
	sbuf__append(out, "", 1);
	return out->err;
}

/* ---- rows: exclusive k-contexts ------------------------------------------ */

static int row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct report_row *)a)->path,
		      ((const struct report_row *)b)->path);
}

void report_rows__free(struct report_row *rows, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(rows[i].path);
	free(rows);
}

int report__rows(const struct report *r, struct report_row **rowsp,
		 size_t *nrp)
{
	struct report_row *rows = NULL;
	size_t nr = 0, cap = 0, i, w;
	uint32_t gi, v, nc = r->nr_ctrs;
	int ret = 0;

	for (gi = 0; gi < r->nr_groups; gi++) {
		const struct report_grp *g = &r->groups[gi];

		for (v = 0; v < g->kccf.f.count; v++) {
			const uint64_t *e = &g->excl[(size_t)v * nc];
			struct sbuf sb = { 0 };
			bool any = false;
			uint32_t j;

			for (j = 0; j < nc; j++)
				any |= e[j] != 0;
			if (!any)
				continue;
			if (nr == cap) {
				struct report_row *q;

				cap = cap ? 2 * cap : 256;
				q = realloc(rows, cap * sizeof(*q));
				if (!q) {
					ret = -ENOMEM;
					goto fail;
				}
				rows = q;
			}
			ret = report__path(r, g, v, &sb);
			if (ret) {
				sbuf__exit(&sb);
				goto fail;
			}
			memset(&rows[nr], 0, sizeof(rows[nr]));
			rows[nr].path = (char *)sb.p;
			memcpy(rows[nr].ctr, e, nc * sizeof(uint64_t));
			nr++;
		}
	}
	if (nr)
		qsort(rows, nr, sizeof(*rows), row_cmp);
	/* Groups merged by kcc diff: equal paths add up. */
	for (i = 0, w = 0; i < nr; i++) {
		if (w && !strcmp(rows[w - 1].path, rows[i].path)) {
			uint32_t j;

			for (j = 0; j < nc; j++)
				rows[w - 1].ctr[j] += rows[i].ctr[j];
			free(rows[i].path);
			continue;
		}
		rows[w++] = rows[i];
	}
	*rowsp = rows;
	*nrp = w;
	return 0;
fail:
	report_rows__free(rows, nr);
	return ret;
}

/* ---- text ---------------------------------------------------------------- */

/*
 * The sampled event and how much of the time it could sample: samples
 * missing because the event was descheduled (multiplexed), throttled or
 * never scheduled are said here, not left to look like a quiet program.
 */
static void print_event(struct report *r, FILE *out)
{
	const struct kcc_status *st = &r->p->runs[0].s.hdr.status;
	const struct kcc_metric_desc *d = &r->desc[KCC_CTR_EVENTS];
	char enc[128];

	if (r->nr_ctrs <= KCC_CTR_EVENTS || d->type == ~0u)
		return;
	evspec__encoding(d->type, d->config, st->ev_config1, st->ev_config2,
			 enc, sizeof(enc));
	fprintf(out, "# event: %s (%s)", d->name, enc);
	if (r->ev_nr)
		fprintf(out, ", %u perf events, enabled %.3f s, running %.3f s",
			r->ev_nr, r->ev_enabled_ns / 1e9, r->ev_running_ns / 1e9);
	if (r->ev_running_ns < r->ev_enabled_ns)
		fprintf(out, " (%.1f%% descheduled: fewer samples)",
			100.0 * (r->ev_enabled_ns - r->ev_running_ns) /
			r->ev_enabled_ns);
	if (r->ev_throttles)
		fprintf(out, ", throttled %" PRIu64 " times (each until the next tick)",
			r->ev_throttles);
	if (r->ev_errors)
		fprintf(out, ", %u never scheduled (ERROR state)", r->ev_errors);
	fprintf(out, "\n");
}

/*
 * Objects recorded without their symbol tables (--build-ids) that the
 * report needed: where each was found, or that it was not.
 */
static void print_by_id(const struct report *r, FILE *out)
{
	uint32_t n[4] = { 0 }, i;

	if (r->p->bare)
		return;
	for (i = 0; i < r->p->nr_objs; i++) {
		const struct profile_obj *o = &r->p->objs[i];

		if (o->so.nr_syms || (o->flags & (PROF_OBJ_MISSING | PROF_OBJ_STALE)) ||
		    !o->so.build_id_len || !o->live_tried)
			continue;
		n[o->live ? o->live_from : PROF_LIVE_NONE]++;
	}
	if (n[0] + n[1] + n[2] + n[3])
		fprintf(out, "# objects by build-id: %u at their path, %u in the build-id cache, %u from debuginfod, %u not found (their routines unnamed)\n",
			n[PROF_LIVE_PATH], n[PROF_LIVE_CACHE],
			n[PROF_LIVE_DEBUGINFOD], n[PROF_LIVE_NONE]);
}

/* The profile's INFO, as perf report --header shows perf.data's. */
static void print_info(struct report *r, FILE *out)
{
	static const struct {
		const char *key, *label;
	} keys[] = {
		{ "hostname", "hostname" }, { "release", "os release" },
		{ "machine", "arch" }, { "cpu", "cpu" },
		{ "version", "kcc version" }, { "cmdline", "cmdline" },
		{ "cgroup", "cgroup" },
	};
	const struct profile_info *in = &r->p->info;
	char when[64];
	time_t t;
	size_t i;

	if (!in->valid)
		return;
	t = (time_t)(in->start_ns / 1000000000ull);
	if (!strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&t)))
		when[0] = 0;
	fprintf(out, "# captured on: %s\n", when);
	if (in->duration_ns)
		fprintf(out, "# duration: %.3f s\n", in->duration_ns / 1e9);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = profile__info_get(r->p, keys[i].key);

		if (v)
			fprintf(out, "# %s: %s\n", keys[i].label, v);
	}
}

static void print_header(struct report *r, FILE *out)
{
	const struct stream *s = &r->p->runs[0].s;
	uint32_t i;
	bool any = false;

	fprintf(out, "# kcc report: %s\n", r->o.name);
	print_info(r, out);
	fprintf(out, "# source: %s, runs: %u, recorded k: ", source_name(r->source),
		r->p->nr_runs);
	if (r->k_src == KCC_K_INF)
		fprintf(out, "inf");
	else
		fprintf(out, "%u", r->k_src);
	fprintf(out, ", k: ");
	if (r->k == KCC_K_INF)
		fprintf(out, "inf");
	else
		fprintf(out, "%u", r->k);
	fprintf(out, s->hdr.flags & KCC_HDR_FREQ ?
		", sample frequency: %" PRIu64 " Hz (each sample charged its period)\n" :
		", sample period: %" PRIu64 "\n",
		(uint64_t)s->hdr.sample_period);
	print_event(r, out);
	fprintf(out, "# metrics:");
	for (i = 0; i < r->nr_cols; i++)
		fprintf(out, " %s%s", r->desc[i].name,
			i == KCC_CTR_CALLS && !r->calls_valid ?
			" (not measured: no bursts replayed)" : "");
	if ((s->hdr.flags & KCC_HDR_CALLS_EVENT) &&
	    (s->hdr.flags & KCC_HDR_CALLS_HYBRID))
		fprintf(out, "\n# calls: hybrid: bursts at the samples of %s, each counting exactly the calls it holds since the thread's previous sample; the calls they miss spread over the bursts of a second event (type %u, config %#" PRIx64 ") sampled every so many calls",
			r->desc[KCC_CTR_EVENTS].name,
			r->desc[KCC_CTR_CALLS].type,
			(uint64_t)r->desc[KCC_CTR_CALLS].config);
	else if (s->hdr.flags & KCC_HDR_CALLS_EVENT)
		fprintf(out, "\n# calls: bursts at the samples of a second event (type %u, config %#" PRIx64 "); %s: at the samples of the event above",
			r->desc[KCC_CTR_CALLS].type,
			(uint64_t)r->desc[KCC_CTR_CALLS].config,
			r->desc[KCC_CTR_EVENTS].name);
	else if (s->hdr.flags & KCC_HDR_CALLS_COUNTER)
		fprintf(out, "\n# calls: counted beside the event above (type %u, config %#" PRIx64 ") and read at its samples: each burst adds the calls since the thread's previous sample%s",
			r->desc[KCC_CTR_CALLS].type,
			(uint64_t)r->desc[KCC_CTR_CALLS].config,
			s->hdr.flags & KCC_HDR_CALLS_FALLBACK ?
			" (the hybrid estimate was asked for; its calls event can be counted here, not sampled)" : "");
	else if (s->hdr.flags & KCC_HDR_CALLS_FALLBACK)
		fprintf(out, "\n# calls: the calls event asked for could not be opened: bursts at the samples of the event above");
	if (s->hdr.flags & KCC_HDR_BR_FLAGS)
		fprintf(out, "\n# branch records: with flags and cycles (the PMU refused NO_FLAGS and NO_CYCLES)");
	else if (s->hdr.flags & KCC_HDR_BR_INFO)
		fprintf(out, "\n# branch records: with flags and cycles (lbr_info=1: the LBR_SELECT of perf record -j any_call,any_ret,u)");
	if (r->st_br_wrong_path)
		fprintf(out, "\n# branch records: %" PRIu64 " on a wrong path left out (speculative, never retired)",
			r->st_br_wrong_path);
	if (r->st_cgroup_other)
		fprintf(out, "\n# samples of tasks outside the cgroup: %" PRIu64 " (not kept)",
			r->st_cgroup_other);
	if (r->calls_valid && !r->st_calls_samples)
		fprintf(out, "\n# calls counted: none (no calls counter); calls: seen in bursts, not scaled");
	else if (r->calls_valid)
		fprintf(out, "\n# calls counted: counter %" PRIu64 " calls at %" PRIu64 " samples; exact %" PRIu64 " (joined windows), estimated %" PRIu64 " (scaled), in no burst %" PRIu64 "; bursts joined %" PRIu64 ", scaled %" PRIu64,
			r->st_calls_counter, r->st_calls_samples,
			r->st_calls_exact, r->st_calls_scaled,
			r->st_calls_unplaced, r->st_calls_bursts_exact,
			r->st_calls_bursts_scaled);
	if (r->var_ctr >= 0 && r->st_calls_scaled) {
		const struct kcc_metric_desc *c = &r->desc[KCC_CTR_CALLS];
		const struct kcc_metric_desc *e = &r->desc[KCC_CTR_EVENTS];
		uint64_t n = r->st_calls_exact + r->st_calls_scaled;

		fprintf(out, "\n# calls estimated: %.1f%% scaled; --ci gives each context's 95%% interval, the sampling error of its scaled bursts",
			share(r->st_calls_scaled, n));
		/*
		 * Bursts at the samples of a time or miss event: where it
		 * lands depends on what runs between calls, and so does
		 * what the burst holds (Documentation/fidelity.rst).
		 */
		if (r->calls_counter && r->nr_cols > KCC_CTR_EVENTS &&
		    (e->type != c->type || e->config != c->config) &&
		    r->st_calls_scaled > r->st_calls_exact)
			fprintf(out, "\n# calls estimated at the samples of %s: they land where it accrues (time and misses: inside long stretches without calls), not evenly over the calls, which biases the estimates beyond that interval; kcc record --calls-hybrid spreads what the bursts miss at retired calls instead",
				e->name);
	}
	if (r->calls_valid && (r->calls_counter || r->calls_hybrid) &&
	    r->after_last_unknown)
		fprintf(out, "\n# calls not in the column: those after the threads' last samples (not known: imported from perf.data); samples without a count (counter not read): %" PRIu64,
			r->st_calls_unread);
	else if (r->calls_valid && (r->calls_counter || r->calls_hybrid))
		fprintf(out, "\n# calls not in the column: %" PRIu64 " counted after the threads' last samples; samples without a count (counter not running): %" PRIu64,
			r->st_calls_after_last, r->st_calls_unread);
	fprintf(out, "\n# samples: %" PRIu64 " taken, %" PRIu64 " processed, dropped:",
		r->st_samples, r->st_processed);
	for (i = 0; i < KCC_DROP_NR; i++) {
		if (!r->st_dropped[i])
			continue;
		fprintf(out, " %s %" PRIu64, drop_names[i], r->st_dropped[i]);
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : " none");
	fprintf(out, "# bursts: %" PRIu64 " replayed, %" PRIu64 " skipped; stitch errors: %" PRIu64 "; forest nodes refused: %" PRIu64 "\n",
		r->st_bursts_replayed, r->st_bursts_skipped, r->st_stitch_errors,
		r->st_node_drops);
	fprintf(out, "# stitching:");
	for (i = 0, any = false; i < REPORT_STITCH_REASONS; i++) {
		if (!r->st_stitch[i])
			continue;
		fprintf(out, "%s %s %" PRIu64, any ? "," : "",
			stitch_reasons[i].name, r->st_stitch[i]);
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : " nothing repaired or dropped");
	if (r->st_folded)
		fprintf(out, "# folded: %" PRIu64 " exited threads into their process's forest (pid = tgid)\n",
			r->st_folded);
	if (r->st_pruned)
		fprintf(out, "# pruned forests: %" PRIu64 ", keeping only their hot contexts (Space-Saving, phi %.4f%%, eps %.4f%%, %" PRIu64 " cold nodes evicted): in such a forest, with N its samples (twice for a finite k), every context with more than floor(phi N) samples is present and every count is at most eps N below the true one\n",
			r->st_pruned, r->hcct_phi_ppm / 1e4, r->hcct_eps_ppm / 1e4,
			r->st_evicted);
	print_by_id(r, out);
	if (r->unsymbolized)
		fprintf(out, "# labels without a symbol: %" PRIu64 "\n", r->unsymbolized);
}

/* --ci's column: the half width of calls' 95% interval, or "-". */
static void print_ci(struct report *r, const uint64_t *c, FILE *out)
{
	uint64_t lo, hi;
	char buf[24];

	if (!report__calls_ci95(r, c, &lo, &hi))
		snprintf(buf, sizeof(buf), "-");
	else if (hi == UINT64_MAX)
		snprintf(buf, sizeof(buf), "+-inf");
	else
		snprintf(buf, sizeof(buf), "+-%" PRIu64,
			 hi - c[KCC_CTR_CALLS] > c[KCC_CTR_CALLS] - lo ?
			 hi - c[KCC_CTR_CALLS] : c[KCC_CTR_CALLS] - lo);
	fprintf(out, " %10s", buf);
}

static void print_counts(struct report *r, const uint64_t *c, FILE *out)
{
	uint32_t j;

	for (j = 0; j < r->nr_cols; j++) {
		if (j == KCC_CTR_CALLS && !r->calls_valid)
			fprintf(out, " %12s", "-");
		else
			fprintf(out, " %12" PRIu64, c[j]);
		if (j == KCC_CTR_CALLS && r->o.ci)
			print_ci(r, c, out);
	}
}

static void print_col_names(struct report *r, FILE *out)
{
	uint32_t j;

	fprintf(out, "#  share ");
	for (j = 0; j < r->nr_cols; j++) {
		fprintf(out, " %12.12s", r->desc[j].name);
		if (j == KCC_CTR_CALLS && r->o.ci)
			fprintf(out, " %10s", "95%");
	}
}

struct top_ent {
	uint32_t v;
	uint64_t key;
	char *path;
};

static int top_cmp(const void *a, const void *b)
{
	const struct top_ent *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int print_top(struct report *r, struct report_grp *g, FILE *out)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t nc = r->nr_ctrs, v, n = 0, i;
	struct top_ent *ents;
	int ret = 0;

	ents = calloc((size_t)f->count + 1, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (v = 0; v < f->count; v++) {
		const uint64_t *e = &g->vexcl[(size_t)v * nc];
		struct sbuf sb = { 0 };

		if (!report__shown(r, g, v))
			continue;
		ret = report__path(r, g, v, &sb);
		if (ret) {
			sbuf__exit(&sb);
			goto cleanup;
		}
		ents[n].v = v;
		ents[n].key = e[r->sort];
		ents[n++].path = (char *)sb.p;
	}
	qsort(ents, n, sizeof(*ents), top_cmp);
	print_col_names(r, out);
	fprintf(out, "  %-16s  k-context (outermost caller first)\n", "dso");
	for (i = 0; i < n; i++) {
		const uint64_t *e = &g->vexcl[(size_t)ents[i].v * nc];
		uint32_t callee = ents[i].v;
		const char *sl;

		while (!kcc_is_root_parent(kcc_forest_node(f, callee)->parent))
			callee = kcc_forest_node(f, callee)->parent;
		fprintf(out, "%7.2f%%", share(e[r->sort], g->total[r->sort]));
		print_counts(r, e, out);
		/* The object of the routine, the context's last entry. */
		fprintf(out, "  %-16s  %s",
			report__dso(r, kcc_forest_node(f, callee)->label),
			ents[i].path);
		sl = report__srcline(r, kcc_forest_node(f, callee)->label);
		if (sl)
			fprintf(out, "  [%s]", sl);
		fputc('\n', out);
	}
cleanup:
	for (i = 0; i < n; i++)
		free(ents[i].path);
	free(ents);
	return ret;
}

/* ---- trees: --routine, --similar, --hot ------------------------------------ */

struct tree {
	uint32_t *first;	/* CSR: children of v at kids[first[v]..first[v+1]) */
	uint32_t *kids;		/* roots at first[n]..first[n + 1] */
};

static const struct report_grp *cmp_g;
static const struct report *cmp_r;

static int kid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct kcc_forest *f = &cmp_g->kccf.f;
	uint64_t cx = cmp_g->vinc[(size_t)x * cmp_r->nr_ctrs + cmp_r->sort];
	uint64_t cy = cmp_g->vinc[(size_t)y * cmp_r->nr_ctrs + cmp_r->sort];
	int c;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	c = strcmp(report__name(cmp_r, kcc_forest_node(f, x)->label),
		   report__name(cmp_r, kcc_forest_node(f, y)->label));
	return c ? c : (x < y ? -1 : x > y);
}

int forest__children(const struct kcc_forest *f, const uint8_t *keep,
		     uint32_t **first, uint32_t **kids)
{
	uint32_t n = f->count, i, sp, *fst, *fill;

	*first = fst = calloc((size_t)n + 2, sizeof(uint32_t));
	*kids = malloc(((size_t)n + 1) * sizeof(uint32_t));
	fill = malloc(((size_t)n + 2) * sizeof(uint32_t));
	if (!fst || !*kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		uint32_t p = kcc_forest_node(f, i)->parent;

		if (keep && !keep[i])
			continue;
		fst[kcc_is_root_parent(p) ? n : p]++;
	}
	for (i = 0, sp = 0; i <= n; i++) {
		uint32_t c = fst[i];

		fst[i] = sp;
		fill[i] = sp;
		sp += c;
	}
	fst[n + 1] = sp;
	for (i = 0; i < n; i++) {
		uint32_t p = kcc_forest_node(f, i)->parent;

		if (keep && !keep[i])
			continue;
		(*kids)[fill[kcc_is_root_parent(p) ? n : p]++] = i;
	}
	free(fill);
	return 0;
}

static int tree__build(struct tree *t, const struct report *r,
		       const struct report_grp *g)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t n = f->count, i;
	int ret;

	ret = forest__children(f, g->keep, &t->first, &t->kids);
	if (ret)
		return ret;
	cmp_g = g;
	cmp_r = r;
	for (i = 0; i <= n; i++)
		qsort(t->kids + t->first[i], t->first[i + 1] - t->first[i],
		      sizeof(uint32_t), kid_cmp);
	return 0;
}

static void tree__exit(struct tree *t)
{
	free(t->first);
	free(t->kids);
}

/* Print the subtree of @root, callers indented under their callees. */
static int print_subtree(struct report *r, struct report_grp *g,
			 const struct tree *t, uint32_t root, FILE *out)
{
	const struct kcc_forest *f = &g->kccf.f;
	uint32_t nc = r->nr_ctrs;
	uint64_t base = g->vinc[(size_t)root * nc + r->sort];
	uint32_t *stack, *depth, sp = 0;

	stack = malloc(((size_t)f->count + 1) * sizeof(uint32_t));
	depth = malloc(((size_t)f->count + 1) * sizeof(uint32_t));
	if (!stack || !depth) {
		free(stack);
		free(depth);
		return -ENOMEM;
	}
	stack[sp] = root;
	depth[sp++] = 0;
	while (sp) {
		uint32_t v = stack[--sp], d = depth[sp], j;
		const struct kcc_node *nd = kcc_forest_node(f, v);
		const char *sl = report__srcline(r, nd->label);
		const uint64_t *c = &g->vinc[(size_t)v * nc];
		bool any = false;

		/* Nothing shown below (--percent-limit): left out. */
		for (j = 0; j < nc; j++)
			any |= c[j] != 0;
		if (!any)
			continue;
		fprintf(out, "%7.2f%%", share(c[r->sort], base));
		print_counts(r, c, out);
		fprintf(out, "  %*s%s", (int)(2 * d), "", report__name(r, nd->label));
		if (sl)
			fprintf(out, "  [%s]", sl);
		fputc('\n', out);
		for (j = t->first[v + 1]; j-- > t->first[v];) {
			stack[sp] = t->kids[j];
			depth[sp++] = d + 1;
		}
	}
	free(stack);
	free(depth);
	return 0;
}

static int print_trees(struct report *r, struct report_grp *g, FILE *out)
{
	const struct kcc_forest *f = &g->kccf.f;
	struct tree t = { 0 };
	uint32_t i;
	int ret;

	ret = tree__build(&t, r, g);
	if (ret)
		goto cleanup;
	if (r->o.routine && t.first[f->count] == t.first[f->count + 1]) {
		fprintf(out, "# no routine '%s' here\n", r->o.routine);
		goto cleanup;
	}
	print_col_names(r, out);
	fprintf(out, "  routine, then its callers (share of the routine)\n");
	for (i = t.first[f->count]; i < t.first[f->count + 1] && !ret; i++)
		ret = print_subtree(r, g, &t, t.kids[i], out);
cleanup:
	tree__exit(&t);
	return ret;
}

int report__text(struct report *r, FILE *out)
{
	uint32_t gi;
	int ret = 0;

	print_header(r, out);
	for (gi = 0; gi < r->nr_groups && !ret; gi++) {
		struct report_grp *g = &r->groups[gi];
		uint32_t j;

		fprintf(out, "#\n# %s: %s, %u task%s, %" PRIu64 " samples",
			r->o.group == GROUP_THREAD ? "thread" :
			r->o.group == GROUP_ALL ? "tasks" :
			r->o.group == GROUP_CGROUP ? "cgroup" : "process",
			g->name, g->nr_tasks, g->nr_tasks == 1 ? "" : "s",
			g->samples);
		if (g->node_drops || g->stack_drops || g->lost_charges ||
		    g->stitch_errors)
			fprintf(out, "; lost: %" PRIu64 " nodes, %" PRIu64 " frames, %" PRIu64 " charges; stitch errors %" PRIu64,
				g->node_drops, g->stack_drops, g->lost_charges,
				g->stitch_errors);
		if (g->pruned) {
			/* The guarantee in samples, N as the header says. */
			uint64_t n = g->pruned_samples * (r->k_src == KCC_K_INF ? 1 : 2);

			fprintf(out, "; pruned: %u forest%s, hot above %" PRIu64 " samples, counts within %" PRIu64,
				g->pruned, g->pruned == 1 ? "" : "s",
				n * r->hcct_phi_ppm / 1000000,
				(n * r->hcct_eps_ppm + 999999) / 1000000);
		}
		fprintf(out, "\n# total:");
		for (j = 0; j < r->nr_cols; j++) {
			if (j == KCC_CTR_CALLS && !r->calls_valid)
				fprintf(out, " %s -", r->desc[j].name);
			else
				fprintf(out, " %s %" PRIu64, r->desc[j].name,
					g->total[j]);
		}
		fprintf(out, "\n");
		if (r->o.routine || r->o.similar > 0 || r->o.hot > 0)
			ret = print_trees(r, g, out);
		else
			ret = print_top(r, g, out);
	}
	return ret;
}
