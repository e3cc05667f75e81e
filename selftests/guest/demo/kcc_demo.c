// SPDX-License-Identifier: GPL-2.0
/*
 * kcc_demo - profile one program in the guest and print the stream as a
 * blob (selftests/guest/run.sh -b brings it back to the host).
 *
 * Usage: kcc_demo [-k K] PROGRAM [ARGS...]
 *
 * Forks; the child waits until the session targeting its pid runs, then
 * execs PROGRAM.  The session uses the frame-pointer source (source
 * auto: LBR where there is one) and the module's default event; the
 * stream's header names what was sampled.  The blob is named "demo".
 * Output: TAP.  Exit 0 pass, 1 fail, 4 no device.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kcc_guest.h"

int main(int argc, char **argv)
{
	struct kcc_config c;
	uint32_t k = 1;
	int fd, pfd[2], opt, wst = 0;
	uint64_t ntasks, nnodes;
	const char *why;
	char *buf = NULL;
	long len;
	pid_t p;
	char g;

	while ((opt = getopt(argc, argv, "+k:")) != -1) {
		if (opt != 'k') {
			fprintf(stderr, "usage: kcc_demo [-k K] PROGRAM [ARGS...]\n");
			return 2;
		}
		k = strtoul(optarg, NULL, 0);
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: kcc_demo [-k K] PROGRAM [ARGS...]\n");
		return 2;
	}
	fd = kcc_open(O_RDWR);
	if (fd < 0)
		tap_skip_all("no " KCC_DEVICE);
	printf("TAP version 13\n");
	if (pipe(pfd))
		return 1;
	p = fork();
	if (p < 0)
		return 1;
	if (p == 0) {
		close(pfd[1]);
		if (read(pfd[0], &g, 1) != 1)
			_exit(2);
		execv(argv[optind], argv + optind);
		_exit(127);
	}
	close(pfd[0]);
	kcc_cfg_init(&c, KCC_SOURCE_AUTO, KCC_TARGET_PID, p, k);
	why = kcc_ioc(fd, KCC_IOC_CONFIGURE, &c) ? "CONFIGURE failed" :
	      kcc_ioc(fd, KCC_IOC_START, NULL) ? "START failed" : NULL;
	if (why) {
		kill(p, SIGKILL);
	} else if (write(pfd[1], "g", 1) != 1) {
		why = "cannot start the workload";
		kill(p, SIGKILL);
	}
	waitpid(p, &wst, 0);
	close(pfd[1]);
	tap_result(!why && WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
		   "%s ran under a session (pid %d, k=%u)%s%s", argv[optind],
		   (int)p, k, why ? ": " : "", why ? why : "");
	if (!why && kcc_ioc(fd, KCC_IOC_STOP, NULL))
		why = "STOP failed";
	len = why ? -1 : kcc_read_stream(fd, &buf, 0);
	why = len <= 0 ? "no stream" :
	      kcc_stream_check(buf, len, &ntasks, &nnodes);
	tap_result(!why, "well-formed stream%s%s", why ? ": " : "",
		   why ? why : "");
	if (!why) {
		tap_diag("stream: %ld bytes, %llu tasks, %llu nodes", len,
			 (unsigned long long)ntasks, (unsigned long long)nnodes);
		kcc_blob_print("demo", buf, len);
	}
	free(buf);
	close(fd);
	printf("1..%d\n", tap_nr);
	return tap_exit();
}
