/* SPDX-License-Identifier: BSD-3-Clause */
/* What every accelerated socket has: readiness, waiting for it, and the socket options
 * (recorded, applied to tcp_lite where it has the knob, refused with a log line where it
 * has none). The engine lock is held throughout. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "preload.h"

__thread bool preload_raise_sigpipe;

short psock_revents(struct psock *ps, short events)
{
	short r;
	switch (ps->state) {
	case PS_TCP_CONN:
	case PS_TCP_LISTEN:
		r = tcp_revents(ps);
		break;
	case PS_UDP:
		r = udp_revents(ps);
		break;
	case PS_DEAD:
		return POLLNVAL;
	default:
		r = POLLOUT | POLLHUP; /* as the kernel's unconnected socket */
	}
	return r & (events | POLLERR | POLLHUP | POLLNVAL);
}

int psock_dead(int fd)
{
	static bool said;
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		preload_log("fd %d is the parent's accelerated socket; a forked child cannot use "
			    "it (EBADF; docs/preload.md, fork and exec)",
			    fd);
	return -EBADF;
}

int psock_wait(struct psock *ps, short events, int64_t timeout_ms, bool nonblock)
{
	uint64_t deadline = timeout_ms >= 0 ? engine_now_ms() + (uint64_t)timeout_ms : 0;
	enum psock_state was = ps->state;
	engine_progress();
	for (;;) {
		if (ps->closed)
			return (int)neg_errno(-EBADF); /* another thread closed its last fd */
		if (ps->state != was) { /* another thread disconnected it (tcp_disconnect) */
			ps->reset_err = 0;
			return (int)neg_errno(was == PS_TCP_LISTEN ? -EINVAL : -ECONNRESET);
		}
		if (psock_revents(ps, events))
			return 0;
		epoll_drained(ps, (uint16_t)events);
		int left = -1;
		if (timeout_ms >= 0) {
			uint64_t now = engine_now_ms();
			if (nonblock || now >= deadline)
				return (int)neg_errno(-EAGAIN);
			left = (int)(deadline - now);
		} else if (nonblock) {
			return (int)neg_errno(-EAGAIN);
		}
		if (engine_block(NULL, 0, left, NULL) < 0 && !sig_restart(timeout_ms))
			return -1;
	}
}

/* An option's value from the program, as the kernel's copy_from_sockptr: EINVAL when
 * shorter than n, EFAULT when it cannot be read. */
static int get_opt(void *out, size_t n, const void *val, socklen_t len)
{
	if (len < n)
		return (int)neg_errno(-EINVAL);
	if (!user_mem_ok(val, n, false))
		return (int)neg_errno(-EFAULT);
	memcpy(out, val, n);
	return 0;
}

static int get_int(const void *val, socklen_t len, int *out)
{
	return get_opt(out, sizeof *out, val, len);
}

/* len was found readable and writable (getsockopt) */
static int put(void *val, socklen_t *len, const void *src, socklen_t n)
{
	if ((int)*len < 0)
		return (int)neg_errno(-EINVAL);
	socklen_t k = *len < n ? *len : n;
	if (!user_mem_ok(val, k, true))
		return (int)neg_errno(-EFAULT);
	memcpy(val, src, k);
	*len = k;
	return 0;
}

static int put_int(void *val, socklen_t *len, int v)
{
	return put(val, len, &v, sizeof v);
}

/* -1 with errno set when the value cannot be read or is no time */
static int64_t tv_ms(const void *val, socklen_t len)
{
	struct timeval tv;
	if (get_opt(&tv, sizeof tv, val, len) < 0)
		return -1;
	if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000)
		return neg_errno(-EINVAL);
	int64_t ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
	return ms == 0 && tv.tv_usec ? 1 : ms;
}

static int put_tv(void *val, socklen_t *len, int64_t ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	return put(val, len, &tv, sizeof tv);
}

/* Linux's numbering of TCP states (include/net/tcp_states.h), as TCP_INFO reports. */
static uint8_t linux_state(enum myrio_tcp_state st)
{
	static const uint8_t map[] = {
	    [MYRIO_TCP_CLOSED] = 7,	[MYRIO_TCP_LISTEN] = 10,     [MYRIO_TCP_SYN_SENT] = 2,
	    [MYRIO_TCP_SYN_RCVD] = 3,	[MYRIO_TCP_ESTABLISHED] = 1, [MYRIO_TCP_FIN_WAIT_1] = 4,
	    [MYRIO_TCP_FIN_WAIT_2] = 5, [MYRIO_TCP_CLOSE_WAIT] = 8,  [MYRIO_TCP_CLOSING] = 11,
	    [MYRIO_TCP_LAST_ACK] = 9,	[MYRIO_TCP_TIME_WAIT] = 6,
	};
	return (unsigned)st < sizeof map ? map[st] : 7;
}

static int tcp_info(struct psock *ps, void *val, socklen_t *len)
{
	struct tcp_info ti;
	memset(&ti, 0, sizeof ti);
	if (ps->state == PS_TCP_LISTEN) {
		ti.tcpi_state = 10;
		return put(val, len, &ti, sizeof ti);
	}
	struct myrio_tcp_conn_stats st;
	myrio_tcp_conn_stats(ps->c, &st);
	uint32_t mss = st.mss ? st.mss : 1;
	ti.tcpi_state = linux_state(myrio_tcp_state(ps->c));
	ti.tcpi_rto = st.rto_ms * 1000;
	ti.tcpi_snd_mss = st.mss;
	ti.tcpi_rcv_mss = st.mss;
	ti.tcpi_advmss = st.mss;
	ti.tcpi_unacked = st.unacked_segs;
	ti.tcpi_rtt = st.srtt_us;
	ti.tcpi_rttvar = st.rttvar_us;
	ti.tcpi_snd_ssthresh = st.ssthresh / mss;
	ti.tcpi_snd_cwnd = st.cwnd / mss;
	ti.tcpi_total_retrans = (uint32_t)st.retransmits;
	ti.tcpi_pmtu = st.mss + 40;
	ti.tcpi_rcv_space = st.rcv_wnd;
	return put(val, len, &ti, sizeof ti);
}

int psock_getsockopt(int fd, struct psock *ps, int level, int name, void *val, socklen_t *len)
{
	bool tcp = ps->type == SOCK_STREAM;
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_TYPE:
			return put_int(val, len, ps->type);
		case SO_DOMAIN:
			return put_int(val, len, AF_INET);
		case SO_PROTOCOL:
			return put_int(val, len, tcp ? IPPROTO_TCP : IPPROTO_UDP);
		case SO_ACCEPTCONN:
			return put_int(val, len, ps->state == PS_TCP_LISTEN);
		case SO_ERROR: {
			int err = 0;
			if (ps->state == PS_TCP_CONN && !ps->error_reported) {
				err = myrio_tcp_error(ps->c);
				ps->error_reported = err != 0;
			} else if (ps->state == PS_UDP) {
				err = ps->udp_error ? ps->udp_error
						    : (ps->peer_ip ? myrio_udp_error(ps->u) : 0);
				ps->udp_error = 0;
			}
			return put_int(val, len, -err);
		}
		case SO_REUSEADDR:
			return put_int(val, len, ps->reuseaddr);
		case SO_KEEPALIVE:
			return put_int(val, len, ps->keepalive);
		case SO_RCVBUF:
		case SO_SNDBUF: /* the kernel socket under the fd has the value (setsockopt) */
			return kern.getsockopt(fd, level, name, val, len);
		case SO_RCVTIMEO:
			return put_tv(val, len, ps->rcvtimeo_ms);
		case SO_SNDTIMEO:
			return put_tv(val, len, ps->sndtimeo_ms);
		case SO_LINGER: {
			struct linger l = {ps->linger_onoff, ps->linger_s};
			return put(val, len, &l, sizeof l);
		}
		}
	} else if (level == IPPROTO_TCP && tcp) {
		switch (name) {
		case TCP_NODELAY:
			return put_int(val, len, 1);
		case TCP_MAXSEG:
			return put_int(val, len,
				       ps->state == PS_TCP_CONN ? myrio_tcp_mss(ps->c) : 536);
		case TCP_INFO:
			if (ps->state != PS_TCP_CONN && ps->state != PS_TCP_LISTEN)
				break;
			return tcp_info(ps, val, len);
		case TCP_KEEPIDLE:
			return put_int(val, len, (int)ps->keep_idle_s);
		case TCP_KEEPINTVL:
			return put_int(val, len, (int)ps->keep_intvl_s);
		case TCP_KEEPCNT:
			return put_int(val, len, (int)ps->keep_cnt);
		case TCP_CONGESTION:
			return put(val, len, "newreno", 8);
		}
	}
	preload_log_once("getsockopt: an option this layer does not have (ENOPROTOOPT)");
	return (int)neg_errno(-ENOPROTOOPT);
}

static void apply_keepalive(struct psock *ps)
{
	if (ps->state == PS_TCP_CONN)
		myrio_tcp_keepalive(ps->c, ps->keepalive ? ps->keep_idle_s * 1000 : 0,
				    ps->keep_intvl_s * 1000, ps->keep_cnt);
}

int psock_setsockopt(int fd, struct psock *ps, int level, int name, const void *val, socklen_t len)
{
	int v = 0;
	bool tcp = ps->type == SOCK_STREAM;
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_REUSEADDR:
		case SO_REUSEPORT:
			if (get_int(val, len, &v) < 0)
				return -1;
			ps->reuseaddr = v != 0;
			return 0;
		case SO_KEEPALIVE:
			if (get_int(val, len, &v) < 0)
				return -1;
			ps->keepalive = v != 0;
			apply_keepalive(ps);
			return 0;
		case SO_RCVBUF:
		case SO_SNDBUF:
			/* Kept by the kernel socket under the fd, which answers as the kernel
			 * does (clamped to net.core.rmem_max/wmem_max, doubled, its minimum):
			 * programs that print or check the size they got see the kernel's. */
			preload_log_once("SO_RCVBUF/SO_SNDBUF recorded only: tcp_lite's windows "
					 "and queues are the stack's (rcv_buf, snd_queue_segs)");
			return kern.setsockopt(fd, level, name, val, len);
		case SO_RCVTIMEO:
		case SO_SNDTIMEO: {
			int64_t ms = tv_ms(val, len);
			if (ms < 0)
				return -1;
			*(name == SO_RCVTIMEO ? &ps->rcvtimeo_ms : &ps->sndtimeo_ms) = ms;
			return 0;
		}
		case SO_LINGER: {
			struct linger l;
			if (get_opt(&l, sizeof l, val, len) < 0)
				return -1;
			ps->linger_onoff = l.l_onoff;
			ps->linger_s = l.l_linger;
			if (l.l_onoff && l.l_linger)
				preload_log_once("SO_LINGER with a time: close() does not wait; "
						 "the data is delivered in the background");
			return 0;
		}
		}
	} else if (level == IPPROTO_TCP && tcp) {
		switch (name) {
		case TCP_NODELAY:
			return get_int(val, len, &v); /* tcp_lite sends at once (no Nagle) */
		case TCP_KEEPIDLE:
		case TCP_KEEPINTVL:
		case TCP_KEEPCNT:
			if (get_int(val, len, &v) < 0)
				return -1;
			if (v < 1)
				return (int)neg_errno(-EINVAL);
			*(name == TCP_KEEPIDLE	  ? &ps->keep_idle_s
			  : name == TCP_KEEPINTVL ? &ps->keep_intvl_s
						  : &ps->keep_cnt) = (uint32_t)v;
			apply_keepalive(ps);
			return 0;
		}
	} else if (level == IPPROTO_IP && name == IP_TOS) {
		preload_log_once("IP_TOS ignored: tcp_lite sends TOS 0");
		return 0;
	} else if (level == IPPROTO_IP && ps->state == PS_UDP) {
		switch (name) {
		case IP_ADD_MEMBERSHIP:
		case IP_DROP_MEMBERSHIP: {
			struct ip_mreq m; /* ip_mreqn starts the same way */
			if (get_opt(&m, sizeof m, val, len) < 0)
				return -1;
			uint32_t group = ntohl(m.imr_multiaddr.s_addr);
			return (int)neg_errno(name == IP_ADD_MEMBERSHIP
						  ? myrio_udp_join(ps->u, group)
						  : myrio_udp_leave(ps->u, group));
		}
		case IP_MULTICAST_TTL: {
			uint8_t ttl;
			if (len == 1) {
				if (get_opt(&ttl, 1, val, len) < 0)
					return -1;
			} else {
				if (get_int(val, len, &v) < 0)
					return -1;
				if (v < -1 || v > 255)
					return (int)neg_errno(-EINVAL);
				ttl = v < 0 ? 1 : (uint8_t)v; /* -1: the default */
			}
			return (int)neg_errno(myrio_udp_set_mcast_ttl(ps->u, ttl));
		}
		case IP_MULTICAST_LOOP:
			preload_log_once("IP_MULTICAST_LOOP: tcp_lite does not loop a group's "
					 "datagrams back to this process (ignored)");
			return 0;
		}
	}
	preload_log_once("setsockopt: an option this layer does not have (ENOPROTOOPT)");
	return (int)neg_errno(-ENOPROTOOPT);
}
