/* SPDX-License-Identifier: BSD-3-Clause */
/* A tcp_lite stack on one end of a pair link and a raw peer on the other: the test crafts
 * frames byte by byte, sends them to the stack, and parses what the stack sends back.
 * The clock is fake and moves only when the test says so. */
#ifndef RAW_PEER_H
#define RAW_PEER_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem/dma.h"
#include "myrio/tcp_lite.h"
#include "fake_clock.h"
#include "port/port_ops.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define STACK_IP 0x0a000001u /* 10.0.0.1 */
#define PEER_IP 0x0a000002u  /* 10.0.0.2 */
#define MAX_CAP 256

static const uint8_t peer_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

struct raw {
	struct myrio_port *sp, *pp; /* stack's port, peer's port */
	struct myrio_pool *pool;
	struct myrio_stack *s;
	uint64_t now_ns;
	uint8_t smac[6];
	struct myrio_pkt *cap[MAX_CAP]; /* frames the stack sent, oldest first */
	unsigned ncap;
	/* events */
	struct myrio_tcp_conn *last_conn;
	int ev_count[8];
	struct myrio_udp_sock *udp_last;
	int udp_events;
};


static inline void raw_tcp_event(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct raw *r = arg;
	r->last_conn = c;
	if ((unsigned)ev < 8)
		r->ev_count[ev]++;
}

static inline void raw_udp_event(void *arg, struct myrio_udp_sock *u)
{
	struct raw *r = arg;
	r->udp_last = u;
	r->udp_events++;
}

static inline void raw_drop_captured(struct raw *r)
{
	for (unsigned i = 0; i < r->ncap; i++)
		myrio_pkt_free(r->cap[i]);
	r->ncap = 0;
}

/* Polls the stack once and collects everything it sent (replacing older captures). */
static inline void raw_poll(struct raw *r)
{
	raw_drop_captured(r);
	myrio_stack_poll(r->s);
	struct myrio_pkt *in[64];
	uint16_t n;
	while ((n = r->pp->ops->rx_burst(r->pp, in, 64)) > 0) {
		for (uint16_t i = 0; i < n; i++) {
			if (r->ncap < MAX_CAP)
				r->cap[r->ncap++] = in[i];
			else
				myrio_pkt_free(in[i]);
		}
	}
}

static inline void raw_advance_ms(struct raw *r, uint64_t ms)
{
	r->now_ns += ms * 1000000ull;
}

/* Lets ms of fake time pass, then polls. */
static inline void raw_wait_ms(struct raw *r, uint64_t ms)
{
	raw_advance_ms(r, ms);
	raw_poll(r);
}

/* The stack on r->sp (already open, as r->pp and r->pool): the test's clock and events,
 * our addresses, the peer's MAC static or not; the gratuitous ARP swallowed. */
static inline int raw_stack_up(struct raw *r, void (*tweak)(struct myrio_stack_conf *),
			       bool static_arp)
{
	struct myrio_stack_conf conf;
	myrio_stack_conf_init(&conf);
	conf.ip = STACK_IP;
	conf.netmask = 0xffffff00u;
	conf.clock = fake_clock_read;
	conf.clock_arg = &r->now_ns;
	conf.tcp_event = raw_tcp_event;
	conf.udp_event = raw_udp_event;
	conf.event_arg = r;
	conf.delayed_ack_ms = 0;
	conf.seed = 1;
	if (tweak)
		tweak(&conf);
	int rc = myrio_stack_create(&r->s, r->sp, &conf);
	if (rc < 0)
		return rc;
	struct myrio_port_info info;
	memset(&info, 0, sizeof(info));
	r->sp->ops->info(r->sp, &info);
	memcpy(r->smac, info.mac, 6);
	if (static_arp)
		myrio_arp_add_static(r->s, PEER_IP, peer_mac);
	raw_poll(r); /* swallow the gratuitous ARP */
	raw_drop_captured(r);
	return 0;
}

static inline int raw_open(struct raw *r, const char *name, const char *opts,
			   void (*tweak)(struct myrio_stack_conf *), bool static_arp)
{
	memset(r, 0, sizeof(*r));
	r->now_ns = 5000000000ull;
	char dev[96];
	snprintf(dev, sizeof(dev), "pair:%s/0%s", name, opts ? opts : "");
	int rc = myrio_pair_port_open(dev, NULL, &r->sp);
	if (rc < 0)
		return rc;
	snprintf(dev, sizeof(dev), "pair:%s/1", name);
	if ((rc = myrio_pair_port_open(dev, NULL, &r->pp)) < 0)
		return rc;
	if ((rc = myrio_pool_create_in(NULL, 512, 1984, &r->pool)) < 0)
		return rc;
	return raw_stack_up(r, tweak, static_arp);
}

static inline struct myrio_stack_stats raw_stats(struct raw *r)
{
	struct myrio_stack_stats st;
	myrio_stack_stats(r->s, &st);
	return st;
}

static inline void raw_close(struct raw *r)
{
	raw_drop_captured(r);
	/* Unplug the peer first: frames still on their way to it go back to the stack, so
	 * the stack finds all its buffers home when it is destroyed. */
	r->pp->ops->close(r->pp);
	myrio_stack_destroy(r->s);
	r->sp->ops->close(r->sp);
	myrio_pool_destroy(r->pool);
}

static inline void raw_send(struct raw *r, const uint8_t *frame, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(r->pool);
	if (!p)
		return;
	memcpy(myrio_pkt_data(p), frame, len);
	p->len = len;
	if (r->pp->ops->tx_burst(r->pp, &p, 1) != 1)
		myrio_pkt_free(p);
}

/* ---- frame building ---- */

static inline uint32_t build_eth(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	if (dst)
		memcpy(f, dst, 6);
	else
		memset(f, 0, 6);
	memcpy(f + 6, peer_mac, 6);
	put_be16(f + 12, type);
	return 14;
}

static inline uint32_t build_ip(uint8_t *ip, uint8_t proto, uint32_t src, uint32_t dst,
				uint16_t l4len)
{
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)(20 + l4len));
	put_be16(ip + 4, 0x1234);
	ip[8] = 64;
	ip[9] = proto;
	put_be32(ip + 12, src);
	put_be32(ip + 16, dst);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
	return 20;
}

static uint16_t l4_csum(uint32_t src, uint32_t dst, uint8_t proto, const uint8_t *l4, uint16_t len)
{
	uint64_t sum = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
	return csum_finish(csum_add(sum, l4, len));
}

struct tcpf {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	const uint8_t *opts;
	uint8_t optlen; /* multiple of 4 */
	const uint8_t *data;
	uint16_t len;
};

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

static inline uint32_t build_tcp(uint8_t *f, const struct tcpf *t)
{
	uint32_t n = build_eth(f, NULL, 0x0800);
	uint16_t l4len = (uint16_t)(20 + t->optlen + t->len);
	n += build_ip(f + n, 6, PEER_IP, STACK_IP, l4len);
	uint8_t *th = f + n;
	memset(th, 0, 20);
	put_be16(th, t->sport);
	put_be16(th + 2, t->dport);
	put_be32(th + 4, t->seq);
	put_be32(th + 8, t->ack);
	th[12] = (uint8_t)(((20 + t->optlen) / 4) << 4);
	th[13] = t->flags;
	put_be16(th + 14, t->win);
	if (t->optlen)
		memcpy(th + 20, t->opts, t->optlen);
	if (t->len)
		memcpy(th + 20 + t->optlen, t->data, t->len);
	put_be16(th + 16, l4_csum(PEER_IP, STACK_IP, 6, th, l4len));
	return n + l4len;
}

static inline void raw_send_tcp(struct raw *r, const struct tcpf *t)
{
	uint8_t f[2048];
	uint32_t n = build_tcp(f, t);
	memcpy(f, r->smac, 6);
	if (n < 60)
		memset(f + n, 0, 60 - n); /* Ethernet padding */
	raw_send(r, f, n < 60 ? 60 : n);
}

/* Sends t to the stack and polls it: its answers are captured. */
static inline void raw_send_tcp_poll(struct raw *r, const struct tcpf *t)
{
	raw_send_tcp(r, t);
	raw_poll(r);
}

/* ---- parsing what the stack sent ---- */

struct tcpv {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	const uint8_t *opts;
	unsigned optlen;
	const uint8_t *data;
	unsigned len;
};

/* The i-th captured TCP segment (checksums verified), or false. */
static inline bool cap_tcp(struct raw *r, unsigned i, struct tcpv *v)
{
	*v = (struct tcpv){0}; /* defined even when no such segment was captured */
	unsigned k = 0;
	for (unsigned j = 0; j < r->ncap; j++) {
		const uint8_t *f = myrio_pkt_data(r->cap[j]);
		uint32_t len = r->cap[j]->len;
		if (len < 54 || get_be16(f + 12) != 0x0800 || f[23] != 6)
			continue;
		if (k++ != i)
			continue;
		const uint8_t *ip = f + 14;
		uint16_t tot = get_be16(ip + 2);
		if (csum_fold(csum_add(0, ip, 20)) != 0xffff || tot + 14u > len)
			return false;
		const uint8_t *th = ip + 20;
		uint16_t l4len = (uint16_t)(tot - 20);
		if (l4_csum(get_be32(ip + 12), get_be32(ip + 16), 6, th, l4len) != 0)
			return false;
		v->sport = get_be16(th);
		v->dport = get_be16(th + 2);
		v->seq = get_be32(th + 4);
		v->ack = get_be32(th + 8);
		v->flags = th[13];
		v->win = get_be16(th + 14);
		unsigned hl = (th[12] >> 4) * 4u;
		v->opts = th + 20;
		v->optlen = hl - 20;
		v->data = th + hl;
		v->len = l4len - hl;
		return true;
	}
	return false;
}

static inline unsigned cap_count_tcp(struct raw *r)
{
	struct tcpv v;
	unsigned n = 0;
	while (cap_tcp(r, n, &v))
		n++;
	return n;
}

/* Finds option kind in a TCP option area; returns its offset or -1. */
static inline int find_opt(const uint8_t *o, unsigned len, uint8_t kind)
{
	unsigned i = 0;
	while (i < len) {
		if (o[i] == 0)
			break;
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || o[i + 1] < 2)
			break;
		if (o[i] == kind)
			return (int)i;
		i += o[i + 1];
	}
	return -1;
}

/* ---- a TCP peer driven by the test ---- */

struct peer {
	uint16_t sport, dport;
	uint32_t snd_nxt; /* our next sequence number */
	uint32_t rcv_nxt; /* the stack's next sequence number */
	uint32_t tsval, ts_stack;
	bool ts;
	uint16_t win;
	struct myrio_tcp_conn *c;
};

static inline unsigned peer_opts(const struct peer *p, uint8_t *o)
{
	if (!p->ts)
		return 0;
	o[0] = 1;
	o[1] = 1;
	o[2] = 8;
	o[3] = 10;
	put_be32(o + 4, p->tsval);
	put_be32(o + 8, p->ts_stack);
	return 12;
}

static inline void peer_send(struct raw *r, struct peer *p, uint8_t flags, const void *data,
			     uint16_t len)
{
	uint8_t o[40];
	struct tcpf t = {.sport = p->sport,
			 .dport = p->dport,
			 .seq = p->snd_nxt,
			 .ack = p->rcv_nxt,
			 .flags = flags,
			 .win = p->win,
			 .data = data,
			 .len = len};
	t.optlen = (uint8_t)peer_opts(p, o);
	t.opts = o;
	raw_send_tcp(r, &t);
	p->snd_nxt += len + ((flags & F_FIN) ? 1u : 0u);
}

static inline void peer_send_poll(struct raw *r, struct peer *p, uint8_t flags, const void *data,
				  uint16_t len)
{
	peer_send(r, p, flags, data, len);
	raw_poll(r);
}

/* The peer sends a bare ACK (of p->rcv_nxt, offering p->win) and the stack takes it in. */
static inline void peer_ack(struct raw *r, struct peer *p)
{
	peer_send(r, p, F_ACK, NULL, 0);
	raw_poll(r);
}

/* An ACK from the peer with a timestamp and n (up to 2) SACK blocks b. */
static inline void peer_send_sack(struct raw *r, struct peer *p, const uint32_t b[][2], unsigned n)
{
	uint8_t o[32] = {1, 1, 8, 10};
	put_be32(o + 4, p->tsval);
	put_be32(o + 8, p->ts_stack);
	o[12] = 1;
	o[13] = 1;
	o[14] = 5;
	o[15] = (uint8_t)(2 + 8 * n);
	for (unsigned k = 0; k < n; k++) {
		put_be32(o + 16 + 8 * k, b[k][0]);
		put_be32(o + 20 + 8 * k, b[k][1]);
	}
	struct tcpf t = {.sport = p->sport, .dport = p->dport, .seq = p->snd_nxt,
			 .ack = p->rcv_nxt, .flags = F_ACK, .win = p->win, .opts = o,
			 .optlen = (uint8_t)(16 + 8 * n)};
	raw_send_tcp(r, &t);
}

/* Passive open on the stack's port dport (must be listening): SYN with MSS 1460,
 * SACK-permitted, timestamps, window scale 7; SYN-ACK checked; final ACK. */
static inline void peer_connect(struct raw *r, struct peer *p, uint16_t sport, uint16_t dport,
				uint32_t isn, bool options)
{
	memset(p, 0, sizeof(*p));
	p->sport = sport;
	p->dport = dport;
	p->snd_nxt = isn;
	p->tsval = 1000;
	p->win = 65535;
	uint8_t o[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 1, 3, 3, 7};
	struct tcpf t = {.sport = sport,
			 .dport = dport,
			 .seq = isn,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = options ? 20 : 0};
	raw_send_tcp(r, &t);
	raw_poll(r);
	struct tcpv v;
	if (!cap_tcp(r, 0, &v) || v.flags != (F_SYN | F_ACK) || v.ack != isn + 1)
		return;
	p->snd_nxt = isn + 1;
	p->rcv_nxt = v.seq + 1;
	p->ts = options;
	int k = find_opt(v.opts, v.optlen, 8);
	if (k >= 0)
		p->ts_stack = get_be32(v.opts + k + 2);
	p->win = 65535; /* scaled by 7 from here on: plenty */
	peer_send(r, p, F_ACK, NULL, 0);
	raw_poll(r);
	p->c = r->last_conn;
}

/* ---- ICMP errors from the network ---- */

#define ROUTER_IP 0x0a0000feu /* 10.0.0.254: where ICMP errors come from */

/* The i-th captured frame of IP protocol proto (its IP header), or NULL. */
static inline const uint8_t *cap_ip(struct raw *r, uint8_t proto, unsigned i)
{
	unsigned k = 0;
	for (unsigned j = 0; j < r->ncap; j++) {
		const uint8_t *f = myrio_pkt_data(r->cap[j]);
		if (r->cap[j]->len >= 34 && get_be16(f + 12) == 0x0800 && f[23] == proto &&
		    k++ == i)
			return f + 14;
	}
	return NULL;
}

/* The peer's side sends ICMP type/code (rest: the 4 bytes after the checksum) quoting
 * qlen bytes of the datagram at quote, and the stack takes it in. */
static inline void icmp_in(struct raw *r, uint8_t type, uint8_t code, uint32_t rest,
			   const uint8_t *quote, uint32_t qlen)
{
	uint8_t f[256];
	uint32_t n = build_eth(f, r->smac, 0x0800);
	uint8_t *m = f + n + 20;
	memset(m, 0, 8);
	m[0] = type;
	m[1] = code;
	put_be32(m + 4, rest);
	memcpy(m + 8, quote, qlen);
	put_be16(m + 2, csum_finish(csum_add(0, m, 8 + qlen)));
	n += build_ip(f + n, 1, ROUTER_IP, STACK_IP, (uint16_t)(8 + qlen));
	n += 8 + qlen;
	if (n < 60) {
		memset(f + n, 0, 60 - n);
		n = 60;
	}
	raw_send(r, f, n);
	raw_poll(r);
}

/* A stack (its configuration changed by tweak unless NULL) on a fresh link called name,
 * listening on port 80 with a backlog of 16, and a peer connected to it from sport with
 * initial sequence number isn, all options offered. */
static inline int raw_connected(struct raw *r, const char *name,
				void (*tweak)(struct myrio_stack_conf *), struct peer *p,
				uint16_t sport, uint32_t isn)
{
	struct myrio_tcp_listener *l;
	int rc = raw_open(r, name, NULL, tweak, true);
	if (rc == 0)
		rc = myrio_tcp_listen(r->s, 80, 16, NULL, &l);
	if (rc < 0)
		return rc;
	peer_connect(r, p, sport, 80, isn, true);
	return p->c ? 0 : -ECONNREFUSED;
}

/* The stack connects to the peer's port: the SYN it sends is returned in v. */
static inline struct myrio_tcp_conn *raw_active_open(struct raw *r, uint16_t port, struct tcpv *v)
{
	struct myrio_tcp_conn *c;
	if (myrio_tcp_connect(r->s, PEER_IP, port, NULL, &c) < 0)
		return NULL;
	raw_poll(r);
	return cap_tcp(r, 0, v) ? c : NULL;
}

#endif
