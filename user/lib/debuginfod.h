/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debuginfod.h - debug info fetched by build-id (DEBUGINFOD_URLS).
 *
 * Off unless DEBUGINFOD_URLS names servers (kcc report --debuginfod=URLS
 * sets it), as for gdb, perf and the elfutils tools.
 */
#ifndef KCC_DEBUGINFOD_H
#define KCC_DEBUGINFOD_H

#include <stdbool.h>
#include <stdint.h>

bool debuginfod__enabled(void);
/*
 * The debuginfo file of build-id @id, downloaded into the client's cache
 * (DEBUGINFOD_CACHE_PATH): 0 and its malloc()ed path in *path, or
 * -ENOENT (disabled, not found), -EOPNOTSUPP (no libdebuginfod), -errno.
 */
int debuginfod__find_debuginfo(const uint8_t *id, uint32_t len, char **path);
/* The object itself (stripped as it ran), the same way. */
int debuginfod__find_executable(const uint8_t *id, uint32_t len, char **path);
void debuginfod__exit(void);

#endif /* KCC_DEBUGINFOD_H */
