/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kcc_prog.h - shared by the guest programs (kcc_fuzz, adv_*): TAP output,
 * a seeded PRNG, and the checks every program applies to /dev/kcc: the
 * sample accounting of KCC_IOC_STATUS and the shape of the read() stream,
 * both as include/uapi/linux/kcc.h defines them.
 *
 * The programs are linked statically on the host and run in the QEMU guest
 * of selftests/guest, where there is no C library besides their own.
 */
#ifndef KCC_PROG_H
#define KCC_PROG_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <linux/kcc.h>

/* ---- TAP ---------------------------------------------------------------- */

static int tap_nr;
static int tap_failed;

static inline void tap_plan(int n)
{
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void tap_result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++tap_nr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
}

static inline void tap_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d # SKIP ", ++tap_nr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* The whole program cannot run here: kselftest's skip code. */
static inline void tap_skip_all(const char *why)
{
	printf("TAP version 13\n1..0 # SKIP %s\n", why);
	exit(4);
}

static inline int tap_exit(void)
{
	printf("# %d of %d failed\n", tap_failed, tap_nr);
	return tap_failed ? 1 : 0;
}

/* ---- PRNG: splitmix64, so a seed names one sequence everywhere ---------- */

struct rnd {
	uint64_t s;
};

static inline uint64_t rnd_next(struct rnd *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (the bias is irrelevant here). */
static inline uint64_t rnd_below(struct rnd *r, uint64_t n)
{
	return rnd_next(r) % n;
}

/* True with probability 1/n. */
static inline int rnd_one_in(struct rnd *r, unsigned int n)
{
	return rnd_below(r, n) == 0;
}

/* ---- device ------------------------------------------------------------- */

/* The device node; the programs' -d option changes it (for testing them). */
static const char *kcc_dev = KCC_DEVICE;

static inline int kcc_open(int flags)
{
	return open(kcc_dev, flags | O_CLOEXEC);
}

static inline int kcc_status_get(int fd, struct kcc_status *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, KCC_IOC_STATUS, st) ? -errno : 0;
}

static inline uint64_t kcc_dropped_sum(const struct kcc_status *st)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < KCC_DROP_NR; i++)
		sum += st->dropped[i];
	return sum;
}

/*
 * How long a test waits for a state kcc guarantees to reach (the worker
 * drained, a count arrived): a bound only a hang exceeds, however slow
 * the guest (TCG on a busy host).  The wait ends as soon as the state
 * holds.
 */
#define KCC_SETTLE_MS	120000

/*
 * samples = processed + sum(dropped) holds once the worker has drained
 * the rings; while it runs, the right side may only lag.  Poll STATUS up
 * to timeout_ms for the equality.  Returns 0 when it holds, -1 when the
 * right side exceeds the left (never allowed), 1 when it did not settle;
 * *st holds the last status read.
 */
static inline int kcc_accounting_settles(int fd, struct kcc_status *st,
					 int timeout_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int waited;

	for (waited = 0; ; waited += 10) {
		if (kcc_status_get(fd, st))
			return -1;
		if (st->processed + kcc_dropped_sum(st) > st->samples)
			return -1;
		if (st->processed + kcc_dropped_sum(st) == st->samples)
			return 0;
		if (waited >= timeout_ms)
			return 1;
		nanosleep(&ts, NULL);
	}
}

static inline void kcc_status_diag(const struct kcc_status *st)
{
	tap_diag("state %u source %u k %u samples %llu processed %llu dropped %llu "
		 "(ring %llu no_task %llu task_cap %llu mem_cap %llu bad %llu "
		 "no_stack %llu stopped %llu) nodes %llu node_drops %llu bytes %llu tasks %u exited %u",
		 st->state, st->source, st->k,
		 (unsigned long long)st->samples,
		 (unsigned long long)st->processed,
		 (unsigned long long)kcc_dropped_sum(st),
		 (unsigned long long)st->dropped[KCC_DROP_RING_FULL],
		 (unsigned long long)st->dropped[KCC_DROP_NO_TASK],
		 (unsigned long long)st->dropped[KCC_DROP_TASK_CAP],
		 (unsigned long long)st->dropped[KCC_DROP_MEM_CAP],
		 (unsigned long long)st->dropped[KCC_DROP_BAD_SAMPLE],
		 (unsigned long long)st->dropped[KCC_DROP_NO_STACK],
		 (unsigned long long)st->dropped[KCC_DROP_STOPPED],
		 (unsigned long long)st->nodes,
		 (unsigned long long)st->node_drops,
		 (unsigned long long)st->bytes, st->tasks, st->tasks_exited);
}

/*
 * Read one whole snapshot (from offset 0 to EOF) into a malloc'ed buffer.
 * chunk is the size of each read(); 0 picks a varying size.  Returns the
 * length, or -errno.
 */
static inline long kcc_read_stream(int fd, char **out, size_t chunk)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	unsigned int i = 0;

	if (!buf)
		return -ENOMEM;
	if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
		free(buf);
		return -errno;
	}
	for (;;) {
		size_t want = chunk ? chunk : 1 + (i++ * 37) % 8191;
		ssize_t n;

		if (cap - len < want) {
			char *nb;

			cap = (cap + want) * 2;
			if (cap > (256u << 20)) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		if ((size_t)n > want) {
			free(buf);
			return -EOVERFLOW;
		}
		len += n;
	}
	*out = buf;
	return len;
}

/*
 * Check a snapshot against kcc.h: header magic, version and sizes; every
 * record inside the buffer, 8-byte sized; task records whose node arrays
 * fit and whose parents point backwards or at a root; the last record is
 * KCC_REC_END and nothing follows it.  Returns NULL when well-formed, else
 * a static description of the first problem; *tasks and *nodes count what
 * was seen.
 */
static inline const char *kcc_stream_check(const char *buf, size_t len,
					   uint64_t *tasks, uint64_t *nodes)
{
	const struct kcc_stream_header *h = (const void *)buf;
	size_t off, nr_ctrs;

	*tasks = 0;
	*nodes = 0;
	if (len < sizeof(*h))
		return "shorter than the stream header";
	if (h->magic != KCC_STREAM_MAGIC)
		return "bad magic";
	if (h->version != KCC_STREAM_VERSION)
		return "unknown version";
	nr_ctrs = h->nr_ctrs;
	if (nr_ctrs < 1 || nr_ctrs > 64)
		return "nr_ctrs out of range";
	if (h->header_size < sizeof(*h) + nr_ctrs * sizeof(struct kcc_metric_desc) ||
	    h->header_size % 8 || h->header_size > len)
		return "bad header_size";
	if (h->k != KCC_K_INF && (h->k < 1 || h->k > KCC_K_MAX))
		return "k out of range";
	if (h->status.processed + kcc_dropped_sum(&h->status) > h->status.samples)
		return "header status: processed + dropped > samples";

	for (off = h->header_size; ; ) {
		const struct kcc_rec *r = (const void *)(buf + off);

		if (len - off < sizeof(*r))
			return "stream ends without KCC_REC_END";
		if (r->size < sizeof(*r) || r->size % 8 || r->size > len - off)
			return "record size out of bounds or unaligned";
		if (r->type == KCC_REC_END) {
			if (r->size != sizeof(*r))
				return "KCC_REC_END with a payload";
			if (off + r->size != len)
				return "bytes after KCC_REC_END";
			return NULL;
		}
		if (r->type == KCC_REC_TASK) {
			const struct kcc_rec_task *t = (const void *)r;
			size_t node_sz = sizeof(struct kcc_rec_node) + nr_ctrs * 8;
			const char *p;
			uint32_t i;

			if (r->size < sizeof(*t))
				return "task record shorter than struct kcc_rec_task";
			if (t->nr_nodes > (r->size - sizeof(*t)) / node_sz ||
			    sizeof(*t) + t->nr_nodes * node_sz != r->size)
				return "task record size does not match nr_nodes";
			if (t->flags & KCC_TASK_FLAGS_MASK &
			    ~(KCC_TASK_EXITED | KCC_TASK_EXEC | KCC_TASK_FOLDED |
			      KCC_TASK_PRUNED))
				return "unknown task flags";
			p = (const char *)(t + 1);
			for (i = 0; i < t->nr_nodes; i++, p += node_sz) {
				const struct kcc_rec_node *n = (const void *)p;

				if (n->parent != KCC_NODE_ROOT_TOP &&
				    n->parent != KCC_NODE_ROOT_SLAB &&
				    n->parent >= t->nr_nodes)
					return "node parent out of range";
				if (n->__reserved)
					return "node reserved field not zero";
			}
			(*tasks)++;
			*nodes += t->nr_nodes;
		} else if (r->type == KCC_REC_MAP) {
			const struct kcc_rec_map *m = (const void *)r;

			if (r->size <= sizeof(*m))
				return "map record without a path";
			if (m->end < m->start)
				return "map record end < start";
			if (!memchr(m->path, 0, r->size - sizeof(*m)))
				return "map path not NUL-terminated";
		}
		/* Unknown record types are skipped, as readers must. */
		off += r->size;
	}
}

/* ---- a sampling session on this process, and its end-of-run checks ----- */

/*
 * The defaults of the adversarial programs: the fallback source (no LBR in
 * the guest), CPU-clock samples every 100 us of this process and its
 * threads and children, and caps small enough that the workloads hit them.
 */
static inline void kcc_config_default(struct kcc_config *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->k = 2;
	c->source = KCC_SOURCE_AUTO;
	c->target = KCC_TARGET_PID;
	c->pid = getpid();
	c->event_type = 1;		/* PERF_TYPE_SOFTWARE */
	c->event_config = 0;		/* PERF_COUNT_SW_CPU_CLOCK */
	c->sample_period = 100000;	/* ns of CPU time */
	c->max_bytes = 4 << 20;
	c->max_tasks = 64;
	c->task_nodes = 256;
	c->stack_depth = 32;
}

/* Open the device, configure and start: the descriptor, or -1 and errno. */
static inline int kcc_session_open(const struct kcc_config *c)
{
	int fd = kcc_open(O_RDWR), err;

	if (fd < 0)
		return -1;
	if (ioctl(fd, KCC_IOC_CONFIGURE, c) || ioctl(fd, KCC_IOC_START, 0)) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* The first session of a program: no device skips it all (exit 4). */
static inline int kcc_session_start(const struct kcc_config *c)
{
	int fd = kcc_session_open(c);

	if (fd < 0) {
		char why[160];

		snprintf(why, sizeof(why), "%s: %s", kcc_dev, strerror(errno));
		if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
			tap_skip_all(why);
		printf("TAP version 13\n1..1\nnot ok 1 configure and start: %s\n",
		       why);
		exit(1);
	}
	return fd;
}

#define KCC_SESSION_CHECKS	4

/*
 * Stop the session and check, as KCC_SESSION_CHECKS TAP results: the
 * workload was sampled; samples = processed + sum(dropped) once drained;
 * the caps of c hold in STATUS and in the stream (tasks <= max_tasks,
 * bytes <= max_bytes, nodes of a task <= task_nodes); the stream is
 * well-formed.
 */
static inline void kcc_session_check(int fd, const struct kcc_config *c)
{
	uint64_t tasks = 0, nodes = 0, max_nodes = 0;
	struct kcc_status st;
	const char *why;
	char *buf = NULL;
	long len;
	int rc;

	if (ioctl(fd, KCC_IOC_STOP, 0))
		tap_diag("KCC_IOC_STOP: %s", strerror(errno));
	rc = kcc_accounting_settles(fd, &st, 10000);
	kcc_status_diag(&st);
	tap_result(st.samples > 0, "the workload was sampled (%llu samples)",
		   (unsigned long long)st.samples);
	tap_result(rc == 0, "samples = processed + sum(dropped)%s",
		   rc < 0 ? " (violated)" : rc > 0 ? " (did not settle in 10 s)" : "");

	len = kcc_read_stream(fd, &buf, 0);
	why = len < 0 ? strerror(-len) : kcc_stream_check(buf, len, &tasks, &nodes);
	if (!why) {
		/* the largest per-task node count, for the task_nodes cap */
		const struct kcc_stream_header *h = (const void *)buf;
		size_t off = h->header_size;

		for (;;) {
			const struct kcc_rec *r = (const void *)(buf + off);

			if (r->type == KCC_REC_END)
				break;
			if (r->type == KCC_REC_TASK) {
				const struct kcc_rec_task *t = (const void *)r;

				if (t->nr_nodes > max_nodes)
					max_nodes = t->nr_nodes;
			}
			off += r->size;
		}
	}
	tap_result(st.tasks <= c->max_tasks && tasks <= c->max_tasks &&
		   st.bytes <= c->max_bytes && max_nodes <= c->task_nodes,
		   "caps hold: tasks %u/%llu in the stream (max %u), bytes %llu (max %llu), "
		   "nodes of one task %llu (max %u)", st.tasks,
		   (unsigned long long)tasks, c->max_tasks,
		   (unsigned long long)st.bytes,
		   (unsigned long long)c->max_bytes,
		   (unsigned long long)max_nodes, c->task_nodes);
	tap_result(!why, "stream of %ld bytes well-formed%s%s (%llu tasks, %llu nodes)",
		   len, why ? ": " : "", why ? why : "",
		   (unsigned long long)tasks, (unsigned long long)nodes);
	free(buf);
}

/* Burn CPU for about ms milliseconds of wall time. */
static inline void kcc_spin_ms(unsigned int ms)
{
	struct timespec a, b;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		int i;

		for (i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

/* The common options of the adversarial programs: -d DEVICE, -h. */
static inline void kcc_prog_args(int argc, char **argv, const char *help)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			kcc_dev = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [-d DEVICE]\n%s\n", argv[0], help);
			exit(strcmp(argv[i], "-h") ? 2 : 0);
		}
	}
}

#endif /* KCC_PROG_H */
