// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_suidexec - a per-task session of an unprivileged user stops
 * sampling a task that execs a setuid image, as perf does (issue 26,
 * point 3).  Run as root in the guest: root sets kernel.
 * perf_event_paranoid to 2 and installs copies of this program as
 * /tmp/kcc_suidexec.suid (owner root, mode 4755) and
 * /tmp/kcc_suidexec.plain (0755).  A child that became uid 65534 then
 * profiles a process of its own with the fp source on cpu-clock; after
 * START that process (a) or a child it forked (b: the events are
 * inherited) execs one of the copies, which spins 300 ms of CPU time:
 *
 *   - control: the plain copy's samples are in the profile;
 *   - the setuid copy's are not, nor any mapping of it.
 *
 * The perf core detaches every perf event of a task whose new image is
 * not dumpable (begin_new_exec() -> perf_event_exit_task()), kcc.ko's
 * kernel counters as much as perf_event_open()'s, so this held before
 * issue 26 as well; the test keeps it so.  Where perf is packed
 * (/lbr/perf), perf record of the same two images as uid 65534 is
 * printed beside it.
 *
 * Usage: kcc_suidexec		(the test)
 *        kcc_suidexec -s		(the exec'd side: spin, exit)
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "kcc_guest.h"

#define NOBODY		65534
#define PLAIN		"/tmp/kcc_suidexec.plain"
#define SUID		"/tmp/kcc_suidexec.suid"
#define PERF		"/lbr/perf"

struct seen {
	int err;		/* 0, or the -errno of the session */
	uint64_t samples;	/* of every task of the profile */
	uint64_t spin;		/* the samples counters of the nodes labelled
				 * in the exec'd side's code, summed */
	int tasks;		/* task records */
	int maps;		/* mappings of a /tmp/kcc_suidexec.* image */
};

static volatile unsigned long sink;

/*
 * The exec'd side's code, in a section of its own: the program is
 * static and not position-independent, so these addresses are the same
 * in every copy, and a sample whose context ends there was taken after
 * the exec (the target's few instructions between its wakeup and
 * execve() are elsewhere).
 */
#define SPIN_CODE __attribute__((noinline, section("kcc_spin")))
extern const char __start_kcc_spin[], __stop_kcc_spin[];

static SPIN_CODE void spin_step(unsigned long i)
{
	sink += i * i;
}

/* The exec'd side: 300 ms of CPU time in calls. */
static SPIN_CODE int spin(void)
{
	clock_t end = clock() + CLOCKS_PER_SEC * 3 / 10;
	unsigned long i;

	while (clock() < end)
		for (i = 0; i < 1000; i++)
			spin_step(i);
	return 0;
}

static void seen_task(const struct gtask *t, void *arg)
{
	uint64_t lo = (uintptr_t)__start_kcc_spin;
	uint64_t hi = (uintptr_t)__stop_kcc_spin;
	struct seen *s = arg;
	uint32_t i;

	s->samples += t->rec->samples;
	s->tasks++;
	for (i = 0; i < t->rec->nr_nodes; i++)
		if (gtask_node(t, i)->label >= lo &&
		    gtask_node(t, i)->label < hi)
			s->spin += gtask_ctr(t, i)[KCC_CTR_SAMPLES];
}

static void seen_map(const struct kcc_rec_map *m, void *arg)
{
	struct seen *s = arg;

	if (strstr(m->path, "/tmp/kcc_suidexec."))
		s->maps++;
}

/*
 * The target: it waits for @go (sent after START), then execs @img (a)
 * or forks a child, which inherits the session's events, that does (b)
 * and waits for it.
 */
static void target(int go, const char *img, int via_child)
{
	char c;
	pid_t p;

	if (read(go, &c, 1) != 1)
		_exit(1);
	close(go);
	if (via_child) {
		p = fork();
		if (p < 0)
			_exit(1);
		if (p > 0) {
			waitpid(p, NULL, 0);
			_exit(0);
		}
	}
	execl(img, img, "-s", (char *)NULL);
	_exit(127);
}

/* As uid 65534: profile a process of our own while it runs @img. */
static void profile(const char *img, int via_child, struct seen *s)
{
	struct kcc_config cfg;
	int go[2], fd, st;
	uint64_t tasks, nodes;
	char *buf = NULL;
	long len;
	pid_t t;

	memset(s, 0, sizeof(*s));
	s->err = kcc_become(NOBODY, 0);
	if (s->err)
		return;
	/*
	 * The uid change left this process (and the target it forks) not
	 * dumpable, which START refuses as perf would; its own user's
	 * process is dumpable again as a plain exec would make it.
	 */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)) {
		s->err = -errno;
		return;
	}
	if (pipe(go)) {
		s->err = -errno;
		return;
	}
	t = fork();
	if (t == 0) {
		close(go[1]);
		target(go[0], img, via_child);
	}
	close(go[0]);
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		fd = -errno;
	kcc_cfg_init(&cfg, KCC_SOURCE_FP, KCC_TARGET_PID, t, 3);
	cfg.event_type = PERF_TYPE_SOFTWARE;
	cfg.event_config = PERF_COUNT_SW_CPU_CLOCK;
	cfg.flags |= KCC_CFG_EVENT;
	cfg.sample_period = 100000;	/* ns */
	if (t < 0 || fd < 0)
		s->err = t < 0 ? -EAGAIN : fd;
	else
		s->err = kcc_ioc(fd, KCC_IOC_CONFIGURE, &cfg) ?:
			 kcc_ioc(fd, KCC_IOC_START, NULL);
	/* The exec comes after START. */
	if (write(go[1], "g", 1) != 1 && !s->err)
		s->err = -EPIPE;
	close(go[1]);
	if (t > 0)
		waitpid(t, &st, 0);
	if (!s->err)
		s->err = kcc_ioc(fd, KCC_IOC_STOP, NULL);
	if (!s->err) {
		len = kcc_read_stream(fd, &buf, 0);
		if (len < 0)
			s->err = (int)len;
		else if (kcc_stream_check(buf, len, &tasks, &nodes))
			s->err = -EPROTO;
		else
			kcc_stream_walk(buf, len, seen_task, seen_map, s);
		free(buf);
	}
	if (fd >= 0)
		close(fd);
}

/* profile() in a child of root's; what it saw comes back on a pipe. */
static void as_nobody(const char *img, int via_child, struct seen *s)
{
	int p[2];
	pid_t c;

	memset(s, 0, sizeof(*s));
	s->err = -EAGAIN;
	if (pipe(p))
		return;
	c = fork();
	if (c == 0) {
		close(p[0]);
		profile(img, via_child, s);
		_exit(write(p[1], s, sizeof(*s)) == sizeof(*s) ? 0 : 1);
	}
	close(p[1]);
	if (c < 0 || read(p[0], s, sizeof(*s)) != sizeof(*s))
		s->err = -EPIPE;
	close(p[0]);
	if (c > 0)
		waitpid(c, NULL, 0);
}

/* perf record of @img as uid 65534: its samples of the image, or -1. */
static long perf_samples(const char *img)
{
	char cmd[512];
	long n = -1;
	FILE *f;
	pid_t c;
	int p[2];

	if (access(PERF, X_OK) || pipe(p))
		return -1;
	c = fork();
	if (c == 0) {
		close(p[0]);
		if (kcc_become(NOBODY, 0))
			_exit(1);
		snprintf(cmd, sizeof(cmd),
			 PERF " record -q -e cpu-clock -c 100000 -o /tmp/kcc_suidexec.perf -- %s -s >/dev/null 2>&1; "
			 PERF " script -i /tmp/kcc_suidexec.perf -F comm 2>/dev/null | grep -c kcc_suidexec",
			 img);
		f = popen(cmd, "r");
		if (!f || fscanf(f, "%ld", &n) != 1)
			n = -1;
		if (f)
			pclose(f);
		unlink("/tmp/kcc_suidexec.perf");
		_exit(write(p[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
	}
	close(p[1]);
	if (c < 0 || read(p[0], &n, sizeof(n)) != sizeof(n))
		n = -1;
	close(p[0]);
	if (c > 0)
		waitpid(c, NULL, 0);
	return n;
}

int main(int argc, char **argv)
{
	const char *self = "/t/kcc_suidexec", *how;
	struct seen s;
	char lvl[16];
	int saved, b;

	if (argc == 2 && !strcmp(argv[1], "-s"))
		return spin();
	saved = kcc_root_paranoid();
	if (argv[0][0] == '/')
		self = argv[0];
	if (kcc_install(self, PLAIN, 0755) || kcc_install(self, SUID, 04755))
		tap_skip_all("cannot install the images in /tmp");
	if (kcc_put(KCC_PARANOID, "2\n"))
		tap_skip_all("cannot set " KCC_PARANOID);
	tap_plan(4);
	for (b = 0; b < 2; b++) {
		how = b ? "its child execs" : "it execs";
		as_nobody(PLAIN, b, &s);
		tap_result(!s.err && s.spin > 0 && s.maps > 0,
			   "control: uid 65534 profiles a process of its own; after START %s a plain image: sampled (%llu sample counts on nodes of the image's code; %llu samples, %d tasks, %d maps of the image; %s)",
			   how, (unsigned long long)s.spin,
			   (unsigned long long)s.samples, s.tasks, s.maps,
			   s.err ? strerror(-s.err) : "no error");
		as_nobody(SUID, b, &s);
		tap_result(!s.err && s.spin == 0 && s.maps == 0,
			   "uid 65534 profiles a process of its own; after START %s a setuid-root image: not sampled, not mapped (%llu sample counts on nodes of the image's code; %llu samples, %d tasks, %d maps of the image; %s)",
			   how, (unsigned long long)s.spin,
			   (unsigned long long)s.samples, s.tasks, s.maps,
			   s.err ? strerror(-s.err) : "no error");
	}
	printf("# perf record -e cpu-clock -c 100000 as uid 65534: %ld samples of the plain image, %ld of the setuid one (-1: perf not packed or failed)\n",
	       perf_samples(PLAIN), perf_samples(SUID));
	snprintf(lvl, sizeof(lvl), "%d\n", saved);
	kcc_put(KCC_PARANOID, lvl);
	unlink(PLAIN);
	unlink(SUID);
	return tap_exit();
}
