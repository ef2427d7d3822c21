/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP sockets on tcp_lite: connect, listen/accept, the copying send and receive paths with
 * the kernel's blocking, error and SIGPIPE rules, shutdown and close. The engine lock is
 * held throughout. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "preload.h"

#define ACCEPT_QUEUE_MIN 64
#define ACCEPT_QUEUE_MAX 4096

void tcp_on_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	if (ev != MYRIO_TCP_EV_ACCEPTED)
		return; /* readiness is read from the connection's state when asked */
	struct psock *ls = myrio_tcp_user(c);
	if (!ls || ls->state != PS_TCP_LISTEN || ls->aq_len == ls->aq_cap) {
		myrio_tcp_abort(c); /* its listener is gone: the peer sees a reset */
		return;
	}
	ls->aq[(ls->aq_head + ls->aq_len++) % ls->aq_cap] = c;
	myrio_tcp_set_user(c, NULL);
	/* Full: tcp_lite holds further handshakes back until accept() makes room. */
	myrio_tcp_listener_set_full(ls->l, ls->aq_len == ls->aq_cap);
}

/* The connection's end as the call reports it: the error once, then nothing (0). */
static int conn_error(struct psock *ps)
{
	int err = myrio_tcp_error(ps->c);
	if (!err || ps->error_reported)
		return 0;
	ps->error_reported = true;
	return err;
}

/* The TCP ports bound by this process's pending and listening sockets: how many sockets
 * hold each, and how many of them exclusively. Linux's rule: a second bind to a port
 * conflicts unless both sockets have SO_REUSEADDR and the holder does not listen. */
static uint16_t port_holders[65536], port_exclusive[65536];

int tcp_port_claim(struct psock *ps)
{
	uint16_t p = ps->bound_port;
	if (port_holders[p] && (!ps->reuseaddr || port_exclusive[p]))
		return (int)neg_errno(-EADDRINUSE);
	port_holders[p]++;
	ps->port_claimed = true;
	ps->port_excl = !ps->reuseaddr;
	port_exclusive[p] += ps->port_excl;
	return 0;
}

void tcp_port_release(struct psock *ps)
{
	if (!ps->port_claimed)
		return;
	port_holders[ps->bound_port]--;
	port_exclusive[ps->bound_port] -= ps->port_excl;
	ps->port_claimed = ps->port_excl = false;
}

/* bind() to port 0, and listen() without bind(): a port nobody here holds, from the
 * kernel's ephemeral range, as inet_csk_get_port picks one (so getsockname names it at
 * once); held from now on. */
int tcp_port_pick(struct psock *ps)
{
	for (int tries = 0; tries < 64; tries++) {
		uint16_t r;
		if (getrandom(&r, sizeof r, 0) != sizeof r)
			r = (uint16_t)tries;
		ps->bound_port = (uint16_t)(32768 + r % 28232);
		if (!port_holders[ps->bound_port]) {
			ps->port_ephemeral = true;
			return tcp_port_claim(ps);
		}
	}
	ps->bound_port = 0;
	return (int)neg_errno(-EADDRINUSE);
}

/* listen(): the port is held exclusively from now on. */
static int port_listen(struct psock *ps)
{
	if (!ps->port_claimed && tcp_port_claim(ps) < 0)
		return -1;
	if (!ps->port_excl) {
		if (port_exclusive[ps->bound_port])
			return (int)neg_errno(-EADDRINUSE); /* another socket listens there */
		ps->port_excl = true;
		port_exclusive[ps->bound_port]++;
	}
	return 0;
}

/* A connect call that finds the attempt ended (refused, reset, timed out), as Linux's
 * sock_error path in __inet_stream_connect: the error if not yet read (SO_ERROR),
 * else ECONNABORTED, and the socket is unconnected again, so the next connect starts a
 * new attempt. */
static int connect_failed(struct psock *ps)
{
	int err = conn_error(ps);
	tcp_disconnect(ps);
	ps->reset_err = 0;
	ps->unspec_port = 0; /* the port went with the attempt */
	ps->connect_pending = false;
	return (int)neg_errno(err ? err : -ECONNABORTED);
}

int tcp_connect(int fd, struct psock *ps, uint32_t ip, uint16_t port)
{
	if (ps->state == PS_TCP_CONN) {
		enum myrio_tcp_state st = myrio_tcp_state(ps->c);
		if (st == MYRIO_TCP_SYN_SENT)
			return (int)neg_errno(-EALREADY);
		if (st == MYRIO_TCP_CLOSED && ps->connect_pending)
			return connect_failed(ps);
		/* as Linux: the first call after a non-blocking connect completed says how it
		 * ended (0 or the error), the next ones EISCONN */
		int err = conn_error(ps);
		bool first = ps->connect_pending;
		ps->connect_pending = false;
		return (int)neg_errno(err ? err : first ? 0 : -EISCONN);
	}
	if (ps->state != PS_PENDING)
		return (int)neg_errno(-EISCONN); /* a listener */
	struct myrio_stack *s = engine_stack();
	if (!s)
		return -1;
	ps->reset_err = 0;
	ps->unspec_port = 0;
	if (ps->bound_port) {
		if (!ps->port_ephemeral)
			preload_log_once("bind() before connect(): tcp_lite picks the local port "
					 "itself");
		tcp_port_release(ps);
	}
	if (!port) /* Linux sends the SYN; the reset to it refuses */
		return (int)neg_errno(-ECONNREFUSED);
	int rc = myrio_tcp_connect(s, ip, port, ps, &ps->c);
	if (rc == -ENOBUFS) {
		/* Every connection slot is taken (MYRIO_MAX_TCP). A blocking connect never
		 * says EAGAIN on Linux: ENOBUFS, as when socket memory runs out; a
		 * non-blocking one may be retried (EAGAIN). */
		preload_log_once("all TCP connection slots in use (those in TIME_WAIT count): "
				 "raise MYRIO_MAX_TCP");
		return (int)neg_errno(ps->nonblock ? -EAGAIN : -ENOBUFS);
	}
	if (rc < 0)
		return (int)neg_errno(rc);
	ps->state = PS_TCP_CONN;
	if (ps->keepalive)
		myrio_tcp_keepalive(ps->c, ps->keep_idle_s * 1000, ps->keep_intvl_s * 1000,
				    ps->keep_cnt);
	engine_leave();
	/* until a connect call reports it established (Linux's SS_CONNECTING) */
	ps->connect_pending = true;
	if (ps->nonblock)
		return (int)neg_errno(-EINPROGRESS);
	if (psock_wait(ps, POLLOUT, -1, false) < 0)
		return -1; /* EINTR: connecting still, as Linux (EALREADY next) */
	if (myrio_tcp_state(ps->c) == MYRIO_TCP_CLOSED)
		return connect_failed(ps);
	ps->connect_pending = false;
	return 0;
}

int tcp_listen(struct psock *ps, int backlog)
{
	if (ps->state == PS_TCP_LISTEN)
		return 0;
	if (ps->state != PS_PENDING)
		return (int)neg_errno(-EINVAL);
	struct myrio_stack *s = engine_stack();
	if (!s)
		return -1;
	if (backlog <= 0 || backlog > ACCEPT_QUEUE_MAX)
		backlog = backlog <= 0 ? ACCEPT_QUEUE_MIN : ACCEPT_QUEUE_MAX;
	unsigned cap = (unsigned)backlog < ACCEPT_QUEUE_MIN ? ACCEPT_QUEUE_MIN : (unsigned)backlog;
	ps->aq = calloc(cap, sizeof *ps->aq);
	if (!ps->aq)
		return (int)neg_errno(-ENOMEM);
	ps->aq_cap = cap;
	bool picked = !ps->bound_port; /* listen() without bind() */
	int rc = picked && tcp_port_pick(ps) < 0 ? -errno
		 : port_listen(ps) < 0
		     ? -errno
		     : myrio_tcp_listen(s, ps->bound_port, (unsigned)backlog, ps, &ps->l);
	if (rc < 0 && picked) {
		tcp_port_release(ps);
		ps->bound_port = 0;
	}
	if (rc < 0) {
		free(ps->aq);
		ps->aq = NULL;
		return (int)neg_errno(rc);
	}
	ps->state = PS_TCP_LISTEN;
	return 0;
}

static void fill_sin(struct sockaddr *addr, socklen_t *len, uint32_t ip, uint16_t port)
{
	if (!addr || !len)
		return;
	struct sockaddr_in sin = {
	    .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(ip)};
	memcpy(addr, &sin, *len < sizeof sin ? *len : sizeof sin);
	*len = sizeof sin;
}

int tcp_accept(struct psock *ps, struct sockaddr *addr, socklen_t *len, int flags)
{
	if (ps->state != PS_TCP_LISTEN)
		return (int)neg_errno(-EINVAL);
	if (psock_wait(ps, POLLIN, ps->rcvtimeo_ms ? ps->rcvtimeo_ms : -1, ps->nonblock) < 0)
		return -1;
	int fd = kern.socket(AF_INET, SOCK_STREAM | (flags & SOCK_CLOEXEC), 0);
	if (fd < 0)
		return -1; /* EMFILE, ENFILE: the connection stays queued, as the kernel's */
	struct psock *nps = psock_new(SOCK_STREAM);
	if (!nps || fdtab_set(fd, nps) < 0) {
		free(nps);
		kern.close(fd);
		return (int)neg_errno(-ENOMEM);
	}
	struct myrio_tcp_conn *c = ps->aq[ps->aq_head];
	ps->aq_head = (ps->aq_head + 1) % ps->aq_cap;
	ps->aq_len--;
	myrio_tcp_listener_set_full(ps->l, false);
	nps->state = PS_TCP_CONN;
	nps->c = c;
	nps->nonblock = (flags & SOCK_NONBLOCK) != 0;
	nps->bound_port = ps->bound_port;
	myrio_tcp_set_user(c, nps);
	uint32_t lip, rip;
	uint16_t lport, rport;
	myrio_tcp_addr(c, &lip, &lport, &rip, &rport);
	fill_sin(addr, len, rip, rport);
	return fd;
}

static void sigpipe_unless(int flags)
{
	if (!(flags & MSG_NOSIGNAL))
		preload_raise_sigpipe = true;
}

ssize_t tcp_sendv(struct psock *ps, const struct iovec *iov, int n, int flags)
{
	if (ps->state != PS_TCP_CONN)
		return neg_errno(ps->state == PS_TCP_LISTEN ? -ENOTCONN : -EPIPE);
	if (!user_iov_ok(iov, n, false))
		return neg_errno(-EFAULT);
	bool nonblock = ps->nonblock || (flags & MSG_DONTWAIT);
	int64_t timeout = ps->sndtimeo_ms ? ps->sndtimeo_ms : -1;
	size_t total = 0;
	for (int i = 0; i < n; i++) {
		const uint8_t *b = iov[i].iov_base;
		size_t left = iov[i].iov_len;
		while (left) {
			ssize_t r = ps->shut_wr ? -EPIPE : myrio_tcp_write(ps->c, b, left);
			if (r > 0) {
				b += r;
				left -= (size_t)r;
				total += (size_t)r;
				continue;
			}
			if (r == 0 || r == -ENOTCONN) { /* full, or still connecting */
				if (r == -ENOTCONN && myrio_tcp_state(ps->c) != MYRIO_TCP_SYN_SENT)
					r = -EPIPE;
				else if (total && nonblock)
					goto out;
				else if (psock_wait(ps, POLLOUT, timeout, nonblock) == 0)
					continue;
				else if (total)
					goto out;
				else
					return -1;
			}
			if (total)
				goto out;
			int err = conn_error(ps);
			if (err && err != -EPIPE) /* a reset after the peer's FIN is EPIPE */
				return neg_errno(err);
			sigpipe_unless(flags);
			return neg_errno(-EPIPE);
		}
	}
out:
	engine_leave();
	return (ssize_t)total;
}

/* As the kernel's RCV_SHUTDOWN: the peer's FIN arrived (data may still be queued) or the
 * program shut reading down. */
static bool rcv_shut(struct psock *ps, enum myrio_tcp_state st)
{
	return ps->shut_rd || myrio_tcp_eof(ps->c) || st == MYRIO_TCP_CLOSE_WAIT ||
	       st == MYRIO_TCP_LAST_ACK || st == MYRIO_TCP_CLOSING || st == MYRIO_TCP_TIME_WAIT;
}

/* MSG_PEEK|MSG_WAITALL: whether to wait for more than the have bytes queued, as Linux's
 * tcp_recvmsg does (until want, the end of the stream, an error, the timeout or a signal;
 * what is queued is returned then). Lock held; deadline 0 for none. */
static bool peek_wait_more(struct psock *ps, size_t have, size_t want, uint64_t deadline)
{
	for (;;) {
		if (have >= want || ps->closed || ps->state != PS_TCP_CONN ||
		    myrio_tcp_error(ps->c) || rcv_shut(ps, myrio_tcp_state(ps->c)))
			return false;
		int left = -1;
		if (deadline) {
			uint64_t now = engine_now_ms();
			if (now >= deadline)
				return false;
			left = (int)(deadline - now);
		}
		if (engine_block(NULL, 0, left, NULL) < 0 && !sig_restart(left))
			return false; /* a signal: what is there */
		if (ps->state == PS_TCP_CONN && myrio_tcp_rx_queued(ps->c) > have)
			return true;
	}
}

/* MSG_PEEK: waits as a read does, then copies what is queued (up to want) and leaves it;
 * with MSG_WAITALL, until want bytes are queued (peek_wait_more); with MSG_TRUNC, counts
 * them without a copy. */
static ssize_t tcp_peekv(struct psock *ps, const struct iovec *iov, int n, size_t want,
			 int64_t timeout, bool nonblock, bool waitall, bool trunc)
{
	uint64_t deadline = timeout >= 0 ? engine_now_ms() + (uint64_t)timeout : 0;
	for (;;) {
		if (ps->shut_rd || !want)
			return 0;
		ssize_t r = myrio_tcp_peek(ps->c, 0, NULL, 0);
		if (r == -EAGAIN) {
			if (psock_wait(ps, POLLIN, timeout, nonblock) < 0)
				return -1;
			continue;
		}
		if (r < 0)
			return neg_errno(conn_error(ps));
		uint32_t queued = myrio_tcp_rx_queued(ps->c);
		if (queued == 0)
			return 0; /* end of stream */
		if (!waitall || !peek_wait_more(ps, queued, want, deadline))
			break;
	}
	if (ps->state != PS_TCP_CONN) /* disconnected by another thread meanwhile */
		return neg_errno(-ECONNRESET);
	if (trunc) { /* as Linux: counted, not copied */
		uint32_t queued = myrio_tcp_rx_queued(ps->c);
		return (ssize_t)(queued < want ? queued : want);
	}
	if (!user_iov_ok(iov, n, true))
		return neg_errno(-EFAULT);
	size_t total = 0;
	for (int i = 0; i < n && total < want; i++) {
		ssize_t r = myrio_tcp_peek(ps->c, total, iov[i].iov_base, iov[i].iov_len);
		if (r <= 0)
			break;
		total += (size_t)r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	return (ssize_t)total;
}

ssize_t tcp_recvv(struct psock *ps, const struct iovec *iov, int n, int flags)
{
	if (ps->state != PS_TCP_CONN)
		return neg_errno(-ENOTCONN);
	bool nonblock = ps->nonblock || (flags & MSG_DONTWAIT);
	bool waitall = (flags & MSG_WAITALL) && !nonblock;
	int64_t timeout = ps->rcvtimeo_ms ? ps->rcvtimeo_ms : -1;
	size_t want = 0, total = 0;
	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	bool trunc = (flags & MSG_TRUNC) != 0;
	if (flags & MSG_PEEK)
		return tcp_peekv(ps, iov, n, want, timeout, nonblock, waitall, trunc);
	static uint8_t discard[4096]; /* MSG_TRUNC: read and dropped, as Linux does */
	bool checked = trunc;	      /* the buffers, once data is there to copy */
	int i = 0;
	size_t off = 0;
	while (total < want && !ps->shut_rd) {
		while (!trunc && i < n && off == iov[i].iov_len) {
			i++;
			off = 0;
		}
		if (!checked && myrio_tcp_rx_queued(ps->c)) {
			if (!user_iov_ok(iov, n, true))
				return neg_errno(-EFAULT); /* nothing read yet: checked first */
			checked = true;
		}
		size_t room = trunc ? want - total : iov[i].iov_len - off;
		uint8_t *at = trunc ? discard : (uint8_t *)iov[i].iov_base;
		if (off) /* never an offset on NULL, which a bad buffer may be */
			at += off;
		ssize_t r = myrio_tcp_read(ps->c, at,
					   room < sizeof discard || !trunc ? room : sizeof discard);
		if (r > 0) {
			off += trunc ? 0 : (size_t)r;
			total += (size_t)r;
			continue;
		}
		if (r == 0)
			break; /* end of stream */
		if (r == -EAGAIN) {
			if (myrio_tcp_state(ps->c) == MYRIO_TCP_SYN_SENT && nonblock && !total)
				return neg_errno(-EAGAIN);
			if (total && !waitall)
				break;
			if (psock_wait(ps, POLLIN, timeout, nonblock) == 0)
				continue;
			if (total)
				break;
			return -1;
		}
		if (total)
			break;
		return neg_errno(conn_error(ps)); /* the error once, then end of stream */
	}
	if (total)
		engine_leave(); /* the window reopened */
	return (ssize_t)total;
}

int tcp_shutdown(struct psock *ps, int how)
{
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return (int)neg_errno(-EINVAL);
	if (ps->state == PS_TCP_LISTEN) /* as Linux: reading shut down stops listening, and */
		return how == SHUT_WR ? 0 : tcp_disconnect(ps); /* accept() ends (EINVAL) */
	if (ps->state != PS_TCP_CONN)
		return (int)neg_errno(-ENOTCONN);
	if (how != SHUT_WR)
		ps->shut_rd = true;
	if (how != SHUT_RD && !ps->shut_wr) {
		ps->shut_wr = true;
		myrio_tcp_shutdown(ps->c);
	}
	engine_leave();
	return 0;
}

void tcp_close(struct psock *ps)
{
	if (ps->state == PS_TCP_LISTEN) {
		myrio_tcp_listener_close(ps->l);
		for (; ps->aq_len; ps->aq_len--, ps->aq_head = (ps->aq_head + 1) % ps->aq_cap)
			myrio_tcp_abort(ps->aq[ps->aq_head]);
		engine_leave();
		return;
	}
	struct myrio_tcp_conn *c = ps->c;
	myrio_tcp_set_user(c, NULL);
	enum myrio_tcp_state st = myrio_tcp_state(c);
	if (ps->linger_onoff && ps->linger_s == 0)
		myrio_tcp_abort(c);
	else if (!myrio_tcp_error(c) && !myrio_tcp_rx_queued(c) && st != MYRIO_TCP_SYN_SENT &&
		 st != MYRIO_TCP_CLOSED && st != MYRIO_TCP_TIME_WAIT)
		linger_add(c, !ps->shut_wr); /* FIN after the data; kept until delivered */
	else
		myrio_tcp_close(c); /* unread data: a reset, as the kernel's */
	engine_leave();
}

/* connect(AF_UNSPEC) of a TCP socket, as the kernel's tcp_disconnect: a listener stops
 * listening (its queued connections reset); a connection is aborted, with a reset to a
 * synchronised peer, and reports ECONNRESET once; either way the socket is left unconnected,
 * to connect or listen again. 0 or a negative errno. */
int tcp_disconnect(struct psock *ps)
{
	int err = 0;
	if (ps->state == PS_TCP_CONN) {
		uint32_t lip, rip;
		uint16_t rport;
		myrio_tcp_addr(ps->c, &lip, &ps->unspec_port, &rip, &rport);
		enum myrio_tcp_state st = myrio_tcp_state(ps->c);
		if (!myrio_tcp_error(ps->c) && st != MYRIO_TCP_CLOSED && st != MYRIO_TCP_TIME_WAIT)
			err = ECONNRESET;
		myrio_tcp_set_user(ps->c, NULL);
		myrio_tcp_abort(ps->c);
		engine_leave();
	} else {
		tcp_close(ps);
		free(ps->aq);
		ps->aq = NULL;
		ps->aq_head = ps->aq_len = ps->aq_cap = 0;
	}
	tcp_port_release(ps);
	ps->c = NULL;
	ps->l = NULL;
	ps->state = PS_PENDING;
	ps->error_reported = ps->shut_rd = ps->shut_wr = false;
	if (ps->bound_port) /* a listener keeps its port, no longer exclusively */
		tcp_port_claim(ps);
	ps->reset_err = err;
	engine_wake(); /* calls asleep on it end (psock_wait) */
	return 0;
}

/* poll(2) readiness of a TCP socket. */
short tcp_revents(struct psock *ps)
{
	if (ps->state == PS_TCP_LISTEN)
		return ps->aq_len ? POLLIN : 0;
	struct myrio_tcp_conn *c = ps->c;
	enum myrio_tcp_state st = myrio_tcp_state(c);
	int err = myrio_tcp_error(c);
	short r = 0;
	if (err) {
		r |= POLLIN | POLLOUT | POLLHUP;
		if (!ps->error_reported)
			r |= POLLERR;
		return r;
	}
	if (st == MYRIO_TCP_SYN_SENT || st == MYRIO_TCP_SYN_RCVD)
		return 0;
	bool shut = rcv_shut(ps, st);
	if (shut)
		r |= POLLIN | POLLRDHUP;
	else if (myrio_tcp_rx_queued(c))
		r |= POLLIN;
	if (ps->shut_wr || myrio_tcp_send_space(c) > 0)
		r |= POLLOUT;
	if ((shut && ps->shut_wr) || st == MYRIO_TCP_CLOSED)
		r |= POLLHUP;
	return r;
}
