// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_maplat - what kcc.ko's mapping hook (kmod/kcc_maps.c) costs a
 * process that no session profiles: the latency of an executable
 * mmap() and munmap(), and of a fork(), exec() and wait(), in a process
 * outside every session's target (a grandchild of this program,
 * reparented to init), in four states:
 *
 *   none     no session;
 *   ready    a per-task inject session of this program, configured;
 *   running  that session started;
 *   drain    started, while a thread of this program injects samples
 *            as fast as it can, so that the worker applies them with
 *            kcc's lock held;
 *   child    the same, measured in a child of this program: inside the
 *            target's tree, whose mappings the hook captures.
 *
 * Figures only: median, 99th percentile and maximum, in microseconds.
 * Run it in the guest with kccmode=only kccrun=kcc_maplat (inject=1);
 * Documentation/benchmark.rst has the figures.
 *
 * Usage: kcc_maplat [-n MMAPS] [-e EXECS]
 *        kcc_maplat -x			(the exec'd side: exits at once)
 * Output: TAP, one line a state.  Exit 0 when every state was measured,
 * 1 otherwise, 4 without /dev/kcc or inject=1.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kcc_guest.h"

#define FLOOD_SAMPLES	1024	/* a KCC_IOC_INJECT */
#define FLOOD_FRAMES	32
#define FLOOD_ROUTINES	512

struct lat {
	uint64_t med, p99, max;		/* ns */
};

struct result {
	int ok;
	struct lat mmap, exec;
};

static const char *self = "/t/kcc_maplat";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static struct lat summary(uint64_t *v, int n)
{
	struct lat l;

	qsort(v, n, sizeof(*v), cmp_u64);
	l.med = v[n / 2];
	l.p99 = v[(n * 99) / 100];
	l.max = v[n - 1];
	return l;
}

/* The measuring side: @n mappings, @e execs. */
static int measure(int n, int e, struct result *r)
{
	uint64_t *v = calloc(n > e ? n : e, sizeof(*v)), t;
	int fd = open(self, O_RDONLY), i, st;
	void *p;
	pid_t c;

	if (!v || fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		t = now_ns();
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return -1;
		munmap(p, 4096);
		v[i] = now_ns() - t;
	}
	r->mmap = summary(v, n);
	for (i = 0; i < e; i++) {
		t = now_ns();
		c = fork();
		if (c == 0) {
			execl(self, self, "-x", (char *)NULL);
			_exit(127);
		}
		if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			return -1;
		v[i] = now_ns() - t;
	}
	r->exec = summary(v, e);
	close(fd);
	free(v);
	r->ok = 1;
	return 0;
}

/*
 * Measure in a grandchild that init has adopted: outside this
 * program's tree, so outside its session's target; or (@inside) in a
 * child, inside it.
 */
static int measure_in(int n, int e, struct result *r, int inside)
{
	int pfd[2], st;
	pid_t c, mid;
	ssize_t got;

	memset(r, 0, sizeof(*r));
	if (pipe(pfd))
		return -1;
	c = fork();
	if (c == 0) {
		close(pfd[0]);
		mid = getpid();
		if (!inside && fork() != 0)
			_exit(0);
		while (!inside && getppid() == mid)
			usleep(1000);
		measure(n, e, r);
		_exit(write(pfd[1], r, sizeof(*r)) == sizeof(*r) ? 0 : 1);
	}
	close(pfd[1]);
	if (c < 0 || waitpid(c, &st, 0) != c) {
		close(pfd[0]);
		return -1;
	}
	got = read(pfd[0], r, sizeof(*r));
	close(pfd[0]);
	return got == sizeof(*r) && r->ok ? 0 : -1;
}

struct flood {
	int fd;
	volatile int stop;
	uint64_t batches;
};

/* Injects batches of deep samples until told to stop. */
static void *flood_main(void *arg)
{
	struct flood *f = arg;
	size_t one = sizeof(struct kcc_sample) + 8 * FLOOD_FRAMES;
	char *buf = calloc(FLOOD_SAMPLES, one);
	struct kcc_inject in = { .size = sizeof(in), .count = FLOOD_SAMPLES };
	struct rnd r = { 12345 };
	int i, j;

	if (!buf)
		return NULL;
	in.data = (uintptr_t)buf;
	in.len = FLOOD_SAMPLES * one;
	while (!f->stop) {
		for (i = 0; i < FLOOD_SAMPLES; i++) {
			struct kcc_sample *s = (void *)(buf + i * one);
			uint64_t *st = (uint64_t *)(s + 1);

			s->size = one;
			s->nr_stack = FLOOD_FRAMES;
			s->delta = 1;
			for (j = 0; j < FLOOD_FRAMES; j++)
				st[j] = 0x400000 + 64 *
					rnd_below(&r, FLOOD_ROUTINES) + (j ? 1 : 0);
		}
		if (kcc_ioc(f->fd, KCC_IOC_INJECT, &in) && errno != EAGAIN)
			break;
		f->batches++;
	}
	free(buf);
	return NULL;
}

static void report(const char *state, int ret, const struct result *r,
		   uint64_t batches)
{
	if (ret) {
		tap_result(0, "%s: measured", state);
		return;
	}
	tap_result(1, "%s: mmap+munmap us median %.1f p99 %.1f max %.1f; fork+exec+wait us median %.1f p99 %.1f max %.1f",
		   state, r->mmap.med / 1e3, r->mmap.p99 / 1e3,
		   r->mmap.max / 1e3, r->exec.med / 1e3, r->exec.p99 / 1e3,
		   r->exec.max / 1e3);
	if (batches)
		tap_diag("%s: %llu batches of %d samples injected meanwhile",
			 state, (unsigned long long)batches, FLOOD_SAMPLES);
}

int main(int argc, char **argv)
{
	struct flood f = { 0 };
	struct kcc_config c;
	struct result r;
	pthread_t th;
	int n = 2000, e = 200, opt, fd, ret;

	if (argc == 2 && !strcmp(argv[1], "-x"))
		return 0;
	while ((opt = getopt(argc, argv, "n:e:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'e')
			e = atoi(optarg);
		else
			return 2;
	}
	if (n < 1 || e < 1)
		return 2;
	if (argv[0][0] == '/')
		self = argv[0];
	fd = kcc_open_inject();

	report("none", measure_in(n, e, &r, 0), &r, 0);
	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_PID, getpid(), 3);
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c)) {
		tap_result(0, "a per-task inject session: %s", strerror(errno));
		return tap_exit();
	}
	report("ready", measure_in(n, e, &r, 0), &r, 0);
	if (kcc_ioc(fd, KCC_IOC_START, NULL)) {
		tap_result(0, "START: %s", strerror(errno));
		return tap_exit();
	}
	report("running", measure_in(n, e, &r, 0), &r, 0);
	f.fd = fd;
	if (pthread_create(&th, NULL, flood_main, &f)) {
		tap_result(0, "the injecting thread");
		return tap_exit();
	}
	ret = measure_in(n, e, &r, 0);
	report("drain", ret, &r, f.batches);
	f.batches = 0;
	ret = measure_in(n, e, &r, 1);
	f.stop = 1;
	pthread_join(th, NULL);
	report("child", ret, &r, f.batches);
	close(fd);
	return tap_exit();
}
