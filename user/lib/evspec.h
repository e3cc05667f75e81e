/* SPDX-License-Identifier: GPL-2.0 */
/*
 * evspec.h - perf event names to perf_event_attr encodings, the way perf
 * record -e reads them:
 *
 *	cycles, cache-misses, cpu-clock, ...	the generic events
 *	rNNNN					PERF_TYPE_RAW, config in hex
 *	PMU/TERM,TERM,.../			a PMU of
 *		/sys/bus/event_source/devices/: its type file, each TERM an
 *		alias of its events/ directory, NAME=VALUE placed into
 *		config, config1 or config2 by its format/NAME file, or
 *		config=, config1=, config2= given directly
 *	BR_INST_RETIRED:NEAR_CALL, ...		libpfm4's event tables
 *
 * libpfm4 (pfm_get_os_event_encoding(), PFM_OS_PERF_EVENT_EXT) knows the
 * hardware event names of every PMU model, which kcc does not copy.
 * LIBPFM_FORCE_PMU=skl, read at its first use, makes it encode for a
 * model the machine does not have.
 */
#ifndef KCC_EVSPEC_H
#define KCC_EVSPEC_H

#include <stddef.h>
#include <stdint.h>

#define EVSPEC_SYSFS		"/sys/bus/event_source/devices"
#define EVSPEC_NAME_LEN		64
#define EVSPEC_ERR_LEN		256

/* Where an encoding came from. */
#define EVSPEC_LEGACY		0	/* perf's generic names */
#define EVSPEC_RAW		1	/* rNNNN */
#define EVSPEC_PMU		2	/* PMU/terms/ through sysfs */
#define EVSPEC_PFM		3	/* libpfm4 */

struct evspec {
	uint32_t type;		/* perf_event_attr.type */
	uint64_t config;
	uint64_t config1;
	uint64_t config2;
	uint32_t how;		/* EVSPEC_* */
	char name[EVSPEC_NAME_LEN];	/* the name as given, maybe cut */
};

/*
 * Encode @spec.  @sysfs is the directory of PMUs (NULL: EVSPEC_SYSFS).
 * On failure @err (EVSPEC_ERR_LEN bytes) says why, naming the event and
 * the file at fault.  Returns 0, -ENOENT (no such event or PMU), -EINVAL
 * (malformed name or term), -ERANGE (value too wide for its format),
 * -EIO (unreadable sysfs file).
 */
int evspec__parse(struct evspec *ev, const char *spec, const char *sysfs,
		  char *err);
/*
 * The calls counter that goes with events of @type, as a spec for
 * evspec__parse() in @buf (@len bytes): PMU/calls/ when the PMU of a
 * dynamic @type under @sysfs (NULL: EVSPEC_SYSFS) has a "calls" event
 * (kcc's software LBR PMU), else libpfm4's BR_INST_RETIRED:NEAR_CALL
 * (Intel's retired near calls).  0, or -ENOENT when neither encodes here.
 */
int evspec__calls_counter(uint32_t type, const char *sysfs, char *buf,
			  size_t len);
/* "type 4, config 0x2c4" (config1 and config2 when not zero) into @buf. */
void evspec__encoding(uint32_t type, uint64_t config, uint64_t config1,
		      uint64_t config2, char *buf, size_t len);

#endif /* KCC_EVSPEC_H */
