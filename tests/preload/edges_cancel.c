/* SPDX-License-Identifier: BSD-3-Clause */
/* A thread cancelled at the entry of a blocking call: the cancellation, asked for before
 * the call, is acted on at the call's first cancellation point, wherever in the call that
 * is. With the kernel's sockets that is the recv itself; in the preload layer it must be
 * the sleep, never one of the layer's own reads or writes (its eventfds) while it holds its
 * lock: a thread that died holding the lock leaves every later call of the process waiting
 * for it. A pthread_cancel that lands while a thread is on its way into the sleep under load
 * does the same; here it is made to land there every time. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "edges.h"

#define PENDING_CANCEL_PORT 7130
#define EXCHANGE_WITHIN_S 30

struct pending_cancel {
	int fd;
	sem_t asked; /* posted once the cancellation was asked for */
	ssize_t rc;
};

static void *recv_cancelled_at_entry(void *arg)
{
	struct pending_cancel *p = arg;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	while (sem_wait(&p->asked) < 0 && errno == EINTR)
		;
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL); /* still pending: not acted on */
	char b[16];
	CANCEL_POINT(p->rc = recv(p->fd, b, sizeof b, 0));
	return NULL;
}

static void *exchange(void *arg)
{
	*(int *)arg = echo_once();
	return NULL;
}

static struct timespec in_seconds(int seconds)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds;
	return until;
}

/* An exchange with the peer from a thread of its own, so that a call waiting for a lock
 * nobody will free is seen: such a process cannot go on, and ends here. */
static int echo_within(int seconds)
{
	int ok = 0;
	pthread_t t;
	if (pthread_create(&t, NULL, exchange, &ok) != 0)
		return 0;
	struct timespec until = in_seconds(seconds);
	if (pthread_timedjoin_np(t, NULL, &until) != 0) {
		printf("FAIL cancel_pending_at_entry: an exchange with the peer did not end "
		       "within %d s after the cancelled recv\n",
		       seconds);
		fflush(stdout);
		_exit(1);
	}
	return ok;
}

void cancel_pending_at_entry(void)
{
	struct pending_cancel p = {.fd = udp_bound(PENDING_CANCEL_PORT), .rc = 1};
	CHECK(p.fd >= 0, "bind");
	CHECK(sem_init(&p.asked, 0, 0) == 0, "sem_init");
	pthread_t t;
	CHECK(pthread_create(&t, NULL, recv_cancelled_at_entry, &p) == 0, "thread");
	CHECK(pthread_cancel(t) == 0 && sem_post(&p.asked) == 0, "cancel");
	void *res = NULL;
	struct timespec until = in_seconds(10);
	if (pthread_timedjoin_np(t, &res, &until) != 0) {
		close(p.fd); /* ends the recv (EBADF) */
		pthread_join(t, &res);
	}
	CHECK(res == PTHREAD_CANCELED, "the recv was not cancelled (it gave %zd)", p.rc);
	CHECK(echo_within(EXCHANGE_WITHIN_S), "an exchange with the peer");
	double cpu;
	CHECK(recv_sleeps(p.fd, &cpu), "the next blocking recv used %.2f s of CPU", cpu);
	close(p.fd);
	sem_destroy(&p.asked);
	printf("ok cancel_pending_at_entry\n");
}
