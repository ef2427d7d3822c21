/* SPDX-License-Identifier: BSD-3-Clause */
/* Edge cases of the preload layer, written as any socket program is (plain libc; run under
 * myrio-run by tests/sh/preload_edges.sh). "peer" serves on 10.0.0.2: each connection's
 * first byte says what to do with it. "cases" runs every case against it from 10.0.0.1
 * and prints one line per case; the exit status counts the failures. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "edges.h"


#define BACK_PORT 7002
#define SLEEPER_PORT 7003
#define GROUP_PORT 7105
#define GROUP "239.1.2.3"

int failures;

struct sockaddr_in peer_addr(int port)
{
	const char *ip = getenv("EDGES_PEER_IP");
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	inet_pton(AF_INET, ip ? ip : "10.0.0.2", &a.sin_addr);
	return a;
}

int dial(char cmd)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = peer_addr(PEER_PORT);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0 || write(fd, &cmd, 1) != 1) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads a port (network order) from the connection c and sends "d" there, to the address
 * c comes from, from a socket of its own. */
static void udp_to_caller(int c)
{
	struct sockaddr_in to;
	socklen_t tl = sizeof to;
	uint16_t port;
	if (read(c, &port, 2) != 2 || getpeername(c, (struct sockaddr *)&to, &tl) < 0)
		return;
	to.sin_port = port;
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	sendto(u, "d", 1, 0, (struct sockaddr *)&to, sizeof to);
	close(u);
}

static int peer(void)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PEER_PORT)};
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 64) < 0) {
		perror("peer: listen");
		return 1;
	}
	printf("peer listening\n");
	fflush(stdout);
	for (;;) {
		int c = accept(ls, NULL, NULL);
		char cmd, buf[65536];
		if (c < 0 || read(c, &cmd, 1) != 1) {
			if (c >= 0)
				close(c);
			continue;
		}
		if (cmd == CMD_QUIT)
			return 0;
		if (cmd == CMD_RESET) { /* some data, then a reset */
			memset(buf, 'x', 1000);
			write(c, buf, 1000);
			struct linger l = {1, 0};
			setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
		}
		if (cmd == CMD_BACK) { /* a connection back to the caller, with one byte */
			int b = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in to = {.sin_family = AF_INET,
						 .sin_port = htons(BACK_PORT)};
			inet_pton(AF_INET, "10.0.0.1", &to.sin_addr);
			if (connect(b, (struct sockaddr *)&to, sizeof to) == 0)
				write(b, "a", 1);
			close(b);
		}
		if (cmd == CMD_SLEEP) { /* a listener, then 2 s asleep in the kernel */
			int l = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in at = {.sin_family = AF_INET,
						 .sin_port = htons(SLEEPER_PORT)};
			bind(l, (struct sockaddr *)&at, sizeof at);
			listen(l, 4);
			write(c, "r", 1);
			struct timespec two = {2, 0};
			nanosleep(&two, NULL); /* a system call the preload does not see */
			write(c, "w", 1);
			close(accept(l, NULL, NULL));
			close(l);
		}
		if (cmd == CMD_MCAST) { /* datagrams to the group from an accelerated socket */
			int u = socket(AF_INET, SOCK_DGRAM, 0);
			struct sockaddr_in any = {.sin_family = AF_INET},
					   to = {.sin_family = AF_INET,
						 .sin_port = htons(GROUP_PORT)};
			inet_pton(AF_INET, GROUP, &to.sin_addr);
			bind(u, (struct sockaddr *)&any, sizeof any);
			for (int i = 0; i < 5; i++) {
				sendto(u, "g", 1, 0, (struct sockaddr *)&to, sizeof to);
				usleep(20000);
			}
			close(u);
		}
		if (cmd == CMD_UDP) /* a datagram to the caller's address, at the port sent */
			udp_to_caller(c);
		if (cmd == CMD_FIN) /* data, then the end of the stream */
			write(c, "hello", 5);
		if (cmd == CMD_FIN_RESET) { /* then the caller's byte draws a reset */
			write(c, "hello", 5);
			shutdown(c, SHUT_WR);
			char got;
			struct linger l = {1, 0};
			if (read(c, &got, 1) == 1)
				setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
		}
		if (cmd == CMD_ECHO)
			for (ssize_t n; (n = read(c, buf, sizeof buf)) > 0;)
				if (write(c, buf, (size_t)n) != n)
					break;
		close(c);
	}
}

static void connect_refused(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = peer_addr(CLOSED_PORT);
	int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
	CHECK(rc < 0 && errno == ECONNREFUSED, "connect to a closed port gave %d", rc);
	close(fd);
	printf("ok connect_refused\n");
}

static void nonblocking_connect_poll(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = peer_addr(PEER_PORT);
	int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
	CHECK(rc < 0 && errno == EINPROGRESS, "non-blocking connect gave %d", rc);
	char b;
	CHECK(read(fd, &b, 1) < 0 && errno == EAGAIN, "read while connecting");
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	CHECK(poll(&p, 1, 5000) == 1 && (p.revents & POLLOUT), "poll for the connection");
	int err = -1;
	socklen_t len = sizeof err;
	CHECK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0, "SO_ERROR %d",
	      err);
	CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect once connected: 0");
	CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno == EISCONN,
	      "connect again: EISCONN");
	char cmd = CMD_ECHO, back = 0;
	CHECK(write(fd, &cmd, 1) == 1 && write(fd, "z", 1) == 1, "write");
	p.events = POLLIN;
	CHECK(poll(&p, 1, 5000) == 1 && read(fd, &back, 1) == 1 && back == 'z', "echo");
	CHECK(read(fd, &back, 1) < 0 && errno == EAGAIN, "EAGAIN on an empty socket");
	int avail = -1;
	CHECK(ioctl(fd, FIONREAD, &avail) == 0 && avail == 0, "FIONREAD %d", avail);
	close(fd);

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	a = peer_addr(CLOSED_PORT);
	CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno == EINPROGRESS,
	      "second connect");
	p = (struct pollfd){.fd = fd, .events = POLLOUT};
	CHECK(poll(&p, 1, 5000) == 1 && (p.revents & POLLERR), "poll for a refused connection");
	len = sizeof err;
	CHECK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == ECONNREFUSED,
	      "SO_ERROR %d for a refused connection", err);
	close(fd);
	printf("ok nonblocking_connect_poll\n");
}

static volatile sig_atomic_t sigpipes;
static void on_sigpipe(int sig)
{
	sigpipes++;
}

static void sigpipe_after_peer_close(void)
{
	signal(SIGPIPE, on_sigpipe);
	int fd = dial(CMD_CLOSE);
	CHECK(fd >= 0, "dial");
	char b;
	CHECK(read(fd, &b, 1) == 0, "end of stream from the closing peer");
	static char buf[65536];
	ssize_t rc = 0;
	int errs = 0;
	for (int i = 0; i < 200 && rc >= 0; i++)
		rc = send(fd, buf, sizeof buf, MSG_NOSIGNAL);
	errs = errno;
	CHECK(rc < 0 && (errs == EPIPE || errs == ECONNRESET), "send after the peer closed");
	CHECK(sigpipes == 0, "SIGPIPE despite MSG_NOSIGNAL");
	rc = write(fd, buf, 100);
	CHECK(rc < 0 && errno == EPIPE, "write after the reset gave %zd", rc);
	CHECK(sigpipes == 1, "%d SIGPIPEs for one write", (int)sigpipes);
	signal(SIGPIPE, SIG_DFL);
	close(fd);
	printf("ok sigpipe_after_peer_close\n");
}

static void reset_mid_stream(void)
{
	int fd = dial(CMD_RESET);
	CHECK(fd >= 0, "dial");
	char buf[4096];
	size_t got = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		got += (size_t)n;
	CHECK(n < 0 && errno == ECONNRESET, "read after %zu bytes gave %zd", got, n);
	CHECK(got == 1000, "%zu bytes before the reset", got);
	CHECK(read(fd, buf, 1) == 0, "a read after the reported reset");
	close(fd);
	printf("ok reset_mid_stream\n");
}

static void epoll_mixed(void)
{
	int pfd[2];
	CHECK(pipe(pfd) == 0, "pipe");
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1};
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, pfd[0], &ev) == 0, "add the pipe");
	ev.data.u32 = 2;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "add the socket");
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 && errno == EEXIST, "added twice");
	struct epoll_event out[4];
	CHECK(epoll_wait(ep, out, 4, 100) == 0, "nothing ready yet");
	CHECK(write(pfd[1], "p", 1) == 1, "pipe write");
	int n = epoll_wait(ep, out, 4, 5000);
	CHECK(n == 1 && out[0].data.u32 == 1, "the pipe alone ready (%d)", n);
	char b;
	CHECK(read(pfd[0], &b, 1) == 1, "pipe read");
	CHECK(write(fd, "s", 1) == 1, "socket write");
	n = epoll_wait(ep, out, 4, 5000);
	CHECK(n == 1 && out[0].data.u32 == 2, "the socket alone ready (%d)", n);
	CHECK(read(fd, &b, 1) == 1 && b == 's', "echo read");
	CHECK(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) == 0, "del");
	/* a sleeping wait is woken by the kernel fd */
	if (fork() == 0) {
		usleep(200000);
		write(pfd[1], "q", 1);
		_exit(0);
	}
	n = epoll_wait(ep, out, 4, 5000);
	CHECK(n == 1 && out[0].data.u32 == 1, "woken by the pipe (%d)", n);
	wait(NULL);
	close(ep);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	printf("ok epoll_mixed\n");
}

static void dup2_over_accelerated(void)
{
	int pfd[2];
	CHECK(pipe(pfd) == 0, "pipe");
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	int copy = dup(fd);
	CHECK(copy >= 0 && copy != fd, "dup");
	CHECK(dup2(pfd[0], fd) == fd, "dup2 over the socket");
	CHECK(write(pfd[1], "k", 1) == 1, "pipe write");
	char b = 0;
	CHECK(read(fd, &b, 1) == 1 && b == 'k', "the fd reads the pipe now");
	CHECK(write(copy, "d", 1) == 1, "the socket through its copy");
	CHECK(read(copy, &b, 1) == 1 && b == 'd', "echo through the copy");
	close(copy);
	close(fd);
	close(pfd[1]);
	printf("ok dup2_over_accelerated\n");
}

static void fork_child_gets_ebadf(void)
{
	int pfd[2];
	CHECK(pipe(pfd) == 0, "pipe");
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	pid_t pid = fork();
	if (pid == 0) {
		char b, said[512] = "";
		int errp[2], logged = 1;
		if (pipe(errp) == 0 && dup2(errp[1], 2) == 2) { /* the child's stderr */
			close(errp[1]);
			fcntl(errp[0], F_SETFL, O_NONBLOCK);
			logged = 0;
		}
		int bad = read(fd, &b, 1) < 0 && errno == EBADF;
		bad &= write(fd, "x", 1) < 0 && errno == EBADF;
		int pipe_ok = write(pfd[1], "c", 1) == 1;
		close(fd);
		if (!logged) { /* one line for both calls (only the preload's sockets log) */
			close(2);
			ssize_t n = read(errp[0], said, sizeof said - 1);
			said[n > 0 ? n : 0] = 0;
			char want[64];
			snprintf(want, sizeof want, "fd %d is the parent's accelerated socket", fd);
			char *at = strstr(said, want);
			logged = at && !strstr(at + 1, want);
		}
		_exit(bad && pipe_ok && logged ? 0 : 1);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child: EBADF on the socket, one line saying why, the pipe working");
	char b;
	CHECK(read(pfd[0], &b, 1) == 1 && b == 'c', "the child's pipe write");
	CHECK(write(fd, "f", 1) == 1 && read(fd, &b, 1) == 1 && b == 'f',
	      "the parent's socket after the fork");
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	printf("ok fork_child_gets_ebadf\n");
}

static void fd_exhaustion(void)
{
	struct rlimit old, low;
	getrlimit(RLIMIT_NOFILE, &old);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(BACK_PORT)};
	CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 8) == 0, "listen");
	int c = dial(CMD_BACK); /* the peer connects back to ls */
	CHECK(c >= 0, "dial");
	low = old;
	low.rlim_cur = (rlim_t)c + 1; /* no fd left above c */
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0, "setrlimit");
	int s2 = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(s2 < 0 && errno == EMFILE, "socket() past the limit gave %d", s2);
	struct pollfd p = {.fd = ls, .events = POLLIN};
	CHECK(poll(&p, 1, 5000) == 1, "the connection back arrives");
	int a1 = accept(ls, NULL, NULL);
	CHECK(a1 < 0 && errno == EMFILE, "accept past the limit gave %d", a1);
	setrlimit(RLIMIT_NOFILE, &old);
	a1 = accept(ls, NULL, NULL);
	CHECK(a1 >= 0, "accept once an fd is free");
	char b = 0;
	CHECK(read(a1, &b, 1) == 1 && b == 'a', "the connection kept in the queue works");
	printf("ok fd_exhaustion\n");
	close(a1);
	close(c);
	close(ls);
}

/* The peer's program sleeps in the kernel; its progress thread must still answer our SYN:
 * connect completes before the peer's "woke" byte arrives. */
static void progress_while_blocked_in_kernel(void)
{
	int ctl = dial(CMD_SLEEP);
	CHECK(ctl >= 0, "dial");
	char b = 0;
	CHECK(read(ctl, &b, 1) == 1 && b == 'r', "the peer's listener");
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = peer_addr(SLEEPER_PORT);
	CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect to the sleeper");
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0, "connect completed only once the peer's program woke");
	CHECK(read(ctl, &b, 1) == 1 && b == 'w', "the peer wakes");
	close(fd);
	close(ctl);
	printf("ok progress_while_blocked_in_kernel\n");
}

/* A dup of a pending socket names the same kernel socket once the original goes to the
 * kernel (bind to loopback). */
static void dup_pending_then_kernel(void)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	int d = dup(s);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0, "bind to loopback");
	int t = socket(AF_INET, SOCK_STREAM, 0); /* a new socket where a freed one was */
	int type = 0;
	socklen_t l = sizeof type;
	CHECK(getsockopt(d, SOL_SOCKET, SO_TYPE, &type, &l) == 0 && type == SOCK_DGRAM,
	      "SO_TYPE of the dup %d", type);
	struct sockaddr_in sa, da;
	socklen_t sl = sizeof sa, dl = sizeof da;
	CHECK(getsockname(s, (struct sockaddr *)&sa, &sl) == 0 &&
		  getsockname(d, (struct sockaddr *)&da, &dl) == 0 && sa.sin_port &&
		  sa.sin_port == da.sin_port,
	      "the dup's port %u, the original's %u", ntohs(da.sin_port), ntohs(sa.sin_port));
	close(t);
	close(d);
	close(s);
	printf("ok dup_pending_then_kernel\n");
}

int udp_bound(int port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

char recv_byte(int fd)
{
	struct timeval tv = {.tv_sec = 3};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char b = 0;
	return recv(fd, &b, 1, 0) == 1 ? b : 0;
}

struct blocked_recv {
	int fd;
	ssize_t rc;
	int err;
};

static void *recv_blocking(void *arg)
{
	struct blocked_recv *b = arg;
	char buf[16];
	CANCEL_POINT(b->rc = recv(b->fd, buf, sizeof buf, 0));
	b->err = errno;
	return NULL;
}

/* Another thread's close() ends a blocked recv() (EBADF): no freed socket under it, no
 * lock held while it sleeps. */
static void close_while_blocked(void)
{
	struct blocked_recv b = {.fd = udp_bound(7100), .rc = 1};
	CHECK(b.fd >= 0, "bind");
	pthread_t t;
	CHECK(pthread_create(&t, NULL, recv_blocking, &b) == 0, "thread");
	usleep(200000);
	CHECK(close(b.fd) == 0, "close");
	CHECK(joined_within(t, 5), "the blocked recv still sleeps 5 s after the close");
	CHECK(b.rc < 0 && b.err == EBADF, "recv gave %zd (%s)", b.rc, strerror(b.err));
	int s = udp_bound(7100);
	CHECK(s >= 0, "the port is free again");
	close(s);
	printf("ok close_while_blocked\n");
}

void cancel_unwound(void *arg)
{
	(void)arg;
}

int joined_within(pthread_t t, int seconds)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += seconds;
	if (pthread_timedjoin_np(t, NULL, &until) == 0)
		return 1;
	pthread_cancel(t);
	pthread_join(t, NULL);
	return 0;
}

int echo_once(void)
{
	int fd = dial(CMD_ECHO);
	char b = 0;
	int ok = fd >= 0 && write(fd, "o", 1) == 1 && read(fd, &b, 1) == 1 && b == 'o';
	if (fd >= 0)
		close(fd);
	return ok;
}

static double thread_cpu_s(void)
{
	struct rusage r;
	getrusage(RUSAGE_THREAD, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* A blocking recv with a 1 s timeout sleeps: its thread uses next to no CPU (a spinning one
 * uses a large share of that second). */
int recv_sleeps(int fd, double *cpu)
{
	struct timeval tv = {.tv_sec = 1};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	char b[16];
	double c0 = thread_cpu_s();
	ssize_t r = recv(fd, b, sizeof b, 0);
	int err = errno;
	*cpu = thread_cpu_s() - c0;
	return r < 0 && err == EAGAIN && *cpu < 0.05;
}

static void on_alarm_close(int sig)
{
	(void)sig;
	close(-1); /* any call into the layer from the handler */
}

/* A signal handler's close() during a blocking call, then a blocking call that sleeps. The
 * signal comes every 200 ms until the recv returns: one that lands before the recv sleeps
 * (on a loaded machine the thread may not get there within 200 ms) is handled there and
 * the recv goes on to sleep, as the kernel's does after a signal that came before it;
 * the next one lands in the sleep. One comes just before the recv in every run. */
static void signal_close_while_blocked(void)
{
	int fd = udp_bound(7101);
	CHECK(fd >= 0, "bind");
	struct sigaction sa = {.sa_handler = on_alarm_close}, old;
	sigaction(SIGALRM, &sa, &old);
	struct itimerval it = {.it_value = {.tv_usec = 200000}, .it_interval = {.tv_usec = 200000}},
			 off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	raise(SIGALRM);
	char b[16];
	ssize_t r = recv(fd, b, sizeof b, 0);
	int err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	errno = err;
	CHECK(r < 0 && errno == EINTR, "recv interrupted gave %zd", r);
	CHECK(echo_once(), "an exchange with the peer");
	double cpu;
	CHECK(recv_sleeps(fd, &cpu), "the next blocking recv used %.2f s of CPU", cpu);
	close(fd);
	printf("ok signal_close_while_blocked\n");
}

/* A thread cancelled in a blocking recv, then a blocking call that sleeps. */
static void cancel_while_blocked(void)
{
	struct blocked_recv b = {.fd = udp_bound(7102)};
	CHECK(b.fd >= 0, "bind");
	pthread_t t;
	CHECK(pthread_create(&t, NULL, recv_blocking, &b) == 0, "thread");
	usleep(200000);
	CHECK(pthread_cancel(t) == 0 && pthread_join(t, NULL) == 0, "cancel");
	CHECK(echo_once(), "an exchange with the peer"); /* work for the stack: wakes sleepers */
	double cpu;
	CHECK(recv_sleeps(b.fd, &cpu), "the next blocking recv used %.2f s of CPU", cpu);
	close(b.fd);
	printf("ok cancel_while_blocked\n");
}

/* A pending socket in an epoll set that goes to the kernel (connect to loopback) stays in
 * the set. */
static void epoll_pending_then_kernel(void)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 4) == 0 &&
		  getsockname(ls, (struct sockaddr *)&a, &al) == 0,
	      "loopback listener");
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLOUT, .data.u32 = 9}, out[2];
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "add");
	int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
	CHECK(rc == 0 || errno == EINPROGRESS, "connect to loopback");
	int n = epoll_wait(ep, out, 2, 2000);
	CHECK(n == 1 && out[0].data.u32 == 9, "the connected socket reported %d", n);
	close(ep);
	close(fd);
	close(ls);
	printf("ok epoll_pending_then_kernel\n");
}

/* close_range() and closefrom() drop the range's sockets: a new file under a socket's old
 * number is that file, and the stack's own fds survive a range that covers them. */
static void close_range_drops_sockets(void)
{
	int pfd[2];
	CHECK(pipe(pfd) == 0, "pipe");
	int fd = udp_bound(7103);
	CHECK(fd >= 0, "bind");
	CHECK(close_range((unsigned)fd, (unsigned)fd, 0) == 0, "close_range");
	CHECK(fcntl(pfd[0], F_DUPFD, fd) == fd, "the pipe under the socket's number");
	char b = 0;
	CHECK(write(pfd[1], "r", 1) == 1 && read(fd, &b, 1) == 1 && b == 'r',
	      "read from the number gave the pipe's byte '%c'", b);
	close(fd);
	fd = udp_bound(7103);
	CHECK(fd >= 0, "the port is free again");
	close(pfd[0]);
	close(pfd[1]);
	closefrom(3); /* every fd of this program but the standard streams */
	CHECK(pipe(pfd) == 0, "pipe");
	CHECK(fcntl(pfd[0], F_DUPFD, fd) == fd, "a pipe under the number");
	CHECK(write(pfd[1], "f", 1) == 1 && read(fd, &b, 1) == 1 && b == 'f',
	      "after closefrom, read gave '%c'", b);
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	int c = dial(CMD_ECHO);
	CHECK(c >= 0 && write(c, "e", 1) == 1 && read(c, &b, 1) == 1 && b == 'e',
	      "the stack works after closefrom");
	close(c);
	printf("ok close_range_drops_sockets\n");
}

/* A vfork child's close() before exec leaves the parent's socket as it was. */
static void vfork_child_close(void)
{
	int fd = udp_bound(7104);
	CHECK(fd >= 0, "bind");
	pid_t pid = vfork();
	if (pid == 0) {
		close(fd);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid, "vfork");
	struct sockaddr_in a;
	socklen_t al = sizeof a;
	CHECK(getsockname(fd, (struct sockaddr *)&a, &al) == 0 && ntohs(a.sin_port) == 7104,
	      "the parent's socket after the child's close: port %u", ntohs(a.sin_port));
	close(fd);
	printf("ok vfork_child_close\n");
}

/* Edge-triggered: data that arrives after the program read to EAGAIN is a new edge. */
static void epollet_after_drain(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	CHECK(fcntl(fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u32 = 5}, out[2];
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "add");
	char b[64];
	for (int round = 0; round < 3; round++) {
		CHECK(write(fd, "x", 1) == 1, "write");
		usleep(100000); /* the echo arrives before the wait */
		CHECK(epoll_wait(ep, out, 2, 2000) == 1, "round %d: no report", round);
		ssize_t n;
		while ((n = read(fd, b, sizeof b)) > 0)
			;
		CHECK(n < 0 && errno == EAGAIN, "drained to EAGAIN");
	}
	close(ep);
	close(fd);
	printf("ok epollet_after_drain\n");
}

/* IP_ADD_MEMBERSHIP on an accelerated UDP socket: the group's datagrams from the peer
 * arrive; the kernel's errors for a second join and a leave of a group not joined. */
static void multicast_membership(void)
{
	int fd = udp_bound(GROUP_PORT);
	CHECK(fd >= 0, "bind");
	struct ip_mreq m = {.imr_interface.s_addr = htonl(INADDR_ANY)};
	inet_pton(AF_INET, GROUP, &m.imr_multiaddr);
	CHECK(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) == 0, "join");
	CHECK(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) < 0 &&
		  errno == EADDRINUSE,
	      "a second join");
	int ttl = 4;
	CHECK(setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) == 0, "TTL");
	struct sockaddr_in g = {.sin_family = AF_INET, .sin_port = htons(GROUP_PORT)};
	g.sin_addr = m.imr_multiaddr;
	CHECK(sendto(fd, "s", 1, 0, (struct sockaddr *)&g, sizeof g) == 1, "sendto the group");
	int c = dial(CMD_MCAST);
	CHECK(c >= 0, "dial");
	CHECK(recv_byte(fd) == 'g', "a datagram to the group");
	close(c);
	CHECK(setsockopt(fd, IPPROTO_IP, IP_DROP_MEMBERSHIP, &m, sizeof m) == 0, "leave");
	CHECK(setsockopt(fd, IPPROTO_IP, IP_DROP_MEMBERSHIP, &m, sizeof m) < 0 &&
		  errno == EADDRNOTAVAIL,
	      "a second leave");
	close(fd);
	printf("ok multicast_membership\n");
}

/* sendmmsg on a connected accelerated UDP socket sends every datagram; recvmmsg with
 * MSG_WAITFORONE takes what arrived. */
static void mmsg_calls(void)
{
	int fd = udp_bound(GROUP_PORT);
	CHECK(fd >= 0, "bind");
	struct sockaddr_in p = peer_addr(CLOSED_PORT);
	CHECK(connect(fd, (struct sockaddr *)&p, sizeof p) == 0, "connect");
	struct iovec iv = {"mm", 2};
	struct mmsghdr out[2] = {{.msg_hdr = {.msg_iov = &iv, .msg_iovlen = 1}},
				 {.msg_hdr = {.msg_iov = &iv, .msg_iovlen = 1}}};
	int n = sendmmsg(fd, out, 2, 0);
	/* 2, unless the peer's port unreachable came back between the two */
	CHECK(n >= 1 && out[0].msg_len == 2, "sendmmsg gave %d", n);
	close(fd);
	fd = udp_bound(GROUP_PORT);
	struct ip_mreq m = {.imr_interface.s_addr = htonl(INADDR_ANY)};
	inet_pton(AF_INET, GROUP, &m.imr_multiaddr);
	CHECK(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) == 0, "join");
	struct timeval tv = {.tv_sec = 3};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	int c = dial(CMD_MCAST);
	CHECK(c >= 0, "dial");
	char b[4][8];
	struct iovec in_iv[4];
	struct mmsghdr in[4];
	memset(in, 0, sizeof in);
	for (int i = 0; i < 4; i++) {
		in_iv[i] = (struct iovec){b[i], sizeof b[i]};
		in[i].msg_hdr.msg_iov = &in_iv[i];
		in[i].msg_hdr.msg_iovlen = 1;
	}
	n = recvmmsg(fd, in, 4, MSG_WAITFORONE, NULL);
	CHECK(n >= 1 && in[0].msg_len == 1 && b[0][0] == 'g', "recvmmsg gave %d", n);
	close(c);
	close(fd);
	printf("ok mmsg_calls\n");
}

/* kernel: the case holds for the kernel's sockets too ("kernel" runs those without the
 * preload, over loopback); the others check what only the preload does. */
#define CASE(f, k)                                                                                 \
	{                                                                                          \
#f, f, k                                                                           \
	}
static const struct {
	const char *name;
	void (*run)(void);
	bool kernel;
} cases[] = {
    CASE(connect_refused, true),
    CASE(nonblocking_connect_poll, true),
    CASE(sigpipe_after_peer_close, true),
    CASE(reset_mid_stream, true),
    CASE(epoll_mixed, true),
    CASE(dup2_over_accelerated, true),
    CASE(fork_child_gets_ebadf, false),
    CASE(fd_exhaustion, false),
    CASE(progress_while_blocked_in_kernel, false),
    CASE(dup_pending_then_kernel, false),
    CASE(close_while_blocked, false),
    CASE(signal_close_while_blocked, true),
    CASE(cancel_while_blocked, true),
    CASE(cancel_pending_at_entry, true),
    CASE(epoll_pending_then_kernel, false),
    CASE(vfork_child_close, false),
    CASE(epollet_after_drain, true),
    CASE(multicast_membership, false),
    CASE(mmsg_calls, false),
    CASE(close_range_drops_sockets, false),
    CASE(udp_connect_unspec, true),
    CASE(epoll_pwait2_waits, true),
    CASE(tcp_msg_peek, true),
    CASE(tcp_bind_in_use, true),
    CASE(pollrdhup_with_data_queued, true),
    CASE(select_past_fd_setsize, true),
    CASE(signal_close_races_sleep, true),
    CASE(tcp_connect_unspec, true),
    CASE(tcp_peek_waitall, true),
    CASE(calls_race_close, true),
    CASE(shutdown_listener_ends_accept, true),
    CASE(signal_close_frees_at_once, true),
    CASE(udp_shutdown_as_kernel, true),
    CASE(sockopt_as_kernel, true),
    CASE(bad_buffers_efault, true),
    CASE(tcp_bind_port0_named, true),
    CASE(recv_flags_as_kernel, true),
    CASE(write_after_fin_then_reset, true),
    CASE(send_flags_refused, false),
    CASE(bad_addresses_efault, true),
    CASE(signal_dup_close_stress, true),
    CASE(cancel_in_close, true),
    CASE(sa_restart_recv_goes_on, true),
    CASE(connect_again_after_refusal, true),
    CASE(errno_kept_on_success, true),
    CASE(fdopen_fileno, true),
};

/* "cases" runs them all, "kernel" those that hold for the kernel's sockets too; a name
 * after either runs that case alone. */
int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "peer"))
		return peer();
	bool kernel = argc >= 2 && !strcmp(argv[1], "kernel");
	if (argc < 2 || argc > 3 || (strcmp(argv[1], "cases") && !kernel)) {
		fprintf(stderr, "usage: preload_edges peer|cases|kernel [NAME]\n");
		return 2;
	}
	int ran = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if ((argc == 2 || !strcmp(argv[2], cases[i].name)) &&
		    (!kernel || cases[i].kernel)) {
			cases[i].run();
			ran++;
		}
	int q = dial(CMD_QUIT);
	if (q >= 0)
		close(q);
	printf("%d failed\n", failures);
	return failures || (!ran && !kernel) ? 1 : 0;
}
