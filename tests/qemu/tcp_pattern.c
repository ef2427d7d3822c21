/* SPDX-License-Identifier: BSD-3-Clause */
/* A TCP stream of the tests' byte pattern (tests/lib/test_pattern.h) between two guest
 * network namespaces, checked byte for byte by the receiver: busybox nc cannot say whether
 * what arrived is what was sent. Static, for the guest's initramfs.
 *
 *   tcp_pattern [-e] recv PORT BYTES        listens, accepts one stream, checks it
 *   tcp_pattern [-e] send ADDR PORT BYTES   connects, sends
 * -e: the examples' pattern instead (examples/common.h: byte i is i % PATTERN_LEN), to talk
 * to stream_send and stream_recv. BYTES 0 on recv: whatever the sender sends.
 * Prints one line: "tcp_pattern: <role> N bytes ok|BAD at OFFSET, T s, R MB/s"; exits 0 only
 * when all BYTES went through intact (and, for recv, nothing more came).
 *   tcp_pattern udprecv PORT COUNT        COUNT datagrams (5 s at most), each checked
 *   tcp_pattern udpsend ADDR PORT COUNT   COUNT datagrams of 1000 bytes, datagram i
 *                                         holds the pattern from offset 1000 i
 *   tcp_pattern udpecho PORT COUNT        sends back each of COUNT datagrams (10 s idle
 *                                         at most), to whoever sent it
 *   tcp_pattern udpask ADDR PORT COUNT    udpsend's datagrams one at a time, each echoed
 *                                         back whole (1 s, 5 tries) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "test_pattern.h"

static bool examples_pattern;

static uint8_t byte_at(uint64_t i)
{
	return examples_pattern ? (uint8_t)(i % PATTERN_LEN) : test_pattern(i);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int report(const char *role, unsigned long long done, long long bad, double t0)
{
	double t = now_s() - t0;
	if (bad >= 0)
		printf("tcp_pattern: %s %llu bytes BAD at %lld, %.1f s\n", role, done, bad, t);
	else
		printf("tcp_pattern: %s %llu bytes ok, %.1f s, %.2f MB/s\n", role, done, t,
		       t > 0 ? done / t / 1e6 : 0.0);
	return bad >= 0;
}

static int do_recv(int port, unsigned long long bytes)
{
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0) {
		perror("tcp_pattern: listen");
		return 1;
	}
	int s = accept(l, NULL, NULL);
	if (s < 0) {
		perror("tcp_pattern: accept");
		return 1;
	}
	static uint8_t buf[1 << 16];
	unsigned long long off = 0;
	double t0 = now_s();
	for (;;) {
		ssize_t n = read(s, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("tcp_pattern: read");
			return report("recv", off, (long long)off, t0) | 1;
		}
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != byte_at(off + (uint64_t)i))
				return report("recv", off + (uint64_t)i, (long long)(off + i), t0);
		off += (unsigned long long)n;
	}
	if (off != bytes && (bytes || !off))
		return report("recv", off, (long long)off, t0);
	return report("recv", off, -1, t0);
}

static int do_send(const char *addr, int port, unsigned long long bytes)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (s < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		fprintf(stderr, "tcp_pattern: bad address %s\n", addr);
		return 1;
	}
	for (int tries = 0; connect(s, (struct sockaddr *)&a, sizeof(a)) < 0; tries++) {
		if (tries == 50) {
			perror("tcp_pattern: connect");
			return 1;
		}
		usleep(100000);
	}
	static uint8_t buf[1 << 16];
	unsigned long long off = 0;
	double t0 = now_s();
	while (off < bytes) {
		size_t n = bytes - off < sizeof(buf) ? (size_t)(bytes - off) : sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = byte_at(off + i);
		size_t done = 0;
		while (done < n) {
			ssize_t w = write(s, buf + done, n - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				perror("tcp_pattern: write");
				return report("send", off + done, (long long)(off + done), t0) | 1;
			}
			done += (size_t)w;
		}
		off += n;
	}
	shutdown(s, SHUT_WR);
	char c;
	while (read(s, &c, 1) > 0) /* the receiver closes once it has everything */
		;
	return report("send", off, -1, t0);
}

#define DGRAM 1000

static int do_udp(const char *addr, int port, unsigned count)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	uint8_t buf[DGRAM];
	if (s < 0)
		return 1;
	if (addr) {
		if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
			return 1;
		for (unsigned i = 0; i < count; i++) {
			for (unsigned k = 0; k < DGRAM; k++)
				buf[k] = byte_at((uint64_t)i * DGRAM + k);
			if (sendto(s, buf, DGRAM, 0, (struct sockaddr *)&a, sizeof(a)) != DGRAM)
				perror("tcp_pattern: sendto");
			usleep(10000);
		}
		printf("tcp_pattern: udpsend %u datagrams\n", count);
		return 0;
	}
	struct timeval tv = {.tv_sec = 5};
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("tcp_pattern: bind");
		return 1;
	}
	unsigned good = 0, bad = 0;
	while (good + bad < count) {
		ssize_t n = recv(s, buf, sizeof(buf), 0);
		if (n < 0)
			break;
		bool ok = n == DGRAM;
		for (unsigned i = 0; ok && i < count; i++) /* which datagram it is */
			if (buf[0] == byte_at((uint64_t)i * DGRAM) &&
			    buf[1] == byte_at((uint64_t)i * DGRAM + 1)) {
				for (unsigned k = 0; k < DGRAM; k++)
					ok = ok && buf[k] == byte_at((uint64_t)i * DGRAM + k);
				break;
			}
		good += ok;
		bad += !ok;
	}
	printf("tcp_pattern: udprecv %u of %u datagrams ok, %u bad\n", good, count, bad);
	return good != count;
}

static int do_udpecho(int port, unsigned count)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 10};
	uint8_t buf[65536];
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("tcp_pattern: udpecho");
		return 1;
	}
	unsigned n = 0;
	for (; n < count; n++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t len = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (len < 0 || sendto(s, buf, (size_t)len, 0, (struct sockaddr *)&from, fl) != len)
			break;
	}
	printf("tcp_pattern: udpecho %u of %u datagrams sent back\n", n, count);
	return n != count;
}

static int do_udpask(const char *addr, int port, unsigned count)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 1};
	uint8_t want[DGRAM], got[DGRAM + 1];
	if (s < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1 ||
	    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return 1;
	unsigned good = 0, tries = 0;
	for (unsigned i = 0; i < count; i++) {
		for (unsigned k = 0; k < DGRAM; k++)
			want[k] = byte_at((uint64_t)i * DGRAM + k);
		for (unsigned t = 0; t < 5; t++) {
			tries++;
			if (send(s, want, DGRAM, 0) != DGRAM)
				continue;
			ssize_t n;
			/* a late answer to an earlier try of another datagram is skipped */
			while ((n = recv(s, got, sizeof(got), 0)) == DGRAM && memcmp(got, want, DGRAM))
				;
			if (n == DGRAM) {
				good++;
				break;
			}
		}
	}
	printf("tcp_pattern: udpask %u of %u datagrams echoed intact, %u sends\n", good, count,
	       tries);
	return good != count;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "-e")) {
		examples_pattern = true;
		argv++;
		argc--;
	}
	if (argc == 4 && !strcmp(argv[1], "udprecv"))
		return do_udp(NULL, atoi(argv[2]), (unsigned)atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "udpsend"))
		return do_udp(argv[2], atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "udpecho"))
		return do_udpecho(atoi(argv[2]), (unsigned)atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "udpask"))
		return do_udpask(argv[2], atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return do_recv(atoi(argv[2]), strtoull(argv[3], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "send"))
		return do_send(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: tcp_pattern [-e] recv PORT BYTES | [-e] send ADDR PORT BYTES\n");
	return 2;
}
