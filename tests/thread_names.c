/* SPDX-License-Identifier: MIT */
/*
 * thread_names: names its threads as programs do. The main thread calls
 * itself kp-main (prctl PR_SET_NAME) and makes 10 getppid calls; a worker
 * names itself kp-first (pthread_setname_np), makes 100 getppid calls,
 * renames itself kp-worker and makes 200 more; another worker never names
 * itself (the kernel gives it its creator's name, kp-main) and makes 50.
 * Prints "named".
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static void calls(int n)
{
	for (int i = 0; i < n; i++)
		getppid();
}

static void *named(void *arg)
{
	(void)arg;
	if (pthread_setname_np(pthread_self(), "kp-first"))
		return (void *)1;
	calls(100);
	if (pthread_setname_np(pthread_self(), "kp-worker"))
		return (void *)1;
	calls(200);
	return NULL;
}

static void *unnamed(void *arg)
{
	(void)arg;
	calls(50);
	return NULL;
}

int main(void)
{
	if (prctl(PR_SET_NAME, "kp-main"))
		return 1;
	calls(10);
	pthread_t a, b;
	void *ra, *rb;
	if (pthread_create(&a, NULL, named, NULL) || pthread_join(a, &ra) ||
	    pthread_create(&b, NULL, unnamed, NULL) || pthread_join(b, &rb) || ra || rb)
		return 1;
	puts("named");
	return 0;
}
