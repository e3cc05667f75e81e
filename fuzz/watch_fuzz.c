// SPDX-License-Identifier: GPL-2.0
/*
 * watch_fuzz.c - libFuzzer target: the watch-file parser (user/util/
 * watch.c) and the numbering it builds (lbr/kcc_ppp.c), checked against a
 * brute force.  (watch__build() itself runs in selftests/kcc/watch.sh.)
 *
 * Input: the watch file, then optionally a NUL byte and a call sequence,
 * one byte an event: 0xff returns, any other byte b calls routine
 * b % (routines named by the file).  When the file parses and numbers,
 * the sequence is counted by watch__count_trace() and every watched
 * context's count must equal the number of calls whose stack ended with
 * that context, counted here by comparing stack suffixes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEPTH	64
/*
 * watch__build() numbers within KCC_PPP_MAX_RANGE (4 Mi counters): 32 MiB
 * of slot tables set up per call, some 50 inputs a second.  The target
 * numbers with this smaller range instead, the same code otherwise, and
 * reaches the "does not fit" refusal with far smaller files.
 */
#define FUZZ_RANGE	4096

static FILE *nul;
static int memfd = -1;
static char path[64];

/* watch__build() with FUZZ_RANGE. */
static int build(struct watch *w)
{
	size_t sz = kcc_ppp_mem_size(w->n, w->nlabels, FUZZ_RANGE);

	w->mem = sz ? malloc(sz) : NULL;
	if (!w->mem)
		return -1;
	return kcc_ppp_build(&w->p, w->mem, sz, w->labels, w->lens, w->n,
			     FUZZ_RANGE);
}

static void check_counts(const struct watch *w, const uint8_t *ev,
			 size_t nev, uint32_t nsyms)
{
	uint32_t stack[MAX_DEPTH], depth = 0, i, j, off;
	struct watch_counts wc;
	struct trace t;
	uint64_t *want, calls = 0;
	size_t e;

	if (trace__init(&t))
		return;
	want = calloc(w->n, sizeof(*want));
	for (e = 0; want && e < nev; e++) {
		if (ev[e] == 0xff) {
			if (!depth)
				continue;
			depth--;
			trace__push(&t, TRACE_RET);
			continue;
		}
		if (depth == MAX_DEPTH)
			continue;
		stack[depth++] = ev[e] % nsyms;
		trace__push(&t, ev[e] % nsyms);
		calls++;
		for (i = 0, off = 0; i < w->n; off += w->lens[i++]) {
			if (w->lens[i] > depth)
				continue;
			for (j = 0; j < w->lens[i]; j++)
				if (stack[depth - w->lens[i] + j] != w->labels[off + j])
					break;
			want[i] += j == w->lens[i];
		}
	}
	while (depth--)
		trace__push(&t, TRACE_RET);
	t.max_depth = MAX_DEPTH;
	if (want && !watch__count_trace(w, &t, &wc)) {
		if (wc.calls != calls)
			__builtin_trap();
		for (i = 0; i < w->n; i++)
			if (wc.counts[w->p.ctx_num[i]] != want[i])
				__builtin_trap();	/* not the brute force's count */
		watch__print(w, &wc, nul);
		free(wc.counts);
	}
	free(want);
	trace__exit(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *z = memchr(data, 0, size);
	size_t flen = z ? (size_t)(z - data) : size;
	struct symtab st;
	struct watch w;

	if (!nul) {
		nul = fopen("/dev/null", "w");
		/* Parse errors are expected by the thousand. */
		stderr = nul;
		memfd = memfd_create("watch", 0);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) || pwrite(memfd, data, flen, 0) != (ssize_t)flen)
		abort();
	if (symtab__init(&st))
		return 0;
	if (!watch__read(&w, path) && !watch__resolve(&w, &st) &&
	    !build(&w) && symtab__nr(&st))
		check_counts(&w, z ? z + 1 : data + size,
			     z ? size - flen - 1 : 0, symtab__nr(&st));
	watch__exit(&w);
	symtab__exit(&st);
	return 0;
}
