// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_userns - the paranoid level cannot be faked (issue 26, point 1).
 * Run as root in the guest; root sets kernel.perf_event_paranoid to 2,
 * then each attack runs in a child that became uid 65534 with no
 * capability and tries a system-wide CONFIGURE, which perf_allow_cpu()
 * refuses above level 0:
 *
 *   (a) unshare(CLONE_NEWUSER | CLONE_NEWNS), bind-mount a file holding
 *       "-1" over /proc/sys/kernel/perf_event_paranoid, open /dev/kcc,
 *       CONFIGURE KCC_TARGET_ALL: -EACCES;
 *   (b) open /dev/kcc, then unshare(CLONE_NEWUSER) and chroot() into a
 *       directory holding a fake proc/sys/kernel/perf_event_paranoid
 *       with "-1", CONFIGURE KCC_TARGET_ALL: -EACCES;
 *   (c) unshare(CLONE_NEWUSER) alone: the caller holds every capability
 *       of its own user namespace, CAP_PERFMON and CAP_SYS_ADMIN among
 *       them, which grant nothing: KCC_TARGET_ALL is -EACCES.
 *
 * With kcc.ko inject=1 the sessions are inject sessions, which open no
 * perf event: kcc's check is then the only one (with fp, the perf core
 * refuses the CPU-wide probe event of CONFIGURE at the real level, so
 * the fake alone did not get through on 6.1).
 *
 * Each attack first checks that it took hold (the path reads "-1" in
 * the child); where the kernel refuses unprivileged user namespaces the
 * case is a SKIP, never a pass.  A control shows the test can pass: at
 * the real level -1 the same child's system-wide session is allowed.
 *
 * Usage: kcc_userns
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kcc_guest.h"

#define NOBODY		65534
#define PARANOID	KCC_PARANOID
#define DIR		"/tmp/kcc_userns"
#define FAKE		DIR "/fake"
#define ROOT		DIR "/root"
#define SESSIONS	"/sys/class/misc/kcc/sessions"
#define SKIPPED		99	/* the child could not set the attack up */

/* Which step of the set-up failed, and its errno (stderr, as a diag). */
static int setup_failed(const char *step)
{
	fprintf(stderr, "# set-up: %s: %s\n", step, strerror(errno));
	return SKIPPED;
}

/* Become root of a new user namespace mapping uid/gid 65534. */
static int userns(int flags)
{
	char map[32];

	if (unshare(CLONE_NEWUSER | flags))
		return -1;
	snprintf(map, sizeof(map), "0 %d 1", NOBODY);
	if (kcc_put("/proc/self/setgroups", "deny") ||
	    kcc_put("/proc/self/uid_map", map) || kcc_put("/proc/self/gid_map", map))
		return -1;
	return 0;
}

static int configure_all(int fd)
{
	struct kcc_version v = { .size = sizeof(v) };
	struct kcc_config c;
	int r = kcc_ioc(fd, KCC_IOC_VERSION, &v);

	if (r)
		return r;
	/*
	 * An inject session opens no perf event, so kcc's own check is all
	 * that stands: with fp, the perf core's check of the probe event
	 * (the real sysctl) refuses a faked level on its own.
	 */
	kcc_cfg_init(&c, v.sources & 1u << KCC_SOURCE_INJECT ?
		     KCC_SOURCE_INJECT : KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 2);
	return kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
}

/* (a) a bind mount over the sysctl file in a private mount namespace */
static int attack_bind(void)
{
	int fd;

	if (userns(CLONE_NEWNS))
		return setup_failed("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return setup_failed("mount --make-rprivate /");
	if (mount(FAKE, PARANOID, NULL, MS_BIND, NULL))
		return setup_failed("mount --bind " FAKE " " PARANOID);
	if (kcc_paranoid() != -1)
		return setup_failed("the bind mount does not read -1");
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		return errno;
	return -configure_all(fd);
}

/* (b) the device opened first, then a chroot into a fake /proc */
static int attack_chroot(void)
{
	int fd = kcc_open(O_RDWR);

	if (fd < 0)
		return errno;
	if (userns(0))
		return setup_failed("unshare(CLONE_NEWUSER)");
	if (chroot(ROOT) || chdir("/"))
		return setup_failed("chroot " ROOT);
	if (kcc_paranoid() != -1)
		return setup_failed("the chroot's sysctl does not read -1");
	return -configure_all(fd);
}

/* (c) every capability of a user namespace of one's own */
static int attack_caps(void)
{
	int fd = kcc_open(O_RDWR);

	if (fd < 0)
		return errno;
	if (userns(0))
		return setup_failed("unshare(CLONE_NEWUSER)");
	return -configure_all(fd);
}

/* The control: no trick, the child's plain system-wide session. */
static int plain(void)
{
	int fd = kcc_open(O_RDWR);

	if (fd < 0)
		return errno;
	return -configure_all(fd);
}

/* Run @fn as uid 65534 without capabilities: its -errno, 0 or SKIPPED. */
static int as_nobody(int (*fn)(void))
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		/* Changing uid made it undumpable: /proc/self is root's. */
		if (kcc_become(NOBODY, 0) ||
		    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			_exit(200);
		_exit(fn());
	}
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) ||
	    WEXITSTATUS(st) == 200)
		return -1000;
	return WEXITSTATUS(st) == SKIPPED ? SKIPPED : -WEXITSTATUS(st);
}

static void expect(int got, int want, const char *what)
{
	if (got == SKIPPED) {
		tap_skip("%s: the attack could not be set up here (unprivileged user namespaces off?)",
			 what);
		return;
	}
	if (got != want)
		tap_diag("%s: got %d (%s), expected %d", what, got,
			 got == -1000 ? "child failed" : strerror(-got), want);
	tap_result(got == want, "%s -> %s", what,
		   want ? strerror(-want) : "0");
}

/* Does the sysfs list hold a line for session @id (first field)? */
static int lists(unsigned int id)
{
	FILE *f = fopen(SESSIONS, "r");
	unsigned int i;
	char line[256];
	int found = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u", &i) == 1 && i == id)
			found = 1;
	fclose(f);
	return found;
}

static unsigned int root_id;

static int nobody_lists(void)
{
	return lists(root_id) == 1 ? 1 : 0;
}

/*
 * The sysfs session list shows a user its own sessions only: root's
 * session on itself (its pid) is not in what uid 65534 reads.
 */
static void test_sessions_file(void)
{
	struct kcc_version v = { .size = sizeof(v) };
	struct kcc_status st;
	struct kcc_config c;
	int fd = kcc_open(O_RDWR), r = -1;

	if (fd >= 0 && !kcc_ioc(fd, KCC_IOC_VERSION, &v)) {
		kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_PID, getpid(), 2);
		if (!kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) &&
		    !kcc_status_get(fd, &st)) {
			root_id = st.session_id;
			r = lists(root_id);
		}
	}
	tap_result(r == 1, "root's session %u is in " SESSIONS " for root (%d)",
		   root_id, r);
	r = r == 1 ? as_nobody(nobody_lists) : -1;
	tap_result(r == 0,
		   "uid 65534 does not see root's session (and its target pid) in " SESSIONS " (%d)",
		   r);
	if (fd >= 0)
		close(fd);
}

static int set_paranoid(int level)
{
	char b[16];

	snprintf(b, sizeof(b), "%d\n", level);
	return kcc_put(PARANOID, b);
}

int main(void)
{
	int saved = kcc_root_paranoid();

	mkdir(DIR, 0755);
	if (mkdir(ROOT, 0755) && errno != EEXIST)
		tap_skip_all("cannot make " ROOT);
	if (system("mkdir -p " ROOT "/proc/sys/kernel") ||
	    kcc_put(FAKE, "-1\n") || kcc_put(ROOT PARANOID, "-1\n") ||
	    chmod(DIR, 0755))
		tap_skip_all("cannot write the fake sysctl files");
	tap_plan(7);

	if (set_paranoid(-1)) {
		tap_skip_all("cannot set " PARANOID);
	}
	expect(as_nobody(plain), 0,
	       "control: paranoid -1, uid 65534 system-wide session");
	set_paranoid(2);
	expect(as_nobody(plain), -EACCES,
	       "control: paranoid 2, uid 65534 system-wide session");
	expect(as_nobody(attack_bind), -EACCES,
	       "paranoid 2, uid 65534: unshare -Urm, bind mount of -1 over the sysctl, system-wide session");
	expect(as_nobody(attack_chroot), -EACCES,
	       "paranoid 2, uid 65534: open, unshare -Ur, chroot into a fake /proc, system-wide session");
	expect(as_nobody(attack_caps), -EACCES,
	       "paranoid 2, uid 65534: every capability of its own user namespace, system-wide session");

	test_sessions_file();
	set_paranoid(saved);
	return tap_exit();
}
