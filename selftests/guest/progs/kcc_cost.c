// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_cost - the clock of make bench-guest (selftests/guest/bench_cost.sh)
 * in the busybox guest, whose date has no nanoseconds.
 *
 *   kcc_cost now			CLOCK_MONOTONIC in ns
 *   kcc_cost run FILE CMD [ARGS...]	run CMD, then write to FILE one line
 *	"WALL_NS END_NS KCC_BYTES KCC_WORK_NS": CMD's wall time, the
 *	clock when it ended, and the forest bytes and worker time of a
 *	running kcc session read at that moment (/sys/class/misc/kcc/;
 *	0 without one).  Exits with CMD's status.
 *
 * A profiler runs "kcc_cost run" as its workload, so the wall time is the
 * profiled program's, without the profiler's start and finish, and the
 * end time starts the clock of "time to a report".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The first number of a sysfs file, 0 when absent. */
static unsigned long long sys_u64(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1;
	int status;
	pid_t pid;
	FILE *f;

	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	if (argc < 4 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: kcc_cost now | kcc_cost run FILE CMD [ARGS...]\n");
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	t1 = now_ns();
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%llu %llu %llu %llu\n", (unsigned long long)(t1 - t0),
		(unsigned long long)t1,
		sys_u64("/sys/class/misc/kcc/bytes"),
		sys_u64("/sys/class/misc/kcc/work_ns"));
	if (fclose(f))
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
