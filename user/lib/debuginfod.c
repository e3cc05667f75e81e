// SPDX-License-Identifier: GPL-2.0
/*
 * debuginfod.c - debug info of objects that are not on this machine,
 * by build-id, from the servers of DEBUGINFOD_URLS through elfutils'
 * libdebuginfod client (Debian's libdebuginfod1).
 *
 * The client is dlopen()ed, as libdw itself does, rather than linked:
 * it pulls libcurl in, has no static archive for the guests' static kcc,
 * and a machine without it still reports everything but the fetched
 * lines.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "debuginfod.h"

struct dbgd_lib {
	bool tried;
	void *dl;
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id,
			      int len, char **path);
	int (*find_executable)(debuginfod_client *c, const unsigned char *id,
			       int len, char **path);
	void (*end)(debuginfod_client *c);
	debuginfod_client *client;
};

static struct dbgd_lib dbgd;

bool debuginfod__enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

static int client(void)
{
	if (dbgd.tried)
		return dbgd.client ? 0 : -EOPNOTSUPP;
	dbgd.tried = true;
	dbgd.dl = dlopen("libdebuginfod.so.1", RTLD_LAZY);
	if (!dbgd.dl)
		return -EOPNOTSUPP;
	dbgd.begin = (debuginfod_client *(*)(void))dlsym(dbgd.dl, "debuginfod_begin");
	dbgd.find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int, char **))
		dlsym(dbgd.dl, "debuginfod_find_debuginfo");
	dbgd.find_executable = (int (*)(debuginfod_client *, const unsigned char *, int, char **))
		dlsym(dbgd.dl, "debuginfod_find_executable");
	dbgd.end = (void (*)(debuginfod_client *))dlsym(dbgd.dl, "debuginfod_end");
	if (dbgd.begin && dbgd.find_debuginfo && dbgd.find_executable && dbgd.end)
		dbgd.client = dbgd.begin();
	return dbgd.client ? 0 : -EOPNOTSUPP;
}

static int find(bool exe, const uint8_t *id, uint32_t len, char **path)
{
	int fd, ret;

	*path = NULL;
	if (!debuginfod__enabled() || !len)
		return -ENOENT;
	ret = client();
	if (ret)
		return ret;
	fd = (exe ? dbgd.find_executable : dbgd.find_debuginfo)(dbgd.client, id,
								 (int)len, path);
	if (fd < 0)
		return fd;
	close(fd);
	return *path ? 0 : -ENOMEM;
}

int debuginfod__find_debuginfo(const uint8_t *id, uint32_t len, char **path)
{
	return find(false, id, len, path);
}

int debuginfod__find_executable(const uint8_t *id, uint32_t len, char **path)
{
	return find(true, id, len, path);
}

void debuginfod__exit(void)
{
	/*
	 * The library stays loaded: libcurl keeps global state that a
	 * dlclose() would leak.
	 */
	if (dbgd.client)
		dbgd.end(dbgd.client);
	dbgd.client = NULL;
	dbgd.tried = false;
}
