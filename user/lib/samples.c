// SPDX-License-Identifier: GPL-2.0
/*
 * samples.c - read, check and write sample files.
 *
 * A sample file is untrusted input: every record goes through the same
 * kcc_sample_check() as an injected sample does in kcc.ko, and the first
 * record it refuses is reported with its file offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksfdump.h"
#include "samples.h"

static const char *display_name(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

const char *samples__strerror(uint32_t why)
{
	switch (why) {
	case KCC_SAMPLE_OK:
		return "no error";
	case KCC_SAMPLE_E_SHORT:
		return "record truncated (size beyond the end of the file, or below the header)";
	case KCC_SAMPLE_E_ALIGN:
		return "size is not a multiple of 8";
	case KCC_SAMPLE_E_FLAGS:
		return "unknown flag";
	case KCC_SAMPLE_E_RESERVED:
		return "reserved field is not zero";
	case KCC_SAMPLE_E_STACK:
		return "nr_stack above KCC_INJECT_MAX_STACK";
	case KCC_SAMPLE_E_BRANCHES:
		return "nr_branches above KCC_INJECT_MAX_BRANCHES";
	case KCC_SAMPLE_E_SIZE:
		return "size disagrees with nr_stack and nr_branches";
	case KCC_SAMPLE_E_KIND:
		return "unknown branch kind";
	case KCC_SAMPLE_E_BR_RESERVED:
		return "branch reserved field is not zero";
	}
	return "malformed sample";
}

/* The whole of @fd in one malloc'ed (so 8-byte aligned) buffer. */
static int slurp(int fd, uint64_t **bufp, size_t *lenp)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap), *nbuf;
	ssize_t got;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > SIZE_MAX / 2) {
				free(buf);
				return -EFBIG;
			}
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				free(buf);
				return -ENOMEM;
			}
			buf = nbuf;
			cap *= 2;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	*bufp = (uint64_t *)buf;
	*lenp = len;
	return 0;
}

int samples__read(struct samples *ss, const char *path)
{
	const char *name = display_name(path);
	uint32_t version, hdr_len, why, size;
	uint64_t *buf = NULL;
	size_t len = 0, off;
	int fd, ret;

	memset(ss, 0, sizeof(*ss));
	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0) {
		ret = -errno;
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
		return ret;
	}
	ret = slurp(fd, &buf, &len);
	if (fd)
		close(fd);
	if (ret) {
		fprintf(stderr, "kcc: %s: %s\n", name, strerror(-ret));
		return ret;
	}

	ret = -EINVAL;
	if (len < SAMPLES_HDR_LEN) {
		fprintf(stderr, "kcc: %s: offset 0: file too short for a sample file header\n",
			name);
		goto cleanup;
	}
	if (memcmp(buf, SAMPLES_MAGIC, SAMPLES_MAGIC_LEN)) {
		fprintf(stderr, "kcc: %s: offset 0: not a kcc sample file (bad magic)\n",
			name);
		goto cleanup;
	}
	memcpy(&version, (char *)buf + 8, sizeof(version));
	memcpy(&hdr_len, (char *)buf + 12, sizeof(hdr_len));
	if (version != SAMPLES_VERSION) {
		fprintf(stderr, "kcc: %s: offset 8: unsupported sample file version %u (this kcc reads %u)\n",
			name, version, SAMPLES_VERSION);
		goto cleanup;
	}
	if (hdr_len < SAMPLES_HDR_LEN || hdr_len > len || hdr_len % 8) {
		fprintf(stderr, "kcc: %s: offset 12: bad header size %u\n",
			name, hdr_len);
		goto cleanup;
	}
	/* The body moves to the start of the buffer: records are aligned. */
	len -= hdr_len;
	memmove(buf, (char *)buf + hdr_len, len);

	for (off = 0; off < len; off += size) {
		const struct kcc_sample *s = (const void *)((char *)buf + off);

		why = kcc_sample_why(s, len - off, &size);
		if (why != KCC_SAMPLE_OK) {
			fprintf(stderr, "kcc: %s: offset %zu: sample %" PRIu64 ": %s\n",
				name, hdr_len + off, ss->nr, samples__strerror(why));
			goto cleanup;
		}
		ss->nr++;
	}
	ss->buf = buf;
	ss->len = len;
	return 0;
cleanup:
	free(buf);
	ss->nr = 0;
	return ret;
}

void samples__exit(struct samples *ss)
{
	free(ss->buf);
	memset(ss, 0, sizeof(*ss));
}

int samples__write_header(FILE *out)
{
	unsigned char hdr[SAMPLES_HDR_LEN];
	uint32_t v = SAMPLES_VERSION, h = SAMPLES_HDR_LEN;

	memcpy(hdr, SAMPLES_MAGIC, SAMPLES_MAGIC_LEN);
	memcpy(hdr + 8, &v, sizeof(v));
	memcpy(hdr + 12, &h, sizeof(h));
	if (fwrite(hdr, sizeof(hdr), 1, out) != 1)
		return -(errno ? errno : EIO);
	return 0;
}

int samples__write(FILE *out, const struct kcc_sample *s)
{
	if (fwrite(s, s->size, 1, out) != 1)
		return -(errno ? errno : EIO);
	return 0;
}

void sample_buf__init(struct sample_buf *sb, uint32_t flags, uint64_t delta)
{
	memset(&sb->hdr, 0, sizeof(sb->hdr));
	sb->hdr.flags = flags;
	sb->hdr.delta = delta;
	sb->hdr.size = sizeof(sb->hdr);
}

int sample_buf__push_stack(struct sample_buf *sb, uint64_t addr)
{
	struct kcc_sample *s = &sb->hdr;

	if (s->nr_branches)
		return -EINVAL;
	if (s->nr_stack >= KCC_INJECT_MAX_STACK)
		return -E2BIG;
	((uint64_t *)(s + 1))[s->nr_stack++] = addr;
	s->size += sizeof(uint64_t);
	return 0;
}

int sample_buf__push_branch(struct sample_buf *sb, uint64_t from, uint64_t to,
			    uint32_t kind)
{
	struct kcc_sample *s = &sb->hdr;
	struct kcc_branch *b;

	if (s->nr_branches >= KCC_INJECT_MAX_BRANCHES)
		return -E2BIG;
	b = (struct kcc_branch *)((uint64_t *)(s + 1) + s->nr_stack) +
	    s->nr_branches++;
	b->from = from;
	b->to = to;
	b->kind = kind;
	b->__reserved = 0;
	s->size += sizeof(*b);
	return 0;
}

/* ---- stitching ------------------------------------------------------ */

#define STITCHER_POOL_MIN	4096u
#define STITCHER_POOL_MAX	0xfffff000u	/* below the core's KCC_FREE */

int stitcher__init(struct stitcher *sr, const struct stitcher_opts *o)
{
	int ret;

	memset(sr, 0, sizeof(*sr));
	sr->no_join = o->no_join;
	sr->fixed = o->max_nodes != 0;
	ret = ksf__pool_init(&sr->pool, o->max_nodes ? o->max_nodes :
			     STITCHER_POOL_MIN, KCC_NR_CTRS - 1);
	if (ret)
		return ret;
	ret = -ENOMEM;
	sr->stack = calloc(STITCHER_DEPTH, sizeof(*sr->stack));
	sr->frames = calloc(STITCHER_DEPTH, sizeof(*sr->frames));
	if (!sr->stack || !sr->frames)
		goto fail;
	if (o->rr_inv) {
		sr->burst_mem = calloc(1, kcc_burst_mem_size(o->table) + 8);
		if (!sr->burst_mem)
			goto fail;
		ret = kcc_burst_init(&sr->burst, sr->burst_mem,
				     kcc_burst_mem_size(o->table), o->table,
				     o->rr_inv, o->sig_depth, o->seed);
		if (ret)
			goto fail;
	}
	ret = kcc_stitch_init(&sr->st, &sr->pool.f, o->k, sr->stack,
			      STITCHER_DEPTH, sr->frames, STITCHER_DEPTH,
			      o->rr_inv ? &sr->burst : NULL);
	if (ret)
		goto fail;
	sr->st.join_policy = o->no_join ? KCC_JOIN_NONE :
			    o->longest_join ? KCC_JOIN_LONGEST : KCC_JOIN_UNIQUE;
	return 0;
fail:
	stitcher__exit(sr);
	return ret;
}

void stitcher__exit(struct stitcher *sr)
{
	pool__exit(&sr->pool);
	free(sr->stack);
	free(sr->frames);
	free(sr->burst_mem);
	sr->stack = NULL;
	sr->frames = NULL;
	sr->burst_mem = NULL;
}

int stitcher__sample(struct stitcher *sr, const struct kcc_sample *s)
{
	struct kcc_forest *f = &sr->pool.f;
	/* Each frame entered and each call creates at most two nodes. */
	uint64_t need = 2 * ((uint64_t)s->nr_stack + s->nr_branches + 2);
	int ret;

	if (!sr->fixed && f->capacity - f->count < need &&
	    f->capacity < STITCHER_POOL_MAX) {
		uint64_t cap = 2 * (uint64_t)f->capacity + need;

		ret = ksf__pool_grow(&sr->pool, cap > STITCHER_POOL_MAX ?
				     STITCHER_POOL_MAX : (uint32_t)cap);
		if (ret)
			return ret;
	}
	if (sr->no_join)
		kcc_stitch_break(&sr->st);
	return kcc_stitch_sample(&sr->st, s);
}

void stitcher__finish(struct stitcher *sr)
{
	kcc_stitch_finish(&sr->st);
}

/* Every sample of one task's run, then its end. */
int stitcher__samples(struct stitcher *sr, const struct samples *ss)
{
	size_t off;
	int ret;

	for (off = 0; off < ss->len; off += samples__at(ss, off)->size) {
		ret = stitcher__sample(sr, samples__at(ss, off));
		if (ret)
			return ret;
	}
	stitcher__finish(sr);
	return 0;
}
