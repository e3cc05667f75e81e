// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_perm - who may use /dev/kcc, as Documentation/testing.rst
 * ("Permissions") states it.  Run as root in the guest; every case runs
 * in a forked child that first becomes another user with kcc_become():
 *
 *   - anyone may open(); CONFIGURE decides, as perf_event_open() does
 *     for the events kcc opens (user space only);
 *   - uid 65534 with no capability: a session on a process of its own
 *     at perf_event_paranoid <= 2 (-EACCES at 3, Debian's level), a
 *     system-wide one at paranoid <= 0 (-EACCES above, perf_allow_cpu());
 *     a process of another user is -EACCES at every level;
 *   - uid 65534 with CAP_PERFMON only: a session on a process of its
 *     own, a system-wide session, and one on a process of another user
 *     (uid 65533) or of root: perf_event_open() lets a perfmon_capable()
 *     caller past ptrace_may_access() (perf_check_permission());
 *   - uid 65534 with CAP_SYS_PTRACE only: a session on the uid 65533
 *     process at paranoid <= 2 (ptrace_may_access() passes), -EACCES at
 *     3, where only CAP_PERFMON opens per-task events;
 *   - root keeps CAP_SYS_PTRACE: a session on the uid 65533 process;
 *   - each of the above at kernel.perf_event_paranoid -1, 1, 2 and 3;
 *   - a descriptor root opened and configured, passed over a Unix socket
 *     (SCM_RIGHTS) to a uid 65534 process without capabilities: STATUS
 *     and read() work on it, as on a passed perf event fd, while that
 *     process's own file cannot attach to root's session (-EACCES);
 *   - checked again at START, where the events attach: uid 65534
 *     configures a session on a process of its own, which then execs a
 *     setuid-root copy of this program; START is -EACCES (the target is
 *     root's now, and undumpable).  The same with a copy that is not
 *     setuid: START succeeds (paranoid 2);
 *   - quotas: uid 65534 without capabilities configures sessions on its
 *     own process until refused: it gets its user_sessions (0: half of
 *     max_sessions), the next is -EDQUOT; while it holds them, uid 65533
 *     and root each configure one (paranoid 2).
 *
 * Usage: kcc_perm (the setuid copy runs as kcc_perm --exec-wait FD)
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or not root.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include "kcc_guest.h"
#include "kcc_sysfs.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NOBODY		65534
#define OTHER		65533
#define PARANOID	KCC_PARANOID
#define NCASES		20	/* results per paranoid level */

/* Run @fn(@arg) in a child that became @uid with @caps: its -errno or 0. */
static int as_user(uid_t uid, uint64_t caps, int (*fn)(void *), void *arg)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		int r = kcc_become(uid, caps);

		_exit(r ? 200 : -fn(arg));
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return -1000;
	return WEXITSTATUS(st) == 200 ? -1000 : -WEXITSTATUS(st);
}

static void expect(int got, int want, const char *what, int level)
{
	if (got != want)
		tap_diag("%s: got %d (%s), expected %d", what, got,
			 got == -1000 ? "child failed" : strerror(-got), want);
	tap_result(got == want, "paranoid %d: %s -> %s", level, what,
		   want ? strerror(-want) : "0");
}

static int do_open(void *arg)
{
	int fd = kcc_open(O_RDWR);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Open and configure an fp session on @arg (a pid, or 0: every task). */
static int do_session(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	struct kcc_version v = { .size = sizeof(v) };
	struct kcc_config c;
	int fd = kcc_open(O_RDWR), r;

	if (fd < 0)
		return -errno;
	r = kcc_ioc(fd, KCC_IOC_VERSION, &v);
	if (!r) {
		kcc_cfg_init(&c, KCC_SOURCE_FP, pid ? KCC_TARGET_PID :
			     KCC_TARGET_ALL, pid, 2);
		r = kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
	}
	close(fd);
	return r;
}

/*
 * The control: what perf_event_open() says to the same caller for the
 * same target, a user-space-only software clock on @arg (a pid; 0: CPU 0,
 * every task), as the events kcc opens.
 */
static int do_perf(void *arg)
{
	pid_t pid = (pid_t)(intptr_t)arg;
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	long fd = syscall(SYS_perf_event_open, &a, pid ? pid : -1,
			  pid ? -1 : 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

/*
 * kcc's CONFIGURE on @target by @uid with @caps (uid 0: this root
 * process as it is), then perf_event_open()'s answer to the same
 * caller: both must be @want.
 */
static void both(uid_t uid, uint64_t caps, pid_t target, int want,
		 const char *what, int level)
{
	void *arg = (void *)(intptr_t)target;
	char buf[160];

	snprintf(buf, sizeof(buf), "kcc CONFIGURE: %s", what);
	expect(uid ? as_user(uid, caps, do_session, arg) : do_session(arg),
	       want, buf, level);
	snprintf(buf, sizeof(buf), "perf_event_open: %s", what);
	expect(uid ? as_user(uid, caps, do_perf, arg) : do_perf(arg),
	       want, buf, level);
}

/*
 * A process of @uid that sleeps until killed.  Changing its uid made it
 * undumpable (suid_dumpable 0), which would refuse even its own user;
 * a program started by that user normally is dumpable.
 */
static pid_t sleeper(uid_t uid)
{
	int ready[2];
	char c = 0;
	pid_t p;

	if (pipe(ready))
		return -1;
	p = fork();
	if (p == 0) {
		close(ready[0]);
		if (kcc_become(uid, 0) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(1);
		/* Only now is it @uid's and dumpable: the checks may start. */
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (p > 0 && read(ready[0], &c, 1) != 1) {
		waitpid(p, NULL, 0);
		p = -1;
	}
	close(ready[0]);
	return p;
}

/* The child's side of the descriptor passing: receive, use, report. */
static int fd_receiver(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte, *stream = NULL;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	struct kcc_status st;
	long len;
	int fd;

	if (kcc_become(NOBODY, 0))
		return 10;
	if (recvmsg(sock, &m, 0) != 1)
		return 12;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return 13;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	if (kcc_status_get(fd, &st) || st.state != KCC_STATE_RUNNING ||
	    st.samples != 3)
		return 14;
	len = kcc_read_stream(fd, &stream, 4096);
	if (len < (long)sizeof(struct kcc_stream_header) ||
	    memcmp(stream, "KCTS", 4))
		return 15;
	free(stream);
	{
		struct kcc_attach a = {
			.size = sizeof(a), .session_id = st.session_id,
		};
		int own = kcc_open(O_RDWR);

		if (own < 0 || kcc_ioc(own, KCC_IOC_ATTACH, &a) != -EACCES)
			return 11;	/* its own file may not read root's */
	}
	return 0;
}

static const char *const receiver_errors[] = {
	[10] = "could not become uid 65534",
	[11] = "its own file's ATTACH to root's session was not EACCES",
	[12] = "no descriptor received",
	[13] = "no SCM_RIGHTS message",
	[14] = "STATUS on the received descriptor failed or is not the session",
	[15] = "read() on the received descriptor gave no stream",
};

/* Root opens, runs an inject (or fp) session, passes it to nobody. */
static void test_fd_passing(void)
{
	uint64_t stack[1] = { 0x401000 };
	char buf[sizeof(struct kcc_sample) + 8], byte = 'x';
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct kcc_sample *s = (void *)buf;
	struct kcc_inject in = {
		.size = sizeof(in), .count = 3,
	};
	struct kcc_config c;
	struct cmsghdr *cm;
	int sv[2], fd, st, r, i;
	char *three = malloc(3 * sizeof(buf));
	pid_t p;

	memset(buf, 0, sizeof(buf));
	s->size = sizeof(buf);
	s->nr_stack = 1;
	s->delta = 1;
	memcpy(s + 1, stack, 8);
	for (i = 0; i < 3; i++)
		memcpy(three + i * sizeof(buf), buf, sizeof(buf));
	in.data = (uintptr_t)three;
	in.len = 3 * sizeof(buf);

	fd = kcc_open(O_RDWR);
	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, 2);
	if (fd < 0 || kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
	    kcc_ioc(fd, KCC_IOC_START, NULL) ||
	    kcc_ioc(fd, KCC_IOC_INJECT, &in)) {
		tap_skip("descriptor passing: no inject session (%s; kcc.ko inject=1)",
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		free(three);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		/* The debug kernel's tinyconfig has no CONFIG_UNIX. */
		if (errno == ENOSYS || errno == EAFNOSUPPORT)
			tap_skip("a descriptor passed over a Unix socket: no AF_UNIX in this kernel (%s)",
				 strerror(errno));
		else
			tap_result(0, "socketpair: %s", strerror(errno));
		close(fd);
		free(three);
		return;
	}
	p = fork();
	if (p == 0) {
		close(sv[0]);
		_exit(fd_receiver(sv[1]));
	}
	close(sv[1]);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	r = sendmsg(sv[0], &m, 0);
	close(sv[0]);
	if (r != 1 || waitpid(p, &st, 0) != p || !WIFEXITED(st))
		st = 1 << 8;
	r = WEXITSTATUS(st);
	if (r && r < (int)ARRAY_SIZE(receiver_errors) && receiver_errors[r])
		tap_diag("receiver: %s", receiver_errors[r]);
	tap_result(r == 0,
		   "a descriptor passed over a Unix socket to uid 65534 without capabilities: STATUS and read() work, its own file cannot attach");
	close(fd);
	free(three);
}

/*
 * ---- checked at START ---------------------------------------------------
 *
 * The target (uid 65534, dumpable) waits on @go; once the profiler has
 * configured its session on it, it execs @image, a copy of this program,
 * which writes on @done whether it runs as root ('e') or not ('n') and
 * waits to be killed.  The profiler then STARTs.
 */
struct exec_race {
	int ready[2], go[2], done[2];
	pid_t target;
	bool suid;		/* @image is setuid root */
};

/* The copy's main: tell the profiler who it is, wait. */
static int exec_wait(const char *wfd)
{
	char c = geteuid() ? 'n' : 'e';
	int fd = atoi(wfd);

	if (write(fd, &c, 1) != 1)
		return 1;
	close(fd);
	for (;;)
		pause();
}

static pid_t exec_target(struct exec_race *x, const char *image)
{
	char fd[16], c;
	pid_t p;

	p = fork();
	if (p == 0) {
		if (kcc_become(NOBODY, 0) || prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ||
		    write(x->ready[1], "r", 1) != 1 || read(x->go[0], &c, 1) != 1)
			_exit(1);
		snprintf(fd, sizeof(fd), "%d", x->done[1]);
		execl(image, "kcc_perm", "--exec-wait", fd, (char *)NULL);
		_exit(1);
	}
	if (p > 0 && read(x->ready[0], &c, 1) != 1) {
		waitpid(p, NULL, 0);
		p = -1;
	}
	return p;
}

/*
 * uid 65534: CONFIGURE on the target, let it exec, START: START's
 * -errno; -ENOEXEC when the setuid copy did not run as root.
 */
static int do_exec_race(void *arg)
{
	struct exec_race *x = arg;
	struct kcc_config c;
	int fd = kcc_open(O_RDWR), r;
	char b = 0;

	if (fd < 0)
		return -errno;
	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, x->target, 2);
	r = kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
	if (r) {
		tap_diag("CONFIGURE on the target before its exec: %s", strerror(-r));
		close(fd);
		return -EIO;
	}
	if (write(x->go[1], "g", 1) != 1 || read(x->done[0], &b, 1) != 1) {
		close(fd);
		return -ECHILD;
	}
	if (x->suid && b != 'e') {
		close(fd);
		return -ENOEXEC;
	}
	r = kcc_ioc(fd, KCC_IOC_START, NULL);
	if (!r)
		kcc_ioc(fd, KCC_IOC_STOP, NULL);
	close(fd);
	return r;
}

/* A copy of this program at @path with @mode, root's. */
static int copy_self(const char *path, mode_t mode)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY), out;
	ssize_t n = 0;

	unlink(path);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL, 0700);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	if (in >= 0)
		close(in);
	if (out < 0 || close(out) || n < 0 || chmod(path, mode))
		return -1;
	return 0;
}

static void test_exec_race(bool suid)
{
	const char *image = suid ? "/tmp/kcc_perm_suid" : "/tmp/kcc_perm_plain";
	struct exec_race x = { .suid = suid };
	int r = -1000, want = suid ? -EACCES : 0;

	if (copy_self(image, suid ? 04755 : 0755) || pipe(x.ready) ||
	    pipe(x.go) || pipe(x.done)) {
		tap_result(0, "%s: %s", image, strerror(errno));
		return;
	}
	x.target = exec_target(&x, image);
	if (x.target > 0)
		r = as_user(NOBODY, 0, do_exec_race, &x);
	if (r == -ENOEXEC) {
		tap_skip("the setuid copy did not run as root (a nosuid /tmp?)");
	} else {
		if (r != want)
			tap_diag("START: got %d (%s), expected %d", r,
				 r == -1000 ? "child failed" : strerror(-r), want);
		tap_result(r == want,
			   "paranoid 2: uid 65534 configures a session on its own process, which then execs a %s copy: START -> %s",
			   suid ? "setuid-root" : "plain", suid ? strerror(EACCES) : "0");
	}
	if (x.target > 0) {
		kill(x.target, SIGKILL);
		waitpid(x.target, NULL, 0);
	}
	close(x.ready[0]);
	close(x.ready[1]);
	close(x.go[0]);
	close(x.go[1]);
	close(x.done[0]);
	close(x.done[1]);
	unlink(image);
}

/* ---- quotas ------------------------------------------------------------- */

struct quota {
	int held[2], done[2];
	pid_t mine;
	long long cap;
};

static long long kcc_param(const char *name)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/module/kcc/parameters/%s", name);
	return kcc_sysfs_ll(path);
}

/* uid 65534: sessions until refused; held until the parent is done. */
static int do_quota(struct quota *q)
{
	struct kcc_config c;
	int fds[64], n = 0, r = 0, ok;
	char b;

	kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, q->mine, 2);
	while (n < (int)ARRAY_SIZE(fds)) {
		fds[n] = kcc_open(O_RDWR);
		if (fds[n] < 0) {
			r = -errno;
			break;
		}
		r = kcc_ioc(fds[n], KCC_IOC_CONFIGURE, &c);
		if (r) {
			close(fds[n]);
			break;
		}
		n++;
	}
	ok = n == q->cap && r == -EDQUOT;
	if (!ok)
		tap_diag("uid 65534 configured %d sessions, then %s; its quota is %lld",
			 n, r ? strerror(-r) : "no refusal", q->cap);
	if (write(q->held[1], ok ? "y" : "n", 1) != 1 ||
	    read(q->done[0], &b, 1) != 1)
		ok = 0;
	while (n > 0)
		close(fds[--n]);
	return ok;
}

static void test_quota(pid_t mine, pid_t other)
{
	struct quota q = { .mine = mine };
	long long per = kcc_param("user_sessions");
	long long max = kcc_param("max_sessions");
	int st, r1 = -1000, r2 = -1000;
	char b = 0;
	pid_t p;

	signal(SIGPIPE, SIG_IGN);	/* a child that died reads no "done" */
	q.cap = per > 0 ? per : max / 2 > 1 ? max / 2 : 1;
	if (per < 0)
		tap_diag("no parameter user_sessions: expecting half of max_sessions");
	if (max < 0 || pipe(q.held) || pipe(q.done)) {
		tap_result(0, "quotas: setup: %s", strerror(errno));
		tap_result(0, "quotas: setup");
		tap_result(0, "quotas: setup");
		return;
	}
	p = fork();
	if (p == 0) {
		close(q.held[0]);
		close(q.done[1]);
		_exit(kcc_become(NOBODY, 0) ? 2 : !do_quota(&q));
	}
	/* Only the child writes held and reads done: its exit ends both. */
	close(q.held[1]);
	close(q.done[0]);
	if (p > 0 && read(q.held[0], &b, 1) == 1) {
		r1 = as_user(OTHER, 0, do_session, (void *)(intptr_t)other);
		r2 = do_session((void *)(intptr_t)mine);
	}
	if (write(q.done[1], "d", 1) != 1 || p <= 0 || waitpid(p, &st, 0) != p)
		st = -1;
	tap_result(b == 'y' && st == 0 && per >= 0,
		   "paranoid 2: uid 65534 configures %lld sessions (user_sessions), the next is -EDQUOT",
		   q.cap);
	expect(r1, 0, "meanwhile uid 65533 configures one on its own process", 2);
	expect(r2, 0, "meanwhile root (no quota) configures one", 2);
	close(q.held[0]);
	close(q.done[1]);
}

static int write_paranoid(int level)
{
	FILE *f = fopen(PARANOID, "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%d\n", level) > 0;
	return (fclose(f) || !ok) ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const int levels[] = { -1, 1, 2, 3 };
	const uint64_t perfmon = 1ull << CAP_PERFMON;
	const uint64_t sys_ptrace = 1ull << CAP_SYS_PTRACE;
	int saved, i;
	pid_t mine, other;

	if (argc == 3 && !strcmp(argv[1], "--exec-wait"))
		return exec_wait(argv[2]);
	saved = kcc_root_paranoid();
	tap_plan(NCASES * (int)ARRAY_SIZE(levels) + 6);

	mine = sleeper(NOBODY);
	other = sleeper(OTHER);
	for (i = 0; i < (int)ARRAY_SIZE(levels); i++) {
		int l = levels[i];

		if (write_paranoid(l)) {
			int j;

			for (j = 0; j < NCASES; j++)
				tap_skip("cannot write %d to %s", l, PARANOID);
			continue;
		}
		/* Debian's level 3: no event without CAP_SYS_ADMIN. */
		int any = l <= 2 ? 0 : -EACCES;

		expect(as_user(NOBODY, 0, do_open, NULL), 0,
		       "uid 65534, no capability: open()", l);
		both(NOBODY, 0, mine, any,
		     "uid 65534, no capability: a session on its own process", l);
		both(NOBODY, 0, 0, l <= 0 ? 0 : -EACCES,
		     "uid 65534, no capability: a system-wide session", l);
		both(NOBODY, 0, other, -EACCES,
		     "uid 65534, no capability: -p a process of uid 65533", l);
		expect(as_user(NOBODY, perfmon, do_open, NULL), 0,
		       "uid 65534, CAP_PERFMON only: open()", l);
		both(NOBODY, perfmon, mine, any,
		     "uid 65534, CAP_PERFMON: a session on its own process", l);
		both(NOBODY, perfmon, 0, any,
		     "uid 65534, CAP_PERFMON: a system-wide session", l);
		both(NOBODY, perfmon, other, any,
		     "uid 65534, CAP_PERFMON: -p a process of uid 65533", l);
		both(NOBODY, perfmon, getpid(), any,
		     "uid 65534, CAP_PERFMON: -p a process of root", l);
		both(NOBODY, sys_ptrace, other, any,
		     "uid 65534, CAP_SYS_PTRACE only: -p a process of uid 65533", l);
		both(0, 0, other, 0,
		     "root (CAP_SYS_ADMIN, CAP_SYS_PTRACE): -p a process of uid 65533", l);
	}
	if (!write_paranoid(2)) {
		test_exec_race(false);
		test_exec_race(true);
		test_quota(mine, other);
	} else {
		for (i = 0; i < 5; i++)
			tap_skip("cannot write 2 to %s", PARANOID);
	}
	write_paranoid(saved);
	kill(mine, SIGKILL);
	kill(other, SIGKILL);
	waitpid(mine, NULL, 0);
	waitpid(other, NULL, 0);

	test_fd_passing();
	return tap_exit();
}
