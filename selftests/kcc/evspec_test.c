// SPDX-License-Identifier: GPL-2.0
/*
 * evspec_test.c - kcc record -e names to perf encodings (user/lib/evspec.c):
 * perf's generic names, rNNNN, PMU/TERMS/ against a sysfs tree made here
 * in a temporary directory, and libpfm4 names encoded for a Skylake PMU
 * forced with LIBPFM_FORCE_PMU, so the expected values come from the
 * Intel SDM (Vol. 3B, Skylake events: BR_INST_RETIRED.NEAR_CALL is event
 * C4H umask 02H, MEM_LOAD_RETIRED.L3_MISS event D1H umask 20H) and hold on
 * any x86 host.  Every error case must fail with its errno and a message
 * that names the event.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evspec.h"
#include "ktap.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("Bail out! cannot write %s\n", path);
		exit(KSFT_FAIL);
	}
}

/* A cpu PMU with Intel's layout and a kcc_lbr-like PMU of dynamic type. */
static void make_sysfs(void)
{
	put("cpu/type", "4\n");
	put("cpu/format/event", "config:0-7\n");
	put("cpu/format/umask", "config:8-15\n");
	put("cpu/format/inv", "config:23\n");
	put("cpu/format/cmask", "config:24-31\n");
	put("cpu/format/ldlat", "config1:0-15\n");
	put("cpu/format/frontend", "config2:0-23\n");
	put("cpu/format/split", "config:32-35,40-43\n");
	put("cpu/format/broken", "config3:0-7\n");
	put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("cpu/events/ldlat-any", "event=0xcd,umask=0x1,ldlat=?\n");
	put("kcc_lbr/type", "23\n");
	put("kcc_lbr/format/event", "config:0-7\n");
	put("kcc_lbr/events/clock", "event=0x1\n");
	put("kcc_lbr/events/calls", "event=0x2\n");
	put("kcc_lbr/events/misses", "event=0x3\n");
	put("nocalls/type", "30\n");
	put("nocalls/format/event", "config:0-7\n");
	put("nocalls/events/clock", "event=0x1\n");
	put("badtype/type", "many\n");
	put("badtype/format/event", "config:0-7\n");
}

struct good {
	const char *spec;
	uint32_t type;
	uint64_t config, config1, config2;
	uint32_t how;
};

static const struct good goods[] = {
	{ "cycles", 0, 0, 0, 0, EVSPEC_LEGACY },
	{ "cache-misses", 0, 3, 0, 0, EVSPEC_LEGACY },
	{ "branch-misses:u", 0, 5, 0, 0, EVSPEC_LEGACY },
	{ "ref-cycles", 0, 9, 0, 0, EVSPEC_LEGACY },
	{ "cpu-clock", 1, 0, 0, 0, EVSPEC_LEGACY },
	{ "task-clock", 1, 1, 0, 0, EVSPEC_LEGACY },
	{ "r01c4", 4, 0x1c4, 0, 0, EVSPEC_RAW },
	{ "rFFFFFFFFFFFFFFFF", 4, ~0ull, 0, 0, EVSPEC_RAW },
	{ "cpu/event=0xc4,umask=0x20/", 4, 0x20c4, 0, 0, EVSPEC_PMU },
	{ "cpu/event=0xc4,umask=0x20/u", 4, 0x20c4, 0, 0, EVSPEC_PMU },
	{ "cpu/event=196,umask=32,inv,cmask=1/", 4, 0x18020c4, 0, 0, EVSPEC_PMU },
	{ "cpu/mem-loads/", 4, 0x1cd, 3, 0, EVSPEC_PMU },
	{ "cpu/event=0xc6,frontend=0x400406/", 4, 0xc6, 0, 0x400406, EVSPEC_PMU },
	{ "cpu/split=0xab/", 4, 0xa0b00000000ull, 0, 0, EVSPEC_PMU },
	{ "cpu/config=0x1234,config1=5,config2=6/", 4, 0x1234, 5, 6, EVSPEC_PMU },
	{ "kcc_lbr/calls/", 23, 2, 0, 0, EVSPEC_PMU },
	{ "kcc_lbr/misses/", 23, 3, 0, 0, EVSPEC_PMU },
	{ "kcc_lbr/event=0x1,config1=100/", 23, 1, 100, 0, EVSPEC_PMU },
	/* Intel SDM Vol. 3B, Skylake: C4H/02H and D1H/20H. */
	{ "BR_INST_RETIRED:NEAR_CALL", 4, 0x2c4, 0, 0, EVSPEC_PFM },
	{ "MEM_LOAD_RETIRED:L3_MISS", 4, 0x20d1, 0, 0, EVSPEC_PFM },
	{ "skl::BR_INST_RETIRED:NEAR_CALL", 4, 0x2c4, 0, 0, EVSPEC_PFM },
};

struct bad {
	const char *spec;
	int err;
};

static const struct bad bads[] = {
	{ "", -EINVAL },
	{ "no-such-event", -ENOENT },
	{ "NO_SUCH_EVENT:AT_ALL", -ENOENT },
	{ "r", -ENOENT },
	{ "r12345678901234567", -ERANGE },
	{ "nopmu/event=1/", -ENOENT },
	{ "cpu/event=1", -EINVAL },
	{ "cpu/bogus=1/", -ENOENT },
	{ "cpu/no-such-alias/", -ENOENT },
	{ "cpu/event=0x100/", -ERANGE },
	{ "cpu/inv=2/", -ERANGE },
	{ "cpu/event=zz/", -EINVAL },
	{ "cpu/event=-1/", -EINVAL },
	{ "cpu/event=1/k", -EINVAL },
	{ "cpu//", -EINVAL },
	{ "cpu/event=1,/", -EINVAL },
	{ "cpu/ldlat-any/", -EINVAL },
	{ "cpu/broken=1/", -EINVAL },
	{ "cpu/../x/", -EINVAL },
	{ "../cpu/event=1/", -EINVAL },
	{ "badtype/event=1/", -EINVAL },
};

int main(void)
{
	char err[EVSPEC_ERR_LEN], enc[96];
	struct evspec ev;
	size_t i;
	int ret;

	ksft_print_header();
	/* Before libpfm4's first use: it reads the variable once. */
	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	snprintf(root, sizeof(root), "%s/kcc-evspec.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp %s\n", root);
		return KSFT_FAIL;
	}
	make_sysfs();
	ksft_set_plan(sizeof(goods) / sizeof(goods[0]) +
		      sizeof(bads) / sizeof(bads[0]) + 5);

	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];

		ret = evspec__parse(&ev, g->spec, root, err);
		if (ret)
			ksft_print_msg("%s\n", err);
		ksft_test_result(!ret && ev.type == g->type &&
				 ev.config == g->config &&
				 ev.config1 == g->config1 &&
				 ev.config2 == g->config2 && ev.how == g->how &&
				 !strcmp(ev.name, g->spec),
				 "%s -> type %u config %#llx config1 %#llx config2 %#llx\n",
				 g->spec, g->type, (unsigned long long)g->config,
				 (unsigned long long)g->config1,
				 (unsigned long long)g->config2);
	}
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];

		ret = evspec__parse(&ev, b->spec, root, err);
		ksft_print_msg("'%s': %s\n", b->spec, err);
		ksft_test_result(ret == b->err && err[0] &&
				 (!b->spec[0] || strstr(err, b->spec)),
				 "'%s' fails with %s, the message names it\n",
				 b->spec, strerror(-b->err));
	}

	evspec__encoding(4, 0x2c4, 0, 0, enc, sizeof(enc));
	ksft_test_result(!strcmp(enc, "type 4, config 0x2c4"),
			 "encoding without config1/2: '%s'\n", enc);
	evspec__encoding(23, 2, 0, 7, enc, sizeof(enc));
	ksft_test_result(!strcmp(enc, "type 23, config 0x2, config1 0, config2 0x7"),
			 "encoding with config2: '%s'\n", enc);

	/*
	 * kcc record's default calls counter: the sampled event's PMU's
	 * own calls event, else Intel's retired near calls (libpfm4).
	 */
	ret = evspec__calls_counter(23, root, enc, sizeof(enc));
	ksft_test_result(!ret && !strcmp(enc, "kcc_lbr/calls/"),
			 "calls counter of a kcc_lbr event (type 23): '%s'\n", enc);
	ret = evspec__calls_counter(30, root, enc, sizeof(enc));
	ksft_test_result(!ret && !strcmp(enc, "BR_INST_RETIRED:NEAR_CALL"),
			 "calls counter of a PMU without a calls event: '%s'\n", enc);
	ret = evspec__calls_counter(0, root, enc, sizeof(enc));
	ksft_test_result(!ret && !strcmp(enc, "BR_INST_RETIRED:NEAR_CALL"),
			 "calls counter of cache-misses (type 0): '%s'\n", enc);

	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			ksft_print_msg("cannot remove %s\n", root);
	}
	ksft_finished();
}
