// SPDX-License-Identifier: GPL-2.0
/*
 * valence_stream.c - KCC_REC_VALENCE records decoded into their tasks'
 * calling context trees; see valence_stream.h.  The records are read
 * like any other input: every size is checked against the bytes there.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcc_stitch.h"
#include "stream.h"
#include "valence_stream.h"

#define VS_MAX_FRAMES	4096

static int vs__fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

#define VS_MAX_SEGS	16

/* The PT_LOAD segments of the program: file offset to address. */
struct vs_seg {
	uint64_t off, vaddr, filesz;
};

static int vs__segs(const char *path, struct vs_seg *seg, uint32_t *nr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -EINVAL;
	size_t n, i;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	*nr = 0;
	if (elf && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n && *nr < VS_MAX_SEGS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			seg[*nr].off = ph.p_offset;
			seg[*nr].vaddr = ph.p_vaddr;
			seg[*nr].filesz = ph.p_filesz;
			(*nr)++;
		}
		if (*nr)
			ret = 0;
	}
	elf_end(elf);
	close(fd);
	return ret;
}

/*
 * Load bias of @exe in process @tgid: from any executable mapping of it
 * (kcc.ko records those only; a static binary's offset-0 page is not
 * one), through the segment holding the mapping's file offset.
 */
static int vs__base(const struct stream *s, uint32_t tgid, const char *exe,
		    const struct vs_seg *seg, uint32_t nseg, uint64_t *base)
{
	uint32_t i, j;

	for (i = 0; i < s->nr_maps; i++) {
		const struct stream_map *m = &s->maps[i];

		if (m->tgid != tgid || strcmp(m->path, exe))
			continue;
		for (j = 0; j < nseg; j++) {
			/* Segments start mid-page: compare by page. */
			uint64_t o = seg[j].off & ~0xfffull;

			if (m->pgoff >= o &&
			    m->pgoff < seg[j].off + seg[j].filesz) {
				*base = m->start -
					((seg[j].vaddr & ~0xfffull) + m->pgoff - o);
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* A copy of @t's tree with room for @extra more nodes. */
static int vs__grow(struct stream_task *t, uint32_t nmetrics, uint64_t extra)
{
	const struct kcc_forest *of = &t->ksf.f;
	uint64_t cap = of->count + extra + 1;
	struct pool np;
	uint32_t *map, i;
	int ret;

	if (cap >= KCC_FREE)
		return -E2BIG;
	ret = pool__alloc(&np, cap, nmetrics);
	if (ret)
		return ret;
	map = malloc((of->count + 1) * sizeof(*map));
	if (!map) {
		pool__exit(&np);
		return -ENOMEM;
	}
	for (i = 0; i < of->count; i++) {
		const struct kcc_node *n = kcc_forest_node(of, i);
		u32 parent = kcc_is_root_parent(n->parent) ? n->parent :
			     map[n->parent];

		map[i] = kcc_forest_get(&np.f, parent, n->label);
		kcc_forest_add_ctrs(&np.f, map[i], of, i);
	}
	free(map);
	pool__exit(&t->ksf);
	t->ksf = np;
	return 0;
}

static struct stream_task *vs__task(struct stream *s, uint32_t pid,
				    uint64_t start)
{
	uint32_t i;

	for (i = 0; i < s->nr_tasks; i++)
		if (s->tasks[i].pid == pid && s->tasks[i].start_time_ns == start)
			return &s->tasks[i];
	return NULL;
}

struct vs_ctx {
	struct stream *s;
	const struct valence_prog *p;
	const char *exe;
	struct vs_seg seg[VS_MAX_SEGS];
	uint32_t nseg;
	struct valence_stream_stats *st;
	struct valence_frame *fr;
};

/* One entry of a record, checked, decoded and charged to @t. */
static int vs__entry(struct vs_ctx *c, struct stream_task *t,
		     const struct kcc_valence_ent *e, const uint64_t *w)
{
	struct kcc_valence_area a;
	struct kcc_forest *f;
	uint32_t parent = KCC_ROOT_TOP, node = KCC_NIL, i;
	uint64_t base = 0;
	int n;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.cur = e->cur;
	a.root = e->root;
	a.rec_bits = e->rec_bits;
	a.acyc_words = e->acyc_words;
	a.table_id = e->table_id;
	a.root_site = e->root_site;
	memcpy(a.acyc, w, e->acyc_words * sizeof(*w));
	memcpy(a.rec, w + e->acyc_words, e->rec_words * sizeof(*w));

	c->st->entries++;
	c->st->samples += e->samples;
	if (e->table_id != c->p->table_id) {
		c->st->other_table += e->samples;
		n = -EINVAL;
	} else if (vs__base(c->s, t->tgid, c->exe, c->seg, c->nseg, &base)) {
		c->st->no_base += e->samples;
		n = -EINVAL;
	} else {
		n = valence__decode(&c->p->v, &a, c->fr, VS_MAX_FRAMES);
		if (n == -ENOENT)
			c->st->no_routine += e->samples;
		else if (n < 0)
			c->st->undecodable += e->samples;
	}
	/* Room for the whole path first: the tree doubles as needed. */
	f = &t->ksf.f;
	if (f->count + (n > 0 ? n : 0) + 1 > f->capacity) {
		int ret = vs__grow(t, c->s->nr_ctrs - 1,
				   f->count + (n > 0 ? n : 0) + 1);

		if (ret)
			return ret;
		f = &t->ksf.f;
	}
	if (n <= 0) {
		/* Charged all the same, to a context that says so. */
		node = kcc_forest_get(f, KCC_ROOT_TOP, KCC_LABEL_UNKNOWN);
	} else {
		c->st->decoded += e->samples;
		if ((uint64_t)n > c->st->max_depth)
			c->st->max_depth = n;
		for (i = 0; i < (uint32_t)n && parent != KCC_NIL; i++) {
			c->st->escaped_frames += c->fr[i].escaped ? e->samples : 0;
			node = kcc_forest_get(f, parent,
					      base + c->p->addr[c->fr[i].node]);
			parent = node;
		}
	}
	if (node == KCC_NIL)
		return -ENOMEM;	/* vs__grow() made room for the path */
	kcc_forest_ctr(f, node)[KCC_CTR_EVENTS] += e->events;
	kcc_forest_ctr(f, node)[KCC_CTR_SAMPLES] += e->samples;
	t->samples += e->samples;
	return 0;
}

/* One KCC_REC_VALENCE record of @size bytes at @rec. */
static int vs__record(struct vs_ctx *c, const uint8_t *rec, uint32_t size,
		      char *err, size_t errlen)
{
	struct kcc_rec_valence rv;
	struct stream_task *t;
	uint32_t off = sizeof(rv), i;
	int ret;

	if (size < sizeof(rv))
		return vs__fail(err, errlen, "valence record too short (%u bytes)",
				size);
	memcpy(&rv, rec, sizeof(rv));
	t = vs__task(c->s, rv.pid, rv.start_time_ns);
	if (!t)
		return vs__fail(err, errlen, "valence record of thread %u: no task record",
				rv.pid);
	c->st->records++;
	c->st->table_full += rv.table_full;
	for (i = 0; i < rv.nr_entries; i++) {
		struct kcc_valence_ent e;
		uint64_t w[KCC_VALENCE_ACYC_WORDS + KCC_VALENCE_REC_WORDS];

		if (size - off < sizeof(e))
			return vs__fail(err, errlen, "valence entry %u of thread %u: truncated",
					i, rv.pid);
		memcpy(&e, rec + off, sizeof(e));
		if (e.acyc_words > KCC_VALENCE_ACYC_WORDS ||
		    e.rec_words > KCC_VALENCE_REC_WORDS ||
		    e.rec_bits > 64 * e.rec_words ||
		    e.rec_bits + 63 < 64 * e.rec_words ||
		    e.size != sizeof(e) + 8 * (e.acyc_words + e.rec_words) ||
		    e.size > size - off)
			return vs__fail(err, errlen, "valence entry %u of thread %u: bad sizes",
					i, rv.pid);
		memcpy(w, rec + off + sizeof(e), e.size - sizeof(e));
		ret = vs__entry(c, t, &e, w);
		if (ret)
			return ret;
		off += e.size;
	}
	if (off != size)
		return vs__fail(err, errlen, "valence record of thread %u: %u bytes left over",
				rv.pid, size - off);
	return 0;
}

int valence_stream__decode(const void *raw, size_t len,
			   const struct valence_prog *p, const char *exe,
			   void **out, size_t *out_len,
			   struct valence_stream_stats *st, char *err,
			   size_t errlen)
{
	const uint8_t *b = raw;
	struct sbuf ob = { 0 };
	struct stream s;
	struct vs_ctx c = { .s = &s, .p = p, .exe = exe, .st = st };
	uint64_t off;
	int ret;

	memset(st, 0, sizeof(*st));
	ret = stream__parse(&s, raw, len);
	if (ret) {
		snprintf(err, errlen, "offset %" PRIu64 ": %s", s.err_off, s.err);
		goto out;
	}
	if (s.hdr.k != KCC_K_INF) {
		ret = vs__fail(err, errlen, "the stream is of k = %u, not a CCT",
			       s.hdr.k);
		goto out;
	}
	if (vs__segs(exe, c.seg, &c.nseg)) {
		ret = vs__fail(err, errlen, "%s: not a readable ELF file", exe);
		goto out;
	}
	c.fr = malloc(VS_MAX_FRAMES * sizeof(*c.fr));
	if (!c.fr) {
		ret = -ENOMEM;
		goto out;
	}
	/* stream__parse() checked every record's size and the END. */
	for (off = s.hdr.header_size; off + sizeof(struct kcc_rec) <= s.size;) {
		struct kcc_rec r;

		memcpy(&r, b + off, sizeof(r));
		if (r.type == KCC_REC_VALENCE) {
			ret = vs__record(&c, b + off, r.size, err, errlen);
			if (ret)
				goto out;
		}
		if (r.type == KCC_REC_END)
			break;
		off += r.size;
	}
	ret = stream__write(&s, &ob);
	if (!ret) {
		*out = ob.p;
		*out_len = ob.len;
		ob.p = NULL;
	}
out:
	free(c.fr);
	sbuf__exit(&ob);
	stream__exit(&s);
	return ret;
}

void valence_stream__print(const struct valence_stream_stats *st, FILE *f)
{
	fprintf(f, "valence: %" PRIu64 " samples in %" PRIu64 " encodings (%" PRIu64 " threads): %" PRIu64 " decoded, %" PRIu64 " of another table, %" PRIu64 " undecodable, %" PRIu64 " before the first routine, %" PRIu64 " without the program's mapping; %" PRIu64 " escaped frames, deepest %" PRIu64 "; %" PRIu64 " encodings not kept by kcc.ko\n",
		st->samples, st->entries, st->records, st->decoded,
		st->other_table, st->undecodable, st->no_routine, st->no_base,
		st->escaped_frames, st->max_depth, st->table_full);
}
