// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup.c - a cgroup v2 directory by name (cgroup.h).  The mount is
 * found in /proc/self/mountinfo, as perf's cgroupfs_find_mountpoint()
 * does: libcgroup, the Debian library for this, is built for cgroup v1
 * hierarchies and controllers and adds nothing to one line of
 * mountinfo.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif

int cgroup__mount(char *mnt, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int ret = -ENOENT;

	if (!f)
		return -ENOENT;
	while (ret && fgets(line, sizeof(line), f)) {
		char dir[4096], *sep = strstr(line, " - ");
		char fstype[64];
		size_t dlen;

		/* id parent maj:min root mountpoint ... - fstype source ... */
		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2") ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", dir) != 1)
			continue;
		/* Octal escapes (\040) in paths with spaces: not supported. */
		if (strchr(dir, '\\') || strlen(dir) >= len)
			continue;
		strcpy(mnt, dir);
		/* No trailing slash: "/sys/fs/cgroup", or "" for "/". */
		for (dlen = strlen(mnt); dlen && mnt[dlen - 1] == '/'; )
			mnt[--dlen] = 0;
		ret = 0;
	}
	fclose(f);
	return ret;
}

int cgroup__open(const char *name, char *path, size_t len, char *why,
		 size_t why_len)
{
	char mnt[4096], full[8192];
	const char *rel;
	struct statfs sfs;
	size_t ml;
	int fd;

	if (cgroup__mount(mnt, sizeof(mnt))) {
		snprintf(why, why_len, "no cgroup2 file system is mounted");
		return -ENOENT;
	}
	ml = strlen(mnt);
	/* Under the mount already, or relative to it (perf -G's way). */
	if (!strncmp(name, mnt, ml) && (name[ml] == '/' || !name[ml]))
		rel = name + ml;
	else
		rel = name;
	while (*rel == '/')
		rel++;
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", mnt, rel) >= sizeof(full) ||
	    (size_t)snprintf(path, len, "/%s", rel) >= len) {
		snprintf(why, why_len, "name too long");
		return -ENAMETOOLONG;
	}
	/* No trailing slash in the name shown. */
	ml = strlen(path);
	while (ml > 1 && path[ml - 1] == '/')
		path[--ml] = 0;
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		snprintf(why, why_len, "%s: %s", full, strerror(errno));
		return fd;
	}
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		snprintf(why, why_len, "%s: not a cgroup v2 directory", full);
		return -ENOTDIR;
	}
	return fd;
}
