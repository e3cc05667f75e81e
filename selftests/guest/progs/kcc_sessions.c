// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_sessions - several sessions at once (Documentation/kcc-abi.rst,
 * "Sessions").
 *
 * Exact, with injected samples: a system-wide inject session and one on
 * a child process run together.  The child injects a known set of
 * samples, the test's own process another set.  The child's session
 * must hold the child alone, and its forest must equal, node for node,
 * the child's forest in the system-wide session, which must also hold
 * the test's own samples; every count is the number injected.
 *
 * Sampled: a system-wide fp session and a -p fp session on a spinning
 * child at the same time.  The -p session holds that process only; both
 * hold it with samples, whose counts agree within a factor of 2 (the two
 * sessions' events sample the same CPU time independently).
 *
 * With -b (kcc.ko loaded with a small max_bytes): two system-wide
 * inject sessions see more processes than the shared budget holds;
 * together they stay within it (bytes_all = sum of both <=
 * max_bytes_all), having used more than half of it, and every refused
 * sample is a counted KCC_DROP_MEM_CAP.
 *
 * Usage: kcc_sessions [-b]
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or no inject=1.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kcc_guest.h"

/* Samples @counts[i] at label base + 16 i, for i < n, charged to the caller. */
static int inject_set(int fd, uint64_t base, const int *counts, int n)
{
	char one[sizeof(struct kcc_sample) + 16];
	struct kcc_sample *s = (void *)one;
	struct kcc_inject in = { .size = sizeof(in) };
	int total = 0, i, j, k = 0, r;
	char *buf;

	for (i = 0; i < n; i++)
		total += counts[i];
	buf = malloc(total * sizeof(one));
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		/* main at base, then routine i under it. */
		uint64_t st[2] = { base + 16 * (i + 1), base };

		memset(one, 0, sizeof(one));
		s->size = sizeof(one);
		s->nr_stack = 2;
		s->delta = 1;
		memcpy(s + 1, st, sizeof(st));
		for (j = 0; j < counts[i]; j++)
			memcpy(buf + k++ * sizeof(one), one, sizeof(one));
	}
	in.count = total;
	in.data = (uintptr_t)buf;
	in.len = total * sizeof(one);
	r = kcc_ioc(fd, KCC_IOC_INJECT, &in);
	free(buf);
	return r;
}

/* The tasks of a snapshot, kept for comparison. */
struct snap {
	char *buf;
	long len;
	int nr;
	struct gtask t[64];
};

static void snap_task(const struct gtask *t, void *arg)
{
	struct snap *s = arg;

	if (s->nr < 64)
		s->t[s->nr] = *t;
	s->nr++;
}

static int snap_take(int fd, struct snap *s)
{
	uint64_t tasks, nodes;

	memset(s, 0, sizeof(*s));
	s->len = kcc_read_stream(fd, &s->buf, 0);
	if (s->len < 0)
		return (int)s->len;
	if (kcc_stream_check(s->buf, s->len, &tasks, &nodes))
		return -EIO;
	kcc_stream_walk(s->buf, s->len, snap_task, NULL, s);
	return 0;
}

static const struct gtask *snap_find(const struct snap *s, uint32_t pid)
{
	int i;

	for (i = 0; i < s->nr && i < 64; i++)
		if (s->t[i].rec->pid == pid)
			return &s->t[i];
	return NULL;
}

static void forest_diag(const char *what, const struct gtask *t)
{
	uint32_t i;

	if (!t) {
		tap_diag("%s: no such task", what);
		return;
	}
	tap_diag("%s: pid %u samples %llu, %u nodes", what, t->rec->pid,
		 (unsigned long long)t->rec->samples, t->rec->nr_nodes);
	for (i = 0; i < t->rec->nr_nodes && i < 16; i++)
		tap_diag("  node %u parent %d label %#llx calls %llu events %llu samples %llu",
			 i, (int)gtask_node(t, i)->parent,
			 (unsigned long long)gtask_node(t, i)->label,
			 (unsigned long long)gtask_ctr(t, i)[0],
			 (unsigned long long)gtask_ctr(t, i)[1],
			 (unsigned long long)gtask_ctr(t, i)[2]);
}

/* Same nodes, parents, labels and counters, in the same order. */
static int forest_equal(const struct gtask *a, const struct gtask *b)
{
	uint32_t i;

	if (a->rec->nr_nodes != b->rec->nr_nodes || a->node_sz != b->node_sz)
		return 0;
	for (i = 0; i < a->rec->nr_nodes; i++)
		if (memcmp(gtask_node(a, i), gtask_node(b, i), a->node_sz))
			return 0;
	return 1;
}

/*
 * Samples charged to the nodes labelled @label that hang from the top
 * (a k-SF charges a context again in the slab below it: those nodes,
 * with a KCC_NODE_ROOT_SLAB root, are left out).
 */
static uint64_t samples_at(const struct gtask *t, uint64_t label)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < t->rec->nr_nodes; i++)
		if (gtask_node(t, i)->label == label &&
		    gtask_node(t, i)->parent != KCC_NODE_ROOT_SLAB)
			n += gtask_ctr(t, i)[KCC_CTR_SAMPLES];
	return n;
}

static int session(int fd, uint32_t source, uint32_t target, pid_t pid)
{
	struct kcc_config c;

	kcc_cfg_init(&c, source, target, pid, 1);
	return kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ?:
	       kcc_ioc(fd, KCC_IOC_START, NULL);
}

#define CHILD_BASE	0x500000
#define OWN_BASE	0x600000

static void test_inject_exact(void)
{
	static const int child_counts[] = { 7, 3, 11 }, own_counts[] = { 5, 2 };
	int sfd = kcc_open(O_RDWR), pfd = kcc_open(O_RDWR), go[2], done[2];
	struct kcc_status ss, ps;
	const struct gtask *a, *b;
	struct snap sa, sb;
	pid_t c;
	char x;
	int i, st, ok;

	if (sfd < 0 || pfd < 0 || pipe(go) || pipe(done) ||
	    session(sfd, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0)) {
		tap_result(0, "system-wide inject session: %s", strerror(errno));
		return;
	}
	c = fork();
	if (c == 0) {
		/* Through the -p session's file, charged to this child. */
		if (read(go[0], &x, 1) != 1 ||
		    inject_set(pfd, CHILD_BASE, child_counts, 3))
			_exit(1);
		if (write(done[1], "d", 1) != 1)
			_exit(1);
		/* Alive until the parent has its snapshots. */
		if (read(go[0], &x, 1) < 0)
			_exit(1);
		_exit(0);
	}
	ok = c > 0 && !session(pfd, KCC_SOURCE_INJECT, KCC_TARGET_PID, c);
	tap_result(ok, "a second inject session, on the child %d, beside the system-wide one",
		   (int)c);
	if (!ok || write(go[1], "g", 1) != 1 || read(done[0], &x, 1) != 1 ||
	    inject_set(sfd, OWN_BASE, own_counts, 2)) {
		tap_result(0, "injections");
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		return;
	}
	ok = !kcc_status_get(sfd, &ss) && !kcc_status_get(pfd, &ps);
	tap_result(ok && ss.session_id && ps.session_id &&
		   ss.session_id != ps.session_id && ss.samples == 21 + 7 &&
		   ps.samples == 21 && ss.processed == ss.samples &&
		   ps.processed == ps.samples,
		   "samples: system-wide %llu = 21 + 7, the child's session %llu = 21, all processed",
		   (unsigned long long)ss.samples,
		   (unsigned long long)ps.samples);
	if (snap_take(sfd, &sa) || snap_take(pfd, &sb)) {
		tap_result(0, "snapshots of both sessions");
		goto out;
	}
	tap_result(sb.nr == 1 && sb.t[0].rec->pid == (uint32_t)c,
		   "the child's session holds the child only (%d tasks)", sb.nr);
	a = snap_find(&sa, c);
	b = snap_find(&sb, c);
	tap_result(a && b && forest_equal(a, b),
		   "its forest equals, node for node, the child's in the system-wide session");
	ok = a && a->rec->samples == 21;
	for (i = 0; ok && i < 3; i++)
		ok = samples_at(a, CHILD_BASE + 16 * (i + 1)) ==
		     (uint64_t)child_counts[i];
	if (!ok)
		forest_diag("child", a);
	tap_result(ok, "the child's samples by routine: 7, 3, 11 as injected");
	a = snap_find(&sa, getpid());
	if (!a || a->rec->samples != 7)
		forest_diag("own", a);
	tap_result(a && a->rec->samples == 7 && !snap_find(&sb, getpid()) &&
		   samples_at(a, OWN_BASE + 16) == 5 &&
		   samples_at(a, OWN_BASE + 32) == 2,
		   "the test's own 5 + 2 samples are in the system-wide session only");
	free(sa.buf);
	free(sb.buf);
out:
	if (write(go[1], "e", 1) != 1)
		kill(c, SIGKILL);
	waitpid(c, &st, 0);
	close(sfd);
	close(pfd);
}

static volatile unsigned long sink;

static uint64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

__attribute__((noinline)) static void spin(void)
{
	unsigned long i;

	for (i = 0; i < 100000; i++)
		sink += i;
}

/* A system-wide and a -p fp session at once on a child's CPU time. */
static void test_sampled(void)
{
	int sfd = kcc_open(O_RDWR), pfd = kcc_open(O_RDWR), go[2], st;
	const struct gtask *a, *b;
	struct snap sa, sb;
	uint64_t t0, ns = 0, np = 0;
	pid_t c;
	char x;
	int i, only = 1;

	if (sfd < 0 || pfd < 0 || pipe(go))
		return;
	c = fork();
	if (c == 0) {
		if (read(go[0], &x, 1) != 1)
			_exit(1);
		/* 400 ms of CPU time, however loaded the host is. */
		for (t0 = cpu_ms(); cpu_ms() - t0 < 400;)
			spin();
		_exit(0);
	}
	if (c < 0 || session(sfd, KCC_SOURCE_FP, KCC_TARGET_ALL, 0) ||
	    session(pfd, KCC_SOURCE_FP, KCC_TARGET_PID, c)) {
		tap_result(0, "a system-wide and a -p fp session at once: %s",
			   strerror(errno));
		kill(c, SIGKILL);
		waitpid(c, NULL, 0);
		return;
	}
	if (write(go[1], "g", 1) != 1 || waitpid(c, &st, 0) != c ||
	    kcc_ioc(sfd, KCC_IOC_STOP, NULL) || kcc_ioc(pfd, KCC_IOC_STOP, NULL) ||
	    snap_take(sfd, &sa) || snap_take(pfd, &sb)) {
		tap_result(0, "the sampled run");
		return;
	}
	for (i = 0; i < sb.nr && i < 64; i++) {
		if (sb.t[i].rec->tgid != (uint32_t)c)
			only = 0;
	}
	a = snap_find(&sa, c);
	b = snap_find(&sb, c);
	if (a)
		ns = a->rec->samples;
	if (b)
		np = b->rec->samples;
	tap_result(sb.nr >= 1 && only,
		   "sampled: the -p session holds the child's process only (%d tasks)",
		   sb.nr);
	tap_result(ns > 0 && np > 0 && np * 2 >= ns && ns * 2 >= np,
		   "sampled: the child in both sessions, samples %llu (system-wide) and %llu (-p) within a factor of 2",
		   (unsigned long long)ns, (unsigned long long)np);
	kcc_check_accounting(sfd, "sampled, system-wide");
	kcc_check_accounting(pfd, "sampled, -p");
	free(sa.buf);
	free(sb.buf);
	close(sfd);
	close(pfd);
}

/* A child that injects one sample through @fd: a new task and process. */
static int one_process(int fd)
{
	static const int one[] = { 1 };
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(inject_set(fd, CHILD_BASE, one, 1) ? 1 : 0);
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
	       !WEXITSTATUS(st) ? 0 : -1;
}

static void test_budget(void)
{
	int f1 = kcc_open(O_RDWR), f2 = kcc_open(O_RDWR), i, n;
	struct kcc_status s1, s2;
	uint64_t per;

	if (f1 < 0 || f2 < 0 ||
	    session(f1, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0) ||
	    session(f2, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0) ||
	    one_process(f1) || kcc_status_get(f1, &s1) || !s1.bytes) {
		tap_result(0, "two system-wide inject sessions: %s", strerror(errno));
		return;
	}
	/*
	 * Processes until both sessions have refused some for memory: a
	 * forest starts small and grows, so the first process's cost says
	 * little about the others'.  At most 4000.
	 */
	per = s1.bytes;
	tap_diag("budget %llu bytes, the first process %llu",
		 (unsigned long long)s1.max_bytes_all, (unsigned long long)per);
	for (i = 0, n = 4000; i < n; i++) {
		if (one_process(i & 1 ? f2 : f1))
			break;
		if (n == 4000 && i % 16 == 15 &&
		    !kcc_status_get(f1, &s1) && !kcc_status_get(f2, &s2) &&
		    s1.dropped[KCC_DROP_MEM_CAP] && s2.dropped[KCC_DROP_MEM_CAP])
			n = i + 9;	/* a few more beyond the first refusals */
	}
	tap_result(i == n, "%d processes injected one sample each", n);
	kcc_check_accounting(f1, "budget, session 1");
	kcc_check_accounting(f2, "budget, session 2");
	if (kcc_status_get(f1, &s1) || kcc_status_get(f2, &s2)) {
		tap_result(0, "STATUS");
		return;
	}
	tap_diag("session 1: %llu bytes, %u tasks, %llu mem_cap drops; session 2: %llu bytes, %u tasks, %llu drops; all %llu of %llu",
		 (unsigned long long)s1.bytes, s1.tasks,
		 (unsigned long long)s1.dropped[KCC_DROP_MEM_CAP],
		 (unsigned long long)s2.bytes, s2.tasks,
		 (unsigned long long)s2.dropped[KCC_DROP_MEM_CAP],
		 (unsigned long long)s1.bytes_all,
		 (unsigned long long)s1.max_bytes_all);
	tap_result(s1.bytes_all == s1.bytes + s2.bytes &&
		   s1.bytes_all <= s1.max_bytes_all &&
		   2 * s1.bytes_all > s1.max_bytes_all,
		   "both sessions together within the shared budget, more than half of it used");
	tap_result(s1.dropped[KCC_DROP_MEM_CAP] + s2.dropped[KCC_DROP_MEM_CAP] > 0 &&
		   s1.processed + s1.dropped[KCC_DROP_MEM_CAP] == (uint64_t)n + 1 &&
		   s2.processed + s2.dropped[KCC_DROP_MEM_CAP] == (uint64_t)n + 1,
		   "every sample beyond it is a counted mem_cap drop, in each session");
	close(f1);
	close(f2);
}

int main(int argc, char **argv)
{
	struct kcc_version v = { .size = sizeof(v) };
	int fd = kcc_open(O_RDWR);

	if (fd < 0)
		tap_skip_all("no /dev/kcc");
	if (kcc_ioc(fd, KCC_IOC_VERSION, &v) ||
	    !(v.sources & 1u << KCC_SOURCE_INJECT))
		tap_skip_all("kcc.ko without inject=1");
	close(fd);
	if (argc > 1 && !strcmp(argv[1], "-b")) {
		test_budget();
		return tap_exit();
	}
	test_inject_exact();
	test_sampled();
	return tap_exit();
}
