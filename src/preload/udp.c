/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP sockets on tcp_lite: one datagram held back to tell readiness (the stack has no
 * peek), copying sends of up to 65507 bytes (fragmented by the stack), the connected
 * socket's ICMP errors reported as the kernel's. The engine lock is held throughout. */
#include <errno.h>
#include <string.h>

#include "preload.h"

#define UDP_MAX_PAYLOAD 65507

int udp_bind(struct psock *ps)
{
	struct myrio_stack *s = engine_stack();
	if (!s)
		return -1;
	int rc = ps->reuseaddr && ps->bound_port
		     ? myrio_udp_open_shared(s, ps->bound_port, ps, &ps->u)
		     : myrio_udp_open(s, ps->bound_port, ps, &ps->u);
	if (rc < 0)
		return (int)neg_errno(rc);
	ps->bound_port = myrio_udp_port(ps->u);
	ps->state = PS_UDP;
	return 0;
}

int udp_connect(struct psock *ps, uint32_t ip, uint16_t port)
{
	if (ps->state == PS_PENDING && udp_bind(ps) < 0)
		return -1;
	int rc = myrio_udp_connect(ps->u, ip, port);
	if (rc < 0)
		return (int)neg_errno(rc);
	ps->peer_ip = ip;
	ps->peer_port = port;
	return 0;
}

static int take_error(struct psock *ps)
{
	int err = ps->udp_error;
	ps->udp_error = 0;
	if (!err && ps->peer_ip)
		err = myrio_udp_error(ps->u);
	return err;
}

ssize_t udp_sendv(struct psock *ps, const struct iovec *iov, int n, int flags, uint32_t ip,
		  uint16_t port)
{
	if (!ip) {
		if (!ps->peer_ip)
			return neg_errno(-EDESTADDRREQ);
		ip = ps->peer_ip;
		port = ps->peer_port;
	}
	if (ps->state == PS_PENDING && udp_bind(ps) < 0)
		return -1;
	int err = take_error(ps);
	if (err)
		return neg_errno(err);
	size_t len = 0;
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > UDP_MAX_PAYLOAD - len)
			return neg_errno(-EMSGSIZE);
		len += iov[i].iov_len;
	}
	if (!user_iov_ok(iov, n, false))
		return neg_errno(-EFAULT);
	uint8_t one[UDP_MAX_PAYLOAD];
	const void *buf = n == 1 ? iov[0].iov_base : one;
	if (n != 1)
		for (int i = 0, off = 0; i < n; off += (int)iov[i].iov_len, i++)
			memcpy(one + off, iov[i].iov_base, iov[i].iov_len);
	bool nonblock = ps->nonblock || (flags & MSG_DONTWAIT);
	uint64_t deadline = ps->sndtimeo_ms ? engine_now_ms() + (uint64_t)ps->sndtimeo_ms : 0;
	for (;;) {
		int rc = udp_tx_send(ps->u, buf, len, ip, port);
		if (rc == 0)
			break;
		if (rc != -ENOBUFS && rc != -EAGAIN)
			return neg_errno(rc);
		/* The send ring or the transmit pool is full, as the kernel's socket buffer:
		 * a non-blocking socket is told, a blocking one waits for the NIC to complete
		 * sends, until SO_SNDTIMEO. */
		if (nonblock || (deadline && engine_now_ms() >= deadline)) {
			epoll_drained(ps, POLLOUT); /* room again is a new edge */
			return neg_errno(-EAGAIN);
		}
		if (engine_block(NULL, 0, 1, NULL) < 0 && !sig_restart(deadline ? 0 : -1))
			return -1;
		if (ps->closed)
			return neg_errno(-EBADF); /* another thread closed it meanwhile */
	}
	ps->udp_sent = true;
	engine_leave();
	return (ssize_t)len;
}

/* Takes the next datagram from the stack into ps->held; true when one is there. */
static bool udp_peek(struct psock *ps)
{
	if (!ps->held)
		ps->held = myrio_udp_recv(ps->u, &ps->held_ip, &ps->held_port);
	return ps->held != NULL;
}

ssize_t udp_recvv(struct psock *ps, const struct iovec *iov, int n, int flags, uint32_t *ip,
		  uint16_t *port, int *msg_flags)
{
	if (ps->state == PS_PENDING && udp_bind(ps) < 0)
		return -1;
	bool nonblock = ps->nonblock || (flags & MSG_DONTWAIT);
	int64_t timeout = ps->rcvtimeo_ms ? ps->rcvtimeo_ms : -1;
	while (!udp_peek(ps)) {
		int err = take_error(ps);
		if (err)
			return neg_errno(err);
		if (ps->shut_rd) /* the kernel's: a blocking call's wait ends at once, empty */
			return nonblock ? neg_errno(-EAGAIN) : 0;
		if (psock_wait(ps, POLLIN, timeout, nonblock) < 0)
			return -1;
	}
	if (!user_iov_ok(iov, n, true))
		return neg_errno(-EFAULT);
	struct myrio_pkt *p = ps->held;
	const uint8_t *data = myrio_pkt_data(p);
	size_t done = 0;
	for (int i = 0; i < n && done < p->len; i++) {
		size_t k = p->len - done < iov[i].iov_len ? p->len - done : iov[i].iov_len;
		memcpy(iov[i].iov_base, data + done, k);
		done += k;
	}
	size_t full = p->len;
	if (msg_flags && full > done)
		*msg_flags |= MSG_TRUNC;
	if (ip)
		*ip = ps->held_ip;
	if (port)
		*port = ps->held_port;
	if (!(flags & MSG_PEEK)) {
		myrio_pkt_free(p);
		ps->held = NULL;
	}
	return (ssize_t)((flags & MSG_TRUNC) ? full : done);
}

/* As the kernel's inet_shutdown: the socket is shut down whether or not it is connected,
 * and an unconnected one says ENOTCONN all the same (programs use this to wake a thread
 * blocked in its recv, which then returns 0). */
int udp_shutdown(struct psock *ps, int how)
{
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return (int)neg_errno(-EINVAL);
	ps->shut_rd |= how != SHUT_WR;
	ps->shut_wr |= how != SHUT_RD;
	engine_wake(); /* calls asleep on it look again */
	return (int)neg_errno(ps->peer_ip ? 0 : -ENOTCONN);
}

void udp_close(struct psock *ps)
{
	if (ps->held)
		myrio_pkt_free(ps->held);
	myrio_udp_close(ps->u);
	engine_leave();
}

short udp_revents(struct psock *ps)
{
	short r = udp_tx_room() ? POLLOUT : 0;
	if (udp_peek(ps))
		r |= POLLIN;
	if (!ps->udp_error && ps->peer_ip)
		ps->udp_error = myrio_udp_error(ps->u);
	if (ps->udp_error)
		r |= POLLERR;
	if (ps->shut_rd)
		r |= POLLIN | POLLRDHUP;
	if (ps->shut_rd && ps->shut_wr)
		r |= POLLHUP;
	return r;
}
