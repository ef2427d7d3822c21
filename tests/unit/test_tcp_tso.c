/* SPDX-License-Identifier: BSD-3-Clause */
/* tcp_lite's side of TSO (§5.6): which queued segments go out as one request and how the
 * request is built. The stack sits on a port that offers MYRIO_CAP_TSO and does the NIC's
 * job in software (checks the request, cuts it into segments for the raw peer), so the
 * test sees both the requests and the segments on the wire. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "raw_peer.h"

#define MAX_REQ 64
#define MAX_HELD 64

struct req_log {
	uint16_t npkts, mss, hlen;
	uint32_t total;	 /* frame bytes of the request */
	uint32_t seq;	 /* first sequence number */
	bool ip_len_ok;	 /* IP total length = the whole request's */
	bool seed_ok;	 /* TCP checksum = pseudo-header sum over the whole TCP length */
	bool chain_ok;	 /* the chain holds tso_npkts packets of payload */
};

/* The port under the stack: a pair port end, plus TSO done in software. */
struct tso_port {
	struct myrio_port port;
	struct myrio_port *inner;
	struct myrio_pool *seg_pool; /* the segments it cuts */
	struct req_log req[MAX_REQ];
	unsigned nreq;
	bool hold; /* keep requests (the NIC still reads them) until released */
	struct myrio_pkt *held[MAX_HELD];
	unsigned nheld;
	uint8_t buf[70000];
};

static struct tso_port *tp(struct myrio_port *p)
{
	return (struct tso_port *)p;
}

/* Cuts a request into segments as the NIC does (§5.6) and queues them. */
static unsigned tso_cut(struct tso_port *w, struct myrio_pkt *p, struct myrio_pkt **out)
{
	uint32_t at = 0, pkts = 0;
	const struct myrio_pkt *q = p;
	for (; q && pkts < p->tso_npkts; q = q->next, pkts++) {
		memcpy(w->buf + at, myrio_pkt_data(q), q->len);
		at += q->len;
	}
	const uint8_t *f = w->buf, *ip = f + 14, *th = ip + 20;
	uint32_t hlen = p->tso_hlen, mss = p->tso_mss, tcplen = at - 34;
	struct req_log *l = &w->req[w->nreq < MAX_REQ ? w->nreq++ : MAX_REQ - 1];
	l->npkts = p->tso_npkts;
	l->mss = (uint16_t)mss;
	l->hlen = (uint16_t)hlen;
	l->total = at;
	l->seq = get_be32(th + 4);
	l->chain_ok = pkts == p->tso_npkts && p->csum_start == 34;
	l->ip_len_ok = get_be16(ip + 2) == at - 14;
	uint64_t ps = csum_add(0, ip + 12, 8) + 6 + tcplen;
	l->seed_ok = get_be16(th + 16) == csum_fold(ps);
	unsigned n = 0;
	for (uint32_t off = hlen; off < at; off += mss) {
		uint32_t plen = at - off < mss ? at - off : mss;
		struct myrio_pkt *s = myrio_pkt_alloc(w->seg_pool);
		assert_non_null(s);
		uint8_t *d = myrio_pkt_data(s);
		memcpy(d, f, hlen);
		memcpy(d + hlen, f + off, plen);
		s->len = hlen + plen;
		uint8_t *sip = d + 14, *st = sip + 20;
		put_be16(sip + 2, (uint16_t)(s->len - 14));
		put_be16(sip + 4, (uint16_t)(get_be16(ip + 4) + n));
		put_be16(sip + 10, 0);
		put_be16(sip + 10, csum_finish(csum_add(0, sip, 20)));
		put_be32(st + 4, l->seq + (off - hlen));
		if (off + plen < at)
			st[13] &= (uint8_t)~(F_FIN | F_PSH);
		uint32_t sl = s->len - 34;
		put_be16(st + 16, 0);
		put_be16(st + 16, csum_finish(csum_add(csum_add(0, sip + 12, 8) + 6 + sl, st, sl)));
		out[n++] = s;
	}
	return n;
}

static uint16_t w_tx(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct tso_port *w = tp(port);
	struct myrio_pkt *out[256];
	unsigned k = 0;
	for (uint16_t i = 0; i < n; i++) {
		struct myrio_pkt *p = pkts[i];
		if (!(p->ol_flags & MYRIO_PKT_TX_TSO)) {
			out[k++] = p;
			continue;
		}
		k += tso_cut(w, p, out + k);
		if (w->hold && w->nheld < MAX_HELD)
			w->held[w->nheld++] = p;
		else
			myrio_pkt_free_req(p);
	}
	uint16_t took = w->inner->ops->tx_burst(w->inner, out, (uint16_t)k);
	for (unsigned i = took; i < k; i++)
		myrio_pkt_free(out[i]);
	return n;
}

static void w_release(struct tso_port *w)
{
	for (unsigned i = 0; i < w->nheld; i++)
		myrio_pkt_free_req(w->held[i]);
	w->nheld = 0;
}

static uint16_t w_rx(struct myrio_port *p, struct myrio_pkt **pkts, uint16_t n)
{
	return tp(p)->inner->ops->rx_burst(tp(p)->inner, pkts, n);
}

static int w_pool(struct myrio_port *p, uint32_t count, uint32_t len, struct myrio_pool **out)
{
	return tp(p)->inner->ops->pool_create(tp(p)->inner, count, len, out);
}

static int w_link(struct myrio_port *p)
{
	return tp(p)->inner->ops->link(tp(p)->inner);
}

static int w_info(struct myrio_port *p, struct myrio_port_info *info)
{
	int rc = tp(p)->inner->ops->info(tp(p)->inner, info);
	info->caps |= MYRIO_CAP_TSO;
	info->tx_boundary = 2048;
	return rc;
}

static int w_stats(struct myrio_port *p, struct myrio_port_stats *st)
{
	return tp(p)->inner->ops->stats(tp(p)->inner, st);
}

static const struct myrio_port_ops w_ops = {
    .rx_burst = w_rx,
    .tx_burst = w_tx,
    .pool_create = w_pool,
    .link = w_link,
    .info = w_info,
    .stats = w_stats,
};

static bool tso_on = true;
static bool nagle_on;
static uint32_t queue_segs; /* 0: the default */

static void conf_tweak(struct myrio_stack_conf *c)
{
	c->tso = tso_on;
	c->nagle = nagle_on;
	if (queue_segs)
		c->snd_queue_segs = queue_segs;
}

/* raw_open with the stack on the TSO port. */
static void open_tso(struct raw *r, struct tso_port *w, const char *name)
{
	memset(r, 0, sizeof(*r));
	memset(w, 0, sizeof(*w));
	r->now_ns = 5000000000ull;
	char dev[96];
	snprintf(dev, sizeof(dev), "pair:%s/0", name);
	assert_int_equal(myrio_pair_port_open(dev, NULL, &w->inner), 0);
	snprintf(dev, sizeof(dev), "pair:%s/1", name);
	assert_int_equal(myrio_pair_port_open(dev, NULL, &r->pp), 0);
	assert_int_equal(myrio_pool_create_in(NULL, 512, 1984, &r->pool), 0);
	assert_int_equal(myrio_pool_create_in(NULL, 512, 1984, &w->seg_pool), 0);
	w->port.ops = &w_ops;
	snprintf(w->port.device, sizeof(w->port.device), "tso:%s", name);
	r->sp = &w->port;
	assert_int_equal(raw_stack_up(r, conf_tweak, true), 0);
}

static void close_tso(struct raw *r, struct tso_port *w)
{
	w_release(w);
	raw_drop_captured(r);
	r->pp->ops->close(r->pp);
	myrio_stack_destroy(r->s);
	w->inner->ops->close(w->inner);
	myrio_pool_destroy(r->pool);
	myrio_pool_destroy(w->seg_pool);
}

/* A listening stack, the peer connected to it. */
static struct myrio_tcp_conn *connected(struct raw *r, struct peer *pe)
{
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r->s, 80, 4, NULL, &l), 0);
	peer_connect(r, pe, 40000, 80, 1000, true);
	assert_non_null(pe->c);
	assert_int_equal(myrio_tcp_state(pe->c), MYRIO_TCP_ESTABLISHED);
	return pe->c;
}

static uint8_t pat(uint32_t i)
{
	return (uint8_t)(i * 13 + (i >> 9));
}

static void write_bytes(struct myrio_tcp_conn *c, uint32_t from, uint32_t n)
{
	static uint8_t b[65536];
	for (uint32_t i = 0; i < n; i++)
		b[i] = pat(from + i);
	assert_int_equal(myrio_tcp_write(c, b, n), (ssize_t)n);
}

/* The segments the peer got: consecutive, the pattern intact; returns the bytes. */
static uint32_t check_wire(struct raw *r, uint32_t seq0, uint32_t off0, unsigned *nseg)
{
	struct tcpv v;
	uint32_t bytes = 0;
	unsigned i = 0;
	for (; cap_tcp(r, i, &v); i++) { /* cap_tcp verifies both checksums */
		assert_int_equal(v.seq, seq0 + bytes);
		for (unsigned k = 0; k < v.len; k++)
			assert_int_equal(v.data[k], pat(off0 + bytes + k));
		bytes += v.len;
	}
	*nseg = i;
	return bytes;
}

/* Ten full segments (the initial window) leave in one request the peer gets as ten
 * segments; after their ACK, the window has doubled and the next request is bigger. */
static void initial_window_one_request(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	open_tso(&r, &w, "tso1");
	struct peer pe;
	struct myrio_tcp_conn *c = connected(&r, &pe);
	uint16_t mss = myrio_tcp_mss(c);
	write_bytes(c, 0, 40u * mss);
	assert_int_equal(w.nreq, 0); /* output waits for the poll */
	raw_poll(&r);
	assert_int_equal(w.nreq, 1);
	struct req_log *l = &w.req[0];
	assert_int_equal(l->npkts, 10);
	assert_int_equal(l->mss, mss);
	assert_int_equal(l->hlen, 14 + 20 + 32); /* with timestamps */
	assert_int_equal(l->total, 66 + 10u * mss);
	assert_int_equal(l->seq, pe.rcv_nxt);
	assert_true(l->ip_len_ok);
	assert_true(l->seed_ok);
	assert_true(l->chain_ok);
	unsigned nseg;
	assert_int_equal(check_wire(&r, pe.rcv_nxt, 0, &nseg), 10u * mss);
	assert_int_equal(nseg, 10);
	pe.rcv_nxt += 10u * mss;
	peer_send(&r, &pe, F_ACK, NULL, 0);
	raw_poll(&r);
	/* slow start: 20 segments may be in flight now */
	assert_int_equal(w.nreq, 2);
	assert_int_equal(w.req[1].npkts, 20);
	assert_int_equal(check_wire(&r, pe.rcv_nxt, 10u * mss, &nseg), 20u * mss);
	assert_int_equal(nseg, 20);
	struct myrio_stack_stats st;
	myrio_stack_stats(r.s, &st);
	assert_int_equal(st.tcp_tso_requests, 2);
	assert_int_equal(st.tcp_tso_segs, 30);
	assert_int_equal(st.tcp_segs_out - st.tcp_tso_segs, 1); /* only the SYN-ACK */
	close_tso(&r, &w);
}

/* The peer's window limits a request; a short last segment ends it. */
static void window_and_short_tail(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	open_tso(&r, &w, "tso2");
	struct peer pe;
	struct myrio_tcp_conn *c = connected(&r, &pe);
	uint16_t mss = myrio_tcp_mss(c);
	/* a window of 4.5 segments (scaled by 7: in units of 128 bytes) */
	pe.win = (uint16_t)((9u * mss / 2) >> 7);
	peer_send(&r, &pe, F_ACK, NULL, 0);
	raw_poll(&r);
	write_bytes(c, 0, 3u * mss + 100);
	raw_poll(&r);
	assert_int_equal(w.nreq, 1);
	assert_int_equal(w.req[0].npkts, 4); /* three full segments and the 100-byte tail */
	assert_int_equal(w.req[0].total, 66 + 3u * mss + 100);
	unsigned nseg;
	assert_int_equal(check_wire(&r, pe.rcv_nxt, 0, &nseg), 3u * mss + 100);
	assert_int_equal(nseg, 4);
	struct tcpv v;
	assert_true(cap_tcp(&r, 3, &v));
	assert_true(v.flags & F_PSH); /* PSH on the last segment only */
	assert_true(cap_tcp(&r, 0, &v));
	assert_false(v.flags & F_PSH);
	pe.rcv_nxt += 3u * mss + 100;
	/* more data than the window: a request only up to its edge */
	write_bytes(c, 3u * mss + 100, 10u * mss);
	peer_send(&r, &pe, F_ACK, NULL, 0);
	raw_poll(&r);
	assert_int_equal(w.nreq, 2);
	uint32_t win = (uint32_t)pe.win << 7;
	assert_true(w.req[1].npkts >= 2);
	assert_true((uint32_t)w.req[1].npkts * mss <= win);
	close_tso(&r, &w);
}

/* A connection on a fresh TSO port whose NIC keeps what it is given: four full segments
 * written, gone out in one request the NIC still reads. */
static struct myrio_tcp_conn *four_segments_held(struct raw *r, struct tso_port *w,
						 const char *name, struct peer *pe)
{
	open_tso(r, w, name);
	struct myrio_tcp_conn *c = connected(r, pe);
	w->hold = true;
	write_bytes(c, 0, 4u * myrio_tcp_mss(c));
	raw_poll(r);
	assert_int_equal(w->nreq, 1);
	assert_int_equal(w->req[0].npkts, 4);
	assert_int_equal(w->nheld, 1);
	return c;
}

/* Segments the NIC still reads are not put in a new request; a lost segment is resent
 * alone (here by RTO), while the NIC holds it: as a copy. */
static void retransmission_alone(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	struct peer pe;
	struct myrio_tcp_conn *c = four_segments_held(&r, &w, "tso3", &pe);
	uint16_t mss = myrio_tcp_mss(c);
	raw_drop_captured(&r); /* lost on the way */
	/* the tail loss probe, then the RTO: each resends one segment, never a request,
	 * and copies it since the NIC still reads the original */
	bool first_again = false;
	unsigned resent = 0;
	for (int t = 0; t < 40 && !first_again; t++) {
		raw_advance_ms(&r, 100);
		raw_poll(&r);
		struct tcpv v;
		unsigned n = cap_count_tcp(&r);
		assert_true(n <= 1);
		if (n == 1) {
			assert_true(cap_tcp(&r, 0, &v));
			assert_int_equal(v.len, mss);
			assert_int_equal((v.seq - pe.rcv_nxt) % mss, 0);
			first_again = v.seq == pe.rcv_nxt;
			resent++;
		}
	}
	assert_true(first_again);
	assert_int_equal(w.nreq, 1);
	struct myrio_stack_stats st;
	myrio_stack_stats(r.s, &st);
	assert_int_equal(st.tcp_retransmits, resent);
	assert_int_equal(st.tcp_tx_copy_nic_busy, resent);
	/* the NIC lets go; the peer acknowledges the first segment and new data follows */
	w_release(&w);
	pe.rcv_nxt += mss;
	peer_send(&r, &pe, F_ACK, NULL, 0);
	raw_poll(&r);
	/* the rest goes again from the second segment (after the RTO, one by one) */
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.seq, pe.rcv_nxt);
	close_tso(&r, &w);
}

/* conf.tso = false: one frame per segment. */
static void switched_off(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	tso_on = false;
	open_tso(&r, &w, "tso4");
	tso_on = true;
	struct peer pe;
	struct myrio_tcp_conn *c = connected(&r, &pe);
	uint16_t mss = myrio_tcp_mss(c);
	write_bytes(c, 0, 5u * mss);
	raw_poll(&r);
	assert_int_equal(w.nreq, 0);
	unsigned nseg;
	assert_int_equal(check_wire(&r, pe.rcv_nxt, 0, &nseg), 5u * mss);
	assert_int_equal(nseg, 5);
	close_tso(&r, &w);
}

/* A connection on a fresh TSO port whose send queue (48 segments) the application filled:
 * the initial window (ten) has gone out in one request. */
static struct myrio_tcp_conn *queue_full(struct raw *r, struct tso_port *w, const char *name,
					 struct peer *pe)
{
	queue_segs = 48;
	open_tso(r, w, name);
	queue_segs = 0;
	struct myrio_tcp_conn *c = connected(r, pe);
	uint16_t mss = myrio_tcp_mss(c);
	write_bytes(c, 0, 40u * mss);
	write_bytes(c, 40u * mss, 8u * mss); /* the queue is full */
	raw_poll(r);
	assert_int_equal(w->nreq, 1); /* the initial window */
	assert_int_equal(w->req[0].npkts, 10);
	return c;
}

/* The peer acknowledges k of those ten; the application fills the room that makes. */
static void ack_and_refill(struct raw *r, struct myrio_tcp_conn *c, struct peer *pe, uint32_t k)
{
	uint16_t mss = myrio_tcp_mss(c);
	pe->rcv_nxt += k * mss;
	peer_send(r, pe, F_ACK, NULL, 0);
	raw_poll(r);
	write_bytes(c, 48u * mss, k * mss);
	raw_poll(r);
}

/* A sender whose queue is full (the application waits for room): an ACK that frees two
 * segments would let a short request go; it waits while data is in flight, and goes when
 * nothing is (or when it is as large as a request can be). */
static void full_queue_defers_short_requests(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	struct peer pe;
	struct myrio_tcp_conn *c = queue_full(&r, &w, "tso5", &pe);
	uint16_t mss = myrio_tcp_mss(c);
	uint32_t seq = pe.rcv_nxt;
	ack_and_refill(&r, c, &pe, 2); /* cwnd 12, 8 in flight */
	assert_int_equal(w.nreq, 1); /* four would fit: they wait for the next ACK */
	pe.rcv_nxt = seq + 10u * mss; /* everything: nothing in flight */
	peer_send(&r, &pe, F_ACK, NULL, 0);
	raw_poll(&r);
	assert_int_equal(w.nreq, 2);
	assert_int_equal(w.req[1].npkts, 20); /* cwnd 20 after 10 acknowledged */
	assert_int_equal(w.req[1].seq, seq + 10u * mss);
	close_tso(&r, &w);
}

/* The same full queue with one segment left in flight: its ACK may be delayed by the
 * peer (one segment is no reason to answer at once), so a request that fits goes now
 * instead of waiting on it with the link idle. */
static void lone_segment_in_flight_does_not_defer(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	struct peer pe;
	struct myrio_tcp_conn *c = queue_full(&r, &w, "tso6", &pe);
	uint16_t mss = myrio_tcp_mss(c);
	uint32_t seq = pe.rcv_nxt;
	ack_and_refill(&r, c, &pe, 9); /* cwnd 19, one in flight */
	assert_int_equal(w.nreq, 2);
	assert_int_equal(w.req[1].npkts, 18);
	assert_int_equal(w.req[1].seq, seq + 10u * mss);
	close_tso(&r, &w);
}

/* "Fragmentation needed" while the NIC still reads the TSO request the too-large segments
 * went out in: the stack cuts the queue to the new MSS with copies, leaving the request's
 * chain as the NIC sees it, and resends at once (RFC 1191); the new segments may go in a
 * request of their own. */
static void path_mtu_drop_while_the_nic_holds_the_request(void **state)
{
	(void)state;
	struct raw r;
	static struct tso_port w;
	struct peer pe;
	struct myrio_tcp_conn *c = four_segments_held(&r, &w, "tso7", &pe);
	uint16_t mss = myrio_tcp_mss(c);
	const uint8_t *ip = cap_ip(&r, 6, 0);
	assert_non_null(ip);
	uint8_t quote[28];
	memcpy(quote, ip, sizeof(quote));
	raw_drop_captured(&r); /* too large for the hop */
	icmp_in(&r, 3, 4, 1000, quote, sizeof(quote));
	uint16_t small = myrio_tcp_mss(c);
	assert_int_equal(small, 1000 - 52);
	unsigned nseg;
	assert_int_equal(check_wire(&r, pe.rcv_nxt, 0, &nseg), 4u * mss);
	assert_int_equal(nseg, 4u * ((mss + small - 1u) / small)); /* each cut on its own */
	/* The held request is as it was: its chain still links the four originals, their
	 * payload untouched (the headers are in front of the first). */
	const struct myrio_pkt *q = w.held[0];
	for (uint32_t k = 0; k < 4; k++, q = q->next) {
		assert_non_null(q);
		assert_true(q->refcnt >= 1);
		const uint8_t *d = myrio_pkt_data(q) + (k ? 0 : w.req[0].hlen);
		for (uint32_t b = 0; b < mss; b++)
			assert_int_equal(d[b], pat(k * mss + b));
	}
	w_release(&w);
	pe.rcv_nxt += 4u * mss;
	peer_ack(&r, &pe);
	assert_int_equal(myrio_tcp_unacked(c), 0);
	w.hold = false;
	close_tso(&r, &w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(initial_window_one_request),
	    cmocka_unit_test(window_and_short_tail),
	    cmocka_unit_test(retransmission_alone),
	    cmocka_unit_test(switched_off),
	    cmocka_unit_test(full_queue_defers_short_requests),
	    cmocka_unit_test(lone_segment_in_flight_does_not_defer),
	    cmocka_unit_test(path_mtu_drop_while_the_nic_holds_the_request),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
