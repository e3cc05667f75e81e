// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kcc_trace_rt.c - the call/return tracing runtime of kcc, for C programs
 * built with -finstrument-functions.  Link it into the program:
 *
 *	cc -finstrument-functions -c prog.c
 *	cc -o prog prog.o kcc_trace_rt.o -lpthread
 *	KCC_TRACE_DIR=out ./prog
 *	kcc ccf -k 2 out/
 *
 * Every thread writes its own file, <dir>/kcc-<pid>-<tid>.kft, in the
 * format of user/lib/ftrace_fmt.h: routine entries and exits with the
 * stack address of each event, then the executable mappings, so that
 * kcc can name the routines and mend the stack where longjmp(),
 * exceptions or exit() skipped exit events.
 *
 * The hooks run on every call of the program, so they do not allocate
 * with malloc (the program may be tracing its own allocator), take no
 * lock and make a system call only when the 1 MiB buffer of the thread is
 * full.  A hook entered again from inside a hook (a signal handler that
 * is itself instrumented) drops its event and counts it.
 *
 * With KCC_TRACE_LBR=1 in the environment, every thread also keeps its
 * last calls and returns as LBR records in a ring (struct kcc_lbr_ring of
 * selftests/lbrpmu/kcc_lbrpmu.h), with a counter of calls and one of
 * synthetic misses, and registers it on /dev/kcc_lbr, the device of the
 * test LBR PMU (kcc_lbrpmu.ko); the ring holds exactly the events the
 * file gets.  A call record goes from the call instruction (found by
 * decoding the 6 bytes before the return address, which lie in the
 * caller's code: a direct call, or the usual forms of an indirect one;
 * the others count as 5 bytes long) to the call's target, which is the
 * PLT stub, or the routine that tail-called, when that is not the
 * traced routine; a return record goes from the callee (where its exit
 * hook returns to, or its entry when the hook was a sibling call) to the
 * return address.
 *
 * With KCC_TRACE_WATCH=FILE, a watch file (user/lib/watch.h), every
 * thread also counts the watched k-contexts at each call, in an array
 * numbered by preferential path profiling (lbr/kcc_ppp.c, compiled in),
 * on a shadow stack mended as kcc mends the trace (the same sp rules as
 * user/lib/ftrace_rt.c), and writes the counts at its end to
 * <dir>/kcc-<pid>-<tid>.watch: '<count>TAB<path>' per context, then
 * '# calls=C watched=W residual=U aliases=A dropped=D'.  The counts are
 * those kcc watch finds in the thread's trace file.  Routine names are
 * looked up in the executable's symbol table, so watched routines must
 * be functions of the executable (not of a shared library) and have
 * distinct names; a name not found there, or a bad file, is reported
 * on stderr and turns the watch off, not the trace.
 *
 * Limits: events after the thread's file is closed (destructors that run
 * after ours) are not recorded; _exit(), a fatal signal and exec() lose
 * what is still buffered; the child of fork() starts a file of its own,
 * whose first exits have no entries (kcc ignores them).
 */
/* dl_iterate_phdr() of <link.h> */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <elf.h>
#include <link.h>

#include "../../user/lib/ftrace_fmt.h"
#include "../../selftests/lbrpmu/kcc_lbrpmu.h"

/* The numbering of watched contexts, kept out of the program's names. */
#pragma GCC visibility push(hidden)
#include "../../lbr/kcc_ppp.c"
#pragma GCC visibility pop

#define NOTRACE		__attribute__((no_instrument_function))
/*
 * The hooks and kft_event() live in a section of their own, so that the
 * test PMU can tell an interrupt in their first or last instructions
 * (struct kcc_lbr_ring, hook_text); the linker defines its bounds.
 */
#define KFT_HOOK_TEXT	__attribute__((section("kcc_hook_text")))
extern const char __start_kcc_hook_text[], __stop_kcc_hook_text[];
#define BUF_SIZE	(1u << 20)
#define BUF_SLACK	64		/* room for one define and one event */
#define IDS_MIN		(1u << 12)	/* hash slots to start with */
#define MAPS_CHUNK	4096
#define WATCH_STACK	(1u << 16)	/* deepest activation watched */

/* A frame of the watch's shadow stack: what kcc mends the stack with. */
struct kft_wframe {
	uintptr_t fn;
	uintptr_t site;
	uintptr_t sp;
};

struct kft_thread {
	struct kcc_lbr_ring ring;	/* with KCC_TRACE_LBR=1 */
	int lbr;			/* the ring is registered */
	int fd;
	int busy;		/* inside a hook: a nested event is lost */
	int closed;		/* file finished or failed: record nothing */
	uint32_t len;		/* bytes in buf */
	uint64_t prev_sp;
	uint64_t events;	/* enter and exit records written */
	uint64_t lost;		/* events dropped */
	uintptr_t *keys;	/* routine addresses, 0 = empty slot */
	uintptr_t *sites;	/* with the call site, the key of an id */
	uint32_t *ids;
	uint32_t mask;		/* slots - 1 */
	uint32_t nids;		/* routine ids handed out */
	/* KCC_TRACE_WATCH: counts of the watched contexts */
	struct kcc_ppp_run wrun;
	struct kft_wframe *wstk;
	uint32_t wdepth;	/* frames, wstk[] holds the first WATCH_STACK */
	uint64_t *wcounts;
	struct kcc_ppp_frame *wppp;
	uint8_t buf[BUF_SIZE];
};

static __thread struct kft_thread *kft_cur
	__attribute__((tls_model("initial-exec")));
static pthread_once_t kft_once = PTHREAD_ONCE_INIT;
static pthread_key_t kft_key;
static int kft_key_ok;
static char kft_dir[1024] = ".";
static int kft_lbr_fd = -1;		/* /dev/kcc_lbr */
static struct kcc_ppp kft_watch;	/* range == 0: no watch */
static char *kft_watch_text;		/* the file, NUL-separated paths */
static char **kft_watch_path;		/* [nctx] */

static NOTRACE void *kft_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static NOTRACE void kft_write_all(struct kft_thread *t, const void *p,
				  size_t len)
{
	const uint8_t *b = p;

	while (len && !t->closed) {
		ssize_t n = write(t->fd, b, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Disk full or gone: stop rather than write holes. */
			t->closed = 1;
			break;
		}
		b += n;
		len -= n;
	}
}

static NOTRACE void kft_flush(struct kft_thread *t)
{
	kft_write_all(t, t->buf, t->len);
	t->len = 0;
}

static inline NOTRACE void kft_varint(struct kft_thread *t, uint64_t v)
{
	while (v >= 0x80) {
		t->buf[t->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t->buf[t->len++] = (uint8_t)v;
}

static NOTRACE void kft_bytes(struct kft_thread *t, const void *p,
			      size_t len)
{
	if (BUF_SIZE - t->len < len + BUF_SLACK)
		kft_flush(t);
	if (len > BUF_SIZE - BUF_SLACK) {
		kft_write_all(t, p, len);
		return;
	}
	memcpy(t->buf + t->len, p, len);
	t->len += len;
}

static inline NOTRACE void kft_room(struct kft_thread *t)
{
	if (BUF_SIZE - t->len < BUF_SLACK)
		kft_flush(t);
}

static NOTRACE uint64_t kft_parse_hex(const char **s)
{
	uint64_t v = 0;
	const char *p = *s;

	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			v = v * 16 + (*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			v = v * 16 + (*p - 'a' + 10);
		else
			break;
	}
	*s = p;
	return v;
}

/* One line of /proc/self/maps: "start-end perms offset dev inode path". */
static NOTRACE void kft_map_line(struct kft_thread *t, const char *l)
{
	uint64_t start, end, off;
	const char *path;
	size_t len;
	int field;

	start = kft_parse_hex(&l);
	if (*l++ != '-')
		return;
	end = kft_parse_hex(&l);
	if (*l++ != ' ' || l[0] == '\0' || l[1] == '\0' || l[2] != 'x')
		return;
	l += 4;
	if (*l++ != ' ')
		return;
	off = kft_parse_hex(&l);
	/* Skip dev and inode to the path, which must be a file. */
	for (field = 0; field < 2; field++) {
		while (*l == ' ')
			l++;
		while (*l && *l != ' ')
			l++;
	}
	while (*l == ' ')
		l++;
	if (*l != '/')
		return;
	path = l;
	len = strlen(path);
	kft_room(t);
	kft_varint(t, (FTR_CTL_MAP << 2) | FTR_KIND_CTL);
	kft_varint(t, start);
	kft_varint(t, end);
	kft_varint(t, off);
	kft_varint(t, len);
	kft_bytes(t, path, len);
}

static NOTRACE void kft_write_maps(struct kft_thread *t)
{
	char buf[MAPS_CHUNK + 1];
	size_t have = 0;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read(fd, buf + have, MAPS_CHUNK - have);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
		buf[have] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			kft_map_line(t, line);
			line = nl + 1;
		}
		have -= line - buf;
		memmove(buf, line, have);
		if (have == MAPS_CHUNK)	/* a line longer than PATH_MAX */
			have = 0;
	}
	close(fd);
}

static NOTRACE int kft_ids_init(struct kft_thread *t, uint32_t slots)
{
	t->keys = kft_map(slots * sizeof(*t->keys));
	t->sites = kft_map(slots * sizeof(*t->sites));
	t->ids = kft_map(slots * sizeof(*t->ids));
	if (!t->keys || !t->sites || !t->ids)
		return -ENOMEM;
	t->mask = slots - 1;
	return 0;
}

static NOTRACE void kft_ids_free(uintptr_t *keys, uintptr_t *sites,
				 uint32_t *ids, uint32_t slots)
{
	if (keys)
		munmap(keys, slots * sizeof(*keys));
	if (sites)
		munmap(sites, slots * sizeof(*sites));
	if (ids)
		munmap(ids, slots * sizeof(*ids));
}

static inline NOTRACE uint32_t kft_hash(uintptr_t fn, uintptr_t site)
{
	uint64_t h = (uint64_t)fn * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)site * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h >> 32);
}

static NOTRACE int kft_ids_grow(struct kft_thread *t)
{
	uintptr_t *okeys = t->keys, *osites = t->sites;
	uint32_t *oids = t->ids, oslots = t->mask + 1, i;

	if (kft_ids_init(t, oslots * 2)) {
		kft_ids_free(t->keys, t->sites, t->ids, oslots * 2);
		t->keys = okeys;
		t->sites = osites;
		t->ids = oids;
		t->mask = oslots - 1;
		return -ENOMEM;
	}
	for (i = 0; i < oslots; i++) {
		uint32_t h;

		if (!okeys[i])
			continue;
		for (h = kft_hash(okeys[i], osites[i]) & t->mask; t->keys[h];
		     h = (h + 1) & t->mask)
			;
		t->keys[h] = okeys[i];
		t->sites[h] = osites[i];
		t->ids[h] = oids[i];
	}
	kft_ids_free(okeys, osites, oids, oslots);
	return 0;
}

/*
 * The id of routine @fn called from @site (the return address into its
 * caller), defined in the file the first time the pair is seen.  Keying
 * by the pair costs nothing per event and tells apart, at an exit, the
 * activations of one routine that a longjmp() may have left open.
 */
static inline NOTRACE int kft_id(struct kft_thread *t, uintptr_t fn,
				 uintptr_t site, uint32_t *id)
{
	uint32_t h;

	for (h = kft_hash(fn, site) & t->mask; t->keys[h];
	     h = (h + 1) & t->mask) {
		if (t->keys[h] == fn && t->sites[h] == site) {
			*id = t->ids[h];
			return 0;
		}
	}
	if ((t->nids + 1) * 2 > t->mask + 1) {
		if (kft_ids_grow(t))
			return -ENOMEM;
		for (h = kft_hash(fn, site) & t->mask; t->keys[h];
		     h = (h + 1) & t->mask)
			;
	}
	t->keys[h] = fn;
	t->sites[h] = site;
	t->ids[h] = t->nids;
	*id = t->nids++;
	kft_varint(t, (FTR_CTL_DEFINE << 2) | FTR_KIND_CTL);
	kft_varint(t, fn);
	kft_varint(t, site);
	return 0;
}

/* ---- the LBR ring (KCC_TRACE_LBR=1) ---------------------------------- */

static NOTRACE void kft_lbr_register(struct kft_thread *t)
{
	memset(&t->ring, 0, sizeof(t->ring));
	t->ring.magic = KCC_LBR_MAGIC;
	t->ring.version = KCC_LBR_VERSION;
	t->ring.hook_text = (uintptr_t)__start_kcc_hook_text;
	t->ring.hook_text_end = (uintptr_t)__stop_kcc_hook_text;
	t->lbr = kft_lbr_fd >= 0 &&
		 !ioctl(kft_lbr_fd, KCC_LBR_IOC_REGISTER, &t->ring);
}

static NOTRACE void kft_lbr_unregister(struct kft_thread *t)
{
	if (t->lbr)
		ioctl(kft_lbr_fd, KCC_LBR_IOC_UNREGISTER, 0);
	t->lbr = 0;
}

/* Compiler barriers: the reader only interrupts this thread. */
#define KFT_STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define KFT_FENCE()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline NOTRACE void kft_lbr_put(struct kft_thread *t, uint64_t from,
				       uint64_t to, uint64_t flags,
				       uint64_t misses)
{
	struct kcc_lbr_ring *r = &t->ring;
	struct kcc_lbr_rec *e = &r->rec[r->pos % KCC_LBR_RECS];

	KFT_STORE(r->seq, r->seq + 1);
	KFT_FENCE();
	KFT_STORE(e->from, from);
	KFT_STORE(e->to, to);
	KFT_STORE(e->flags, flags);
	KFT_FENCE();
	KFT_STORE(r->pos, r->pos + 1);
	if (!(flags & KCC_LBR_F_RET)) {
		KFT_STORE(r->calls, r->calls + 1);
		KFT_STORE(r->misses, r->misses + misses);
	}
	KFT_FENCE();
	KFT_STORE(r->seq, r->seq + 1);
}

/*
 * The call that returns to @site: a direct call (e8 rel32) and its
 * target, or an indirect one (ff /2: register, memory, disp8, rip or
 * disp32 forms) whose target is @fn.
 */
static inline NOTRACE void kft_lbr_call(struct kft_thread *t, uintptr_t fn,
					uintptr_t site)
{
	const uint8_t *p = (const uint8_t *)site;
	uint64_t from = site - 5, to = fn, flags = KCC_LBR_F_IND;
	int32_t rel;

	if (p[-5] == 0xe8) {
		memcpy(&rel, p - 4, sizeof(rel));
		to = site + (intptr_t)rel;
		flags = 0;
	} else if (p[-2] == 0xff && (p[-1] & 0x38) == 0x10) {
		from = site - 2;
	} else if (p[-3] == 0xff && (p[-2] & 0x38) == 0x10) {
		from = site - 3;
	} else if (p[-6] == 0xff && (p[-5] & 0x38) == 0x10) {
		from = site - 6;
	}
	kft_lbr_put(t, from, to, flags, KCC_LBR_MISSES(fn));
}

/*
 * The call just recorded reached a count where a sampling event of the
 * PMU overflows (trap_calls, trap_misses, which the PMU keeps up to
 * date): stop in the PMU now, so that the sample comes at this call.  A
 * PMU that does not know the ioctl gets no more of them.
 */
static inline NOTRACE void kft_lbr_trap(struct kft_thread *t)
{
	struct kcc_lbr_ring *r = &t->ring;

	if (__builtin_expect(r->calls < __atomic_load_n(&r->trap_calls,
							__ATOMIC_RELAXED) &&
			     r->misses < __atomic_load_n(&r->trap_misses,
							 __ATOMIC_RELAXED), 1))
		return;
	if (ioctl(kft_lbr_fd, KCC_LBR_IOC_OVERFLOW, 0)) {
		KFT_STORE(r->trap_calls, ~0ull);
		KFT_STORE(r->trap_misses, ~0ull);
	}
}

/* ---- KCC_TRACE_WATCH: watched contexts counted at every call ------------ */

static NOTRACE int kft_bias_cb(struct dl_phdr_info *info, size_t size,
			       void *arg)
{
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;	/* the first object is the executable */
}

/* Address of function @name (@len bytes) in the executable, 0: none. */
static NOTRACE uintptr_t kft_sym(const uint8_t *img, size_t size,
				 const char *name, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh;
	uint32_t pass, i;
	size_t j;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > size)
		return 0;
	sh = (const void *)(img + eh->e_shoff);
	/* The full symbol table first, the dynamic one if stripped. */
	for (pass = 0; pass < 2; pass++) {
		uint32_t want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		for (i = 0; i < eh->e_shnum; i++) {
			const Elf64_Shdr *st = &sh[i], *str;
			const Elf64_Sym *sym;

			if (st->sh_type != want || st->sh_link >= eh->e_shnum)
				continue;
			str = &sh[st->sh_link];
			if (st->sh_offset + st->sh_size > size ||
			    str->sh_offset + str->sh_size > size)
				continue;
			sym = (const void *)(img + st->sh_offset);
			for (j = 0; j < st->sh_size / sizeof(*sym); j++) {
				const char *n = (const char *)img +
						str->sh_offset + sym[j].st_name;

				if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC ||
				    !sym[j].st_value ||
				    sym[j].st_name + len >= str->sh_size ||
				    memcmp(n, name, len) || n[len])
					continue;
				return sym[j].st_value;
			}
		}
	}
	return 0;
}

/* The whole of @path in memory of its own, NUL-terminated; NULL: error. */
static NOTRACE char *kft_slurp(const char *path, size_t *size)
{
	struct stat sb;
	size_t have = 0;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) || !(buf = kft_map(sb.st_size + 1))) {
		close(fd);
		return NULL;
	}
	while (have < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + have, sb.st_size - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += n;
	}
	close(fd);
	buf[have] = '\0';
	*size = have;
	return buf;
}

static NOTRACE int kft_watch_fail(const char *file, uint32_t line,
				  const char *what, const char *arg, int len)
{
	fprintf(stderr, "kcc-trace: %s:%u: %s '%.*s': watch off\n", file,
		line, what, len, arg);
	return -EINVAL;
}

/* Read and number the watch file; on error, say why and leave it off. */
static NOTRACE int kft_watch_load(const char *file)
{
	uint32_t n = 0, nlabels = 0, i = 0, j = 0, line = 0, *lens, *lines;
	size_t size, exe_size = 0, msize;
	uintptr_t bias = 0;
	char *text, *p, *next;
	uint8_t *exe;
	uint64_t *labels;
	void *mem;

	text = kft_slurp(file, &size);
	if (!text) {
		fprintf(stderr, "kcc-trace: %s: %s: watch off\n", file,
			strerror(errno));
		return -errno;
	}
	/* Lines to NUL-terminated trimmed paths, in place; count them. */
	for (p = text; p < text + size; p = next) {
		char *e = strchr(p, '\n');

		next = e ? e + 1 : text + size;
		if (e)
			*e = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = '\0';
		if (*p && *p != '#') {
			n++;
			for (e = p; *e; e++)
				nlabels += *e == ';';
			nlabels++;
		}
	}
	kft_watch_path = kft_map((n + 1) * sizeof(char *));
	lens = kft_map((n + 1) * sizeof(*lens));
	lines = kft_map((n + 1) * sizeof(*lines));
	labels = kft_map((nlabels + 1) * sizeof(*labels));
	exe = (uint8_t *)kft_slurp("/proc/self/exe", &exe_size);
	if (!kft_watch_path || !lens || !lines || !labels || !exe)
		return kft_watch_fail(file, 0, "out of memory", "", 0);
	dl_iterate_phdr(kft_bias_cb, &bias);
	for (p = text; p < text + size; p += strlen(p) + 1) {
		const char *q;

		line++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		kft_watch_path[i] = p;
		lines[i] = line;
		lens[i] = 0;
		for (q = p;; q++) {
			const char *e = strchr(q, ';');
			int len = e ? (int)(e - q) : (int)strlen(q);
			uintptr_t a = kft_sym(exe, exe_size, q, len);

			if (!a)
				return kft_watch_fail(file, line,
						      "no function of the executable is named",
						      q, len);
			labels[j++] = a + bias;
			lens[i]++;
			if (!e)
				break;
			q = e;
		}
		i++;
	}
	munmap(exe, exe_size + 1);
	msize = kcc_ppp_mem_size(n, nlabels, KCC_PPP_MAX_RANGE);
	mem = msize ? kft_map(msize) : NULL;
	if (!n || !mem)
		return kft_watch_fail(file, line, "no context, or too many",
				      "", 0);
	if (kcc_ppp_build(&kft_watch, mem, msize, labels, lens, n,
			  KCC_PPP_MAX_RANGE)) {
		i = kft_watch.err_ctx < n ? kft_watch.err_ctx : 0;
		return kft_watch_fail(file, lines[i],
				      kcc_ppp_strerror(kft_watch.err),
				      kft_watch_path[i],
				      (int)strlen(kft_watch_path[i]));
	}
	kft_watch_text = text;
	return 0;
}

static NOTRACE void kft_watch_start(struct kft_thread *t)
{
	const struct kcc_ppp *p = &kft_watch;

	if (!p->range)
		return;
	if (!t->wstk) {
		t->wstk = kft_map(WATCH_STACK * sizeof(*t->wstk));
		t->wppp = kft_map(WATCH_STACK * sizeof(*t->wppp));
		t->wcounts = kft_map(p->range * sizeof(*t->wcounts));
	}
	t->wdepth = 0;
	if (!t->wstk || !t->wppp || !t->wcounts ||
	    kcc_ppp_run_init(&t->wrun, p, t->wcounts, t->wppp, WATCH_STACK))
		t->wrun.p = NULL;
}

static NOTRACE void kft_watch_free(struct kft_thread *t)
{
	if (t->wstk)
		munmap(t->wstk, WATCH_STACK * sizeof(*t->wstk));
	if (t->wppp)
		munmap(t->wppp, WATCH_STACK * sizeof(*t->wppp));
	if (t->wcounts)
		munmap(t->wcounts, kft_watch.range * sizeof(*t->wcounts));
	t->wrun.p = NULL;
}

/* Is the open frame @fr gone, at an entry of (@fn, @site) at @sp? */
static inline NOTRACE int kft_wframe_dead(const struct kft_wframe *fr,
					  uintptr_t fn, uintptr_t site,
					  uintptr_t sp)
{
	if (fr->sp != sp)
		return fr->sp < sp;
	return fr->site != site || fr->fn == fn;
}

static inline NOTRACE void kft_wpop(struct kft_thread *t)
{
	t->wdepth--;
	kcc_ppp_return(&t->wrun);
}

/* The stack as kcc mends it (user/lib/ftrace_rt.c), and the counts. */
static NOTRACE void kft_watch_event(struct kft_thread *t, uintptr_t fn,
				    uintptr_t site, unsigned int kind,
				    uintptr_t sp)
{
	struct kft_wframe *s = t->wstk;
	uint32_t x, d;

	if (kind == FTR_KIND_ENTER) {
		while (t->wdepth && t->wdepth <= WATCH_STACK &&
		       kft_wframe_dead(&s[t->wdepth - 1], fn, site, sp))
			kft_wpop(t);
		if (t->wdepth < WATCH_STACK) {
			s[t->wdepth].fn = fn;
			s[t->wdepth].site = site;
			s[t->wdepth].sp = sp;
		}
		t->wdepth++;
		kcc_ppp_call(&t->wrun, fn);
		return;
	}
	d = t->wdepth < WATCH_STACK ? t->wdepth : WATCH_STACK;
	for (x = d; x > 0; x--)
		if (s[x - 1].fn == fn && s[x - 1].site == site &&
		    (x == 1 || sp <= s[x - 2].sp))
			break;
	if (!x)
		for (x = d; x > 0; x--)
			if (s[x - 1].fn == fn && s[x - 1].site == site)
				break;
	if (!x && t->wdepth > WATCH_STACK) {
		kft_wpop(t);	/* beyond what is kept: trust the order */
		return;
	}
	while (x && t->wdepth >= x)
		kft_wpop(t);
}

static NOTRACE void kft_watch_write(struct kft_thread *t)
{
	const struct kcc_ppp *p = &kft_watch;
	const struct kcc_ppp_run *r = &t->wrun;
	char path[sizeof(kft_dir) + 64], line[256];
	uint32_t i;
	int fd, n;

	if (!r->p)
		return;
	snprintf(path, sizeof(path), "%s/kcc-%d-%ld.watch", kft_dir,
		 (int)getpid(), (long)syscall(SYS_gettid));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	for (i = 0; i < p->nctx; i++) {
		n = snprintf(line, sizeof(line), "%llu\t",
			     (unsigned long long)r->counts[p->ctx_num[i]]);
		if (write(fd, line, n) != n ||
		    write(fd, kft_watch_path[i], strlen(kft_watch_path[i])) < 0 ||
		    write(fd, "\n", 1) != 1)
			break;
	}
	n = snprintf(line, sizeof(line),
		     "# calls=%llu watched=%llu residual=%llu aliases=%llu dropped=%llu\n",
		     (unsigned long long)r->calls,
		     (unsigned long long)r->matched,
		     (unsigned long long)r->unwatched,
		     (unsigned long long)r->aliased,
		     (unsigned long long)r->stack_drops);
	if (write(fd, line, n) != n)
		fprintf(stderr, "kcc-trace: %s: write error\n", path);
	close(fd);
}

static NOTRACE void kft_finish(struct kft_thread *t)
{
	if (t->closed)
		return;
	kft_write_maps(t);
	kft_room(t);
	if (t->lost) {
		kft_varint(t, (FTR_CTL_LOST << 2) | FTR_KIND_CTL);
		kft_varint(t, t->lost);
	}
	kft_varint(t, (FTR_CTL_END << 2) | FTR_KIND_CTL);
	kft_varint(t, t->events);
	kft_flush(t);
	close(t->fd);
	t->closed = 1;
	kft_watch_write(t);
	kft_lbr_unregister(t);
}

/*
 * Stands for the thread state after the thread's file was finished, so a
 * routine called by a later key destructor neither records nor reopens.
 */
static struct kft_thread kft_dead = { .fd = -1, .closed = 1 };

static NOTRACE void kft_thread_exit(void *arg)
{
	struct kft_thread *t = arg;

	t->busy = 1;
	kft_finish(t);
	kft_lbr_unregister(t);
	kft_cur = &kft_dead;
	kft_ids_free(t->keys, t->sites, t->ids, t->mask + 1);
	kft_watch_free(t);
	munmap(t, sizeof(*t));
}

/* Open the file of the calling thread; the buffer holds its header. */
static NOTRACE int kft_start(struct kft_thread *t)
{
	uint32_t hdr[FTR_HDR_LEN / 4];
	char path[sizeof(kft_dir) + 64];

	snprintf(path, sizeof(path), "%s/kcc-%d-%ld" FTR_SUFFIX, kft_dir,
		 (int)getpid(), (long)syscall(SYS_gettid));
	t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		t->closed = 1;
		return -errno;
	}
	memcpy(hdr, FTR_MAGIC, FTR_MAGIC_LEN);
	((uint8_t *)hdr)[FTR_MAGIC_LEN] = FTR_VERSION;
	hdr[2] = (uint32_t)getpid();
	hdr[3] = (uint32_t)syscall(SYS_gettid);
	kft_bytes(t, hdr, sizeof(hdr));
	/* Mappings now too: a program killed before the end still names. */
	kft_write_maps(t);
	return 0;
}

/* A forked child writes a file of its own, starting from scratch. */
static NOTRACE void kft_atfork_child(void)
{
	struct kft_thread *t = kft_cur;

	if (!t || t->closed)
		return;
	/* The descriptor is shared with the parent, which owns the file. */
	close(t->fd);
	t->len = 0;
	t->prev_sp = 0;
	t->events = 0;
	t->lost = 0;
	memset(t->keys, 0, (t->mask + 1) * sizeof(*t->keys));
	memset(t->sites, 0, (t->mask + 1) * sizeof(*t->sites));
	t->nids = 0;
	if (t->lbr)
		kft_lbr_register(t);	/* the child is a thread of its own */
	kft_start(t);
	kft_watch_start(t);
}

static NOTRACE void kft_init_once(void)
{
	const char *d = getenv("KCC_TRACE_DIR");

	if (d && *d && strlen(d) < sizeof(kft_dir))
		strcpy(kft_dir, d);
	d = getenv("KCC_TRACE_LBR");
	if (d && !strcmp(d, "1")) {
		kft_lbr_fd = open("/dev/kcc_lbr", O_RDWR | O_CLOEXEC);
		if (kft_lbr_fd < 0)
			fprintf(stderr, "kcc-trace: /dev/kcc_lbr: %s: no LBR ring\n",
				strerror(errno));
	}
	d = getenv("KCC_TRACE_WATCH");
	if (d && *d)
		kft_watch_load(d);
	kft_key_ok = !pthread_key_create(&kft_key, kft_thread_exit);
	pthread_atfork(NULL, NULL, kft_atfork_child);
}

static NOTRACE struct kft_thread *kft_open(void)
{
	struct kft_thread *t;

	pthread_once(&kft_once, kft_init_once);
	t = kft_map(sizeof(*t));
	if (!t)
		return NULL;
	kft_cur = t;
	t->busy = 1;
	if (kft_ids_init(t, IDS_MIN) || kft_start(t)) {
		t->closed = 1;
		return t;
	}
	kft_lbr_register(t);
	kft_watch_start(t);
	if (kft_key_ok)
		pthread_setspecific(kft_key, t);
	t->busy = 0;
	return t;
}

/*
 * The traced routine's registers at the hook call (@sp is the hook's
 * frame, so the routine's stack pointer is 16 bytes above it; @bp the
 * routine's frame pointer, which the hook saved there; @ret where the
 * hook returns), for samples that land in the runtime while it holds
 * them (struct kcc_lbr_ring, hook_*).
 */
static inline NOTRACE void kft_lbr_hook_enter(struct kft_thread *t,
					      uintptr_t sp, uintptr_t ret,
					      uintptr_t bp)
{
	struct kcc_lbr_ring *r = &t->ring;

	KFT_STORE(r->hook_ip, ret);
	KFT_STORE(r->hook_sp, sp + 16);
	KFT_STORE(r->hook_bp, bp);
	KFT_FENCE();
	KFT_STORE(r->in_hook, 1);
	KFT_FENCE();
}

static inline NOTRACE void kft_lbr_hook_exit(struct kft_thread *t)
{
	KFT_FENCE();
	KFT_STORE(t->ring.in_hook, 0);
}

static NOTRACE KFT_HOOK_TEXT void kft_event(uintptr_t fn, uintptr_t site,
					    unsigned int kind, uintptr_t sp,
					    uintptr_t in_callee, uintptr_t ret,
					    uintptr_t bp)
{
	struct kft_thread *t = kft_cur;
	uint64_t d;
	uint32_t id;

	if (__builtin_expect(!t, 0)) {
		t = kft_open();
		if (!t)
			return;
	}
	if (t->closed)
		return;
	if (t->busy) {
		t->lost++;
		return;
	}
	t->busy = 1;
	kft_room(t);
	if (kft_id(t, fn, site, &id)) {
		t->lost++;
		t->busy = 0;
		return;
	}
	/*
	 * The program's registers hold for a sample only while the records
	 * agree with them: after an entry's call record, before an exit's
	 * return record.  Around that window the PMU defers its sample.
	 */
	if (t->lbr) {
		if (kind == FTR_KIND_ENTER)
			kft_lbr_call(t, fn, site);
		kft_lbr_hook_enter(t, sp, ret, bp);
		if (kind == FTR_KIND_ENTER)
			kft_lbr_trap(t);
	}
	kft_varint(t, ((uint64_t)id << 2) | kind);
	/* Zigzag: small steps up and down the stack stay one byte. */
	d = (uint64_t)sp - t->prev_sp;
	kft_varint(t, (d << 1) ^ (uint64_t)((int64_t)d >> 63));
	t->prev_sp = sp;
	t->events++;
	if (t->wrun.p)
		kft_watch_event(t, fn, site, kind, sp);
	if (t->lbr) {
		kft_lbr_hook_exit(t);
		if (kind != FTR_KIND_ENTER)
			kft_lbr_put(t, in_callee == site ? fn : in_callee, site,
				    KCC_LBR_F_RET, 0);
	}
	t->busy = 0;
}

/*
 * The hooks keep a frame of their own (they are never inlined), so
 * frame_address(0) sits 16 bytes below the stack pointer of the
 * instrumented routine at the hook call: no frame pointer is needed in
 * the program.  It is normally the same at the entry and the exit hook
 * of an activation; it is lower at the exit after alloca(), and higher
 * when the compiler makes the exit hook a sibling call (jmp, -O2): then
 * it lies between the routine's entry sp and its caller's.
 */
NOTRACE __attribute__((noinline)) KFT_HOOK_TEXT
void __cyg_profile_func_enter(void *fn, void *site)
{
	kft_event((uintptr_t)fn, (uintptr_t)site, FTR_KIND_ENTER,
		  (uintptr_t)__builtin_frame_address(0), 0,
		  (uintptr_t)__builtin_return_address(0),
		  *(uintptr_t *)__builtin_frame_address(0));
}

NOTRACE __attribute__((noinline)) KFT_HOOK_TEXT
void __cyg_profile_func_exit(void *fn, void *site)
{
	kft_event((uintptr_t)fn, (uintptr_t)site, FTR_KIND_EXIT,
		  (uintptr_t)__builtin_frame_address(0),
		  (uintptr_t)__builtin_return_address(0),
		  (uintptr_t)__builtin_return_address(0),
		  *(uintptr_t *)__builtin_frame_address(0));
}

/* The main thread has no key destructor call at exit(): finish here. */
static NOTRACE __attribute__((destructor)) void kft_exit(void)
{
	struct kft_thread *t = kft_cur;

	if (!t)
		return;
	t->busy = 1;
	kft_finish(t);
}
