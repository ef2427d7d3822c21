/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP input against a crafted peer, where tcp_lite once parted from Linux and the RFCs:
 * simultaneous open (RFC 9293 §3.5), challenge-ACK budgets that leak nothing
 * (CVE-2016-5696), rate-limited answers to segments not accepted, the 24-day timestamp (RFC
 * 7323 §5.5), TIME_WAIT and its reuse (RFC 9293 §3.10.7.4, RFC 6191), retransmitted SYNs in
 * SYN_RCVD, and sources that may not open connections (RFC 1122 §3.2.1.3). Closes that
 * reset: test_tcp_close_reset.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

static void connected(struct raw *r, const char *name, void (*tweak)(struct myrio_stack_conf *),
		      struct peer *p, uint16_t sport, uint32_t isn)
{
	assert_int_equal(raw_connected(r, name, tweak, p, sport, isn), 0);
}

/* The first captured segment, which must exist. */
static struct tcpv first_seg(struct raw *r)
{
	struct tcpv v;
	assert_true(cap_tcp(r, 0, &v));
	return v;
}

static void simultaneous_open_connects(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ir3", NULL, NULL, true), 0);
	struct tcpv syn;
	struct myrio_tcp_conn *c = raw_active_open(&r, 5555, &syn);
	assert_non_null(c);
	assert_int_equal(syn.flags, F_SYN);
	/* Figure 8: the peer's SYN crosses ours. */
	struct tcpf t = {
	    .sport = 5555, .dport = syn.sport, .seq = 7000, .flags = F_SYN, .win = 65535};
	raw_send_tcp_poll(&r, &t);
	struct tcpv sa = first_seg(&r);
	assert_int_equal(sa.flags, F_SYN | F_ACK);
	assert_int_equal(sa.seq, syn.seq);
	assert_int_equal(sa.ack, 7001);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_SYN_RCVD);
	/* Its SYN-ACK acknowledges ours: established, as connect()'s handle. */
	t.flags = F_SYN | F_ACK;
	t.ack = syn.seq + 1;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_CONNECTED], 1);
	assert_int_equal(r.ev_count[MYRIO_TCP_EV_ACCEPTED], 0);
	/* And data flows. */
	t.flags = F_ACK | F_PSH;
	t.seq = 7001;
	t.data = (const uint8_t *)"hi";
	t.len = 2;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(first_seg(&r).ack, 7003);
	char buf[4];
	assert_int_equal(myrio_tcp_read(c, buf, sizeof(buf)), 2);
	assert_int_equal(myrio_tcp_write(c, "ok", 2), 2);
	raw_poll(&r);
	struct tcpv d = first_seg(&r);
	assert_int_equal(d.len, 2);
	assert_int_equal(d.seq, syn.seq + 1);
	myrio_tcp_abort(c);
	raw_close(&r);
}

static void limit10(struct myrio_stack_conf *c)
{
	c->challenge_ack_limit = 10;
}

/* n RSTs on peer p, at seq rcv_nxt + off + i; returns the challenge ACKs its connection
 * was sent meanwhile. */
static uint64_t rsts(struct raw *r, struct peer *p, uint32_t off, unsigned n)
{
	struct myrio_tcp_conn_stats before, after;
	myrio_tcp_conn_stats(p->c, &before);
	for (unsigned i = 0; i < n; i++) {
		struct tcpf t = {.sport = p->sport,
				 .dport = p->dport,
				 .seq = p->snd_nxt + off + i,
				 .flags = F_RST};
		raw_send_tcp(r, &t);
		if (i % 16 == 15)
			raw_poll(r);
	}
	raw_poll(r);
	myrio_tcp_conn_stats(p->c, &after);
	return after.challenge_acks - before.challenge_acks;
}

/* The attack of CVE-2016-5696: spend the shared budget with guessed RSTs on the victim's
 * connection, then count the challenge ACKs left for one's own. What the attacker's own
 * connection gets must not depend on whether the guesses were in the window. */
static void challenge_acks_tell_nothing_about_other_connections(void **state)
{
	struct raw r;
	struct peer victim, own;
	connected(&r, "ir4", limit10, &victim, 41004, 100);
	peer_connect(&r, &own, 41005, 80, 900, true);
	assert_non_null(own.c);
	raw_advance_ms(&r, 1000);
	uint64_t in_window = rsts(&r, &victim, 1, 50); /* guesses that hit */
	uint64_t own_after_hits = rsts(&r, &own, 1, 50);
	raw_advance_ms(&r, 1000);
	rsts(&r, &victim, 0x40000000u, 50); /* guesses that miss: no answer */
	uint64_t own_after_misses = rsts(&r, &own, 1, 50);
	assert_true(in_window >= 1);
	assert_true(own_after_hits >= 1);
	assert_int_equal(own_after_hits, own_after_misses);
	assert_int_equal(myrio_tcp_state(victim.c), MYRIO_TCP_ESTABLISHED);
	raw_close(&r);
}

static void limit4(struct myrio_stack_conf *c)
{
	c->challenge_ack_limit = 4;
	c->max_tcp_conns = 64;
}

/* The shared budget is drawn each second from [limit/2, limit*3/2), not fixed. */
static void the_shared_challenge_budget_varies(void **state)
{
	struct raw r;
	struct peer p[12];
	assert_int_equal(raw_open(&r, "ir5", NULL, limit4, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 16, NULL, &l), 0);
	for (unsigned i = 0; i < 12; i++) {
		peer_connect(&r, &p[i], (uint16_t)(41100 + i), 80, 100 * i, true);
		assert_non_null(p[i].c);
	}
	uint64_t seen[8], lo = UINT64_MAX, hi = 0;
	for (unsigned s = 0; s < 8; s++) {
		raw_advance_ms(&r, 1000);
		uint64_t before = raw_stats(&r).tcp_challenge_acks;
		for (unsigned i = 0; i < 12; i++)
			rsts(&r, &p[i], 1, 1);
		seen[s] = raw_stats(&r).tcp_challenge_acks - before;
		lo = seen[s] < lo ? seen[s] : lo;
		hi = seen[s] > hi ? seen[s] : hi;
	}
	assert_true(lo >= 2);
	assert_true(hi <= 5);
	assert_true(lo < hi);
	raw_close(&r);
}

static void answers_to_segments_not_accepted_are_rate_limited(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "ir6", NULL, &p, 41006, 100);
	struct tcpf t = {.sport = 41006,
			 .dport = 80,
			 .seq = p.snd_nxt + 0x40000000u, /* far outside the window */
			 .ack = p.rcv_nxt,
			 .flags = F_ACK,
			 .win = 1000};
	unsigned acks = 0;
	for (int i = 0; i < 10; i++) {
		raw_send_tcp_poll(&r, &t);
		acks += cap_count_tcp(&r);
		raw_advance_ms(&r, 10);
	}
	assert_int_equal(acks, 1); /* Linux's tcp_invalid_ratelimit: one per 500 ms */
	raw_advance_ms(&r, 500);
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(cap_count_tcp(&r), 1);
	/* Old data (a retransmission below rcv_nxt) is always answered. */
	t.seq = p.snd_nxt - 4;
	t.data = (const uint8_t *)"dupl";
	t.len = 4;
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(cap_count_tcp(&r), 1);
	raw_send_tcp_poll(&r, &t);
	assert_int_equal(cap_count_tcp(&r), 1);
	raw_close(&r);
}

static void a_timestamp_older_than_24_days_is_not_used_against_the_peer(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "ir7", NULL, &p, 41007, 100);
	p.tsval = 0x70000000u;
	peer_send_poll(&r, &p, F_ACK | F_PSH, "one", 3);
	/* The peer's clock runs on (and wraps) while the connection is idle for 25 days. */
	raw_advance_ms(&r, 25ull * 24 * 3600 * 1000);
	p.tsval = 0x10000000u; /* "older" than ts_recent in sequence space */
	peer_send_poll(&r, &p, F_ACK | F_PSH, "two", 3);
	assert_int_equal(first_seg(&r).ack, p.snd_nxt);
	assert_int_equal(raw_stats(&r).tcp_paws_drops, 0);
	char buf[8];
	assert_int_equal(myrio_tcp_read(p.c, buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "onetwo", 6);
	/* ts_recent is the new one: a segment older than it is dropped again (§5.3). */
	p.tsval = 0x0fff0000u;
	peer_send_poll(&r, &p, F_ACK | F_PSH, "old", 3);
	assert_int_equal(raw_stats(&r).tcp_paws_drops, 1);
	raw_close(&r);
}

/* We close first; the peer's FIN puts us in TIME_WAIT (60 s). */
static struct myrio_tcp_conn *into_time_wait(struct raw *r, struct peer *p)
{
	myrio_tcp_close(p->c);
	raw_poll(r);
	p->rcv_nxt++;
	peer_send_poll(r, p, F_ACK | F_FIN, NULL, 0);
	assert_int_equal(myrio_tcp_state(p->c), MYRIO_TCP_TIME_WAIT);
	return p->c;
}

static void a_retransmitted_fin_restarts_time_wait(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "ir8", NULL, &p, 41008, 100);
	struct myrio_tcp_conn *tw = into_time_wait(&r, &p);
	raw_wait_ms(&r, 50000);
	p.snd_nxt--; /* the same FIN again: our ACK was lost */
	peer_send_poll(&r, &p, F_ACK | F_FIN, NULL, 0);
	struct tcpv v = first_seg(&r);
	assert_int_equal(v.flags, F_ACK);
	assert_int_equal(v.ack, p.snd_nxt);
	raw_wait_ms(&r, 15000); /* 65 s after the first FIN, 15 s after the second */
	assert_int_equal(myrio_tcp_state(tw), MYRIO_TCP_TIME_WAIT);
	raw_wait_ms(&r, 46000);
	assert_int_equal(myrio_tcp_state(tw), MYRIO_TCP_CLOSED);
	raw_close(&r);
}

/* A SYN with MSS and timestamps (TSval tsval) from sport at isn. */
static void syn_ts(struct raw *r, uint16_t sport, uint32_t isn, uint32_t tsval)
{
	uint8_t o[16] = {2, 4, 0x05, 0xb4, 1, 1, 8, 10};
	put_be32(o + 8, tsval);
	struct tcpf t = {.sport = sport,
			 .dport = 80,
			 .seq = isn,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = 16};
	raw_send_tcp_poll(r, &t);
}

static void time_wait_reuse_follows_timestamps(void **state)
{
	struct raw r;
	struct peer p;
	connected(&r, "ir9", NULL, &p, 41009, 100000);
	p.tsval = 5000;
	struct myrio_tcp_conn *tw = into_time_wait(&r, &p);
	/* Lower sequence number, older TSval: not a new incarnation (RFC 6191). */
	syn_ts(&r, 41009, p.snd_nxt + 1000, 4000);
	struct tcpv v;
	assert_false(cap_tcp(&r, 0, &v) && v.flags == (F_SYN | F_ACK));
	assert_int_equal(myrio_tcp_state(tw), MYRIO_TCP_TIME_WAIT);
	/* Lower sequence number but a newer TSval: it takes the TIME_WAIT over. */
	syn_ts(&r, 41009, 5, 6000);
	v = first_seg(&r);
	assert_int_equal(v.flags, F_SYN | F_ACK);
	assert_int_equal(v.ack, 6);
	raw_close(&r);
}

static void a_retransmitted_syn_gets_the_syn_ack_again(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ir10", NULL, NULL, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 16, NULL, &l), 0);
	syn_ts(&r, 41010, 3000, 100);
	struct tcpv first = first_seg(&r);
	assert_int_equal(first.flags, F_SYN | F_ACK);
	syn_ts(&r, 41010, 3000, 101); /* the peer never saw it */
	struct tcpv again = first_seg(&r);
	assert_int_equal(again.flags, F_SYN | F_ACK);
	assert_int_equal(again.seq, first.seq);
	assert_int_equal(again.ack, 3001);
	raw_close(&r);
}

/* Sends t as if from src (checksums recomputed), and polls. */
static void send_from(struct raw *r, uint32_t src, const struct tcpf *t)
{
	uint8_t f[256];
	uint32_t n = build_tcp(f, t);
	memcpy(f, r->smac, 6);
	uint8_t *ip = f + 14, *th = ip + 20;
	put_be32(ip + 12, src);
	put_be16(ip + 10, 0);
	put_be16(ip + 10, csum_finish(csum_add(0, ip, 20)));
	put_be16(th + 16, 0);
	put_be16(th + 16, l4_csum(src, STACK_IP, 6, th, (uint16_t)(n - 34)));
	if (n < 60)
		memset(f + n, 0, 60 - n);
	raw_send(r, f, n < 60 ? 60 : n);
	raw_poll(r);
}

static void invalid_sources_open_nothing_and_get_no_answer(void **state)
{
	struct raw r;
	assert_int_equal(raw_open(&r, "ir11", NULL, NULL, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r.s, 80, 16, NULL, &l), 0);
	const uint32_t bad[] = {
	    0,		 0x7f000001u, 0x0a0000ffu /* 10.0.0.255: subnet broadcast */,
	    0xffffffffu, 0xe0000001u, STACK_IP};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tcpf syn = {
		    .sport = 41011, .dport = 80, .seq = 1, .flags = F_SYN, .win = 65535};
		send_from(&r, bad[i], &syn);
		assert_int_equal(cap_count_tcp(&r), 0);
		syn.dport = 81; /* a closed port: no RST either */
		send_from(&r, bad[i], &syn);
		assert_int_equal(cap_count_tcp(&r), 0);
	}
	assert_int_equal(raw_stats(&r).tcp_passive_opens, 0);
	/* A good source still connects. */
	struct tcpf syn = {.sport = 41011, .dport = 80, .seq = 1, .flags = F_SYN, .win = 65535};
	send_from(&r, PEER_IP, &syn);
	assert_int_equal(first_seg(&r).flags, F_SYN | F_ACK);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(simultaneous_open_connects),
	    cmocka_unit_test(challenge_acks_tell_nothing_about_other_connections),
	    cmocka_unit_test(the_shared_challenge_budget_varies),
	    cmocka_unit_test(answers_to_segments_not_accepted_are_rate_limited),
	    cmocka_unit_test(a_timestamp_older_than_24_days_is_not_used_against_the_peer),
	    cmocka_unit_test(a_retransmitted_fin_restarts_time_wait),
	    cmocka_unit_test(time_wait_reuse_follows_timestamps),
	    cmocka_unit_test(a_retransmitted_syn_gets_the_syn_ack_again),
	    cmocka_unit_test(invalid_sources_open_nothing_and_get_no_answer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
