/* SPDX-License-Identifier: BSD-3-Clause */
/* connect() after an attempt failed, as Linux's __inet_stream_connect: the call that finds
 * it failed reports the error (ECONNABORTED once SO_ERROR took it) and leaves the socket
 * unconnected; the next call starts a new attempt. Port 0 is refused by the peer. */
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "edges.h"

/* A non-blocking connect to the closed port that poll reports ended; the socket, or -1. */
static int refused_nonblocking(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct sockaddr_in a = peer_addr(CLOSED_PORT);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0 || errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	if (poll(&p, 1, 10000) != 1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A non-blocking connect to the peer that completes: 1, else 0. */
static int connects_to_peer(int fd)
{
	struct sockaddr_in a = peer_addr(PEER_PORT);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		return 1;
	if (errno != EINPROGRESS)
		return 0;
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int err = -1;
	socklen_t len = sizeof err;
	return poll(&p, 1, 10000) == 1 &&
	       getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 &&
	       connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
}

void connect_again_after_refusal(void)
{
	struct sockaddr_in closed = peer_addr(CLOSED_PORT), peer = peer_addr(PEER_PORT);
	

	/* SO_ERROR read first: the next connect says ECONNABORTED, the one after connects */
	int fd = refused_nonblocking();
	CHECK(fd >= 0, "a refused non-blocking connect");
	int err = -1;
	socklen_t len = sizeof err;
	CHECK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == ECONNREFUSED,
	      "SO_ERROR %d", err);
	int rc = connect(fd, (struct sockaddr *)&closed, sizeof closed);
	CHECK(rc < 0 && errno == ECONNABORTED, "connect after SO_ERROR gave %d", rc);
	CHECK(connects_to_peer(fd), "a new attempt after ECONNABORTED");
	close(fd);

	/* SO_ERROR not read: that connect reports the refusal itself */
	fd = refused_nonblocking();
	CHECK(fd >= 0, "a refused non-blocking connect");
	rc = connect(fd, (struct sockaddr *)&closed, sizeof closed);
	CHECK(rc < 0 && errno == ECONNREFUSED, "connect after the refusal gave %d", rc);
	CHECK(connects_to_peer(fd), "a new attempt after ECONNREFUSED");
	close(fd);

	/* blocking: refused, then a new attempt connects; port 0 is refused too */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	rc = connect(fd, (struct sockaddr *)&closed, sizeof closed);
	CHECK(rc < 0 && errno == ECONNREFUSED, "blocking connect to a closed port gave %d", rc);
	rc = connect(fd, (struct sockaddr *)&peer, sizeof peer);
	CHECK(rc == 0, "blocking connect after a refusal gave %d", rc);
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in zero = peer_addr(0);
	rc = connect(fd, (struct sockaddr *)&zero, sizeof zero);
	CHECK(rc < 0 && errno == ECONNREFUSED, "connect to port 0 gave %d", rc);
	close(fd);
	printf("ok connect_again_after_refusal\n");
}
