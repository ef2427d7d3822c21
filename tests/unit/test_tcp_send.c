/* SPDX-License-Identifier: BSD-3-Clause */
/* The send side against a crafted peer: the segment size a peer may impose (MSS floor,
 * option bytes, SACK blocks), small and zero windows, loss recovery after a timeout and
 * with SACK, tail loss probes and RTT samples, the restart after idle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

#define MTU 1500u

static void listen80(struct raw *r)
{
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r->s, 80, 4, NULL, &l), 0);
}

/* A stack on a fresh link called name, listening on port 80, and a peer connected from
 * sport with all options offered. */
static void connected(struct raw *r, const char *name, void (*tweak)(struct myrio_stack_conf *),
		      struct peer *p, uint16_t sport)
{
	assert_int_equal(raw_open(r, name, NULL, tweak, true), 0);
	listen80(r);
	peer_connect(r, p, sport, 80, 1, true);
	assert_non_null(p->c);
}

/* Every captured TCP frame fits the MTU and its checksums are right; returns the count. */
static unsigned frames_fit_the_mtu(struct raw *r)
{
	unsigned n = 0;
	for (unsigned j = 0; j < r->ncap; j++) {
		const uint8_t *f = myrio_pkt_data(r->cap[j]);
		if (r->cap[j]->len < 54 || get_be16(f + 12) != 0x0800 || f[23] != 6)
			continue;
		assert_true(get_be16(f + 16) <= MTU);
		n++;
	}
	struct tcpv v;
	for (unsigned i = 0; i < n; i++)
		assert_true(cap_tcp(r, i, &v));
	return n;
}

/* SYN options: MSS mss, SACK-permitted, timestamps (TSval 1000), window scale 7. */
static void syn_opts(uint8_t o[20], uint16_t mss)
{
	const uint8_t t[20] = {2, 4, 0, 0, 4, 2, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 1, 3, 3, 7};
	memcpy(o, t, 20);
	put_be16(o + 2, mss);
}

/* Writes len bytes of a pattern as the application would, draining the link with full
 * ACKs, and checks every segment: within mss, fitting the MTU, bytes in order. */
static void write_and_check(struct raw *r, struct peer *p, uint32_t len, uint32_t mss)
{
	static uint8_t buf[65536];
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i % 251);
	uint32_t put = 0, got = 0;
	for (int round = 0; round < 20000 && got < len; round++) {
		if (put < len) {
			ssize_t n = myrio_tcp_write(p->c, buf + put, len - put);
			assert_true(n >= 0);
			put += (uint32_t)n;
		}
		raw_poll(r);
		frames_fit_the_mtu(r);
		struct tcpv v;
		bool any = false;
		for (unsigned i = 0; cap_tcp(r, i, &v); i++) {
			if (!v.len || v.seq != p->rcv_nxt)
				continue;
			assert_true(v.len <= mss);
			assert_memory_equal(v.data, buf + got, v.len);
			got += v.len;
			p->rcv_nxt += v.len;
			any = true;
		}
		if (any)
			peer_send(r, p, F_ACK, NULL, 0); /* taken in by the next poll */
		else
			raw_advance_ms(r, 1);
	}
	assert_int_equal(got, len);
}

/* Defect: MSS 4 with timestamps wrapped to 65528 and one 64 KiB write ran over the pool's
 * buffers. The floor is 48 bytes for the MSS option, timestamps come off it. */
static void tiny_mss_on_passive_open_is_floored(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "snd1", NULL, NULL, true), 0);
	listen80(&r);
	uint8_t o[20];
	syn_opts(o, 4);
	struct tcpf t = {.sport = 41000,
			 .dport = 80,
			 .seq = 1,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = 20};
	raw_send_tcp_poll(&r, &t);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_SYN | F_ACK);
	struct peer p = {.sport = 41000,
			 .dport = 80,
			 .snd_nxt = 2,
			 .rcv_nxt = v.seq + 1,
			 .tsval = 1000,
			 .ts = true,
			 .win = 65535};
	int k = find_opt(v.opts, v.optlen, 8);
	assert_true(k >= 0);
	p.ts_stack = get_be32(v.opts + k + 2);
	peer_ack(&r, &p);
	p.c = r.last_conn;
	assert_non_null(p.c);
	assert_int_equal(myrio_tcp_mss(p.c), 48 - 12);
	write_and_check(&r, &p, 65536, 36);
	raw_close(&r);
}

static void tiny_mss_on_active_open_is_floored(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "snd2", NULL, NULL, true), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r.s, PEER_IP, 7000, NULL, &c), 0);
	raw_poll(&r);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	uint8_t o[20];
	syn_opts(o, 4);
	struct tcpf t = {.sport = 7000,
			 .dport = v.sport,
			 .seq = 999,
			 .ack = v.seq + 1,
			 .flags = F_SYN | F_ACK,
			 .win = 65535,
			 .opts = o,
			 .optlen = 20};
	struct peer p = {.sport = 7000,
			 .dport = v.sport,
			 .snd_nxt = 1000,
			 .rcv_nxt = v.seq + 1,
			 .tsval = 1000,
			 .ts = true,
			 .win = 65535,
			 .c = c};
	int k = find_opt(v.opts, v.optlen, 8);
	assert_true(k >= 0);
	p.ts_stack = get_be32(v.opts + k + 2);
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(myrio_tcp_mss(c), 48 - 12);
	write_and_check(&r, &p, 65536, 36);

	/* Without timestamps the floor is the payload itself; an MSS above ours is ours. */
	uint16_t sport;
	assert_int_equal(myrio_tcp_connect(r.s, PEER_IP, 7001, NULL, &c), 0);
	raw_poll(&r);
	assert_true(cap_tcp(&r, 0, &v));
	sport = v.sport;
	const uint8_t mss_only[4] = {2, 4, 0, 40};
	struct tcpf u = {.sport = 7001,
			 .dport = sport,
			 .seq = 5,
			 .ack = v.seq + 1,
			 .flags = F_SYN | F_ACK,
			 .win = 65535,
			 .opts = mss_only,
			 .optlen = 4};
	raw_send_tcp_poll(&r, &u);
	assert_int_equal(myrio_tcp_mss(c), 48);
	raw_close(&r);
}

/* Defect: a full-MSS segment sent while SACK blocks were due was 1526 bytes at MTU 1500,
 * and so was its retransmission. */
static void sack_blocks_count_against_the_segment_size(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd3", NULL, &p, 41003);
	/* A hole in what the peer sends: the stack holds [100, 200) out of order. */
	char d[100];
	memset(d, 'x', sizeof(d));
	p.snd_nxt += 100;
	peer_send_poll(&r, &p, F_ACK, d, 100);
	p.snd_nxt -= 200;
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_true(find_opt(v.opts, v.optlen, 5) >= 0); /* the duplicate ACK with its block */
	static uint8_t buf[3 * 1448];
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i % 251);
	assert_int_equal(myrio_tcp_write(p.c, buf, sizeof(buf)), sizeof(buf));
	uint32_t base = p.rcv_nxt;
	for (int pass = 0; pass < 2; pass++) {
		/* First the transmission, then (nothing acknowledged) the retransmissions. */
		if (pass == 0)
			raw_poll(&r);
		else {
			raw_wait_ms(&r, 50); /* the tail loss probe */
			frames_fit_the_mtu(&r);
			raw_wait_ms(&r, 250); /* the RTO: go back to the first */
		}
		unsigned n = frames_fit_the_mtu(&r);
		uint32_t at = base;
		for (unsigned i = 0; i < n && cap_tcp(&r, i, &v); i++) {
			if (!v.len || v.seq != at)
				continue;
			assert_true(find_opt(v.opts, v.optlen, 5) >= 0);
			assert_memory_equal(v.data, buf + (at - base), v.len);
			at += v.len;
		}
		assert_true(at - base >= (pass == 0 ? sizeof(buf) : 1));
	}
	raw_close(&r);
}

/* Passive open from a peer whose SYN offers window win and options o (no timestamps). */
static void handshake(struct raw *r, struct peer *p, uint16_t sport, uint16_t win, const uint8_t *o,
		      uint8_t optlen)
{
	struct tcpf t = {.sport = sport,
			 .dport = 80,
			 .seq = 1,
			 .flags = F_SYN,
			 .win = win,
			 .opts = o,
			 .optlen = optlen};
	raw_send_tcp_poll(r, &t);
	struct tcpv v;
	assert_true(cap_tcp(r, 0, &v));
	assert_int_equal(v.flags, F_SYN | F_ACK);
	memset(p, 0, sizeof(*p));
	p->sport = sport;
	p->dport = 80;
	p->snd_nxt = 2;
	p->rcv_nxt = v.seq + 1;
	p->win = win;
	peer_ack(r, p);
	p->c = r->last_conn;
	assert_non_null(p->c);
}

/* Defect: a window smaller than one queued segment stalled the connection forever (Linux
 * with SO_RCVBUF 1 KiB got nothing). A peer whose largest window is 1024 gets segments cut
 * to it at once (RFC 9293 §3.8.6.2.1, Fs = 1/2). */
static void small_window_gets_cut_segments(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "snd4", NULL, NULL, true), 0);
	listen80(&r);
	const uint8_t mss1460[4] = {2, 4, 0x05, 0xb4};
	struct peer p;
	handshake(&r, &p, 41004, 1024, mss1460, 4);
	assert_int_equal(myrio_tcp_mss(p.c), 1460);
	write_and_check(&r, &p, 8000, 1024);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_zero_window_probes, 0); /* none needed: no waiting */
	raw_close(&r);
}

/* A window that shrinks to 512 bytes after a large one: below half the largest, so the
 * persist timer sends what fits (the override timeout of §3.8.6.2.1), with data. */
static void persist_probes_carry_data_into_a_small_window(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd5", NULL, &p, 41005);
	p.win = 4; /* scaled by 7: 512 bytes */
	peer_ack(&r, &p);
	uint64_t t0 = r.now_ns;
	write_and_check(&r, &p, 3000, 512);
	assert_true(r.now_ns - t0 < 3000000000ull); /* a probe about every RTO */
	struct myrio_stack_stats st = raw_stats(&r);
	assert_true(st.tcp_zero_window_probes >= 3);
	raw_close(&r);
}

static void four_retries(struct myrio_stack_conf *c)
{
	c->max_retries = 4;
}

/* Runs ms of fake time in 100 ms steps; the peer answers every segment that carries data
 * with an ACK when answer is set. Returns the data segments seen. */
static unsigned probe_run(struct raw *r, struct peer *p, unsigned ms, bool answer)
{
	unsigned seen = 0;
	for (unsigned t = 0; t < ms; t += 100) {
		raw_wait_ms(r, 100);
		struct tcpv v;
		bool any = false;
		for (unsigned i = 0; cap_tcp(r, i, &v); i++) {
			if (!v.len)
				continue;
			assert_int_equal(v.seq, p->rcv_nxt); /* a byte beyond the window, no more */
			assert_int_equal(v.len, 1);
			seen++;
			any = true;
		}
		if (any && answer)
			peer_send(r, p, F_ACK, NULL, 0);
	}
	return seen;
}

/* Defect: a window closing with data outstanding got no probes, and the retransmission
 * limit reset the connection: a slow reader killed it. The window may stay closed for as
 * long as the peer answers (RFC 9293 §3.8.6.1); unanswered probes end it. */
static void closed_window_with_data_outstanding_is_held_open(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd6", four_retries, &p, 41006);
	static uint8_t buf[5000];
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i % 251);
	assert_int_equal(myrio_tcp_write(p.c, buf, sizeof(buf)), sizeof(buf));
	raw_poll(&r);
	assert_true(cap_count_tcp(&r) >= 4);
	uint32_t base = p.rcv_nxt;
	p.rcv_nxt = base + 1448; /* the reader stops: the first segment, then a closed window */
	p.win = 0;
	peer_ack(&r, &p);
	/* Twenty minutes of a closed window, every probe answered. */
	unsigned probes = probe_run(&r, &p, 20 * 60 * 1000, true);
	assert_true(probes >= 15);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_ESTABLISHED);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_fast_retransmits, 0); /* answers to probes tell of no loss */
	/* The window opens: the rest arrives. */
	p.win = 65535;
	peer_send(&r, &p, F_ACK, NULL, 0);
	uint32_t got = p.rcv_nxt - base;
	for (int round = 0; round < 100 && got < sizeof(buf); round++) {
		raw_wait_ms(&r, 1);
		struct tcpv v;
		for (unsigned i = 0; cap_tcp(&r, i, &v); i++) {
			if (!v.len || v.seq != p.rcv_nxt)
				continue;
			assert_memory_equal(v.data, buf + got, v.len);
			got += v.len;
			p.rcv_nxt += v.len;
		}
		peer_send(&r, &p, F_ACK, NULL, 0);
	}
	assert_int_equal(got, sizeof(buf));
	raw_poll(&r);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);

	/* Closed again, and the peer falls silent: max_retries probes, then -ETIMEDOUT. */
	assert_int_equal(myrio_tcp_write(p.c, buf, 3000), 3000);
	raw_poll(&r);
	p.rcv_nxt += 1448;
	p.win = 0;
	peer_ack(&r, &p);
	probe_run(&r, &p, 10 * 60 * 1000, false);
	assert_int_equal(myrio_tcp_state(p.c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(p.c), -ETIMEDOUT);
	raw_close(&r);
}

static void no_wscale(struct myrio_stack_conf *c)
{
	c->window_scale = false; /* rcv_buf (256 KiB) is more than a 16-bit window says */
}

/* Defect: without window scaling each buffer the application released sent an ACK that
 * changed nothing (free space compared with a window capped at 65535 already): duplicate
 * ACKs to the sender, which took them for loss. */
static void release_without_window_change_sends_no_ack(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd7", no_wscale, &p, 41007);
	char d[1000];
	memset(d, 'y', sizeof(d));
	for (int i = 0; i < 8; i++)
		peer_send(&r, &p, F_ACK | F_PSH, d, sizeof(d));
	raw_poll(&r);
	struct myrio_pkt *held[8];
	for (int i = 0; i < 8; i++)
		assert_non_null(held[i] = myrio_tcp_recv(p.c));
	struct tcpv v;
	uint32_t last_ack = 0, last_win = 0;
	for (unsigned i = 0; cap_tcp(&r, i, &v); i++) {
		last_ack = v.ack;
		last_win = v.win;
	}
	assert_int_equal(last_ack, p.snd_nxt);
	assert_int_equal(last_win, 65535);
	for (int i = 0; i < 8; i++) {
		myrio_tcp_release(p.c, held[i]);
		raw_poll(&r);
		for (unsigned k = 0; cap_tcp(&r, k, &v); k++)
			assert_false(v.ack == last_ack && v.win == last_win); /* a duplicate */
	}
	raw_close(&r);
}

/* Highest sequence number the captured segments reach, at least hi. */
static uint32_t highest_sent(struct raw *r, uint32_t hi)
{
	struct tcpv v;
	for (unsigned i = 0; cap_tcp(r, i, &v); i++)
		if (seq_gt(v.seq + v.len, hi))
			hi = v.seq + v.len;
	return hi;
}

/* Defect: NewReno recorded no recovery point at a timeout (RFC 6582 §3.2 step 1), so the
 * duplicate ACKs that go-back-N's resends of data the peer held produced a spurious fast
 * retransmit and a second ssthresh cut. */
static void newreno_timeout_sets_a_recovery_point(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "snd8", NULL, NULL, true), 0);
	listen80(&r);
	struct peer p;
	peer_connect(&r, &p, 41008, 80, 1, false); /* no SACK, no timestamps: NewReno */
	assert_non_null(p.c);
	char d[500];
	memset(d, 'n', sizeof(d));
	for (int i = 0; i < 30; i++)
		assert_int_equal(myrio_tcp_write(p.c, d, sizeof(d)), 500);
	raw_poll(&r);
	uint32_t base = p.rcv_nxt, hi = highest_sent(&r, base);
	/* Nothing comes back: a tail loss probe, then the RTO. */
	for (int ms = 0; ms < 250; ms++) {
		raw_wait_ms(&r, 1);
		hi = highest_sent(&r, hi);
	}
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	assert_int_equal(cs.rto_expired, 1);
	uint32_t ssthresh = cs.ssthresh;
	/* The peer had all but the first and the fifth segment: the resent first one is
	 * acknowledged up to the fifth, ... */
	p.rcv_nxt = base + 4 * 500;
	peer_ack(&r, &p);
	/* ... the resent fifth fills the last hole, the rest it sent meanwhile are
	 * duplicates the peer acknowledges each once more. */
	p.rcv_nxt = hi;
	peer_ack(&r, &p);
	for (int i = 0; i < 4; i++)
		peer_ack(&r, &p);
	myrio_tcp_conn_stats(p.c, &cs);
	assert_int_equal(cs.fast_retransmits, 0);
	assert_int_equal(cs.ssthresh, ssthresh);
	raw_close(&r);
}

/* How many captured segments start at seq with data. */
static unsigned sent_at(struct raw *r, uint32_t seq)
{
	struct tcpv v;
	unsigned n = 0;
	for (unsigned i = 0; cap_tcp(r, i, &v); i++)
		n += v.len && v.seq == seq;
	return n;
}

/* Defect: in SACK recovery a partial ACK resent the next hole although it had been
 * retransmitted already (RFC 6675 NextSeg rule 1.a: only above HighRxt). */
static void partial_ack_does_not_resend_a_retransmitted_hole(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd9", NULL, &p, 41009);
	char d[1000];
	memset(d, 's', sizeof(d));
	for (int i = 0; i < 6; i++)
		assert_int_equal(myrio_tcp_write(p.c, d, sizeof(d)), 1000);
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 6);
	uint32_t b = p.rcv_nxt;
	/* The first and the third are lost: the peer SACKs the second, then the rest. */
	const uint32_t one[1][2] = {{b + 1000, b + 2000}};
	const uint32_t two[2][2] = {{b + 3000, b + 6000}, {b + 1000, b + 2000}};
	peer_send_sack(&r, &p, one, 1);
	raw_poll(&r);
	unsigned third = 0;
	for (int k = 0; k < 3; k++) {
		peer_send_sack(&r, &p, two, 2);
		raw_poll(&r);
		third += sent_at(&r, b + 2000);
	}
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_fast_retransmits, 1);
	assert_int_equal(third, 1); /* both holes resent, each once */
	/* The first's retransmission arrives: a partial ACK up to the third. */
	p.rcv_nxt = b + 2000;
	const uint32_t rest[1][2] = {{b + 3000, b + 6000}};
	peer_send_sack(&r, &p, rest, 1);
	raw_poll(&r);
	assert_int_equal(sent_at(&r, b + 2000), 0);
	/* And it arrives too: recovery is over. */
	p.rcv_nxt = b + 6000;
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	raw_close(&r);
}

/* Defect: the probe timeout allowed 40 ms (our own delayed ACK) for the peer's delayed
 * ACK of a lone segment, so a Linux peer (40 ms and more) drew a tail loss probe, counted
 * as a retransmission, on a clean link. RFC 8985 §7.2: 200 ms (WCDelAckT). */
static void tail_loss_probe_waits_for_a_delayed_ack(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd10", NULL, &p, 41010);
	assert_int_equal(myrio_tcp_write(p.c, "lone", 4), 4);
	raw_poll(&r);
	assert_int_equal(cap_count_tcp(&r), 1);
	for (int ms = 0; ms < 45; ms++) { /* the peer delays its ACK by 45 ms */
		raw_wait_ms(&r, 1);
		assert_int_equal(cap_count_tcp(&r), 0);
	}
	p.rcv_nxt += 4;
	peer_ack(&r, &p);
	struct myrio_stack_stats st = raw_stats(&r);
	assert_int_equal(st.tcp_tail_loss_probes, 0);
	assert_int_equal(st.tcp_retransmits, 0);
	raw_close(&r);
}

/* Defect (Karn's rule): the ACK of a segment the tail loss probe resent was taken as an
 * RTT sample of its first transmission (srtt 0.65 -> 6 ms was seen). */
static void tail_loss_probe_resend_gives_no_rtt_sample(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd11", NULL, &p, 41011);
	char d[1000];
	memset(d, 'k', sizeof(d));
	for (int i = 0; i < 3; i++)
		assert_int_equal(myrio_tcp_write(p.c, d, sizeof(d)), 1000);
	raw_poll(&r);
	p.rcv_nxt += 1000; /* the first at once: a sample; the probe timer for the rest */
	peer_ack(&r, &p);
	assert_int_equal(myrio_tcp_write(p.c, d, sizeof(d)), 1000); /* timed */
	raw_poll(&r);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	uint32_t srtt = cs.srtt_us;
	assert_true(srtt < 100);
	/* Their ACKs are lost: the probe resends the last, the timed one, and the ACK that
	 * covers it may answer the copy. */
	unsigned probes = 0;
	for (int ms = 0; ms < 20 && !probes; ms++) {
		raw_wait_ms(&r, 1);
		probes = sent_at(&r, p.rcv_nxt + 2000);
	}
	assert_int_equal(probes, 1);
	p.rcv_nxt += 3000;
	peer_ack(&r, &p);
	myrio_tcp_conn_stats(p.c, &cs);
	assert_int_equal(cs.srtt_us, srtt);
	raw_close(&r);
}

/* Defect: no restart window after idle (RFC 5681 §4.1): a connection idle for longer than
 * an RTO sent a burst of its old cwnd. */
static void idle_connection_restarts_from_the_initial_window(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd12", NULL, &p, 41012);
	write_and_check(&r, &p, 65536, 1448); /* slow start opens cwnd */
	raw_poll(&r);			      /* the last ACK */
	assert_int_equal(myrio_tcp_unacked(p.c), 0);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	assert_true(cs.cwnd > 20u * 1448);
	raw_wait_ms(&r, 1000); /* idle, the application's loop polling */
	static uint8_t buf[40000];
	assert_int_equal(myrio_tcp_write(p.c, buf, sizeof(buf)), sizeof(buf));
	raw_poll(&r);
	unsigned n = 0;
	struct tcpv v;
	for (unsigned i = 0; cap_tcp(&r, i, &v); i++)
		n += v.len > 0;
	assert_int_equal(n, 10);
	raw_close(&r);
}

/* Defect: cwnd grew by every byte acknowledged although the peer's window held the flight
 * (iperf3 read hundreds of MB in TCP_INFO). 1 MiB through an 8 KiB window: cwnd stays
 * within what slow start may reach from that flight (RFC 7661, Linux's twice the flight). */
static void a_small_peer_window_bounds_cwnd(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd15", NULL, &p, 41015);
	p.win = 64; /* scaled by 7: 8 KiB */
	peer_ack(&r, &p);
	for (int i = 0; i < 16; i++)
		write_and_check(&r, &p, 65536, 1448);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(p.c, &cs);
	assert_true(cs.cwnd <= 3u * 8192);
	raw_close(&r);
}

/* RFC 6298 §5.7: after a SYN timed out, the RTO is 3 s once the connection is open (no
 * sample may come from the retransmitted SYN). */
static void syn_timeout_leaves_a_3s_rto(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "snd13", NULL, NULL, true), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(r.s, PEER_IP, 7000, NULL, &c), 0);
	raw_poll(&r); /* this SYN is lost */
	raw_wait_ms(&r, 1000);
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	assert_int_equal(v.flags, F_SYN);
	struct tcpf t = {.sport = 7000,
			 .dport = v.sport,
			 .seq = 999,
			 .ack = v.seq + 1,
			 .flags = F_SYN | F_ACK,
			 .win = 65535};
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(c, &cs);
	assert_int_equal(cs.rto_ms, 3000);
	raw_close(&r);
}

/* RFC 2018 §4: the first block holds the segment that triggered the ACK, the others the
 * most recently reported ones, most recent first (not in sequence order). */
static void sack_blocks_most_recent_first(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "snd14", NULL, &p, 41014);
	char d[100];
	memset(d, 'o', sizeof(d));
	uint32_t base = p.snd_nxt;
	const uint32_t order[4] = {7000, 1000, 5000, 3000}; /* four islands, holes between */
	for (int k = 0; k < 4; k++) {
		p.snd_nxt = base + order[k];
		peer_send_poll(&r, &p, F_ACK, d, sizeof(d));
	}
	struct tcpv v;
	assert_true(cap_tcp(&r, 0, &v));
	int o = find_opt(v.opts, v.optlen, 5);
	assert_true(o >= 0);
	assert_int_equal(v.opts[o + 1], 2 + 3 * 8); /* three fit beside the timestamps */
	for (int k = 0; k < 3; k++)
		assert_int_equal(get_be32(v.opts + o + 2 + 8 * k), base + order[3 - k]);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(tiny_mss_on_passive_open_is_floored),
	    cmocka_unit_test(tiny_mss_on_active_open_is_floored),
	    cmocka_unit_test(sack_blocks_count_against_the_segment_size),
	    cmocka_unit_test(small_window_gets_cut_segments),
	    cmocka_unit_test(persist_probes_carry_data_into_a_small_window),
	    cmocka_unit_test(closed_window_with_data_outstanding_is_held_open),
	    cmocka_unit_test(release_without_window_change_sends_no_ack),
	    cmocka_unit_test(newreno_timeout_sets_a_recovery_point),
	    cmocka_unit_test(partial_ack_does_not_resend_a_retransmitted_hole),
	    cmocka_unit_test(tail_loss_probe_waits_for_a_delayed_ack),
	    cmocka_unit_test(tail_loss_probe_resend_gives_no_rtt_sample),
	    cmocka_unit_test(idle_connection_restarts_from_the_initial_window),
	    cmocka_unit_test(a_small_peer_window_bounds_cwnd),
	    cmocka_unit_test(syn_timeout_leaves_a_3s_rto),
	    cmocka_unit_test(sack_blocks_most_recent_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
