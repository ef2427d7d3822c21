/* SPDX-License-Identifier: BSD-3-Clause */
/* SYN cookies and TCP options: with the listener's backlog full, a SYN that offers
 * timestamps gets a SYN-ACK with window scaling, SACK and timestamps as any other, and the
 * returning ACK's TSecr brings back what the connection must remember (the peer's window
 * scale, SACK). A SYN without timestamps gets MSS only. An echo that cannot be ours is
 * refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

#define ISN 77777u


/* A listener with backlog 1, already full, so the next SYN is answered with a cookie. */
static void open_full(struct raw *r, const char *name)
{
	assert_int_equal(raw_open(r, name, NULL, NULL, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r->s, 80, 1, NULL, &l), 0);
	struct tcpf t = {.sport = 999, .dport = 80, .seq = 1, .flags = F_SYN, .win = 65535};
	raw_send_tcp(r, &t);
	raw_poll(r);
	raw_drop_captured(r);
}

/* SYN from sport with options o (optlen a multiple of 4); returns the SYN-ACK. */
static void syn(struct raw *r, uint16_t sport, const uint8_t *o, uint8_t optlen, struct tcpv *v)
{
	struct tcpf t = {.sport = sport,
			 .dport = 80,
			 .seq = ISN,
			 .flags = F_SYN,
			 .win = 65535,
			 .opts = o,
			 .optlen = optlen};
	raw_send_tcp(r, &t);
	raw_poll(r);
	assert_true(cap_tcp(r, 0, v));
	assert_int_equal(v->flags, F_SYN | F_ACK);
	struct myrio_stack_stats st;
	myrio_stack_stats(r->s, &st);
	assert_int_equal(st.tcp_syncookies_sent, 1);
}

/* The returning ACK, echoing tsecr when ts is set; returns the connection or NULL. */
static struct myrio_tcp_conn *ack(struct raw *r, uint16_t sport, uint32_t cookie, bool ts,
				  uint32_t tsecr)
{
	uint8_t o[12] = {1, 1, 8, 10, 0, 0, 0x07, 0xd0, 0, 0, 0, 0}; /* TSval 2000 */
	put_be32(o + 8, tsecr);
	struct tcpf a = {.sport = sport,
			 .dport = 80,
			 .seq = ISN + 1,
			 .ack = cookie + 1,
			 .flags = F_ACK,
			 .win = 1000,
			 .opts = ts ? o : NULL,
			 .optlen = ts ? 12 : 0};
	raw_drop_captured(r);
	int before = r->ev_count[MYRIO_TCP_EV_ACCEPTED];
	raw_send_tcp(r, &a);
	raw_poll(r);
	return r->ev_count[MYRIO_TCP_EV_ACCEPTED] > before ? r->last_conn : NULL;
}

/* MSS 1460, SACK permitted, timestamps (TSval 1000), window scale 7. */
static const uint8_t all_opts[20] = {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x03, 0xe8,
				     0, 0, 0, 0, 1, 3, 3, 7};

static uint32_t tsval_of(const struct tcpv *v)
{
	int i = find_opt(v->opts, v->optlen, 8);
	assert_true(i >= 0);
	return get_be32(v->opts + i + 2);
}

static void options_survive_the_cookie(void **state)
{
	(void)state;
	struct raw r;
	open_full(&r, "ck1");
	struct tcpv v;
	syn(&r, 3000, all_opts, sizeof(all_opts), &v);
	assert_true(find_opt(v.opts, v.optlen, 3) >= 0); /* window scaling, */
	assert_true(find_opt(v.opts, v.optlen, 4) >= 0); /* SACK, */
	uint32_t tsval = tsval_of(&v);			  /* timestamps */
	assert_int_equal(get_be32(v.opts + find_opt(v.opts, v.optlen, 8) + 6), 1000); /* echo */
	assert_int_equal(tsval & 0x3f, 0x10 | 7); /* SACK, window scale 7 */
	assert_true(tsval <= (uint32_t)r.s->now_ms);
	struct myrio_tcp_conn *c = ack(&r, 3000, v.seq, true, tsval);
	assert_non_null(c);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	assert_true(c->ts_ok && c->sack_ok && c->ws_ok);
	assert_int_equal(c->snd_wscale, 7);
	assert_true(c->rcv_wscale > 0);
	assert_int_equal(c->ts_recent, 2000);
	assert_int_equal(myrio_tcp_mss(c), 1460 - 12);
	/* the peer's window of 1000 is scaled by 2^7 */
	assert_int_equal(c->snd_wnd, 1000u << 7);
	myrio_tcp_close(c);
	raw_close(&r);
}

/* No window scale offered: none used; the bits say 15. */
static void no_window_scale_offered(void **state)
{
	(void)state;
	struct raw r;
	open_full(&r, "ck2");
	uint8_t o[12] = {2, 4, 0x05, 0xb4, 1, 1, 8, 10, 0, 0, 0x03, 0xe8};
	uint8_t opts[16];
	memcpy(opts, o, 12);
	memset(opts + 12, 0, 4); /* TSecr 0 */
	struct tcpv v;
	syn(&r, 3001, opts, 16, &v);
	assert_true(find_opt(v.opts, v.optlen, 3) < 0);
	assert_true(find_opt(v.opts, v.optlen, 4) < 0);
	uint32_t tsval = tsval_of(&v);
	assert_int_equal(tsval & 0x3f, 0xf);
	struct myrio_tcp_conn *c = ack(&r, 3001, v.seq, true, tsval);
	assert_non_null(c);
	assert_true(c->ts_ok);
	assert_false(c->ws_ok || c->sack_ok);
	assert_int_equal(c->snd_wnd, 1000);
	myrio_tcp_close(c);
	raw_close(&r);
}

/* Without timestamps nothing can be remembered: MSS only. */
static void no_timestamps_mss_only(void **state)
{
	(void)state;
	struct raw r;
	open_full(&r, "ck3");
	const uint8_t o[8] = {2, 4, 0x05, 0xb4, 1, 3, 3, 7};
	struct tcpv v;
	syn(&r, 3002, o, sizeof(o), &v);
	assert_true(find_opt(v.opts, v.optlen, 2) >= 0);
	assert_true(find_opt(v.opts, v.optlen, 3) < 0);
	assert_true(find_opt(v.opts, v.optlen, 8) < 0);
	struct myrio_tcp_conn *c = ack(&r, 3002, v.seq, false, 0);
	assert_non_null(c);
	assert_false(c->ts_ok || c->ws_ok || c->sack_ok);
	assert_int_equal(myrio_tcp_mss(c), 1460);
	myrio_tcp_close(c);
	raw_close(&r);
}

/* A TSecr from the future or older than a cookie lives: refused (RST), no connection. */
static void echo_that_cannot_be_ours(void **state)
{
	(void)state;
	struct raw r;
	open_full(&r, "ck4");
	struct tcpv v;
	syn(&r, 3003, all_opts, sizeof(all_opts), &v);
	uint32_t tsval = tsval_of(&v);
	assert_null(ack(&r, 3003, v.seq, true, tsval + 100000));
	struct tcpv rst;
	assert_true(cap_tcp(&r, 0, &rst));
	assert_true(rst.flags & F_RST);
	assert_null(ack(&r, 3003, v.seq, true, tsval - 4 * 65536));
	struct myrio_stack_stats st;
	myrio_stack_stats(r.s, &st);
	assert_int_equal(st.tcp_syncookies_failed, 2);
	assert_int_equal(st.tcp_syncookies_ok, 0);
	/* the true echo still works */
	struct myrio_tcp_conn *c = ack(&r, 3003, v.seq, true, tsval);
	assert_non_null(c);
	myrio_tcp_close(c);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(options_survive_the_cookie),
		cmocka_unit_test(no_window_scale_offered),
		cmocka_unit_test(no_timestamps_mss_only),
		cmocka_unit_test(echo_that_cannot_be_ours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
