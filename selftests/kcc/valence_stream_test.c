// SPDX-License-Identifier: GPL-2.0
/*
 * valence_stream_test.c - KCC_REC_VALENCE records decoded into calling
 * context trees (user/lib/valence_stream.c), as kcc record does with
 * kcc.ko's snapshot, against the true stacks they were taken at.
 *
 * A call graph with recursion (a self loop and a cycle through three
 * routines) and calls the table does not hold is walked at random with
 * the runtime's own updates (valence_area.h); at each step the area is
 * taken as a sample would read it, and the true stack noted.  The areas
 * go into a stream as kcc.ko exports them (one entry per distinct
 * encoding, with its samples and events), beside a task record with an
 * fp-walked node of its own and the program's mapping; after decoding,
 * the tree's samples per full path must equal the true stacks' counts,
 * path for path, the fp node must keep its counters, and the events
 * must add up.  Then malformed records are refused with a reason: a
 * count past the record, an entry longer than its words, rec_words not
 * matching rec_bits, a thread without a task record.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktap.h"
#include "stream.h"
#include "valence_stream.h"

#define NODES		7
#define STEPS		20000
#define MAX_D		40
#define BASE		0x10000000ull	/* the mapping's start */
#define TID		4242
#define START_NS	777ull

/* 0 main -> 1, 2; 1 -> 3; 2 -> 3; 3 -> 3; 3 -> 4; 4 -> 5; 5 -> 3; 5 -> 6 */
static const struct valence_edge edges[] = {
	{ 0, 1, 0x100 }, { 0, 2, 0x104 }, { 1, 3, 0x200 }, { 2, 3, 0x300 },
	{ 3, 3, 0x400 }, { 3, 4, 0x404 }, { 4, 5, 0x500 }, { 5, 3, 0x600 },
	{ 5, 6, 0x604 },
};

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

struct sample {
	struct kcc_valence_area a;
	char path[MAX_D * 4];
};

static struct sample smp[STEPS];
static uint32_t nr_smp;

static void path_of(const uint32_t *nodes, uint32_t n, char *out)
{
	uint32_t i;

	out[0] = 0;
	for (i = 0; i < n; i++)
		sprintf(out + strlen(out), "%s%u", i ? "," : "", nodes[i]);
}

/* Random walk; samples are taken between updates, as a PMU would. */
static void walk(struct valence_prog *p)
{
	struct { const struct valence_op *op; uint32_t node; } st[MAX_D];
	struct valence_spill sp = { 0 };
	struct kcc_valence_area a;
	uint32_t nodes[MAX_D], d = 0, i;

	valence__area_init(&p->v, &a);
	a.table_id = p->table_id;
	valence__enter(&a, &sp, NULL, 0, 0xfeed, p->v.rec_len);
	st[d].op = NULL;
	st[d].node = 0;
	nodes[d++] = 0;
	for (i = 0; i < STEPS; i++) {
		uint32_t cur = nodes[d - 1], k, n = 0, pick[8];

		for (k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
			if (edges[k].caller == cur)
				pick[n++] = k;
		if (d > 1 && (d >= MAX_D - 1 || !n || rnd(3) == 0)) {
			d--;
			valence__exit(&a, &sp, st[d].op, st[d].node,
				      p->v.rec_len);
		} else if (n) {
			const struct valence_edge *e;
			const struct valence_op *op;
			uint32_t callee;
			uint64_t site;

			if (rnd(8) == 0) {	/* an indirect call: escaped */
				e = &edges[pick[rnd(n)]];
				callee = rnd(NODES);
				site = 0x900 + 4 * rnd(4);
			} else {
				e = &edges[pick[rnd(n)]];
				callee = e->callee;
				site = e->site;
			}
			op = valence__lookup(&p->v, site);
			valence__enter(&a, &sp, op, callee, site,
				       p->v.rec_len);
			st[d].op = op;
			st[d].node = callee;
			nodes[d++] = callee;
		}
		/* The key kcc.ko keeps: no seq, no stale bits above rec_bits. */
		smp[nr_smp].a = a;
		smp[nr_smp].a.seq = 0;
		for (k = a.rec_bits; k < VALENCE_REC_BITS; k++)
			smp[nr_smp].a.rec[k / 64] &= ~(1ull << (k % 64));
		path_of(nodes, d, smp[nr_smp].path);
		nr_smp++;
	}
	free(sp.w);
}

static int prog_init(struct valence_prog *p)
{
	uint32_t i;

	memset(p, 0, sizeof(*p));
	if (valence__annotate(&p->v, NODES, edges,
			      sizeof(edges) / sizeof(edges[0])))
		return -1;
	p->nr_nodes = NODES;
	p->addr = calloc(NODES, sizeof(*p->addr));
	p->size = calloc(NODES, sizeof(*p->size));
	p->name = calloc(NODES, sizeof(*p->name));
	if (!p->addr || !p->size || !p->name)
		return -1;
	for (i = 0; i < NODES; i++) {
		p->addr[i] = 0x1000 + 0x40 * i;
		p->size[i] = 0x40;
		if (asprintf(&p->name[i], "r%u", i) < 0)
			return -1;
	}
	p->table_id = valence__table_id(&p->v);
	return 0;
}

static int ent_cmp(const void *x, const void *y)
{
	return memcmp(x, y, sizeof(struct kcc_valence_area));
}

/* The stream kcc.ko would give: header, task, valence record, map, END. */
static int make_stream(struct sbuf *b, const char *exe, uint64_t first_vaddr,
		       int corrupt, uint64_t *events)
{
	struct kcc_stream_header h;
	struct kcc_metric_desc desc[KCC_NR_CTRS];
	struct stream_task t = { .pid = TID, .tgid = TID,
				 .start_time_ns = START_NS };
	/* Not at file offset 0: the base comes from the segment. */
	struct stream_map m = { .tgid = TID, .start = BASE + 0x1000 + first_vaddr,
				.end = BASE + first_vaddr + 0x10000,
				.pgoff = 0x1000, .path = (char *)exe };
	struct kcc_rec_valence rv = { .hdr.type = KCC_REC_VALENCE };
	size_t at, i, j;
	uint32_t fp;
	int ret;

	stream__default_header(&h, desc, KCC_K_INF, KCC_SOURCE_VALENCE, 0);
	memcpy(t.comm, "vtest", 6);
	ret = pool__alloc(&t.ksf, 4, KCC_NR_CTRS - 1);
	if (ret)
		return ret;
	/* One fp-fallback sample of another thread state: a node of its own. */
	fp = kcc_forest_get(&t.ksf.f, KCC_ROOT_TOP, BASE + 0x1000 + 0x41);
	kcc_forest_ctr(&t.ksf.f, fp)[KCC_CTR_EVENTS] = 5;
	kcc_forest_ctr(&t.ksf.f, fp)[KCC_CTR_SAMPLES] = 1;
	t.samples = 1;
	stream__write_header(b, &h, desc);
	stream__write_task(b, &t, KCC_NR_CTRS);
	pool__exit(&t.ksf);

	at = b->len;
	sbuf__append(b, &rv, sizeof(rv));
	qsort(smp, nr_smp, sizeof(smp[0]), ent_cmp);
	*events = 5;
	for (i = 0; i < nr_smp; i = j) {
		struct kcc_valence_ent e = { 0 };
		const struct kcc_valence_area *a = &smp[i].a;

		for (j = i; j < nr_smp && !ent_cmp(&smp[j].a, a); j++)
			;
		e.cur = a->cur;
		e.root = a->root;
		e.rec_bits = a->rec_bits;
		e.acyc_words = a->acyc_words;
		e.rec_words = (a->rec_bits + 63) / 64;
		if (corrupt == 3)
			e.rec_words++;
		e.table_id = a->table_id;
		e.root_site = a->root_site;
		e.samples = j - i;
		e.events = 3 * (j - i);
		*events += e.events;
		e.size = sizeof(e) + 8 * (e.acyc_words + e.rec_words);
		if (corrupt == 2)
			e.size += 8;
		sbuf__append(b, &e, sizeof(e));
		sbuf__append(b, a->acyc, 8 * e.acyc_words);
		sbuf__append(b, a->rec, 8 * ((a->rec_bits + 63) / 64));
		if (corrupt == 3)
			sbuf__append(b, a->rec, 8);
		rv.nr_entries++;
	}
	if (corrupt == 2)
		sbuf__append(b, &rv, 8);
	rv.pid = corrupt == 4 ? TID + 1 : TID;
	rv.start_time_ns = START_NS;
	if (corrupt == 1)
		rv.nr_entries += 1;
	rv.hdr.size = b->len - at;
	if (!b->err)
		memcpy(b->p + at, &rv, sizeof(rv));
	stream__write_map(b, &m);
	return stream__write_end(b);
}

static uint32_t node_of(uint64_t label)
{
	return (uint32_t)((label - BASE - 0x1000) / 0x40);
}

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Samples per path of the decoded tree against the true stacks. */
static void check_tree(const struct stream *s, uint64_t events)
{
	const struct kcc_forest *f = &s->tasks[0].ksf.f;
	char **got = calloc(nr_smp + 8, sizeof(*got)), **want;
	uint32_t ng = 0, v, i, bad = 0;
	uint64_t ev = 0, fp_samples = 0;

	want = calloc(nr_smp, sizeof(*want));
	for (i = 0; i < nr_smp; i++)
		want[i] = smp[i].path;
	for (v = 0; v < f->count; v++) {
		const struct kcc_node *n = kcc_forest_node(f, v);
		uint64_t c = kcc_forest_ctr(f, v)[KCC_CTR_SAMPLES], k;
		uint32_t nodes[MAX_D + 1], d = 0, u;

		ev += kcc_forest_ctr(f, v)[KCC_CTR_EVENTS];
		if (!c)
			continue;
		if ((n->label - BASE - 0x1000) % 0x40) {
			fp_samples += c;	/* the fp node: not a routine start */
			continue;
		}
		for (u = v; d <= MAX_D; u = kcc_forest_node(f, u)->parent) {
			nodes[d++] = node_of(kcc_forest_node(f, u)->label);
			if (kcc_is_root_parent(kcc_forest_node(f, u)->parent))
				break;
		}
		for (u = 0; u < d / 2; u++) {
			uint32_t x = nodes[u];

			nodes[u] = nodes[d - 1 - u];
			nodes[d - 1 - u] = x;
		}
		for (k = 0; k < c && ng < nr_smp + 8; k++) {
			got[ng] = malloc(MAX_D * 4);
			path_of(nodes, d, got[ng++]);
		}
	}
	qsort(got, ng, sizeof(*got), str_cmp);
	qsort(want, nr_smp, sizeof(*want), str_cmp);
	for (i = 0; i < nr_smp && i < ng; i++)
		if (strcmp(got[i], want[i]) && !bad++)
			ksft_print_msg("first difference: %s decoded, %s true\n",
				       got[i], want[i]);
	ksft_test_result(ng == nr_smp && !bad,
			 "%u samples: the tree's samples per full path are the true stacks' (%u decoded)\n",
			 nr_smp, ng);
	ksft_test_result(fp_samples == 1 && ev == events &&
			 s->tasks[0].samples == nr_smp + 1,
			 "the fp node keeps its sample, events add up (%llu of %llu)\n",
			 (unsigned long long)ev, (unsigned long long)events);
	for (i = 0; i < ng; i++)
		free(got[i]);
	free(got);
	free(want);
}

int main(void)
{
	static const char *const what[] = {
		NULL, "more entries than the record holds",
		"an entry longer than its words", "rec_words not (rec_bits + 63) / 64",
		"a thread without a task record",
	};
	struct valence_stream_stats st;
	struct valence_prog p;
	char exe[PATH_MAX], err[256];
	uint64_t events;
	ssize_t n;
	int c;

	ksft_print_header();
	ksft_set_plan(3 + 4);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || prog_init(&p))
		ksft_exit_fail_msg("setup\n");
	exe[n] = 0;
	walk(&p);

	for (c = 0; c < 5; c++) {
		struct sbuf b = { 0 };
		struct stream s;
		void *out = NULL;
		size_t len = 0;
		int ret;

		/* The test binary is PIE: its first PT_LOAD is at 0. */
		if (make_stream(&b, exe, 0, c, &events)) {
			ksft_test_result_fail("stream %d: no memory\n", c);
			continue;
		}
		ret = valence_stream__decode(b.p, b.len, &p, exe, &out, &len,
					     &st, err, sizeof(err));
		if (c) {
			ksft_test_result(ret == -EINVAL,
					 "refused: %s (%s)\n", what[c],
					 ret == -EINVAL ? err : strerror(-ret));
		} else if (ret) {
			ksft_test_result_fail("decode: %s\n", ret == -EINVAL ? err :
					      strerror(-ret));
			ksft_test_result_fail("decode\n");
			ksft_test_result_fail("decode\n");
		} else {
			valence_stream__print(&st, stdout);
			ksft_test_result(st.decoded == nr_smp &&
					 st.escaped_frames > 0 &&
					 !st.undecodable && !st.other_table,
					 "every encoding decodes (%llu samples, %llu escaped frames)\n",
					 (unsigned long long)st.decoded,
					 (unsigned long long)st.escaped_frames);
			if (stream__parse(&s, out, len)) {
				ksft_test_result_fail("decoded stream parses\n");
				ksft_test_result_fail("decoded stream parses\n");
			} else {
				check_tree(&s, events);
			}
			stream__exit(&s);
		}
		free(out);
		sbuf__exit(&b);
	}
	valence_prog__exit(&p);
	ksft_exit_pass();
}
