/* SPDX-License-Identifier: BSD-3-Clause */
/* Blocking calls and the signals that interrupt them: a handler installed with SA_RESTART
 * does not end the call, unless the socket has a timeout (socket(7), signal(7)). */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "edges.h"

#define RESTART_PORT 7124
#define TICKS_BEFORE_DATA 50 /* the recv is interrupted this many times first */

static atomic_int ticks;

static void on_tick(int sig)
{
	(void)sig;
	atomic_fetch_add(&ticks, 1);
}

/* Asks the peer for a datagram once the recv has slept through the ticks (this thread
 * blocks SIGALRM, so each interrupts the recv). */
static void *ask_after_ticks(void *arg)
{
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	struct timespec ms = {0, 1000000};
	for (int i = 0; i < 60000 && atomic_load(&ticks) < TICKS_BEFORE_DATA; i++)
		nanosleep(&ms, NULL);
	return (void *)(intptr_t)ask_datagram(*(int *)arg);
}

static void set_timer(long usec)
{
	struct itimerval it = {.it_interval = {0, usec}, .it_value = {0, usec}};
	setitimer(ITIMER_REAL, &it, NULL);
}

void sa_restart_recv_goes_on(void)
{
	int fd = udp_bound(RESTART_PORT), port = RESTART_PORT;
	CHECK(fd >= 0, "bind");
	struct sigaction sa = {.sa_handler = on_tick, .sa_flags = SA_RESTART}, old;
	sigaction(SIGALRM, &sa, &old);
	atomic_store(&ticks, 0);
	pthread_t t;
	pthread_create(&t, NULL, ask_after_ticks, &port);
	set_timer(1000);
	char b[16];
	ssize_t r = recv(fd, b, sizeof b, 0);
	int err = errno;
	set_timer(0);
	void *ctl;
	pthread_join(t, &ctl);
	if ((intptr_t)ctl >= 0)
		close((int)(intptr_t)ctl);
	int seen = atomic_load(&ticks);
	errno = err;
	CHECK(r == 1 && b[0] == 'd', "recv with %d SA_RESTART ticks gave %zd", seen, r);
	CHECK(seen >= TICKS_BEFORE_DATA, "only %d ticks", seen);

	/* with SO_RCVTIMEO the same handler ends the call */
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	set_timer(200000);
	r = recv(fd, b, sizeof b, 0);
	err = errno;
	set_timer(0);
	sigaction(SIGALRM, &old, NULL);
	close(fd);
	errno = err;
	CHECK(r < 0 && err == EINTR, "recv with SO_RCVTIMEO and a tick gave %zd", r);
	printf("ok sa_restart_recv_goes_on\n");
}
