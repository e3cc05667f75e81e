// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace_rt.c - traces of the kcc tracing runtime into struct trace.
 *
 * A file is read in two passes over one mapping of it: the first checks
 * every record and collects the routine definitions and the executable
 * mappings, which are written at the start and again at the end of the
 * file, so even libraries loaded late are known; the routines are then
 * named; the second pass replays the events with the stack mended (see
 * ftrace_rt.h).  Everything in the file is untrusted: varints, ids,
 * lengths are all bounds-checked; symbols come from symbols.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftrace_fmt.h"
#include "ftrace_rt.h"
#include "symbols.h"

#define VARINT_MAX	10
#define FTR_MAX_PATH	4096
#define FTR_MAX_IDS	(1u << 26)	/* routines defined in one file */

struct ftr_map {
	uint64_t start, end, pgoff;
	const char *path;	/* into the file mapping, not NUL-terminated */
	uint32_t path_len;
	int elf;		/* index in elfs[] */
};

struct ftr_elf {
	struct symobj o;
	uint64_t path_hash;
};

struct ftr_ctx {
	struct trace *t;
	struct ftrace_stats *st;
	uint64_t *owner_key;	/* per symtab id: (path, vaddr) of the name */
	uint32_t owner_cap;
	struct ftr_elf *elfs;
	size_t nelfs;
};

__attribute__((format(printf, 3, 4)))
static void ftr_err(const char *name, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kcc: %s: offset %" PRIu64 ": ", name, off);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* 0, or -EINVAL for a varint past @end or longer than 64 bits. */
static int ftr_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	int i;

	for (i = 0; i < VARINT_MAX && p < end; i++, p++) {
		if (i == VARINT_MAX - 1 && *p > 1)
			return -EINVAL;
		x |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p & 0x80)) {
			*pp = p + 1;
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- naming routines ------------------------------------------------- */

static int ctx_elf(struct ftr_ctx *c, const char *path, uint32_t len)
{
	struct ftr_elf *e;
	size_t i;
	char *p;

	for (i = 0; i < c->nelfs; i++)
		if (strlen(c->elfs[i].o.path) == len &&
		    !memcmp(c->elfs[i].o.path, path, len))
			return (int)i;
	e = realloc(c->elfs, (c->nelfs + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	c->elfs = e;
	e = &c->elfs[c->nelfs];
	p = strndup(path, len);
	if (!p)
		return -ENOMEM;
	/* A file that cannot be read leaves @o empty: address names. */
	if (symobj__load(&e->o, p) == -ENOMEM) {
		symobj__exit(&e->o);
		free(p);
		return -ENOMEM;
	}
	free(p);
	e->path_hash = str_hash(path, len);
	return (int)c->nelfs++;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Names go into a whitespace-separated text format: keep them one token. */
static void no_blanks(char *s)
{
	for (; *s; s++)
		if (*s == ' ' || *s == '\t' || *s == '\n')
			*s = '_';
}

static int ctx_owner(struct ftr_ctx *c, uint32_t id, uint64_t key,
		     bool *clash)
{
	*clash = false;
	if (id >= c->owner_cap) {
		uint32_t cap = c->owner_cap ? c->owner_cap : 1024;
		uint64_t *k;

		while (cap <= id)
			cap *= 2;
		k = realloc(c->owner_key, (size_t)cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		memset(k + c->owner_cap, 0,
		       (size_t)(cap - c->owner_cap) * sizeof(*k));
		c->owner_key = k;
		c->owner_cap = cap;
	}
	if (!c->owner_key[id])
		c->owner_key[id] = key | 1;
	else if (c->owner_key[id] != (key | 1))
		*clash = true;
	return 0;
}

/*
 * The symtab id of the routine at run-time address @addr.  A routine is
 * named by its symbol; two routines of one name (static functions of two
 * files, or of two libraries) keep the name for the first seen and get
 * "name@file+0xOFF" (file offset) for the others, so they stay apart and the names
 * stay the same from run to run whatever the load addresses.
 */
static int ctx_name(struct ftr_ctx *c, const struct ftr_map *maps,
		    size_t nmaps, uint64_t addr, uint32_t *id)
{
	const struct ftr_map *m = NULL;
	const struct sym *s = NULL;
	struct ftr_elf *e;
	const char *name;
	uint64_t off;
	char buf[512];
	bool clash;
	size_t i;
	int ret;

	for (i = nmaps; i-- > 0;)
		if (addr >= maps[i].start && addr < maps[i].end) {
			m = &maps[i];
			break;
		}
	if (!m) {
		c->st->unnamed++;
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		return symtab__intern(&c->t->syms, buf, strlen(buf), id);
	}
	if (m->elf < 0) {
		ret = ctx_elf(c, m->path, m->path_len);
		if (ret < 0)
			return ret;
		((struct ftr_map *)m)->elf = ret;
	}
	e = &c->elfs[m->elf];
	off = addr - m->start + m->pgoff;
	s = symobj__find(&e->o, off);
	if (!s) {
		c->st->unnamed++;
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64,
			 /* m->elf indexes c->elfs, loaded just above: NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
			 base_name(e->o.path), off);
		no_blanks(buf);
		return symtab__intern(&c->t->syms, buf, strlen(buf), id);
	}
	name = sym__name(&e->o, s);
	ret = symtab__intern(&c->t->syms, name, strlen(name), id);
	if (ret)
		return ret;
	ret = ctx_owner(c, *id, e->path_hash * 31 + s->off, &clash);
	if (ret || !clash)
		return ret;
	snprintf(buf, sizeof(buf), "%s@%s+0x%" PRIx64, name,
		 base_name(e->o.path), s->off);
	no_blanks(buf);
	return symtab__intern(&c->t->syms, buf, strlen(buf), id);
}

/* ---- one file ----------------------------------------------------------- */

struct ftr_frame {
	uint32_t rid;		/* (routine, call site) id of the file */
	uint64_t sp;
};

struct ftr_file {
	const uint8_t *img;
	size_t size;
	const char *name;
	uint64_t *defs;		/* by file id: routine address, call site */
	uint32_t ndefs;
	uint32_t *sym;		/* symtab id by file id */
	struct ftr_map *maps;
	size_t nmaps;
	uint64_t events;
	const uint8_t *end_rec;	/* where the end record is, NULL: none */
};

/* Pass 1: check every record, collect definitions and mappings. */
static int file_scan(struct ftr_file *ff, struct ftr_ctx *c, bool tolerant)
{
	const uint8_t *p = ff->img + FTR_HDR_LEN, *end = ff->img + ff->size;
	uint32_t cap_defs = 0;
	size_t cap_maps = 0;
	uint64_t v, x, events = 0;

	while (p < end) {
		const uint8_t *rec = p;
		uint64_t off = rec - ff->img;
		unsigned int kind;

		if (ftr_varint(&p, end, &v))
			goto truncated;
		kind = v & 3;
		if (kind == FTR_KIND_ENTER || kind == FTR_KIND_EXIT) {
			if ((v >> 2) >= ff->ndefs) {
				ftr_err(ff->name, off,
					"event of undefined routine id %" PRIu64,
					v >> 2);
				return -EINVAL;
			}
			if (ftr_varint(&p, end, &x))
				goto truncated;
			events++;
			continue;
		}
		if (kind != FTR_KIND_CTL) {
			ftr_err(ff->name, off, "bad record kind 3");
			return -EINVAL;
		}
		switch (v >> 2) {
		case FTR_CTL_END:
			if (ftr_varint(&p, end, &x))
				goto truncated;
			if (x != events) {
				ftr_err(ff->name, off,
					"end record counts %" PRIu64 " events, file has %" PRIu64,
					x, events);
				return -EINVAL;
			}
			if (p != end) {
				ftr_err(ff->name, p - ff->img,
					"data after end record");
				return -EINVAL;
			}
			ff->end_rec = rec;
			ff->events = events;
			return 0;
		case FTR_CTL_DEFINE:
			if (ftr_varint(&p, end, &x) ||
			    ftr_varint(&p, end, &v))	/* the call site */
				goto truncated;
			if (ff->ndefs >= FTR_MAX_IDS) {
				ftr_err(ff->name, off, "too many routines");
				return -EINVAL;
			}
			if (ff->ndefs == cap_defs) {
				uint32_t cap = cap_defs ? cap_defs * 2 : 1024;
				uint64_t *d = realloc(ff->defs,
						      2 * (size_t)cap * sizeof(*d));

				if (!d)
					return -ENOMEM;
				ff->defs = d;
				cap_defs = cap;
			}
			ff->defs[2 * ff->ndefs] = x;
			ff->defs[2 * ff->ndefs + 1] = v;
			ff->ndefs++;
			break;
		case FTR_CTL_MAP: {
			struct ftr_map m = { .elf = -1 };

			if (ftr_varint(&p, end, &m.start) ||
			    ftr_varint(&p, end, &m.end) ||
			    ftr_varint(&p, end, &m.pgoff) ||
			    ftr_varint(&p, end, &x))
				goto truncated;
			if (!x || x > FTR_MAX_PATH || m.end <= m.start ||
			    memchr(p, '\0', (size_t)x < (size_t)(end - p) ?
					    (size_t)x : (size_t)(end - p))) {
				ftr_err(ff->name, off, "bad mapping record");
				return -EINVAL;
			}
			if ((uint64_t)(end - p) < x)
				goto truncated;
			m.path = (const char *)p;
			m.path_len = (uint32_t)x;
			p += x;
			if (ff->nmaps == cap_maps) {
				size_t cap = cap_maps ? cap_maps * 2 : 64;
				struct ftr_map *mm = realloc(ff->maps,
							     cap * sizeof(*mm));

				if (!mm)
					return -ENOMEM;
				ff->maps = mm;
				cap_maps = cap;
			}
			ff->maps[ff->nmaps++] = m;
			break;
		}
		case FTR_CTL_LOST:
			if (ftr_varint(&p, end, &x))
				goto truncated;
			c->st->lost += x;
			break;
		default:
			ftr_err(ff->name, off, "unknown control record %" PRIu64,
				v >> 2);
			return -EINVAL;
		}
		continue;
truncated:
		if (!tolerant) {
			ftr_err(ff->name, off,
				"truncated record (missing end record: did the program die?)");
			return -EINVAL;
		}
		break;
	}
	if (!tolerant) {
		ftr_err(ff->name, ff->size,
			"missing end record (did the program die?)");
		return -EINVAL;
	}
	ff->events = events;
	return 0;
}

static int close_frame(struct trace *t, uint64_t *depth)
{
	--*depth;
	t->returns++;
	return trace__push(t, TRACE_RET);
}

/*
 * Does an entry of @rid at @sp prove the open frame @fr gone?  A callee's
 * sp lies below its caller's, except for a routine the compiler inlined:
 * its hooks run in the frame of the routine it was inlined into, with
 * the same sp and the same call site.  A frame at the same sp is thus
 * still open when the call site is the same and the routine another (a
 * routine inlined into itself, the other reading, does not happen).
 */
static bool frame_dead(const struct ftr_file *ff, const struct ftr_frame *fr,
		       uint32_t rid, uint64_t sp)
{
	if (fr->sp != sp)
		return fr->sp < sp;
	return ff->defs[2 * fr->rid + 1] != ff->defs[2 * rid + 1] ||
	       ff->defs[2 * fr->rid] == ff->defs[2 * rid];
}

/* Pass 2: events into @c->t with the stack mended. */
static int file_replay(struct ftr_file *ff, struct ftr_ctx *c)
{
	const uint8_t *p = ff->img + FTR_HDR_LEN, *end = ff->img + ff->size;
	struct trace *t = c->t;
	struct ftr_frame *stack = NULL;
	uint64_t depth = 0, cap = 0, sp = 0, seen = 0, v, x;
	int ret = 0;

	while (p < end && seen < ff->events) {
		unsigned int kind;
		uint32_t rid;

		if (ftr_varint(&p, end, &v))
			break;	/* checked by the scan */
		kind = v & 3;
		rid = (uint32_t)(v >> 2);
		if (kind == FTR_KIND_CTL) {
			/* Skip the operands; the scan used them. */
			switch (rid) {
			case FTR_CTL_MAP:
				ftr_varint(&p, end, &x);
				ftr_varint(&p, end, &x);
				ftr_varint(&p, end, &x);
				ftr_varint(&p, end, &x);
				p += x;
				break;
			case FTR_CTL_DEFINE:
				ftr_varint(&p, end, &x);
				ftr_varint(&p, end, &x);
				break;
			default:
				ftr_varint(&p, end, &x);
			}
			continue;
		}
		ftr_varint(&p, end, &x);
		sp += (x >> 1) ^ -(x & 1);
		seen++;

		if (kind == FTR_KIND_ENTER) {
			/* Open frames below this one are gone (ftrace_rt.h). */
			while (depth && frame_dead(ff, &stack[depth - 1], rid, sp)) {
				c->st->unwound++;
				ret = close_frame(t, &depth);
				if (ret)
					goto out;
			}
			if (depth == cap) {
				uint64_t ncap = cap ? cap * 2 : 256;
				struct ftr_frame *s = realloc(stack,
							      ncap * sizeof(*s));

				if (!s) {
					ret = -ENOMEM;
					goto out;
				}
				stack = s;
				cap = ncap;
			}
			stack[depth].rid = rid;
			stack[depth].sp = sp;
			depth++;
			t->calls++;
			if (depth > t->max_depth)
				t->max_depth = depth;
			ret = trace__push(t, ff->sym[rid]);
			if (ret)
				goto out;
			continue;
		}

		/*
		 * An exit closes the topmost open activation of the same
		 * routine and call site whose caller's sp is not below the
		 * exit's sp (see ftrace_fmt.h); the frames above it were left
		 * without an exit.  Should the sp say no to all, the topmost
		 * activation is taken all the same.
		 */
		for (x = depth; x > 0; x--)
			if (stack[x - 1].rid == rid &&
			    (x == 1 || sp <= stack[x - 2].sp))
				break;
		if (!x)
			for (x = depth; x > 0; x--)
				if (stack[x - 1].rid == rid)
					break;
		if (!x) {
			c->st->orphan_exits++;
			t->bad_returns++;
			continue;
		}
		while (depth >= x) {
			if (depth > x)
				c->st->unwound++;
			ret = close_frame(t, &depth);
			if (ret)
				goto out;
		}
	}
	t->closed += depth;
	while (depth) {
		ret = trace__push(t, TRACE_RET);
		if (ret)
			goto out;
		depth--;
	}
out:
	free(stack);
	return ret;
}

static int read_file(struct ftr_ctx *c, const char *path, bool tolerant)
{
	struct ftr_file ff = { .name = path };
	struct stat sb;
	uint32_t i;
	void *m = MAP_FAILED;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &sb)) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		goto cleanup;
	}
	if (sb.st_size < FTR_HDR_LEN) {
		ftr_err(path, 0, "truncated header");
		ret = -EINVAL;
		goto cleanup;
	}
	ff.size = sb.st_size;
	m = mmap(NULL, ff.size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		goto cleanup;
	}
	ff.img = m;
	if (memcmp(ff.img, FTR_MAGIC, FTR_MAGIC_LEN)) {
		ftr_err(path, 0, "not a kcc runtime trace (bad magic)");
		ret = -EINVAL;
		goto cleanup;
	}
	if (ff.img[FTR_MAGIC_LEN] != FTR_VERSION) {
		ftr_err(path, FTR_MAGIC_LEN,
			"unsupported runtime trace version %u (expected %u)",
			ff.img[FTR_MAGIC_LEN], FTR_VERSION);
		ret = -EINVAL;
		goto cleanup;
	}
	ret = file_scan(&ff, c, tolerant);
	if (ret)
		goto cleanup;
	ff.sym = malloc(((size_t)ff.ndefs + 1) * sizeof(*ff.sym));
	if (!ff.sym) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < ff.ndefs; i++) {
		ret = ctx_name(c, ff.maps, ff.nmaps, ff.defs[2 * i],
			       &ff.sym[i]);
		if (ret)
			goto cleanup;
	}
	ret = file_replay(&ff, c);
	c->st->files++;
cleanup:
	if (ret == -ENOMEM)
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(ENOMEM));
	if (m != MAP_FAILED)
		munmap(m, ff.size);
	close(fd);
	free(ff.defs);
	free(ff.sym);
	free(ff.maps);
	return ret;
}

bool ftrace_rt__match(const char *path)
{
	char magic[FTR_MAGIC_LEN];
	struct stat sb;
	bool ok;
	int fd;

	if (!strcmp(path, "-") || stat(path, &sb))
		return false;
	if (S_ISDIR(sb.st_mode))
		return true;
	/* Peeking at a pipe would eat what the trace reader needs. */
	if (!S_ISREG(sb.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = read(fd, magic, sizeof(magic)) == sizeof(magic) &&
	     !memcmp(magic, FTR_MAGIC, FTR_MAGIC_LEN);
	close(fd);
	return ok;
}

struct ftr_ent {
	char *path;
	unsigned long long pid, tid;
};

static int ent_cmp(const void *a, const void *b)
{
	const struct ftr_ent *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The *.kft files of @dir, threads in (pid, tid) order. */
static int list_dir(const char *dir, struct ftr_ent **out, size_t *nout)
{
	struct ftr_ent *ents = NULL;
	size_t n = 0, cap = 0, slen = strlen(FTR_SUFFIX);
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct ftr_ent *e;

		if (len <= slen || strcmp(de->d_name + len - slen, FTR_SUFFIX))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			e = realloc(ents, cap * sizeof(*e));
			if (!e)
				goto nomem;
			ents = e;
		}
		e = &ents[n];
		e->pid = e->tid = 0;
		sscanf(de->d_name, "kcc-%llu-%llu", &e->pid, &e->tid);
		if (asprintf(&e->path, "%s/%s", dir, de->d_name) < 0)
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(ents, n, sizeof(*ents), ent_cmp);
	*out = ents;
	*nout = n;
	return 0;
nomem:
	closedir(d);
	while (n--)
		free(ents[n].path);
	free(ents);
	return -ENOMEM;
}

int ftrace_rt__read(struct trace *t, const char *path, bool tolerant,
		    struct ftrace_stats *st)
{
	struct ftrace_stats dummy;
	struct ftr_ctx c = { .t = t };
	struct ftr_ent *ents = NULL;
	size_t nents = 0, i;
	struct stat sb;
	int ret;

	memset(st ? st : &dummy, 0, sizeof(dummy));
	c.st = st ? st : &dummy;
	if (stat(path, &sb)) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", path, strerror(errno));
		return ret;
	}
	if (S_ISDIR(sb.st_mode)) {
		ret = list_dir(path, &ents, &nents);
		if (ret) {
			fprintf(stderr, "kcc: %s: %s\n", path, strerror(-ret));
			return ret;
		}
		if (!nents) {
			fprintf(stderr, "kcc: %s: no *%s trace files\n", path,
				FTR_SUFFIX);
			free(ents);
			return -ENOENT;
		}
		ret = 0;
		for (i = 0; i < nents && !ret; i++)
			ret = read_file(&c, ents[i].path, tolerant);
		for (i = 0; i < nents; i++)
			free(ents[i].path);
		free(ents);
	} else {
		ret = read_file(&c, path, tolerant);
	}
	if (!ret)
		t->routines = symtab__nr(&t->syms);
	if (!ret && (t->bad_returns || c.st->lost))
		fprintf(stderr,
			"kcc: %s: warning: ignored %" PRIu64 " exits of routines not entered, runtime lost %" PRIu64 " events\n",
			path, t->bad_returns, c.st->lost);
	for (i = 0; i < c.nelfs; i++)
		symobj__exit(&c.elfs[i].o);
	free(c.elfs);
	free(c.owner_key);
	return ret;
}
