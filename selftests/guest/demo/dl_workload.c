// SPDX-License-Identifier: GPL-2.0
/*
 * dl_workload - a program whose hot code is in a library it loads with
 * dlopen() after starting and unloads before exiting, for kcc record in
 * the guest (selftests/guest/guest_init.sh): 300 ms of CPU time in main,
 * 300 ms in main -> dl_work -> dl_leaf of the library, 100 ms in main
 * again after dlclose().  kcc report must name dl_work and dl_leaf: their
 * mapping existed only in the middle of the run.
 *
 * Usage: dl_workload LIBRARY
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000ul + ts.tv_nsec / 1000000;
}

__attribute__((noinline)) static void main_spin(unsigned long ms)
{
	unsigned long t0 = cpu_ms(), i;

	while (cpu_ms() - t0 < ms)
		for (i = 0; i < 10000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	void (*work)(unsigned long);
	unsigned long t0;
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: dl_workload LIBRARY\n");
		return 2;
	}
	main_spin(300);
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dl_workload: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(h, "dl_work");
	if (!work) {
		fprintf(stderr, "dl_workload: %s\n", dlerror());
		return 1;
	}
	for (t0 = cpu_ms(); cpu_ms() - t0 < 300;)
		work(10000);
	dlclose(h);
	main_spin(100);
	return 0;
}
