/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup.h - a cgroup v2 directory by name, as perf -G takes it: a path
 * relative to the cgroup2 mount ("system.slice/cron.service"), or an
 * absolute path under that mount.
 */
#ifndef KCC_CGROUP_H
#define KCC_CGROUP_H

#include <stddef.h>

/*
 * The cgroup2 mount point into @mnt (no trailing slash; "" when it is
 * "/"), from /proc/self/mountinfo: 0 or -ENOENT.
 */
int cgroup__mount(char *mnt, size_t len);

/*
 * Open the cgroup v2 directory @name (O_RDONLY | O_DIRECTORY) for
 * KCC_CFG_CGROUP; its path as the cgroup2 root names it ("/" for the
 * root, "/a/b") goes to @path.  Returns the descriptor, or -ENOENT (no
 * cgroup2 mount, no such directory), -ENOTDIR (not a cgroup v2
 * directory), -ENAMETOOLONG, or another -errno of open(); @why then says
 * why in words.
 */
int cgroup__open(const char *name, char *path, size_t len, char *why,
		 size_t why_len);

#endif /* KCC_CGROUP_H */
