// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_check.c - checks the branch stacks of the test LBR PMU (kcc_lbr,
 * kcc_lbrpmu.ko) against the trace the same run of a workload wrote.
 *
 *   lbr_check [-a] [-P] [-e EVENT] [-c PERIOD] [-j FILTER] [-x N]
 *             [-k SKID] [-m MIN] -d DIR -- PROG [ARGS...]
 *	opens kcc_lbr/EVENT/ (calls, misses or clock) on PROG, run with
 *	KCC_TRACE_DIR=DIR KCC_TRACE_LBR=1, sampling every PERIOD with
 *	branch stacks under FILTER (perf's -j syntax: any, any_call,
 *	any_ret, call, ind_call, u, k, save_type); checks the samples and
 *	that the count equals the calls (calls) or the synthetic misses
 *	(misses: KCC_LBR_MISSES() of each call's routine) in the trace;
 *	-a: system-wide events (one per CPU, all tasks) instead of events
 *	on PROG's process tree
 *	-P: precise overflow (kcc_lbrpmu's precise=1) of a one-thread
 *	PROG (lbr_workload ROUNDS 1), on one event that follows the thread
 *	from CPU to CPU: every sample at the call that
 *	reached the period, none late (kcc_lbrpmu's late count),
 *	so every stack has a call on top and the calls event takes
 *	floor(calls / PERIOD) samples exactly
 *   lbr_check -S FILE [-j FILTER] [-x N] [-m MIN] -d DIR
 *	checks the branch stacks of `perf script -F pid,tid,brstack`
 *   lbr_check -n -d DIR
 *	prints the number of calls in the traces of DIR
 *
 * The checks (TAP, one line each): at least MIN samples have records;
 * every record is one of the thread's calls (its from lies 1..15 bytes
 * before the return address of a traced entry) or returns (its to is the
 * return address of a traced exit); every two records next to each
 * other in a stack are two events next to each other in the thread's
 * trace under the filter, older below newer (so the stack is newest
 * first and has no hole); the filter holds (types, and no record from a
 * kernel address under u); with -x N, the stray far-branch records
 * (from a kernel address) are on top of every N-th stack of each thread:
 * only on top, and floor(n / N) of them for a thread of n samples with
 * records (the samples of a thread come from several CPUs' buffers, out
 * of order);
 * with -k SKID, the deepest stack (below a stray) has RECORDS - SKID
 * records: the newest SKID are left out, the rest is there (RECORDS: -r,
 * the PMU's records parameter, default KCC_LBR_RECS).
 * The traces are read here, raw, because the checks need the events in
 * the order the runtime wrote them, which user/lib/ftrace_rt.c mends
 * (longjmp) on purpose.
 * Exit status: 0 all passed, 1 a check failed, 2 usage or I/O error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../user/lib/ftrace_fmt.h"
#include "../kcc_lbrpmu.h"
#include "lbr_prog.h"

#define MAX_THREADS	64
#define MMAP_PAGES	512	/* data pages of the sample buffer */

/* One event of a thread's trace. */
struct ev {
	uint8_t kind;		/* FTR_KIND_ENTER or _EXIT */
	uint64_t fn, site;
};

struct thread {
	uint32_t pid, tid;
	struct ev *ev;
	size_t nev, cap;
};

static struct thread threads[MAX_THREADS];
static int nthreads;
static int depth = KCC_LBR_RECS;	/* -r: the PMU's records */
static uint64_t trace_calls;
static uint64_t trace_misses;	/* the synthetic misses of the calls */

/* ---- a set of (a, b) keys with a value ----------------------------------- */

struct slot {
	uint64_t a, b, v;
	int used;
};

struct set {
	struct slot *s;
	size_t mask, n;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xc2b2ae3d27d4eb4full;
	return h ^ (h >> 29);
}

static void set_put(struct set *t, uint64_t a, uint64_t b, uint64_t v);

static void set_grow(struct set *t)
{
	struct set n = { 0 };
	size_t i, slots = t->s ? (t->mask + 1) * 2 : 1024;

	n.s = calloc(slots, sizeof(*n.s));
	if (!n.s) {
		perror("lbr_check");
		exit(2);
	}
	n.mask = slots - 1;
	for (i = 0; t->s && i <= t->mask; i++)
		if (t->s[i].used)
			set_put(&n, t->s[i].a, t->s[i].b, t->s[i].v);
	free(t->s);
	*t = n;
}

static struct slot *set_find(const struct set *t, uint64_t a, uint64_t b)
{
	size_t h;

	if (!t->s)
		return NULL;
	for (h = mix(a, b) & t->mask; t->s[h].used; h = (h + 1) & t->mask)
		if (t->s[h].a == a && t->s[h].b == b)
			return &t->s[h];
	return NULL;
}

static void set_put(struct set *t, uint64_t a, uint64_t b, uint64_t v)
{
	size_t h;

	if (!t->s || (t->n + 1) * 2 > t->mask + 1)
		set_grow(t);
	for (h = mix(a, b) & t->mask; t->s[h].used; h = (h + 1) & t->mask)
		if (t->s[h].a == a && t->s[h].b == b)
			return;
	t->s[h] = (struct slot){ a, b, v, 1 };
	t->n++;
}

/* ---- traces ------------------------------------------------------------- */

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16;

	if (!f)
		return -1;
	*len = 0;
	*buf = malloc(cap);
	while (*buf) {
		size_t n = fread(*buf + *len, 1, cap - *len, f);

		*len += n;
		if (n == 0)
			break;
		if (*len == cap)
			*buf = realloc(*buf, cap *= 2);
	}
	fclose(f);
	return *buf ? 0 : -1;
}

static int read_trace(const char *path)
{
	const uint8_t *p, *end;
	struct thread *t;
	uint64_t *fns = NULL, *sites = NULL;
	size_t nids = 0, capids = 0;
	uint8_t *buf;
	size_t len;
	uint32_t hdr[4];

	if (read_file(path, &buf, &len) || len < FTR_HDR_LEN ||
	    memcmp(buf, FTR_MAGIC, FTR_MAGIC_LEN)) {
		fprintf(stderr, "lbr_check: %s: not a trace\n", path);
		return -1;
	}
	if (nthreads == MAX_THREADS) {
		fprintf(stderr, "lbr_check: more than %d threads\n", MAX_THREADS);
		return -1;
	}
	memcpy(hdr, buf, sizeof(hdr));
	t = &threads[nthreads++];
	t->pid = hdr[2];
	t->tid = hdr[3];
	p = buf + FTR_HDR_LEN;
	end = buf + len;
	while (p < end) {
		uint64_t v, x, y, z;

		if (varint(&p, end, &v))
			break;
		if ((v & 3) == FTR_KIND_CTL) {
			switch (v >> 2) {
			case FTR_CTL_DEFINE:
				if (varint(&p, end, &x) || varint(&p, end, &y))
					goto bad;
				if (nids == capids) {
					capids = capids ? capids * 2 : 256;
					fns = realloc(fns, capids * sizeof(*fns));
					sites = realloc(sites, capids * sizeof(*sites));
					if (!fns || !sites)
						goto bad;
				}
				fns[nids] = x;
				sites[nids++] = y;
				break;
			case FTR_CTL_MAP:
				if (varint(&p, end, &x) || varint(&p, end, &y) ||
				    varint(&p, end, &z) || varint(&p, end, &x) ||
				    (uint64_t)(end - p) < x)
					goto bad;
				p += x;
				break;
			case FTR_CTL_LOST:
			case FTR_CTL_END:
				if (varint(&p, end, &x))
					goto bad;
				break;
			default:
				goto bad;
			}
			continue;
		}
		if ((v & 3) == 3 || (v >> 2) >= nids || varint(&p, end, &x))
			goto bad;
		if (t->nev == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 4096;
			t->ev = realloc(t->ev, t->cap * sizeof(*t->ev));
			if (!t->ev)
				goto bad;
		}
		t->ev[t->nev++] = (struct ev){ (uint8_t)(v & 3), fns[v >> 2],
					       sites[v >> 2] };
		if ((v & 3) == FTR_KIND_ENTER) {
			trace_calls++;
			trace_misses += KCC_LBR_MISSES(fns[v >> 2]);
		}
	}
	free(buf);
	free(fns);
	free(sites);
	return 0;
bad:
	fprintf(stderr, "lbr_check: %s: malformed at offset %zu\n", path,
		(size_t)(p - buf));
	free(buf);
	free(fns);
	free(sites);
	return -1;
}

static int read_traces(const char *dir)
{
	char path[4096];
	struct dirent *d;
	DIR *dp = opendir(dir);
	int ret = 0;

	if (!dp) {
		fprintf(stderr, "lbr_check: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((d = readdir(dp)) && !ret) {
		size_t n = strlen(d->d_name);

		if (n < 4 || strcmp(d->d_name + n - 4, FTR_SUFFIX))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		ret = read_trace(path);
	}
	closedir(dp);
	if (!ret && !nthreads) {
		fprintf(stderr, "lbr_check: %s: no trace\n", dir);
		ret = -1;
	}
	return ret;
}

/* ---- the filter --------------------------------------------------------- */

static uint64_t parse_filter(const char *s)
{
	static const struct {
		const char *name;
		uint64_t bit;
	} names[] = {
		{ "any", PERF_SAMPLE_BRANCH_ANY },
		{ "any_call", PERF_SAMPLE_BRANCH_ANY_CALL },
		{ "any_ret", PERF_SAMPLE_BRANCH_ANY_RETURN },
		{ "call", PERF_SAMPLE_BRANCH_CALL },
		{ "ind_call", PERF_SAMPLE_BRANCH_IND_CALL },
		{ "u", PERF_SAMPLE_BRANCH_USER },
		{ "k", PERF_SAMPLE_BRANCH_KERNEL },
		{ "save_type", PERF_SAMPLE_BRANCH_TYPE_SAVE },
	};
	char buf[256], *tok, *save;
	uint64_t m = 0;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "lbr_check: unknown branch filter '%s'\n",
				tok);
			exit(2);
		}
		m |= names[i].bit;
	}
	return m;
}

static int filter_calls(uint64_t f)
{
	return f & (PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_ANY_CALL |
		    PERF_SAMPLE_BRANCH_CALL | PERF_SAMPLE_BRANCH_IND_CALL);
}

static int filter_rets(uint64_t f)
{
	return f & (PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_ANY_RETURN);
}

/* ---- the checks ----------------------------------------------------------- */

struct rec {
	uint64_t from, to;
};

struct sample {
	uint32_t pid, tid;
	uint32_t nr;
	struct rec *r;
};

static struct sample *samples;
static size_t nsamples, capsamples;

static void add_sample(uint32_t pid, uint32_t tid, const struct rec *r,
		       uint32_t nr)
{
	struct sample *s;

	if (nsamples == capsamples) {
		capsamples = capsamples ? capsamples * 2 : 1024;
		samples = realloc(samples, capsamples * sizeof(*samples));
		if (!samples) {
			perror("lbr_check");
			exit(2);
		}
	}
	s = &samples[nsamples++];
	s->pid = pid;
	s->tid = tid;
	s->nr = nr;
	s->r = malloc((nr ? nr : 1) * sizeof(*r));
	if (!s->r) {
		perror("lbr_check");
		exit(2);
	}
	memcpy(s->r, r, nr * sizeof(*r));
}

static int kernel_ip(uint64_t ip)
{
	return (int64_t)ip < 0;
}

/*
 * Key of the event a record stands for in thread @ti: (kind << 56 | ti,
 * return address); 0 when no event of the thread matches.
 */
static int rec_key(const struct set *sites, int ti, const struct rec *r,
		   uint64_t *a, uint64_t *b)
{
	uint64_t k;

	if (kernel_ip(r->from))
		return -1;
	/* a return to this address? */
	if (set_find(sites, ((uint64_t)FTR_KIND_EXIT << 56) | ti, r->to)) {
		*a = ((uint64_t)FTR_KIND_EXIT << 56) | ti;
		*b = r->to;
		return 0;
	}
	for (k = 1; k <= 15; k++)
		if (set_find(sites, ((uint64_t)FTR_KIND_ENTER << 56) | ti,
			     r->from + k)) {
			*a = ((uint64_t)FTR_KIND_ENTER << 56) | ti;
			*b = r->from + k;
			return 0;
		}
	return -1;
}

static int find_thread(uint32_t pid, uint32_t tid)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].pid == pid && threads[i].tid == tid)
			return i;
	return -1;
}

static void check_samples(uint64_t filter, unsigned int stray_every,
			  size_t min, int skid, size_t *with_out,
			  size_t *top_not_call)
{
	struct set sites = { 0 }, pairs = { 0 };
	size_t with = 0, recs = 0, unknown = 0, badpair = 0, pairs_n = 0;
	size_t nothread = 0, wrong_type = 0, kern = 0, strays = 0;
	size_t stray_bad = 0, retarget = 0, i;
	size_t nth[MAX_THREADS] = { 0 };
	uint32_t deepest = 0;
	int ti;
	uint32_t j;

	/* Every event, and every two neighbours under the filter. */
	for (ti = 0; ti < nthreads; ti++) {
		struct thread *t = &threads[ti];
		uint64_t pa = 0, pb = 0;
		size_t e;

		for (e = 0; e < t->nev; e++) {
			const struct ev *v = &t->ev[e];
			uint64_t a = ((uint64_t)v->kind << 56) | ti;

			/* All events: a record of a type not asked for is
			 * still recognised, and reported as such. */
			set_put(&sites, a, v->site, v->fn);
			if (v->kind == FTR_KIND_ENTER ? !filter_calls(filter) :
							!filter_rets(filter))
				continue;
			if (pa)
				set_put(&pairs, mix(pa, pb), mix(a, v->site), 0);
			pa = a;
			pb = v->site;
		}
	}
	for (i = 0; i < nsamples; i++) {
		const struct sample *s = &samples[i];
		uint64_t pa = 0, pb = 0;
		uint32_t first = 0;

		if (s->nr)
			with++;
		ti = find_thread(s->pid, s->tid);
		if (ti < 0) {
			nothread += s->nr > 0;
			continue;
		}
		nth[ti] += s->nr > 0;	/* the PMU numbers stacks read from a ring */
		if (s->nr && kernel_ip(s->r[0].from)) {
			strays++;
			first = 1;
		}
		if (s->nr - first > deepest)
			deepest = s->nr - first;
		if (s->nr > first) {
			uint64_t a, b;

			if (rec_key(&sites, ti, &s->r[first], &a, &b) ||
			    (a >> 56) != FTR_KIND_ENTER)
				(*top_not_call)++;
		}
		/* Oldest first: each record must follow the one before. */
		for (j = s->nr; j-- > first;) {
			const struct rec *r = &s->r[j];
			struct slot *sl;
			uint64_t a, b;

			recs++;
			if (kernel_ip(r->from)) {
				kern++;
				pa = 0;
				continue;
			}
			if (rec_key(&sites, ti, r, &a, &b)) {
				unknown++;
				if (unknown <= 5)
					printf("# unknown record %#" PRIx64
					       " -> %#" PRIx64 " (tid %u)\n",
					       r->from, r->to, s->tid);
				pa = 0;
				continue;
			}
			if ((a >> 56) == FTR_KIND_ENTER) {
				sl = set_find(&sites, a, b);
				if (sl && sl->v != r->to)
					retarget++;
			}
			if ((a >> 56) == FTR_KIND_ENTER ? !filter_calls(filter) :
							  !filter_rets(filter))
				wrong_type++;
			if (pa) {
				pairs_n++;
				if (!set_find(&pairs, mix(pa, pb), mix(a, b)))
					badpair++;
			}
			pa = a;
			pb = b;
		}
	}
	if (stray_every) {
		size_t want = 0;

		for (ti = 0; ti < nthreads; ti++)
			want += nth[ti] / stray_every;
		stray_bad = want > strays ? want - strays : strays - want;
	}
	printf("# %zu samples, %zu with records, %zu records, %zu pairs, "
	       "%zu calls to a PLT stub or tail-calling routine, %zu strays\n",
	       nsamples, with, recs, pairs_n, retarget, strays);
	tap(with >= min, "at least %zu samples have branch records (%zu)",
	    min, with);
	tap(!nothread, "every sample with records is of a traced thread (%zu not)",
	    nothread);
	tap(recs && !unknown,
	    "every record is a call or return of its thread's trace (%zu of %zu not)",
	    unknown, recs);
	tap(pairs_n && !badpair,
	    "neighbour records are neighbour events of the trace, newest first (%zu of %zu not)",
	    badpair, pairs_n);
	tap(!wrong_type && !kern,
	    "the filter holds: %zu records of a type not asked for, %zu from the kernel below the top",
	    wrong_type, kern);
	if (stray_every)
		tap(!stray_bad && strays,
		    "a stray far branch on top of every %u-th stack of a thread (%zu strays, %zu off)",
		    stray_every, strays, stray_bad);
	else
		tap(!strays, "no stray far branch (%zu)", strays);
	if (skid >= 0)
		tap(deepest == (uint32_t)(depth - skid),
		    "the deepest stack has %d records (%u): %d records, skid %d",
		    depth - skid, deepest, depth, skid);
	*with_out = with;
	free(sites.s);
	free(pairs.s);
}

/* ---- perf script input ---------------------------------------------------- */

static int read_script(const char *path)
{
	struct rec r[KCC_LBR_RECS + 8];
	char *line = NULL, *tok, *save;
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "lbr_check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned int pid, tid;
		uint32_t nr = 0;

		tok = strtok_r(line, " \t\n", &save);
		if (!tok || sscanf(tok, "%u/%u", &pid, &tid) != 2)
			continue;
		while ((tok = strtok_r(NULL, " \t\n", &save)) &&
		       nr < sizeof(r) / sizeof(r[0])) {
			unsigned long long from, to;

			if (sscanf(tok, "%llx/%llx", &from, &to) == 2)
				r[nr++] = (struct rec){ from, to };
		}
		add_sample(pid, tid, r, nr);
	}
	free(line);
	fclose(f);
	return 0;
}

/* ---- running the workload -------------------------------------------------- */

/* One sample: ip, pid and tid, the branch stack. */
static void take_sample(const uint8_t *body, size_t len, void *arg)
{
	const uint64_t *u = (const uint64_t *)body;
	struct rec r[KCC_LBR_RECS + 8];
	uint64_t nr, k;

	if (len < 3 * sizeof(*u))
		return;
	nr = u[2];
	if (nr > sizeof(r) / sizeof(r[0]) || (3 + 3 * nr) * sizeof(*u) > len)
		nr = 0;
	for (k = 0; k < nr; k++)
		r[k] = (struct rec){ u[3 + 3 * k], u[4 + 3 * k] };
	add_sample((uint32_t)u[1], (uint32_t)(u[1] >> 32), r, (uint32_t)nr);
}

static void drain(struct perf_event_mmap_page *pg, size_t size)
{
	lbr_drain(pg, size, take_sample, NULL);
}

#define MAX_CPUS	64

/*
 * One event per CPU on the workload's process tree (inherited events are
 * mapped per CPU, as perf record does), enabled at its exec(); with
 * @one, one event on the workload's thread, on whatever CPU it runs
 * (-P: a thread that migrates then has one period, not one per CPU).
 */
static int run(const char *event, uint64_t period, uint64_t filter,
	       int syswide, int one, const char *dir, char **argv,
	       uint64_t *count)
{
	struct perf_event_attr attr = { 0 };
	size_t page = sysconf(_SC_PAGESIZE), size = MMAP_PAGES * page;
	struct perf_event_mmap_page *pg[MAX_CPUS];
	int go[2], fd[MAX_CPUS], status, type = lbr_pmu_type(), cpu, ncpu;
	int ret = -1;
	pid_t pid;

	if (type < 0) {
		fprintf(stderr, "lbr_check: no kcc_lbr PMU (insmod kcc_lbrpmu.ko)\n");
		return -1;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1 || ncpu > MAX_CPUS) {
		fprintf(stderr, "lbr_check: %d CPUs\n", ncpu);
		return -1;
	}
	if (one)
		ncpu = 1;
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = !strcmp(event, "clock") ? KCC_LBR_EV_CLOCK :
		      !strcmp(event, "misses") ? KCC_LBR_EV_MISSES :
		      KCC_LBR_EV_CALLS;
	attr.sample_period = period;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_BRANCH_STACK;
	attr.branch_sample_type = filter;
	if (!syswide) {
		attr.disabled = 1;
		attr.enable_on_exec = 1;
		attr.inherit = !one;
	}
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	if (pipe(go))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		setenv("KCC_TRACE_DIR", dir, 1);
		setenv("KCC_TRACE_LBR", "1", 1);
		execv(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	close(go[0]);
	for (cpu = 0; cpu < ncpu; cpu++) {
		fd[cpu] = syscall(SYS_perf_event_open, &attr,
				  syswide ? -1 : pid, one ? -1 : cpu, -1, 0);
		if (fd[cpu] < 0) {
			fprintf(stderr, "lbr_check: perf_event_open kcc_lbr/%s/ cpu %d: %s\n",
				event, cpu, strerror(errno));
			goto out;
		}
		pg[cpu] = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd[cpu], 0);
		if (pg[cpu] == MAP_FAILED) {
			perror("lbr_check: mmap");
			close(fd[cpu]);
			goto out;
		}
	}
	if (write(go[1], "g", 1) != 1)
		goto out;
	close(go[1]);
	go[1] = -1;
	for (;;) {
		struct pollfd p[MAX_CPUS];

		for (cpu = 0; cpu < ncpu; cpu++)
			p[cpu] = (struct pollfd){ .fd = fd[cpu], .events = POLLIN };
		poll(p, ncpu, 20);
		for (cpu = 0; cpu < ncpu; cpu++)
			drain(pg[cpu], size);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
	}
	*count = 0;
	for (cpu = 0; cpu < ncpu; cpu++) {
		uint64_t v;

		drain(pg[cpu], size);
		if (read(fd[cpu], &v, sizeof(v)) == sizeof(v))
			*count += v;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "lbr_check: %s failed (status %#x)\n", argv[0],
			status);
	else
		ret = 0;
	pid = 0;
out:
	while (cpu-- > 0) {
		munmap(pg[cpu], size + page);
		close(fd[cpu]);
	}
	if (go[1] >= 0)
		close(go[1]);
	if (pid) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lbr_check [-a] [-P] [-e EVENT] [-c PERIOD] [-j FILTER] [-x N] [-k SKID] [-r RECORDS] [-m MIN] -d DIR -- PROG [ARGS...]\n"
		"       lbr_check -S PERF_SCRIPT_OUTPUT [-j FILTER] [-x N] [-m MIN] -d DIR\n"
		"       lbr_check -n -d DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *event = "calls", *dir = NULL, *script = NULL;
	uint64_t period = 1000, count = 0;
	uint64_t filter = PERF_SAMPLE_BRANCH_ANY_CALL |
			  PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_USER;
	unsigned int stray_every = 0;
	size_t min = 10;
	int skid = -1;
	int opt, count_only = 0, syswide = 0, precise = 0;
	size_t with = 0, top_not_call = 0;
	long long late0 = -1, late1 = -1;

	while ((opt = getopt(argc, argv, "ae:c:j:x:m:k:r:d:S:nP")) != -1) {
		switch (opt) {
		case 'a': syswide = 1; break;
		case 'e': event = optarg; break;
		case 'c': period = strtoull(optarg, NULL, 0); break;
		case 'j': filter = parse_filter(optarg); break;
		case 'x': stray_every = (unsigned int)atoi(optarg); break;
		case 'm': min = (size_t)atol(optarg); break;
		case 'k': skid = atoi(optarg); break;
		case 'r': depth = atoi(optarg); break;
		case 'd': dir = optarg; break;
		case 'S': script = optarg; break;
		case 'n': count_only = 1; break;
		case 'P': precise = 1; break;
		default: usage();
		}
	}
	if (!dir || (!count_only && !script && optind >= argc) || !period)
		usage();
	if (strcmp(event, "calls") && strcmp(event, "misses") &&
	    strcmp(event, "clock")) {
		fprintf(stderr, "lbr_check: unknown event '%s' (calls, misses, clock)\n",
			event);
		return 2;
	}
	if (count_only) {
		if (read_traces(dir))
			return 2;
		printf("%" PRIu64 "\n", trace_calls);
		return 0;
	}
	if (script) {
		if (read_script(script) || read_traces(dir))
			return 2;
	} else {
		late0 = lbr_param_get("late");
		if (run(event, period, filter, syswide, precise, dir,
			argv + optind, &count) ||
		    read_traces(dir))
			return 2;
		late1 = lbr_param_get("late");
	}
	printf("# %d threads traced, %" PRIu64 " calls in the trace\n",
	       nthreads, trace_calls);
	if (depth < 1 || depth > KCC_LBR_RECS || skid >= depth) {
		fprintf(stderr, "lbr_check: records %d, skid %d: 1 to %d records, a skid below them\n",
			depth, skid, KCC_LBR_RECS);
		return 2;
	}
	check_samples(filter, stray_every, min, skid, &with, &top_not_call);
	if (precise) {
		/* The run itself, not the checks, is what -P is about. */
		if (script || syswide || !filter_calls(filter) || skid > 0 ||
		    !strcmp(event, "clock")) {
			fprintf(stderr, "lbr_check: -P needs a per-task calls or misses run, calls in the filter, no skid\n");
			return 2;
		}
		tap(nthreads == 1, "-P: one thread traced (%d)", nthreads);
		tap(late0 >= 0 && late1 == late0,
		    "-P: no sample late, after more records than at its overflow (kcc_lbrpmu late %lld before, %lld after)",
		    late0, late1);
		tap(!top_not_call,
		    "-P: every stack has the overflowing call on top (%zu of %zu not)",
		    top_not_call, with);
		tap(with == (!strcmp(event, "calls") ? trace_calls :
			     trace_misses) / period && !lbr_throttled,
		    "-P: floor(%s / period) samples, one per period (%zu; %" PRIu64
		    " %s, period %" PRIu64 ")", event, with,
		    !strcmp(event, "calls") ? trace_calls : trace_misses,
		    event, period);
	}
	/*
	 * Per task or system-wide (one event per CPU, threads migrating
	 * between them), a counting event counts every call of the
	 * workload once, unless the core throttled it: a stopped counter
	 * counts nothing, as on hardware, so a throttled run may only
	 * count fewer.  lbrpmu.sh lifts the sample rate limit so that no
	 * run is throttled.
	 */
	if (lbr_throttled)
		printf("# throttled %" PRIu64 " times: the count may fall short\n",
		       lbr_throttled);
	if (!script)
		printf("# kcc_lbrpmu: %lld switch-outs with the ring unread since load\n",
		       lbr_param_get("unread"));
	if (!script && !strcmp(event, "calls"))
		tap(lbr_throttled ? count <= trace_calls : count == trace_calls,
		    "kcc_lbr/calls/%s counted the calls of the trace (%" PRIu64
		    " counted, %" PRIu64 " traced, %" PRIu64 " throttles)",
		    syswide ? " system-wide" : "", count, trace_calls,
		    lbr_throttled);
	if (!script && !strcmp(event, "misses"))
		tap(lbr_throttled ? count <= trace_misses :
				    count == trace_misses,
		    "kcc_lbr/misses/%s counted the misses of the trace's calls (%"
		    PRIu64 " counted, %" PRIu64 " from the trace)",
		    syswide ? " system-wide" : "", count, trace_misses);
	return tap_failed;
}
