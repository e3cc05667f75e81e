// SPDX-License-Identifier: GPL-2.0
/*
 * perfdata.c - reading perf.data files (see perfdata.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfdata.h"

#define PERFDATA_MAGIC		0x32454c4946524550ull	/* "PERFILE2" */
#define PERFDATA_FEAT_EVENT_DESC 12
#define PERFDATA_FEAT_BITS	256
#define PERFDATA_MAX_EVENTS	4096
#define PERFDATA_PROT_EXEC	4
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST	(1u << 4)
#endif

struct perfdata_section {
	uint64_t offset;
	uint64_t size;
};

struct perfdata_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct perfdata_section attrs;
	struct perfdata_section data;
	struct perfdata_section event_types;
	uint64_t features[PERFDATA_FEAT_BITS / 64];
};

__attribute__((format(printf, 3, 4)))
static int pd_err(struct perfdata *pd, uint64_t off, const char *fmt, ...)
{
	char msg[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(pd->err, sizeof(pd->err), "offset %llu: %s",
		 (unsigned long long)off, msg);
	return -EINVAL;
}

/* The @size bytes at @off lie within the file. */
static bool pd_in(const struct perfdata *pd, uint64_t off, uint64_t size)
{
	return off <= pd->len && size <= pd->len - off;
}

/* A cursor over one record: reads fail once past its end. */
struct cur {
	const uint8_t *p;
	uint64_t left;
	bool bad;
};

static uint64_t cur_u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->left < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	return v;
}

static const void *cur_skip(struct cur *c, uint64_t n)
{
	const void *at = c->p;

	if (c->left < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return at;
}

/* Names from HEADER_EVENT_DESC, by event index; absent is no error. */
static int pd_event_desc(struct perfdata *pd, const struct perfdata_header *h)
{
	uint64_t off = h->data.offset + h->data.size, at = 0;
	struct perfdata_section sec;
	struct cur c;
	uint32_t nre, sz, i, bit;

	if (!(h->features[0] & (1ull << PERFDATA_FEAT_EVENT_DESC)))
		return 0;
	/* One section per feature bit set below it, in bit order. */
	for (bit = 0; bit < PERFDATA_FEAT_EVENT_DESC; bit++)
		at += (h->features[0] >> bit) & 1;
	off += at * sizeof(sec);
	if (!pd_in(pd, off, sizeof(sec)))
		return pd_err(pd, off, "feature sections past the end of the file");
	memcpy(&sec, pd->buf + off, sizeof(sec));
	if (!pd_in(pd, sec.offset, sec.size))
		return pd_err(pd, off, "event descriptions past the end of the file");
	c = (struct cur){ pd->buf + sec.offset, sec.size, false };
	if (sec.size < 8)
		return pd_err(pd, sec.offset, "event descriptions too short");
	memcpy(&nre, c.p, 4);
	memcpy(&sz, c.p + 4, 4);
	cur_skip(&c, 8);
	for (i = 0; i < nre && !c.bad; i++) {
		const char *name;
		uint32_t nr_ids = 0, len = 0;

		cur_skip(&c, sz);
		if (c.left >= 8) {
			memcpy(&nr_ids, c.p, 4);
			memcpy(&len, c.p + 4, 4);
		}
		cur_skip(&c, 8);
		name = cur_skip(&c, len);
		cur_skip(&c, (uint64_t)nr_ids * 8);
		if (c.bad || !name || !len || !memchr(name, 0, len))
			return pd_err(pd, sec.offset, "damaged event description %u",
				      i);
		if (i < pd->nr_ev)
			snprintf(pd->ev[i].name, sizeof(pd->ev[i].name), "%s",
				 name);
	}
	return c.bad ? pd_err(pd, sec.offset, "damaged event descriptions") : 0;
}

int perfdata__open(struct perfdata *pd, const void *buf, size_t len)
{
	struct perfdata_header h;
	uint64_t abytes, i;

	memset(pd, 0, sizeof(*pd));
	pd->buf = buf;
	pd->len = len;
	if (len < sizeof(h))
		return pd_err(pd, 0, "not a perf.data file (too short)");
	memcpy(&h, buf, sizeof(h));
	if (h.magic != PERFDATA_MAGIC)
		return pd_err(pd, 0, "not a perf.data file (no PERFILE2 magic; the pipe format is not read: record to a file)");
	if (h.size < sizeof(h) ||
	    h.attr_size <= sizeof(struct perfdata_section) ||
	    h.attr_size > 4096 || h.attrs.size % h.attr_size ||
	    !pd_in(pd, h.attrs.offset, h.attrs.size) ||
	    !pd_in(pd, h.data.offset, h.data.size) ||
	    !pd_in(pd, h.event_types.offset, h.event_types.size))
		return pd_err(pd, 0, "damaged file header");
	pd->nr_ev = h.attrs.size / h.attr_size;
	if (!pd->nr_ev || pd->nr_ev > PERFDATA_MAX_EVENTS)
		return pd_err(pd, h.attrs.offset, "%u events", pd->nr_ev);
	pd->ev = calloc(pd->nr_ev, sizeof(*pd->ev));
	if (!pd->ev)
		return -ENOMEM;
	abytes = h.attr_size - sizeof(struct perfdata_section);
	for (i = 0; i < pd->nr_ev; i++) {
		uint64_t off = h.attrs.offset + i * h.attr_size;
		struct perfdata_event *e = &pd->ev[i];
		struct perfdata_section ids;

		memcpy(&e->attr, pd->buf + off, abytes < sizeof(e->attr) ?
		       abytes : sizeof(e->attr));
		memcpy(&ids, pd->buf + off + abytes, sizeof(ids));
		if (!pd_in(pd, ids.offset, ids.size) || ids.size % 8 ||
		    ids.size / 8 > 0x100000)
			return pd_err(pd, off, "event %llu: damaged id list",
				      (unsigned long long)i);
		e->nr_ids = ids.size / 8;
		if (e->nr_ids) {
			e->ids = malloc(ids.size);
			if (!e->ids)
				return -ENOMEM;
			memcpy(e->ids, pd->buf + ids.offset, ids.size);
		}
	}
	pd->pos = h.data.offset;
	pd->end = h.data.offset + h.data.size;
	return pd_event_desc(pd, &h);
}

void perfdata__exit(struct perfdata *pd)
{
	uint32_t i;

	for (i = 0; i < pd->nr_ev && pd->ev; i++)
		free(pd->ev[i].ids);
	free(pd->ev);
	pd->ev = NULL;
	pd->nr_ev = 0;
	for (i = 0; i < 2; i++) {
		free(pd->scratch[i]);
		pd->scratch[i] = NULL;
		pd->scratch_cap[i] = 0;
	}
}

/* The event whose sample id is @id, or -1. */
static int pd_event_of(const struct perfdata *pd, uint64_t id)
{
	uint32_t i, j;

	for (i = 0; i < pd->nr_ev; i++)
		for (j = 0; j < pd->ev[i].nr_ids; j++)
			if (pd->ev[i].ids[j] == id)
				return (int)i;
	return -1;
}

/*
 * @p, or a copy of its @n bytes in scratch buffer @i when it is not
 * 8-byte aligned: callchains and branch stacks are arrays of u64, and a
 * damaged file (an odd PERF_SAMPLE_RAW size, an odd data offset) can put
 * them anywhere.  The copy lasts until the next perfdata__next().
 */
static const void *pd_aligned(struct perfdata *pd, int i, const void *p,
			      size_t n)
{
	void *nb;

	if (!p || !n || !((uintptr_t)p & 7))
		return p;
	if (n > pd->scratch_cap[i]) {
		nb = realloc(pd->scratch[i], n);
		if (!nb) {
			pd->oom = true;
			return NULL;
		}
		pd->scratch[i] = nb;
		pd->scratch_cap[i] = n;
	}
	memcpy(pd->scratch[i], p, n);
	return pd->scratch[i];
}

/*
 * The event of a sample: the only one, or the one its id names (perf
 * gives every event PERF_SAMPLE_IDENTIFIER when it records several).
 */
static int pd_sample_event(const struct perfdata *pd, struct cur c)
{
	uint64_t st = pd->ev[0].attr.sample_type;

	if (pd->nr_ev == 1)
		return 0;
	if (st & PERF_SAMPLE_IDENTIFIER)
		return pd_event_of(pd, cur_u64(&c));
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	if (st & PERF_SAMPLE_IP)
		cur_u64(&c);
	if (st & PERF_SAMPLE_TID)
		cur_u64(&c);
	if (st & PERF_SAMPLE_TIME)
		cur_u64(&c);
	if (st & PERF_SAMPLE_ADDR)
		cur_u64(&c);
	return c.bad ? -1 : pd_event_of(pd, cur_u64(&c));
}

/*
 * The counter value @v read, then its [id] and [lost]: kept, by the
 * event its id names (else @ev).
 */
static void pd_read_one(const struct perfdata *pd, struct cur *c,
			uint64_t rf, int ev, uint64_t v, struct perfdata_rec *r)
{
	uint64_t id = 0;

	if (rf & PERF_FORMAT_ID) {
		id = cur_u64(c);
		ev = pd_event_of(pd, id);
	}
	if (rf & PERF_FORMAT_LOST)
		cur_u64(c);
	if (c->bad || r->s.nr_read == PERFDATA_MAX_READ)
		return;
	r->s.read_ev[r->s.nr_read] = ev;
	r->s.read_id[r->s.nr_read] = id;
	r->s.read_val[r->s.nr_read++] = v;
}

/*
 * PERF_SAMPLE_READ of the event @ev, read_format @rf: { value, [enabled],
 * [running], [id], [lost] }, or with PERF_FORMAT_GROUP { nr, [enabled],
 * [running], nr x { value, [id], [lost] } } (perf_output_read()).
 */
static void pd_read(const struct perfdata *pd, struct cur *c, uint64_t rf,
		    int ev, struct perfdata_rec *r)
{
	uint64_t n = 1, i, v = 0, per;
	bool group = rf & PERF_FORMAT_GROUP;

	if (group)
		n = cur_u64(c);
	else
		v = cur_u64(c);
	if (rf & PERF_FORMAT_TOTAL_TIME_ENABLED)
		cur_u64(c);
	if (rf & PERF_FORMAT_TOTAL_TIME_RUNNING)
		cur_u64(c);
	/* The words each value still takes: a group's values come here. */
	per = group + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	if (per && n > c->left / 8 / per) {
		c->bad = true;
		return;
	}
	for (i = 0; i < n && !c->bad; i++)
		pd_read_one(pd, c, rf, group ? -1 : ev,
			    group ? cur_u64(c) : v, r);
}

static int pd_sample(struct perfdata *pd, struct cur c, struct perfdata_rec *r)
{
	const struct perf_event_attr *a;
	uint64_t st, v;
	int ev;

	ev = pd_sample_event(pd, c);
	if (ev < 0)
		return pd_err(pd, r->off, "a sample of no event of the file");
	a = &pd->ev[ev].attr;
	st = a->sample_type;
	r->s.ev = ev;
	if (st & PERF_SAMPLE_IDENTIFIER)
		cur_u64(&c);
	if (st & PERF_SAMPLE_IP)
		cur_u64(&c);
	if (st & PERF_SAMPLE_TID) {
		v = cur_u64(&c);
		r->pid = (uint32_t)v;
		r->tid = (uint32_t)(v >> 32);
	}
	if (st & PERF_SAMPLE_TIME)
		cur_u64(&c);
	if (st & PERF_SAMPLE_ADDR)
		cur_u64(&c);
	if (st & PERF_SAMPLE_ID)
		cur_u64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		cur_u64(&c);
	if (st & PERF_SAMPLE_CPU)
		cur_u64(&c);
	r->s.period = (st & PERF_SAMPLE_PERIOD) ? cur_u64(&c) :
		      a->freq ? 1 : a->sample_period;
	r->s.nr_read = 0;
	if (st & PERF_SAMPLE_READ)
		pd_read(pd, &c, a->read_format, ev, r);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		r->s.nr_chain = cur_u64(&c);
		if (r->s.nr_chain > c.left / 8)
			c.bad = true;
		else
			r->s.chain = pd_aligned(pd, 0, cur_skip(&c, r->s.nr_chain * 8),
						r->s.nr_chain * 8);
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t size = 0;

		if (c.left >= 4)
			memcpy(&size, c.p, 4);
		cur_skip(&c, 4 + (uint64_t)size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		r->s.nr_br = cur_u64(&c);
		if (a->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			cur_u64(&c);
		if (r->s.nr_br > c.left / sizeof(struct perf_branch_entry))
			c.bad = true;
		else
			r->s.br = pd_aligned(pd, 1, cur_skip(&c, r->s.nr_br *
					     sizeof(struct perf_branch_entry)),
					     r->s.nr_br *
					     sizeof(struct perf_branch_entry));
	}
	if (pd->oom)
		return -ENOMEM;
	if (c.bad)
		return pd_err(pd, r->off, "sample shorter than its sample_type");
	r->kind = PERFDATA_SAMPLE;
	return 1;
}

/* A NUL-terminated string at the cursor, to the record's end. */
static const char *pd_str(struct cur *c)
{
	const char *s = (const char *)c->p;

	if (!c->left || !memchr(s, 0, c->left)) {
		c->bad = true;
		return NULL;
	}
	return s;
}

int perfdata__next(struct perfdata *pd, struct perfdata_rec *r)
{
	struct perf_event_header eh;
	struct cur c;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	if (pd->pos >= pd->end)
		return 0;
	r->off = pd->pos;
	if (pd->end - pd->pos < sizeof(eh))
		return pd_err(pd, pd->pos, "truncated record header");
	memcpy(&eh, pd->buf + pd->pos, sizeof(eh));
	if (eh.size < sizeof(eh) || eh.size > pd->end - pd->pos)
		return pd_err(pd, pd->pos, "record of size %u", eh.size);
	c = (struct cur){ pd->buf + pd->pos + sizeof(eh),
			  eh.size - sizeof(eh), false };
	pd->pos += eh.size;
	r->kind = PERFDATA_OTHER;

	switch (eh.type) {
	case PERF_RECORD_SAMPLE:
		return pd_sample(pd, c, r);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		v = cur_u64(&c);
		r->pid = (uint32_t)v;
		r->tid = (uint32_t)(v >> 32);
		r->m.start = cur_u64(&c);
		r->m.len = cur_u64(&c);
		r->m.pgoff = cur_u64(&c);
		if (eh.type == PERF_RECORD_MMAP2) {
			uint32_t prot;

			cur_u64(&c);		/* maj, min or build id */
			v = cur_u64(&c);	/* ino */
			if (!(eh.misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
				r->m.ino = v;
			cur_u64(&c);		/* ino generation */
			v = cur_u64(&c);
			prot = (uint32_t)v;
			if (!(prot & PERFDATA_PROT_EXEC))
				return 1;
		} else if (eh.misc & PERF_RECORD_MISC_MMAP_DATA) {
			return 1;
		}
		r->m.path = pd_str(&c);
		if (c.bad)
			return pd_err(pd, r->off, "damaged mmap record");
		r->kind = PERFDATA_MMAP;
		return 1;
	case PERF_RECORD_COMM:
		v = cur_u64(&c);
		r->pid = (uint32_t)v;
		r->tid = (uint32_t)(v >> 32);
		r->comm = pd_str(&c);
		if (c.bad)
			return pd_err(pd, r->off, "damaged comm record");
		r->kind = PERFDATA_COMM;
		return 1;
	case PERF_RECORD_EXIT:
		v = cur_u64(&c);		/* pid, ppid */
		r->pid = (uint32_t)v;
		v = cur_u64(&c);		/* tid, ptid */
		r->tid = (uint32_t)v;
		if (c.bad)
			return pd_err(pd, r->off, "damaged exit record");
		r->kind = PERFDATA_EXIT;
		return 1;
	default:
		return 1;
	}
}
