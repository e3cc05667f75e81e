// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - read and write call/return traces.
 *
 * Traces of real programs run to hundreds of millions of events, so the
 * readers work in place in one large buffer refilled with read(2): no
 * per-line allocation, a line is parsed where it lies, and a name is only
 * copied the first time it is interned.  Every byte of the input is
 * untrusted: the text reader bounds line length, the binary reader bounds
 * varints, name lengths and symbol ids, and both report the line or byte
 * offset of the first thing they cannot accept.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define RD_CHUNK	(4u << 20)
#define TRACE_MAX_LINE	(1u << 20)	/* longest text line accepted */
#define TRACE_MAX_NAME	(1u << 20)	/* longest binary symbol name */
#define VARINT_MAX	10		/* bytes of a 64-bit LEB128 */

struct rd {
	int fd;
	const char *name;
	char *buf;
	size_t cap;
	size_t pos;		/* first unconsumed byte */
	size_t end;		/* end of valid data */
	uint64_t base;		/* file offset of buf[0] */
	bool eof;
};

const char *trace__display_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

int trace__init(struct trace *t)
{
	memset(t, 0, sizeof(*t));
	return symtab__init(&t->syms);
}

void trace__exit(struct trace *t)
{
	free(t->ev);
	symtab__exit(&t->syms);
	memset(t, 0, sizeof(*t));
}

int trace__push(struct trace *t, uint32_t ev)
{
	if (t->nr == t->cap) {
		uint64_t cap = t->cap ? t->cap * 2 : 1u << 16;
		uint32_t *p;

		if (cap > SIZE_MAX / sizeof(*p))
			return -ENOMEM;
		p = realloc(t->ev, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		t->ev = p;
		t->cap = cap;
	}
	t->ev[t->nr++] = ev;
	return 0;
}

/*
 * Make at least @need bytes available from rd->pos, or as many as the file
 * still has.  Consumed bytes are dropped from the front first, so the
 * buffer only grows for an item longer than it.
 */
static int rd__fill(struct rd *rd, size_t need)
{
	while (rd->end - rd->pos < need && !rd->eof) {
		ssize_t n;

		if (rd->pos) {
			memmove(rd->buf, rd->buf + rd->pos, rd->end - rd->pos);
			rd->end -= rd->pos;
			rd->base += rd->pos;
			rd->pos = 0;
		}
		if (rd->end == rd->cap || rd->cap - rd->end < need - rd->end) {
			size_t cap = rd->cap * 2;
			char *b;

			while (cap < need)
				cap *= 2;
			b = realloc(rd->buf, cap);
			if (!b)
				return -ENOMEM;
			rd->buf = b;
			rd->cap = cap;
		}
		n = read(rd->fd, rd->buf + rd->end, rd->cap - rd->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			rd->eof = true;
		rd->end += n;
	}
	return 0;
}

static inline size_t rd__avail(const struct rd *rd)
{
	return rd->end - rd->pos;
}

__attribute__((format(printf, 3, 4)))
static void trace__err_line(const struct rd *rd, uint64_t line,
			    const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kcc: %s:%" PRIu64 ": ", rd->name, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

__attribute__((format(printf, 3, 4)))
static void trace__err_off(const struct rd *rd, uint64_t off,
			   const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kcc: %s: offset %" PRIu64 ": ", rd->name, off);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static inline bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' ||
	       c == '\n';
}

/* A token of the input, made safe and short enough to quote. */
static const char *quote(const char *s, size_t len, char *out, size_t size)
{
	size_t i, n = len < size - 4 ? len : size - 4;

	for (i = 0; i < n; i++)
		out[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (n < len) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static int trace__call(struct trace *t, uint32_t id, uint64_t *depth)
{
	t->calls++;
	if (++*depth > t->max_depth)
		t->max_depth = *depth;
	return trace__push(t, id);
}

static int trace__parse_line(struct trace *t, const struct rd *rd,
			     uint64_t lineno, const char *p, const char *e,
			     uint64_t *depth, bool tolerant)
{
	const char *kw, *name;
	size_t namelen;
	char q[48];
	uint32_t id;
	int ret;

	while (p < e && is_space(*p))
		p++;
	if (p == e || *p == '#')
		return 0;
	kw = p;
	while (p < e && !is_space(*p))
		p++;

	if (p - kw == 4 && !memcmp(kw, "call", 4)) {
		while (p < e && is_space(*p))
			p++;
		if (p == e) {
			trace__err_line(rd, lineno, "'call' without a routine name");
			return -EINVAL;
		}
		name = p;
		while (p < e && !is_space(*p))
			p++;
		namelen = p - name;
		if (memchr(name, '\0', namelen)) {
			trace__err_line(rd, lineno, "NUL byte in routine name");
			return -EINVAL;
		}
		ret = symtab__intern(&t->syms, name, namelen, &id);
		if (ret) {
			trace__err_line(rd, lineno, "cannot intern '%s': %s",
					quote(name, namelen, q, sizeof(q)),
					strerror(-ret));
			return ret;
		}
		while (p < e && is_space(*p))
			p++;
		if (p != e) {
			trace__err_line(rd, lineno,
					"unexpected text after 'call %s'",
					quote(name, namelen, q, sizeof(q)));
			return -EINVAL;
		}
		return trace__call(t, id, depth);
	}

	if (p - kw == 6 && !memcmp(kw, "return", 6)) {
		while (p < e && is_space(*p))
			p++;
		if (p != e) {
			trace__err_line(rd, lineno,
					"unexpected text after 'return'");
			return -EINVAL;
		}
		t->returns++;
		if (!*depth) {
			if (!tolerant) {
				trace__err_line(rd, lineno,
						"return with empty call stack");
				return -EINVAL;
			}
			t->bad_returns++;
			return 0;
		}
		--*depth;
		return trace__push(t, TRACE_RET);
	}

	trace__err_line(rd, lineno,
			"unknown event '%s' (expected 'call NAME' or 'return')",
			quote(kw, p - kw, q, sizeof(q)));
	return -EINVAL;
}

static int trace__read_text(struct trace *t, struct rd *rd, uint64_t *depth,
			    uint64_t *last, bool tolerant)
{
	uint64_t lineno = 0;
	size_t scanned = 0;	/* bytes after pos known to hold no newline */
	int ret;

	for (;;) {
		char *line = rd->buf + rd->pos;
		size_t len = rd__avail(rd);
		char *nl = memchr(line + scanned, '\n', len - scanned);

		if (!nl && !rd->eof) {
			if (len > TRACE_MAX_LINE) {
				trace__err_line(rd, lineno + 1,
						"line longer than %u bytes",
						TRACE_MAX_LINE);
				return -EINVAL;
			}
			scanned = len;
			ret = rd__fill(rd, len + 1);
			if (ret)
				goto read_error;
			continue;
		}
		if (!nl && !len)
			break;
		scanned = 0;
		lineno++;
		if ((nl ? (size_t)(nl - line) : len) > TRACE_MAX_LINE) {
			trace__err_line(rd, lineno, "line longer than %u bytes",
					TRACE_MAX_LINE);
			return -EINVAL;
		}
		ret = trace__parse_line(t, rd, lineno, line,
					nl ? nl : line + len, depth, tolerant);
		if (ret)
			return ret;
		rd->pos += nl ? (size_t)(nl - line) + 1 : len;
	}
	*last = lineno;
	return 0;

read_error:
	fprintf(stderr, "kcc: %s: %s\n", rd->name, strerror(-ret));
	return ret;
}

/*
 * Decode one LEB128 varint at rd->pos.  Return: 0, -EINVAL for more than
 * 64 bits, -ENODATA when the file ends inside it, or a read error.
 */
static int rd__varint_slow(struct rd *rd, uint64_t *v)
{
	const unsigned char *p;
	uint64_t x = 0;
	size_t i, n;
	int ret;

	if (rd__avail(rd) < VARINT_MAX) {
		ret = rd__fill(rd, VARINT_MAX);
		if (ret)
			return ret;
	}
	p = (const unsigned char *)rd->buf + rd->pos;
	n = rd__avail(rd) < VARINT_MAX ? rd__avail(rd) : VARINT_MAX;
	for (i = 0; i < n; i++) {
		/* The tenth byte carries bit 63 only. */
		if (i == VARINT_MAX - 1 && p[i] > 1)
			return -EINVAL;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			rd->pos += i + 1;
			*v = x;
			return 0;
		}
	}
	return n < VARINT_MAX ? -ENODATA : -EINVAL;
}

/* Most records are one byte: a return or a call of one of 125 symbols. */
static inline int rd__varint(struct rd *rd, uint64_t *v)
{
	if (__builtin_expect(rd->pos < rd->end, 1)) {
		unsigned char b = rd->buf[rd->pos];

		if (__builtin_expect(b < 0x80, 1)) {
			rd->pos++;
			*v = b;
			return 0;
		}
	}
	return rd__varint_slow(rd, v);
}

static bool name_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!s[i] || is_space(s[i]))
			return false;
	return true;
}

static int trace__read_binary(struct trace *t, struct rd *rd,
			      uint64_t *depth, bool tolerant)
{
	uint32_t *idmap = NULL;		/* binary id -> symtab id */
	uint8_t *used = NULL;		/* per symtab id: called */
	uint32_t nids = 0, idcap = 0, usedcap = 0;
	uint64_t off, v, len, count;
	uint32_t id;
	char q[48];
	int ret;

	rd->pos = TRACE_HDR_LEN;
	for (;;) {
		off = rd->base + rd->pos;
		ret = rd__varint(rd, &v);
		if (ret)
			goto varint_error;

		if (v >= TRACE_REC_CALL0) {
			if (v - TRACE_REC_CALL0 >= nids) {
				trace__err_off(rd, off,
					       "call of undefined symbol id %" PRIu64,
					       v - TRACE_REC_CALL0);
				ret = -EINVAL;
				goto out;
			}
			id = idmap[v - TRACE_REC_CALL0];
			used[id] = 1;
			ret = trace__call(t, id, depth);
			if (ret)
				goto nomem;
			continue;
		}

		if (v == TRACE_REC_RETURN) {
			t->returns++;
			if (!*depth) {
				if (!tolerant) {
					trace__err_off(rd, off,
						       "return with empty call stack");
					ret = -EINVAL;
					goto out;
				}
				t->bad_returns++;
				continue;
			}
			--*depth;
			ret = trace__push(t, TRACE_RET);
			if (ret)
				goto nomem;
			continue;
		}

		if (v == TRACE_REC_END)
			break;

		/* TRACE_REC_DEFINE */
		ret = rd__varint(rd, &len);
		if (ret)
			goto varint_error;
		if (!len || len > TRACE_MAX_NAME) {
			trace__err_off(rd, off, "bad symbol name length %" PRIu64,
				       len);
			ret = -EINVAL;
			goto out;
		}
		ret = rd__fill(rd, len);
		if (ret)
			goto read_error;
		if (rd__avail(rd) < len) {
			trace__err_off(rd, off,
				       "truncated symbol definition (missing end record)");
			ret = -EINVAL;
			goto out;
		}
		if (!name_ok(rd->buf + rd->pos, len)) {
			trace__err_off(rd, off,
				       "symbol name '%s' contains whitespace or NUL",
				       quote(rd->buf + rd->pos, len, q, sizeof(q)));
			ret = -EINVAL;
			goto out;
		}
		if (nids >= SYMTAB_MAX_IDS) {
			trace__err_off(rd, off, "too many symbols");
			ret = -EINVAL;
			goto out;
		}
		ret = symtab__intern(&t->syms, rd->buf + rd->pos, len, &id);
		if (ret)
			goto nomem;
		rd->pos += len;
		if (nids == idcap) {
			uint32_t cap = idcap ? idcap * 2 : 256;
			uint32_t *m = realloc(idmap, cap * sizeof(*m));

			if (!m)
				goto nomem;
			idmap = m;
			idcap = cap;
		}
		idmap[nids++] = id;
		if (id >= usedcap) {
			uint32_t cap = usedcap ? usedcap * 2 : 256;
			uint8_t *u = realloc(used, cap);

			if (!u)
				goto nomem;
			memset(u + usedcap, 0, cap - usedcap);
			used = u;
			usedcap = cap;
		}
	}

	/* The end record: off is where it starts. */
	ret = rd__varint(rd, &count);
	if (ret)
		goto varint_error;
	if (count != t->calls + t->returns) {
		trace__err_off(rd, off,
			       "end record counts %" PRIu64 " events, trace has %" PRIu64,
			       count, t->calls + t->returns);
		ret = -EINVAL;
		goto out;
	}
	ret = rd__fill(rd, 1);
	if (ret)
		goto read_error;
	if (rd__avail(rd)) {
		trace__err_off(rd, rd->base + rd->pos, "data after end record");
		ret = -EINVAL;
		goto out;
	}
	if (*depth && !tolerant) {
		trace__err_off(rd, off,
			       "trace ends with %" PRIu64 " pending calls (truncated?)",
			       *depth);
		ret = -EINVAL;
		goto out;
	}
	for (id = 0; id < usedcap; id++)
		t->routines += used[id];
	ret = 0;
	goto out;

varint_error:
	if (ret == -ENODATA) {
		if (rd->base + rd->pos == off && !rd__avail(rd))
			trace__err_off(rd, off,
				       "missing end record (truncated trace?)");
		else
			trace__err_off(rd, off,
				       "truncated record (missing end record)");
		ret = -EINVAL;
		goto out;
	}
	if (ret == -EINVAL) {
		trace__err_off(rd, off, "bad varint (more than 64 bits)");
		goto out;
	}
read_error:
	fprintf(stderr, "kcc: %s: %s\n", rd->name, strerror(-ret));
	goto out;
nomem:
	ret = -ENOMEM;
	fprintf(stderr, "kcc: %s: %s\n", rd->name, strerror(ENOMEM));
out:
	free(idmap);
	free(used);
	return ret;
}

int trace__read_kcc(struct trace *t, const char *path, bool tolerant)
{
	struct rd rd = {
		.fd = -1,
		.name = trace__display_name(path),
	};
	uint64_t depth = 0, last = 0;
	int ret;

	rd.cap = RD_CHUNK;
	rd.buf = malloc(rd.cap);
	if (!rd.buf) {
		ret = -ENOMEM;
		fprintf(stderr, "kcc: %s: %s\n", rd.name, strerror(ENOMEM));
		goto cleanup;
	}
	if (!strcmp(path, "-")) {
		rd.fd = STDIN_FILENO;
	} else {
		rd.fd = open(path, O_RDONLY | O_CLOEXEC);
		if (rd.fd < 0) {
			ret = -errno;
			fprintf(stderr, "kcc: %s: %s\n", rd.name, strerror(errno));
			goto cleanup;
		}
	}

	ret = rd__fill(&rd, TRACE_HDR_LEN);
	if (ret) {
		fprintf(stderr, "kcc: %s: %s\n", rd.name, strerror(-ret));
		goto cleanup;
	}

	if (rd__avail(&rd) >= TRACE_MAGIC_LEN &&
	    !memcmp(rd.buf, TRACE_MAGIC, TRACE_MAGIC_LEN)) {
		t->binary = true;
		if (rd__avail(&rd) < TRACE_HDR_LEN) {
			trace__err_off(&rd, TRACE_MAGIC_LEN,
				       "truncated header (missing version byte)");
			ret = -EINVAL;
			goto cleanup;
		}
		if (rd.buf[TRACE_MAGIC_LEN] != TRACE_VERSION) {
			trace__err_off(&rd, TRACE_MAGIC_LEN,
				       "unsupported binary trace version %u (expected %u)",
				       (unsigned char)rd.buf[TRACE_MAGIC_LEN],
				       TRACE_VERSION);
			ret = -EINVAL;
			goto cleanup;
		}
		ret = trace__read_binary(t, &rd, &depth, tolerant);
	} else {
		ret = trace__read_text(t, &rd, &depth, &last, tolerant);
		if (!ret && depth && !tolerant) {
			trace__err_line(&rd, last,
					"trace ends with %" PRIu64 " pending calls (truncated?)",
					depth);
			ret = -EINVAL;
		}
		if (!ret)
			t->routines = symtab__nr(&t->syms);
	}
	if (ret)
		goto cleanup;

	if (depth) {
		t->closed = depth;
		while (depth--) {
			ret = trace__push(t, TRACE_RET);
			if (ret) {
				fprintf(stderr, "kcc: %s: %s\n", rd.name,
					strerror(-ret));
				goto cleanup;
			}
		}
	}
	if (t->bad_returns || t->closed)
		fprintf(stderr,
			"kcc: %s: warning: ignored %" PRIu64 " returns with empty call stack, closed %" PRIu64 " pending calls at end of trace\n",
			rd.name, t->bad_returns, t->closed);

cleanup:
	if (rd.fd > STDIN_FILENO)
		close(rd.fd);
	free(rd.buf);
	return ret;
}

/* ---- writers ---------------------------------------------------------- */

static size_t varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* One fwrite per megabyte rather than one stdio call per record. */
struct wr {
	FILE *out;
	uint8_t buf[1 << 20];
	size_t len;
};

static void wr__flush(struct wr *w)
{
	fwrite(w->buf, 1, w->len, w->out);
	w->len = 0;
}

static inline void wr__bytes(struct wr *w, const void *p, size_t len)
{
	if (sizeof(w->buf) - w->len < len) {
		wr__flush(w);
		if (len > sizeof(w->buf)) {
			fwrite(p, 1, len, w->out);
			return;
		}
	}
	memcpy(w->buf + w->len, p, len);
	w->len += len;
}

static inline void wr__varint(struct wr *w, uint64_t v)
{
	if (sizeof(w->buf) - w->len < VARINT_MAX)
		wr__flush(w);
	w->len += varint_put(w->buf + w->len, v);
}

static int wr__finish(struct wr *w)
{
	wr__flush(w);
	if (fflush(w->out) || ferror(w->out))
		return errno ? -errno : -EIO;
	return 0;
}

int trace__write_binary(const struct trace *t, FILE *out)
{
	/* Symbols are defined just before their first call, in that order. */
	uint32_t nsym = symtab__nr(&t->syms), next = 0;
	uint8_t hdr[TRACE_HDR_LEN] = TRACE_MAGIC;
	uint32_t *map;
	struct wr *w;
	uint64_t i;
	int ret;

	map = malloc(((size_t)nsym + 1) * sizeof(*map));
	w = malloc(sizeof(*w));
	if (!map || !w) {
		free(map);
		free(w);
		return -ENOMEM;
	}
	memset(map, 0xff, ((size_t)nsym + 1) * sizeof(*map));
	w->out = out;
	w->len = 0;

	hdr[TRACE_MAGIC_LEN] = TRACE_VERSION;
	wr__bytes(w, hdr, sizeof(hdr));
	for (i = 0; i < t->nr; i++) {
		uint32_t e = t->ev[i];

		if (e == TRACE_RET) {
			wr__varint(w, TRACE_REC_RETURN);
			continue;
		}
		if (map[e] == 0xffffffffu) {
			const char *name = symtab__name(&t->syms, e);
			size_t len = strlen(name);

			wr__varint(w, TRACE_REC_DEFINE);
			wr__varint(w, len);
			wr__bytes(w, name, len);
			map[e] = next++;
		}
		wr__varint(w, (uint64_t)map[e] + TRACE_REC_CALL0);
	}
	wr__varint(w, TRACE_REC_END);
	wr__varint(w, t->nr);
	ret = wr__finish(w);
	free(map);
	free(w);
	return ret;
}

int trace__write_text(const struct trace *t, FILE *out)
{
	struct wr *w = malloc(sizeof(*w));
	uint64_t i;
	int ret;

	if (!w)
		return -ENOMEM;
	w->out = out;
	w->len = 0;
	for (i = 0; i < t->nr; i++) {
		const char *name;

		if (t->ev[i] == TRACE_RET) {
			wr__bytes(w, "return\n", 7);
			continue;
		}
		name = symtab__name(&t->syms, t->ev[i]);
		wr__bytes(w, "call ", 5);
		wr__bytes(w, name, strlen(name));
		wr__bytes(w, "\n", 1);
	}
	ret = wr__finish(w);
	free(w);
	return ret;
}
