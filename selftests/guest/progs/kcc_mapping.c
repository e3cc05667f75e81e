// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_mapping - executable mappings are recorded when they appear, and
 * an exec starts a new image (Documentation/kcc-abi.rst, "Mappings and
 * exec").  With an inject session, where the samples are known:
 *
 *   - dlopen(): once this process is known to the session (a sample,
 *     applied), it loads libkccdl.so, injects a sample inside dl_work and
 *     unloads the library; the stream must map dl_work's address to the
 *     library, of this process, though the mapping is gone by then;
 *   - a short-lived process and exec: a child injects a sample, execs
 *     this program, which injects a sample at a routine of its own and
 *     exits at once.  The child must have two task records, the first
 *     flagged ended by exec and holding the first sample, the second
 *     holding the second; and the second's image must have the map of
 *     this program that covers the routine, although the process was
 *     gone before the worker could have read its mappings;
 *   - the vDSO: its mapping is recorded as [vdso] (KCC_MAP_VDSO);
 *   - the hook's reach (sysfs maps_hook: tracepoint, lost, attached,
 *     unrelated, locked, queued, dropped): its probe is attached from
 *     START to STOP, not while a session is only configured; and with a
 *     per-task session of this process running, the executable mmap()s
 *     of a process outside its tree (a grandchild reparented to init)
 *     are not captured, while a child's are, and queued for the worker:
 *     neither takes kcc's lock, though a thread of this process injects
 *     samples meanwhile, so that the worker drains holding it.
 *
 * Usage: kcc_mapping			(the test)
 *        kcc_mapping -x FD		(the exec'd side: one sample via FD)
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or no inject=1.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kcc_guest.h"

/* One sample: @ip, called from @caller (0: none), charged to the caller. */
static int inject1(int fd, uint64_t ip, uint64_t caller)
{
	char buf[sizeof(struct kcc_sample) + 16];
	struct kcc_sample *s = (void *)buf;
	struct kcc_inject in = { .size = sizeof(in), .count = 1 };
	uint64_t st[2] = { ip, caller };

	memset(buf, 0, sizeof(buf));
	s->size = sizeof(buf);
	s->nr_stack = caller ? 2 : 1;
	s->size = sizeof(*s) + 8 * s->nr_stack;
	s->delta = 1;
	memcpy(s + 1, st, 8 * s->nr_stack);
	in.data = (uintptr_t)buf;
	in.len = s->size;
	return kcc_ioc(fd, KCC_IOC_INJECT, &in);
}

__attribute__((noinline)) void mp_before_exec(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void mp_after_exec(void)
{
	__asm__ volatile("" ::: "memory");
}

/* What a stream says of one process. */
struct look {
	uint32_t tgid;
	uint64_t addr;			/* a map of it must cover this */
	int nr_tasks;
	const struct kcc_rec_task *t[4];
	int nr_maps;
	const struct kcc_rec_map *cover[4];	/* maps covering addr */
};

static void look_task(const struct gtask *t, void *arg)
{
	struct look *l = arg;

	if (t->rec->tgid == l->tgid && l->nr_tasks < 4)
		l->t[l->nr_tasks++] = t->rec;
}

static void look_map(const struct kcc_rec_map *m, void *arg)
{
	struct look *l = arg;

	if (m->tgid == l->tgid && m->start <= l->addr && l->addr < m->end &&
	    l->nr_maps < 4)
		l->cover[l->nr_maps++] = m;
}

static long snapshot(int fd, char **buf, struct look *l)
{
	uint64_t tasks, nodes;
	long len = kcc_read_stream(fd, buf, 0);

	if (len < 0 || kcc_stream_check(*buf, len, &tasks, &nodes))
		return -1;
	kcc_stream_walk(*buf, len, look_task, look_map, l);
	return len;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static void test_dlopen(int fd, const char *lib)
{
	struct look l = { .tgid = getpid() };
	struct kcc_status st;
	void (*work)(unsigned long);
	char *buf = NULL;
	void *h;

	/* Known to the session, mappings read, before the dlopen(). */
	if (inject1(fd, (uintptr_t)mp_before_exec, 0) ||
	    kcc_status_get(fd, &st) || st.processed != st.samples) {
		tap_result(0, "dlopen: a first sample applied");
		return;
	}
	h = dlopen(lib, RTLD_NOW);
	*(void **)&work = h ? dlsym(h, "dl_work") : NULL;
	if (!work) {
		tap_result(0, "dlopen(%s): %s", lib, dlerror());
		return;
	}
	work(10);
	l.addr = (uintptr_t)work + 1;
	if (inject1(fd, l.addr, (uintptr_t)mp_before_exec + 1)) {
		tap_result(0, "dlopen: a sample inside dl_work");
		return;
	}
	dlclose(h);
	if (snapshot(fd, &buf, &l) < 0) {
		tap_result(0, "dlopen: a snapshot");
		return;
	}
	tap_result(l.nr_maps == 1 && ends_with(l.cover[0]->path, "/libkccdl.so") &&
		   l.nr_tasks == 1 && l.t[0]->samples == 2,
		   "dlopen: dl_work's address maps to %s (%d maps) after dlclose()",
		   l.nr_maps ? l.cover[0]->path : "nothing", l.nr_maps);
	free(buf);
}

/*
 * The vDSO's mapping (ABI 1.6) is recorded with the others, named
 * [vdso], so that samples in it (clock_gettime()) can be named.
 */
static void test_vdso(int fd)
{
	struct look l = { .tgid = getpid(),
			  .addr = getauxval(AT_SYSINFO_EHDR) + 1 };
	char *buf = NULL;

	if (l.addr == 1) {
		tap_skip("vdso: no AT_SYSINFO_EHDR");
		return;
	}
	if (snapshot(fd, &buf, &l) < 0) {
		tap_result(0, "vdso: a snapshot");
		return;
	}
	tap_result(l.nr_maps == 1 && !strcmp(l.cover[0]->path, KCC_MAP_VDSO) &&
		   !l.cover[0]->pgoff && !l.cover[0]->ino,
		   "vdso: its mapping is recorded as %s (%d maps cover it)",
		   l.nr_maps ? l.cover[0]->path : "nothing", l.nr_maps);
	free(buf);
}

static void test_exec(int fd, const char *self)
{
	struct look l = { .addr = (uintptr_t)mp_after_exec + 1 };
	const struct kcc_rec_task *pre = NULL, *post = NULL;
	char fds[16], *buf = NULL;
	uint32_t img;
	int st, i;
	pid_t c;

	c = fork();
	if (c == 0) {
		if (inject1(fd, (uintptr_t)mp_before_exec + 1, 0))
			_exit(1);
		snprintf(fds, sizeof(fds), "%d", fd);
		execl(self, self, "-x", fds, (char *)NULL);
		_exit(127);
	}
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		tap_result(0, "exec: the child and its exec'd image injected");
		return;
	}
	l.tgid = c;
	if (snapshot(fd, &buf, &l) < 0) {
		tap_result(0, "exec: a snapshot");
		return;
	}
	for (i = 0; i < l.nr_tasks; i++) {
		if (l.t[i]->flags & KCC_TASK_EXEC)
			pre = l.t[i];
		else
			post = l.t[i];
	}
	tap_result(l.nr_tasks == 2 && pre && post && pre->samples == 1 &&
		   post->samples == 1 && (pre->flags & KCC_TASK_EXITED) &&
		   (post->flags & KCC_TASK_EXITED) &&
		   (pre->flags >> KCC_TASK_IMAGE_SHIFT) !=
		   (post->flags >> KCC_TASK_IMAGE_SHIFT),
		   "exec: two images of the child, the first ended by exec, one sample each (%d task records)",
		   l.nr_tasks);
	img = post ? post->flags >> KCC_TASK_IMAGE_SHIFT : ~0u;
	for (i = 0; i < l.nr_maps; i++)
		if (l.cover[i]->image == img)
			break;
	tap_result(post && i < l.nr_maps &&
		   ends_with(l.cover[i]->path, "/kcc_mapping"),
		   "short-lived: the exec'd image's map covers its routine (%d covering maps)",
		   l.nr_maps);
	free(buf);
}

#define MAPS_HOOK	"/sys/class/misc/kcc/maps_hook"
#define MAPS_N		100

struct hook {
	char name[64];
	long long lost, unrelated, locked, queued, dropped;
	int attached, fields;
};

/*
 * No stdio: a malloc() that moves the break takes this process's mmap
 * lock, which the fallback hook would count as the target's.
 */
static int sysfs_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

static int hook_read(struct hook *h)
{
	char buf[160];

	if (sysfs_line(MAPS_HOOK, buf, sizeof(buf)))
		return -1;
	h->queued = h->dropped = -1;
	h->fields = sscanf(buf, "%63s %lld %d %lld %lld %lld %lld", h->name,
			   &h->lost, &h->attached, &h->unrelated, &h->locked,
			   &h->queued, &h->dropped);
	return h->fields >= 5 ? 0 : -1;
}

/*
 * Samples injected by a thread of the target, batch after batch, so
 * that the worker drains with kcc's lock held while a child maps.  Its
 * buffer is allocated before the counts are read.
 */
#define DRAIN_BATCH	512
#define DRAIN_DEPTH	24

struct drainer {
	int fd;
	volatile int stop, done;
	volatile long batches;
	char *buf;
};

static void *drainer_main(void *arg)
{
	struct drainer *d = arg;
	size_t one = sizeof(struct kcc_sample) + 8 * DRAIN_DEPTH;
	struct kcc_inject in = { .size = sizeof(in), .count = DRAIN_BATCH,
				 .data = (uintptr_t)d->buf,
				 .len = DRAIN_BATCH * one };
	unsigned int seed = 1;
	int i, j;

	while (!d->stop) {
		for (i = 0; i < DRAIN_BATCH; i++) {
			struct kcc_sample *s = (void *)(d->buf + i * one);
			uint64_t *ip = (uint64_t *)(s + 1);

			s->size = one;
			s->nr_stack = DRAIN_DEPTH;
			s->delta = 1;
			for (j = 0; j < DRAIN_DEPTH; j++) {
				seed = seed * 1103515245u + 12345u;
				ip[j] = 0x500000 + 32 * (seed >> 22) + !!j;
			}
		}
		if (kcc_ioc(d->fd, KCC_IOC_INJECT, &in))
			break;
		d->batches++;
	}
	d->done = 1;
	return NULL;
}

#define TEV		"/sys/class/misc/kcc/task_events"

/* The sched probes' "pushed unrelated lost"; no stdio, as above. */
static int tev_read(long long *pushed, long long *unrelated)
{
	char buf[96];

	if (sysfs_line(TEV, buf, sizeof(buf)))
		return -1;
	return sscanf(buf, "%lld %lld", pushed, unrelated) == 2 ? 0 : -1;
}

/* MAPS_N children, each exiting at once: MAPS_N exits to be told. */
static int exit_n(void)
{
	int i, st;
	pid_t p;

	for (i = 0; i < MAPS_N; i++) {
		p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0 || waitpid(p, &st, 0) != p)
			return -1;
	}
	return 0;
}

/* MAPS_N executable mappings of this program, each unmapped again. */
static int map_exec_n(const char *self)
{
	int fd = open(self, O_RDONLY), i;
	void *p;

	if (fd < 0)
		return -1;
	for (i = 0; i < MAPS_N; i++) {
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			break;
		munmap(p, 4096);
	}
	close(fd);
	return i == MAPS_N ? 0 : -1;
}

/*
 * A process that will map MAPS_N times, outside this one's tree
 * (@orphan: a grandchild that waits until its parent is gone) or inside
 * it (a child), made before the counts are read: this process's fork()
 * takes its own mmap lock, which the fallback hook (mmap_lock_released)
 * sees.  It maps when a byte comes on m->go, then makes MAPS_N children
 * that exit at once, and writes one on m->done when it did all of them
 * (its works run before each mmap() returns, the exit probe before
 * each child is reaped).
 */
struct mapper {
	int go, done;
	pid_t pid;		/* the child (the orphan's parent, gone) */
};

static int mapper_make(struct mapper *m, const char *self, int orphan)
{
	int go[2], done[2], st;
	pid_t mid;
	char c;

	if (pipe(go) || pipe(done))
		return -1;
	m->pid = fork();
	if (m->pid == 0) {
		close(go[1]);
		close(done[0]);
		if (orphan) {
			mid = getpid();
			if (fork() != 0)
				_exit(0);
			while (getppid() == mid)
				usleep(1000);
		}
		if (write(done[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		c = map_exec_n(self) || exit_n() ? 'f' : 'd';
		_exit(write(done[1], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	close(done[1]);
	m->go = go[1];
	m->done = done[0];
	if (m->pid < 0 || read(m->done, &c, 1) != 1 || c != 'r')
		return -1;
	if (orphan && (waitpid(m->pid, &st, 0) != m->pid || !WIFEXITED(st)))
		return -1;
	return 0;
}

/* Let it map; 0 when it did. */
static int mapper_run(struct mapper *m, int orphan)
{
	char c = 0;
	int ok = write(m->go, "g", 1) == 1 && read(m->done, &c, 1) == 1 &&
		 c == 'd';

	close(m->go);
	close(m->done);
	if (!orphan)
		waitpid(m->pid, NULL, 0);
	return ok ? 0 : -1;
}

static void test_hook(const char *self)
{
	struct drainer dr = { 0 };
	struct mapper orphan, child;
	struct kcc_config c;
	struct hook h0, h1, h2;
	pthread_t th;
	long long p0 = 0, p1 = 0, p2 = 0, u0 = 0, u1 = 0, u2 = 0;
	int fd, ok, tev_ok;

	if (hook_read(&h0)) {
		tap_result(0, "maps_hook: five fields or more (tracepoint lost attached unrelated locked queued dropped)");
		return;
	}
	if (!strcmp(h0.name, "none") || h0.attached) {
		tap_skip("maps_hook: %s", h0.attached ?
			 "another session runs, the probe is attached already" :
			 "no mapping tracepoint");
		return;
	}
	fd = open(KCC_DEVICE, O_RDWR);
	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_PID, getpid(), 1);
	if (fd < 0 || kcc_ioc(fd, KCC_IOC_CONFIGURE, &c)) {
		tap_result(0, "maps_hook: a per-task inject session: %s",
			   strerror(errno));
		return;
	}
	ok = !hook_read(&h1) && !h1.attached;
	tap_result(ok, "maps_hook: no probe attached while the session is only configured");
	if (mapper_make(&orphan, self, 1) || mapper_make(&child, self, 0)) {
		tap_result(0, "maps_hook: the mapping processes");
		close(fd);
		return;
	}
	if (kcc_ioc(fd, KCC_IOC_START, NULL) || hook_read(&h0) ||
	    !h0.attached) {
		tap_result(0, "maps_hook: the probe attached at START");
		close(fd);
		return;
	}
	tap_result(1, "maps_hook: the probe attached at START");
	tev_ok = !tev_read(&p0, &u0);
	ok = !mapper_run(&orphan, 1) && !hook_read(&h1);
	tev_ok = tev_ok && !tev_read(&p1, &u1);
	tap_result(ok && h1.unrelated - h0.unrelated >= MAPS_N &&
		   h1.locked == h0.locked,
		   "maps_hook: %d executable mmap()s outside the target's tree: %lld without kcc's lock, %lld with it",
		   MAPS_N, ok ? h1.unrelated - h0.unrelated : -1,
		   ok ? h1.locked - h0.locked : -1);
	/* The child maps while the worker drains the injected samples. */
	dr.fd = fd;
	dr.buf = calloc(DRAIN_BATCH, sizeof(struct kcc_sample) + 8 * DRAIN_DEPTH);
	ok = dr.buf && !pthread_create(&th, NULL, drainer_main, &dr);
	while (ok && !dr.batches && !dr.done)
		usleep(1000);
	ok = ok && !hook_read(&h1) && !mapper_run(&child, 0) &&
	     !hook_read(&h2);
	dr.stop = 1;
	if (dr.buf)
		pthread_join(th, NULL);
	tap_result(ok && h2.locked == h1.locked && h2.fields == 7 &&
		   h2.queued - h1.queued >= MAPS_N,
		   "maps_hook: %d executable mmap()s of a child of the target during drains (%ld batches of %d samples): %lld queued for the worker, %lld with kcc's lock",
		   MAPS_N, dr.batches, DRAIN_BATCH,
		   ok && h2.fields == 7 ? h2.queued - h1.queued : -1,
		   ok ? h2.locked - h1.locked : -1);
	free(dr.buf);
	tev_ok = tev_ok && !tev_read(&p2, &u2);
	/*
	 * The orphan's children exit outside the target's tree: not pushed
	 * (other exits of the guest may be, hence no bound on p1 - p0); the
	 * child's are the target's descendants': pushed.
	 */
	tap_result(tev_ok && u1 - u0 >= MAPS_N && p2 - p1 >= MAPS_N,
		   "task_events: %d exits outside the target's tree: %lld without kcc's spinlock; %d in it: %lld pushed",
		   MAPS_N, tev_ok ? u1 - u0 : -1, MAPS_N, tev_ok ? p2 - p1 : -1);
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	tap_result(!hook_read(&h2) && !h2.attached,
		   "maps_hook: the probe detached at STOP");
	close(fd);
}

int main(int argc, char **argv)
{
	struct kcc_config c;
	char lib[4096], *slash;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "-x"))
		return inject1(atoi(argv[2]), (uintptr_t)mp_after_exec + 1, 0) ?
		       1 : 0;
	/* Kept across exec: the exec'd image injects through it. */
	fd = kcc_open_inject();
	snprintf(lib, sizeof(lib), "%s", argv[0]);
	slash = strrchr(lib, '/');
	snprintf(slash ? slash + 1 : lib, sizeof(lib) - (slash ? slash + 1 - lib : 0),
		 "libkccdl.so");
	/* First, while no session of this program runs. */
	test_hook(argv[0][0] == '/' ? argv[0] : "/t/kcc_mapping");
	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, 1);
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
	    kcc_ioc(fd, KCC_IOC_START, NULL)) {
		tap_result(0, "an inject session: %s", strerror(errno));
		return tap_exit();
	}
	test_dlopen(fd, lib);
	test_vdso(fd);
	test_exec(fd, argv[0][0] == '/' ? argv[0] : "/t/kcc_mapping");
	kcc_check_accounting(fd, "kcc_mapping");
	close(fd);
	return tap_exit();
}
