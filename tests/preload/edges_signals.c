/* SPDX-License-Identifier: BSD-3-Clause */
/* What interrupts a thread in the layer: signal handlers that use the socket the program is
 * using (the layer's counts of a socket's fds and calls must come out right whatever
 * instruction a handler interrupts), and cancellation (tests/sh/preload_edges.sh runs the
 * cases with the preload and on the kernel's sockets). */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "edges.h"

#define STRESS_PORT 7122
#define STRESS_MS 1500	      /* at least, and until MIN_HANDLED signals were handled */
#define STRESS_MAX_MS 30000   /* a machine too loaded to deliver them: the case fails */
#define MIN_HANDLED 5000
#define SIGNAL_EVERY_NS 20000 /* a timer's period: signals land wherever the program is */

static volatile sig_atomic_t stress_fd = -1, handled, handler_dup_failed;
/* a dup of the program's, from the dup until its close returned: the handler closes it too,
 * racing the program's own close of it */
static volatile sig_atomic_t program_dup = -1;

static void on_usr1(int sig)
{
	(void)sig;
	int saved = errno;
	int theirs = program_dup;
	if (theirs >= 0 && handled % 2) {
		program_dup = -1;
		close(theirs);
	} else {
		int d = dup(stress_fd);
		if (d >= 0)
			close(d);
		else
			handler_dup_failed++;
	}
	handled++;
	errno = saved;
}


/* The number the next new fd gets: an fd left open below it since moves it. */
static int lowest_free_fd(void)
{
	int probe = dup(0);
	if (probe >= 0)
		close(probe);
	return probe;
}

static double seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One call on fd, as the round says; false when its answer is not the one it must be. */
static bool use_once(int fd, unsigned round)
{
	int v = 0;
	socklen_t l = sizeof v;
	char b[4];
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	switch (round % 5) {
	case 0:
		return getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) == 0 && v == SOCK_DGRAM;
	case 1: { /* its close may find it closed by the handler already: EBADF */
		int d = dup(fd);
		program_dup = d;
		bool ok = d >= 0 && (close(d) == 0 || errno == EBADF);
		program_dup = -1;
		return ok;
	}
	case 2:
		return recv(fd, b, sizeof b, MSG_DONTWAIT) < 0 && errno == EAGAIN;
	case 3:
		return fcntl(fd, F_GETFL) >= 0;
	default:
		return poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
	}
}

/* Signals at a high rate while the program calls on a UDP socket; the handler dups and
 * closes that socket, or closes the dup the program is closing. Every call must answer as usual, no fd may be left over, and the
 * socket's last close must free its port (a count gone wrong either way shows: a socket
 * freed while named, or one never freed). */
void signal_dup_close_stress(void)
{
	int fd = udp_bound(STRESS_PORT);
	int before = lowest_free_fd(); /* the stack's own fds are open from the first socket */
	CHECK(fd >= 0 && before > 0, "bind");
	stress_fd = fd;
	handled = handler_dup_failed = 0;
	struct sigaction sa = {.sa_handler = on_usr1}, old;
	sigaction(SIGUSR1, &sa, &old);
	/* a high-resolution timer whose signal goes to this thread: it interrupts whatever
	 * instruction the thread is at when it fires */
	struct sigevent sev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1};
	sev._sigev_un._tid = gettid();
	timer_t timer;
	struct itimerspec every = {.it_interval.tv_nsec = SIGNAL_EVERY_NS,
				   .it_value.tv_nsec = SIGNAL_EVERY_NS};
	CHECK(timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0 &&
		  timer_settime(timer, 0, &every, NULL) == 0,
	      "timer");
	unsigned rounds = 0, wrong = 0;
	double start = seconds(), now;
	do {
		wrong += !use_once(fd, rounds++);
		now = seconds();
	} while ((now < start + STRESS_MS / 1000.0 || handled < MIN_HANDLED) &&
		 now < start + STRESS_MAX_MS / 1000.0);
	timer_delete(timer);
	sigaction(SIGUSR1, &old, NULL);
	stress_fd = -1;
	CHECK(!wrong && !handler_dup_failed, "%u of %u calls and %d of the handler's dups failed",
	      wrong, rounds, (int)handler_dup_failed);
	CHECK(handled >= MIN_HANDLED, "only %d signals handled in %d ms", (int)handled,
	      STRESS_MAX_MS);
	int v = 0;
	socklen_t l = sizeof v;
	CHECK(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) == 0 && v == SOCK_DGRAM,
	      "the socket after the stress");
	CHECK(lowest_free_fd() == before, "the lowest free fd was %d before, %d after", before,
	      lowest_free_fd());
	close(fd);
	int again = udp_bound(STRESS_PORT);
	CHECK(again >= 0, "the port is free after the last close");
	close(again);
	printf("ok signal_dup_close_stress (%u calls, %d signals handled)\n", rounds, (int)handled);
}

#define CANCEL_PORT 7123
#define CANCEL_AFTER_US 100000
#define CANCEL_WAIT_S 10

static void *dup_close_loop(void *arg)
{
	int fd = *(int *)arg;
	for (;;) { /* close is a cancellation point: the thread ends in one */
		int d = dup(fd);
		if (d >= 0)
			close(d);
	}
	return NULL;
}

struct after_cancel {
	int fd;
	volatile int done;
};

static void *call_after_cancel(void *arg)
{
	struct after_cancel *a = arg;
	int v;
	socklen_t l = sizeof v;
	getsockopt(a->fd, SOL_SOCKET, SO_TYPE, &v, &l);
	a->done = 1;
	return NULL;
}

/* A thread cancelled while it dups and closes a socket (it ends inside close, a
 * cancellation point): the other threads' calls go on. */
void cancel_in_close(void)
{
	int fd = udp_bound(CANCEL_PORT);
	CHECK(fd >= 0, "bind");
	pthread_t t, probe;
	CHECK(pthread_create(&t, NULL, dup_close_loop, &fd) == 0, "thread");
	usleep(CANCEL_AFTER_US);
	CHECK(pthread_cancel(t) == 0 && pthread_join(t, NULL) == 0, "cancel");
	/* in a thread of its own, so that a call that never returns fails the case */
	struct after_cancel a = {.fd = fd};
	CHECK(pthread_create(&probe, NULL, call_after_cancel, &a) == 0, "thread");
	for (int i = 0; i < CANCEL_WAIT_S * 100 && !a.done; i++)
		usleep(10000);
	if (!a.done) {
		printf("FAIL cancel_in_close: a call after the cancel did not return in %d s\n",
		       CANCEL_WAIT_S);
		fflush(stdout);
		_exit(1); /* the layer's lock is lost: nothing else would run */
	}
	pthread_join(probe, NULL);
	close(fd);
	printf("ok cancel_in_close\n");
}
