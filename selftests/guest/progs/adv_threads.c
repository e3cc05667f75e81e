// SPDX-License-Identifier: GPL-2.0
/*
 * adv_threads - 1,000 threads alive at once, all sampled, sixteen times
 * more than max_tasks allows: the cap must hold (samples of the others are
 * dropped as KCC_DROP_TASK_CAP, counted), and threads exiting while their
 * samples wait in the ring must be accounted too.
 *
 * Usage: adv_threads [-d DEVICE]
 */
#include <pthread.h>

#include "kcc_prog.h"

#define NTHREADS	1000

static pthread_barrier_t start;

static void *worker(void *arg)
{
	pthread_barrier_wait(&start);
	kcc_spin_ms(5 + (uintptr_t)arg % 20);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t th[NTHREADS];
	struct kcc_config c;
	pthread_attr_t attr;
	int fd, i, made = 0;

	kcc_prog_args(argc, argv, "Sample 1,000 threads with max_tasks 64.");
	kcc_config_default(&c);
	fd = kcc_session_start(&c);
	tap_plan(1 + KCC_SESSION_CHECKS);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_barrier_init(&start, NULL, NTHREADS + 1);
	for (i = 0; i < NTHREADS; i++) {
		if (pthread_create(&th[i], &attr, worker, (void *)(uintptr_t)i))
			break;
		made++;
	}
	if (made < NTHREADS) {
		/* release the barrier with stand-ins so nobody waits forever */
		tap_diag("only %d threads could be created", made);
		for (i = made; i < NTHREADS; i++)
			pthread_create(&th[i], NULL, worker, NULL);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	tap_result(made == NTHREADS, "%d threads ran at once", made);
	kcc_session_check(fd, &c);
	close(fd);
	return tap_exit();
}
