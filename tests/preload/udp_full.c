/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP sends into a full send queue, as a socket program sees them (sh/preload_udp_full):
 *   udp_full send IP PORT COUNT END   one datagram, and once the peer's address is resolved, a
 *                                 non-blocking socket sends until EAGAIN (the queue full),
 *                                 then, blocking, the rest of COUNT datagrams, by sendto and
 *                                 sendmsg in turn: each must be taken whole
 *                                 After a refusal, POLLOUT must be seen off (and a send be
 *                                 taken whenever it is reported) and come back (epoll) once
 *                                 the queue drained, with room for a send.
 *                                 The sender ends with exit() (END "exit") or with close()
 *                                 and _exit() (END "close"): either way right after its
 *                                 last send, and nothing may be lost to that.
 *   udp_full recv PORT COUNT      receives until COUNT datagrams came or 5 s passed without
 *                                 one, and checks they are 0..COUNT-1, in order
 *   udp_full burst IP PORT COUNT  COUNT datagrams of BURST_SIZE bytes (in fragments) at once
 *   udp_full hold PORT COUNT      binds, reads a line from stdin (sent once the burst is
 *                                 out), and only then receives: every datagram of the burst
 *                                 must have been kept for it, as the kernel's socket buffer
 *                                 keeps them
 * A datagram is SIZE bytes: its sequence number, then bytes derived from it. No libmyrio:
 * a plain program, run under myrio-run (and on the kernel's sockets, through a slow
 * link). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define SIZE 1000
#define BURST_SIZE 2000 /* two fragments at MTU 1500 */
#define MAX_NONBLOCK_TRIES 200000
#define MAX_POLLOUT_ROUNDS 100

static void fill(uint8_t *d, uint64_t seq)
{
	memcpy(d, &seq, sizeof(seq));
	for (unsigned i = sizeof(seq); i < SIZE; i++)
		d[i] = (uint8_t)(seq * 7 + i);
}

static ssize_t send_one(int fd, const struct sockaddr_in *to, uint64_t seq, int flags)
{
	uint8_t d[SIZE];
	fill(d, seq);
	if (seq % 2 == 0)
		return sendto(fd, d, SIZE, flags, (const struct sockaddr *)to, sizeof(*to));
	struct iovec iov[2] = {{d, 100}, {d + 100, SIZE - 100}};
	struct msghdr m = {
	    .msg_name = (void *)to, .msg_namelen = sizeof(*to), .msg_iov = iov, .msg_iovlen = 2};
	return sendmsg(fd, &m, flags);
}

static int do_send(const char *ip, int port, uint64_t count, bool close_at_end)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, ip, &to.sin_addr) != 1)
		return 2;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	/* The first datagram waits for the peer's address to be resolved: the flood starts
	 * after, so that it meets the send queue and not the ARP queue. */
	if (fd < 0 || send_one(fd, &to, 0, 0) != SIZE) {
		perror("udp_full: the first datagram");
		return 1;
	}
	usleep(500000);
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		return 1;
	uint64_t seq = 1;
	int err = 0;
	for (int i = 0; i < MAX_NONBLOCK_TRIES && seq < count; i++) {
		ssize_t rc = send_one(fd, &to, seq, 0);
		if (rc == SIZE) {
			seq++;
			continue;
		}
		err = rc < 0 ? errno : EMSGSIZE;
		break;
	}
	if (err != EAGAIN) {
		printf("FAIL: a non-blocking socket sent %llu datagrams and was never refused "
		       "(%s)\n",
		       (unsigned long long)seq, err ? strerror(err) : "no error");
		return 1;
	}
	printf("non-blocking: EAGAIN after %llu datagrams\n", (unsigned long long)seq);
	/* POLLOUT keeps its word: when reported, a send is taken (room may have come back
	 * since the refusal: the NIC went on sending), and it is seen off after a refusal */
	int off_seen = 0;
	for (int round = 0; round < MAX_POLLOUT_ROUNDS && seq < count; round++) {
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (poll(&p, 1, 0) == 0) {
			off_seen = 1;
			break;
		}
		if (send_one(fd, &to, seq, 0) != SIZE) {
			printf("FAIL: POLLOUT reported, and the send: %s\n", strerror(errno));
			return 1;
		}
		for (seq++; seq < count && send_one(fd, &to, seq, 0) == SIZE; seq++)
			; /* to the refusal again */
		if (seq < count && errno != EAGAIN) {
			printf("FAIL: a non-blocking send: %s\n", strerror(errno));
			return 1;
		}
	}
	if (!off_seen) {
		printf("FAIL: POLLOUT never off after a refused send (%d rounds)\n",
		       MAX_POLLOUT_ROUNDS);
		return 1;
	}
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLOUT}, got;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ||
	    epoll_wait(ep, &got, 1, 5000) != 1 || !(got.events & EPOLLOUT)) {
		printf("FAIL: EPOLLOUT did not come back within 5 s\n");
		return 1;
	}
	close(ep);
	if (send_one(fd, &to, seq, 0) != SIZE) {
		printf("FAIL: a send after EPOLLOUT: %s\n", strerror(errno));
		return 1;
	}
	seq++;
	printf("POLLOUT off after EAGAIN, back once the queue drained\n");
	if (fcntl(fd, F_SETFL, 0) < 0)
		return 1;
	uint64_t first_blocking = seq;
	for (; seq < count; seq++) {
		ssize_t rc = send_one(fd, &to, seq, 0);
		if (rc != SIZE) {
			printf("FAIL: blocking send of datagram %llu: %zd (%s)\n",
			       (unsigned long long)seq, rc, strerror(errno));
			return 1;
		}
	}
	printf("blocking: %llu datagrams more taken\n", (unsigned long long)(seq - first_blocking));
	/* The last ones are still queued to the NIC: neither end may lose them */
	fflush(stdout);
	if (close_at_end) {
		close(fd);
		_exit(0);
	}
	return 0;
}

/* A socket bound to port whose receives give up after timeout_s seconds; "listening" said
 * on stdout for the script that waits for it. -1 on failure. */
static int bound_listening(int port, int timeout_s)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {timeout_s, 0};
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		perror("udp_full: bind");
		return -1;
	}
	printf("listening\n");
	fflush(stdout);
	return fd;
}

static int do_recv(int port, uint64_t count)
{
	int fd = bound_listening(port, 5);
	if (fd < 0)
		return 1;
	uint64_t got = 0, bad = 0;
	uint8_t d[SIZE + 1], want[SIZE];
	while (got < count) {
		ssize_t n = recv(fd, d, sizeof(d), 0);
		if (n < 0)
			break; /* 5 s without a datagram */
		fill(want, got);
		if (n != SIZE || memcmp(d, want, SIZE) != 0) {
			uint64_t seq = 0;
			if (n >= 8)
				memcpy(&seq, d, 8);
			if (bad++ < 5)
				printf("datagram %llu: %zd bytes, sequence %llu\n",
				       (unsigned long long)got, n, (unsigned long long)seq);
		}
		got++;
	}
	printf("received %llu of %llu, %llu not the one expected there\n", (unsigned long long)got,
	       (unsigned long long)count, (unsigned long long)bad);
	close(fd);
	return got == count && bad == 0 ? 0 : 1;
}

static int do_burst(const char *ip, int port, uint64_t count)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (inet_pton(AF_INET, ip, &to.sin_addr) != 1 || fd < 0)
		return 2;
	uint8_t d[BURST_SIZE];
	for (uint64_t seq = 0; seq < count; seq++) {
		memcpy(d, &seq, sizeof seq);
		if (sendto(fd, d, sizeof d, 0, (struct sockaddr *)&to, sizeof to) != sizeof d) {
			perror("udp_full: burst");
			return 1;
		}
	}
	printf("burst: %llu datagrams of %d bytes sent\n", (unsigned long long)count, BURST_SIZE);
	return 0;
}

static int do_hold(int port, uint64_t count)
{
	int fd = bound_listening(port, 2);
	if (fd < 0)
		return 1;
	char line[16];
	if (!fgets(line, sizeof line, stdin))
		return 1;
	uint64_t got = 0;
	uint8_t d[BURST_SIZE + 1];
	ssize_t n;
	while (got < count && (n = recv(fd, d, sizeof d, 0)) == BURST_SIZE)
		got++;
	printf("held: received %llu of %llu\n", (unsigned long long)got, (unsigned long long)count);
	return got == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "burst") == 0)
		return do_burst(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 0));
	if (argc == 4 && strcmp(argv[1], "hold") == 0)
		return do_hold(atoi(argv[2]), strtoull(argv[3], NULL, 0));
	if (argc == 6 && strcmp(argv[1], "send") == 0 &&
	    (!strcmp(argv[5], "exit") || !strcmp(argv[5], "close")))
		return do_send(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 0),
			       !strcmp(argv[5], "close"));
	if (argc == 4 && strcmp(argv[1], "recv") == 0)
		return do_recv(atoi(argv[2]), strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: udp_full send IP PORT COUNT exit|close | recv PORT COUNT | "
			"burst IP PORT COUNT | hold PORT COUNT\n");
	return 2;
}
