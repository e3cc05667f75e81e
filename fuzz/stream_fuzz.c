// SPDX-License-Identifier: GPL-2.0
/*
 * stream_fuzz.c - libFuzzer target: the /dev/kcc stream parser, and for
 * streams it accepts, the writer (which must give the same bytes back
 * once normalised) and the k-CCF of every task.
 */
#include <stdlib.h>
#include <string.h>

#include "stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream s, t;
	struct sbuf b = { 0 };
	uint32_t i;

	if (stream__parse(&s, data, size)) {
		stream__exit(&s);
		return 0;
	}
	if (!stream__write(&s, &b) && stream__parse(&t, b.p, b.len))
		__builtin_trap();	/* the writer made something unreadable */
	stream__exit(&t);
	for (i = 0; i < s.nr_tasks; i++) {
		struct pool kccf;
		uint32_t k = s.hdr.k == KCC_K_INF ? 3 : s.hdr.k;

		if (pool__alloc(&kccf, 4 * s.tasks[i].ksf.f.count + 16,
				s.nr_ctrs - 1))
			continue;
		kcc_inv_k(&s.tasks[i].ksf.f, s.hdr.k, k, &kccf.f, NULL);
		pool__exit(&kccf);
	}
	sbuf__exit(&b);
	stream__exit(&s);
	return 0;
}
