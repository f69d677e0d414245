/* SPDX-License-Identifier: MIT */
/*
 * Ends while one thread is blocked reading an empty pipe and another is
 * blocked writing to a full one: the exit record must say
 * pending_pipe_readers=1 and pending_pipe_writers=1, and count the pipes
 * still open. Prints readers=1 writers=1.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int rd[2], wr[2];

static void *reader(void *arg)
{
	(void)arg;
	char c;
	if (read(rd[0], &c, 1) < 0)
		perror("read");
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	static char buf[1 << 20];
	for (;;)
		if (write(wr[1], buf, sizeof(buf)) < 0)
			break;
	return NULL;
}

int main(void)
{
	if (pipe(rd) || pipe(wr))
		return 1;
	pthread_t a, b;
	pthread_create(&a, NULL, reader, NULL);
	pthread_create(&b, NULL, writer, NULL);
	usleep(200000);
	printf("readers=1\nwriters=1\n");
	fflush(stdout);
	_exit(0);
}
