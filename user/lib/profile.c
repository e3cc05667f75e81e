// SPDX-License-Identifier: GPL-2.0
/*
 * profile.c - read, build and write kcc profile files.
 *
 * Like the stream parser, the profile parser checks every length against
 * the bytes present before using or allocating for it, and reports the
 * first problem with its file offset; offsets inside an embedded stream
 * are given in the profile file, not in the stream.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "debuginfod.h"
#include "profile.h"

static int prof_fail(const char *name, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int prof_fail(const char *name, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: offset %" PRIu64 ": ", kcc_progname, name, off);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

void profile__init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
}

static void obj__exit(struct profile_obj *o)
{
	symobj__exit(&o->so);
	if (o->live) {
		symobj__exit(o->live);
		free(o->live);
	}
}

static void info__exit(struct profile_info *in)
{
	uint32_t i;

	for (i = 0; i < in->nr; i++) {
		free(in->key[i]);
		free(in->val[i]);
	}
	memset(in, 0, sizeof(*in));
}

/* Set @key to @val (the first @len bytes), replacing an earlier value. */
static int info__set(struct profile_info *in, const char *key,
		     const char *val, size_t len)
{
	uint32_t i;
	char *v = strndup(val, len), *k;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < in->nr; i++) {
		if (!strcmp(in->key[i], key)) {
			free(in->val[i]);
			in->val[i] = v;
			return 0;
		}
	}
	if (in->nr == PROF_INFO_MAX_KEYS) {
		free(v);
		return -E2BIG;
	}
	k = strdup(key);
	if (!k) {
		free(v);
		return -ENOMEM;
	}
	in->key[in->nr] = k;
	in->val[in->nr++] = v;
	return 0;
}

int profile__info_set(struct profile *p, const char *key, const char *val)
{
	return info__set(&p->info, key, val, strlen(val));
}

const char *profile__info_get(const struct profile *p, const char *key)
{
	uint32_t i;

	for (i = 0; i < p->info.nr; i++)
		if (!strcmp(p->info.key[i], key))
			return p->info.val[i];
	return NULL;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The "model name" of the first CPU in /proc/cpuinfo, or "". */
static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += strspn(colon + 1, " \t") + 1;
		colon[strcspn(colon, "\n")] = 0;
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

int profile__info_begin(struct profile *p, const char *prog,
			char *const *argv, const char *version)
{
	struct profile_info *in = &p->info;
	struct sbuf cmd = { 0 };
	struct utsname u;
	char host[256], cpu[256];
	int ret = 0;

	info__exit(in);
	in->valid = true;
	in->start_ns = clock_ns(CLOCK_REALTIME);
	in->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
	if (prog)
		sbuf__append(&cmd, prog, strlen(prog));
	for (; argv && *argv; argv++) {
		if (cmd.len)
			sbuf__append(&cmd, " ", 1);
		sbuf__append(&cmd, *argv, strlen(*argv));
	}
	if (cmd.err)
		return cmd.err;
	ret = info__set(in, "cmdline", cmd.len ? (char *)cmd.p : "", cmd.len);
	sbuf__exit(&cmd);
	if (!ret && !gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = 0;
		ret = info__set(in, "hostname", host, strlen(host));
	}
	if (!ret && !uname(&u)) {
		ret = info__set(in, "release", u.release, strlen(u.release));
		if (!ret)
			ret = info__set(in, "machine", u.machine, strlen(u.machine));
	}
	cpu_model(cpu, sizeof(cpu));
	if (!ret && cpu[0])
		ret = info__set(in, "cpu", cpu, strlen(cpu));
	if (!ret && version)
		ret = info__set(in, "version", version, strlen(version));
	return ret;
}

void profile__info_end(struct profile *p)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (p->info.valid && now >= p->info.start_mono_ns)
		p->info.duration_ns = now - p->info.start_mono_ns;
}

int profile__info_snapshot(struct profile *p, const char *prog,
			   char *const *argv, const char *version)
{
	uint64_t snap = p->nr_runs ? p->runs[0].s.hdr.time_ns : 0;
	int ret = profile__info_begin(p, prog, argv, version);

	if (ret || !snap || snap > p->info.start_mono_ns)
		return ret;
	p->info.start_ns -= p->info.start_mono_ns - snap;
	p->info.start_mono_ns = snap;
	return 0;
}

void profile__exit(struct profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_runs; i++) {
		stream__exit(&p->runs[i].s);
		free(p->runs[i].raw);
	}
	for (i = 0; i < p->nr_objs; i++)
		obj__exit(&p->objs[i]);
	for (i = 0; i < p->nr_cgroups; i++)
		free(p->cgroups[i].path);
	free(p->cgroups);
	free(p->runs);
	free(p->objs);
	info__exit(&p->info);
	memset(p, 0, sizeof(*p));
}

static int grow(void **arr, uint32_t nr, size_t elem)
{
	void *q;

	if (nr & (nr - 1))
		return 0;
	if (nr >= 0x10000000u)
		return -ENOMEM;
	q = realloc(*arr, (nr ? 2 * (size_t)nr : 1) * elem);
	if (!q)
		return -ENOMEM;
	*arr = q;
	return 0;
}

/* Parse a stream at file offset @base of @name, as a new run. */
static int add_run(struct profile *p, void *raw, size_t len, uint64_t base,
		   const char *name)
{
	struct profile_run *r;
	int ret;

	ret = grow((void **)&p->runs, p->nr_runs, sizeof(*p->runs));
	if (ret) {
		free(raw);
		return ret;
	}
	r = &p->runs[p->nr_runs++];
	memset(r, 0, sizeof(*r));
	r->raw = raw;
	r->raw_len = len;
	ret = stream__parse(&r->s, raw, len);
	if (ret == -EINVAL)
		prof_fail(name, base + r->s.err_off, "%s", r->s.err);
	else if (ret)
		fprintf(stderr, "%s: %s: %s\n", kcc_progname, name, strerror(-ret));
	if (!ret && p->nr_runs > 1) {
		const struct stream *a = &p->runs[0].s, *b = &r->s;

		/* k-SFs only join when their slabs are alike. */
		if (a->hdr.k != b->hdr.k || a->nr_ctrs != b->nr_ctrs)
			ret = prof_fail(name, base, "run %u has k %u and %u counters, run 0 has k %u and %u",
					p->nr_runs - 1, b->hdr.k, b->nr_ctrs,
					a->hdr.k, a->nr_ctrs);
	}
	return ret;
}

int profile__add_stream(struct profile *p, void *raw, size_t len,
			const char *name)
{
	return add_run(p, raw, len, 0, name);
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int parse_obj(struct profile *p, const uint8_t *pl, uint64_t plen,
		     uint64_t base, const char *name)
{
	struct prof_obj po;
	struct profile_obj *o;
	uint64_t need, at;
	uint32_t i;
	const char *path, *strtab;
	int ret;

	if (plen < sizeof(po))
		return prof_fail(name, base, "object section too short");
	memcpy(&po, pl, sizeof(po));
	if (po.run >= p->nr_runs)
		return prof_fail(name, base, "object of run %u, before that run", po.run);
	if (po.flags & ~PROF_OBJ_FLAGS_ALL)
		return prof_fail(name, base + 4, "unknown object flags 0x%x", po.flags);
	if (po.build_id_len > SYM_BUILD_ID_MAX)
		return prof_fail(name, base + 20, "build-id of %u bytes", po.build_id_len);
	if (!po.path_len)
		return prof_fail(name, base + 16, "object without a path");
	need = sizeof(po) + pad8(po.build_id_len) + pad8(po.path_len) +
	       (uint64_t)po.nr_syms * sizeof(struct prof_sym) +
	       pad8(po.strtab_len);
	if (need != plen)
		return prof_fail(name, base, "object section of %" PRIu64 " bytes, its counts need %" PRIu64,
				 plen, need);
	at = sizeof(po) + pad8(po.build_id_len);
	path = (const char *)pl + at;
	if (strnlen(path, po.path_len) != po.path_len - 1)
		return prof_fail(name, base + at, "object path not NUL-terminated");
	at += pad8(po.path_len);
	strtab = (const char *)pl + at + (uint64_t)po.nr_syms * sizeof(struct prof_sym);
	if (po.strtab_len && strtab[po.strtab_len - 1])
		return prof_fail(name, base + at, "symbol names not NUL-terminated");

	ret = grow((void **)&p->objs, p->nr_objs, sizeof(*p->objs));
	if (ret)
		return ret;
	o = &p->objs[p->nr_objs++];
	memset(o, 0, sizeof(*o));
	o->run = po.run;
	o->flags = po.flags;
	o->ino = po.ino;
	o->so.path = strdup(path);
	if (!o->so.path)
		return -ENOMEM;
	memcpy(o->so.build_id, pl + sizeof(po), po.build_id_len);
	o->so.build_id_len = po.build_id_len;
	for (i = 0; i < po.nr_syms; i++) {
		struct prof_sym ps;

		memcpy(&ps, pl + at + (size_t)i * sizeof(ps), sizeof(ps));
		if (ps.name >= po.strtab_len)
			return prof_fail(name, base + at + (uint64_t)i * sizeof(ps) + 16,
					 "symbol %u: name offset %u outside the %u-byte table",
					 i, ps.name, po.strtab_len);
		ret = symobj__add(&o->so, ps.off, ps.size, strtab + ps.name);
		if (ret)
			return ret;
	}
	symobj__finish(&o->so);
	return 0;
}

static int parse_info(struct profile *p, const uint8_t *pl, uint64_t plen,
		      uint64_t base, const char *name)
{
	struct prof_info pi;
	const char *s, *end;
	uint64_t fixed;
	int ret;

	if (p->info.valid)
		return prof_fail(name, base, "a second info section");
	if (plen < 8)
		return prof_fail(name, base, "info section too short");
	memset(&pi, 0, sizeof(pi));
	memcpy(&pi, pl, 8);
	if (!pi.info_version)
		return prof_fail(name, base, "info version 0");
	if (pi.info_size < sizeof(pi) || pi.info_size % 8 || pi.info_size > plen)
		return prof_fail(name, base + 4, "info of %u bytes in a %" PRIu64 "-byte section",
				 pi.info_size, plen);
	/* Fields a later info_version appends are skipped. */
	memcpy(&pi, pl, sizeof(pi));
	fixed = pi.info_size;
	if (pad8(pi.strs_len) != plen - fixed)
		return prof_fail(name, base + 32, "info strings of %u bytes in %" PRIu64,
				 pi.strs_len, plen - fixed);
	s = (const char *)pl + fixed;
	end = s + pi.strs_len;
	if (pi.strs_len && end[-1])
		return prof_fail(name, base + fixed, "info strings not NUL-terminated");
	p->info.valid = true;
	p->info.start_ns = pi.start_ns;
	p->info.start_mono_ns = pi.start_mono_ns;
	p->info.duration_ns = pi.duration_ns;
	for (; s < end; s += strlen(s) + 1) {
		const char *eq = strchr(s, '=');
		char key[64];

		if (!eq || eq == s || (size_t)(eq - s) >= sizeof(key))
			return prof_fail(name, base + fixed,
					 "info string '%.40s' is not key=value", s);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - s), s);
		ret = info__set(&p->info, key, eq + 1, strlen(eq + 1));
		if (ret == -E2BIG)
			return prof_fail(name, base + fixed, "more than %d info strings",
					 PROF_INFO_MAX_KEYS);
		if (ret)
			return ret;
	}
	return 0;
}

int profile__add_cgroup(struct profile *p, uint32_t run, uint64_t id,
			const char *path)
{
	struct profile_cgroup *c;
	int ret;

	ret = grow((void **)&p->cgroups, p->nr_cgroups, sizeof(*p->cgroups));
	if (ret)
		return ret;
	c = &p->cgroups[p->nr_cgroups];
	c->path = strdup(path);
	if (!c->path)
		return -ENOMEM;
	c->run = run;
	c->id = id;
	p->nr_cgroups++;
	return 0;
}

static int parse_cgroup(struct profile *p, const uint8_t *pl, uint64_t plen,
			uint64_t base, const char *name)
{
	struct prof_cgroup pc;
	const char *path = (const char *)pl + sizeof(pc);

	if (plen < sizeof(pc))
		return prof_fail(name, base, "cgroup section too short");
	memcpy(&pc, pl, sizeof(pc));
	if (pc.run >= p->nr_runs)
		return prof_fail(name, base, "cgroup of run %u, before that run", pc.run);
	if (!pc.id || !pc.path_len || sizeof(pc) + pad8(pc.path_len) != plen)
		return prof_fail(name, base, "cgroup section of %" PRIu64 " bytes for a %u-byte path",
				 plen, pc.path_len);
	if (strnlen(path, pc.path_len) != pc.path_len - 1)
		return prof_fail(name, base + sizeof(pc), "cgroup path not NUL-terminated");
	if (profile__cgroup(p, pc.run, pc.id))
		return prof_fail(name, base + 8, "cgroup %" PRIu64 " of run %u named twice",
				 (uint64_t)pc.id, pc.run);
	return profile__add_cgroup(p, pc.run, pc.id, path);
}

const char *profile__cgroup(const struct profile *p, uint32_t run,
			    uint64_t id)
{
	uint32_t i;

	for (i = 0; i < p->nr_cgroups; i++)
		if (p->cgroups[i].run == run && p->cgroups[i].id == id)
			return p->cgroups[i].path;
	return NULL;
}

/* State of the walk of profile__add_cgroups(): nftw() takes no argument. */
static struct {
	struct profile *p;
	uint32_t run, left;
	const uint64_t *ids;	/* the run's distinct cgroup ids, sorted */
	size_t nr_ids;
	size_t root_len;
	int err;
} cg_walk;

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cg_visit(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	const char *rel = path + cg_walk.root_len;
	uint64_t ino = st->st_ino;

	if (type != FTW_D ||
	    !bsearch(&ino, cg_walk.ids, cg_walk.nr_ids, sizeof(ino), u64_cmp) ||
	    profile__cgroup(cg_walk.p, cg_walk.run, ino))
		return 0;
	cg_walk.err = profile__add_cgroup(cg_walk.p, cg_walk.run, ino,
					  *rel ? rel : "/");
	if (cg_walk.err)
		return 1;
	return --cg_walk.left ? 0 : 1;
}

int profile__add_cgroups(struct profile *p, uint32_t run)
{
	const struct stream *s = &p->runs[run].s;
	char root[4096];
	uint64_t *ids;
	uint32_t i, n = 0, nr = 0;

	ids = malloc(((size_t)s->nr_tasks + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < s->nr_tasks; i++)
		if (s->tasks[i].cgroup_id)
			ids[n++] = s->tasks[i].cgroup_id;
	qsort(ids, n, sizeof(*ids), u64_cmp);
	for (i = 0; i < n; i++)
		if (!nr || ids[nr - 1] != ids[i])
			ids[nr++] = ids[i];
	if (!nr || cgroup__mount(root, sizeof(root))) {
		free(ids);
		return nr;
	}
	cg_walk.p = p;
	cg_walk.run = run;
	cg_walk.left = nr;
	cg_walk.ids = ids;
	cg_walk.nr_ids = nr;
	cg_walk.root_len = strlen(root);
	cg_walk.err = 0;
	nftw(*root ? root : "/", cg_visit, 16, FTW_PHYS | FTW_MOUNT);
	free(ids);
	cg_walk.ids = NULL;
	if (cg_walk.err)
		return cg_walk.err;
	return cg_walk.left;
}

int profile__parse(struct profile *p, const void *data, size_t len,
		   const char *name)
{
	const uint8_t *buf = data;
	struct prof_header h;
	uint64_t off;
	bool end = false;
	int ret;

	profile__init(p);
	if (len >= 4 && !memcmp(buf, "KCTS", 4)) {
		void *raw = malloc(len);

		if (!raw)
			return -ENOMEM;
		memcpy(raw, buf, len);
		p->bare = true;
		return add_run(p, raw, len, 0, name);
	}
	if (len < sizeof(h))
		return prof_fail(name, len, "not a kcc profile or stream (%zu bytes)", len);
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, PROF_MAGIC, sizeof(h.magic)))
		return prof_fail(name, 0, "not a kcc profile or stream (bad magic)");
	if (h.version != PROF_VERSION)
		return prof_fail(name, 8, "unsupported profile version %u (this reader knows %u)",
				 h.version, PROF_VERSION);
	if (h.header_size != sizeof(h) || h.flags || h.__reserved)
		return prof_fail(name, 12, "bad profile header");

	for (off = sizeof(h); !end;) {
		struct prof_sec sec;
		const uint8_t *pl;
		uint64_t plen;

		if (len - off < sizeof(sec))
			return prof_fail(name, off, "truncated: no END section");
		memcpy(&sec, buf + off, sizeof(sec));
		if (sec.size < sizeof(sec) || sec.size % 8 || sec.__reserved)
			return prof_fail(name, off, "bad section header (type %u, size %" PRIu64 ")",
					 sec.type, (uint64_t)sec.size);
		if (sec.size > len - off)
			return prof_fail(name, off + 8, "truncated section (%" PRIu64 " bytes, %" PRIu64 " left)",
					 (uint64_t)sec.size, (uint64_t)(len - off));
		pl = buf + off + sizeof(sec);
		plen = sec.size - sizeof(sec);
		switch (sec.type) {
		case PROF_SEC_RUN: {
			struct prof_run pr;
			void *raw;

			if (plen < sizeof(pr))
				return prof_fail(name, off, "run section too short");
			memcpy(&pr, pl, sizeof(pr));
			if (pr.run != p->nr_runs || pr.__reserved)
				return prof_fail(name, off + sizeof(sec),
						 "run %u where run %u was expected", pr.run, p->nr_runs);
			if (pr.stream_len > plen - sizeof(pr) ||
			    pad8(pr.stream_len) != plen - sizeof(pr))
				return prof_fail(name, off + sizeof(sec) + 8,
						 "stream of %" PRIu64 " bytes in a %" PRIu64 "-byte section",
						 (uint64_t)pr.stream_len, plen);
			raw = malloc(pr.stream_len ? pr.stream_len : 1);
			if (!raw)
				return -ENOMEM;
			memcpy(raw, pl + sizeof(pr), pr.stream_len);
			ret = add_run(p, raw, pr.stream_len,
				      off + sizeof(sec) + sizeof(pr), name);
			if (ret)
				return ret;
			break;
		}
		case PROF_SEC_OBJECT:
			ret = parse_obj(p, pl, plen, off + sizeof(sec), name);
			if (ret)
				return ret;
			break;
		case PROF_SEC_INFO:
			ret = parse_info(p, pl, plen, off + sizeof(sec), name);
			if (ret)
				return ret;
			break;
		case PROF_SEC_CGROUP:
			ret = parse_cgroup(p, pl, plen, off + sizeof(sec), name);
			if (ret)
				return ret;
			break;
		case PROF_SEC_END:
			if (plen)
				return prof_fail(name, off, "END section with a payload");
			end = true;
			break;
		default:
			/* Sections of later minor versions: skipped. */
			break;
		}
		off += sec.size;
	}
	if (off != len)
		return prof_fail(name, off, "%" PRIu64 " bytes after the END section",
				 (uint64_t)(len - off));
	if (p->nr_runs != h.nr_runs)
		return prof_fail(name, 28, "header announces %u runs, the file holds %u",
				 h.nr_runs, p->nr_runs);
	if (!p->nr_runs)
		return prof_fail(name, 28, "profile without runs");
	return 0;
}

int profile__read(struct profile *p, const char *path)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	void *buf;
	size_t len;
	int ret;

	profile__init(p);
	ret = read_whole_file(path, PROF_MAX_BYTES, false, &buf, &len);
	if (ret)
		return ret;
	ret = profile__parse(p, buf, len, name);
	free(buf);
	return ret;
}

int profile__same_events(const struct profile *a, const struct profile *b,
			 char *why, size_t len)
{
	const struct stream *x = &a->runs[0].s, *y = &b->runs[0].s;
	const struct stream *l = x->nr_ctrs > y->nr_ctrs ? x : y;
	uint32_t i, n = x->nr_ctrs < y->nr_ctrs ? x->nr_ctrs : y->nr_ctrs;

	/*
	 * A profile of ABI 1.4 has calls_var after the three counters of
	 * one before it: the same events, one of them with error bars.
	 */
	if (x->nr_ctrs != y->nr_ctrs &&
	    (n != KCC_CTR_CALLS_VAR || l->nr_ctrs != KCC_NR_CTRS ||
	     !stream__has_calls_var(l))) {
		snprintf(why, len, "%u counters vs %u", x->nr_ctrs, y->nr_ctrs);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const struct kcc_metric_desc *p = &x->desc[i], *q = &y->desc[i];

		if (p->type != q->type || p->config != q->config ||
		    strncmp(p->name, q->name, sizeof(p->name))) {
			snprintf(why, len, "%.*s vs %.*s", (int)sizeof(p->name),
				 p->name, (int)sizeof(q->name), q->name);
			return -EINVAL;
		}
	}
	return 0;
}

struct profile_obj *profile__obj(struct profile *p, uint32_t run,
				 const struct stream_map *m)
{
	uint32_t i;

	for (i = 0; i < p->nr_objs; i++) {
		struct profile_obj *o = &p->objs[i];

		if (o->run == run && o->ino == m->ino &&
		    !strcmp(o->so.path, m->path))
			return o;
	}
	return NULL;
}

const char *profile__fold_error(int err)
{
	return err == -EINVAL ?
	       "it has records counted per thread (watched contexts, or of a kind this kcc does not know)" :
	       "out of memory";
}

int profile__fold_processes(struct profile *p, uint32_t run)
{
	struct profile_run *r = &p->runs[run];
	struct sbuf b = { 0 };
	int ret;

	ret = stream__fold_processes(&r->s);
	if (!ret)
		ret = stream__write(&r->s, &b);
	if (ret) {
		sbuf__exit(&b);
		return ret;
	}
	free(r->raw);
	r->raw = b.p;
	r->raw_len = b.len;
	r->s.size = b.len;
	return 0;
}

int profile__add_object(struct profile *p, uint32_t run, uint64_t ino,
			uint32_t flags, struct symobj *so)
{
	struct profile_obj *o;
	int ret;

	ret = grow((void **)&p->objs, p->nr_objs, sizeof(*p->objs));
	if (ret)
		return ret;
	if (p->by_build_id && so->build_id_len && so->path[0] != '[') {
		/* Found again by its build-id: no table to carry. */
		free(so->syms);
		free(so->strtab);
		so->syms = NULL;
		so->strtab = NULL;
		so->nr_syms = 0;
		so->strtab_len = so->strtab_cap = 0;
	}
	o = &p->objs[p->nr_objs++];
	memset(o, 0, sizeof(*o));
	o->run = run;
	o->ino = ino;
	o->flags = flags | (so->nr_syms ? PROF_OBJ_SYMS : 0);
	o->so = *so;
	memset(so, 0, sizeof(*so));
	return 0;
}

int profile__add_objects(struct profile *p, uint32_t run)
{
	struct stream *s = &p->runs[run].s;
	uint32_t i;
	int missing = 0, ret;

	for (i = 0; i < s->nr_maps; i++) {
		const struct stream_map *m = &s->maps[i];
		struct symobj so;
		uint32_t flags = 0;
		struct stat st;

		if (profile__obj(p, run, m))
			continue;
		memset(&so, 0, sizeof(so));
		/* No file: the vDSO of this machine's kernel is this one's. */
		if (!strcmp(m->path, KCC_MAP_VDSO))
			flags = symobj__load_vdso(&so, m->path) ?
				PROF_OBJ_MISSING : 0;
		else if (stat(m->path, &st) || symobj__load(&so, m->path))
			flags = PROF_OBJ_MISSING;
		else if (m->ino && (uint64_t)st.st_ino != m->ino)
			/* Replaced since it was mapped: its symbols would lie. */
			flags = PROF_OBJ_STALE;
		if (flags) {
			symobj__exit(&so);
			memset(&so, 0, sizeof(so));
			so.path = strdup(m->path);
			if (!so.path)
				return -ENOMEM;
			missing++;
		}
		ret = profile__add_object(p, run, m->ino, flags, &so);
		if (ret) {
			symobj__exit(&so);
			return ret;
		}
	}
	return missing;
}

int profile__append(struct profile *dst, struct profile *src,
		    const char *name)
{
	uint32_t base = dst->nr_runs, i;
	int ret;

	/* A merge is described by its first input that has an INFO. */
	if (!dst->info.valid && src->info.valid) {
		dst->info.valid = true;
		dst->info.start_ns = src->info.start_ns;
		dst->info.start_mono_ns = src->info.start_mono_ns;
		dst->info.duration_ns = src->info.duration_ns;
		for (i = 0; i < src->info.nr; i++) {
			ret = info__set(&dst->info, src->info.key[i], src->info.val[i],
					strlen(src->info.val[i]));
			if (ret)
				return ret;
		}
	}

	for (i = 0; i < src->nr_runs; i++) {
		void *raw = malloc(src->runs[i].raw_len ? src->runs[i].raw_len : 1);

		if (!raw)
			return -ENOMEM;
		memcpy(raw, src->runs[i].raw, src->runs[i].raw_len);
		ret = add_run(dst, raw, src->runs[i].raw_len, 0, name);
		if (ret)
			return ret;
	}
	for (i = 0; i < src->nr_cgroups; i++) {
		ret = profile__add_cgroup(dst, base + src->cgroups[i].run,
				 src->cgroups[i].id, src->cgroups[i].path);
		if (ret)
			return ret;
	}
	for (i = 0; i < src->nr_objs; i++) {
		struct profile_obj *so = &src->objs[i];
		struct symobj copy;
		uint32_t j;

		memset(&copy, 0, sizeof(copy));
		copy.path = strdup(so->so.path);
		if (!copy.path)
			return -ENOMEM;
		memcpy(copy.build_id, so->so.build_id, sizeof(copy.build_id));
		copy.build_id_len = so->so.build_id_len;
		for (j = 0; j < so->so.nr_syms; j++) {
			ret = symobj__add(&copy, so->so.syms[j].off,
					  so->so.syms[j].size,
					  sym__name(&so->so, &so->so.syms[j]));
			if (ret) {
				symobj__exit(&copy);
				return ret;
			}
		}
		symobj__finish(&copy);
		ret = profile__add_object(dst, base + so->run, so->ino,
					  so->flags, &copy);
		if (ret) {
			symobj__exit(&copy);
			return ret;
		}
	}
	return 0;
}

static void put(FILE *out, const void *p, size_t n)
{
	static const uint8_t zero[8];

	if (n)
		fwrite(p, 1, n, out);
	if (pad8(n) != n)
		fwrite(zero, 1, pad8(n) - n, out);
}

int profile__write(const struct profile *p, FILE *out)
{
	struct prof_header h;
	struct prof_sec sec;
	uint32_t i, j;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PROF_MAGIC, sizeof(h.magic));
	h.version = PROF_VERSION;
	h.header_size = sizeof(h);
	h.nr_runs = p->nr_runs;
	put(out, &h, sizeof(h));

	for (i = 0; i < p->nr_runs; i++) {
		struct prof_run pr = { .run = i, .stream_len = p->runs[i].raw_len };

		sec.type = PROF_SEC_RUN;
		sec.__reserved = 0;
		sec.size = sizeof(sec) + sizeof(pr) + pad8(pr.stream_len);
		put(out, &sec, sizeof(sec));
		put(out, &pr, sizeof(pr));
		put(out, p->runs[i].raw, pr.stream_len);
	}
	for (i = 0; i < p->nr_objs; i++) {
		const struct profile_obj *o = &p->objs[i];
		const struct symobj *so = &o->so;
		struct prof_obj po = {
			.run = o->run,
			.flags = o->flags,
			.ino = o->ino,
			.path_len = strlen(so->path) + 1,
			.build_id_len = so->build_id_len,
			.nr_syms = so->nr_syms,
			.strtab_len = so->nr_syms ? so->strtab_len : 0,
		};

		sec.type = PROF_SEC_OBJECT;
		sec.__reserved = 0;
		sec.size = sizeof(sec) + sizeof(po) + pad8(po.build_id_len) +
			   pad8(po.path_len) +
			   (uint64_t)po.nr_syms * sizeof(struct prof_sym) +
			   pad8(po.strtab_len);
		put(out, &sec, sizeof(sec));
		put(out, &po, sizeof(po));
		put(out, so->build_id, po.build_id_len);
		put(out, so->path, po.path_len);
		for (j = 0; j < so->nr_syms; j++) {
			struct prof_sym ps = {
				.off = so->syms[j].off,
				.size = so->syms[j].size,
				.name = so->syms[j].name,
			};

			fwrite(&ps, 1, sizeof(ps), out);
		}
		put(out, so->strtab, po.strtab_len);
	}
	if (p->info.valid) {
		struct prof_info pi = {
			.info_version = PROF_INFO_VERSION,
			.info_size = sizeof(pi),
			.start_ns = p->info.start_ns,
			.start_mono_ns = p->info.start_mono_ns,
			.duration_ns = p->info.duration_ns,
		};
		struct sbuf strs = { 0 };

		for (i = 0; i < p->info.nr; i++) {
			sbuf__append(&strs, p->info.key[i], strlen(p->info.key[i]));
			sbuf__append(&strs, "=", 1);
			sbuf__append(&strs, p->info.val[i], strlen(p->info.val[i]) + 1);
		}
		if (strs.err) {
			sbuf__exit(&strs);
			return strs.err;
		}
		pi.strs_len = strs.len;
		sec.type = PROF_SEC_INFO;
		sec.__reserved = 0;
		sec.size = sizeof(sec) + sizeof(pi) + pad8(strs.len);
		put(out, &sec, sizeof(sec));
		put(out, &pi, sizeof(pi));
		put(out, strs.p, strs.len);
		sbuf__exit(&strs);
	}
	for (i = 0; i < p->nr_cgroups; i++) {
		const struct profile_cgroup *c = &p->cgroups[i];
		struct prof_cgroup pc = {
			.run = c->run,
			.path_len = strlen(c->path) + 1,
			.id = c->id,
		};

		sec.type = PROF_SEC_CGROUP;
		sec.__reserved = 0;
		sec.size = sizeof(sec) + sizeof(pc) + pad8(pc.path_len);
		put(out, &sec, sizeof(sec));
		put(out, &pc, sizeof(pc));
		put(out, c->path, pc.path_len);
	}
	sec.type = PROF_SEC_END;
	sec.__reserved = 0;
	sec.size = sizeof(sec);
	put(out, &sec, sizeof(sec));
	return ferror(out) ? -EIO : 0;
}

/* Load @path into @so if its build-id is @want's (when it has one). */
static int load_matching(struct symobj *so, const char *path,
			 const struct symobj *want)
{
	if (symobj__load(so, path) ||
	    (want->build_id_len &&
	     (so->build_id_len != want->build_id_len ||
	      memcmp(so->build_id, want->build_id, so->build_id_len)))) {
		symobj__exit(so);
		return -ENOENT;
	}
	return 0;
}

static char *buildid_dir;
static bool buildid_dir_set;

void profile__set_buildid_dir(const char *dir)
{
	free(buildid_dir);
	buildid_dir = dir ? strdup(dir) : NULL;
	buildid_dir_set = dir != NULL;
}

/* The object of build-id @want in the build-id cache, loaded into @so. */
static int load_cached(struct symobj *so, const struct symobj *want)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1], *path;
	const char *dir = buildid_dir, *home;
	int ret = -ENOENT, i;

	if (!buildid_dir_set) {
		home = getenv("HOME");
		if (!home || !*home)
			return -ENOENT;
		if (asprintf(&path, "%s/.debug", home) < 0)
			return -ENOMEM;
		buildid_dir = path;
		buildid_dir_set = true;
		dir = path;
	}
	if (!dir || !*dir || !want->build_id_len)
		return -ENOENT;
	build_id__hex(want->build_id, want->build_id_len, hex);
	/* perf's own layout first (a directory holding elf), then a file. */
	for (i = 0; i < 2 && ret; i++) {
		struct stat st;

		if (asprintf(&path, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2,
			     i ? "" : "/elf") < 0)
			return -ENOMEM;
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			ret = load_matching(so, path, want);
		free(path);
	}
	return ret;
}

struct symobj *profile_obj__live(struct profile_obj *o)
{
	struct symobj *so;
	char *dpath;
	int ret;

	if (o->live_tried)
		return o->live;
	o->live_tried = true;
	if (o->so.path[0] == '[')
		return NULL;
	so = malloc(sizeof(*so));
	if (!so)
		return NULL;
	o->live_from = PROF_LIVE_PATH;
	if (!load_matching(so, o->so.path, &o->so)) {
		o->live = so;
		return so;
	}
	o->live_from = PROF_LIVE_CACHE;
	if (!load_cached(so, &o->so)) {
		o->live = so;
		return so;
	}
	o->live_from = PROF_LIVE_DEBUGINFOD;
	/*
	 * Gone or rebuilt here: the object by build-id, if allowed; its
	 * symbols and lines then come from its debuginfo (symbols.c).
	 */
	if (!debuginfod__find_executable(o->so.build_id, o->so.build_id_len,
					 &dpath)) {
		ret = load_matching(so, dpath, &o->so);
		free(dpath);
		if (!ret) {
			o->live = so;
			return so;
		}
	}
	o->live_from = PROF_LIVE_NONE;
	free(so);
	return NULL;
}
