/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr_prog.h - what the test programs of the software LBR PMU share:
 * TAP lines, the PMU's type from sysfs, and the records of a perf ring
 * buffer.
 */
#ifndef LBR_PROG_H
#define LBR_PROG_H

#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "../../guest/progs/kcc_sysfs.h"

static int tap_n, tap_failed;

static void __attribute__((format(printf, 2, 3)))
tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!ok)
		tap_failed = 1;
}

/* kcc_lbrpmu's parameter @name as a number (late, unread), or -1. */
static long long lbr_param_get(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/kcc_lbrpmu/parameters/%s",
		 name);
	return kcc_sysfs_ll(path);
}

/* The dynamic type of kcc_lbr, or -1 when kcc_lbrpmu.ko is not loaded. */
static int lbr_pmu_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/kcc_lbr/type", "r");
	int type = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* PERF_RECORD_THROTTLE records seen by lbr_drain(). */
static uint64_t lbr_throttled;

/*
 * Hand every PERF_RECORD_SAMPLE in the buffer of @pg (@size data bytes)
 * to @fn, its body unwrapped, count the PERF_RECORD_THROTTLEs, and free
 * the space.
 */
static void lbr_drain(struct perf_event_mmap_page *pg, size_t size,
		      void (*fn)(const uint8_t *body, size_t len, void *arg),
		      void *arg)
{
	static uint8_t rec[65536];
	uint8_t *data = (uint8_t *)pg + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		size_t k;

		for (k = 0; k < sizeof(h); k++)
			((uint8_t *)&h)[k] = data[(tail + k) % size];
		if (h.size < sizeof(h))
			break;
		if (h.type == PERF_RECORD_SAMPLE) {
			for (k = 0; k < h.size; k++)
				rec[k] = data[(tail + k) % size];
			fn(rec + sizeof(h), h.size - sizeof(h), arg);
		}
		if (h.type == PERF_RECORD_THROTTLE)
			lbr_throttled++;
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

#endif /* LBR_PROG_H */
