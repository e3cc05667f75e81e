// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_setuid - the mappings of a setuid image are not recorded (issue
 * 26, point 3).  Run as root in the guest with kcc.ko inject=1: root
 * runs a system-wide inject session, installs copies of this program
 * as /tmp/kcc_setuid.suid (owner root, mode 4755) and
 * /tmp/kcc_setuid.plain (mode 0755), and a child that became uid 65534
 * execs each.  The exec'd image says it is running (its execve() has
 * returned, so the mapping hook's task_work has run) and sleeps; root
 * then reads the session's stream:
 *
 *   - control: the plain image's mapping of itself is there;
 *   - the setuid image (not dumpable: SUID_DUMP_USER is not its level)
 *     has no mapping in the stream, as perf records nothing of it.
 *
 * Usage: kcc_setuid		(the test)
 *        kcc_setuid -w		(the exec'd side: "r" on fd 3, then sleep)
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device, not root or no inject.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kcc_guest.h"

#define NOBODY	65534

struct look {
	uint32_t tgid;
	int maps;		/* maps of tgid */
	int self;		/* of them, of a kcc_setuid image */
};

static void look_map(const struct kcc_rec_map *m, void *arg)
{
	struct look *l = arg;

	if (m->tgid != l->tgid)
		return;
	l->maps++;
	if (strstr(m->path, "/tmp/kcc_setuid."))
		l->self++;
}

static void no_task(const struct gtask *t, void *arg)
{
	(void)t;
	(void)arg;
}

/* A child of uid 65534 execs @img; once it runs, read @fd's stream. */
static int exec_and_look(int fd, const char *img, struct look *l)
{
	char c = 0, *buf = NULL;
	uint64_t tasks, nodes;
	int ready[2], ret = -1;
	long len;
	pid_t p;

	if (pipe(ready))
		return -1;
	p = fork();
	if (p == 0) {
		close(ready[0]);
		if (ready[1] != 3 && (dup2(ready[1], 3) != 3))
			_exit(1);
		if (kcc_become(NOBODY, 0))
			_exit(1);
		execl(img, img, "-w", (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	if (p > 0 && read(ready[0], &c, 1) == 1 && c == 'r') {
		memset(l, 0, sizeof(*l));
		l->tgid = p;
		len = kcc_read_stream(fd, &buf, 0);
		if (len >= 0 && !kcc_stream_check(buf, len, &tasks, &nodes)) {
			kcc_stream_walk(buf, len, no_task, look_map, l);
			ret = 0;
		}
		free(buf);
	}
	close(ready[0]);
	if (p > 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct kcc_version v = { .size = sizeof(v) };
	const char *self = "/t/kcc_setuid";
	struct kcc_config cfg;
	struct look l;
	int fd;

	if (argc == 2 && !strcmp(argv[1], "-w")) {
		if (write(3, "r", 1) != 1)
			return 1;
		for (;;)
			pause();
	}
	if (geteuid())
		tap_skip_all("not root");
	if (argv[0][0] == '/')
		self = argv[0];
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no /dev/kcc");
	if (kcc_ioc(fd, KCC_IOC_VERSION, &v) ||
	    !(v.sources & 1u << KCC_SOURCE_INJECT))
		tap_skip_all("kcc.ko without inject=1");
	if (kcc_install(self, "/tmp/kcc_setuid.plain", 0755) ||
	    kcc_install(self, "/tmp/kcc_setuid.suid", 04755))
		tap_skip_all("cannot install the images in /tmp");
	tap_plan(2);
	kcc_cfg_init(&cfg, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, 1);
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &cfg) ||
	    kcc_ioc(fd, KCC_IOC_START, NULL)) {
		tap_result(0, "an inject session: %s", strerror(errno));
		return tap_exit();
	}
	if (exec_and_look(fd, "/tmp/kcc_setuid.plain", &l))
		tap_result(0, "control: a stream while the plain image runs");
	else
		tap_result(l.self > 0,
			   "control: uid 65534 runs a plain image: its mappings are recorded (%d maps, %d of the image)",
			   l.maps, l.self);
	if (exec_and_look(fd, "/tmp/kcc_setuid.suid", &l))
		tap_result(0, "a stream while the setuid image runs");
	else
		tap_result(l.maps == 0,
			   "uid 65534 runs a setuid-root image: no mapping of it recorded (%d maps, %d of the image)",
			   l.maps, l.self);
	close(fd);
	unlink("/tmp/kcc_setuid.plain");
	unlink("/tmp/kcc_setuid.suid");
	return tap_exit();
}
