// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_readers - several files reading one session, as
 * Documentation/kcc-abi.rst ("Readers") states it.  One file owns an
 * inject session; forked children inject a known number of samples
 * through it (charged to themselves) and exit.  Then:
 *
 *   - two attached readers both see the exited child, with its samples;
 *     it stays until every attached reader (the owner included) has had
 *     a snapshot with it, and only then is it freed;
 *   - an attached reader that never reads keeps it; closing that reader
 *     frees it; RESET frees it whoever has read it;
 *   - poll() readiness is per file: a read on one file does not make
 *     another one's samples old;
 *   - a reader in a new pid namespace (unshare(CLONE_NEWPID)) sees the
 *     live tasks of the session live, itself as pid 1 and the tasks it
 *     cannot see as pid 0, and the stream says so (KCC_HDR_PID_NS); the
 *     owner sees that reader with its pid of the initial namespace.
 *
 * Usage: kcc_readers
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or no inject=1.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "kcc_guest.h"

/* What a snapshot says of one task. */
struct seen {
	uint32_t pid;		/* wanted */
	int found;
	uint32_t tgid;
	uint32_t flags;
	uint64_t samples;
};

static void seen_task(const struct gtask *t, void *arg)
{
	struct seen *s = arg;

	if (t->rec->pid != s->pid)
		return;
	s->found++;
	s->tgid = t->rec->tgid;
	s->flags = t->rec->flags;
	s->samples = t->rec->samples;
}

/* Look @pid up in a fresh snapshot of @fd; the header flags in *hflags. */
static int lookup(int fd, uint32_t pid, struct seen *s, uint32_t *hflags)
{
	uint64_t tasks, nodes;
	char *buf = NULL;
	long len;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	len = kcc_read_stream(fd, &buf, 0);
	if (len < 0)
		return (int)len;
	if (kcc_stream_check(buf, len, &tasks, &nodes)) {
		free(buf);
		return -EIO;
	}
	if (hflags)
		*hflags = ((const struct kcc_stream_header *)buf)->flags;
	kcc_stream_walk(buf, len, seen_task, NULL, s);
	free(buf);
	return 0;
}

/* @n one-frame samples at a label of @tag, charged to the caller. */
static int inject(int fd, int n, uint64_t tag)
{
	char one[sizeof(struct kcc_sample) + 8];
	struct kcc_sample *s = (void *)one;
	struct kcc_inject in = { .size = sizeof(in) };
	char *buf = malloc(n * sizeof(one));
	uint64_t label = 0x401000 + 16 * tag;
	int i, r;

	if (!buf)
		return -ENOMEM;
	memset(one, 0, sizeof(one));
	s->size = sizeof(one);
	s->nr_stack = 1;
	s->delta = 1;
	memcpy(s + 1, &label, 8);
	for (i = 0; i < n; i++)
		memcpy(buf + i * sizeof(one), one, sizeof(one));
	in.count = n;
	in.data = (uintptr_t)buf;
	in.len = n * sizeof(one);
	r = kcc_ioc(fd, KCC_IOC_INJECT, &in);
	free(buf);
	return r;
}

/* A child that injects @n samples through @fd and exits: its pid. */
static pid_t child_inject(int fd, int n)
{
	pid_t p = fork();
	int st;

	if (p == 0)
		_exit(inject(fd, n, 1) ? 1 : 0);
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
	    WEXITSTATUS(st))
		return -1;
	return p;
}

static int attach(int fd, uint32_t id)
{
	struct kcc_attach a = { .size = sizeof(a), .session_id = id };

	return kcc_ioc(fd, KCC_IOC_ATTACH, &a);
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Exited task @pid with @n samples in a snapshot of @fd? */
static int has_exited(int fd, pid_t pid, uint64_t n)
{
	struct seen s;

	return !lookup(fd, pid, &s, NULL) && s.found == 1 &&
	       (s.flags & KCC_TASK_EXITED) && s.samples == n;
}

static int gone(int fd, pid_t pid)
{
	struct seen s;

	return !lookup(fd, pid, &s, NULL) && !s.found;
}

static void test_exited(int own, uint32_t id)
{
	int r1 = kcc_open(O_RDWR), r2 = kcc_open(O_RDWR), r3;
	pid_t c;

	tap_result(r1 >= 0 && r2 >= 0 && !attach(r1, id) && !attach(r2, id),
		   "two more files attach to the session");
	c = child_inject(own, 5);
	tap_result(c > 0, "a child injected 5 samples and exited");
	tap_result(has_exited(r1, c, 5), "reader 1 sees the exited child, 5 samples");
	tap_result(has_exited(r2, c, 5), "reader 2 sees it too, 5 samples");
	tap_result(has_exited(r1, c, 5),
		   "reader 1 again: still there, the owner has not read it");
	tap_result(has_exited(own, c, 5), "the owner sees it");
	tap_result(gone(r1, c), "reader 1 again: freed once all three had it");

	r3 = kcc_open(O_RDWR);
	c = child_inject(own, 3);
	tap_result(r3 >= 0 && !attach(r3, id) && c > 0 &&
		   has_exited(r1, c, 3) && has_exited(r2, c, 3) &&
		   has_exited(own, c, 3),
		   "a second child: the three readers see it");
	tap_result(has_exited(r1, c, 3),
		   "it stays while a fourth attached reader has not read");
	close(r3);
	tap_result(gone(r1, c), "closing that reader frees it");

	c = child_inject(own, 2);
	tap_result(c > 0 && has_exited(r1, c, 2) &&
		   !kcc_ioc(own, KCC_IOC_RESET, NULL) && gone(r2, c),
		   "RESET frees an exited child reader 2 has not seen");

	/* Readiness: STATUS applies what is pending. */
	{
		struct kcc_status st;

		tap_result(!inject(own, 1, 2) && !kcc_status_get(r2, &st) &&
			   readable(r1) && readable(r2),
			   "poll: both readers readable after a new sample");
		tap_result(gone(r1, 1) && !readable(r1) && readable(r2),
			   "poll: reader 1's read leaves reader 2 readable, not itself");
	}
	close(r1);
	close(r2);
}

/*
 * The pid namespace part, in the grandchild that is pid 1 of a new
 * namespace: returns a bit per failed check.
 */
static int in_pidns(int own, uint32_t id, uint64_t outer_samples)
{
	struct seen me, outer;
	uint32_t hf = 0;
	int fd, bad = 0;

	if (getpid() != 1)
		return 1;
	if (inject(own, 3, 3))
		return 2;
	fd = kcc_open(O_RDWR);
	if (fd < 0 || attach(fd, id))
		return 4;
	if (lookup(fd, 1, &me, &hf))
		return 8;
	if (!(hf & KCC_HDR_PID_NS))
		bad |= 16;
	if (me.found != 1 || me.tgid != 1 || me.samples != 3 ||
	    (me.flags & KCC_TASK_EXITED))
		bad |= 32;
	/* The test's process outside: pid 0 here, alive, its samples. */
	if (lookup(fd, 0, &outer, NULL) || outer.found != 1 ||
	    outer.samples != outer_samples || (outer.flags & KCC_TASK_EXITED))
		bad |= 64;
	/* And again: a first read must not have freed it as exited. */
	if (lookup(fd, 0, &outer, NULL) || outer.found != 1 ||
	    (outer.flags & KCC_TASK_EXITED))
		bad |= 128;
	return bad;
}

static void test_pidns(int own, uint32_t id)
{
	int pfd[2], st = 0;
	pid_t x, g = 0;
	struct seen s;

	if (pipe(pfd) || inject(own, 4, 4) || lookup(own, getpid(), &s, NULL) ||
	    s.found != 1) {
		tap_result(0, "setup of the pid namespace test");
		return;
	}
	x = fork();
	if (x == 0) {
		pid_t gc;

		close(pfd[0]);
		if (unshare(CLONE_NEWPID))
			_exit(errno == EINVAL || errno == ENOSYS ? 250 : 251);
		gc = fork();
		if (gc == 0)
			_exit(in_pidns(own, id, s.samples));
		if (gc < 0 || write(pfd[1], &gc, sizeof(gc)) != sizeof(gc) ||
		    waitpid(gc, &st, 0) != gc || !WIFEXITED(st))
			_exit(252);
		_exit(WEXITSTATUS(st));
	}
	close(pfd[1]);
	if (read(pfd[0], &g, sizeof(g)) != sizeof(g))
		g = 0;
	close(pfd[0]);
	if (x < 0 || waitpid(x, &st, 0) != x || !WIFEXITED(st)) {
		tap_result(0, "pid namespace child");
		return;
	}
	st = WEXITSTATUS(st);
	if (st == 250) {
		tap_skip("no pid namespaces in this kernel");
		return;
	}
	if (st)
		tap_diag("in the namespace: failed checks 0x%x", st);
	tap_result(st == 0,
		   "a reader in a new pid namespace: itself pid 1 alive, the outer task pid 0 alive, twice, KCC_HDR_PID_NS");
	tap_result(g > 0 && !lookup(own, g, &s, NULL) && s.found == 1 &&
		   s.samples == 3,
		   "the owner sees that reader by its pid of the initial namespace (%d)",
		   (int)g);
}

int main(void)
{
	struct kcc_version v = { .size = sizeof(v) };
	struct kcc_status st;
	struct kcc_config c;
	int own;

	own = kcc_open(O_RDWR);
	if (own < 0)
		tap_skip_all("no /dev/kcc");
	if (kcc_ioc(own, KCC_IOC_VERSION, &v) ||
	    !(v.sources & 1u << KCC_SOURCE_INJECT))
		tap_skip_all("kcc.ko without inject=1");
	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, 2);
	if (kcc_ioc(own, KCC_IOC_CONFIGURE, &c) ||
	    kcc_ioc(own, KCC_IOC_START, NULL) || kcc_status_get(own, &st) ||
	    !st.session_id) {
		tap_result(0, "an inject session with an id: %s", strerror(errno));
		return tap_exit();
	}
	tap_result(st.nr_readers == 1, "the owner is the session's one reader (%u)",
		   st.nr_readers);
	test_exited(own, st.session_id);
	test_pidns(own, st.session_id);
	kcc_check_accounting(own, "kcc_readers");
	close(own);
	return tap_exit();
}
