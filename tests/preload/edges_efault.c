/* SPDX-License-Identifier: BSD-3-Clause */
/* Bad pointers other than data buffers: socket addresses and their lengths, option values
 * and lengths, message headers and their arrays, poll and epoll arrays. Each is the
 * kernel's EFAULT (or EINVAL), never a crash, with the preload and without it
 * (tests/sh/preload_edges.sh runs the case both ways). */
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "edges.h"

/* The address sanitizer's own wrappers of these calls (in the program, before the preload)
 * read the lengths and arrays they are given, and fault on the bad ones first. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZER_WRAPS_CALLS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZER_WRAPS_CALLS 1
#endif
#endif

#define EFAULT_PORT 7118
#define SINK_PORT 7119 /* nobody listens there */

static bool failed_with(long rc, int err)
{
	return rc < 0 && errno == err;
}

/* recvfrom of a datagram the peer sent, into a bad address or length: err. */
static bool recvfrom_fails(int u, void *from, socklen_t *len, int err)
{
	int c = ask_datagram(EFAULT_PORT);
	struct pollfd p = {.fd = u, .events = POLLIN};
	bool came = c >= 0 && poll(&p, 1, 3000) == 1;
	char b[8];
	bool ok = came && failed_with(recvfrom(u, b, sizeof b, MSG_DONTWAIT, from, len), err);
	while (recv(u, b, sizeof b, MSG_DONTWAIT) > 0)
		; /* the kernel took the datagram before the address failed; the preload did not */
	if (c >= 0)
		close(c);
	return ok;
}

void bad_addresses_efault(void)
{
#ifdef SANITIZER_WRAPS_CALLS
	printf("skip bad_addresses_efault: the sanitizer's wrappers fault before the call\n");
	return;
#endif
	char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(page != MAP_FAILED && mprotect(page + 4096, 4096, PROT_NONE) == 0, "mmap");
	void *none = page + 4096;
	int u = udp_bound(EFAULT_PORT);
	CHECK(u >= 0, "bind");
	struct sockaddr_in sink = peer_addr(SINK_PORT), a;
	socklen_t al = sizeof a, neg = (socklen_t)-1;
	struct iovec iv = {"x", 1};

	CHECK(failed_with(sendto(u, "x", 1, 0, none, sizeof sink), EFAULT), "sendto a bad address");
	CHECK(failed_with(sendto(u, "x", 1, 0, (struct sockaddr *)&sink, 4096), EINVAL),
	      "sendto with an address length past any address");
	struct msghdr m = {
	    .msg_name = none, .msg_namelen = sizeof sink, .msg_iov = &iv, .msg_iovlen = 1};
	CHECK(failed_with(sendmsg(u, &m, 0), EFAULT), "sendmsg with a bad msg_name");
	CHECK(failed_with(sendmsg(u, none, 0), EFAULT), "sendmsg with a bad msghdr");
	CHECK(failed_with(sendmmsg(u, none, 2, 0), EFAULT), "sendmmsg with a bad array");
	CHECK(failed_with(recvmmsg(u, none, 2, MSG_DONTWAIT, NULL), EFAULT),
	      "recvmmsg with a bad array");
	/* an array whose first entry is good and whose second is on the page that is not */
	struct mmsghdr *edge = (struct mmsghdr *)((char *)none - sizeof *edge);
	*edge = (struct mmsghdr){.msg_hdr = {.msg_name = &sink,
					     .msg_namelen = sizeof sink,
					     .msg_iov = &iv,
					     .msg_iovlen = 1}};
	CHECK(sendmmsg(u, edge, 2, 0) == 1 && edge->msg_len == 1,
	      "sendmmsg whose second entry is bad sends the first");

	CHECK(recvfrom_fails(u, none, &al, EFAULT), "recvfrom into a bad address");
	CHECK(recvfrom_fails(u, &a, none, EFAULT), "recvfrom with a bad length");
	CHECK(recvfrom_fails(u, &a, &neg, EINVAL), "recvfrom with a negative length");

	CHECK(failed_with(getsockname(u, none, &al), EFAULT), "getsockname into a bad address");
	CHECK(failed_with(getsockname(u, (struct sockaddr *)&a, none), EFAULT),
	      "getsockname with a bad length");
	int v;
	socklen_t vl = sizeof v;
	CHECK(failed_with(getsockopt(u, SOL_SOCKET, SO_TYPE, none, &vl), EFAULT),
	      "getsockopt into a bad value");
	CHECK(failed_with(getsockopt(u, SOL_SOCKET, SO_TYPE, &v, none), EFAULT),
	      "getsockopt with a bad length");
	CHECK(failed_with(getsockopt(u, SOL_SOCKET, SO_TYPE, &v, &neg), EINVAL),
	      "getsockopt with a negative length");
	CHECK(failed_with(setsockopt(u, SOL_SOCKET, SO_REUSEADDR, none, sizeof v), EFAULT),
	      "setsockopt from a bad value");
	CHECK(failed_with(setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, none, sizeof(struct timeval)),
			  EFAULT),
	      "SO_RCVTIMEO from a bad value");
	CHECK(failed_with(ioctl(u, FIONREAD, none), EFAULT), "FIONREAD into a bad int");

	CHECK(failed_with(poll(none, 1, 0), EFAULT), "poll with a bad array");
	fd_set *bad_set = none;
	struct timeval zero = {0};
	CHECK(failed_with(select(u + 1, bad_set, NULL, NULL, &zero), EFAULT),
	      "select with a bad set");
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLOUT};
	CHECK(failed_with(epoll_ctl(ep, EPOLL_CTL_ADD, u, none), EFAULT),
	      "epoll_ctl with a bad event");
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, u, &ev) == 0, "epoll_ctl");
	CHECK(failed_with(epoll_wait(ep, none, 4, 0), EFAULT),
	      "epoll_wait into a bad array, the socket writable");
	close(ep);

	int t = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(failed_with(connect(t, none, sizeof sink), EFAULT), "connect to a bad address");
	CHECK(failed_with(bind(t, none, sizeof sink), EFAULT), "bind to a bad address");
	struct sockaddr_in any = {.sin_family = AF_INET};
	CHECK(bind(t, (struct sockaddr *)&any, sizeof any) == 0 && listen(t, 4) == 0 &&
		  fcntl(t, F_SETFL, O_NONBLOCK) == 0,
	      "listen");
	/* the kernel looks for a connection before it writes the address */
	CHECK(failed_with(accept(t, (struct sockaddr *)&a, none), EAGAIN),
	      "accept with a bad length and nothing to accept");
	close(t);

	CHECK(connect(u, (struct sockaddr *)&sink, sizeof sink) == 0, "connect");
	CHECK(failed_with(getpeername(u, none, &al), EFAULT), "getpeername into a bad address");
	CHECK(send(u, "x", 1, 0) == 1, "the socket after all that");
	close(u);
	munmap(page, 8192);
	printf("ok bad_addresses_efault\n");
}
