// SPDX-License-Identifier: GPL-2.0
/*
 * perfdata_fuzz.c - libFuzzer target: the perf.data reader of kcc import
 * (user/util/perfdata.c).  For files it opens, every record it returns is
 * read to its last byte, so that a callchain, branch stack or string the
 * reader points past its buffer is caught by AddressSanitizer, and what
 * it promises is checked: records inside the data section, in order,
 * sample events that exist, strings terminated inside the file.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void check_str(const uint8_t *buf, size_t len, const char *s)
{
	if ((const uint8_t *)s < buf || (const uint8_t *)s >= buf + len ||
	    !memchr(s, 0, buf + len - (const uint8_t *)s))
		__builtin_trap();	/* a string not NUL-terminated in the file */
	sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfdata pd;
	struct perfdata_rec r;
	uint64_t last = 0, i;
	uint32_t e;
	int ret;

	if (perfdata__open(&pd, data, size)) {
		perfdata__exit(&pd);
		return 0;
	}
	for (e = 0; e < pd.nr_ev; e++) {
		for (i = 0; i < pd.ev[e].nr_ids; i++)
			sink += pd.ev[e].ids[i];
		if (!memchr(pd.ev[e].name, 0, sizeof(pd.ev[e].name)))
			__builtin_trap();
	}
	while ((ret = perfdata__next(&pd, &r)) > 0) {
		if (r.off < last || r.off >= size)
			__builtin_trap();	/* records go forward, in the file */
		last = r.off;
		switch (r.kind) {
		case PERFDATA_SAMPLE:
			if (r.s.ev >= pd.nr_ev)
				__builtin_trap();
			for (i = 0; i < r.s.nr_chain; i++)
				sink += r.s.chain[i];
			for (i = 0; i < r.s.nr_br; i++)
				sink += r.s.br[i].from ^ r.s.br[i].to;
			break;
		case PERFDATA_MMAP:
			check_str(data, size, r.m.path);
			break;
		case PERFDATA_COMM:
			check_str(data, size, r.comm);
			break;
		default:
			break;
		}
	}
	if (ret < 0 && !pd.err[0])
		__builtin_trap();	/* a failure must say why */
	perfdata__exit(&pd);
	return 0;
}
