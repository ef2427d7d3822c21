/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls whose results are the kernel's to define: each case passes both under the preload
 * and on the kernel's own sockets (tests/sh/preload_edges.sh runs them over loopback
 * without the preload too), so the layer is checked against the kernel, not against
 * itself. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "edges.h"

#define UNSPEC_PORT 7110
#define PWAIT2_PORT 7111
#define SELECT_PORT 7112
#define BIND_PORT 7120
#define REUSE_PORT 7121
#define HIGH_FD 2000
#define RACE_PORT 7113
#define SHUTDOWN_PORT 7114
#define RACE_ROUNDS 1000
#define FREED_PORT 7115
#define FREED_ROUNDS 3000
#define UDP_SHUT_PORT 7116
#define ERRNO_PORT 7125
#define SOCKOPT_PORT 7117

int ask_datagram(int port)
{
	int c = dial(CMD_UDP);
	uint16_t p = htons((uint16_t)port);
	if (c >= 0 && write(c, &p, 2) != 2) {
		close(c);
		return -1;
	}
	return c;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* connect(AF_UNSPEC) dissolves a UDP socket's association: no peer, no default
 * destination, and datagrams from anyone arrive again. */
void udp_connect_unspec(void)
{
	int u = udp_bound(UNSPEC_PORT);
	CHECK(u >= 0, "bind");
	struct sockaddr_in far = peer_addr(9);
	CHECK(connect(u, (struct sockaddr *)&far, sizeof far) == 0, "connect");
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	CHECK(connect(u, &unspec, sizeof unspec) == 0, "connect(AF_UNSPEC)");
	struct sockaddr_in got;
	socklen_t gl = sizeof got;
	CHECK(getpeername(u, (struct sockaddr *)&got, &gl) < 0 && errno == ENOTCONN,
	      "getpeername after the association is gone");
	CHECK(send(u, "x", 1, 0) < 0 && errno == EDESTADDRREQ, "send without an address");
	gl = sizeof got;
	CHECK(getsockname(u, (struct sockaddr *)&got, &gl) == 0 &&
		  ntohs(got.sin_port) == UNSPEC_PORT,
	      "the bound port stays");
	int c = ask_datagram(UNSPEC_PORT);
	CHECK(c >= 0, "dial");
	CHECK(recv_byte(u) == 'd', "a datagram from another source");
	close(c);
	CHECK(connect(u, &unspec, sizeof unspec) == 0, "AF_UNSPEC on an unconnected socket");
	close(u);
	printf("ok udp_connect_unspec\n");
}

/* epoll_pwait2: its timeout (a timespec) and its readiness. */
void epoll_pwait2_waits(void)
{
	int u = udp_bound(PWAIT2_PORT);
	CHECK(u >= 0, "bind");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7}, out[4];
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, u, &ev) == 0, "add");
	struct timespec t = {.tv_nsec = 100000000};
	double t0 = now_s();
	int n = epoll_pwait2(ep, out, 4, &t, NULL);
	double waited = now_s() - t0;
	CHECK(n == 0 && waited >= 0.09, "nothing ready: %d after %.3f s", n, waited);
	int c = ask_datagram(PWAIT2_PORT);
	CHECK(c >= 0, "dial");
	t = (struct timespec){.tv_sec = 3};
	n = epoll_pwait2(ep, out, 4, &t, NULL);
	CHECK(n == 1 && out[0].data.u32 == 7 && (out[0].events & EPOLLIN), "a datagram: %d", n);
	t = (struct timespec){.tv_nsec = 1000000000};
	CHECK(epoll_pwait2(ep, out, 4, &t, NULL) < 0 && errno == EINVAL, "a bad timespec");
	close(c);
	close(ep);
	close(u);
	printf("ok epoll_pwait2_waits\n");
}

/* recv(MSG_PEEK) on TCP leaves the data for the next read, across iovecs and partial
 * reads; the end of the stream peeks as 0. */
void tcp_msg_peek(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	CHECK(write(fd, "abcdef", 6) == 6, "write");
	char b[16];
	ssize_t r = 0;
	for (int i = 0; i < 200 && r < 6; i++) {
		r = recv(fd, b, sizeof b, MSG_PEEK);
		CHECK(r > 0 && !memcmp(b, "abcdef", (size_t)r), "peek gave %zd", r);
		if (r < 6)
			usleep(10000);
	}
	CHECK(r == 6, "the whole echo peeked: %zd", r);
	char x[2], y[8];
	struct iovec iv[2] = {{x, sizeof x}, {y, sizeof y}};
	struct msghdr m = {.msg_iov = iv, .msg_iovlen = 2};
	CHECK(recvmsg(fd, &m, MSG_PEEK) == 6 && !memcmp(x, "ab", 2) && !memcmp(y, "cdef", 4),
	      "peek into two iovecs");
	CHECK(recv(fd, b, 3, 0) == 3 && !memcmp(b, "abc", 3), "read after peeking");
	CHECK(recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT) == 3 && !memcmp(b, "def", 3),
	      "peek the rest");
	CHECK(recv(fd, b, sizeof b, 0) == 3 && !memcmp(b, "def", 3), "read the rest");
	CHECK(recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT) < 0 && errno == EAGAIN,
	      "peek an empty socket");
	CHECK(shutdown(fd, SHUT_WR) == 0, "shutdown");
	CHECK(recv(fd, b, sizeof b, MSG_PEEK) == 0, "peek the end of the stream");
	close(fd);
	printf("ok tcp_msg_peek\n");
}

static int tcp_bound(int port, bool reuse)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (reuse)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* A TCP port another socket holds is refused at bind(), as the kernel does; with
 * SO_REUSEADDR on both, at the second listen(). */
void tcp_bind_in_use(void)
{
	int a = tcp_bound(BIND_PORT, false);
	CHECK(a >= 0, "bind");
	struct sockaddr_in got;
	socklen_t gl = sizeof got;
	CHECK(getsockname(a, (struct sockaddr *)&got, &gl) == 0 &&
		  ntohs(got.sin_port) == BIND_PORT && got.sin_addr.s_addr == htonl(INADDR_ANY),
	      "getsockname of the bound socket: %s:%u", inet_ntoa(got.sin_addr),
	      ntohs(got.sin_port));
	CHECK(tcp_bound(BIND_PORT, false) < 0 && errno == EADDRINUSE, "a second bind");
	CHECK(listen(a, 4) == 0, "listen");
	CHECK(tcp_bound(BIND_PORT, true) < 0 && errno == EADDRINUSE,
	      "a bind with SO_REUSEADDR to a listening port");
	close(a);
	int b = tcp_bound(BIND_PORT, false);
	CHECK(b >= 0, "the port is free once its holder closed");
	close(b);
	int c = tcp_bound(REUSE_PORT, true), d = tcp_bound(REUSE_PORT, true);
	CHECK(c >= 0 && d >= 0, "two binds with SO_REUSEADDR");
	CHECK(listen(c, 4) == 0, "listen");
	CHECK(listen(d, 4) < 0 && errno == EADDRINUSE, "a second listener on the port");
	close(c);
	close(d);
	printf("ok tcp_bind_in_use\n");
}

/* POLLRDHUP comes with the peer's FIN, while its data is still queued. */
void pollrdhup_with_data_queued(void)
{
	int fd = dial(CMD_FIN);
	CHECK(fd >= 0, "dial");
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
	for (int i = 0; i < 100; i++) {
		CHECK(poll(&p, 1, 3000) == 1, "poll");
		if (p.revents & POLLRDHUP)
			break;
		usleep(20000);
	}
	CHECK((p.revents & (POLLIN | POLLRDHUP)) == (POLLIN | POLLRDHUP),
	      "revents 0x%x with data queued", p.revents);
	int queued = -1;
	CHECK(ioctl(fd, FIONREAD, &queued) == 0 && queued == 5, "FIONREAD %d", queued);
	/* An int at an odd address, as Python's fcntl.ioctl passes it: the kernel takes it. */
	unsigned char odd[sizeof(int) + 1];
	memset(odd, 0xff, sizeof odd);
	CHECK(ioctl(fd, FIONREAD, odd + 1) == 0, "FIONREAD into an unaligned int");
	memcpy(&queued, odd + 1, sizeof queued);
	CHECK(queued == 5, "FIONREAD %d into an unaligned int", queued);
	memset(odd, 0, sizeof odd);
	CHECK(ioctl(fd, FIONBIO, odd + 1) == 0, "FIONBIO from an unaligned int");
	char b[8];
	CHECK(read(fd, b, sizeof b) == 5 && !memcmp(b, "hello", 5), "the data");
	CHECK(read(fd, b, sizeof b) == 0, "the end of the stream");
	close(fd);
	printf("ok pollrdhup_with_data_queued\n");
}

/* select() with nfds past FD_SETSIZE and sets the program sized for it. */
void select_past_fd_setsize(void)
{
	struct rlimit old, rl;
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0, "getrlimit");
	rl = old;
	if (rl.rlim_cur < HIGH_FD + 1)
		rl.rlim_cur = HIGH_FD + 1;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit");
	int u = udp_bound(SELECT_PORT);
	CHECK(u >= 0, "bind");
	CHECK(dup2(u, HIGH_FD) == HIGH_FD, "dup2");
	enum { BITS = 8 * sizeof(unsigned long) };
	unsigned long set[(HIGH_FD + BITS) / BITS];
	memset(set, 0, sizeof set);
	set[HIGH_FD / BITS] |= 1ul << (HIGH_FD % BITS);
	int c = ask_datagram(SELECT_PORT);
	CHECK(c >= 0, "dial");
	struct timeval tv = {.tv_sec = 3};
	int n = select(HIGH_FD + 1, (fd_set *)set, NULL, NULL, &tv);
	CHECK(n == 1 && (set[HIGH_FD / BITS] >> (HIGH_FD % BITS) & 1), "select gave %d", n);
	close(c);
	close(HIGH_FD);
	close(u);
	setrlimit(RLIMIT_NOFILE, &old);
	printf("ok select_past_fd_setsize\n");
}

static volatile sig_atomic_t race_fd = -1, race_round;

static void on_alarm_close_socket(int sig)
{
	(void)sig;
	int fd = race_fd;
	race_fd = -1;
	if (fd >= 0)
		close(fd);
}

static void *race_watchdog(void *arg)
{
	(void)arg;
	CANCEL_POINT(sleep(20));
	printf("FAIL signal_close_races_sleep: a blocking recv slept through its socket's close "
	       "by a signal handler (round %d)\n",
	       (int)race_round);
	fflush(stdout);
	_exit(1);
}

/* A signal handler closes the socket the program is about to sleep on, or sleeps on, at
 * moments spread over the call: recv ends each time (EINTR or EBADF), never sleeps on. */
void signal_close_races_sleep(void)
{
	struct sigaction sa = {.sa_handler = on_alarm_close_socket}, old;
	sigaction(SIGALRM, &sa, &old);
	/* the watchdog thread must not take the signal: a close from another thread does not
	 * end the kernel's blocked recv */
	sigset_t alrm, prev;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &prev);
	pthread_t dog;
	int made = pthread_create(&dog, NULL, race_watchdog, NULL);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	CHECK(made == 0, "thread");
	int other = 0, unbound = 0;
	for (race_round = 0; race_round < RACE_ROUNDS; race_round++) {
		int fd = udp_bound(RACE_PORT);
		if (fd < 0) {
			unbound++;
			continue;
		}
		race_fd = fd;
		struct itimerval it = {.it_value = {.tv_usec = 1 + (race_round * 37) % 400}};
		setitimer(ITIMER_REAL, &it, NULL);
		char b[16];
		ssize_t r = recv(fd, b, sizeof b, 0);
		other += !(r < 0 && (errno == EINTR || errno == EBADF));
		int left = race_fd;
		race_fd = -1;
		if (left >= 0)
			close(left);
	}
	pthread_cancel(dog);
	pthread_join(dog, NULL);
	sigaction(SIGALRM, &old, NULL);
	CHECK(!unbound && !other, "%d binds failed, %d recv calls ended otherwise", unbound, other);
	printf("ok signal_close_races_sleep\n");
}

/* connect(AF_UNSPEC) on a TCP connection aborts it, as the kernel's tcp_disconnect: the
 * peer sees a reset, the socket reports ECONNRESET once and is unconnected, and it can
 * connect again. On a listener it stops listening; the socket may listen again. */
void tcp_connect_unspec(void)
{
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	char b[8];
	CHECK(write(fd, "a", 1) == 1 && recv_byte(fd) == 'a', "echo");
	struct sockaddr_in was, got;
	socklen_t wl = sizeof was, gl = sizeof got;
	CHECK(getsockname(fd, (struct sockaddr *)&was, &wl) == 0, "getsockname");
	CHECK(connect(fd, &unspec, sizeof unspec) == 0, "connect(AF_UNSPEC)");
	/* the kernel forgets the local address, not the port */
	CHECK(getsockname(fd, (struct sockaddr *)&got, &gl) == 0 &&
		  got.sin_addr.s_addr == htonl(INADDR_ANY) && got.sin_port == was.sin_port,
	      "getsockname after the disconnect: %s:%u, was port %u", inet_ntoa(got.sin_addr),
	      ntohs(got.sin_port), ntohs(was.sin_port));
	int err = -1;
	socklen_t el = sizeof err;
	CHECK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == ECONNRESET,
	      "SO_ERROR %d after the disconnect", err);
	CHECK(read(fd, b, sizeof b) < 0 && errno == ENOTCONN, "read once the error was taken");
	CHECK(send(fd, "x", 1, MSG_NOSIGNAL) < 0 && errno == EPIPE, "send while unconnected");
	gl = sizeof got;
	CHECK(getpeername(fd, (struct sockaddr *)&got, &gl) < 0 && errno == ENOTCONN,
	      "getpeername");
	struct sockaddr_in p = peer_addr(PEER_PORT);
	CHECK(connect(fd, (struct sockaddr *)&p, sizeof p) == 0, "connect again");
	char cmd = CMD_ECHO;
	CHECK(write(fd, &cmd, 1) == 1 && write(fd, "z", 1) == 1 && recv_byte(fd) == 'z',
	      "an echo on the new connection");
	CHECK(connect(fd, &unspec, sizeof unspec) == 0, "connect(AF_UNSPEC) again");
	CHECK(read(fd, b, sizeof b) < 0 && errno == ECONNRESET, "read reports the reset first");
	CHECK(connect(fd, &unspec, 1) < 0 && errno == EINVAL, "a sockaddr shorter than a family");
	close(fd);

	int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(UNSPEC_PORT)};
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0, "listen");
	CHECK(connect(l, &unspec, sizeof unspec) == 0, "connect(AF_UNSPEC) on a listener");
	CHECK(accept(l, NULL, NULL) < 0 && errno == EINVAL, "accept once it stopped listening");
	CHECK(listen(l, 4) == 0, "listen again");
	gl = sizeof got;
	CHECK(getsockname(l, (struct sockaddr *)&got, &gl) == 0 &&
		  ntohs(got.sin_port) == UNSPEC_PORT,
	      "the bound port stays: %u", ntohs(got.sin_port));
	close(l);
	printf("ok tcp_connect_unspec\n");
}

struct late_write {
	int fd;
	const char *s;
};

static void *write_later(void *arg)
{
	struct late_write *w = arg;
	usleep(200000);
	if (write(w->fd, w->s, strlen(w->s)) < 0)
		perror("write_later");
	return NULL;
}

/* recv(MSG_PEEK|MSG_WAITALL) on TCP waits for the whole length, as the kernel's, but for
 * the timeout, MSG_DONTWAIT or the end of the stream, which return what is queued. */
void tcp_peek_waitall(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	char b[8];
	CHECK(write(fd, "ab", 2) == 2, "write");
	CHECK(recv(fd, b, 2, MSG_PEEK | MSG_WAITALL) == 2, "the echo");
	struct timeval tv = {.tv_usec = 300000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	double t0 = now_s();
	ssize_t r = recv(fd, b, 4, MSG_PEEK | MSG_WAITALL);
	double waited = now_s() - t0;
	CHECK(r == 2 && waited >= 0.25, "%zd bytes after %.3f s: the timeout ends the wait", r,
	      waited);
	t0 = now_s();
	r = recv(fd, b, 4, MSG_PEEK | MSG_WAITALL | MSG_DONTWAIT);
	CHECK(r == 2 && now_s() - t0 < 0.2, "MSG_DONTWAIT: %zd at once", r);
	tv.tv_sec = 5;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct late_write w = {fd, "cd"};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, write_later, &w) == 0, "thread");
	r = recv(fd, b, 4, MSG_PEEK | MSG_WAITALL);
	pthread_join(t, NULL);
	CHECK(r == 4 && !memcmp(b, "abcd", 4), "peeked %zd bytes, not the 4 asked", r);
	CHECK(recv(fd, b, 4, MSG_WAITALL) == 4 && !memcmp(b, "abcd", 4), "read them");
	CHECK(write(fd, "e", 1) == 1 && shutdown(fd, SHUT_WR) == 0, "write and shut down");
	r = recv(fd, b, sizeof b, MSG_PEEK | MSG_WAITALL);
	CHECK(r == 1 && b[0] == 'e', "the end of the stream ends the wait: %zd", r);
	close(fd);
	printf("ok tcp_peek_waitall\n");
}

#define SHARED_FDS 6
#define HAMMER_THREADS 3
#define HAMMER_MS 1500
static int shared[SHARED_FDS];
static volatile int hammering;

/* Any call on any of the shared fds, its result ignored: the layer must not touch a socket
 * another thread closed and freed meanwhile. */
static void *hammer(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct sockaddr unspec = {.sa_family = AF_UNSPEC};
	char b[16];
	while (hammering) {
		int fd = shared[rand_r(&seed) % SHARED_FDS], v = 0;
		socklen_t l = sizeof v;
		struct sockaddr_in a;
		socklen_t al = sizeof a;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		switch (rand_r(&seed) % 12) {
		case 0:
			close(accept4(fd, NULL, NULL, SOCK_NONBLOCK));
			break;
		case 1:
			connect(fd, &unspec, sizeof unspec);
			break;
		case 2:
			recv(fd, b, sizeof b, MSG_DONTWAIT);
			break;
		case 3:
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l);
			break;
		case 4:
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			break;
		case 5:
			ioctl(fd, FIONREAD, &v);
			break;
		case 6:
			getsockname(fd, (struct sockaddr *)&a, &al);
			break;
		case 7:
			getpeername(fd, (struct sockaddr *)&a, &al);
			break;
		case 8:
			poll(&p, 1, 0);
			break;
		case 9:
			v = 1;
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, sizeof v);
			break;
		case 10:
			send(fd, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
			break;
		default:
			shutdown(fd, SHUT_RD);
		}
	}
	return NULL;
}

/* A socket for a shared slot: a listener, a bound UDP socket, or one not yet bound. */
static int shared_socket(int kind)
{
	struct sockaddr_in any = {.sin_family = AF_INET};
	int fd = socket(AF_INET, (kind == 1 ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0);
	if (kind == 0)
		(void)!(bind(fd, (struct sockaddr *)&any, sizeof any) || listen(fd, 4));
	else if (kind == 1)
		(void)!bind(fd, (struct sockaddr *)&any, sizeof any);
	return fd;
}

/* Threads calling accept4, connect, recv, getsockopt, fcntl, ioctl, getsockname, poll...
 * on shared sockets while another closes and replaces them: no call may read a socket
 * freed under it (the sanitizer build reports one), and the process ends well. */
void calls_race_close(void)
{
	for (int i = 0; i < SHARED_FDS; i++)
		shared[i] = shared_socket(i % 3);
	hammering = 1;
	pthread_t t[HAMMER_THREADS];
	for (int i = 0; i < HAMMER_THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, hammer, (void *)(uintptr_t)(i + 1)) == 0,
		      "thread");
	unsigned replaced = 0;
	for (double end = now_s() + HAMMER_MS / 1000.0; now_s() < end; replaced++) {
		int i = (int)(replaced % SHARED_FDS);
		close(shared[i]);
		shared[i] = shared_socket((int)(replaced % 3));
	}
	hammering = 0;
	for (int i = 0; i < HAMMER_THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < SHARED_FDS; i++)
		close(shared[i]);
	CHECK(echo_once(), "the stack after the race");
	printf("ok calls_race_close (%u sockets replaced)\n", replaced);
}

struct blocked_accept {
	int fd, rc, err;
};

static void *accept_blocking(void *arg)
{
	struct blocked_accept *b = arg;
	CANCEL_POINT(b->rc = accept(b->fd, NULL, NULL));
	b->err = errno;
	return NULL;
}

/* shutdown(SHUT_RDWR) of a listener stops it, as Linux does, and an accept() asleep on it
 * in another thread ends with EINVAL (servers stop their accept threads this way). */
void shutdown_listener_ends_accept(void)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(SHUTDOWN_PORT)};
	CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 4) == 0, "listen");
	struct sockaddr_in p = peer_addr(PEER_PORT);
	CHECK(connect(l, (struct sockaddr *)&p, sizeof p) < 0 && errno == EISCONN,
	      "connect of a listener");
	CHECK(shutdown(l, SHUT_WR) == 0, "SHUT_WR on a listener");
	struct blocked_accept b = {.fd = l};
	pthread_t t;
	CHECK(pthread_create(&t, NULL, accept_blocking, &b) == 0, "thread");
	usleep(200000);
	CHECK(shutdown(l, SHUT_RDWR) == 0, "shutdown of the listener");
	CHECK(joined_within(t, 3), "accept still asleep 3 s after the shutdown");
	CHECK(b.rc < 0 && b.err == EINVAL, "accept gave %d (%s)", b.rc, strerror(b.err));
	CHECK(listen(l, 4) == 0, "listen again");
	close(l);
	printf("ok shutdown_listener_ends_accept\n");
}

static volatile sig_atomic_t victim_fd = -1, victim_closed;

static void on_alarm_close_victim(int sig)
{
	(void)sig;
	int fd = victim_fd;
	victim_fd = -1;
	if (fd >= 0)
		close(fd);
	victim_closed = 1;
}

/* A socket a signal handler closes is freed by the time the call the handler interrupted
 * has returned: its port is free for the next bind, as the kernel's is. The program makes
 * cheap calls on another socket until the handler ran, so the handler lands anywhere in
 * them, its own way out of the layer's lock included. */
void signal_close_frees_at_once(void)
{
	int busy = udp_bound(0);
	CHECK(busy >= 0, "bind");
	struct sigaction sa = {.sa_handler = on_alarm_close_victim}, old;
	sigaction(SIGALRM, &sa, &old);
	int held = 0, unbound = 0, rounds;
	for (rounds = 0; rounds < FREED_ROUNDS; rounds++) {
		int victim = udp_bound(FREED_PORT);
		int probe = socket(AF_INET, SOCK_DGRAM, 0); /* made before the close */
		if (victim < 0 || probe < 0) {
			unbound++;
			break;
		}
		victim_closed = 0;
		victim_fd = victim;
		struct itimerval it = {.it_value = {.tv_usec = 1 + (rounds * 37) % 200}};
		setitimer(ITIMER_REAL, &it, NULL);
		while (!victim_closed) {
			int type;
			socklen_t l = sizeof type;
			getsockopt(busy, SOL_SOCKET, SO_TYPE, &type, &l);
		}
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(FREED_PORT)};
		held += bind(probe, (struct sockaddr *)&a, sizeof a) < 0;
		close(probe);
	}
	sigaction(SIGALRM, &old, NULL);
	close(busy);
	CHECK(!unbound, "a bind to the port failed after %d rounds", rounds);
	CHECK(!held, "the closed socket still held its port in %d of %d rounds", held, rounds);
	printf("ok signal_close_frees_at_once\n");
}

static volatile sig_atomic_t udp_sigpipes;

struct blocked_one {
	int fd;
	ssize_t rc;
};

static void *recv_one(void *arg)
{
	struct blocked_one *b = arg;
	char x;
	CANCEL_POINT(b->rc = recv(b->fd, &x, 1, 0));
	return NULL;
}

static void on_udp_sigpipe(int sig)
{
	(void)sig;
	udp_sigpipes++;
}

/* poll(2) bits of fd for POLLIN, POLLOUT and POLLRDHUP, at once. */
static short revents_now(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT | POLLRDHUP};
	return poll(&p, 1, 0) == 1 ? p.revents : 0;
}

/* shutdown() of a UDP socket, as the kernel's inet_shutdown: on an unconnected socket it
 * says ENOTCONN yet shuts down all the same, and a recv blocked in another thread returns
 * 0 (how programs wake such a thread); reading shut down, a blocking recv returns 0 and a
 * non-blocking one EAGAIN while datagrams still arrive; writing shut down, a send is EPIPE
 * without SIGPIPE. */
void udp_shutdown_as_kernel(void)
{
	struct sigaction sa = {.sa_handler = on_udp_sigpipe}, old;
	sigaction(SIGPIPE, &sa, &old);
	udp_sigpipes = 0;
	int u = udp_bound(UDP_SHUT_PORT);
	CHECK(u >= 0, "bind");
	CHECK(shutdown(u, 7) < 0 && errno == EINVAL, "shutdown with a bad how");
	int c = ask_datagram(UDP_SHUT_PORT); /* before the shutdown: read after it */
	CHECK(c >= 0, "dial");
	char d = 0;
	for (int i = 0; i < 300 && recv(u, &d, 1, MSG_PEEK | MSG_DONTWAIT) != 1; i++)
		usleep(10000);
	CHECK(d == 'd', "the datagram");
	close(c);
	CHECK(shutdown(u, SHUT_RD) < 0 && errno == ENOTCONN, "SHUT_RD of an unconnected socket");
	CHECK(revents_now(u) == (POLLIN | POLLOUT | POLLRDHUP), "revents 0x%x after SHUT_RD",
	      revents_now(u));
	d = 0;
	CHECK(recv(u, &d, 1, 0) == 1 && d == 'd', "a datagram queued before the shutdown");
	CHECK(recv(u, &d, 1, 0) == 0, "a blocking recv after SHUT_RD");
	CHECK(recv(u, &d, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN, "a non-blocking recv");
	struct sockaddr_in p = peer_addr(PEER_PORT);
	CHECK(shutdown(u, SHUT_WR) < 0 && errno == ENOTCONN, "SHUT_WR of an unconnected socket");
	CHECK(sendto(u, "x", 1, 0, (struct sockaddr *)&p, sizeof p) < 0 && errno == EPIPE,
	      "sendto after SHUT_WR");
	CHECK(revents_now(u) == (POLLIN | POLLOUT | POLLRDHUP | POLLHUP),
	      "revents 0x%x shut both ways", revents_now(u));
	close(u);

	int w = udp_bound(UDP_SHUT_PORT);
	CHECK(w >= 0, "bind again");
	pthread_t t;
	struct blocked_one b = {.fd = w, .rc = -2};
	CHECK(pthread_create(&t, NULL, recv_one, &b) == 0, "thread");
	usleep(200000);
	CHECK(shutdown(w, SHUT_RD) < 0 && errno == ENOTCONN, "SHUT_RD under a blocked recv");
	CHECK(joined_within(t, 3), "the blocked recv still asleep 3 s after the shutdown");
	CHECK(b.rc == 0, "the blocked recv gave %zd", b.rc);
	close(w);

	int k = udp_bound(UDP_SHUT_PORT);
	CHECK(k >= 0 && connect(k, (struct sockaddr *)&p, sizeof p) == 0, "connect");
	CHECK(shutdown(k, SHUT_WR) == 0, "SHUT_WR of a connected socket");
	CHECK(send(k, "x", 1, 0) < 0 && errno == EPIPE, "send after SHUT_WR");
	CHECK(revents_now(k) == POLLOUT, "revents 0x%x after SHUT_WR", revents_now(k));
	CHECK(shutdown(k, SHUT_RDWR) == 0, "SHUT_RDWR");
	CHECK(recv(k, &d, 1, 0) == 0, "recv shut both ways");
	close(k);
	sigaction(SIGPIPE, &old, NULL);
	CHECK(udp_sigpipes == 0, "%d SIGPIPEs from UDP sends", (int)udp_sigpipes);
	printf("ok udp_shutdown_as_kernel\n");
}

/* The socket's SO_RCVBUF and SO_SNDBUF, given values and defaults, against a kernel socket
 * of the same kind on loopback (its own bind there keeps it the kernel's): the kernel
 * clamps a value to net.core.rmem_max/wmem_max, doubles it and keeps a minimum. And
 * TCP_NODELAY set reads back 1. */
void sockopt_as_kernel(void)
{
	static const int values[] = {-1, 0, 1, 1000, 65536, 1 << 30};
	static const int names[] = {SO_RCVBUF, SO_SNDBUF};
	struct sockaddr_in lo = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int type = 0; type < 2; type++) {
		int ours = type ? udp_bound(SOCKOPT_PORT) : tcp_bound(SOCKOPT_PORT, false);
		int kernel = socket(AF_INET, type ? SOCK_DGRAM : SOCK_STREAM, 0);
		CHECK(ours >= 0 && (type || listen(ours, 4) == 0), "our socket");
		CHECK(bind(kernel, (struct sockaddr *)&lo, sizeof lo) == 0, "a loopback socket");
		for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
			for (size_t i = 0; i <= sizeof values / sizeof values[0]; i++) {
				int mine = -1, theirs = -2;
				socklen_t ml = sizeof mine, tl = sizeof theirs;
				if (i) { /* 0: the default */
					int v = values[i - 1];
					CHECK(setsockopt(ours, SOL_SOCKET, names[n], &v,
							 sizeof v) == 0 &&
						  setsockopt(kernel, SOL_SOCKET, names[n], &v,
							     sizeof v) == 0,
					      "setsockopt %d", v);
				}
				CHECK(getsockopt(ours, SOL_SOCKET, names[n], &mine, &ml) == 0 &&
					  getsockopt(kernel, SOL_SOCKET, names[n], &theirs, &tl) ==
					      0 &&
					  mine == theirs,
				      "%s %s set to %d: %d, the kernel's %d", type ? "UDP" : "TCP",
				      names[n] == SO_RCVBUF ? "SO_RCVBUF" : "SO_SNDBUF",
				      i ? values[i - 1] : 0, mine, theirs);
			}
		if (!type) {
			int v = 5, got = -1;
			socklen_t gl = sizeof got;
			CHECK(setsockopt(ours, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) == 0 &&
				  getsockopt(ours, IPPROTO_TCP, TCP_NODELAY, &got, &gl) == 0 &&
				  got == 1,
			      "TCP_NODELAY set to 5 reads %d", got);
		}
		close(kernel);
		close(ours);
	}
	printf("ok sockopt_as_kernel\n");
}

/* Waits until fd has want bytes queued (FIONREAD), within 3 s. */
static bool queued_within(int fd, int want)
{
	int q = 0;
	for (int i = 0; i < 300 && q < want; i++) {
		if (ioctl(fd, FIONREAD, &q) < 0)
			return false;
		if (q < want)
			usleep(10000);
	}
	return q == want;
}

/* Bad buffers are EFAULT, not a crash, and nothing of the stream is lost to them; a NULL
 * buffer with MSG_TRUNC is a valid call (counted or dropped, not copied). */
void bad_buffers_efault(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED && ro != MAP_FAILED, "mmap");
	char b[16];
	CHECK(recv(fd, NULL, 10, MSG_DONTWAIT) < 0 && errno == EAGAIN, "recv(NULL) with no data");
	CHECK(write(fd, none, 100) < 0 && errno == EFAULT, "write from a PROT_NONE page");
	CHECK(send(fd, NULL, 10, 0) < 0 && errno == EFAULT, "send from NULL");
	struct msghdr m = {.msg_iov = NULL, .msg_iovlen = 1};
	CHECK(sendmsg(fd, &m, 0) < 0 && errno == EFAULT, "sendmsg with no iovec array");
	CHECK(writev(fd, (struct iovec *)none, 1) < 0 && errno == EFAULT,
	      "writev with a bad iovec array");
	struct iovec half[2] = {{b, 1}, {(char *)none + 100, 1}};
	CHECK(writev(fd, half, 2) < 0 && errno == EFAULT, "writev with a bad second buffer");
	CHECK(write(fd, "abcdefghij", 10) == 10, "write");
	CHECK(queued_within(fd, 10), "the echo");
	CHECK(recv(fd, NULL, 10, MSG_PEEK | MSG_TRUNC) == 10, "peek with MSG_TRUNC into NULL");
	CHECK(read(fd, none, 5) < 0 && errno == EFAULT, "read into a PROT_NONE page");
	CHECK(read(fd, ro, 5) < 0 && errno == EFAULT, "read into a read-only page");
	CHECK(recv(fd, NULL, 10, MSG_DONTWAIT) < 0 && errno == EFAULT, "recv(NULL) with data");
	CHECK(readv(fd, (struct iovec *)none, 1) < 0 && errno == EFAULT,
	      "readv with a bad iovec array");
	CHECK(recv(fd, b, 4, 0) == 4 && !memcmp(b, "abcd", 4), "nothing was lost to them");
	CHECK(recv(fd, NULL, 3, MSG_TRUNC) == 3, "MSG_TRUNC drops 3 bytes");
	CHECK(recv(fd, b, sizeof b, 0) == 3 && !memcmp(b, "hij", 3), "the rest");
	/* a range found good once, then unmapped: EFAULT again */
	char *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(gone != MAP_FAILED && write(fd, gone, 4) == 4, "write from a mapped page");
	CHECK(queued_within(fd, 4) && read(fd, gone, 4) == 4, "read into it");
	CHECK(mprotect(gone, 4096, PROT_NONE) == 0, "mprotect");
	CHECK(write(fd, gone, 4) < 0 && errno == EFAULT, "write from it after mprotect");
	munmap(gone, 4096);
	munmap(none, 4096);
	munmap(ro, 4096);
	close(fd);
	printf("ok bad_buffers_efault\n");
}

/* bind() to port 0 picks the port at once: getsockname names it before listen(), a second
 * bind() is EINVAL, and listen() keeps it. */
void tcp_bind_port0_named(void)
{
	int fd = tcp_bound(0, false);
	CHECK(fd >= 0, "bind");
	struct sockaddr_in got, again;
	socklen_t gl = sizeof got;
	CHECK(getsockname(fd, (struct sockaddr *)&got, &gl) == 0 && got.sin_port != 0 &&
		  got.sin_addr.s_addr == htonl(INADDR_ANY),
	      "getsockname after bind(0): %s:%u", inet_ntoa(got.sin_addr), ntohs(got.sin_port));
	struct sockaddr_in any = {.sin_family = AF_INET};
	CHECK(bind(fd, (struct sockaddr *)&any, sizeof any) < 0 && errno == EINVAL,
	      "a second bind");
	CHECK(listen(fd, 4) == 0, "listen");
	gl = sizeof again;
	CHECK(getsockname(fd, (struct sockaddr *)&again, &gl) == 0 &&
		  again.sin_port == got.sin_port,
	      "the same port after listen: %u", ntohs(again.sin_port));
	close(fd);
	printf("ok tcp_bind_port0_named\n");
}

/* MSG_ERRQUEUE finds no error queued (EAGAIN), MSG_OOB no urgent data (EINVAL); neither
 * takes stream data. UDP to port 0 is EINVAL. */
void recv_flags_as_kernel(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	CHECK(write(fd, "ab", 2) == 2 && queued_within(fd, 2), "the echo");
	char b[8];
	CHECK(recv(fd, b, sizeof b, MSG_ERRQUEUE | MSG_DONTWAIT) < 0 && errno == EAGAIN,
	      "MSG_ERRQUEUE");
	CHECK(recv(fd, b, sizeof b, MSG_OOB) < 0 && errno == EINVAL, "MSG_OOB");
	CHECK(recv(fd, b, sizeof b, 0) == 2 && !memcmp(b, "ab", 2), "the stream is whole");
	close(fd);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in zero = peer_addr(0);
	CHECK(sendto(u, "x", 1, 0, (struct sockaddr *)&zero, sizeof zero) < 0 && errno == EINVAL,
	      "sendto port 0");
	CHECK(recv(u, b, sizeof b, MSG_ERRQUEUE | MSG_DONTWAIT) < 0 && errno == EAGAIN,
	      "UDP MSG_ERRQUEUE");
	close(u);
	printf("ok recv_flags_as_kernel\n");
}

/* The peer ends its stream (FIN), then resets the connection when our byte comes; the
 * next write is EPIPE, as Linux's tcp_reset gives in CLOSE_WAIT. */
void write_after_fin_then_reset(void)
{
	int fd = dial(CMD_FIN_RESET);
	CHECK(fd >= 0, "dial");
	char b[8];
	CHECK(read(fd, b, sizeof b) == 5 && read(fd, b, sizeof b) == 0, "the data, the end");
	CHECK(send(fd, "x", 1, MSG_NOSIGNAL) == 1, "a write after the FIN");
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	for (int i = 0; i < 300 && !(p.revents & POLLERR); i++) {
		CHECK(poll(&p, 1, 10) >= 0, "poll");
		if (!(p.revents & POLLERR))
			usleep(10000);
	}
	CHECK(p.revents & POLLERR, "the reset came: revents 0x%x", p.revents);
	CHECK(send(fd, "y", 1, MSG_NOSIGNAL) < 0 && errno == EPIPE, "a write after the reset");
	close(fd);
	printf("ok write_after_fin_then_reset\n");
}

/* Flags the preload has no answer for are refused, not sent in-band. */
void send_flags_refused(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	CHECK(send(fd, "ab", 2, MSG_OOB) < 0 && errno == EOPNOTSUPP, "MSG_OOB");
	CHECK(send(fd, "ab", 2, MSG_FASTOPEN) < 0 && errno == EOPNOTSUPP, "MSG_FASTOPEN");
	CHECK(send(fd, "cd", 2, MSG_MORE | MSG_EOR | MSG_CONFIRM) == 2, "harmless flags");
	char b[8];
	CHECK(queued_within(fd, 2) && recv(fd, b, sizeof b, 0) == 2 && !memcmp(b, "cd", 2),
	      "only what was sent");
	close(fd);
	printf("ok send_flags_refused\n");
}

/* A send or receive that succeeds leaves errno as it was, though the preload's waited for
 * room in a full ring or for a datagram on the way (nuttcp tests errno after its loop). */
void errno_kept_on_success(void)
{
	enum { SENTINEL = 12345 };
	int u = udp_bound(ERRNO_PORT);
	CHECK(u >= 0, "bind");
	struct sockaddr_in far = peer_addr(CLOSED_PORT);
	static char b[1400];
	int sent = 0;
	for (int i = 0; i < 3000; i++) {
		errno = SENTINEL;
		ssize_t n = sendto(u, b, sizeof b, 0, (struct sockaddr *)&far, sizeof far);
		if (n < 0 && (errno == ENOBUFS || errno == EAGAIN))
			continue; /* the kernel's loopback may refuse, and says so */
		CHECK(n == (ssize_t)sizeof b, "sendto %d: %zd (%s)", i, n, strerror(errno));
		CHECK(errno == SENTINEL, "sendto %d succeeded and set errno to %d", i, errno);
		sent++;
	}
	CHECK(sent > 0, "no datagram sent");
	int c = ask_datagram(ERRNO_PORT);
	CHECK(c >= 0, "dial");
	errno = SENTINEL;
	ssize_t n = recv(u, b, sizeof b, 0); /* blocks until the peer's datagram comes */
	CHECK(n > 0, "recv: %zd (%s)", n, strerror(errno));
	CHECK(errno == SENTINEL, "recv succeeded and set errno to %d", errno);
	close(c);
	close(u);
	printf("ok errno_kept_on_success\n");
}

/* fdopen of a socket gives a FILE whose fileno is the socket, and errno is left alone. */
void fdopen_fileno(void)
{
	int fd = dial(CMD_ECHO);
	CHECK(fd >= 0, "dial");
	FILE *f = fdopen(fd, "r+");
	CHECK(f != NULL, "fdopen");
	errno = 0;
	CHECK(fileno(f) == fd, "fileno %d of the socket %d's FILE", fileno(f), fd);
	CHECK(fileno_unlocked(f) == fd, "fileno_unlocked of the socket's FILE");
	CHECK(errno == 0, "fileno set errno %d", errno);
	CHECK(fputs("abc\n", f) >= 0 && fflush(f) == 0, "write through the FILE");
	char line[8];
	CHECK(fgets(line, sizeof line, f) && !strcmp(line, "abc\n"), "the echo through the FILE");
	CHECK(fileno(stdin) == 0, "fileno of stdin");
	fclose(f);
	printf("ok fdopen_fileno\n");
}
