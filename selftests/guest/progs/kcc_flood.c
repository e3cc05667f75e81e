// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_flood - hostile labels against the forests of kcc.ko (module
 * loaded with inject=1).
 *
 * Labels are addresses the profiled program chooses.  This program plays
 * one that knows the forest's hash under the fixed seed: it searches
 * NLAB 16-byte aligned addresses that share the bucket of 0x401000
 * among the buckets of a task_nodes forest (the lbr/ core is compiled
 * in for that, as in selftests/kcc/hashflood.c), and injects ROUNDS
 * rounds of one one-frame sample per label: every sample is a lookup of
 * a depth-0 root, a chain walk of up to NLAB nodes when they collide.
 * The same is done with NLAB consecutive 16-byte aligned addresses
 * (benign).  It prints the worker time per sample of both sessions
 * (/sys/class/misc/kcc/work_ns) and their ratio: close to 1 with the
 * per-forest random seed, large when kcc.ko was loaded with
 * fixed_seed=1.  Figures, not assertions (timed assertions are not
 * tests); what it asserts is exact: every sample is applied or counted
 * as dropped, each session's one forest holds NLAB roots (at most,
 * after budget drops), and with -b (kcc.ko loaded with
 * task_budget_us=1) no drain applies more than one sample of the task,
 * the rest being KCC_DROP_BUDGET drops.
 *
 * Usage: kcc_flood [-b] [-n NLAB] [-r ROUNDS]
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device or inject off.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kcc_guest.h"
/*
 * The core's forest, to hash labels exactly as kcc.ko does: the guest
 * programs are single-file static builds (build_progs.sh).
 */
#include "../../../lbr/kcc_forest.c"

#define TASK_NODES	4096

struct run {
	double ns_per_sample;
	uint64_t processed;
	uint64_t budget_drops;
	uint64_t batches;
	uint64_t nodes;
	uint64_t tasks;
	int accounting;		/* kcc_accounting_settles() */
};

/* Labels of 16-byte aligned routines sharing the bucket of 0x401000. */
static uint64_t *colliding(uint32_t n)
{
	size_t sz = kcc_forest_mem_size(TASK_NODES, KCC_NR_CTRS - 1);
	void *mem = malloc(sz);
	uint64_t *lab = calloc(n, sizeof(*lab)), cand;
	struct kcc_forest f;
	uint32_t target, i = 0;

	if (!mem || !lab ||
	    kcc_forest_init(&f, mem, sz, TASK_NODES, KCC_NR_CTRS - 1)) {
		tap_diag("cannot make a forest of %u nodes", TASK_NODES);
		exit(1);
	}
	target = kcc_forest_hash(&f, KCC_ROOT_TOP, 0x401000);
	for (cand = 0x401000; i < n; cand += 16)
		if (kcc_forest_hash(&f, KCC_ROOT_TOP, cand) == target)
			lab[i++] = cand;
	free(mem);
	return lab;
}

static uint64_t *spread(uint32_t n)
{
	uint64_t *lab = calloc(n, sizeof(*lab));
	uint32_t i;

	for (i = 0; lab && i < n; i++)
		lab[i] = 0x401000 + 16 * (uint64_t)i;
	return lab;
}

static int read_u64_pair(const char *path, uint64_t *a, uint64_t *b)
{
	unsigned long long x = 0, y = 0;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%llu %llu", &x, &y);
	fclose(f);
	*a = x;
	*b = y;
	return n == 2 ? 0 : -1;
}

static void count_nodes(const struct gtask *t, void *arg)
{
	struct run *r = arg;

	r->tasks++;
	r->nodes += t->rec->nr_nodes;
}

/* One session: ROUNDS x NLAB one-frame samples of @lab, then the figures. */
static int flood(const uint64_t *lab, uint32_t n, uint32_t rounds,
		 struct run *out)
{
	size_t one = sizeof(struct kcc_sample) + 8, len = (size_t)n * one;
	char *buf = malloc(len), *stream = NULL;
	struct kcc_status st;
	struct kcc_config c;
	uint64_t work_ns, batches;
	uint32_t i, round;
	long slen;
	int fd;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return -1;
	for (i = 0; i < n; i++) {
		struct kcc_sample *s = (void *)(buf + i * one);

		memset(s, 0, sizeof(*s));
		s->size = one;
		s->nr_stack = 1;
		s->delta = 1;
		memcpy(s + 1, &lab[i], 8);
	}
	kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, 3);
	c.task_nodes = TASK_NODES;
	fd = kcc_open(O_RDWR);
	if (fd < 0 || kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
	    kcc_ioc(fd, KCC_IOC_START, NULL)) {
		tap_diag("session: %s", strerror(errno));
		free(buf);
		return -1;
	}
	for (round = 0; round < rounds; round++) {
		struct kcc_inject in = {
			.size = sizeof(in), .count = n,
			.data = (uintptr_t)buf, .len = len,
		};

		if (kcc_ioc(fd, KCC_IOC_INJECT, &in) || in.done != n) {
			tap_diag("inject round %u: %s, %u done", round,
				 strerror(errno), in.done);
			break;
		}
	}
	out->accounting = kcc_accounting_settles(fd, &st, KCC_SETTLE_MS);
	if (read_u64_pair("/sys/class/misc/kcc/work_ns", &work_ns, &batches))
		work_ns = batches = 0;
	out->processed = st.processed;
	out->budget_drops = st.dropped[KCC_DROP_BUDGET];
	out->batches = batches;
	out->ns_per_sample = st.processed ? (double)work_ns / st.processed : 0;
	if (kcc_accounting_settles(fd, &st, 0) == 0 &&
	    st.samples != (uint64_t)rounds * n)
		out->accounting = 1;
	slen = kcc_read_stream(fd, &stream, 1 << 16);
	if (slen > 0)
		kcc_stream_walk(stream, slen, count_nodes, NULL, out);
	free(stream);
	close(fd);
	free(buf);
	return 0;
}

static int roots_ok(const struct run *r, uint32_t n)
{
	return r->budget_drops ? r->nodes && r->nodes <= n : r->nodes == n;
}

static int param(const char *name)
{
	char path[128];
	int v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kcc/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	/* bool parameters read Y/N */
	return v;
}

static int param_yes(const char *name)
{
	char path[128], c = 'N';
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kcc/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, " %c", &c) != 1)
		c = 'N';
	fclose(f);
	return c == 'Y';
}

int main(int argc, char **argv)
{
	uint32_t n = 2000, rounds = 8;
	struct run benign, hostile;
	struct kcc_version v = { .size = sizeof(v) };
	const char *seed;
	uint64_t *bad, *good;
	int opt, budget = 0, fd;

	while ((opt = getopt(argc, argv, "bn:r:h")) != -1) {
		switch (opt) {
		case 'b':
			budget = 1;
			break;
		case 'n':
			n = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-b] [-n NLAB] [-r ROUNDS]\n",
				argv[0]);
			return 2;
		}
	}
	if (!n || n > TASK_NODES / 2 || !rounds) {
		fprintf(stderr, "kcc_flood: NLAB 1..%u, ROUNDS > 0\n",
			TASK_NODES / 2);
		return 2;
	}
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no /dev/kcc");
	if (kcc_ioc(fd, KCC_IOC_VERSION, &v) ||
	    !(v.sources & 1u << KCC_SOURCE_INJECT))
		tap_skip_all("kcc.ko without inject=1");
	close(fd);
	tap_plan(3);
	seed = param_yes("fixed_seed") ? "fixed seed" : "random seeds";

	bad = colliding(n);
	good = spread(n);
	if (!good || flood(good, n, rounds, &benign) ||
	    flood(bad, n, rounds, &hostile)) {
		tap_result(0, "two flood sessions");
		return tap_exit();
	}
	tap_diag("%s, task_budget_us %d: %u labels x %u rounds", seed,
		 param("task_budget_us"), n, rounds);
	tap_diag("spread labels:    %.0f ns/sample (%llu applied, %llu drains, %llu budget drops)",
		 benign.ns_per_sample, (unsigned long long)benign.processed,
		 (unsigned long long)benign.batches,
		 (unsigned long long)benign.budget_drops);
	tap_diag("colliding labels: %.0f ns/sample (%llu applied, %llu drains, %llu budget drops)",
		 hostile.ns_per_sample, (unsigned long long)hostile.processed,
		 (unsigned long long)hostile.batches,
		 (unsigned long long)hostile.budget_drops);
	if (benign.ns_per_sample > 0)
		tap_diag("flood factor (colliding / spread): %.2f with %s",
			 hostile.ns_per_sample / benign.ns_per_sample, seed);

	tap_result(!benign.accounting && !hostile.accounting,
		   "every injected sample is applied or counted as dropped");
	/*
	 * Budget drops (-b, or a slow kernel past the default budget) may
	 * take every sample of a label: then at most n roots.
	 */
	tap_result(benign.tasks == 1 && hostile.tasks == 1 &&
		   roots_ok(&benign, n) && roots_ok(&hostile, n),
		   "one forest per session, %u roots each unless budget drops (%llu, %llu)",
		   n, (unsigned long long)benign.nodes,
		   (unsigned long long)hostile.nodes);
	if (budget)
		tap_result(hostile.processed <= hostile.batches,
			   "task_budget_us=1: at most one sample of the task per drain, the rest KCC_DROP_BUDGET");
	else
		tap_skip("task_budget_us=1 (kcc.ko loaded without it; -b)");
	free(bad);
	free(good);
	return tap_exit();
}
