/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: everything tcp_lite reads from the wire — Ethernet, ARP, IPv4 (options,
 * fragments, lengths), ICMP, UDP and TCP (state machine, options, SACK, timestamps, window
 * scaling, out-of-order data) — fed as frames into a stack bound to one end of an in-memory
 * pair port. The fuzzer owns the other end: it sends frames, reads what the stack answers,
 * and keeps the sequence numbers the stack uses so that generated segments can land
 * inside the window (raw frames cannot guess an ISN).
 *
 * Input: one configuration byte (offloads, TCP options, delayed ACKs, Nagle), then a
 * sequence of operations, each one opcode byte and its arguments (see the switch below).
 * The stack under test has a TCP listener on port 80, an active connection to the fuzzer's
 * port 1234 and a UDP socket on port 53; the application side reads everything, echoes
 * some of it back and closes on end of stream.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_wrap_port.h"
#include "myrio/port.h"
#include "myrio/tcp_lite.h"
#include "port/port_ops.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define STACK_IP 0x0a000001u /* 10.0.0.1, the stack under test */
#define PEER_IP 0x0a000002u  /* 10.0.0.2, the fuzzer */
#define LISTEN_PORT 80
#define UDP_PORT 53
#define PEER_PORT 1234 /* the stack connects here */
#define MAX_FLOWS 8
#define MAX_CONNS 16

/* What the fuzzer knows about one TCP flow from the stack's own segments. */
struct flow {
	uint16_t sport, dport; /* stack's port, peer's port */
	uint32_t stack_nxt;    /* the stack's seq + len of its last segment: what to ACK */
	uint32_t stack_ack;    /* the ACK number the stack last sent: the next seq it wants */
	bool seen;
};

struct harness {
	struct myrio_port *sp, *fp; /* stack's port, fuzzer's port */
	struct myrio_stack *s;
	struct myrio_pool *pool;    /* fuzzer's transmit buffers */
	struct fuzz_wrap_port wrap; /* what the stack is bound to */
	uint8_t smac[6], fmac[6];
	uint64_t now_ns;
	struct flow flows[MAX_FLOWS];
	struct myrio_tcp_conn *conns[MAX_CONNS];
	uint8_t echo; /* bytes to echo back on readable */
};

static uint64_t fake_clock(void *arg)
{
	return ((struct harness *)arg)->now_ns;
}

static void conn_forget(struct harness *h, struct myrio_tcp_conn *c)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (h->conns[i] == c)
			h->conns[i] = NULL;
}

static void conn_remember(struct harness *h, struct myrio_tcp_conn *c)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (!h->conns[i]) {
			h->conns[i] = c;
			return;
		}
	myrio_tcp_abort(c); /* more than the harness tracks */
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct harness *h = arg;
	uint8_t buf[2048];
	switch (ev) {
	case MYRIO_TCP_EV_ACCEPTED:
		conn_remember(h, c);
		break;
	case MYRIO_TCP_EV_CONNECTED:
	case MYRIO_TCP_EV_WRITABLE:
		break;
	case MYRIO_TCP_EV_READABLE: {
		ssize_t n;
		while ((n = myrio_tcp_read(c, buf, sizeof(buf))) > 0) {
			size_t e = (size_t)n < h->echo ? (size_t)n : h->echo;
			if (e)
				myrio_tcp_write(c, buf, e);
		}
		if (n == 0 && myrio_tcp_eof(c))
			myrio_tcp_shutdown(c);
		break;
	}
	case MYRIO_TCP_EV_CLOSED:
	case MYRIO_TCP_EV_ERROR:
		conn_forget(h, c);
		myrio_tcp_close(c);
		break;
	}
}

static void on_udp(void *arg, struct myrio_udp_sock *u)
{
	(void)arg;
	struct myrio_pkt *p;
	uint32_t ip;
	uint16_t port;
	while ((p = myrio_udp_recv(u, &ip, &port)) != NULL)
		myrio_pkt_free(p);
}

static struct flow *flow_get(struct harness *h, uint16_t sport, uint16_t dport, bool create)
{
	struct flow *free_f = NULL;
	for (int i = 0; i < MAX_FLOWS; i++) {
		struct flow *f = &h->flows[i];
		if (f->seen && f->sport == sport && f->dport == dport)
			return f;
		if (!f->seen && !free_f)
			free_f = f;
	}
	if (!create)
		return NULL;
	if (!free_f)
		free_f = &h->flows[sport % MAX_FLOWS];
	memset(free_f, 0, sizeof(*free_f));
	free_f->sport = sport;
	free_f->dport = dport;
	free_f->seen = true;
	return free_f;
}

/* Learns sequence numbers from a frame the stack sent. */
static void observe(struct harness *h, const uint8_t *f, uint32_t len)
{
	if (len < 14 + 20 + 20 || get_be16(f + 12) != 0x0800 || f[23] != 6)
		return;
	uint32_t ihl = (f[14] & 15u) * 4u;
	uint32_t tot = get_be16(f + 16);
	if (ihl < 20 || tot > len - 14 || tot < ihl + 20)
		return;
	const uint8_t *t = f + 14 + ihl;
	uint32_t doff = (t[12] >> 4) * 4u;
	if (doff < 20 || doff > tot - ihl)
		return;
	uint8_t flags = t[13];
	struct flow *fl = flow_get(h, get_be16(t), get_be16(t + 2), true);
	uint32_t seq = get_be32(t + 4), plen = tot - ihl - doff;
	fl->stack_nxt = seq + plen + ((flags & 0x02) ? 1 : 0) + ((flags & 0x01) ? 1 : 0);
	if (flags & 0x10)
		fl->stack_ack = get_be32(t + 8);
}

static void drain(struct harness *h)
{
	struct myrio_pkt *pkts[32];
	uint16_t n;
	while ((n = myrio_rx_burst(h->fp, pkts, 32)) > 0) {
		for (uint16_t i = 0; i < n; i++) {
			observe(h, myrio_pkt_data(pkts[i]), pkts[i]->len);
			myrio_pkt_free(pkts[i]);
		}
	}
}

static void drain_arg(void *h)
{
	drain(h);
}

static void settle(struct harness *h)
{
	for (int i = 0; i < 4; i++) {
		myrio_stack_poll(h->s);
		drain(h);
	}
}

static void send_frame(struct harness *h, const uint8_t *f, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(h->pool);
	if (!p)
		return;
	if (len > myrio_pkt_tailroom(p))
		len = myrio_pkt_tailroom(p);
	if (len)
		memcpy(myrio_pkt_data(p), f, len);
	p->len = len;
	if (myrio_tx_burst(h->fp, &p, 1) != 1)
		myrio_pkt_free(p);
	settle(h);
}

static void eth_ip_header(struct harness *h, uint8_t *f, uint8_t proto, uint32_t l4_len,
			  uint8_t ttl, uint16_t frag)
{
	memcpy(f, h->smac, 6);
	memcpy(f + 6, h->fmac, 6);
	put_be16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[1] = 0;
	put_be16(ip + 2, (uint16_t)(20 + l4_len));
	put_be16(ip + 4, 0x1234);
	put_be16(ip + 6, frag);
	ip[8] = ttl ? ttl : 64;
	ip[9] = proto;
	put_be16(ip + 10, 0);
	put_be32(ip + 12, PEER_IP);
	put_be32(ip + 16, STACK_IP);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
}

static uint16_t l4_csum(const uint8_t *ip, const uint8_t *l4, uint32_t l4_len, uint8_t proto)
{
	uint8_t ph[12];
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = proto;
	put_be16(ph + 10, (uint16_t)l4_len);
	return csum_finish(csum_add(csum_add(0, ph, 12), l4, l4_len));
}

/* Recomputes IPv4 header and TCP/UDP/ICMP checksums of a raw frame where lengths allow. */
static void fix_checksums(uint8_t *f, uint32_t len)
{
	if (len < 34 || get_be16(f + 12) != 0x0800)
		return;
	uint8_t *ip = f + 14;
	uint32_t ihl = (ip[0] & 15u) * 4u, tot = get_be16(ip + 2);
	if (ihl < 20 || 14 + ihl > len)
		return;
	put_be16(ip + 10, 0);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, ihl)));
	if (tot < ihl || 14 + tot > len)
		return;
	uint8_t *l4 = ip + ihl;
	uint32_t l4_len = tot - ihl;
	if (ip[9] == 6 && l4_len >= 20) {
		put_be16(l4 + 16, 0);
		put_be16(l4 + 16, l4_csum(ip, l4, l4_len, 6));
	} else if (ip[9] == 17 && l4_len >= 8) {
		put_be16(l4 + 6, 0);
		put_be16(l4 + 6, l4_csum(ip, l4, l4_len, 17));
	} else if (ip[9] == 1 && l4_len >= 4) {
		put_be16(l4 + 2, 0);
		put_be16(l4 + 2, csum_finish(csum_add(0, l4, l4_len)));
	}
}

static const uint16_t peer_ports[4] = {PEER_PORT, 40000, 40001, 40002};

/* A TCP segment from the fuzzer, with sequence numbers relative to what the stack said. */
static void op_tcp(struct harness *h, struct fuzz_in *in)
{
	uint8_t sel = fuzz_u8(in), flags = fuzz_u8(in), mode = fuzz_u8(in);
	uint16_t peer_port = peer_ports[sel & 3];
	uint16_t stack_port = (sel & 4) ? LISTEN_PORT : 0;
	if (!stack_port) {
		/* the active connection's local port, once the stack has used it */
		for (int i = 0; i < MAX_FLOWS; i++)
			if (h->flows[i].seen && h->flows[i].dport == PEER_PORT)
				stack_port = h->flows[i].sport;
		if (!stack_port)
			stack_port = LISTEN_PORT;
	}
	if (sel & 8)
		stack_port = fuzz_u16(in);
	int16_t dseq = (int16_t)fuzz_u16(in), dack = (int16_t)fuzz_u16(in);
	uint16_t win = fuzz_u16(in);
	const uint8_t *opt = NULL, *pay = NULL;
	size_t optlen = fuzz_bytes(in, &opt, fuzz_u8(in) % 41);
	size_t paylen = fuzz_u16(in) % 1461;
	uint8_t fill = fuzz_u8(in);
	size_t raw_pay = (mode & 0x40) ? fuzz_bytes(in, &pay, paylen) : 0;

	struct flow *fl = flow_get(h, stack_port, peer_port, false);
	uint32_t seq = fl ? fl->stack_ack : 1000, ack = fl ? fl->stack_nxt : 0;
	seq += (mode & 1) ? (uint32_t)(int32_t)dseq * 1000u : (uint32_t)(int32_t)(dseq % 64);
	ack += (mode & 2) ? (uint32_t)(int32_t)dack * 1000u : (uint32_t)(int32_t)(dack % 64);
	if (mode & 4)
		seq = (uint32_t)dseq << 16 | (uint16_t)dack; /* anywhere */

	uint8_t f[14 + 20 + 60 + 1460];
	uint32_t thl = 20 + (uint32_t)((optlen + 3) & ~3u);
	uint32_t l4_len = thl + (uint32_t)paylen;
	eth_ip_header(h, f, 6, l4_len, 64, 0x4000);
	uint8_t *t = f + 34;
	put_be16(t, peer_port);
	put_be16(t + 2, stack_port);
	put_be32(t + 4, seq);
	put_be32(t + 8, ack);
	t[12] = (uint8_t)(thl / 4) << 4;
	t[13] = flags;
	put_be16(t + 14, win);
	put_be16(t + 16, 0);
	put_be16(t + 18, (mode & 8) ? fuzz_u16(in) : 0); /* urgent pointer */
	memset(t + 20, 1, thl - 20);			 /* NOP padding */
	if (optlen)
		memcpy(t + 20, opt, optlen);
	memset(t + thl, fill, paylen);
	if (raw_pay)
		memcpy(t + thl, pay, raw_pay);
	if (mode & 0x10)
		t[12] = (uint8_t)((t[12] & 0x0f) | (fuzz_u8(in) & 0xf0)); /* lying data offset */
	put_be16(t + 16, l4_csum(f + 14, t, l4_len, 6));
	if (mode & 0x20)
		t[16] ^= 0x55; /* bad checksum */
	send_frame(h, f, 34 + l4_len);
}

static void op_udp(struct harness *h, struct fuzz_in *in)
{
	uint16_t dport = (fuzz_u8(in) & 1) ? UDP_PORT : fuzz_u16(in);
	uint16_t sport = fuzz_u16(in);
	const uint8_t *pay;
	size_t n = fuzz_bytes(in, &pay, fuzz_u16(in) % 1473);
	uint8_t flags = fuzz_u8(in);
	uint8_t f[14 + 20 + 8 + 1472];
	eth_ip_header(h, f, 17, 8 + (uint32_t)n, 64, 0x4000);
	uint8_t *u = f + 34;
	put_be16(u, sport);
	put_be16(u + 2, dport);
	put_be16(u + 4, (flags & 1) ? fuzz_u16(in) : (uint16_t)(8 + n));
	put_be16(u + 6, 0);
	if (n)
		memcpy(u + 8, pay, n);
	if (!(flags & 2))
		put_be16(u + 6, l4_csum(f + 14, u, 8 + (uint32_t)n, 17));
	send_frame(h, f, 42 + (uint32_t)n);
}

/* An ICMP error quoting a segment of a flow the stack has sent on (its ports, a sequence
 * number near its last), so that errors get past the tuple and sequence checks: hard,
 * soft and "fragmentation needed" with the next-hop MTU fuzzed (path MTU, resegmenting). */
static size_t icmp_quote_flow(struct harness *h, struct fuzz_in *in, uint8_t sel, uint8_t *q)
{
	const struct flow *fl = NULL;
	for (unsigned i = 0; i < MAX_FLOWS && !fl; i++) /* the first seen from sel on */
		if (h->flows[(sel + i) % MAX_FLOWS].seen)
			fl = &h->flows[(sel + i) % MAX_FLOWS];
	if (!fl)
		return 0;
	memset(q, 0, 28);
	q[0] = 0x45;
	put_be16(q + 2, 1500);
	q[8] = 64;
	q[9] = 6;
	put_be32(q + 12, STACK_IP);
	put_be32(q + 16, PEER_IP);
	put_be16(q + 20, fl->sport);
	put_be16(q + 22, fl->dport);
	put_be32(q + 24, fl->stack_nxt - fuzz_u16(in) % 8192);
	return 28;
}

static void op_icmp(struct harness *h, struct fuzz_in *in)
{
	uint8_t type = fuzz_u8(in), code = fuzz_u8(in);
	uint32_t rest = 0x00010001;
	const uint8_t *pay;
	uint8_t quote[28];
	size_t qn = 0;
	if (type & 0x80) {
		qn = icmp_quote_flow(h, in, code >> 4, quote);
		type = (type & 1) ? 11 : 3;
		code &= 0x0f;
		rest = fuzz_u16(in);
	}
	size_t n = fuzz_bytes(in, &pay, fuzz_u16(in) % (1473 - qn));
	uint8_t f[14 + 20 + 8 + 1472];
	eth_ip_header(h, f, 1, 8 + (uint32_t)(qn + n), 64, 0);
	uint8_t *c = f + 34;
	c[0] = type;
	c[1] = code;
	put_be16(c + 2, 0);
	put_be32(c + 4, rest);
	if (qn)
		memcpy(c + 8, quote, qn);
	if (n)
		memcpy(c + 8 + qn, pay, n);
	n += qn;
	put_be16(c + 2, csum_finish(csum_add(0, c, 8 + n)));
	send_frame(h, f, 42 + (uint32_t)n);
}

static void op_arp(struct harness *h, struct fuzz_in *in)
{
	uint8_t f[60];
	memset(f, 0, sizeof(f));
	uint8_t sel = fuzz_u8(in);
	memset(f, 0xff, 6);
	if (sel & 1)
		memcpy(f, h->smac, 6);
	memcpy(f + 6, h->fmac, 6);
	put_be16(f + 12, 0x0806);
	put_be16(f + 14, 1);
	put_be16(f + 16, 0x0800);
	f[18] = 6;
	f[19] = 4;
	put_be16(f + 20, (sel & 2) ? 2 : 1);
	memcpy(f + 22, h->fmac, 6);
	put_be32(f + 28, (sel & 4) ? fuzz_u32(in) : PEER_IP);
	put_be32(f + 38, (sel & 8) ? fuzz_u32(in) : STACK_IP);
	if (sel & 16) { /* corrupt a header byte */
		uint8_t at = fuzz_u8(in) % 28;
		f[14 + at] = fuzz_u8(in);
	}
	send_frame(h, f, 60);
}

static void op_app(struct harness *h, struct fuzz_in *in)
{
	uint8_t sel = fuzz_u8(in);
	struct myrio_tcp_conn *c = h->conns[(sel >> 4) % MAX_CONNS];
	if (!c)
		return;
	uint8_t buf[4096];
	memset(buf, 'x', sizeof(buf));
	switch (sel & 3) {
	case 0:
		myrio_tcp_write(c, buf, (size_t)fuzz_u16(in) % sizeof(buf));
		break;
	case 1:
		myrio_tcp_shutdown(c);
		break;
	case 2:
		conn_forget(h, c);
		myrio_tcp_close(c);
		break;
	case 3:
		conn_forget(h, c);
		myrio_tcp_abort(c);
		break;
	}
	settle(h);
}

/* The two ports and the fuzzer's buffers live for the whole run (creating DMA pools per
 * input would dominate the time); each input gets a fresh stack on them. */
static struct myrio_port *ports[2];
static struct myrio_pool *fuzz_pool;

static int ports_open(uint8_t cfg)
{
	static int opened_cfg = -1;
	if (opened_cfg == (cfg & 1))
		return 0;
	if (opened_cfg >= 0) {
		myrio_port_close(ports[0]);
		myrio_port_close(ports[1]);
		myrio_pool_destroy(fuzz_pool);
	}
	opened_cfg = -1;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	const char *opt = (cfg & 1) ? "?ring=64,rxpool=128,nocsum" : "?ring=64,rxpool=128";
	char dev[64];
	snprintf(dev, sizeof(dev), "pair:fz/0%s", opt);
	if (myrio_port_open(&ports[0], dev, &pc) < 0)
		return -1;
	snprintf(dev, sizeof(dev), "pair:fz/1%s", opt);
	if (myrio_port_open(&ports[1], dev, &pc) < 0)
		return -1;
	if (myrio_port_pool_create(ports[1], 64, 2048, &fuzz_pool) < 0)
		return -1;
	opened_cfg = cfg & 1;
	return 0;
}

static int harness_open(struct harness *h, uint8_t cfg)
{
	memset(h, 0, sizeof(*h));
	h->now_ns = 1000000000ull;
	if (ports_open(cfg) < 0)
		return -1;
	h->sp = ports[0];
	h->fp = ports[1];
	h->pool = fuzz_pool;
	struct myrio_port_info info;
	myrio_port_info(h->sp, &info);
	memcpy(h->smac, info.mac, 6);
	myrio_port_info(h->fp, &info);
	memcpy(h->fmac, info.mac, 6);
	struct myrio_stack_conf c;
	myrio_stack_conf_init(&c);
	c.ip = STACK_IP;
	c.netmask = 0xffffff00u;
	c.max_tcp_conns = MAX_CONNS;
	c.max_listeners = 2;
	c.max_udp_socks = 2;
	c.arp_entries = 4;
	c.tx_pool_size = 64;
	c.snd_queue_segs = 16;
	c.rcv_buf = 8192;
	c.ooo_max_segs = 8;
	c.udp_rx_queue = 4;
	c.reass_slots = 2; /* reassembly reachable, with eviction, at little set-up cost */
	c.sack = !(cfg & 2);
	c.timestamps = !(cfg & 4);
	c.window_scale = !(cfg & 8);
	c.nagle = cfg & 16;
	c.delayed_ack_ms = (cfg & 32) ? 0 : 40;
	c.seed = 42;
	c.clock = fake_clock;
	c.clock_arg = h;
	c.tcp_event = on_tcp;
	c.udp_event = on_udp;
	c.event_arg = h;
	h->echo = (cfg & 64) ? 100 : 0;
	fuzz_wrap_init(&h->wrap, h->sp, NULL, drain_arg, h);
	if (myrio_stack_create(&h->s, &h->wrap.port, &c) < 0)
		return -1;
	struct myrio_tcp_listener *l;
	struct myrio_udp_sock *u;
	struct myrio_tcp_conn *ac;
	if (myrio_tcp_listen(h->s, LISTEN_PORT, 4, NULL, &l) < 0 ||
	    myrio_udp_open(h->s, UDP_PORT, NULL, &u) < 0)
		return -1;
	if (cfg & 128) /* resolve by ARP, or statically */
		myrio_arp_add_static(h->s, PEER_IP, h->fmac);
	if (myrio_tcp_connect(h->s, PEER_IP, PEER_PORT, NULL, &ac) == 0)
		conn_remember(h, ac);
	settle(h);
	return 0;
}

static void harness_close(struct harness *h)
{
	const char *dbg = getenv("MYRIO_FUZZ_STATS");
	if (h->s && dbg && *dbg == '1') {
		struct myrio_stack_stats st;
		myrio_stack_stats(h->s, &st);
		fprintf(stderr,
			"rx %lu tx %lu arp %lu icmp %lu udp %lu tcp in %lu out %lu established %lu "
			"ooo %lu retx %lu rst_in %lu rst_out %lu challenge %lu drop_csum %lu\n",
			(unsigned long)st.rx_frames, (unsigned long)st.tx_frames,
			(unsigned long)st.arp_rx, (unsigned long)st.icmp_rx,
			(unsigned long)st.udp_rx, (unsigned long)st.tcp_segs_in,
			(unsigned long)st.tcp_segs_out, (unsigned long)st.tcp_conns_established,
			(unsigned long)st.tcp_ooo_segs, (unsigned long)st.tcp_retransmits,
			(unsigned long)st.tcp_resets_rcvd, (unsigned long)st.tcp_resets_sent,
			(unsigned long)st.tcp_challenge_acks, (unsigned long)st.drop_tcp_csum);
	}
	if (h->s)
		myrio_stack_destroy(h->s);
	/* Frames the stack never read: the next input starts on an empty link. */
	struct myrio_pkt *pkts[32];
	uint16_t n;
	while ((n = myrio_rx_burst(h->sp, pkts, 32)) > 0)
		myrio_pkt_free_bulk(pkts, n);
	drain(h);
	/* every fuzzer buffer is back once the stack's port copied it */
	myrio_tx_burst(h->fp, NULL, 0);
	if (myrio_pool_free_count(h->pool) != h->pool->count)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		fuzz_quiet();
		init = 1;
	}
	struct fuzz_in in = {data, size};
	struct harness h;
	if (harness_open(&h, fuzz_u8(&in)) < 0)
		abort(); /* the set-up itself must always work */
	for (unsigned steps = 0; in.n && steps < 256; steps++) {
		uint8_t op = fuzz_u8(&in);
		switch (op % 10) {
		case 0:
		case 1: {
			const uint8_t *f;
			size_t n = fuzz_bytes(&in, &f, fuzz_u16(&in) % 1515);
			uint8_t buf[1514];
			if (n)
				memcpy(buf, f, n);
			if (op & 0x10)
				fix_checksums(buf, (uint32_t)n);
			send_frame(&h, buf, (uint32_t)n);
			break;
		}
		case 2:
		case 3:
		case 4:
			op_tcp(&h, &in);
			break;
		case 5:
			op_udp(&h, &in);
			break;
		case 6:
			op_icmp(&h, &in);
			break;
		case 7:
			op_arp(&h, &in);
			break;
		case 8: /* time passes: timers, retransmissions, TIME_WAIT, ARP expiry */
			h.now_ns +=
			    (uint64_t)fuzz_u16(&in) * ((op & 0x10) ? 1000000000ull : 1000000ull);
			settle(&h);
			break;
		case 9:
			op_app(&h, &in);
			break;
		}
	}
	harness_close(&h);
	return 0;
}
