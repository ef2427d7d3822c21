/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: one TCP connection's whole life. The fuzzer completes a handshake with
 * tcp_lite (passive or active, the peer's SYN options fuzzed: MSS, window scale, SACK,
 * timestamps or raw option bytes), then interleaves fuzzed segments that stay close to
 * the window (data, ACKs, SACK blocks, window updates, FIN, RST), ICMP errors quoting the
 * stack's own segments, time passing, and the application's writes, reads, zero-copy
 * holds and releases, shutdowns and closes.
 *
 * Checked on the way, beyond what ASan and UBSan see:
 *  - every frame the stack hands to its port lies inside its buffer, within the MTU, with
 *    IP and TCP lengths that agree;
 *  - every packet header of the stack's transmit pool is intact after every step: a
 *    buffer written past its end corrupts its neighbour's header, in memory ASan cannot
 *    watch (the pool is one DMA region);
 *  - myrio_tcp_mss() never exceeds what a buffer holds;
 *  - sequence space: snd_una <= snd_nxt <= snd_max, the queues' counts match their lists;
 *  - after every connection is aborted, every transmit buffer is back in the pool.
 *
 * Input: a configuration byte, the handshake's bytes, then operations (see the switch).
 */
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"
#include "fuzz_wrap_port.h"
#include "myrio/port.h"
#include "myrio/tcp_lite.h"
#include "port/port_ops.h"
#include "tcp_lite/stack.h"
#include "util/byteorder.h"
#include "util/csum.h"

#define STACK_IP 0x0a000001u /* 10.0.0.1, the stack under test */
#define PEER_IP 0x0a000002u  /* 10.0.0.2, the fuzzer */
#define STACK_PORT 80
#define PEER_PORT 4321
#define TX_POOL 64
#define MAX_HELD 32

struct session {
	struct myrio_port *sp, *fp; /* stack's port, fuzzer's port */
	struct myrio_pool *pool;    /* fuzzer's transmit buffers */
	struct fuzz_wrap_port wrap;
	struct myrio_stack *s;
	struct myrio_tcp_conn *c;
	uint8_t smac[6], fmac[6];
	uint64_t now_ns;
	uint32_t mtu;
	/* what the fuzzer knows */
	uint32_t peer_nxt;	       /* its own next sequence number */
	uint32_t stack_una, stack_max; /* the stack's: last ACKed by us, after its highest */
	uint32_t stack_tsval;	       /* the stack's last TSval */
	uint16_t stack_port, peer_port;
	bool synced, ts;
	uint8_t last_seg[28]; /* the stack's last TCP segment: IP header + 8 bytes */
	bool have_last;
	struct myrio_pkt *held[MAX_HELD];
	unsigned nheld;
};

/* An invariant does not hold: say which (the crash's input reproduces it). */
static void broken(const char *what)
{
	fprintf(stderr, "fuzz_tcp_session: %s\n", what);
	abort();
}

static uint64_t fake_clock(void *arg)
{
	return ((struct session *)arg)->now_ns;
}

static void on_tcp(void *arg, struct myrio_tcp_conn *c, enum myrio_tcp_event ev)
{
	struct session *x = arg;
	if (ev == MYRIO_TCP_EV_ACCEPTED && !x->c)
		x->c = c;
	else if (ev == MYRIO_TCP_EV_ACCEPTED)
		myrio_tcp_abort(c); /* one connection per session */
}

/* A frame the stack sends: inside its buffer and consistent, or the run stops here. */
static void check_frame(struct session *x, const struct myrio_pkt *p)
{
	if ((uint64_t)p->data_off + p->len > p->buf_len)
		broken("a frame runs past its buffer");
	if (p->ol_flags & MYRIO_PKT_TX_TSO)
		return; /* a chain: the NIC cuts it; its pieces are checked as buffers */
	if (p->len < 14 || p->len > x->mtu + 14)
		broken("a frame longer than the MTU");
	const uint8_t *f = myrio_pkt_data(p);
	if (get_be16(f + 12) != 0x0800 || p->len < 34)
		return;
	const uint8_t *ip = f + 14;
	uint32_t ihl = (ip[0] & 15u) * 4u, tot = get_be16(ip + 2);
	if (ihl < 20 || tot < ihl || tot > x->mtu || 14 + tot > p->len)
		broken("IPv4 lengths inconsistent or beyond the MTU");
	if (ip[9] != 6)
		return;
	if (tot < ihl + 20)
		broken("TCP header cut short");
	const uint8_t *t = ip + ihl;
	uint32_t doff = (t[12] >> 4) * 4u;
	if (doff < 20 || doff > tot - ihl)
		broken("TCP data offset outside the segment");
	uint32_t seq = get_be32(t + 4), plen = tot - ihl - doff;
	uint8_t flags = t[13];
	if (flags & 0x02) {
		x->synced = true;
		x->stack_una = seq;
		x->stack_max = seq;
		x->stack_port = get_be16(t);
	}
	uint32_t end = seq + plen + ((flags & 0x03) ? 1u : 0u);
	if (x->synced && (int32_t)(end - x->stack_max) > 0)
		x->stack_max = end;
	for (uint32_t i = 20; i + 1 < doff;) { /* the stack's TSval, for our TSecr */
		uint8_t kind = t[i];
		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		uint8_t l = t[i + 1];
		if (l < 2 || i + l > doff)
			break;
		if (kind == 8 && l == 10)
			x->stack_tsval = get_be32(t + i + 2);
		i += l;
	}
	memcpy(x->last_seg, ip, 28);
	x->have_last = true;
}

static void drain(struct session *x)
{
	struct myrio_pkt *pkts[32];
	uint16_t n;
	while ((n = myrio_rx_burst(x->fp, pkts, 32)) > 0)
		myrio_pkt_free_bulk(pkts, n);
}

/* Everything the stack sends passes here before the pair port copies it. */
static void check_burst(void *arg, struct myrio_pkt **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		for (const struct myrio_pkt *q = pkts[i]; q;
		     q = (q->ol_flags & MYRIO_PKT_TX_TSO) ? q->next : NULL)
			check_frame(arg, q);
}

static void drain_arg(void *x)
{
	drain(x);
}

/* Every element's header of the stack's pool is what the pool wrote: a buffer written past
 * its end shows here as its neighbour's header overwritten. */
static void check_pool(const struct myrio_pool *pool)
{
	for (uint32_t i = 0; i < pool->count; i++) {
		const struct myrio_pkt *p =
		    (const struct myrio_pkt *)(pool->base + (size_t)pool->elem_size * i);
		if (p->pool != pool || p->buf_len != pool->buf_len ||
		    p->iova != pool->base_iova + (uint64_t)pool->elem_size * i + sizeof(*p))
			broken("a transmit pool header was overwritten (a buffer overrun)");
	}
}

static uint32_t list_count(const struct myrio_pkt *p)
{
	uint32_t n = 0;
	for (; p; p = p->next)
		n++;
	return n;
}

static void check_conn(const struct myrio_tcp_conn *c)
{
	if (c->state < MYRIO_TCP_ESTABLISHED)
		return;
	if (!seq_le(c->snd_una, c->snd_nxt) || !seq_le(c->snd_nxt, c->snd_max))
		broken("not snd_una <= snd_nxt <= snd_max");
	if (list_count(c->sndq) != c->sndq_segs || list_count(c->ooo) != c->ooo_segs)
		broken("a queue's count differs from its list");
	uint32_t queued = 0;
	for (const struct myrio_pkt *p = c->rcvq; p; p = p->next)
		queued += p->len;
	if (queued > c->rcv_held)
		broken("receive queue holds more than rcv_held");
}

static void check(struct session *x)
{
	check_pool(x->s->pool);
	for (const struct myrio_tcp_conn *c = x->s->active; c; c = c->next)
		check_conn(c);
	if (x->c && myrio_tcp_mss(x->c) > myrio_stack_pkt_room(x->s))
		broken("myrio_tcp_mss() is more than a buffer holds");
}

static void settle(struct session *x)
{
	for (int i = 0; i < 3; i++) {
		myrio_stack_poll(x->s);
		drain(x);
	}
	check(x);
}

static void send_frame(struct session *x, const uint8_t *f, uint32_t len)
{
	struct myrio_pkt *p = myrio_pkt_alloc(x->pool);
	if (!p)
		return;
	if (len > myrio_pkt_tailroom(p))
		len = myrio_pkt_tailroom(p);
	memcpy(myrio_pkt_data(p), f, len);
	p->len = len;
	if (myrio_tx_burst(x->fp, &p, 1) != 1)
		myrio_pkt_free(p);
	settle(x);
}

static uint32_t ip_header(struct session *x, uint8_t *f, uint8_t proto, uint32_t l4_len)
{
	memcpy(f, x->smac, 6);
	memcpy(f + 6, x->fmac, 6);
	put_be16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put_be16(ip + 2, (uint16_t)(20 + l4_len));
	put_be16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = proto;
	put_be32(ip + 12, PEER_IP);
	put_be32(ip + 16, STACK_IP);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
	return 34;
}

/* A segment from the peer's port to the stack's: options given, payload a fill byte. */
static void send_tcp(struct session *x, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
		     const uint8_t *opt, uint32_t optlen, uint32_t paylen, uint8_t fill)
{
	static uint8_t f[14 + 20 + 60 + 9000];
	uint32_t thl = 20 + ((optlen + 3) & ~3u);
	if (paylen > x->mtu - 20 - thl)
		paylen = x->mtu - 20 - thl;
	uint32_t l4_len = thl + paylen;
	uint8_t *t = f + ip_header(x, f, 6, l4_len);
	put_be16(t, x->peer_port);
	put_be16(t + 2, x->stack_port);
	put_be32(t + 4, seq);
	put_be32(t + 8, ack);
	t[12] = (uint8_t)(thl / 4) << 4;
	t[13] = flags;
	put_be16(t + 14, win);
	put_be32(t + 16, 0);
	memset(t + 20, 1, thl - 20);
	if (optlen)
		memcpy(t + 20, opt, optlen);
	memset(t + thl, fill, paylen);
	uint8_t ph[12];
	memcpy(ph, f + 14 + 12, 8);
	ph[8] = 0;
	ph[9] = 6;
	put_be16(ph + 10, (uint16_t)l4_len);
	put_be16(t + 16, csum_finish(csum_add(csum_add(0, ph, 12), t, l4_len)));
	send_frame(x, f, 34 + l4_len);
}

/* $MYRIO_FUZZ_MSS_FLOOR=N raises every MSS the peer offers to at least N, for long runs
 * past a known small-MSS defect; 0 (default) offers any. */
static uint16_t mss_floor;

/* The peer's SYN or SYN-ACK options: structured (MSS, scale, SACK, timestamps) or raw. */
static uint32_t syn_options(struct session *x, struct fuzz_in *in, uint8_t *o)
{
	uint8_t sel = fuzz_u8(in);
	if (sel & 0x80) {
		const uint8_t *raw;
		uint32_t n = (uint32_t)fuzz_bytes(in, &raw, fuzz_u8(in) % 41);
		memcpy(o, raw, n);
		x->ts = false;
		for (uint32_t i = 0; i < n; i++) {
			if (o[i] == 8)
				x->ts = true; /* a guess: harmless if wrong */
			if (o[i] == 2 && i + 3 < n && get_be16(o + i + 2) < mss_floor)
				put_be16(o + i + 2, mss_floor);
		}
		return n;
	}
	uint32_t n = 0;
	if (sel & 1) {
		o[n++] = 2, o[n++] = 4;
		uint16_t mss = fuzz_u16(in);
		if (sel & 0x40)
			mss &= 0x7f; /* tiny ones often */
		if (mss < mss_floor)
			mss = mss_floor;
		put_be16(o + n, mss);
		n += 2;
	}
	if (sel & 2)
		o[n++] = 1, o[n++] = 3, o[n++] = 3, o[n++] = fuzz_u8(in) & 0x1f;
	if (sel & 4)
		o[n++] = 1, o[n++] = 1, o[n++] = 4, o[n++] = 2;
	x->ts = sel & 8;
	if (x->ts) {
		o[n++] = 1, o[n++] = 1, o[n++] = 8, o[n++] = 10;
		put_be32(o + n, 1000);
		put_be32(o + n + 4, x->stack_tsval);
		n += 8;
	}
	return n;
}

/* Timestamps (when in use) and SACK blocks near what the stack sent. */
static uint32_t seg_options(struct session *x, struct fuzz_in *in, uint8_t sel, uint8_t *o)
{
	uint32_t n = 0;
	if (x->ts && !(sel & 0x80)) {
		o[n++] = 1, o[n++] = 1, o[n++] = 8, o[n++] = 10;
		put_be32(o + n, (uint32_t)(x->now_ns / 1000000u) + 1000);
		put_be32(o + n + 4, x->stack_tsval);
		n += 8;
	}
	unsigned blocks = (sel >> 5) & 3;
	if (blocks) {
		o[n++] = 1, o[n++] = 1, o[n++] = 5, o[n++] = (uint8_t)(2 + 8 * blocks);
		uint32_t span = x->stack_max - x->stack_una + 1;
		for (unsigned b = 0; b < blocks; b++) {
			uint32_t l = x->stack_una + fuzz_u16(in) % span;
			uint32_t r = l + fuzz_u16(in) % (span + 1);
			put_be32(o + n, l);
			put_be32(o + n + 4, r);
			n += 8;
		}
	}
	return n;
}

static void op_segment(struct session *x, struct fuzz_in *in, uint8_t op)
{
	uint8_t sel = fuzz_u8(in), flags = 0x10;
	if (op & 0x80)
		flags = fuzz_u8(in); /* anything, now and then */
	else if (sel & 1)
		flags |= 0x08;
	int16_t dseq = (int16_t)fuzz_u16(in);
	uint32_t seq = x->peer_nxt + ((sel & 2) ? (uint32_t)(int32_t)dseq : 0);
	uint32_t span = x->stack_max - x->stack_una + 1;
	uint32_t ack = x->stack_una + fuzz_u16(in) % span; /* what the stack sent, or less */
	if (sel & 4)
		ack = x->stack_max;
	if (sel & 8)
		ack += (uint32_t)(int32_t)(int8_t)fuzz_u8(in); /* past it, or before */
	uint16_t win = (sel & 16) ? fuzz_u16(in) : 65535;
	uint8_t o[40];
	uint32_t optlen = seg_options(x, in, sel, o);
	uint32_t paylen = (op & 0x40) ? fuzz_u16(in) % 1500 : 0;
	send_tcp(x, seq, ack, flags, win, o, optlen, paylen, fuzz_u8(in));
	if (!(sel & 2)) {
		x->peer_nxt += paylen + ((flags & 0x01) ? 1u : 0u);
	}
	if (seq_le(x->stack_una, ack) && seq_le(ack, x->stack_max))
		x->stack_una = ack;
}

/* ICMP destination unreachable quoting the stack's last segment (RFC 792): port or host
 * unreachable, fragmentation needed with a fuzzed next-hop MTU (RFC 1191). */
static void op_icmp(struct session *x, struct fuzz_in *in)
{
	if (!x->have_last)
		return;
	uint8_t f[14 + 20 + 8 + 28];
	uint8_t *c = f + ip_header(x, f, 1, 8 + 28);
	c[0] = 3;
	c[1] = fuzz_u8(in) % 16;
	put_be16(c + 2, 0);
	put_be16(c + 4, 0);
	put_be16(c + 6, fuzz_u16(in));
	memcpy(c + 8, x->last_seg, 28);
	uint8_t sel = fuzz_u8(in);
	if (sel & 1) /* a quoted sequence number anywhere, as a forger would send */
		put_be32(c + 8 + 24, fuzz_u32(in));
	put_be16(c + 2, csum_finish(csum_add(0, c, 36)));
	send_frame(x, f, sizeof(f));
}

static void op_app(struct session *x, struct fuzz_in *in)
{
	uint8_t sel = fuzz_u8(in);
	static uint8_t buf[65536];
	if (!x->c)
		return;
	switch (sel % 7) {
	case 0:
	case 1: {
		size_t len = (sel & 0x80) ? 65536 : fuzz_u16(in);
		memset(buf, sel, len);
		myrio_tcp_write(x->c, buf, len);
		break;
	}
	case 2:
		myrio_tcp_read(x->c, buf, fuzz_u16(in));
		break;
	case 3: {
		struct myrio_pkt *p;
		while (x->nheld < MAX_HELD && (p = myrio_tcp_recv(x->c)))
			x->held[x->nheld++] = p;
		break;
	}
	case 4:
		for (unsigned i = 0; i < x->nheld; i++)
			myrio_tcp_release(x->c, x->held[i]);
		x->nheld = 0;
		break;
	case 5:
		myrio_tcp_shutdown(x->c);
		break;
	case 6:
		for (unsigned i = 0; i < x->nheld; i++)
			myrio_pkt_free(x->held[i]);
		x->nheld = 0;
		if (sel & 0x80)
			myrio_tcp_abort(x->c);
		else
			myrio_tcp_close(x->c);
		x->c = NULL;
		break;
	}
	settle(x);
}

/* The peer ACKs everything the stack sent, with a window. */
static void op_ack_all(struct session *x, struct fuzz_in *in)
{
	uint8_t o[40];
	uint32_t optlen = seg_options(x, in, 0, o);
	x->stack_una = x->stack_max;
	send_tcp(x, x->peer_nxt, x->stack_max, 0x10, fuzz_u16(in), o, optlen, 0, 0);
}

/* Passive or active open with the peer's options from the input. */
static void handshake(struct session *x, struct fuzz_in *in, bool active)
{
	uint8_t o[40];
	x->peer_nxt = fuzz_u32(in);
	if (active) {
		if (myrio_tcp_connect(x->s, PEER_IP, PEER_PORT, NULL, &x->c) < 0)
			abort();
		settle(x); /* the SYN, seen by check_frame */
		uint32_t n = syn_options(x, in, o);
		send_tcp(x, x->peer_nxt, x->stack_max, 0x12, fuzz_u16(in), o, n, 0, 0);
	} else {
		x->stack_port = STACK_PORT;
		uint32_t n = syn_options(x, in, o);
		send_tcp(x, x->peer_nxt, 0, 0x02, fuzz_u16(in), o, n, 0, 0);
	}
	x->peer_nxt++;
	x->stack_una = x->stack_max;
	if (!active)
		op_ack_all(x, in);
}

static struct myrio_port *ports[2];
static struct myrio_pool *fuzz_pool;

static int ports_open(void)
{
	if (ports[0])
		return 0;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	if (myrio_port_open(&ports[0], "pair:fzs/0?ring=64,rxpool=256", &pc) < 0 ||
	    myrio_port_open(&ports[1], "pair:fzs/1?ring=64,rxpool=256", &pc) < 0 ||
	    myrio_port_pool_create(ports[1], 64, 2048, &fuzz_pool) < 0)
		return -1;
	return 0;
}

static int session_open(struct session *x, uint8_t cfg)
{
	memset(x, 0, sizeof(*x));
	x->now_ns = 1000000000ull;
	if (ports_open() < 0)
		return -1;
	x->sp = ports[0];
	x->fp = ports[1];
	x->pool = fuzz_pool;
	x->peer_port = PEER_PORT;
	struct myrio_port_info info;
	myrio_port_info(x->sp, &info);
	memcpy(x->smac, info.mac, 6);
	x->mtu = info.mtu;
	myrio_port_info(x->fp, &info);
	memcpy(x->fmac, info.mac, 6);
	struct myrio_stack_conf c;
	myrio_stack_conf_init(&c);
	c.ip = STACK_IP;
	c.netmask = 0xffffff00u;
	c.max_tcp_conns = 4;
	c.max_listeners = 1;
	c.max_udp_socks = 1;
	c.arp_entries = 4;
	c.tx_pool_size = TX_POOL;
	c.snd_queue_segs = 32;
	c.rcv_buf = 16384;
	c.ooo_max_segs = 16;
	c.sack = !(cfg & 1);
	c.timestamps = !(cfg & 2);
	c.window_scale = !(cfg & 4);
	c.nagle = cfg & 8;
	c.delayed_ack_ms = (cfg & 16) ? 40 : 0;
	c.cc = (cfg & 32) ? MYRIO_TCP_CC_CUBIC : MYRIO_TCP_CC_NEWRENO;
	c.seed = 7;
	c.clock = fake_clock;
	c.clock_arg = x;
	c.tcp_event = on_tcp;
	c.event_arg = x;
	fuzz_wrap_init(&x->wrap, x->sp, check_burst, drain_arg, x);
	if (myrio_stack_create(&x->s, &x->wrap.port, &c) < 0)
		return -1;
	struct myrio_tcp_listener *l;
	if (myrio_tcp_listen(x->s, STACK_PORT, 4, NULL, &l) < 0)
		return -1;
	myrio_arp_add_static(x->s, PEER_IP, x->fmac);
	settle(x);
	return 0;
}

/* Every connection aborted and every held buffer back: the transmit pool must be full. */
static void session_close(struct session *x)
{
	for (unsigned i = 0; i < x->nheld; i++)
		myrio_pkt_free(x->held[i]);
	if (x->c)
		myrio_tcp_abort(x->c);
	for (struct myrio_tcp_conn *c = x->s->active, *next; c; c = next) {
		next = c->next;
		if (c->app_owned)
			myrio_tcp_abort(c);
	}
	for (int i = 0; i < 60; i++) { /* orphans retransmit until they give up, TIME_WAIT ends */
		x->now_ns += 30ull * 1000000000ull;
		settle(x);
	}
	myrio_tx_burst(x->s->port, NULL, 0);
	if (myrio_pool_free_count(x->s->pool) + x->s->ntx != x->s->pool->count)
		broken("a transmit buffer was not returned after teardown");
	myrio_stack_destroy(x->s);
	struct myrio_pkt *pkts[32];
	uint16_t n;
	while ((n = myrio_rx_burst(x->sp, pkts, 32)) > 0)
		myrio_pkt_free_bulk(pkts, n);
	drain(x);
	myrio_tx_burst(x->fp, NULL, 0);
	if (myrio_pool_free_count(x->pool) != x->pool->count)
		broken("a frame the fuzzer sent was not returned");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		fuzz_quiet();
		const char *floor = getenv("MYRIO_FUZZ_MSS_FLOOR");
		mss_floor = floor ? (uint16_t)atoi(floor) : 0;
		init = 1;
	}
	struct fuzz_in in = {data, size};
	struct session x;
	uint8_t cfg = fuzz_u8(&in);
	if (session_open(&x, cfg) < 0)
		abort(); /* the set-up itself must always work */
	handshake(&x, &in, cfg & 64);
	for (unsigned steps = 0; in.n && steps < 512; steps++) {
		uint8_t op = fuzz_u8(&in);
		switch (op % 8) {
		case 0:
		case 1:
		case 2:
			op_segment(&x, &in, op);
			break;
		case 3:
		case 4:
			op_app(&x, &in);
			break;
		case 5:
			op_ack_all(&x, &in);
			break;
		case 6: /* time passes: delayed ACKs, retransmissions, persist, TIME_WAIT */
			x.now_ns +=
			    (uint64_t)fuzz_u8(&in) * ((op & 0x80) ? 1000000000ull : 5000000ull);
			settle(&x);
			break;
		case 7:
			op_icmp(&x, &in);
			break;
		}
	}
	session_close(&x);
	return 0;
}
