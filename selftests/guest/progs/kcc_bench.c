// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_bench - per-sample processing cost of kcc.ko, measured in the
 * guest through KCC_IOC_INJECT (module loaded with inject=1).
 *
 * For each stack depth, N synthetic stack-only samples over a fixed set
 * of contexts are injected into a fresh session and the worker's time
 * (/sys/class/misc/kcc/work_ns: time spent applying samples, rings
 * drained included) is divided by the samples processed.  Figures only:
 * nothing is asserted but the sample accounting.  Under TCG the figures
 * are those of an emulated CPU, many times slower than hardware.
 *
 * Usage: kcc_bench [-n SAMPLES] [-k K]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kcc_guest.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int read_work(uint64_t *ns, uint64_t *batches)
{
	unsigned long long a, b;
	FILE *f = fopen("/sys/class/misc/kcc/work_ns", "r");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu %llu", &a, &b) == 2;
	fclose(f);
	*ns = a;
	*batches = b;
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const int depths[] = { 4, 16, 64 };
	uint32_t n = 100000, k = 3, batch = 256;
	int fd, opt;
	size_t di;

	while ((opt = getopt(argc, argv, "n:k:")) != -1) {
		if (opt == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (opt == 'k')
			k = strtoul(optarg, NULL, 0);
	}
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no " KCC_DEVICE);
	printf("TAP version 13\n");
	for (di = 0; di < sizeof(depths) / sizeof(depths[0]); di++) {
		int d = depths[di];
		size_t ssz = sizeof(struct kcc_sample) + d * 8;
		char *buf = calloc(batch, ssz);
		struct kcc_inject in = { .size = sizeof(in) };
		struct kcc_config c;
		struct kcc_status st;
		uint64_t t0, t1, wns, wb;
		uint32_t i, j, sent = 0;
		int r = 0;

		kcc_cfg_init(&c, KCC_SOURCE_INJECT, KCC_TARGET_ALL, 0, k);
		if (kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ||
		    kcc_ioc(fd, KCC_IOC_START, NULL)) {
			tap_result(0, "depth %d: inject session", d);
			free(buf);
			continue;
		}
		/* 64 contexts: the innermost frames vary, the rest is shared. */
		for (i = 0; i < batch; i++) {
			struct kcc_sample *s = (void *)(buf + i * ssz);
			uint64_t *stk = (uint64_t *)(s + 1);

			s->size = ssz;
			s->nr_stack = d;
			s->delta = 1;
			for (j = 0; j < (uint32_t)d; j++)
				stk[j] = 0x400000 + 0x40 * (d - j) +
					 (j < 2 ? 0x10000 * (i % 8 + j * 8) : 0);
		}
		t0 = now_ns();
		while (sent < n && !r) {
			in.count = batch;
			in.data = (uintptr_t)buf;
			in.len = batch * ssz;
			r = kcc_ioc(fd, KCC_IOC_INJECT, &in);
			sent += batch;
		}
		kcc_ioc(fd, KCC_IOC_STOP, NULL);
		t1 = now_ns();
		kcc_status_get(fd, &st);
		if (read_work(&wns, &wb))
			wns = wb = 0;
		printf("# bench depth %d k %u: %llu samples, worker %.0f ns/sample (%llu batches), end to end %.0f ns/sample, %llu nodes\n",
		       d, k, (unsigned long long)st.processed,
		       st.processed ? (double)wns / st.processed : 0.0,
		       (unsigned long long)wb,
		       st.processed ? (double)(t1 - t0) / st.processed : 0.0,
		       (unsigned long long)st.nodes);
		tap_result(!r && st.processed == sent,
			   "depth %d: %u samples injected and processed", d, sent);
		free(buf);
	}
	close(fd);
	printf("1..%d\n", tap_nr);
	return tap_exit();
}
