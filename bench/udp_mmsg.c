/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel's UDP path at its best, as a peer for bench/compare.sh: datagrams go in
 * batches of up to 64 per system call (sendmmsg/recvmmsg), so the figure measures the
 * kernel's UDP stack and not one system call per datagram (iperf3 -u).
 *
 *   udp_mmsg send ADDR PORT SIZE SECONDS
 *   udp_mmsg recv PORT SECONDS
 *
 * Each prints one JSON line: datagrams, seconds, and the process's CPU seconds
 * (getrusage RUSAGE_SELF). The receiver's clock starts at its first datagram. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64
#define MAX_DGRAM 65507

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int usage(void)
{
	fprintf(stderr, "usage: udp_mmsg send ADDR PORT SIZE SECONDS | recv PORT SECONDS\n");
	return 2;
}

static int sender(const char *addr, int port, size_t size, double secs)
{
	static char buf[MAX_DGRAM];
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (size == 0 || size > MAX_DGRAM || inet_pton(AF_INET, addr, &to.sin_addr) != 1)
		return usage();
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("udp_mmsg: socket");
		return 1;
	}
	struct iovec iov = {buf, size};
	struct mmsghdr m[BATCH];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BATCH; i++)
		m[i].msg_hdr = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1};
	unsigned long long sent = 0, errors = 0;
	double c0 = cpu_s(), t0 = now_s(), t = t0;
	while (t - t0 < secs) {
		int n = sendmmsg(fd, m, BATCH, 0);
		if (n > 0)
			sent += (unsigned)n;
		else
			errors++; /* ENOBUFS, ECONNREFUSED before the receiver binds: go on */
		t = now_s();
	}
	printf("{\"datagrams\": %llu, \"seconds\": %.4f, \"cpu_s\": %.4f, \"errors\": %llu}\n",
	       sent, t - t0, cpu_s() - c0, errors);
	return 0;
}

static int receiver(int port, double secs)
{
	static char bufs[BATCH][2048];
	struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int big = 16 << 20;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)) < 0 ||
	    bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
		perror("udp_mmsg: socket");
		return 1;
	}
	struct timeval tv = {0, 200000}; /* the end is seen within 0.2 s of silence */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct iovec iov[BATCH];
	struct mmsghdr m[BATCH];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){bufs[i], sizeof(bufs[i])};
		m[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1};
	}
	unsigned long long got = 0;
	double c0 = 0, t0 = 0, last = 0, deadline = now_s() + secs + 10;
	while (now_s() < deadline) {
		int n = recvmmsg(fd, m, BATCH, 0, NULL);
		if (n <= 0) {
			if (got && (errno == EAGAIN || errno == EWOULDBLOCK))
				break; /* the sender stopped */
			continue;
		}
		if (!got) {
			t0 = now_s();
			c0 = cpu_s();
		}
		got += (unsigned)n;
		last = now_s();
		if (last - t0 >= secs)
			break;
	}
	printf("{\"datagrams\": %llu, \"seconds\": %.4f, \"cpu_s\": %.4f}\n", got,
	       got ? last - t0 : 0, got ? cpu_s() - c0 : 0);
	return got ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "send"))
		return sender(argv[2], atoi(argv[3]), strtoul(argv[4], NULL, 0), atof(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return receiver(atoi(argv[2]), atof(argv[3]));
	return usage();
}
