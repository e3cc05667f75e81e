// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_watch - watched k-contexts in kcc.ko (KCC_IOC_WATCH, KCC_REC_WATCH)
 * on injected samples (module loaded with inject=1).
 *
 * A random program of R routines at known address ranges runs in a
 * model: calls and returns on a true call stack, with recursion.  Every
 * few branches it is "sampled": the sample carries the true stack (the
 * sampled ip, then the return addresses) and, newest first, every branch
 * since the previous sample, so kcc.ko replays each call exactly once.
 * A watched set I is drawn from the stacks the model reaches plus paths
 * it never reaches, numbered here by lbr/kcc_ppp (whose range the upload
 * states) and uploaded.  Three independent figures must agree for every
 * context of I: the kernel's KCC_REC_WATCH counts, a brute force over
 * the model's true stacks (the exact k-CCF counts of the contexts:
 * calls, events, samples), and lbr/kcc_ppp's array run in userspace over
 * the model's calls.  The residual (calls and events no watched context
 * took) must equal the brute force's.
 *
 * Then bad uploads: each gets its documented error and changes nothing
 * (the session still exports the set uploaded before).
 *
 * Usage: kcc_watch [-d DEVICE]
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or inject off.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "kcc_guest.h"
/* The numbering kcc.ko uses, built into this test (no libc in lbr/). */
#include "../../../lbr/kcc_ppp.c"

#define R		7		/* routines; the last one is not in any range */
#define BASE		0x500000ull
#define RSPAN		0x1000ull
#define MAXD		40		/* deepest model stack */
#define NSTEPS		20000		/* calls and returns of the model */
#define MAXI		96		/* watched contexts */
#define BURST		32		/* branches per sample at most */

static uint64_t entry(uint32_t r)
{
	return BASE + r * RSPAN;
}

/*
 * The call instruction of @caller, at stack index @depth, calling
 * @callee.  Two sites per pair, by the parity of the depth: with one,
 * a sample right after a direct recursion returned would be the
 * stitcher's documented ambiguity (kcc_stitch_skid(): the newest record
 * returns to the sampled frame's own return address), read as skid.
 */
static uint64_t call_site(uint32_t caller, uint32_t callee, uint32_t depth)
{
	return entry(caller) + 0x100 + callee * 0x20 + (depth & 1) * 0x10;
}

/* A watched set: contexts of routine ids, outermost first. */
struct wset {
	uint32_t n, nlabels, k;
	uint32_t lens[MAXI];
	uint32_t path[MAXI * (KCC_PPP_MAX_K + 1)];
	struct kcc_ppp p;
	void *mem;
};

/* The model and what the three counters found. */
struct model {
	struct rnd rnd;
	uint32_t st[MAXD];		/* true stack, st[0] the outermost */
	uint32_t d;
	/* injected samples */
	char *buf;
	size_t len, cap;
	uint32_t nsamples;
	struct kcc_branch pend[BURST];	/* oldest first */
	uint32_t npend;
	/* brute force */
	uint64_t bf[MAXI][KCC_WATCH_NR_CTRS];
	uint64_t bf_total[KCC_WATCH_NR_CTRS], bf_resid[KCC_WATCH_NR_CTRS];
	/* userspace lbr/kcc_ppp array */
	struct kcc_ppp_run run;
	uint64_t *counts, *metrics;
	struct kcc_ppp_frame ustack[MAXD + 1];
};

static int ends_with(const struct model *m, const struct wset *w, uint32_t c,
		     const uint32_t *path)
{
	uint32_t i, len = w->lens[c];

	if (len > m->d)
		return 0;
	for (i = 0; i < len; i++)
		if (path[i] != m->st[m->d - len + i])
			return 0;
	return 1;
}

/* Brute force: add @v to counter @ctr of every context the stack ends with. */
static void bf_count(struct model *m, const struct wset *w, int ctr, uint64_t v)
{
	uint32_t c, off = 0, hits = 0;

	for (c = 0; c < w->n; off += w->lens[c], c++) {
		if (ends_with(m, w, c, w->path + off)) {
			m->bf[c][ctr] += v;
			hits++;
		}
	}
	m->bf_total[ctr] += v;
	if (!hits)
		m->bf_resid[ctr] += v;
}

static void put_branch(struct model *m, uint64_t from, uint64_t to,
		       uint32_t kind)
{
	struct kcc_branch *b = &m->pend[m->npend++];

	memset(b, 0, sizeof(*b));
	b->from = from;
	b->to = to;
	b->kind = kind;
}

static void take_sample(struct model *m, const struct wset *w)
{
	size_t need = sizeof(struct kcc_sample) + m->d * 8 +
		      m->npend * sizeof(struct kcc_branch);
	struct kcc_sample *s;
	uint64_t *stack, delta = 1 + rnd_below(&m->rnd, 100);
	struct kcc_branch *br;
	uint32_t i;

	if (m->len + need > m->cap) {
		m->cap = (m->cap + need) * 2;
		m->buf = realloc(m->buf, m->cap);
		if (!m->buf)
			exit(1);
	}
	s = (struct kcc_sample *)(m->buf + m->len);
	memset(s, 0, sizeof(*s));
	s->size = need;
	s->nr_stack = m->d;
	s->nr_branches = m->npend;
	s->delta = delta;
	stack = (uint64_t *)(s + 1);
	/* The sampled ip, then the return address into each caller. */
	stack[0] = entry(m->st[m->d - 1]) + 0x800;
	for (i = 1; i < m->d; i++)
		stack[i] = call_site(m->st[m->d - 1 - i], m->st[m->d - i],
				     m->d - 1 - i) + 5;
	br = (struct kcc_branch *)(stack + m->d);
	for (i = 0; i < m->npend; i++)
		br[i] = m->pend[m->npend - 1 - i];
	m->len += need;
	m->nsamples++;
	m->npend = 0;

	bf_count(m, w, KCC_CTR_EVENTS, delta);
	bf_count(m, w, KCC_CTR_SAMPLES, 1);
	kcc_ppp_charge(&m->run, KCC_CTR_EVENTS, delta);
	kcc_ppp_charge(&m->run, KCC_CTR_SAMPLES, 1);
}

static void step(struct model *m, const struct wset *w)
{
	uint32_t top = m->st[m->d - 1];
	int call = m->d < 2 || (m->d < MAXD - 1 &&
				rnd_below(&m->rnd, 100) < (m->d < 10 ? 55 : 30));

	if (call) {
		uint32_t e = rnd_below(&m->rnd, R);

		put_branch(m, call_site(top, e, m->d - 1), entry(e), KCC_BR_CALL);
		m->st[m->d++] = e;
		bf_count(m, w, KCC_CTR_CALLS, 1);
		kcc_ppp_call(&m->run, e);
	} else {
		put_branch(m, entry(top) + 0xf00,
			   call_site(m->st[m->d - 2], top, m->d - 2) + 5,
			   KCC_BR_RET);
		m->d--;
		kcc_ppp_return(&m->run);
	}
	if (m->npend == BURST || rnd_one_in(&m->rnd, 6))
		take_sample(m, w);
}

/* Run the model with no set, to draw I from the stacks it reaches. */
static void draw_set(struct wset *w, uint64_t seed, uint32_t k)
{
	struct rnd r = { seed }, mr = { seed ^ 0x5555 };
	uint32_t st[MAXD], d = 1, i, j, c, off;

	memset(w, 0, sizeof(*w));
	w->k = k;
	st[0] = 0;
	for (i = 0; i < NSTEPS && w->n < MAXI; i++) {
		int call = d < 2 || (d < MAXD - 1 &&
				     rnd_below(&mr, 100) < (d < 10 ? 55 : 30));
		uint32_t len, *p;

		if (call)
			st[d++] = rnd_below(&mr, R);
		else
			d--;
		if (!rnd_one_in(&r, 40))
			continue;
		/* A reached suffix, or (1 in 4) a random path over 0..R-2. */
		len = 1 + rnd_below(&r, k + 1);
		p = w->path + w->nlabels;
		if (rnd_one_in(&r, 4)) {
			for (j = 0; j < len; j++)
				p[j] = rnd_below(&r, R - 1);
		} else {
			if (len > d)
				len = d;
			for (j = 0; j < len; j++)
				p[j] = st[d - len + j];
			for (j = 0; j < len; j++)
				if (p[j] == R - 1)
					break;
			if (j < len)
				continue;	/* no range: not watchable */
		}
		/* No duplicates: the kernel would refuse them. */
		for (c = 0, off = 0; c < w->n; off += w->lens[c], c++)
			if (w->lens[c] == len &&
			    !memcmp(w->path + off, p, len * sizeof(*p)))
				break;
		if (c < w->n)
			continue;
		w->lens[w->n++] = len;
		w->nlabels += len;
	}
}

static int number_set(struct wset *w)
{
	uint64_t labels[MAXI * (KCC_PPP_MAX_K + 1)];
	size_t sz = kcc_ppp_mem_size(w->n, w->nlabels, KCC_PPP_MAX_RANGE);
	uint32_t i;

	for (i = 0; i < w->nlabels; i++)
		labels[i] = w->path[i];
	w->mem = malloc(sz);
	return w->mem ? kcc_ppp_build(&w->p, w->mem, sz, labels, w->lens,
				      w->n, KCC_PPP_MAX_RANGE) : -ENOMEM;
}

static struct kcc_watch_range ranges[R - 1];

static void upload_init(struct kcc_watch *u, const struct wset *w)
{
	uint32_t i;

	for (i = 0; i < R - 1; i++) {
		memset(&ranges[i], 0, sizeof(ranges[i]));
		ranges[i].start = entry(i);
		ranges[i].end = entry(i) + RSPAN - 0x10;
		ranges[i].routine = i;
	}
	memset(u, 0, sizeof(*u));
	u->size = sizeof(*u);
	u->k = w->k;
	u->range = w->p.range;
	u->nr_routines = R - 1;
	u->nr_ranges = R - 1;
	u->nr_contexts = w->n;
	u->nr_labels = w->nlabels;
	u->ranges = (uintptr_t)ranges;
	u->lens = (uintptr_t)w->lens;
	u->paths = (uintptr_t)w->path;
}

static int session(int fd, uint32_t k)
{
	struct kcc_config c;

	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, k);
	return kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
}

static int inject_all(int fd, struct model *m)
{
	size_t off = 0;
	uint32_t i = 0;

	/* Batches of 256 samples. */
	while (i < m->nsamples) {
		size_t start = off;
		uint32_t n = 0;
		struct kcc_inject in;

		while (i < m->nsamples && n < 256) {
			off += ((struct kcc_sample *)(m->buf + off))->size;
			i++;
			n++;
		}
		memset(&in, 0, sizeof(in));
		in.size = sizeof(in);
		in.count = n;
		in.data = (uintptr_t)(m->buf + start);
		in.len = off - start;
		if (kcc_ioc(fd, KCC_IOC_INJECT, &in) || in.done != n)
			return -1;
	}
	return 0;
}

/* The KCC_REC_WATCH of thread @pid in a checked stream, or NULL. */
static const struct kcc_rec_watch *find_watch(const char *buf, size_t len,
					      uint32_t pid, uint32_t *nrec)
{
	const struct kcc_stream_header *h = (const void *)buf;
	const struct kcc_rec_watch *found = NULL;
	size_t off = h->header_size;

	*nrec = 0;
	while (off < len) {
		const struct kcc_rec *r = (const void *)(buf + off);

		if (r->type == KCC_REC_END)
			break;
		if (r->type == KCC_REC_WATCH) {
			const struct kcc_rec_watch *w = (const void *)r;

			(*nrec)++;
			if (w->pid == pid && r->size == sizeof(*w) +
			    (size_t)w->nr_contexts * w->nr_ctrs * 8)
				found = w;
		}
		off += r->size;
	}
	return found;
}

static char *snapshot(int fd, long *len)
{
	uint64_t nt, nn;
	char *buf = NULL;

	*len = kcc_read_stream(fd, &buf, 0);
	if (*len <= 0 || kcc_stream_check(buf, *len, &nt, &nn)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The same samples without a watched set: the session's bytes and the
 * time from the first injection to STOP (the worker has applied all of
 * it then), for the figures; nothing is asserted on them.
 */
static void run_plain(struct model *m, uint32_t fk, uint64_t *ns,
		      struct kcc_status *st)
{
	int fd = kcc_open(O_RDWR);
	uint64_t t0;

	*ns = 0;
	memset(st, 0, sizeof(*st));
	if (fd < 0 || session(fd, fk) || kcc_ioc(fd, KCC_IOC_START, NULL)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	t0 = now_ns();
	if (!inject_all(fd, m) && !kcc_ioc(fd, KCC_IOC_STOP, NULL))
		*ns = now_ns() - t0;
	kcc_status_get(fd, st);
	close(fd);
}

/* One run: model, upload, inject, three-way comparison. */
static void test_exact(uint64_t seed, uint32_t k, uint32_t fk)
{
	uint32_t pid = syscall(SYS_gettid), nrec, c, j, bad_bf = 0, bad_u = 0;
	static struct wset w;
	struct model *m = calloc(1, sizeof(*m));
	const struct kcc_rec_watch *rw;
	struct kcc_watch u;
	const uint64_t *kc;
	uint64_t matched = 0;
	struct kcc_status st0, st1;
	uint64_t ns0, ns1 = 0, t0;
	char *buf;
	long len;
	int fd, r;

	draw_set(&w, seed, k);
	r = number_set(&w);
	tap_result(!r && m, "seed %llu k %u: %u contexts numbered in %u (delta %.2f)",
		   (unsigned long long)seed, k, w.n, w.p.range,
		   w.n ? (double)w.p.range / w.n : 0);
	if (r || !m)
		return;
	m->rnd.s = seed ^ 0x5555;
	m->counts = calloc(w.p.range, 8);
	m->metrics = calloc((size_t)w.p.range * 2, 8);
	if (!m->counts || !m->metrics ||
	    kcc_ppp_run_init(&m->run, &w.p, m->counts, m->ustack, MAXD + 1) ||
	    kcc_ppp_run_metrics(&m->run, m->metrics, 2))
		exit(1);
	m->st[0] = 0;
	m->d = 1;
	kcc_ppp_call_w(&m->run, 0, 0);	/* main: on the stack, never called */
	for (j = 0; j < NSTEPS; j++)
		step(m, &w);
	if (m->npend)
		take_sample(m, &w);

	run_plain(m, fk, &ns0, &st0);
	fd = kcc_open(O_RDWR);
	upload_init(&u, &w);
	r = fd < 0 ? -errno : session(fd, fk);
	if (!r)
		r = kcc_ioc(fd, KCC_IOC_WATCH, &u);
	if (!r)
		r = kcc_ioc(fd, KCC_IOC_START, NULL);
	t0 = now_ns();
	if (!r)
		r = inject_all(fd, m);
	if (!r)
		r = kcc_ioc(fd, KCC_IOC_STOP, NULL);
	if (!r)
		ns1 = now_ns() - t0;
	memset(&st1, 0, sizeof(st1));
	if (fd >= 0)
		kcc_status_get(fd, &st1);
	/* Figures: worker time per replayed call, session memory. */
	tap_diag("figures k %u forest k %u: %.0f ns per replayed call without watch, %.0f with; session bytes %llu without, %llu with (+%llu: the numbering and one task's %u x 3 counters and shadow stack); forest %llu nodes",
		 k, fk, st0.branches ? (double)ns0 / m->bf_total[0] : 0,
		 (double)ns1 / m->bf_total[0],
		 (unsigned long long)st0.bytes, (unsigned long long)st1.bytes,
		 (unsigned long long)(st1.bytes - st0.bytes), w.p.range,
		 (unsigned long long)st1.nodes);
	tap_result(!r, "watch uploaded, %u samples (%llu calls) injected: %d",
		   m->nsamples, (unsigned long long)m->bf_total[0], r);
	buf = r ? NULL : snapshot(fd, &len);
	rw = buf ? find_watch(buf, len, pid, &nrec) : NULL;
	tap_result(rw && nrec == 1 && rw->nr_contexts == w.n &&
		   rw->nr_ctrs == KCC_WATCH_NR_CTRS && rw->range == w.p.range,
		   "one KCC_REC_WATCH for the thread, %u contexts, range %u",
		   rw ? rw->nr_contexts : 0, rw ? rw->range : 0);
	if (!rw) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return;
	}
	kc = (const uint64_t *)(rw + 1);
	for (c = 0; c < w.n; c++) {
		uint32_t num = w.p.ctx_num[c];
		const uint64_t *kk = kc + c * KCC_WATCH_NR_CTRS;
		uint64_t uu[3] = { m->counts[num], m->metrics[num * 2],
				   m->metrics[num * 2 + 1] };

		matched += m->bf[c][0];
		for (j = 0; j < KCC_WATCH_NR_CTRS; j++) {
			if (kk[j] != m->bf[c][j] && bad_bf++ < 5)
				tap_diag("context %u ctr %u: kernel %llu exact %llu",
					 c, j, (unsigned long long)kk[j],
					 (unsigned long long)m->bf[c][j]);
			if (kk[j] != uu[j])
				bad_u++;
		}
	}
	tap_result(!bad_bf, "kernel counts = exact k-CCF counts, %u contexts x 3 (%llu watched calls)",
		   w.n, (unsigned long long)matched);
	tap_result(!bad_u, "kernel array = lbr/kcc_ppp array in userspace");
	tap_result(rw->totals[0] == m->bf_total[0] &&
		   rw->totals[1] == m->bf_total[1] &&
		   rw->totals[2] == m->bf_total[2] &&
		   rw->residual[0] == m->bf_resid[0] &&
		   rw->residual[1] == m->bf_resid[1] &&
		   rw->residual[2] == m->bf_resid[2] &&
		   rw->residual[0] == m->run.resid_calls && !rw->stack_drops,
		   "totals %llu/%llu/%llu and residual %llu/%llu/%llu = exact (aliased %llu)",
		   (unsigned long long)rw->totals[0],
		   (unsigned long long)rw->totals[1],
		   (unsigned long long)rw->totals[2],
		   (unsigned long long)rw->residual[0],
		   (unsigned long long)rw->residual[1],
		   (unsigned long long)rw->residual[2],
		   (unsigned long long)rw->aliased);
	free(buf);
	close(fd);
	free(m->counts);
	free(m->metrics);
	free(m->buf);
	free(m);
	free(w.mem);
}

/* ---- bad uploads ---------------------------------------------------------- */

static uint32_t ctx_of(int fd)
{
	const struct kcc_rec_watch *rw;
	uint32_t nrec, pid = syscall(SYS_gettid);
	uint64_t stack[2] = { entry(1) + 0x800, call_site(0, 1, 0) + 5 };
	char smp[sizeof(struct kcc_sample) + 16];
	struct kcc_sample *s = (struct kcc_sample *)smp;
	struct kcc_inject in;
	char *buf;
	long len;

	memset(smp, 0, sizeof(smp));
	s->size = sizeof(smp);
	s->nr_stack = 2;
	s->delta = 1;
	memcpy(s + 1, stack, sizeof(stack));
	memset(&in, 0, sizeof(in));
	in.size = sizeof(in);
	in.count = 1;
	in.data = (uintptr_t)smp;
	in.len = sizeof(smp);
	if (kcc_ioc(fd, KCC_IOC_START, NULL) || kcc_ioc(fd, KCC_IOC_INJECT, &in) ||
	    kcc_ioc(fd, KCC_IOC_STOP, NULL))
		return ~0u;
	buf = snapshot(fd, &len);
	rw = buf ? find_watch(buf, len, pid, &nrec) : NULL;
	nrec = rw ? rw->nr_contexts : 0;
	free(buf);
	return nrec;
}

#define BAD(expr, err, what) do {					\
	struct kcc_watch b = good;					\
	int _r;								\
	expr;								\
	_r = kcc_ioc(fd, KCC_IOC_WATCH, &b);				\
	tap_result(_r == (err), "%s -> %s (%d)", what, #err, _r);	\
} while (0)

static void test_bad(void)
{
	static struct wset w;
	struct kcc_watch good, small;
	struct kcc_watch_range rbad[R - 1];
	uint32_t lens_dup[2], path_dup[4], bigpath[10];
	uint32_t n, lens9 = 10;
	int fd = kcc_open(O_RDWR), fd2, r;

	draw_set(&w, 7, 3);
	if (fd < 0 || number_set(&w) || w.n < 3) {
		tap_result(0, "bad uploads: setup");
		return;
	}
	upload_init(&good, &w);
	r = kcc_ioc(fd, KCC_IOC_WATCH, &good);
	tap_result(r == -EINVAL, "WATCH before CONFIGURE -> EINVAL (%d)", r);
	tap_result(!session(fd, 2), "configure");
	/* A smaller valid set first: the bad ones must not replace it. */
	small = good;
	small.nr_contexts = 2;
	small.nr_labels = w.lens[0] + w.lens[1];
	{
		/* Its own numbering: two contexts. */
		uint64_t lab[2 * (KCC_PPP_MAX_K + 1)];
		size_t sz = kcc_ppp_mem_size(2, small.nr_labels, KCC_PPP_MAX_RANGE);
		void *mem = malloc(sz);
		struct kcc_ppp p2;
		uint32_t i;

		for (i = 0; i < small.nr_labels; i++)
			lab[i] = w.path[i];
		if (!mem || kcc_ppp_build(&p2, mem, sz, lab, w.lens, 2,
					  KCC_PPP_MAX_RANGE))
			exit(1);
		small.range = p2.range;
		free(mem);
	}
	r = kcc_ioc(fd, KCC_IOC_WATCH, &small);
	tap_result(!r, "a valid set of 2 contexts (%d)", r);

	BAD(b.k = KCC_WATCH_K_MAX + 1, -EINVAL, "k 9");
	BAD(b.k = 0, -EINVAL, "k 0");
	BAD(b.k = 1, -EINVAL, "a context longer than k + 1 routines");
	BAD(b.flags = 1, -EINVAL, "unknown flag");
	BAD(b.__reserved[1] = 1, -EINVAL, "reserved field");
	BAD(b.nr_contexts = KCC_WATCH_MAX_CONTEXTS + 1, -E2BIG, "65537 contexts");
	BAD(b.range = KCC_WATCH_MAX_RANGE + 1, -E2BIG, "range over the cap");
	BAD(b.nr_ranges = KCC_WATCH_MAX_RANGES + 1, -E2BIG, "ranges over the cap");
	BAD(b.range = w.p.range + 1, -EINVAL, "range not the numbering's");
	BAD(b.range = w.p.range - 1, -E2BIG, "range too small for the numbering");
	BAD(b.nr_labels = w.nlabels - 1, -EINVAL, "lengths do not sum to nr_labels");
	BAD(b.nr_routines = 2, -EINVAL, "routine id >= nr_routines");
	BAD(b.lens = 8, -EFAULT, "lens at address 8");
	BAD(b.ranges = 0, -EFAULT, "ranges NULL");
	memcpy(rbad, ranges, sizeof(rbad));
	rbad[2].end = rbad[3].start + 1;
	BAD(b.ranges = (uintptr_t)rbad, -EINVAL, "overlapping ranges");
	memcpy(rbad, ranges, sizeof(rbad));
	rbad[1] = ranges[2];
	rbad[2] = ranges[1];
	BAD(b.ranges = (uintptr_t)rbad, -EINVAL, "unsorted ranges");
	memcpy(rbad, ranges, sizeof(rbad));
	rbad[4].end = rbad[4].start;
	BAD(b.ranges = (uintptr_t)rbad, -EINVAL, "empty range");
	memcpy(rbad, ranges, sizeof(rbad));
	rbad[0].__reserved = 1;
	BAD(b.ranges = (uintptr_t)rbad, -EINVAL, "range reserved field");
	lens_dup[0] = lens_dup[1] = 2;
	path_dup[0] = path_dup[2] = 0;
	path_dup[1] = path_dup[3] = 1;
	BAD((b.nr_contexts = 2, b.nr_labels = 4, b.lens = (uintptr_t)lens_dup,
	     b.paths = (uintptr_t)path_dup), -EINVAL, "a context twice");
	for (n = 0; n < 10; n++)
		bigpath[n] = n % (R - 1);
	BAD((b.k = KCC_WATCH_K_MAX, b.nr_contexts = 1, b.nr_labels = 10,
	     b.lens = (uintptr_t)&lens9, b.paths = (uintptr_t)bigpath),
	    -EINVAL, "a context of 9 call edges");
	BAD((b.nr_contexts = 0), -EINVAL, "nr_contexts 0 with a set");
	fd2 = kcc_open(O_RDWR);
	r = fd2 < 0 ? -errno : kcc_ioc(fd2, KCC_IOC_WATCH, &good);
	/* Each file owns its own session: this one has none. */
	tap_result(r == -EINVAL,
		   "WATCH from another descriptor, without a session of its own -> EINVAL (%d)",
		   r);
	/*
	 * Ownership before any copy: with an unreadable lens, a file
	 * without a session is refused for having none (-EINVAL), not
	 * after kcc.ko copied and built the upload (-EFAULT).
	 */
	if (fd2 >= 0) {
		struct kcc_watch b = good;

		b.lens = 8;
		r = kcc_ioc(fd2, KCC_IOC_WATCH, &b);
	}
	tap_result(r == -EINVAL,
		   "WATCH without a session, lens at address 8 -> EINVAL before any copy (%d)",
		   r);
	if (fd2 >= 0)
		close(fd2);
	{
		unsigned long cmd = _IOC(_IOC_WRITE, KCC_IOC_MAGIC, 0x08,
					 sizeof(good) - 8);

		good.size -= 8;
		r = kcc_ioc(fd, cmd, &good);
		good.size += 8;
		tap_result(r == -EINVAL, "shorter struct -> EINVAL (%d)", r);
	}
	n = ctx_of(fd);
	tap_result(n == 2, "after the refusals the session still watches 2 contexts (%u)",
		   n);
	r = kcc_ioc(fd, KCC_IOC_WATCH, &good);
	tap_result(r == -EINVAL, "WATCH after START -> EINVAL (%d)", r);
	close(fd);
	free(w.mem);
}

int main(int argc, char **argv)
{
	int fd;

	kcc_prog_args(argc, argv, "watched k-contexts on injected samples");
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no /dev/kcc");
	if (session(fd, 2)) {
		close(fd);
		tap_skip_all("no inject source (load kcc.ko inject=1)");
	}
	close(fd);
	printf("TAP version 13\n");
	test_exact(1, 3, 2);
	test_exact(2, 8, KCC_K_INF);
	test_exact(3, 1, 4);
	test_bad();
	printf("1..%d\n", tap_nr);
	return tap_exit();
}
