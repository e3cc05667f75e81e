// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_inject - KCC_IOC_INJECT in the guest (module loaded with inject=1).
 *
 * Built-in tests: samples whose forest is known by construction (stacks
 * only: every sample lands on its root path with one sample and its
 * delta), all-or-nothing validation of a batch, bad pointers, injection
 * outside an inject session, the accounting identity.
 *
 * With sample files (the "KCCSMP" files of user/lib/samples.h, e.g.
 * from `kcc synth`): each file is injected into a fresh session with k
 * from -k and the resulting stream is printed on the console as a blob
 * named after the file, for the host to compare with `kcc replay` of
 * the same file (selftests/kcc/guest.sh).
 *
 * Usage: kcc_inject [-k K] [SAMPLE_FILE...]
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or inject off.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kcc_guest.h"

#define MAXS	(sizeof(struct kcc_sample) + KCC_INJECT_MAX_STACK * 8 + \
		 KCC_INJECT_MAX_BRANCHES * sizeof(struct kcc_branch))

/* Append a stack-only sample to @buf at *@len. */
static void put_sample(char *buf, size_t *len, const uint64_t *stack, int n,
		       uint64_t delta)
{
	struct kcc_sample *s = (struct kcc_sample *)(buf + *len);

	memset(s, 0, sizeof(*s));
	s->size = sizeof(*s) + n * 8;
	s->nr_stack = n;
	s->delta = delta;
	memcpy(s + 1, stack, n * 8);
	*len += s->size;
}

static int inject(int fd, const void *buf, size_t len, uint32_t count,
		  uint32_t *done)
{
	struct kcc_inject in = {
		.size = sizeof(in), .count = count,
		.data = (uintptr_t)buf, .len = len,
	};
	int r = kcc_ioc(fd, KCC_IOC_INJECT, &in);

	if (done)
		*done = in.done;
	return r;
}

static int session(int fd, uint32_t k)
{
	struct kcc_config c;

	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, k);
	if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c))
		return -1;
	return kcc_ioc(fd, KCC_IOC_START, NULL);
}

/* The node of @t reached from a top root along @path, or -1. */
static long find_path(const struct gtask *t, const uint64_t *path, int n)
{
	uint32_t parent = KCC_NODE_ROOT_TOP, i;
	int d;

	for (d = 0; d < n; d++) {
		for (i = 0; i < t->rec->nr_nodes; i++)
			if (gtask_node(t, i)->parent == parent &&
			    gtask_node(t, i)->label == path[d])
				break;
		if (i == t->rec->nr_nodes)
			return -1;
		parent = i;
	}
	return parent;
}

struct known {
	pid_t pid;
	int found;
	uint64_t hot[3], cold[3];	/* calls, events, samples */
	uint32_t nodes;
};

static const uint64_t hot_path[] = { 0x401000, 0x402010, 0x403020 };
static const uint64_t cold_path[] = { 0x401000, 0x404010, 0x403020 };

static void known_task(const struct gtask *t, void *arg)
{
	struct known *kn = arg;
	long h, c;

	if (t->rec->pid != (uint32_t)kn->pid)
		return;
	kn->found++;
	kn->nodes = t->rec->nr_nodes;
	h = find_path(t, hot_path, 3);
	c = find_path(t, cold_path, 3);
	if (h >= 0)
		memcpy(kn->hot, gtask_ctr(t, h), sizeof(kn->hot));
	if (c >= 0)
		memcpy(kn->cold, gtask_ctr(t, c), sizeof(kn->cold));
}

static void test_known(int fd)
{
	uint64_t st_hot[3] = { hot_path[2], hot_path[1], hot_path[0] };
	uint64_t st_cold[3] = { cold_path[2], cold_path[1], cold_path[0] };
	char *buf = malloc(64 * 1024);
	struct known kn = { .pid = getpid() };
	uint64_t ntasks = 0, nnodes = 0;
	struct kcc_status st;
	size_t len = 0;
	uint32_t done;
	char *sbuf = NULL;
	long slen;
	int i, r;

	tap_result(!session(fd, KCC_K_INF), "inject session, k=inf");
	for (i = 0; i < 90; i++)
		put_sample(buf, &len, st_hot, 3, 7);
	for (i = 0; i < 10; i++)
		put_sample(buf, &len, st_cold, 3, 5);
	r = inject(fd, buf, len, 100, &done);
	tap_result(!r && done == 100, "100 samples injected (done %u)", done);
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	kcc_status_get(fd, &st);
	tap_result(st.processed == 100 && st.samples == 100 && st.tasks == 1,
		   "status: 100 samples, 100 processed, one task");
	slen = kcc_read_stream(fd, &sbuf, 0);
	tap_result(slen > 0 && !kcc_stream_check(sbuf, slen, &ntasks, &nnodes),
		   "stream well-formed");
	if (slen > 0) {
		kcc_stream_walk(sbuf, slen, known_task, NULL, &kn);
		free(sbuf);
	}
	tap_diag("hot %llu/%llu/%llu cold %llu/%llu/%llu nodes %u",
		 (unsigned long long)kn.hot[0], (unsigned long long)kn.hot[1],
		 (unsigned long long)kn.hot[2], (unsigned long long)kn.cold[0],
		 (unsigned long long)kn.cold[1], (unsigned long long)kn.cold[2],
		 kn.nodes);
	tap_result(kn.found == 1 && kn.nodes == 5 &&
		   kn.hot[KCC_CTR_SAMPLES] == 90 && kn.hot[KCC_CTR_EVENTS] == 630 &&
		   kn.cold[KCC_CTR_SAMPLES] == 10 && kn.cold[KCC_CTR_EVENTS] == 50 &&
		   kn.hot[KCC_CTR_CALLS] == 0,
		   "forest of the injecting thread: 5 nodes, 90 samples/630 events on the hot path, 10/50 on the cold one");

	/* A batch with one bad sample is refused whole. */
	tap_result(!session(fd, 3), "new session");
	len = 0;
	put_sample(buf, &len, st_hot, 3, 1);
	put_sample(buf, &len, st_hot, 3, 1);
	((struct kcc_sample *)(buf + len - (sizeof(struct kcc_sample) + 24)))->calls = 1;	/* without KCC_SAMPLE_CALLS */
	r = inject(fd, buf, len, 2, &done);
	tap_result(r == -EINVAL, "a batch with calls but no KCC_SAMPLE_CALLS -> EINVAL (%d)", r);
	len = 0;
	put_sample(buf, &len, st_hot, 3, 1);
	r = inject(fd, buf, len, 2, &done);
	tap_result(r == -EINVAL, "count larger than the buffer holds -> EINVAL");
	r = inject(fd, buf, len + 8, 1, &done);
	tap_result(r == -EINVAL, "bytes left after the last sample -> EINVAL");
	((struct kcc_sample *)buf)->nr_stack = KCC_INJECT_MAX_STACK + 1;
	r = inject(fd, buf, len, 1, &done);
	tap_result(r == -EINVAL, "nr_stack above KCC_INJECT_MAX_STACK -> EINVAL");
	r = inject(fd, (void *)8, 4096, 1, &done);
	tap_result(r == -EFAULT, "data at address 8 -> EFAULT");
	r = inject(fd, buf, 1ull << 40, 1, &done);
	tap_result(r == -EINVAL, "len 2^40 -> EINVAL");
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	kcc_status_get(fd, &st);
	tap_result(st.samples == 0 && st.processed == 0,
		   "refused batches leave no sample behind");
	len = 0;
	put_sample(buf, &len, st_hot, 3, 1);
	r = inject(fd, buf, len, 1, &done);
	tap_result(r == -EINVAL, "INJECT into a stopped session -> EINVAL");
	{
		struct kcc_config c;

		kcc_cfg_init(&c, KCC_SOURCE_FP, KCC_TARGET_ALL, 0, 3);
		kcc_ioc(fd, KCC_IOC_CONFIGURE, &c);
		kcc_ioc(fd, KCC_IOC_START, NULL);
		r = inject(fd, buf, len, 1, &done);
		kcc_ioc(fd, KCC_IOC_STOP, NULL);
		tap_result(r == -EINVAL, "INJECT into an fp session -> EINVAL");
	}

	/* Many samples through the small rings: none lost. */
	tap_result(!session(fd, 3), "new session");
	len = 0;
	for (i = 0; i < 400; i++) {
		uint64_t stk[40];
		int j;

		for (j = 0; j < 40; j++)
			stk[j] = 0x500000 + (j + (i % 7)) * 0x100;
		put_sample(buf, &len, stk, 40, 1);
		if (len > 60 * 1024)
			break;
	}
	{
		uint32_t n = i < 400 ? i + 1 : 400, rounds;

		for (rounds = 0, r = 0; rounds < 50 && !r; rounds++)
			r = inject(fd, buf, len, n, &done);
		kcc_ioc(fd, KCC_IOC_STOP, NULL);
		kcc_status_get(fd, &st);
		tap_result(!r && st.processed == (uint64_t)n * 50 &&
			   st.dropped[KCC_DROP_RING_FULL] == 0,
			   "%u samples of 40 frames in 50 batches: all processed (%llu)",
			   n * 50, (unsigned long long)st.processed);
	}
	kcc_check_accounting(fd, "inject");
	free(buf);
}

static void inject_file(int fd, const char *path, uint32_t k)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	uint64_t ntasks = 0, nnodes = 0;
	struct stat sb;
	size_t off, n = 0;
	char *buf, *sbuf = NULL;
	uint32_t done;
	FILE *f;
	long slen;
	int r;

	f = fopen(path, "r");
	if (!f || fstat(fileno(f), &sb) || sb.st_size < 16) {
		tap_result(0, "%s: cannot read", name);
		return;
	}
	buf = malloc(sb.st_size);
	if (fread(buf, 1, sb.st_size, f) != (size_t)sb.st_size ||
	    memcmp(buf, "KCCSMP", 6)) {
		tap_result(0, "%s: not a sample file", name);
		fclose(f);
		free(buf);
		return;
	}
	fclose(f);
	off = *(uint32_t *)(buf + 12);
	for (size_t o = off; o + sizeof(struct kcc_sample) <= (size_t)sb.st_size;
	     o += ((struct kcc_sample *)(buf + o))->size) {
		if (!((struct kcc_sample *)(buf + o))->size)
			break;
		n++;
	}
	r = session(fd, k);
	if (!r)
		r = inject(fd, buf + off, sb.st_size - off, n, &done);
	kcc_ioc(fd, KCC_IOC_STOP, NULL);
	tap_result(!r && done == n, "%s: %zu samples injected with k=%u", name,
		   n, k);
	slen = kcc_read_stream(fd, &sbuf, 0);
	tap_result(slen > 0 && !kcc_stream_check(sbuf, slen, &ntasks, &nnodes),
		   "%s: stream well-formed (%llu nodes)", name,
		   (unsigned long long)nnodes);
	if (slen > 0) {
		kcc_blob_print(name, sbuf, slen);
		free(sbuf);
	}
	kcc_check_accounting(fd, name);
	free(buf);
}

int main(int argc, char **argv)
{
	struct kcc_version v = { .size = sizeof(v) };
	uint32_t k = 3;
	int fd, opt;

	while ((opt = getopt(argc, argv, "k:")) != -1)
		if (opt == 'k')
			k = strtoul(optarg, NULL, 0);
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no " KCC_DEVICE);
	if (kcc_ioc(fd, KCC_IOC_VERSION, &v) ||
	    !(v.sources & 1u << KCC_SOURCE_INJECT))
		tap_skip_all("kcc.ko loaded without inject=1");
	printf("TAP version 13\n");
	if (optind == argc)
		test_known(fd);
	for (; optind < argc; optind++)
		inject_file(fd, argv[optind], k);
	close(fd);
	printf("1..%d\n", tap_nr);
	return tap_exit();
}
