/* SPDX-License-Identifier: BSD-3-Clause */
/* UDP (RFC 768): sockets bound to a port, optionally connected, with a bounded receive
 * queue of zero-copy datagrams. On a port of several stacks, the stacks demultiplex as
 * one host: a datagram goes to the socket connected to its source on any stack, else to
 * an unconnected one, the receiving stack's first; one that lands elsewhere is handed to
 * the sibling (share.c). The socket table is written under the share's lock, and every
 * change published in the share's view (share_commit), which siblings read; its own stack
 * reads the table without the lock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

int udp_init(struct myrio_stack *s)
{
	struct myrio_udp_sock *udps = calloc(s->conf.max_udp_socks, sizeof(*s->udps));
	if (!udps)
		return -ENOMEM;
	share_lock(s); /* siblings look at the table already */
	s->udps = udps;
	share_unlock(s);
	return 0;
}

static void rxq_drain(struct myrio_udp_sock *u)
{
	struct myrio_pkt *p = u->rxq;
	while (p) {
		struct myrio_pkt *n = p->next;
		myrio_pkt_free(p);
		p = n;
	}
	u->rxq = u->rxq_tail = NULL;
	u->rxq_len = 0;
}

/* The sockets go with the stack: their memberships end (the port outlives the stack and
 * its filter forgets the groups no sibling holds), and siblings stop seeing the table. */
void udp_fini(struct myrio_stack *s)
{
	struct myrio_udp_sock *udps = s->udps;
	if (!udps)
		return;
	bool had_groups = false;
	share_lock(s);
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++)
		for (unsigned k = 0; udps[i].in_use && k < udps[i].ngroups; k++) {
			igmp_drop(s, udps[i].groups[k]);
			had_groups = true;
		}
	if (had_groups)
		igmp_filter_update(s);
	atomic_fetch_sub_explicit(&s->share->udp_connected, s->udp_connected, memory_order_relaxed);
	s->udp_connected = 0;
	s->udps = NULL;
	share_commit(s); /* siblings hand nothing more over: the buffers can go */
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++)
		if (udps[i].in_use)
			rxq_drain(&udps[i]);
	free(udps);
}

static struct myrio_udp_sock *udp_find(struct myrio_stack *s, uint16_t port)
{
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++)
		if (s->udps[i].in_use && s->udps[i].lport == port)
			return &s->udps[i];
	return NULL;
}

/* Several sockets may share a port (myrio_udp_open_shared): a unicast datagram goes to the
 * one connected to its source, else (unless a->connected_only) to an unconnected one, as
 * Linux's UDP lookup scores; one connected to another peer takes nothing. *bound: some
 * socket holds the port. */
static struct myrio_udp_sock *udp_demux(const struct myrio_stack *s, const struct udp_addrs *a,
					bool *bound)
{
	struct myrio_udp_sock *open = NULL;
	*bound = false;
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++) {
		struct myrio_udp_sock *u = &s->udps[i];
		if (!u->in_use || u->lport != a->dport)
			continue;
		*bound = true;
		if (!u->rport)
			open = open ? open : u;
		else if (u->rport == a->sport && u->rip == a->src)
			return u;
	}
	return a->connected_only ? NULL : open;
}

/* Whether a sibling stack may hold a connected UDP socket (a read without the lock: a
 * connect racing with the datagram may miss it, as it would on one stack). */
static bool siblings_connected(const struct myrio_stack *s)
{
	return atomic_load_explicit(&s->share->udp_connected, memory_order_relaxed) >
	       s->udp_connected;
}

/* A unicast datagram to the sibling with the most specific socket: connected to its
 * source, else unconnected. Returns whether one took it. */
static bool handoff_unicast(struct myrio_stack *s, struct udp_addrs *a, const uint8_t *data,
			    uint32_t len)
{
	if (siblings_connected(s)) {
		a->connected_only = true;
		bool taken = share_udp_handoff(s, a, data, len) != 0;
		a->connected_only = false;
		if (taken)
			return true;
	}
	return share_udp_handoff(s, a, data, len) != 0;
}

/* To the payload; the source kept in user for recv. */
static void trim(struct myrio_pkt *p, const struct ip_rx *ip, uint16_t ulen)
{
	uint32_t off = (uint32_t)(ip->l4 + UDP_HLEN - myrio_pkt_data(p));
	p->data_off += off;
	p->len = ulen - UDP_HLEN;
	p->user = (uint64_t)ip->src << 16 | get_be16(ip->l4);
	p->next = NULL;
}

static void enqueue(struct myrio_stack *s, struct myrio_udp_sock *u, struct myrio_pkt *p)
{
	if (u->rxq_len >= s->conf.udp_rx_queue) {
		s->st.drop_udp_queue_full++;
		myrio_pkt_free(p);
		return;
	}
	if (u->rxq_tail)
		u->rxq_tail->next = p;
	else
		u->rxq = p;
	u->rxq_tail = p;
	u->rxq_len++;
	ready_mark(&u->ready);
	if (s->conf.udp_event)
		s->conf.udp_event(s->conf.event_arg, u);
}

static bool group_joined(const struct myrio_udp_sock *u, uint32_t group)
{
	for (unsigned i = 0; i < u->ngroups; i++)
		if (u->groups[i] == group)
			return true;
	return false;
}

/* A socket takes a broadcast on its port, a multicast datagram on its port when it joined
 * the group, and, when connected, only from its peer. */
static bool takes(const struct myrio_udp_sock *u, const struct udp_addrs *a)
{
	return u->in_use && u->lport == a->dport &&
	       (!u->rport || (u->rport == a->sport && u->rip == a->src)) &&
	       (!a->mcast || group_joined(u, a->dst));
}

static struct udp_addrs addrs_of(const struct ip_rx *ip)
{
	return (struct udp_addrs){.src = ip->src,
				  .dst = ip->dst,
				  .sport = get_be16(ip->l4),
				  .dport = get_be16(ip->l4 + 2),
				  .group = ip->bcast,
				  .mcast = ip->mcast};
}

/* A transmit buffer for a copy of len bytes received, beyond the stack's reserve. */
static struct myrio_pkt *copy_buf(struct myrio_stack *s, uint32_t len)
{
	if (len > s->pool->buf_len - MYRIO_PKT_HEADROOM ||
	    myrio_pool_free_count(s->pool) <= s->ctl_reserve)
		return NULL;
	return stack_alloc(s);
}

/* A copy of a trimmed datagram for u. */
static void enqueue_copy(struct myrio_stack *s, struct myrio_udp_sock *u, const struct myrio_pkt *p)
{
	struct myrio_pkt *c = copy_buf(s, p->len);
	if (!c) {
		s->st.drop_udp_mcast_copy++;
		return;
	}
	memcpy(myrio_pkt_data(c), myrio_pkt_data(p), p->len);
	c->len = p->len;
	c->user = p->user;
	c->next = NULL;
	s->st.udp_mcast_copies++;
	enqueue(s, u, c);
}

/* A copy for every socket that takes the trimmed datagram p but the last, which gets p
 * itself. Returns whether one did (p is freed if not). */
static bool deliver_group(struct myrio_stack *s, struct myrio_pkt *p, const struct udp_addrs *a)
{
	struct myrio_udp_sock *prev = NULL;
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++) {
		struct myrio_udp_sock *u = &s->udps[i];
		if (!takes(u, a))
			continue;
		if (prev)
			enqueue_copy(s, prev, p);
		prev = u;
	}
	if (prev) {
		enqueue(s, prev, p);
		return true;
	}
	myrio_pkt_free(p);
	return false;
}

/* A broadcast or multicast datagram: to this stack's sockets and the siblings' that take
 * it. No ICMP error about it when nobody does. */
static void udp_input_group(struct myrio_stack *s, struct myrio_pkt *p, const struct ip_rx *ip,
			    uint16_t ulen)
{
	struct udp_addrs a = addrs_of(ip);
	unsigned handed = share_udp_handoff(s, &a, ip->l4 + UDP_HLEN, ulen - UDP_HLEN);
	trim(p, ip, ulen);
	if (!deliver_group(s, p, &a) && !handed)
		s->st.drop_udp_no_port++;
}

void udp_handoff_input(struct myrio_stack *s, const struct udp_addrs *a, struct myrio_pkt *p)
{
	s->st.udp_handoff_rx++;
	p->user = (uint64_t)a->src << 16 | a->sport;
	p->next = NULL;
	if (a->group) {
		if (!deliver_group(s, p, a))
			s->st.drop_udp_no_port++; /* the socket closed meanwhile */
		return;
	}
	struct udp_addrs any = *a; /* its connected socket closed meanwhile: the best left */
	any.connected_only = false;
	bool bound;
	struct myrio_udp_sock *u = udp_demux(s, &any, &bound);
	if (u) {
		enqueue(s, u, p);
		return;
	}
	s->st.drop_udp_no_port++;
	myrio_pkt_free(p);
}

void udp_input(struct myrio_stack *s, struct myrio_pkt *p, struct ip_rx *ip)
{
	s->st.udp_rx++;
	const uint8_t *uh = ip->l4;
	if (ip->l4_len < UDP_HLEN) {
		s->st.drop_udp_short++;
		goto drop;
	}
	uint16_t ulen = get_be16(uh + 4);
	if (ulen < UDP_HLEN || ulen > ip->l4_len) {
		s->st.drop_udp_short++;
		goto drop;
	}
	if (get_be16(uh + 6) != 0) {
		/* The checksum covers the UDP length; an IP packet longer than it is odd but
		 * legal, so check over exactly ulen bytes in that case. */
		struct ip_rx r = *ip;
		r.l4_len = ulen;
		if (!ipv4_l4_csum_ok(s, p, &r, IPPROTO_UDP_)) {
			s->st.drop_udp_csum++;
			goto drop;
		}
	}
	if (ip->bcast) {
		udp_input_group(s, p, ip, ulen);
		return;
	}
	struct udp_addrs a = addrs_of(ip);
	bool bound;
	struct myrio_udp_sock *u = udp_demux(s, &a, &bound);
	if (u && !u->rport && siblings_connected(s)) {
		a.connected_only = true; /* a sibling's socket connected to the source wins */
		if (share_udp_handoff(s, &a, uh + UDP_HLEN, ulen - UDP_HLEN))
			goto drop;
	}
	if (!u) {
		if (handoff_unicast(s, &a, uh + UDP_HLEN, ulen - UDP_HLEN))
			goto drop; /* a sibling's socket has it */
		s->st.drop_udp_no_port++;
		if (!bound) /* a socket connected to another peer holds the port: no error */
			icmp_send_port_unreach(s, p, ip);
		goto drop;
	}
	trim(p, ip, ulen);
	enqueue(s, u, p);
	return;
drop:
	myrio_pkt_free(p);
}

void udp_icmp_error(struct myrio_stack *s, const struct icmp_err *e, const uint8_t *uh)
{
	struct myrio_udp_sock *u = udp_find(s, get_be16(uh));
	/* As Linux without IP_RECVERR: only a connected socket hears, only of a hard error,
	 * and only about the peer it is connected to (all RFC 5927 leaves UDP to check). */
	if (!u || !u->rport || u->rip != e->dst || u->rport != get_be16(uh + 2) || !e->hard) {
		s->st.icmp_errors_ignored++;
		return;
	}
	u->error = e->err;
	s->st.icmp_errors_rx++;
	s->st.udp_icmp_errors++;
	ready_mark(&u->ready);
	if (s->conf.udp_event)
		s->conf.udp_event(s->conf.event_arg, u);
}

int myrio_udp_error(struct myrio_udp_sock *u)
{
	int err = u->error;
	u->error = 0;
	return err;
}

static int udp_open(struct myrio_stack *s, uint16_t port, void *user, bool shared,
		    struct myrio_udp_sock **out);

int myrio_udp_open(struct myrio_stack *s, uint16_t port, void *user, struct myrio_udp_sock **out)
{
	return udp_open(s, port, user, false, out);
}

int myrio_udp_open_shared(struct myrio_stack *s, uint16_t port, void *user,
			  struct myrio_udp_sock **out)
{
	return udp_open(s, port, user, true, out);
}

/* Whether a socket (shared or not) may bind port: every holder of it shares it too. */
static bool port_free(struct myrio_stack *s, uint16_t port, bool shared)
{
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++)
		if (s->udps[i].in_use && s->udps[i].lport == port && !(shared && s->udps[i].shared))
			return false;
	return true;
}

static int udp_open(struct myrio_stack *s, uint16_t port, void *user, bool shared,
		    struct myrio_udp_sock **out)
{
	*out = NULL;
	if (port == 0) {
		for (uint32_t tries = 0; tries < EPH_COUNT && port == 0; tries++) {
			uint16_t cand = (uint16_t)(EPH_MIN + (s->eph_next++ % EPH_COUNT));
			if (!udp_find(s, cand))
				port = cand;
		}
		if (port == 0)
			return -EADDRINUSE;
	} else if (!port_free(s, port, shared)) {
		log_err("tcp_lite: UDP port %u is already bound", port);
		return -EADDRINUSE;
	}
	for (uint32_t i = 0; i < s->conf.max_udp_socks; i++) {
		struct myrio_udp_sock *u = &s->udps[i];
		if (u->in_use)
			continue;
		share_lock(s);
		memset(u, 0, sizeof(*u));
		u->s = s;
		u->in_use = true;
		u->lport = port;
		u->user = user;
		u->shared = shared;
		u->mcast_ttl = 1;
		share_commit(s);
		*out = u;
		return 0;
	}
	log_err("tcp_lite: all %u UDP sockets in use; raise max_udp_socks "
		"(MYRIO_MAX_UDP under the preload)",
		s->conf.max_udp_socks);
	return -ENOBUFS;
}

/* Under the share's lock: u becomes connected or not. */
static void count_connected(struct myrio_udp_sock *u, bool connected)
{
	if (connected == (u->rport != 0))
		return;
	u->s->udp_connected += connected ? 1u : -1u;
	if (connected)
		atomic_fetch_add_explicit(&u->s->share->udp_connected, 1, memory_order_relaxed);
	else
		atomic_fetch_sub_explicit(&u->s->share->udp_connected, 1, memory_order_relaxed);
}

int myrio_udp_connect(struct myrio_udp_sock *u, uint32_t ip, uint16_t port)
{
	if (!ip != !port)
		return -EINVAL;
	share_lock(u->s);
	count_connected(u, ip != 0);
	u->rip = ip;
	u->rport = port;
	if (!ip)
		u->error = 0; /* errors are kept for a connected socket only */
	share_commit(u->s);
	return 0;
}

static uint8_t udp_ttl(const struct myrio_udp_sock *u, uint32_t dst)
{
	return ipv4_is_multicast(dst) ? u->mcast_ttl : IP_DEFAULT_TTL;
}

uint32_t myrio_udp_max_payload(const struct myrio_stack *s)
{
	return s->mtu - IP_HLEN - UDP_HLEN;
}

int myrio_udp_sendto(struct myrio_udp_sock *u, struct myrio_pkt *p, uint32_t ip, uint16_t port)
{
	struct myrio_stack *s = u->s;
	if (!ip || !port)
		return -EDESTADDRREQ;
	if (p->len > myrio_udp_max_payload(s))
		return -EMSGSIZE;
	if (p->data_off < UDP_HLEN + IP_HLEN + ETH_HLEN)
		return -ENOSPC;
	if (s->conf.netmask && !s->conf.gateway && !ipv4_is_multicast(ip) &&
	    (ip & s->conf.netmask) != (s->conf.ip & s->conf.netmask))
		return -ENETUNREACH;
	if (!ipv4_tx_fits(s, 1))
		return -EAGAIN; /* p untouched: the caller keeps it, to send again or free */
	uint8_t *uh = myrio_pkt_prepend(p, UDP_HLEN);
	put_be16(uh, u->lport);
	put_be16(uh + 2, port);
	put_be16(uh + 4, (uint16_t)p->len);
	put_be16(uh + 6, 0);
	s->st.udp_tx++;
	stack_update_clock(s); /* ARP ages entries by it; calls come between polls */
	/* cannot fail now (a frame waiting for ARP is dropped when its queue is full, as
	 * from the kernel's neighbour queue) */
	ipv4_output_ttl(s, p, IPPROTO_UDP_, s->conf.ip, ip, 0, false, udp_ttl(u, ip));
	return 0;
}

int myrio_udp_sendto_copy(struct myrio_udp_sock *u, const void *buf, size_t len, uint32_t ip,
			  uint16_t port)
{
	struct myrio_stack *s = u->s;
	if (!ip || !port)
		return -EDESTADDRREQ;
	if (len > 65535 - IP_HLEN - UDP_HLEN)
		return -EMSGSIZE;
	if (len <= myrio_udp_max_payload(s)) { /* one frame: the zero-copy path, offloads */
		struct myrio_pkt *p = myrio_stack_pkt_alloc(s);
		if (!p)
			return -ENOBUFS;
		memcpy(myrio_pkt_data(p), buf, len);
		p->len = (uint32_t)len;
		int rc = myrio_udp_sendto(u, p, ip, port);
		if (rc < 0)
			myrio_pkt_free(p);
		return rc;
	}
	if (s->conf.netmask && !s->conf.gateway && !ipv4_is_multicast(ip) &&
	    (ip & s->conf.netmask) != (s->conf.ip & s->conf.netmask))
		return -ENETUNREACH;
	uint8_t uh[UDP_HLEN];
	uint16_t ulen = (uint16_t)(UDP_HLEN + len);
	put_be16(uh, u->lport);
	put_be16(uh + 2, port);
	put_be16(uh + 4, ulen);
	put_be16(uh + 6, 0);
	uint64_t sum = csum_add(ipv4_pseudo_sum(s->conf.ip, ip, IPPROTO_UDP_, ulen), uh, UDP_HLEN);
	uint16_t c = csum_finish(csum_add(sum, buf, len)); /* even offset: sums add up */
	put_be16(uh + 6, c ? c : 0xffff);
	stack_update_clock(s);
	int rc = ipv4_output_frags(s, IPPROTO_UDP_, ip, uh, UDP_HLEN, buf, (uint32_t)len,
				   udp_ttl(u, ip));
	if (rc == 0)
		s->st.udp_tx++;
	return rc;
}

int myrio_udp_send(struct myrio_udp_sock *u, struct myrio_pkt *p)
{
	if (!u->rport)
		return -EDESTADDRREQ;
	return myrio_udp_sendto(u, p, u->rip, u->rport);
}

struct myrio_pkt *myrio_udp_recv(struct myrio_udp_sock *u, uint32_t *ip, uint16_t *port)
{
	struct myrio_pkt *p = u->rxq;
	if (!p)
		return NULL;
	u->rxq = p->next;
	if (!u->rxq)
		u->rxq_tail = NULL;
	u->rxq_len--;
	p->next = NULL;
	if (ip)
		*ip = (uint32_t)(p->user >> 16);
	if (port)
		*port = (uint16_t)p->user;
	return p;
}

uint16_t myrio_udp_port(const struct myrio_udp_sock *u)
{
	return u->lport;
}

void *myrio_udp_user(const struct myrio_udp_sock *u)
{
	return u->user;
}

void myrio_udp_close(struct myrio_udp_sock *u)
{
	if (!u)
		return;
	rxq_drain(u);
	ready_del(&u->ready);
	while (u->ngroups)
		myrio_udp_leave(u, u->groups[u->ngroups - 1]);
	share_lock(u->s);
	count_connected(u, false);
	u->in_use = false;
	share_commit(u->s);
}

int myrio_udp_join(struct myrio_udp_sock *u, uint32_t group)
{
	if (!ipv4_is_multicast(group))
		return -EINVAL;
	if (group_joined(u, group))
		return -EADDRINUSE;
	if (u->ngroups == MYRIO_UDP_MAX_GROUPS)
		return -ENOBUFS;
	share_lock(u->s);
	int rc = igmp_join(u->s, group);
	if (rc == 0)
		u->groups[u->ngroups++] = group;
	int pub = share_commit(u->s); /* the group is received from here on */
	return rc < 0 ? rc : pub;
}

int myrio_udp_leave(struct myrio_udp_sock *u, uint32_t group)
{
	for (unsigned i = 0; i < u->ngroups; i++)
		if (u->groups[i] == group) {
			share_lock(u->s);
			u->groups[i] = u->groups[--u->ngroups];
			igmp_leave(u->s, group);
			share_commit(u->s); /* no sibling hands the group over after it */
			return 0;
		}
	return -EADDRNOTAVAIL;
}

int myrio_udp_set_mcast_ttl(struct myrio_udp_sock *u, uint8_t ttl)
{
	u->mcast_ttl = ttl;
	return 0;
}
