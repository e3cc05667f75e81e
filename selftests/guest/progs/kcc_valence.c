// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_valence - the Valence source against hostile and broken areas.
 *
 * KCC_IOC_VALENCE_REGISTER checks its sizes, alignment and range; then,
 * in a KCC_SOURCE_VALENCE session of this process on cpu-clock, the
 * thread spins with one area after another registered, each until the
 * status counter it must move has moved (bounded by work, not time):
 * no area (fp fallback), a wrong size field, huge acyc_words and
 * rec_bits, an odd seq (torn), rec_over set, an area munmap()ed after
 * registration (fault), a valid area (read, exported as KCC_REC_VALENCE
 * with the bits above rec_bits cleared).  None of it may put anything
 * in the kernel log (guest_init.sh checks after every program) or break
 * the accounting identity.  Then the seq rule: the thread rewrites its
 * area in a tight loop between two encodings A and B word by word,
 * under an odd seq; samples land in the middle of the rewrite, and the
 * stream must hold A and B only, never a mix, with torn reads counted.
 * Last the quota: threads of uid 65534 (no capability) hold at most
 * valence_per_user registrations (0: 1024, a quarter of the table);
 * the next get EDQUOT, and root still registers while they hold them.
 * Under kcc.ko tracepoints=0, only that registering is -EOPNOTSUPP.
 *
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kcc_guest.h"

#define SPIN_ROUNDS	200000u	/* status checks before giving up */

static int reg(int fd, struct kcc_valence_area *a, uint32_t area_size)
{
	struct kcc_valence_reg r = {
		.size = sizeof(r), .area_size = area_size,
		.area = (uintptr_t)a,
	};

	return kcc_ioc(fd, KCC_IOC_VALENCE_REGISTER, &r);
}

static uint64_t field(int fd, size_t off)
{
	struct kcc_status st;

	if (kcc_status_get(fd, &st))
		return 0;
	return *(uint64_t *)((char *)&st + off);
}

/* Spin until the status field at @off moves: 1 if it did. */
static int spin_until(int fd, size_t off)
{
	uint64_t before = field(fd, off);
	volatile uint64_t x = 0;
	uint32_t i, j;

	for (i = 0; i < SPIN_ROUNDS; i++) {
		for (j = 0; j < 20000; j++)
			x += j;
		if (field(fd, off) != before)
			return 1;
	}
	return 0;
}

#define SF(f)	offsetof(struct kcc_status, f)

static void valid_area(struct kcc_valence_area *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->cur = 3;
	a->root = 1;
	a->acyc_words = 1;
	a->acyc[0] = 0x5;
	a->rec_bits = 3;
	a->rec[0] = ~0ull << 3 | 0x6;	/* stale bits above rec_bits */
	a->table_id = 0x1234abcd;
	a->root_site = 0x401000;
}

/* The KCC_REC_VALENCE entry of thread @tid with table_id 0x1234abcd. */
static int find_entry(const char *buf, size_t len, uint32_t tid)
{
	const struct kcc_stream_header *h = (const void *)buf;
	size_t off = h->header_size;
	int found = 0;

	while (off + sizeof(struct kcc_rec) <= len) {
		const struct kcc_rec *r = (const void *)(buf + off);
		const struct kcc_rec_valence *rv = (const void *)r;
		size_t eo = sizeof(*rv);
		uint32_t i;

		if (r->type == KCC_REC_END || r->size < sizeof(*r))
			break;
		if (r->type == KCC_REC_VALENCE && rv->pid == tid) {
			for (i = 0; i < rv->nr_entries && eo < r->size; i++) {
				const struct kcc_valence_ent *e =
					(const void *)((const char *)r + eo);
				const uint64_t *w = (const uint64_t *)(e + 1);

				if (e->table_id == 0x1234abcd && e->cur == 3 &&
				    e->root == 1 && e->rec_bits == 3 &&
				    e->acyc_words == 1 && e->rec_words == 1 &&
				    w[0] == 0x5 && w[1] == 0x6 && e->samples &&
				    e->root_site == 0x401000)
					found = 1;
				eo += e->size;
			}
		}
		off += r->size;
	}
	return found;
}

#define TORN_ID		0x70707070ull

/* Rewrite @a to encoding @x (all words x, cur 1 or 2) under an odd seq. */
static void torn_write(struct kcc_valence_area *a, uint64_t x)
{
	volatile __u64 *w = a->acyc;
	uint32_t i;

	*(volatile uint32_t *)&a->seq = a->seq + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*(volatile uint32_t *)&a->cur = x & 1 ? 1 : 2;
	for (i = 0; i < KCC_VALENCE_ACYC_WORDS + KCC_VALENCE_REC_WORDS; i++)
		w[i] = x;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*(volatile uint32_t *)&a->seq = a->seq + 1;
}

/*
 * Entries of thread @tid with TORN_ID: *pure those that are A or B
 * whole, *mixed the others.
 */
static void torn_entries(const char *buf, size_t len, uint32_t tid,
			 uint32_t *pure, uint32_t *mixed)
{
	const struct kcc_stream_header *h = (const void *)buf;
	size_t off = h->header_size;

	*pure = *mixed = 0;
	while (off + sizeof(struct kcc_rec) <= len) {
		const struct kcc_rec *r = (const void *)(buf + off);
		const struct kcc_rec_valence *rv = (const void *)r;
		size_t eo = sizeof(*rv);
		uint32_t i, j;

		if (r->type == KCC_REC_END || r->size < sizeof(*r))
			break;
		for (i = 0; r->type == KCC_REC_VALENCE && rv->pid == tid &&
		     i < rv->nr_entries && eo < r->size; i++) {
			const struct kcc_valence_ent *e =
				(const void *)((const char *)r + eo);
			const uint64_t *w = (const uint64_t *)(e + 1);
			uint64_t x = e->cur == 1 ? 0x5555555555555555ull :
						   0xaaaaaaaaaaaaaaaaull;
			int ok = e->acyc_words == KCC_VALENCE_ACYC_WORDS &&
				 e->rec_words == KCC_VALENCE_REC_WORDS;

			eo += e->size;
			if (e->table_id != TORN_ID)
				continue;
			for (j = 0; ok && j < e->acyc_words + e->rec_words; j++)
				ok = w[j] == x;
			if (ok)
				(*pure)++;
			else
				(*mixed)++;
		}
		off += r->size;
	}
}

static void test_torn(int fd, struct kcc_valence_area *a)
{
	uint64_t torn0 = field(fd, SF(valence_torn));
	uint64_t read0 = field(fd, SF(valence_samples));
	uint32_t i, pure, mixed;
	char *buf = NULL;
	long len;

	/*
	 * @a is still registered from the tests before: unregister it
	 * while it is set up field by field under an even seq, or a sample
	 * in between reads a half-built TORN_ID area as whole.
	 */
	reg(fd, NULL, 0);
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->acyc_words = KCC_VALENCE_ACYC_WORDS;
	a->rec_bits = 64 * KCC_VALENCE_REC_WORDS;
	a->table_id = TORN_ID;
	torn_write(a, 0x5555555555555555ull);
	reg(fd, a, sizeof(*a));
	for (i = 0; i < 50 * SPIN_ROUNDS; i++) {
		torn_write(a, i & 1 ? 0xaaaaaaaaaaaaaaaaull :
				      0x5555555555555555ull);
		if (!(i % 4096) && field(fd, SF(valence_torn)) >= torn0 + 20 &&
		    field(fd, SF(valence_samples)) >= read0 + 4)
			break;
	}
	len = kcc_read_stream(fd, &buf, 0);
	torn_entries(buf, len > 0 ? len : 0, gettid(), &pure, &mixed);
	tap_result(len > 0 && pure >= 1 && !mixed &&
		   field(fd, SF(valence_torn)) >= torn0 + 20,
		   "area rewritten in a tight loop: %u whole encodings, %u mixed, %llu torn reads counted",
		   pure, mixed,
		   (unsigned long long)(field(fd, SF(valence_torn)) - torn0));
	free(buf);
}

static int exit_fd;

/* ---- the per-user quota ------------------------------------------------ */

#define QUOTA_EXTRA	8

static struct {
	int fd;
	int go[2];		/* released when written */
	struct kcc_valence_area *areas;
	int *result;
} quota;

static void *quota_thread(void *arg)
{
	long i = (long)arg;
	char c;

	__atomic_store_n(&quota.result[i],
			 reg(quota.fd, &quota.areas[i], sizeof(*quota.areas)),
			 __ATOMIC_RELEASE);
	/* Hold the slot until released: the counts are of holders. */
	if (read(quota.go[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/*
 * In a child of uid 65534: cap + QUOTA_EXTRA threads register; reports
 * on @out "held refused" while they hold, then waits for @in before
 * releasing them.  Exit status 0, or 1 when it could not run.
 */
static int quota_child(unsigned int cap, int out, int in)
{
	unsigned int n = cap + QUOTA_EXTRA, i, held = 0, refused = 0;
	pthread_attr_t at;
	pthread_t *th;
	char line[64], c;

	quota.areas = calloc(n, sizeof(*quota.areas));
	quota.result = calloc(n, sizeof(*quota.result));
	th = calloc(n, sizeof(*th));
	if (!quota.areas || !quota.result || !th || kcc_become(65534, 0) ||
	    pipe(quota.go) || pthread_attr_init(&at) ||
	    pthread_attr_setstacksize(&at, 64 << 10))
		return 1;
	quota.fd = open(KCC_DEVICE, O_RDWR);
	if (quota.fd < 0)
		return 1;
	for (i = 0; i < n; i++) {
		valid_area(&quota.areas[i]);
		quota.result[i] = 1;	/* not registered yet */
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], &at, quota_thread, (void *)(long)i))
			return 1;
	/* Every thread's answer, whatever it is (a hang would stop here). */
	for (i = 0; i < n;)
		if (__atomic_load_n(&quota.result[i], __ATOMIC_ACQUIRE) == 1)
			usleep(1000);
		else
			i++;
	for (i = 0; i < n; i++) {
		held += !quota.result[i];
		refused += quota.result[i] == -EDQUOT;
	}
	snprintf(line, sizeof(line), "%u %u\n", held, refused);
	if (write(out, line, strlen(line)) < 0 || read(in, &c, 1) < 0)
		return 1;
	for (i = 0; i < n; i++)
		if (write(quota.go[1], "x", 1) != 1)
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static void test_quota(int fd, struct kcc_valence_area *a)
{
	unsigned int cap = 0, held = 0, refused = 0;
	int up[2], down[2], status = 1, root = -1;
	char line[64] = "";
	FILE *f;
	pid_t pid;

	f = fopen("/sys/module/kcc/parameters/valence_per_user", "r");
	if (!f || fscanf(f, "%u", &cap) != 1)
		cap = 0;
	if (f)
		fclose(f);
	if (!cap)
		cap = 1024;	/* the documented default: 4096 / 4 */
	if (pipe(up) || pipe(down)) {
		tap_result(0, "valence quota: pipes");
		tap_result(0, "valence quota: root unaffected");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(up[0]);
		close(down[1]);
		_exit(quota_child(cap, up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	if (pid > 0 && read(up[0], line, sizeof(line) - 1) > 0 &&
	    sscanf(line, "%u %u", &held, &refused) == 2) {
		/* While they hold their slots: root is not counted. */
		root = reg(fd, a, sizeof(*a));
		reg(fd, NULL, 0);
	}
	if (write(down[1], "x", 1) < 0)
		tap_diag("valence quota: cannot release the child");
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_diag("valence quota: cap %u: %u held, %u refused (EDQUOT), child status %d",
		 cap, held, refused, status);
	tap_result(held == cap && refused == QUOTA_EXTRA && WIFEXITED(status) &&
		   !WEXITSTATUS(status),
		   "valence quota: uid 65534 holds %u of %u registrations, %u refused with EDQUOT",
		   held, cap + QUOTA_EXTRA, refused);
	tap_result(root == 0, "valence quota: root registers while they hold theirs");
	close(up[0]);
	close(down[1]);
}

/*
 * kcc.ko loaded with tracepoints=0 (guest_init.sh runs this program so
 * once): no exit probe would end a registration with its thread, so
 * registering is refused, and nothing else is tested.
 */
static int without_tracepoints(void)
{
	FILE *f = fopen("/sys/module/kcc/parameters/tracepoints", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == 'N';
}

static int test_without_tracepoints(void)
{
	struct kcc_valence_area *a = aligned_alloc(64, sizeof(*a));
	int fd = kcc_open(O_RDWR);

	tap_plan(2);
	if (!a || fd < 0) {
		tap_result(0, "tracepoints=0: open %s: %s", kcc_dev,
			   strerror(errno));
		tap_result(0, "tracepoints=0: unregister");
		return tap_exit();
	}
	valid_area(a);
	tap_result(reg(fd, a, sizeof(*a)) == -EOPNOTSUPP,
		   "tracepoints=0: registering a valid area is -EOPNOTSUPP (no exit probe would end it)");
	tap_result(reg(fd, NULL, 0) == 0,
		   "tracepoints=0: unregistering still succeeds");
	close(fd);
	free(a);
	return tap_exit();
}

static void *registered_thread(void *arg)
{
	return (void *)(long)reg(exit_fd, arg, sizeof(struct kcc_valence_area));
}

int main(int argc, char **argv)
{
	struct kcc_valence_area *a, *page;
	struct kcc_config c;
	struct kcc_version v = { .size = sizeof(v) };
	struct kcc_status st;
	pthread_t th;
	void *ret;
	char *buf = NULL;
	long len;
	int fd, rc;

	kcc_prog_args(argc, argv, "kcc_valence: the Valence source against hostile areas");
	if (without_tracepoints())
		return test_without_tracepoints();
	kcc_config_default(&c);
	c.source = KCC_SOURCE_VALENCE;
	c.k = KCC_K_INF;
	c.sample_period = 20000;
	fd = kcc_session_start(&c);
	tap_plan(22);

	rc = kcc_ioc(fd, KCC_IOC_VERSION, &v);
	tap_result(!rc && (v.sources & 1u << KCC_SOURCE_VALENCE),
		   "KCC_IOC_VERSION lists the valence source (sources 0x%x)",
		   v.sources);
	a = aligned_alloc(64, sizeof(*a));
	valid_area(a);
	tap_result(reg(fd, a, sizeof(*a) - 8) == -EINVAL,
		   "register: a wrong area_size is -EINVAL");
	tap_result(reg(fd, (void *)((char *)a + 4), sizeof(*a)) == -EINVAL,
		   "register: an area not 8-byte aligned is -EINVAL");
	tap_result(reg(fd, (void *)0xffff888000000000ull, sizeof(*a)) == -EFAULT,
		   "register: a kernel address is -EFAULT");
	tap_result(reg(fd, NULL, 0) == 0, "unregister without a registration: 0");

	tap_result(spin_until(fd, SF(valence_fallback)),
		   "no area: samples fall back to the fp walk (valence_fallback)");

	tap_result(reg(fd, a, sizeof(*a)) == 0, "register a valid area");
	a->size = 12;
	tap_result(spin_until(fd, SF(valence_bad)),
		   "area size field 12: counted in valence_bad");
	a->size = sizeof(*a);
	a->acyc_words = 1000;
	tap_result(spin_until(fd, SF(valence_bad)),
		   "acyc_words 1000: counted in valence_bad");
	a->acyc_words = 1;
	a->rec_bits = 0xffffffffu;
	tap_result(spin_until(fd, SF(valence_bad)),
		   "rec_bits 2^32 - 1: counted in valence_bad");
	a->rec_bits = 3;
	a->seq = 1;
	tap_result(spin_until(fd, SF(valence_torn)),
		   "odd seq: counted in valence_torn, not read");
	a->seq = 2;
	a->rec_over = 1;
	tap_result(spin_until(fd, SF(valence_overflow)),
		   "rec_over set: counted in valence_overflow");
	a->rec_over = 0;
	tap_result(spin_until(fd, SF(valence_samples)),
		   "a valid area is read (valence_samples)");

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	valid_area(page);
	rc = reg(fd, page, sizeof(*page));
	munmap(page, 4096);
	tap_result(!rc && spin_until(fd, SF(valence_fault)),
		   "area munmap()ed after registration: counted in valence_fault");

	/* Back to the valid area, then its record in the stream. */
	reg(fd, a, sizeof(*a));
	spin_until(fd, SF(valence_samples));
	len = kcc_read_stream(fd, &buf, 0);
	tap_result(len > 0 && find_entry(buf, len, gettid()),
		   "the stream has the thread's KCC_REC_VALENCE entry, bits above rec_bits cleared");
	free(buf);

	test_torn(fd, a);

	/* A thread registers and exits: its slot is cleared by the exit. */
	exit_fd = fd;
	rc = pthread_create(&th, NULL, registered_thread, a) ||
	     pthread_join(th, &ret);
	tap_result(!rc && !ret, "a thread registers and exits");
	tap_result(reg(fd, NULL, 0) == 0, "unregister");

	if (ioctl(fd, KCC_IOC_STOP, 0))
		tap_diag("KCC_IOC_STOP: %s", strerror(errno));
	rc = kcc_accounting_settles(fd, &st, KCC_SETTLE_MS);
	kcc_status_diag(&st);
	tap_diag("valence: samples %llu fallback %llu torn %llu bad %llu fault %llu overflow %llu table_full %llu entries %llu",
		 (unsigned long long)st.valence_samples,
		 (unsigned long long)st.valence_fallback,
		 (unsigned long long)st.valence_torn,
		 (unsigned long long)st.valence_bad,
		 (unsigned long long)st.valence_fault,
		 (unsigned long long)st.valence_overflow,
		 (unsigned long long)st.valence_table_full,
		 (unsigned long long)st.valence_entries);
	tap_result(rc == 0, "samples = processed + sum(dropped)");
	tap_result(st.valence_entries >= 1 && st.valence_table_full == 0,
		   "one task table holds the encodings, nothing lost");
	/* Stopped: the child's thousand threads are sampled by nobody. */
	test_quota(fd, a);
	close(fd);
	free(a);
	return tap_exit();
}
