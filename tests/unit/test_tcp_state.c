/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP state machine against a crafted peer: handshakes, data and ACKs, RFC 5961 challenge
 * ACKs, PAWS, out-of-order delivery with SACK, closes in both directions, TIME_WAIT,
 * retransmission timing on a fake clock, zero-window probes, SYN floods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

static struct myrio_tcp_listener *listen80(struct raw *r)
{
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r->s, 80, 4, NULL, &l), 0);
	return l;
}

/* raw_connected, which must succeed. */
static void connected(struct raw *r, const char *name, void (*tweak)(struct myrio_stack_conf *),
		      struct peer *p, uint16_t sport, uint32_t isn)
{
	assert_int_equal(raw_connected(r, name, tweak, p, sport, isn), 0);
}

static void passive_open_negotiates_options(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st1", NULL, NULL, true), 0);
	listen80(&r);
	uint8_t o[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 1, 3, 3, 7};
	struct tcpf t = {.sport = 40000,
			 .dport = 80,
			 .seq = 100,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = 20};
	raw_send_tcp_poll(&r, &t);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_SYN | F_ACK);
	assert_int_equal(v.ack, 101);
	assert_int_equal(v.sport, 80);
	assert_int_equal(v.dport, 40000);
	int k = find_opt(v.opts, v.optlen, 2);
	assert_true(k >= 0);
	assert_int_equal(get_be16(v.opts + k + 2), 1460);
	assert_true(find_opt(v.opts, v.optlen, 4) >= 0); /* SACK permitted */
	k = find_opt(v.opts, v.optlen, 8);
	assert_true(k >= 0);
	assert_int_equal(get_be32(v.opts + k + 6), 1000); /* echoes our tsval */
	k = find_opt(v.opts, v.optlen, 3);
	assert_true(k >= 0);
	assert_int_equal(v.opts[k + 2], 3); /* 256 KiB buffer needs a shift of 3 */
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 0);
	/* Final ACK completes the handshake. */
	struct tcpf a = {
	    .sport = 40000, .dport = 80, .seq = 101, .ack = v.seq + 1, .flags = F_ACK, .win = 1000};
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 1);
	struct myrio_tcp_conn *c = r.last_conn;
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	/* peer MSS 1460 minus the timestamp option */
	assert_int_equal(myrio_tcp_mss(c), 1448);
	/* Tools see it, with its counters. */
	char buf[4096];
	int n = myrio_stack_conns_format(r.s, buf, sizeof(buf));
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	assert_non_null(strstr(buf, "10.0.0.1:80 10.0.0.2:40000 ESTABLISHED segs_in=2 "));
	assert_non_null(strstr(buf, " mss=1448 "));
	char small[16];
	assert_int_equal(myrio_stack_conns_format(r.s, small, sizeof(small)), n);
	n = myrio_stack_stats_format(r.s, buf, sizeof(buf));
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	assert_non_null(strstr(buf, "\ntcp_passive_opens 1\n"));
	assert_non_null(strstr(buf, "\ntcp_conns_in_use 1\n"));
	raw_close(&r);
}

static void syn_without_options_gets_defaults(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st2", NULL, NULL, true), 0);
	listen80(&r);
	struct peer p;
	peer_connect(&r, &p, 40001, 80, 0x7fffffff, false);
	assert_non_null(p.c);
	assert_int_equal(myrio_tcp_mss(p.c), 536);
	/* No option but... nothing: data segments carry no timestamps. */
	peer_send_poll(&r, &p, F_ACK | F_PSH, "hello", 5);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.optlen, 0);
	assert_int_equal(v.ack, p.snd_nxt);
	raw_close(&r);
}

static void data_is_delivered_and_acked(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st3", NULL, &p, 40002, 5000);
	peer_send_poll(&r, &p, F_ACK | F_PSH, "abcdef", 6);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, 5000 + 1 + 6);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_READABLE], 1);
	struct myrio_pkt *d = myrio_tcp_recv(p.c);
	assert_non_null(d);
	assert_int_equal(d->len, 6);
	assert_memory_equal(myrio_pkt_data(d), "abcdef", 6);
	myrio_tcp_release(p.c, d);
	assert_null(myrio_tcp_recv(p.c));
	/* The stack sends; the payload arrives intact behind the headers. */
	assert_int_equal(myrio_tcp_write(p.c, "0123456789", 10), 10);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.len, 10);
	assert_memory_equal(v.data, "0123456789", 10);
	assert_int_equal(v.seq, p.rcv_nxt);
	assert_int_equal(myrio_tcp_unacked(p.c), 10);
	p.rcv_nxt += 10;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	raw_close(&r);
}

static void rst_with_wrong_sequence_gets_challenge_ack(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st4", NULL, &p, 40003, 1000);
	/* In the window but not exactly rcv_nxt: challenge ACK, connection survives. */
	struct tcpf t = {.sport = 40003, .dport = 80, .seq = p.snd_nxt + 100, .flags = F_RST};
	raw_send_tcp_poll(&r, &t);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_ACK);
	assert_int_equal(v.ack, p.snd_nxt);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_challenge_acks, 1);
	/* Outside the window: silently dropped. */
	t.seq = p.snd_nxt + 0x40000000u;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(cap_count_tcp(&r), 0);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	/* SYN on an established connection: challenge ACK too (RFC 5961 §4), once the
	 * connection's 500 ms limit on such answers allows. */
	raw_advance_ms(&r, 500);
	t.seq = p.snd_nxt + 5;
	t.flags = F_SYN;
	raw_send_tcp_poll(&r, &t);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_ACK);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	/* ACK of data never sent: challenged and counted, state unchanged. */
	struct tcpf a = {.sport = 40003,
			 .dport = 80,
			 .seq = p.snd_nxt,
			 .ack = p.rcv_nxt + 5000,
			 .flags = F_ACK,
			 .win = 100};
	raw_advance_ms(&r, 500);
	raw_send_tcp_poll(&r, &a);
	st = raw_stats(&r);
	assert_int_equal(st.drop_tcp_bad_ack, 1);
	assert_int_equal(st.tcp_challenge_acks, 3);
	/* The exact sequence number resets it. */
	t.seq = p.snd_nxt;
	t.flags = F_RST;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(p.c), -ECONNRESET);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 1);
	myrio_tcp_close(p.c);
	raw_close(&r);
}

static void challenge_acks_are_rate_limited(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st5", NULL, NULL, true), 0);
	listen80(&r);
	struct peer p;
	peer_connect(&r, &p, 40004, 80, 1000, false);
	assert_non_null(p.c);
	for (int i = 0; i < 1500; i++) {
		struct tcpf t = {.sport = 40004,
				 .dport = 80,
				 .seq = p.snd_nxt + 1 + (uint32_t)i,
				 .flags = F_RST};
		raw_send_tcp(&r, &t);
		if (i % 32 == 31)
			raw_poll(&r);
	}
	raw_poll(&r);
	/* One challenge ACK per connection every 500 ms (Linux's tcp_invalid_ratelimit). */
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_challenge_acks, 1);
	assert_int_equal(st.tcp_challenge_ack_limited, 1499);
	raw_advance_ms(&r, 499);
	struct tcpf t = {.sport = 40004, .dport = 80, .seq = p.snd_nxt + 9, .flags = F_RST};
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(raw_stats(&r).tcp_challenge_acks, 1);
	raw_advance_ms(&r, 1);
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(raw_stats(&r).tcp_challenge_acks, 2);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	raw_close(&r);
}

static void paws_drops_old_timestamps(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st6", NULL, &p, 40005, 1000);
	p.tsval = 5000;
	peer_send_poll(&r, &p, F_ACK | F_PSH, "new", 3);
	p.tsval = 4000; /* older than ts_recent */
	peer_send_poll(&r, &p, F_ACK | F_PSH, "old", 3);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_paws_drops, 1);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v)); /* answered with an ACK for what it has */
	assert_int_equal(v.ack, p.snd_nxt - 3);
	char buf[16];
	assert_int_equal(myrio_tcp_read(p.c, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "new", 3);
	raw_close(&r);
}

static void out_of_order_is_held_sacked_and_delivered_in_order(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st7", NULL, &p, 40006, 0xfffffff0u); /* crosses the 2^32 wrap */
	uint32_t base = p.snd_nxt;
	char seg[3][100];
	for (int i = 0; i < 3; i++)
		memset(seg[i], 'a' + i, 100);
	/* Send 2nd and 3rd first. */
	p.snd_nxt = base + 100;
	peer_send_poll(&r, &p, F_ACK, seg[1], 100);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, base); /* duplicate ACK */
	int k = find_opt(v.opts, v.optlen, 5);
	assert_true(k >= 0);
	assert_int_equal(v.opts[k + 1], 10);
	assert_int_equal(get_be32(v.opts + k + 2), base + 100);
	assert_int_equal(get_be32(v.opts + k + 6), base + 200);
	peer_send_poll(&r, &p, F_ACK, seg[2], 100);
	assert_true(cap_tcp(&r, 0, &v));
	k = find_opt(v.opts, v.optlen, 5);
	assert_true(k >= 0);
	assert_int_equal(get_be32(v.opts + k + 2), base + 100); /* merged block */
	assert_int_equal(get_be32(v.opts + k + 6), base + 300);
	assert_null(myrio_tcp_recv(p.c));
	/* The hole fills: everything comes out in order, one cumulative ACK. */
	p.snd_nxt = base;
	peer_send_poll(&r, &p, F_ACK, seg[0], 100);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, base + 300);
	assert_int_equal(find_opt(v.opts, v.optlen, 5), -1);
	char buf[400];
	assert_int_equal(myrio_tcp_read(p.c, buf, sizeof(buf)), 300);
	for (int i = 0; i < 300; i++)
		assert_int_equal(buf[i], 'a' + i / 100);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	assert_int_equal(cs.ooo_segs, 2);
	raw_close(&r);
}

static void ooo_queue_is_bounded(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st8", NULL, &p, 40007, 1);
	uint32_t base = p.snd_nxt;
	char d[100] = {0};
	/* A hole at base, 300 segments behind it with a hole after each (contiguous ones
	 * would share buffers: tcp_rxmem.c). */
	for (int i = 1; i <= 300; i++) {
		p.snd_nxt = base + 200u * (uint32_t)i;
		peer_send(&r, &p, F_ACK, d, 100);
		if (i % 16 == 0)
			raw_poll(&r);
	}
	raw_poll(&r);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_ooo_segs, 256); /* conf.ooo_max_segs */
	assert_int_equal(st.drop_tcp_ooo_full, 44);
	raw_close(&r);
}

static void peer_close_then_local_close(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st9", NULL, &p, 40008, 77);
	peer_send_poll(&r, &p, F_ACK | F_FIN, "bye", 3);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSE_WAIT);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, p.snd_nxt);
	char buf[8];
	assert_int_equal(myrio_tcp_read(p.c, buf, 8), 3);
	assert_int_equal(myrio_tcp_read(p.c, buf, 8), 0);
	assert_true(myrio_tcp_eof(p.c));
	/* Half-close: we can still send. */
	assert_int_equal(myrio_tcp_write(p.c, "late", 4), 4);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.len, 4);
	p.rcv_nxt += 4;
	myrio_tcp_close(p.c);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(v.flags & F_FIN);
	assert_int_equal(v.seq, p.rcv_nxt);
	p.rcv_nxt++;
	peer_ack(&r, &p);
	/* LAST_ACK -> CLOSED; the slot is free again: a segment now gets a RST. */
	peer_send_poll(&r, &p, F_ACK, "x", 1);
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(v.flags & F_RST);
	raw_close(&r);
}

static void active_close_time_wait(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st10", NULL, &p, 40009, 9);
	assert_int_equal(myrio_tcp_shutdown(p.c), 0);
	raw_poll(&r);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_FIN_WAIT_1);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_FIN | F_ACK);
	p.rcv_nxt++;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_FIN_WAIT_2);
	/* Still receiving after our half-close. */
	peer_send_poll(&r, &p, F_ACK, "more", 4);
	char b[8];
	assert_int_equal(myrio_tcp_read(p.c, b, 8), 4);
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_TIME_WAIT);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_CLOSED], 1);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, p.snd_nxt);
	/* A retransmitted FIN in TIME_WAIT is acknowledged again. */
	p.snd_nxt--;
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, p.snd_nxt);
	myrio_tcp_close(p.c);
	raw_wait_ms(&r, 60001);
	raw_poll(&r);
	/* Gone: the tuple is unknown now. */
	peer_send_poll(&r, &p, F_ACK, "x", 1);
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(v.flags & F_RST);
	raw_close(&r);
}

static void retransmission_timer_backs_off(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st11", NULL, &p, 40010, 9);
	assert_int_equal(myrio_tcp_write(p.c, "data", 4), 4);
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 1);
	/* The handshake RTT was ~0, but one segment in flight may have its ACK delayed by
	 * the peer up to 200 ms (RFC 8985 §7.2): the tail loss probe goes when the RTO would
	 * (200 ms, the floor), then the RTO 200 ms later, then 400, 800, 1600. */
	uint64_t expect[] = {200, 200, 400, 800, 1600};
	for (int i = 0; i < 5; i++) {
		raw_wait_ms(&r, expect[i] - 1);
		assert_int_equal(cap_count_tcp(&r), 0);
		raw_wait_ms(&r, 1);
		struct tcpv v;
		assert_true(cap_tcp(&r, 0, &v));
		assert_int_equal(v.len, 4);
		assert_memory_equal(v.data, "data", 4);
	}
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	assert_int_equal(cs.rto_expired, 4);
	assert_int_equal(cs.rto_ms, 3200);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_tail_loss_probes, 1);
	/* An ACK stops it and resets the backoff. */
	p.rcv_nxt += 4;
	peer_ack(&r, &p);
	raw_wait_ms(&r, 10000);
	assert_int_equal(cap_count_tcp(&r), 0);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	raw_close(&r);
}

static void short_conf(struct myrio_stack_conf *c)
{
	c->max_retries = 3;
}

static void retries_exhausted_is_timeout(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st12", short_conf, &p, 40011, 9);
	assert_int_equal(myrio_tcp_write(p.c, "x", 1), 1);
	for (int i = 0; i < 100; i++) {
		raw_wait_ms(&r, 1000);
	}
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(p.c), -ETIMEDOUT);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ERROR], 1);
	myrio_tcp_close(p.c);
	raw_close(&r);
}

static void orphan_conf(struct myrio_stack_conf *c)
{
	c->time_wait_ms = 500;
	c->max_retries = 4;
}

/* Runs the fake clock for ms in 10 ms steps; counts the FINs and RSTs the stack sent. */
static void run_ms(struct raw *r, unsigned ms, unsigned *fins, unsigned *rsts)
{
	for (unsigned t = 0; t < ms; t += 10) {
		raw_wait_ms(r, 10);
		struct tcpv v;
		for (unsigned i = 0; cap_tcp(r, i, &v); i++) {
			*fins += (v.flags & F_FIN) != 0;
			*rsts += (v.flags & F_RST) != 0;
		}
	}
}

/* docs/reliability.md bug 5: an orphan's deadline must not cut a FIN that is still being
 * retransmitted (the peer's FIN would then meet a RST); the retry limit bounds it, and
 * giving up sends a RST that is counted. */
static void orphan_deadline_spares_a_retransmitted_fin(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st30", orphan_conf, &p, 40030, 9);
	myrio_tcp_close(p.c); /* orphan: the application let go */
	raw_poll(&r);
	unsigned fins = 0, rsts = 0;
	/* FIN lost again and again: probed at 200 ms, retransmitted at 400, 800, 1600 ms,
	 * past the 500 ms deadline, with no RST. */
	run_ms(&r, 1500, &fins, &rsts);
	assert_true(fins >= 3);
	assert_int_equal(rsts, 0);
	/* The peer finally ACKs our FIN and sends its own: a clean close, no RST. */
	p.rcv_nxt++;
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_ACK);
	assert_int_equal(v.ack, p.snd_nxt);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_orphan_resets, 0);
	assert_int_equal(st.tcp_resets_sent, 0);

	/* A peer that never answers: the FIN is retried max_retries times, then RST. */
	struct peer q;
	peer_connect(&r, &q, 40031, 80, 9, true);
	myrio_tcp_close(q.c);
	raw_poll(&r);
	fins = rsts = 0;
	run_ms(&r, 2000, &fins, &rsts);
	assert_int_equal(rsts, 0); /* 200 + 400 + 800 ms: still retrying */
	run_ms(&r, 60000, &fins, &rsts);
	assert_int_equal(fins, 5); /* a tail loss probe, then max_retries RTOs */
	assert_int_equal(rsts, 1);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_orphan_resets, 1);

	/* FIN acknowledged but the peer never closes: FIN_WAIT_2 times out after
	 * time_wait_ms (from entering it) with a RST. */
	struct peer w;
	peer_connect(&r, &w, 40032, 80, 9, true);
	myrio_tcp_close(w.c);
	raw_poll(&r);
	run_ms(&r, 400, &fins, &rsts); /* FIN lost once */
	w.rcv_nxt++;
	peer_ack(&r, &w);
	rsts = 0;
	run_ms(&r, 450, &fins, &rsts);
	assert_int_equal(rsts, 0);
	run_ms(&r, 100, &fins, &rsts);
	assert_int_equal(rsts, 1);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_orphan_resets, 2);
	/* Gone: anything for the tuple is answered with RST. */
	peer_send_poll(&r, &w, F_ACK, "x", 1);
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(v.flags & F_RST);
	raw_close(&r);
}

static void zero_window_is_probed(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st13", NULL, &p, 40012, 9);
	p.win = 0;
	peer_ack(&r, &p); /* window closes */
	assert_int_equal(myrio_tcp_write(p.c, "blocked", 7), 7);
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 0); /* nothing may go */
	raw_wait_ms(&r, 500);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v)); /* window probe: one byte of new data */
	assert_int_equal(v.len, 1);
	assert_int_equal(v.seq, p.rcv_nxt);
	assert_int_equal(v.data[0], 'b');
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_zero_window_probes, 1);
	p.win = 1000; /* opens */
	peer_ack(&r, &p);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.len, 7);
	raw_close(&r);
}

static void syn_flood_keeps_memory_bounded(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st14", NULL, NULL, true), 0);
	listen80(&r); /* backlog 4 */
	for (uint32_t i = 0; i < 5000; i++) {
		struct tcpf t = {.sport = (uint16_t)(1024 + i),
				 .dport = 80,
				 .seq = i * 7919u,
				 .flags = F_SYN,
				 .win = 1000};
		raw_send_tcp(&r, &t);
		if (i % 32 == 31)
			raw_poll(&r);
	}
	raw_poll(&r);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_passive_opens, 4);
	assert_int_equal(st.drop_tcp_syn_backlog, 4996);
	/* The half-open ones give up after their SYN-ACK retries; memory comes back. */
	for (int i = 0; i < 200; i++) {
		raw_wait_ms(&r, 1000);
	}
	raw_poll(&r);
	assert_int_equal(myrio_pool_free_count(r.s->pool), r.s->pool->count);
	uint32_t in_use = 0;
	for (uint32_t i = 0; i < r.s->nconns; i++)
		in_use += r.s->conns[i].in_use;
	assert_int_equal(in_use, 0);
	/* And a real client gets in. */
	struct peer p;
	peer_connect(&r, &p, 50000, 80, 1, true);
	assert_non_null(p.c);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	raw_close(&r);
}

/* Sends a SYN from sport (peer ISN isn, MSS 1460, timestamps and window scaling offered)
 * and returns the SYN-ACK the stack answered with. */
static void syn_and_answer(struct raw *r, uint16_t sport, uint32_t isn, struct tcpv *v)
{
	uint8_t o[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 1, 3, 3, 7};
	struct tcpf t = {.sport = sport,
			 .dport = 80,
			 .seq = isn,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = 20};
	raw_send_tcp_poll(r, &t);
	assert_true(cap_tcp(r, 0, v));
	assert_int_equal(v->flags, F_SYN | F_ACK);
	assert_int_equal(v->ack, isn + 1);
}

/* The application's accept queue full: nothing is reset; new SYNs and final ACKs are
 * dropped (counted), the half-open connection keeps retransmitting its SYN-ACK and
 * completes on the ACK that comes once there is room. */
static void full_accept_queue_holds_handshakes_back(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st40", NULL, NULL, true), 0);
	struct myrio_tcp_listener *l = listen80(&r);
	struct tcpv v;
	syn_and_answer(&r, 41000, 100, &v);
	uint32_t synack_seq = v.seq;
	myrio_tcp_listener_set_full(l, true);
	struct tcpf a = {.sport = 41000,
			 .dport = 80,
			 .seq = 101,
			 .ack = synack_seq + 1,
			 .flags = F_ACK,
			 .win = 1000};
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(cap_count_tcp(&r), 0); /* no reset */
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 0);
	struct tcpf syn = {.sport = 41001, .dport = 80, .seq = 7, .flags = F_SYN, .win = 1000};
	raw_send_tcp_poll(&r, &syn);
	assert_int_equal(cap_count_tcp(&r), 0); /* the peer's SYN retransmission comes back */
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.drop_tcp_listen_overflow, 2);
	assert_int_equal(st.tcp_resets_sent, 0);
	raw_wait_ms(&r, 1500);
	assert_true(cap_tcp(&r, 0, &v)); /* the SYN-ACK again */
	assert_int_equal(v.flags, F_SYN | F_ACK);
	assert_int_equal(v.seq, synack_seq);
	myrio_tcp_listener_set_full(l, false); /* accept() made room */
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 1);
	assert_int_equal(myrio_tcp_state(r.last_conn), MYRIO_TCP_ESTABLISHED);
	raw_close(&r);
}

/* Backlog full: SYNs are answered with a cookie and no state; only a returning ACK with a
 * valid, recent cookie makes a connection (options: test_tcp_syncookie.c). */
static void full_backlog_answers_with_syn_cookies(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st31", NULL, NULL, true), 0);
	listen80(&r); /* backlog 4 */
	struct tcpv v;
	for (uint16_t i = 0; i < 4; i++)
		syn_and_answer(&r, (uint16_t)(2000 + i), 1000u * i, &v);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_syncookies_sent, 0);
	syn_and_answer(&r, 3000, 77777, &v);
	uint32_t cookie = v.seq;
	assert_true(find_opt(v.opts, v.optlen, 2) >= 0);
	assert_int_equal(get_be16(v.opts + find_opt(v.opts, v.optlen, 2) + 2), 1460);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_syncookies_sent, 1);
	assert_int_equal(st.tcp_passive_opens, 4);
	/* A forged cookie: RST, no connection. */
	struct tcpf a = {.sport = 3000,
			 .dport = 80,
			 .seq = 77778,
			 .ack = cookie + 2,
			 .flags = F_ACK,
			 .win = 1000};
	raw_send_tcp_poll(&r, &a);
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(v.flags & F_RST);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 0);
	/* The same cookie from another port does not match either. */
	a.ack = cookie + 1;
	a.sport = 3001;
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 0);
	/* The real one, with data: accepted, established, data delivered. */
	a.sport = 3000;
	a.flags = F_ACK | F_PSH;
	a.data = (const uint8_t *)"hi";
	a.len = 2;
	raw_send_tcp_poll(&r, &a);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 1);
	struct myrio_tcp_conn *c = r.last_conn;
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(myrio_tcp_mss(c), 1460);
	char b[4];
	assert_int_equal(myrio_tcp_read(c, b, sizeof(b)), 2);
	assert_memory_equal(b, "hi", 2);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_syncookies_ok, 1);
	assert_int_equal(st.tcp_syncookies_failed, 2);
	/* A cookie older than two ticks of 65.5 s is refused. */
	syn_and_answer(&r, 3002, 5555, &v);
	cookie = v.seq;
	raw_wait_ms(&r, 3 * 65536);
	raw_drop_captured(&r);
	struct tcpf old = {.sport = 3002,
			   .dport = 80,
			   .seq = 5556,
			   .ack = cookie + 1,
			   .flags = F_ACK,
			   .win = 1000};
	raw_send_tcp_poll(&r, &old);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 1);
	myrio_tcp_close(c);
	raw_close(&r);
}

static void closed_port_answers_rst(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st15", NULL, NULL, true), 0);
	struct tcpf t = {.sport = 1234, .dport = 81, .seq = 555, .flags = F_SYN, .win = 1000};
	raw_send_tcp_poll(&r, &t);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_RST | F_ACK);
	assert_int_equal(v.ack, 556);
	assert_int_equal(v.seq, 0);
	/* An ACK segment gets RST with seq = its ack, no ACK flag. */
	t.flags = F_ACK;
	t.ack = 0xabcdef;
	raw_send_tcp_poll(&r, &t);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(v.seq, 0xabcdef);
	/* A RST gets nothing. */
	t.flags = F_RST;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(cap_count_tcp(&r), 0);
	raw_close(&r);
}

static void active_open_from_the_stack(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st16", NULL, NULL, true), 0);
	struct tcpv v;
	struct myrio_tcp_conn *c = raw_active_open(&r, 7000, &v);
	assert_non_null(c);
	assert_int_equal(v.flags, F_SYN);
	assert_int_equal(v.dport, 7000);
	assert_true(v.sport >= 49152);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_SYN_SENT);
	/* SYN-ACK with a bad ack: RST, still SYN_SENT. */
	struct tcpf t = {.sport = 7000,
			 .dport = v.sport,
			 .seq = 999,
			 .ack = v.seq + 5,
			 .flags = F_SYN | F_ACK,
			 .win = 8192};
	uint32_t iss = v.seq;
	raw_send_tcp_poll(&r, &t);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_RST);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_SYN_SENT);
	t.ack = iss + 1;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_CONNECTED], 1);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, 1000);
	assert_int_equal(myrio_tcp_mss(c), 536); /* the peer sent no MSS option */
	/* Same ISN seed and clock, different tuple: a different ISN (RFC 6528). */
	struct myrio_tcp_conn *c2;
	assert_int_equal(myrio_tcp_connect(r.s, PEER_IP, 7001, NULL, &c2), 0);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_not_equal(v.seq, iss);
	raw_close(&r);
}

static void sending_across_the_sequence_wrap(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "st17", NULL, NULL, true), 0);
	listen80(&r);
	/* Learn the ISN for this tuple, then move the clock so the next one lands just
	 * below 2^32 (ISN = keyed hash + 4 us clock, RFC 6528). */
	struct tcpf t = {.sport = 41000, .dport = 80, .seq = 1, .flags = F_SYN, .win = 65535};
	raw_send_tcp_poll(&r, &t);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	uint32_t delta = 0xfffff000u - v.seq;
	struct tcpf rst = {.sport = 41000, .dport = 80, .seq = 2, .flags = F_RST};
	raw_send_tcp_poll(&r, &rst);
	r.now_ns += (uint64_t)delta * 4000;
	struct peer p;
	peer_connect(&r, &p, 41000, 80, 1, true);
	assert_non_null(p.c);
	assert_int_equal(p.rcv_nxt, 0xfffff001u);
	/* 8 segments of 1000 bytes: from 0xfffff001 past 0 */
	char d[1000];
	for (int i = 0; i < 8; i++) {
		memset(d, 'A' + i, sizeof(d));
		assert_int_equal(myrio_tcp_write(p.c, d, sizeof(d)), 1000);
	}
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 8);
	for (unsigned i = 0; i < 8; i++) {
		assert_true(cap_tcp(&r, i, &v));
		assert_int_equal(v.seq, 0xfffff001u + 1000 * i);
		assert_int_equal(v.data[0], 'A' + (int)i);
	}
	/* Ack the first 5 (past the wrap): 3 remain, then their retransmission. */
	p.rcv_nxt = 0xfffff001u + 5000;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_unacked(p.c), 3000);
	/* No more ACKs: first a tail loss probe (the last segment), then the RTO (the
	 * first unacknowledged one). */
	raw_wait_ms(&r, 2);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.seq, 0xfffff001u + 7000);
	assert_int_equal(v.data[0], 'H');
	raw_wait_ms(&r, 200);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.seq, 0xfffff001u + 5000);
	assert_int_equal(v.data[0], 'F');
	p.rcv_nxt = 0xfffff001u + 8000;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	raw_close(&r);
}

static void delack_conf(struct myrio_stack_conf *c)
{
	c->delayed_ack_ms = 40;
}

static void delayed_ack_waits_for_a_second_segment_or_the_timer(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st18", delack_conf, &p, 42000, 1);
	peer_send_poll(&r, &p, F_ACK, "one", 3);
	assert_int_equal(cap_count_tcp(&r), 0); /* held back */
	raw_wait_ms(&r, 39);
	assert_int_equal(cap_count_tcp(&r), 0);
	raw_wait_ms(&r, 1);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v)); /* the timer sent it */
	assert_int_equal(v.ack, p.snd_nxt);
	/* Two segments in one burst: acknowledged at once. */
	peer_send(&r, &p, F_ACK, "two", 3);
	peer_send_poll(&r, &p, F_ACK, "three", 5);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, p.snd_nxt);
	assert_int_equal(cap_count_tcp(&r), 1);
	/* Data going out carries the ACK: no separate one later. */
	peer_send_poll(&r, &p, F_ACK, "four", 4);
	assert_int_equal(myrio_tcp_write(p.c, "reply", 5), 5);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.len, 5);
	assert_int_equal(v.ack, p.snd_nxt);
	raw_wait_ms(&r, 30);
	assert_int_equal(cap_count_tcp(&r), 0);
	p.rcv_nxt += 5;
	peer_ack(&r, &p);
	raw_wait_ms(&r, 100);
	assert_int_equal(cap_count_tcp(&r), 0);
	raw_close(&r);
}

static void window_is_scaled_and_follows_the_reader(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st19", NULL, &p, 42001, 1);
	/* rcv_buf 256 KiB with shift 3: the field says 32768. */
	peer_send_poll(&r, &p, F_ACK, "x", 1);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	uint32_t w0 = (uint32_t)v.win << 3;
	assert_true(w0 >= 256 * 1024 - 8 && w0 <= 256 * 1024);
	/* Hold 20 full segments: the window shrinks by what the reader holds... */
	char d[1448];
	memset(d, 7, sizeof(d));
	for (int i = 0; i < 20; i++)
		peer_send_poll(&r, &p, F_ACK, d, sizeof(d));
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.ack, p.snd_nxt);
	uint32_t w1 = (uint32_t)v.win << 3;
	assert_true(w1 <= 256 * 1024 - 1 - 20 * 1448 + 8);
	assert_true(w1 + 1 + 20 * 1448 >= 256 * 1024 - 8);
	/* ...and its right edge never moves back. */
	assert_true(p.snd_nxt + w1 >= 2 + w0 - 8);
	/* Reading everything reopens it with a window update. */
	struct myrio_pkt *q;
	unsigned n = 0;
	while ((q = myrio_tcp_recv(p.c)) != NULL) {
		myrio_tcp_release(p.c, q);
		n++;
	}
	assert_int_equal(n, 21);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(((uint32_t)v.win << 3) >= 256 * 1024 - 8);
	raw_close(&r);
}

static void new_syn_takes_over_time_wait(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st20", NULL, &p, 42002, 1);
	myrio_tcp_close(p.c); /* we close first: we end in TIME_WAIT */
	raw_poll(&r);
	p.rcv_nxt++;
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	struct myrio_tcp_conn *old = p.c;
	assert_int_equal(myrio_tcp_state(old), MYRIO_TCP_TIME_WAIT);
	/* Same tuple, higher sequence number: a new connection at once. */
	struct peer p2;
	peer_connect(&r, &p2, 42002, 80, p.snd_nxt + 100000, true);
	assert_non_null(p2.c);
	assert_int_equal(myrio_tcp_state(p2.c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 2);
	raw_close(&r);
}

static void retransmission_while_the_nic_holds_the_frame_copies(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st21", NULL, &p, 42003, 1);
	assert_int_equal(myrio_tcp_write(p.c, "zero-copy payload", 17), 17);
	/* Poll the stack only: the frame stays on the link, i.e. the "NIC" still reads
	 * the buffer (the pair port holds a reference until the peer takes it). */
	myrio_stack_poll(r.s);
	struct myrio_pkt *seg = p.c->sndq;
	assert_non_null(seg);
	assert_int_equal(seg->refcnt, 2);
	uint8_t before[128];
	memcpy(before, myrio_pkt_data(seg), seg->len);
	uint32_t flen = seg->len;
	r.now_ns += 300 * 1000000ull; /* past the probe and the RTO */
	myrio_stack_poll(r.s);
	r.now_ns += 300 * 1000000ull;
	myrio_stack_poll(r.s);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_true(st.tcp_tx_copy_nic_busy >= 1);
	/* The held frame was not touched: same bytes as when it was handed over. */
	assert_int_equal(seg->len, flen);
	assert_memory_equal(myrio_pkt_data(seg), before, flen);
	/* All copies on the wire are valid segments with the same payload. */
	raw_poll(&r);
	unsigned n = cap_count_tcp(&r);
	assert_true(n >= 2);
	for (unsigned i = 0; i < n; i++) {
		struct tcpv v;
		assert_true(cap_tcp(&r, i, &v));
		assert_int_equal(v.len, 17);
		assert_memory_equal(v.data, "zero-copy payload", 17);
		assert_int_equal(v.seq, p.rcv_nxt);
	}
	/* Once the NIC let go, the next retransmission reuses the buffer in place. */
	uint64_t copies = st.tcp_tx_copy_nic_busy;
	raw_wait_ms(&r, 2000);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_tx_copy_nic_busy, copies);
	assert_int_equal(cap_count_tcp(&r), 1);
	raw_close(&r);
}

static void nagle_conf(struct myrio_stack_conf *c)
{
	c->nagle = true;
}

static void nagle_holds_small_segments_while_data_is_unacked(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st22", nagle_conf, &p, 42004, 1);
	assert_int_equal(myrio_tcp_write(p.c, "a", 1), 1);
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 1); /* nothing in flight: goes at once */
	assert_int_equal(myrio_tcp_write(p.c, "b", 1), 1);
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 0); /* small, and "a" is unacknowledged */
	p.rcv_nxt += 1;
	peer_ack(&r, &p);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.len, 1);
	assert_int_equal(v.data[0], 'b');
	raw_close(&r);
}

static void small_queue_conf(struct myrio_stack_conf *c)
{
	c->snd_queue_segs = 4;
}

static void full_send_queue_refuses_then_signals_writable(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st23", small_queue_conf, &p, 42005, 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(myrio_tcp_write(p.c, "1234567890", 10), 10);
	assert_int_equal(myrio_tcp_send_space(p.c), 0);
	struct myrio_pkt *x = myrio_stack_pkt_alloc(r.s);
	x->len = 10;
	assert_int_equal(myrio_tcp_send(p.c, x), -EAGAIN); /* still ours */
	x->len = 2000;
	assert_int_equal(myrio_tcp_send(p.c, x), -EMSGSIZE);
	myrio_pkt_free(x);
	assert_int_equal(myrio_tcp_write(p.c, "more", 4), 0);
	raw_poll(&r);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_WRITABLE], 0);
	p.rcv_nxt += 20; /* two of four acknowledged */
	peer_ack(&r, &p);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_WRITABLE], 1);
	assert_int_equal(myrio_tcp_send_space(p.c), 2);
	assert_int_equal(myrio_tcp_unacked(p.c), 20);
	/* After shutdown nothing more may be queued. */
	assert_int_equal(myrio_tcp_shutdown(p.c), 0);
	assert_int_equal(myrio_tcp_write(p.c, "late", 4), -EPIPE);
	raw_close(&r);
}

/* An ACK from the peer with a timestamp and one SACK block [l, r). */
static void peer_sack(struct raw *r, struct peer *p, uint32_t l, uint32_t rr)
{
	const uint32_t b[1][2] = {{l, rr}};
	peer_send_sack(r, p, b, 1);
}

static void sack_recovery_and_a_lost_retransmission(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "st24", NULL, &p, 42006, 1);
	char d[1000];
	for (int i = 0; i < 6; i++) {
		memset(d, 'a' + i, sizeof(d));
		assert_int_equal(myrio_tcp_write(p.c, d, sizeof(d)), 1000);
	}
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 6);
	uint32_t base = p.rcv_nxt;
	/* The first segment is lost: the peer SACKs the other five, one by one. */
	for (int i = 1; i <= 5; i++) {
		peer_sack(&r, &p, base + 1000, base + 1000 + 1000 * (uint32_t)i);
		raw_poll(&r);
	}
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_fast_retransmits, 1);
	/* The retransmission is lost too and nothing else is left to ACK: the stack must
	 * notice after about a round trip, not after the 200 ms RTO. */
	unsigned resent = 0;
	for (int ms = 0; ms < 20 && !resent; ms++) {
		raw_wait_ms(&r, 1);
		struct tcpv v;
		if (cap_tcp(&r, 0, &v) && v.seq == base && v.len == 1000 && v.data[0] == 'a')
			resent = 1;
	}
	assert_true(resent);
	st = raw_stats(&r);
	assert_int_equal(st.tcp_lost_retransmits, 1);
	assert_int_equal(st.tcp_rto_expired, 0);
	/* The hole fills: everything acknowledged at once, recovery over. */
	p.rcv_nxt = base + 6000;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	assert_int_equal(cs.sack_blocks_rcvd, 5);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(passive_open_negotiates_options),
	    cmocka_unit_test(syn_without_options_gets_defaults),
	    cmocka_unit_test(data_is_delivered_and_acked),
	    cmocka_unit_test(rst_with_wrong_sequence_gets_challenge_ack),
	    cmocka_unit_test(challenge_acks_are_rate_limited),
	    cmocka_unit_test(paws_drops_old_timestamps),
	    cmocka_unit_test(out_of_order_is_held_sacked_and_delivered_in_order),
	    cmocka_unit_test(ooo_queue_is_bounded),
	    cmocka_unit_test(peer_close_then_local_close),
	    cmocka_unit_test(active_close_time_wait),
	    cmocka_unit_test(retransmission_timer_backs_off),
	    cmocka_unit_test(retries_exhausted_is_timeout),
	    cmocka_unit_test(zero_window_is_probed),
	    cmocka_unit_test(orphan_deadline_spares_a_retransmitted_fin),
	    cmocka_unit_test(syn_flood_keeps_memory_bounded),
	    cmocka_unit_test(full_backlog_answers_with_syn_cookies),
	    cmocka_unit_test(closed_port_answers_rst),
	    cmocka_unit_test(active_open_from_the_stack),
	    cmocka_unit_test(sending_across_the_sequence_wrap),
	    cmocka_unit_test(delayed_ack_waits_for_a_second_segment_or_the_timer),
	    cmocka_unit_test(window_is_scaled_and_follows_the_reader),
	    cmocka_unit_test(new_syn_takes_over_time_wait),
	    cmocka_unit_test(retransmission_while_the_nic_holds_the_frame_copies),
	    cmocka_unit_test(nagle_holds_small_segments_while_data_is_unacked),
	    cmocka_unit_test(full_send_queue_refuses_then_signals_writable),
	    cmocka_unit_test(sack_recovery_and_a_lost_retransmission),
	    cmocka_unit_test(full_accept_queue_holds_handshakes_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
