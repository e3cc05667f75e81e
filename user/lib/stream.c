// SPDX-License-Identifier: GPL-2.0
/*
 * stream.c - parse and write the /dev/kcc read() stream.
 *
 * The parser works on the whole stream in memory: a snapshot is a few
 * megabytes per thousand nodes, and holding it lets kccread copy it into
 * the profile byte for byte.  Each task's nodes are re-inserted into a
 * forest of the lbr/ core in record order; since a node's parent must
 * come before it and (parent, label) pairs are unique, node i of the
 * record is node i of the forest, which is what the canonical dumps and
 * the kernel tests compare.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kcc_ppp.h"
#include "stream.h"

const char *kcc_progname = "kcc";

static int stream__fail(struct stream *s, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int stream__fail(struct stream *s, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	s->err_off = off;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void stream__perror(const struct stream *s, const char *name)
{
	fprintf(stderr, "%s: %s: offset %" PRIu64 ": %s\n", kcc_progname,
		name, s->err_off, s->err[0] ? s->err : "malformed stream");
}

int pool__alloc(struct pool *p, uint32_t capacity, uint32_t nmetrics)
{
	size_t size;
	int ret;

	if (!capacity)
		capacity = 1;
	size = kcc_forest_mem_size(capacity, nmetrics);
	p->mem = malloc(size);
	if (!p->mem)
		return -ENOMEM;
	ret = kcc_forest_init(&p->f, p->mem, size, capacity, nmetrics);
	if (ret)
		pool__exit(p);
	return ret;
}

void stream__exit(struct stream *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_tasks; i++)
		pool__exit(&s->tasks[i].ksf);
	for (i = 0; i < s->nr_maps; i++)
		free(s->maps[i].path);
	for (i = 0; i < s->nr_watch; i++)
		free(s->watch[i].counts);
	free(s->tasks);
	free(s->maps);
	free(s->watch);
	s->tasks = NULL;
	s->maps = NULL;
	s->watch = NULL;
	s->nr_watch = 0;
	s->nr_tasks = 0;
	s->nr_maps = 0;
}

static int grow(void **arr, uint32_t nr, size_t elem)
{
	void *p;
	size_t cap;

	/* Capacity doubles at powers of two: nr is the only state. */
	if (nr & (nr - 1))
		return 0;
	cap = nr ? 2 * (size_t)nr : 1;
	if (nr >= 0x40000000u)
		return -ENOMEM;
	p = realloc(*arr, cap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/*
 * The header of a stream of ABI 1.0, whose status ended at __reserved.
 * Newer modules append to the status (and so to the header): the
 * descriptors always end the header_size bytes, and what this reader
 * does not know of a longer header is skipped, what a shorter one lacks
 * reads as zero.
 */
#define STREAM_HDR_SIZE0 (offsetof(struct kcc_stream_header, status) + \
			  offsetof(struct kcc_status, ev_config1))

static int parse_header(struct stream *s, const uint8_t *buf, size_t len)
{
	const struct kcc_stream_header *h = (const void *)buf;
	uint64_t need, fixed;
	uint32_t i;

	if (len < STREAM_HDR_SIZE0)
		return stream__fail(s, len, "truncated stream header (%zu of %zu bytes)",
				    len, STREAM_HDR_SIZE0);
	if (h->magic != KCC_STREAM_MAGIC)
		return stream__fail(s, 0, "not a kcc stream (magic 0x%08x)",
				    h->magic);
	if (h->version != KCC_STREAM_VERSION)
		return stream__fail(s, 4, "unsupported stream version %u (this reader knows %u)",
				    h->version, KCC_STREAM_VERSION);
	if (h->nr_ctrs < 1 || h->nr_ctrs > STREAM_MAX_CTRS)
		return stream__fail(s, 24, "bad number of counters %u (1..%u)",
				    h->nr_ctrs, STREAM_MAX_CTRS);
	if (!h->k || (h->k > KCC_K_MAX && h->k != KCC_K_INF))
		return stream__fail(s, 16, "bad k %u", h->k);
	need = STREAM_HDR_SIZE0 + (uint64_t)h->nr_ctrs * sizeof(struct kcc_metric_desc);
	if (h->header_size < need || h->header_size % 8)
		return stream__fail(s, 8, "bad header size %u (at least %" PRIu64 ", a multiple of 8)",
				    h->header_size, need);
	if (h->header_size > len)
		return stream__fail(s, len, "truncated stream header (%zu of %u bytes)",
				    len, h->header_size);
	fixed = h->header_size - (uint64_t)h->nr_ctrs * sizeof(struct kcc_metric_desc);
	memset(&s->hdr, 0, sizeof(s->hdr));
	memcpy(&s->hdr, buf, fixed < sizeof(s->hdr) ? fixed : sizeof(s->hdr));
	s->nr_ctrs = h->nr_ctrs;
	for (i = 0; i < h->nr_ctrs; i++) {
		size_t off = fixed + i * sizeof(struct kcc_metric_desc);

		memcpy(&s->desc[i], buf + off, sizeof(s->desc[i]));
		if (!memchr(s->desc[i].name, 0, KCC_METRIC_NAME_LEN) ||
		    !s->desc[i].name[0])
			return stream__fail(s, off + 16,
					    "metric %u: name empty or not NUL-terminated",
					    i);
	}
	return 0;
}

static int parse_task(struct stream *s, const uint8_t *rec, uint64_t off,
		      uint32_t size)
{
	struct kcc_rec_task rt;
	struct stream_task *t;
	uint32_t node_sz = sizeof(struct kcc_rec_node) + 8 * s->nr_ctrs;
	uint32_t *level = NULL, i;
	uint32_t max_level = s->hdr.k == KCC_K_INF ? UINT32_MAX :
			     2 * s->hdr.k - 1;
	uint64_t want;
	int ret;

	if (size < sizeof(rt))
		return stream__fail(s, off + 4, "task record too short (%u bytes)",
				    size);
	memcpy(&rt, rec, sizeof(rt));
	want = sizeof(rt) + (uint64_t)rt.nr_nodes * node_sz;
	if (want != size)
		return stream__fail(s, off + 4,
				    "task record of %u bytes does not hold its %u nodes (%" PRIu64 " bytes)",
				    size, rt.nr_nodes, want);
	if (rt.nr_nodes >= KCC_FREE)
		return stream__fail(s, off + 52, "too many nodes (%u)",
				    rt.nr_nodes);
	ret = grow((void **)&s->tasks, s->nr_tasks, sizeof(*s->tasks));
	if (ret)
		return ret;
	t = &s->tasks[s->nr_tasks];
	memset(t, 0, sizeof(*t));
	ret = pool__alloc(&t->ksf, rt.nr_nodes, s->nr_ctrs - 1);
	if (ret)
		return ret;
	s->nr_tasks++;
	t->pid = rt.pid;
	t->tgid = rt.tgid;
	t->start_time_ns = rt.start_time_ns;
	memcpy(t->comm, rt.comm, sizeof(rt.comm));
	t->comm[16] = 0;
	t->flags = rt.flags;
	t->samples = rt.samples;
	t->node_drops = rt.node_drops;
	t->stack_drops = rt.stack_drops;
	t->stitch_errors = rt.stitch_errors;
	t->lost_charges = rt.lost_charges;

	level = malloc(((size_t)rt.nr_nodes + 1) * sizeof(*level));
	if (!level)
		return -ENOMEM;
	for (i = 0; i < rt.nr_nodes; i++) {
		uint64_t noff = off + sizeof(rt) + (uint64_t)i * node_sz;
		const uint8_t *np = rec + sizeof(rt) + (size_t)i * node_sz;
		struct kcc_rec_node nd;
		uint32_t j;

		memcpy(&nd, np, sizeof(nd));
		if (nd.__reserved) {
			ret = stream__fail(s, noff + 4, "task %u: node %u: reserved field not zero",
					   t->pid, i);
			goto out;
		}
		if (nd.parent == KCC_NODE_ROOT_TOP ||
		    nd.parent == KCC_NODE_ROOT_SLAB) {
			level[i] = 0;
		} else if (nd.parent < i) {
			level[i] = level[nd.parent] + 1;
		} else {
			ret = stream__fail(s, noff, "task %u: node %u: parent %u does not come before it",
					   t->pid, i, nd.parent);
			goto out;
		}
		/* A k-SF tree spans two slabs: keeps inv_k's walks O(k). */
		if (level[i] > max_level) {
			ret = stream__fail(s, noff, "task %u: node %u: %u levels deep, more than a %u-SF holds",
					   t->pid, i, level[i], s->hdr.k);
			goto out;
		}
		j = kcc_forest_get(&t->ksf.f, nd.parent, nd.label);
		if (j != i) {
			ret = stream__fail(s, noff + 8, "task %u: node %u: same parent and label as node %u",
					   t->pid, i, j);
			goto out;
		}
		memcpy(kcc_forest_ctr(&t->ksf.f, i), np + sizeof(nd),
		       8 * (size_t)s->nr_ctrs);
	}
	ret = 0;
out:
	free(level);
	return ret;
}

static int parse_map(struct stream *s, const uint8_t *rec, uint64_t off,
		     uint32_t size)
{
	struct kcc_rec_map rm;
	struct stream_map *m;
	const char *path = (const char *)rec + sizeof(rm);
	size_t plen;
	int ret;

	if (size <= sizeof(rm))
		return stream__fail(s, off + 4, "map record too short (%u bytes)",
				    size);
	memcpy(&rm, rec, sizeof(rm));
	if (rm.start >= rm.end)
		return stream__fail(s, off + 16, "map: empty range 0x%" PRIx64 "-0x%" PRIx64,
				    (uint64_t)rm.start, (uint64_t)rm.end);
	plen = strnlen(path, size - sizeof(rm));
	if (plen == size - sizeof(rm))
		return stream__fail(s, off + sizeof(rm), "map: path not NUL-terminated");
	ret = grow((void **)&s->maps, s->nr_maps, sizeof(*s->maps));
	if (ret)
		return ret;
	m = &s->maps[s->nr_maps];
	m->path = strndup(path, plen);
	if (!m->path)
		return -ENOMEM;
	s->nr_maps++;
	m->tgid = rm.tgid;
	m->image = rm.image;
	m->start = rm.start;
	m->end = rm.end;
	m->pgoff = rm.pgoff;
	m->ino = rm.ino;
	return 0;
}

/*
 * A KCC_REC_WATCH: its counters are the stream's first three (calls,
 * events, samples: KCC_WATCH_NR_CTRS) and all records of a stream
 * count the same set.
 */
static int parse_watch(struct stream *s, const uint8_t *rec, uint64_t off,
		       uint32_t size)
{
	struct kcc_rec_watch rw;
	struct stream_watch *w;
	size_t n;

	if (size < sizeof(rw))
		return stream__fail(s, off + 4, "watch record too short (%u bytes)",
				    size);
	memcpy(&rw, rec, sizeof(rw));
	if (rw.__reserved)
		return stream__fail(s, off + 36, "watch: reserved field not zero");
	if (rw.nr_ctrs != KCC_WATCH_NR_CTRS ||
	    (s->nr_ctrs != KCC_WATCH_NR_CTRS && s->nr_ctrs != KCC_NR_CTRS))
		return stream__fail(s, off + 28, "watch: %u counters, the stream has %u",
				    rw.nr_ctrs, s->nr_ctrs);
	n = (size_t)rw.nr_contexts * rw.nr_ctrs;
	if (!rw.nr_contexts || rw.nr_contexts > KCC_WATCH_MAX_CONTEXTS ||
	    size != sizeof(rw) + n * 8)
		return stream__fail(s, off + 24, "watch: %u contexts do not fill %u bytes",
				    rw.nr_contexts, size);
	if (s->nr_watch && (s->watch[0].nr_contexts != rw.nr_contexts ||
			    s->watch[0].range != rw.range))
		return stream__fail(s, off + 24, "watch: not the set of the first watch record");
	if (grow((void **)&s->watch, s->nr_watch, sizeof(*s->watch)))
		return -ENOMEM;
	w = &s->watch[s->nr_watch];
	memset(w, 0, sizeof(*w));
	w->counts = malloc(n * 8);
	if (!w->counts)
		return -ENOMEM;
	s->nr_watch++;
	memcpy(w->counts, rec + sizeof(rw), n * 8);
	w->pid = rw.pid;
	w->tgid = rw.tgid;
	w->start_time_ns = rw.start_time_ns;
	w->nr_contexts = rw.nr_contexts;
	w->nr_ctrs = rw.nr_ctrs;
	w->range = rw.range;
	memcpy(w->totals, rw.totals, sizeof(w->totals));
	memcpy(w->residual, rw.residual, sizeof(w->residual));
	w->aliased = rw.aliased;
	w->stack_drops = rw.stack_drops;
	return 0;
}

/* A KCC_REC_CGROUP: the cgroup of the task just before it. */
static int parse_cgroup(struct stream *s, const uint8_t *rec, uint64_t off,
			uint32_t size)
{
	struct kcc_rec_cgroup rc;

	if (size != sizeof(rc))
		return stream__fail(s, off + 4, "cgroup record of %u bytes", size);
	if (!s->nr_tasks || s->last_rec != KCC_REC_TASK)
		return stream__fail(s, off, "cgroup record not after a task record");
	memcpy(&rc, rec, sizeof(rc));
	if (!rc.cgroup_id)
		return stream__fail(s, off + 8, "cgroup record of id 0");
	s->tasks[s->nr_tasks - 1].cgroup_id = rc.cgroup_id;
	return 0;
}

int stream__parse(struct stream *s, const void *data, size_t len)
{
	const uint8_t *buf = data;
	uint64_t off;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = parse_header(s, buf, len);
	if (ret)
		return ret;
	off = s->hdr.header_size;
	for (;;) {
		struct kcc_rec r;

		if (off == len)
			return stream__fail(s, off, "truncated: no END record");
		if (len - off < sizeof(r))
			return stream__fail(s, off, "truncated record header");
		memcpy(&r, buf + off, sizeof(r));
		if (r.size < sizeof(r) || r.size % 8)
			return stream__fail(s, off + 4, "bad record size %u", r.size);
		if (r.size > len - off)
			return stream__fail(s, off + 4, "truncated record (%u bytes, %" PRIu64 " left)",
					    r.size, (uint64_t)(len - off));
		switch (r.type) {
		case KCC_REC_TASK:
			ret = parse_task(s, buf + off, off, r.size);
			break;
		case KCC_REC_MAP:
			ret = parse_map(s, buf + off, off, r.size);
			break;
		case KCC_REC_WATCH:
			ret = parse_watch(s, buf + off, off, r.size);
			break;
		case KCC_REC_CGROUP:
			ret = parse_cgroup(s, buf + off, off, r.size);
			break;
		case KCC_REC_END:
			if (r.size != sizeof(r))
				return stream__fail(s, off + 4, "END record of %u bytes", r.size);
			if (off + r.size != len)
				return stream__fail(s, off + r.size, "%" PRIu64 " bytes after the END record",
						    (uint64_t)(len - off - r.size));
			s->size = len;
			return 0;
		default:
			s->unknown_recs++;
			ret = 0;
			break;
		}
		if (ret)
			return ret;
		s->last_rec = r.type;
		off += r.size;
	}
}

int stream__metric(const struct stream *s, const char *name)
{
	uint32_t i;

	for (i = 0; i < s->nr_ctrs; i++)
		if (!strcmp(s->desc[i].name, name))
			return (int)i;
	return -1;
}

int read_whole_file(const char *path, uint64_t max, bool progress,
		    void **bufp, size_t *lenp)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	size_t len = 0, cap = 1 << 16;
	uint64_t shown = 0;
	uint8_t *buf = NULL;
	struct stat st;
	int fd, ret;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "%s: %s: %s\n", kcc_progname, name, strerror(errno));
		return ret;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > max) {
			fprintf(stderr, "%s: %s: %" PRIu64 " bytes, more than the %" PRIu64 " accepted\n",
				kcc_progname, name, (uint64_t)st.st_size, max);
			ret = -EFBIG;
			goto cleanup;
		}
		cap = st.st_size + 8;
	}
	for (;;) {
		ssize_t n;

		if (len == cap || !buf) {
			uint8_t *p;

			if (buf)
				cap *= 2;
			/* cap starts at 64 KiB or the file size + 8: NOLINTNEXTLINE(clang-analyzer-optin.portability.UnixAPI) */
			p = realloc(buf, cap);
			if (!p) {
				ret = -ENOMEM;
				fprintf(stderr, "%s: %s: out of memory\n", kcc_progname, name);
				goto cleanup;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			fprintf(stderr, "%s: %s: read error: %s\n", kcc_progname,
				name, strerror(errno));
			goto cleanup;
		}
		if (!n)
			break;
		len += n;
		if (len > max) {
			fprintf(stderr, "%s: %s: more than the %" PRIu64 " bytes accepted\n",
				kcc_progname, name, max);
			ret = -EFBIG;
			goto cleanup;
		}
		if (progress && len - shown >= (1u << 20)) {
			fprintf(stderr, "\r%s: %s: %" PRIu64 " MiB read", kcc_progname,
				name, (uint64_t)len >> 20);
			shown = len;
		}
	}
	if (progress && shown)
		fprintf(stderr, "\r%s: %s: %zu bytes read\n", kcc_progname, name, len);
	*bufp = buf;
	*lenp = len;
	buf = NULL;
	ret = 0;
cleanup:
	free(buf);
	if (fd > 0)
		close(fd);
	return ret;
}

/* ---- writing ------------------------------------------------------------ */

void sbuf__exit(struct sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void *sbuf__append(struct sbuf *b, const void *data, size_t len)
{
	void *at;

	if (b->err)
		return NULL;
	if (!len)
		return b->p;
	if (len > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap - b->len < len) {
			if (cap > SIZE_MAX / 2) {
				b->err = -ENOMEM;
				return NULL;
			}
			cap *= 2;
		}
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	at = b->p + b->len;
	if (data)
		memcpy(at, data, len);
	else
		memset(at, 0, len);
	b->len += len;
	return at;
}

void sbuf__pad8(struct sbuf *b)
{
	static const uint8_t zero[8];

	if (b->len % 8)
		sbuf__append(b, zero, 8 - b->len % 8);
}

bool stream__has_calls_var(const struct stream *s)
{
	const struct kcc_metric_desc *d = &s->desc[KCC_CTR_CALLS_VAR];

	return s->nr_ctrs > KCC_CTR_CALLS_VAR && d->type == ~0u &&
	       !strncmp(d->name, "calls_var", sizeof(d->name));
}

void stream__default_header(struct kcc_stream_header *h,
			    struct kcc_metric_desc *desc, uint32_t k,
			    uint32_t source, uint32_t flags)
{
	static const char *const names[KCC_NR_CTRS] = {
		[KCC_CTR_CALLS] = "calls",
		[KCC_CTR_EVENTS] = "cache-misses",
		[KCC_CTR_SAMPLES] = "samples",
		[KCC_CTR_CALLS_VAR] = "calls_var",
	};
	uint32_t i;

	memset(h, 0, sizeof(*h));
	h->magic = KCC_STREAM_MAGIC;
	h->version = KCC_STREAM_VERSION;
	h->nr_ctrs = KCC_NR_CTRS;
	h->header_size = sizeof(*h) + KCC_NR_CTRS * sizeof(*desc);
	h->flags = flags;
	h->k = k;
	h->source = source;
	h->status.size = sizeof(h->status);
	h->status.k = k;
	h->status.source = source;
	h->status.state = KCC_STATE_STOPPED;
	memset(desc, 0, KCC_NR_CTRS * sizeof(*desc));
	for (i = 0; i < KCC_NR_CTRS; i++) {
		desc[i].type = ~0u;
		strcpy(desc[i].name, names[i]);
	}
	/* PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES */
	desc[KCC_CTR_EVENTS].type = 0;
	desc[KCC_CTR_EVENTS].config = 3;
}

int stream__write_header(struct sbuf *b, const struct kcc_stream_header *h,
			 const struct kcc_metric_desc *desc)
{
	struct kcc_stream_header hh = *h;

	hh.header_size = sizeof(hh) + hh.nr_ctrs * sizeof(*desc);
	sbuf__append(b, &hh, sizeof(hh));
	sbuf__append(b, desc, (size_t)hh.nr_ctrs * sizeof(*desc));
	return b->err;
}

int stream__write_task(struct sbuf *b, const struct stream_task *t,
		       uint32_t nr_ctrs)
{
	const struct kcc_forest *f = &t->ksf.f;
	uint32_t node_sz = sizeof(struct kcc_rec_node) + 8 * nr_ctrs, i;
	struct kcc_rec_task rt;

	memset(&rt, 0, sizeof(rt));
	rt.hdr.type = KCC_REC_TASK;
	rt.hdr.size = sizeof(rt) + f->count * node_sz;
	rt.pid = t->pid;
	rt.tgid = t->tgid;
	rt.start_time_ns = t->start_time_ns;
	memcpy(rt.comm, t->comm, sizeof(rt.comm));
	rt.flags = t->flags;
	rt.nr_nodes = f->count;
	rt.samples = t->samples;
	rt.node_drops = t->node_drops;
	rt.stack_drops = t->stack_drops;
	rt.stitch_errors = t->stitch_errors;
	rt.lost_charges = t->lost_charges;
	sbuf__append(b, &rt, sizeof(rt));
	for (i = 0; i < f->count; i++) {
		const struct kcc_node *n = kcc_forest_node(f, i);
		struct kcc_rec_node rn = {
			.parent = n->parent,
			.label = n->label,
		};
		uint64_t *c;
		uint32_t j;

		sbuf__append(b, &rn, sizeof(rn));
		c = sbuf__append(b, NULL, 8 * (size_t)nr_ctrs);
		if (!c)
			break;
		for (j = 0; j < nr_ctrs && j <= f->nmetrics; j++)
			memcpy(&c[j], &n->ctr[j], 8);
	}
	if (t->cgroup_id) {
		struct kcc_rec_cgroup rc = {
			.hdr = { .type = KCC_REC_CGROUP, .size = sizeof(rc) },
			.cgroup_id = t->cgroup_id,
		};

		sbuf__append(b, &rc, sizeof(rc));
	}
	return b->err;
}

/* The fixed part of a KCC_REC_WATCH, its counters to follow. */
static void put_watch(struct sbuf *b, const struct stream_watch *w)
{
	struct kcc_rec_watch rw;

	memset(&rw, 0, sizeof(rw));
	rw.hdr.type = KCC_REC_WATCH;
	rw.hdr.size = sizeof(rw) + (size_t)w->nr_contexts * w->nr_ctrs * 8;
	rw.pid = w->pid;
	rw.tgid = w->tgid;
	rw.start_time_ns = w->start_time_ns;
	rw.nr_contexts = w->nr_contexts;
	rw.nr_ctrs = w->nr_ctrs;
	rw.range = w->range;
	memcpy(rw.totals, w->totals, sizeof(rw.totals));
	memcpy(rw.residual, w->residual, sizeof(rw.residual));
	rw.aliased = w->aliased;
	rw.stack_drops = w->stack_drops;
	sbuf__append(b, &rw, sizeof(rw));
}

int stream__write_watch(struct sbuf *b, const struct stream_task *t,
			const struct kcc_ppp_run *r)
{
	size_t n = (size_t)r->p->nctx * (1 + r->nmetrics);
	struct stream_watch w;
	uint64_t *c;
	uint32_t m;

	if (1 + r->nmetrics != KCC_WATCH_NR_CTRS)
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.pid = t->pid;
	w.tgid = t->tgid;
	w.start_time_ns = t->start_time_ns;
	w.nr_contexts = r->p->nctx;
	w.nr_ctrs = KCC_WATCH_NR_CTRS;
	w.range = r->p->range;
	w.totals[KCC_CTR_CALLS] = r->weight;
	w.residual[KCC_CTR_CALLS] = r->resid_calls;
	for (m = 0; m < r->nmetrics; m++) {
		w.totals[m + 1] = r->charged[m];
		w.residual[m + 1] = r->resid[m];
	}
	w.aliased = r->aliased;
	w.stack_drops = r->stack_drops;
	put_watch(b, &w);
	c = sbuf__append(b, NULL, n * 8);
	if (c)
		kcc_ppp_export(r, c);
	return b->err;
}

int stream__write_map(struct sbuf *b, const struct stream_map *m)
{
	struct kcc_rec_map rm;
	size_t plen = strlen(m->path) + 1;
	size_t size = (sizeof(rm) + plen + 7) & ~(size_t)7;

	if (size > UINT32_MAX)
		return -EINVAL;
	memset(&rm, 0, sizeof(rm));
	rm.hdr.type = KCC_REC_MAP;
	rm.hdr.size = size;
	rm.tgid = m->tgid;
	rm.image = m->image;
	rm.start = m->start;
	rm.end = m->end;
	rm.pgoff = m->pgoff;
	rm.ino = m->ino;
	sbuf__append(b, &rm, sizeof(rm));
	sbuf__append(b, m->path, plen);
	sbuf__pad8(b);
	return b->err;
}

int stream__write_end(struct sbuf *b)
{
	struct kcc_rec r = { .type = KCC_REC_END, .size = sizeof(r) };

	sbuf__append(b, &r, sizeof(r));
	return b->err;
}

int stream__write(const struct stream *s, struct sbuf *out)
{
	uint32_t i;

	stream__write_header(out, &s->hdr, s->desc);
	for (i = 0; i < s->nr_tasks; i++)
		stream__write_task(out, &s->tasks[i], s->nr_ctrs);
	for (i = 0; i < s->nr_watch; i++) {
		put_watch(out, &s->watch[i]);
		sbuf__append(out, s->watch[i].counts, (size_t)s->watch[i].nr_contexts *
			     s->watch[i].nr_ctrs * 8);
	}
	for (i = 0; i < s->nr_maps; i++)
		stream__write_map(out, &s->maps[i]);
	return stream__write_end(out);
}

/* Tasks in process-image order, threads of one image together. */
static int task_image_cmp(const void *a, const void *b)
{
	const struct stream_task *x = *(const struct stream_task *const *)a;
	const struct stream_task *y = *(const struct stream_task *const *)b;
	uint32_t ix = x->flags >> KCC_TASK_IMAGE_SHIFT;
	uint32_t iy = y->flags >> KCC_TASK_IMAGE_SHIFT;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (ix != iy)
		return ix < iy ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: the stream's order */
}

/* Add @src's nodes and counters to @dst, which has room for them. */
static void forest_add(struct kcc_forest *dst, const struct kcc_forest *src,
		       uint32_t *map)
{
	uint32_t i;

	/* Parents come before their children (stream__parse() checks). */
	for (i = 0; i < src->count; i++) {
		const struct kcc_node *nd = kcc_forest_node(src, i);
		uint32_t parent = nd->parent;

		if (!kcc_is_root_parent(parent))
			parent = map[parent];
		map[i] = kcc_forest_get(dst, parent, nd->label);
		kcc_forest_add_ctrs(dst, map[i], src, i);
	}
}

/* The threads @g[0..n) of one process image as one folded task @t. */
static int fold_image(struct stream_task *t, struct stream_task *const *g,
		      uint32_t n, uint32_t nr_ctrs)
{
	const uint32_t keep = KCC_TASK_EXITED | KCC_TASK_EXEC;
	const struct stream_task *lead = g[0];
	uint32_t *map, cap = 0, most = 0, i;
	int ret;

	for (i = 0; i < n; i++) {
		cap += g[i]->ksf.f.count;
		if (g[i]->ksf.f.count > most)
			most = g[i]->ksf.f.count;
		if (g[i]->pid == g[i]->tgid && lead->pid != lead->tgid)
			lead = g[i];
	}
	memset(t, 0, sizeof(*t));
	ret = pool__alloc(&t->ksf, cap, nr_ctrs - 1);
	map = ret ? NULL : malloc(((size_t)most + 1) * sizeof(*map));
	if (!map) {
		pool__exit(&t->ksf);
		return -ENOMEM;
	}
	/* As kcc.ko folds exited threads: pid = tgid, the leader's start. */
	t->pid = t->tgid = lead->tgid;
	t->start_time_ns = lead->start_time_ns;
	t->cgroup_id = lead->cgroup_id;
	memcpy(t->comm, lead->comm, sizeof(t->comm));
	t->flags = KCC_TASK_FOLDED | (lead->flags & ~KCC_TASK_FLAGS_MASK) | keep;
	for (i = 0; i < n; i++) {
		const struct stream_task *u = g[i];

		if (u->pid != u->tgid && lead->pid != lead->tgid &&
		    u->start_time_ns < t->start_time_ns)
			t->start_time_ns = u->start_time_ns;
		t->flags &= ~keep | u->flags;
		/* Threads of two cgroups: the folded task is in neither. */
		if (u->cgroup_id != lead->cgroup_id)
			t->cgroup_id = 0;
		t->flags |= u->flags & KCC_TASK_PRUNED;
		t->samples += u->samples;
		t->node_drops += u->node_drops;
		t->stack_drops += u->stack_drops;
		t->stitch_errors += u->stitch_errors;
		t->lost_charges += u->lost_charges;
		forest_add(&t->ksf.f, &u->ksf.f, map);
	}
	free(map);
	return 0;
}

int stream__fold_processes(struct stream *s)
{
	struct stream_task **by, *out;
	uint32_t i, j, k, n = 0, cap = 1;
	uint8_t *made, *gone;
	int ret = 0;

	if (s->nr_watch || s->unknown_recs)
		return -EINVAL;
	if (!s->nr_tasks)
		return 0;
	/* The capacity grow() takes the array to have. */
	while (cap < s->nr_tasks)
		cap *= 2;
	/* an array of pointers to tasks: NOLINTNEXTLINE(bugprone-sizeof-expression) */
	by = malloc((size_t)s->nr_tasks * sizeof(*by));
	out = malloc((size_t)cap * sizeof(*out));
	made = calloc(s->nr_tasks, 1);
	gone = calloc(s->nr_tasks, 1);
	if (!by || !out || !made || !gone) {
		ret = -ENOMEM;
		goto done;
	}
	for (i = 0; i < s->nr_tasks; i++)
		by[i] = &s->tasks[i];
	/* an array of pointers to tasks: NOLINTNEXTLINE(bugprone-sizeof-expression) */
	qsort(by, s->nr_tasks, sizeof(*by), task_image_cmp);
	for (i = 0; i < s->nr_tasks && !ret; i = j) {
		for (j = i + 1; j < s->nr_tasks &&
		     by[j]->tgid == by[i]->tgid &&
		     by[j]->flags >> KCC_TASK_IMAGE_SHIFT ==
		     by[i]->flags >> KCC_TASK_IMAGE_SHIFT; j++)
			;
		if (j - i == 1) {
			out[n++] = *by[i];	/* one thread: as it was */
			continue;
		}
		ret = fold_image(&out[n], by + i, j - i, s->nr_ctrs);
		if (ret)
			break;
		made[n++] = 1;
		/* Their forests are in the folded one now. */
		for (k = i; k < j; k++)
			gone[by[k] - s->tasks] = 1;
	}
	if (ret) {
		for (i = 0; i < n; i++)
			if (made[i])
				pool__exit(&out[i].ksf);
		goto done;
	}
	for (i = 0; i < s->nr_tasks; i++)
		if (gone[i])
			pool__exit(&s->tasks[i].ksf);
	free(s->tasks);
	s->tasks = out;
	s->nr_tasks = n;
	out = NULL;
done:
	free(by);
	free(out);
	free(made);
	free(gone);
	return ret;
}

/* ---- streams from call traces ------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int stream__from_trace(struct sbuf *out, const struct trace *t,
		       const struct stream_gen *g)
{
	uint32_t nthreads = g->threads ? g->threads : 1, i, th = 0;
	struct stream_task *tasks;
	struct kcc_ksf *ksf;
	struct kcc_frame *stacks;
	struct kcc_stream_header h;
	struct kcc_metric_desc desc[KCC_NR_CTRS];
	struct stream_map m = {
		.tgid = g->tgid, .start = g->base,
		.end = g->base + (uint64_t)(t->syms.nr ? t->syms.nr : 1) * STREAM_GEN_STRIDE,
		.pgoff = 0, .ino = 1, .path = (char *)STREAM_GEN_PATH,
	};
	uint64_t cap = 2 * t->calls + 2, e;
	uint32_t scap = t->max_depth + 1, depth = 0;
	struct kcc_ppp_range *ranges = NULL;
	struct kcc_ppp_frame *wstacks = NULL;
	struct kcc_ppp_run *runs = NULL;
	uint64_t *wctr = NULL;
	size_t wper = 0;
	int ret = -ENOMEM;

	if (cap >= KCC_FREE || nthreads > 1024)
		return -E2BIG;
	tasks = calloc(nthreads, sizeof(*tasks));
	ksf = calloc(nthreads, sizeof(*ksf));
	stacks = calloc((size_t)nthreads * scap, sizeof(*stacks));
	if (!tasks || !ksf || !stacks)
		goto cleanup;
	if (g->watch) {
		/* Routine i spans [base + i * STRIDE, base + (i + 1) * STRIDE). */
		uint32_t nr = t->syms.nr ? t->syms.nr : 1;

		wper = (size_t)g->watch->range * KCC_WATCH_NR_CTRS;
		ranges = calloc(nr, sizeof(*ranges));
		runs = calloc(nthreads, sizeof(*runs));
		wstacks = calloc((size_t)nthreads * scap, sizeof(*wstacks));
		wctr = calloc(nthreads * wper, sizeof(*wctr));
		if (!ranges || !runs || !wstacks || !wctr)
			goto cleanup;
		for (i = 0; i < nr; i++) {
			ranges[i].start = g->base + (uint64_t)i * STREAM_GEN_STRIDE;
			ranges[i].end = ranges[i].start + STREAM_GEN_STRIDE;
			ranges[i].label = i;
		}
		ret = kcc_ppp_set_ranges(g->watch, ranges, nr);
		if (ret)
			goto cleanup;
	}
	for (i = 0; i < nthreads; i++) {
		struct stream_task *tk = &tasks[i];
		char name[32];

		ret = pool__alloc(&tk->ksf, cap, KCC_NR_CTRS - 1);
		if (ret)
			goto cleanup;
		kcc_ksf_init(&ksf[i], &tk->ksf.f, g->k, stacks + (size_t)i * scap,
			     scap);
		if (g->watch) {
			uint64_t *c = wctr + i * wper;

			if (kcc_ppp_run_init(&runs[i], g->watch, c,
					     wstacks + (size_t)i * scap, scap) ||
			    kcc_ppp_run_metrics(&runs[i], c + g->watch->range,
						KCC_WATCH_NR_CTRS - 1)) {
				ret = -EINVAL;
				goto cleanup;
			}
			ksf[i].ppp = &runs[i];
		}
		tk->pid = g->tgid + i;
		tk->tgid = g->tgid;
		tk->start_time_ns = 1000 + i;
		snprintf(name, sizeof(name), i ? "%.10s-%u" : "%.15s", g->comm, i);
		snprintf(tk->comm, sizeof(tk->comm), "%.15s", name);
	}

	for (e = 0; e < t->nr; e++) {
		uint32_t ev = t->ev[e];
		uint64_t label;

		if (ev == TRACE_RET) {
			kcc_ksf_return(&ksf[th]);
			if (!--depth)
				th = (th + 1) % nthreads;
			continue;
		}
		depth++;
		/* "Some address inside the routine", as the kernel labels. */
		label = g->base + (uint64_t)ev * STREAM_GEN_STRIDE;
		if (g->jitter)
			label += mix64(e + g->jitter) % (STREAM_GEN_STRIDE - 8);
		kcc_ksf_call(&ksf[th], label);
		kcc_ksf_charge(&ksf[th], KCC_CTR_EVENTS, (uint64_t)ev + 1);
		kcc_ksf_charge(&ksf[th], KCC_CTR_SAMPLES, 1);
		tasks[th].samples++;
	}

	stream__default_header(&h, desc, g->k, KCC_SOURCE_INJECT,
			       KCC_HDR_CALLS_VALID);
	h.sample_period = 1;
	h.status.samples = t->calls;
	h.status.processed = t->calls;
	h.status.tasks = nthreads;
	stream__write_header(out, &h, desc);
	for (i = 0; i < nthreads; i++) {
		tasks[i].stack_drops = ksf[i].stack_drops;
		tasks[i].lost_charges = ksf[i].lost_charges;
		stream__write_task(out, &tasks[i], KCC_NR_CTRS);
		if (g->watch)
			stream__write_watch(out, &tasks[i], &runs[i]);
	}
	stream__write_map(out, &m);
	ret = stream__write_end(out);
cleanup:
	if (g->watch) {
		g->watch->ranges = NULL;
		g->watch->nranges = 0;
	}
	free(ranges);
	free(runs);
	free(wstacks);
	free(wctr);
	if (tasks)
		for (i = 0; i < nthreads; i++)
			pool__exit(&tasks[i].ksf);
	free(tasks);
	free(ksf);
	free(stacks);
	return ret;
}

/* ---- the device ------------------------------------------------------------ */

int kccdev__open(const char *path, struct kcc_version *v)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), err;

	if (fd < 0) {
		err = errno;
		if (err == ENOENT || err == ENODEV || err == ENXIO)
			fprintf(stderr, "%s: %s: %s: is the kcc module loaded? (modprobe kcc, or insmod kcc.ko)\n",
				kcc_progname, path, strerror(err));
		else if (err == EPERM || err == EACCES)
			fprintf(stderr, "%s: %s: %s: kcc needs CAP_PERFMON (or root)\n",
				kcc_progname, path, strerror(err));
		else
			fprintf(stderr, "%s: %s: %s\n", kcc_progname, path,
				strerror(err));
		return -err;
	}
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	if (ioctl(fd, KCC_IOC_VERSION, v)) {
		err = errno;
		fprintf(stderr, "%s: %s: not a kcc device (version query: %s)\n",
			kcc_progname, path, strerror(err));
		close(fd);
		return err == ENOTTY ? -ENOTTY : -err;
	}
	if (v->major != KCC_ABI_MAJOR) {
		fprintf(stderr, "%s: %s: the module speaks ABI %u.%u, this tool ABI %u.%u: use matching versions\n",
			kcc_progname, path, v->major, v->minor, (unsigned int)KCC_ABI_MAJOR,
			(unsigned int)KCC_ABI_MINOR);
		close(fd);
		return -EPROTO;
	}
	return fd;
}

int kccdev__snapshot(int fd, const char *path, bool progress, void **bufp,
		     size_t *lenp)
{
	size_t len = 0, cap = 1 << 20;
	uint8_t *buf = NULL;

	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
		fprintf(stderr, "%s: %s: seek: %s\n", kcc_progname, path,
			strerror(errno));
		return -errno;
	}
	for (;;) {
		ssize_t n;

		if (!buf || len == cap) {
			uint8_t *p;

			if (buf)
				cap *= 2;
			if (cap > STREAM_MAX_BYTES) {
				free(buf);
				fprintf(stderr, "%s: %s: snapshot above %llu bytes\n",
					kcc_progname, path, STREAM_MAX_BYTES);
				return -EFBIG;
			}
			p = realloc(buf, cap);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			if (err == EBUSY)
				fprintf(stderr, "%s: %s: the session belongs to another open file of the device\n",
					kcc_progname, path);
			else if ((err == EINVAL || err == ENODEV) && !len)
				fprintf(stderr, "%s: %s: no session to read (none started at load with autostart=1 and none attached, or it ended with its owner)\n",
					kcc_progname, path);
			else if (err == EACCES && !len)
				fprintf(stderr, "%s: %s: the session is another user's: reading it needs CAP_PERFMON\n",
					kcc_progname, path);
			else
				fprintf(stderr, "%s: %s: read: %s\n", kcc_progname,
					path, strerror(err));
			free(buf);
			return -err;
		}
		if (!n)
			break;
		len += n;
		if (progress)
			fprintf(stderr, "\r%s: %s: %zu KiB", kcc_progname, path,
				len >> 10);
	}
	if (progress)
		fputc('\n', stderr);
	*bufp = buf;
	*lenp = len;
	return 0;
}
