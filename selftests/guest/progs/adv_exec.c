// SPDX-License-Identifier: GPL-2.0
/*
 * adv_exec - exec while sampled: children that run a while and then
 * execve() this program again (a new mm, the same task), some of them
 * multi-threaded so that exec has to kill sampled sibling threads first.
 *
 * Usage: adv_exec [-d DEVICE]
 *        adv_exec --after-exec MS  (internal: the image after exec)
 */
#include <pthread.h>
#include <sys/wait.h>

#include "kcc_prog.h"

#define CHILDREN	200

static void *sibling(void *arg)
{
	kcc_spin_ms(1000);	/* still running when the leader execs */
	return NULL;
}

static void child(const char *self, int i)
{
	char ms[16];
	pthread_t th;

	if (i % 2)
		pthread_create(&th, NULL, sibling, NULL);
	kcc_spin_ms(2 + i % 5);
	snprintf(ms, sizeof(ms), "%d", 1 + i % 5);
	execl(self, self, "--after-exec", ms, (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	struct kcc_config c;
	int fd, i, bad = 0, status;
	char self[4096];
	ssize_t n;

	if (argc == 3 && !strcmp(argv[1], "--after-exec")) {
		kcc_spin_ms(atoi(argv[2]));
		return 0;
	}
	kcc_prog_args(argc, argv, "Sample children that exec while sampled.");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		tap_skip_all("/proc/self/exe unreadable");
	self[n] = 0;
	kcc_config_default(&c);
	fd = kcc_session_start(&c);
	tap_plan(1 + KCC_SESSION_CHECKS);

	for (i = 0; i < CHILDREN; i++) {
		pid_t pid = fork();

		if (pid == 0)
			child(self, i);
		if (pid < 0 || waitpid(pid, &status, 0) != pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	tap_result(!bad, "%d children exec'ed while sampled, %d failed", CHILDREN, bad);
	kcc_session_check(fd, &c);
	close(fd);
	return tap_exit();
}
