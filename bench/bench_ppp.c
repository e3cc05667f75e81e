// SPDX-License-Identifier: GPL-2.0
/*
 * bench_ppp - what counting watched k-contexts in a PPP-numbered array
 * (lbr/kcc_ppp.c) costs per call next to building the k-SF
 * (kcc_ksf_call()), and the memory of each, on a trace.
 *
 * Usage: bench_ppp -t TRACE -w WATCH -k K [-R REPEAT]
 *
 * Both passes replay the whole trace (one call or return per event) over
 * memory that was sized and touched by a first pass, best of REPEAT.
 * The k-SF pass is the one kcc.ko makes per replayed call today; the
 * watch pass is what kcc record --watch would make instead.  The passes
 * are functions of their own (pass_ksf, pass_ppp) so that bench/ppp.sh
 * can count their instructions with callgrind.  Nothing is asserted.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ccf.h"
#include "kcc_forest.h"
#include "kcc_ppp.h"
#include "trace_file.h"
#include "watch.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void pass_ksf(struct kcc_ksf *s,
					       const struct trace *t)
{
	uint64_t i;

	for (i = 0; i < t->nr; i++) {
		if (t->ev[i] == TRACE_RET)
			kcc_ksf_return(s);
		else
			kcc_ksf_call(s, t->ev[i]);
	}
}

__attribute__((noinline)) static void pass_ppp(struct kcc_ppp_run *r,
					       const struct trace *t)
{
	uint64_t i;

	for (i = 0; i < t->nr; i++) {
		if (t->ev[i] == TRACE_RET)
			kcc_ppp_return(r);
		else
			kcc_ppp_call(r, t->ev[i]);
	}
}

int main(int argc, char **argv)
{
	const char *tpath = NULL, *wpath = NULL;
	uint32_t k = 3, repeat = 3, r, cap;
	double best_ksf = 1e30, best_ppp = 1e30, t0;
	struct kcc_ppp_frame *pstack;
	struct kcc_frame *kstack;
	struct kcc_ppp_run run;
	struct kcc_ksf s;
	struct pool pool;
	struct watch w;
	struct trace t;
	uint64_t *counts, lost = 0;
	size_t ksf_mem, ppp_mem;
	int c;

	while ((c = getopt(argc, argv, "t:w:k:R:")) != -1) {
		switch (c) {
		case 't':
			tpath = optarg;
			break;
		case 'w':
			wpath = optarg;
			break;
		case 'k':
			k = (uint32_t)atoi(optarg);
			break;
		case 'R':
			repeat = (uint32_t)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_ppp -t TRACE -w WATCH -k K [-R REPEAT]\n");
			return 2;
		}
	}
	if (!tpath || !wpath || !k || !repeat) {
		fprintf(stderr, "usage: bench_ppp -t TRACE -w WATCH -k K [-R REPEAT]\n");
		return 2;
	}
	if (trace__init(&t) || trace__read(&t, tpath, false) ||
	    watch__read(&w, wpath) || watch__resolve(&w, &t.syms) ||
	    watch__build(&w))
		return 1;
	cap = t.max_depth ? (uint32_t)t.max_depth : 1;

	/* k-SF: a first pass sizes the pool (it doubles until it fits). */
	if (pool__build_ksf(&pool, &t, k, 0, &lost))
		return 1;
	kstack = malloc(cap * sizeof(*kstack));
	pstack = malloc(cap * sizeof(*pstack));
	counts = malloc(w.p.range * sizeof(*counts));
	if (!kstack || !pstack || !counts)
		return 1;
	for (r = 0; r < repeat; r++) {
		kcc_forest_reset(&pool.f);
		kcc_ksf_init(&s, &pool.f, k, kstack, cap);
		t0 = now();
		pass_ksf(&s, &t);
		t0 = now() - t0;
		if (t0 < best_ksf)
			best_ksf = t0;
		kcc_ppp_run_init(&run, &w.p, counts, pstack, cap);
		t0 = now();
		pass_ppp(&run, &t);
		t0 = now() - t0;
		if (t0 < best_ppp)
			best_ppp = t0;
	}
	/* What a task holds: nodes and buckets, or counters. */
	ksf_mem = (size_t)pool.f.count * pool.f.stride +
		  ((size_t)pool.f.bucket_mask + 1) * sizeof(uint32_t);
	ppp_mem = (size_t)w.p.range * sizeof(uint64_t);
	printf("%s: %" PRIu64 " calls, k=%u, %u watched contexts, %u numbers (delta %.3f)\n",
	       tpath, run.calls, k, w.p.nctx, w.p.range,
	       (double)w.p.range / w.p.nctx);
	printf("  k-SF:  %.1f ns/call, %u nodes, %zu bytes (all contexts; >= %zu for the watched ones)\n",
	       best_ksf * 1e9 / run.calls, pool.f.count, ksf_mem,
	       (size_t)w.p.nctx * (pool.f.stride + sizeof(uint32_t)));
	printf("  watch: %.1f ns/call, %zu bytes of counters per task, %zu bytes of shared tables\n",
	       best_ppp * 1e9 / run.calls, ppp_mem,
	       kcc_ppp_mem_size(w.p.nctx, w.nlabels, w.p.range));
	printf("  watched %" PRIu64 " (call, context) pairs, residual %" PRIu64 " calls, aliases refused %" PRIu64 "\n",
	       run.matched, run.unwatched, run.aliased);
	free(kstack);
	free(pstack);
	free(counts);
	pool__exit(&pool);
	watch__exit(&w);
	trace__exit(&t);
	return 0;
}
