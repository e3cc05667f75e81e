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
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

void profile__exit(struct profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_runs; i++) {
		stream__exit(&p->runs[i].s);
		free(p->runs[i].raw);
	}
	for (i = 0; i < p->nr_objs; i++)
		obj__exit(&p->objs[i]);
	free(p->runs);
	free(p->objs);
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

int profile__add_object(struct profile *p, uint32_t run, uint64_t ino,
			uint32_t flags, struct symobj *so)
{
	struct profile_obj *o;
	int ret;

	ret = grow((void **)&p->objs, p->nr_objs, sizeof(*p->objs));
	if (ret)
		return ret;
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
		if (stat(m->path, &st) || symobj__load(&so, m->path)) {
			symobj__exit(&so);
			memset(&so, 0, sizeof(so));
			so.path = strdup(m->path);
			if (!so.path)
				return -ENOMEM;
			flags = PROF_OBJ_MISSING;
			missing++;
		} else if (m->ino && (uint64_t)st.st_ino != m->ino) {
			/* Replaced since it was mapped: its symbols would lie. */
			symobj__exit(&so);
			memset(&so, 0, sizeof(so));
			so.path = strdup(m->path);
			if (!so.path)
				return -ENOMEM;
			flags = PROF_OBJ_STALE;
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

	for (i = 0; i < src->nr_runs; i++) {
		void *raw = malloc(src->runs[i].raw_len ? src->runs[i].raw_len : 1);

		if (!raw)
			return -ENOMEM;
		memcpy(raw, src->runs[i].raw, src->runs[i].raw_len);
		ret = add_run(dst, raw, src->runs[i].raw_len, 0, name);
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
	sec.type = PROF_SEC_END;
	sec.__reserved = 0;
	sec.size = sizeof(sec);
	put(out, &sec, sizeof(sec));
	return ferror(out) ? -EIO : 0;
}

struct symobj *profile_obj__live(struct profile_obj *o)
{
	struct symobj *so;

	if (o->live_tried)
		return o->live;
	o->live_tried = true;
	if (o->so.path[0] == '[')
		return NULL;
	so = malloc(sizeof(*so));
	if (!so)
		return NULL;
	if (symobj__load(so, o->so.path) ||
	    (o->so.build_id_len &&
	     (so->build_id_len != o->so.build_id_len ||
	      memcmp(so->build_id, o->so.build_id, so->build_id_len)))) {
		symobj__exit(so);
		free(so);
		return NULL;
	}
	o->live = so;
	return so;
}
