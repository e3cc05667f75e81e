// SPDX-License-Identifier: GPL-2.0
/*
 * adv_fork - a fork storm: 2,000 short-lived children, up to 32 at a time,
 * each burning a few milliseconds (a sample or two) and exiting at once,
 * while the session follows the process and its children.  Task lifecycle
 * races (fork, exit, reaping) against sampling and processing.
 *
 * Usage: adv_fork [-d DEVICE]
 */
#include <sys/wait.h>

#include "kcc_prog.h"

#define CHILDREN	2000
#define PARALLEL	32

int main(int argc, char **argv)
{
	struct kcc_config c;
	int fd, i, live = 0, bad = 0, forked = 0, status;

	kcc_prog_args(argc, argv, "Sample a storm of 2,000 short-lived children.");
	kcc_config_default(&c);
	fd = kcc_session_start(&c);
	tap_plan(1 + KCC_SESSION_CHECKS);

	for (i = 0; i < CHILDREN; i++) {
		pid_t pid;

		if (live == PARALLEL) {
			if (wait(&status) > 0 && (!WIFEXITED(status) || WEXITSTATUS(status)))
				bad++;
			live--;
		}
		pid = fork();
		if (pid == 0) {
			kcc_spin_ms(1 + i % 4);
			_exit(0);
		}
		if (pid < 0)
			break;
		live++;
		forked++;
	}
	while (live-- > 0)
		if (wait(&status) > 0 && (!WIFEXITED(status) || WEXITSTATUS(status)))
			bad++;
	tap_result(forked == CHILDREN && !bad, "%d children forked, %d failed",
		   forked, bad);
	kcc_session_check(fd, &c);
	close(fd);
	return tap_exit();
}
