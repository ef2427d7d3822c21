/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP keepalive on a fake clock: no probe before the idle time, probes one below snd_una
 * every interval after it, an answer puts the connection back to sleep, unanswered probes
 * end it with a RST and -ETIMEDOUT, outstanding data holds the probes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "raw_peer.h"
#include "tcp_lite/stack.h"

#define PEER_ISN 5000u

/* A connection accepted from the raw peer (no options); *iss is the stack's ISN. */
static struct myrio_tcp_conn *accepted(struct raw *r, const char *name, uint32_t *iss)
{
	assert_int_equal(raw_open(r, name, NULL, NULL, true), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(r->s, 80, 4, NULL, &l), 0);
	struct tcpf t = {.sport = 4000, .dport = 80, .seq = PEER_ISN, .flags = F_SYN, .win = 65535};
	raw_send_tcp(r, &t);
	raw_poll(r);
	struct tcpv v;
	assert_true(cap_tcp(r, 0, &v));
	*iss = v.seq;
	t.seq = PEER_ISN + 1;
	t.ack = v.seq + 1;
	t.flags = F_ACK;
	raw_drop_captured(r);
	raw_send_tcp(r, &t);
	raw_poll(r);
	assert_int_equal(r->ev_count[MYRIO_TCP_EV_ACCEPTED], 1);
	return r->last_conn;
}

/* Moves the clock by ms, polls; returns how many segments the stack sent meanwhile, the
 * last one in *v. */
static unsigned advance(struct raw *r, uint64_t ms, struct tcpv *v)
{
	raw_drop_captured(r);
	raw_advance_ms(r, ms);
	raw_poll(r);
	unsigned n = cap_count_tcp(r);
	if (n)
		cap_tcp(r, n - 1, v);
	return n;
}

static void answer(struct raw *r, uint32_t iss)
{
	struct tcpf a = {.sport = 4000,
			 .dport = 80,
			 .seq = PEER_ISN + 1,
			 .ack = iss + 1,
			 .flags = F_ACK,
			 .win = 65535};
	raw_send_tcp(r, &a);
	raw_poll(r);
}

static void probes_answers_and_timeout(void **state)
{
	(void)state;
	struct raw r;
	uint32_t iss;
	struct myrio_tcp_conn *c = accepted(&r, "ka1", &iss);
	assert_int_equal(myrio_tcp_keepalive(c, 1000, 200, 3), 0);
	struct tcpv v;
	assert_int_equal(advance(&r, 999, &v), 0); /* not idle long enough */
	assert_int_equal(advance(&r, 1, &v), 1);   /* the probe: one below snd_una, empty */
	assert_int_equal(v.seq, iss);
	assert_int_equal(v.len, 0);
	assert_int_equal(v.flags, F_ACK);
	answer(&r, iss); /* alive: back to sleep for the idle time */
	assert_int_equal(advance(&r, 999, &v), 0);
	assert_int_equal(advance(&r, 1, &v), 1);
	/* silence from now on: two more probes, 200 ms apart, then the third unanswered... */
	assert_int_equal(advance(&r, 199, &v), 0);
	assert_int_equal(advance(&r, 1, &v), 1);
	assert_int_equal(advance(&r, 200, &v), 1);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	/* ... ends the connection with a RST */
	assert_int_equal(advance(&r, 200, &v), 1);
	assert_true(v.flags & F_RST);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(c), -ETIMEDOUT);
	struct myrio_stack_stats st;
	myrio_stack_stats(r.s, &st);
	assert_int_equal(st.tcp_keepalive_probes, 4);
	assert_int_equal(st.tcp_keepalive_timeouts, 1);
	myrio_tcp_close(c);
	raw_close(&r);
}

/* Traffic from the peer postpones the probe; off means off. */
static void traffic_postpones_and_off_is_off(void **state)
{
	(void)state;
	struct raw r;
	uint32_t iss;
	struct myrio_tcp_conn *c = accepted(&r, "ka2", &iss);
	assert_int_equal(myrio_tcp_keepalive(c, 1000, 0, 0), 0);
	struct tcpv v;
	assert_int_equal(advance(&r, 600, &v), 0);
	answer(&r, iss); /* a segment at 600 ms: idle counts from here */
	assert_int_equal(advance(&r, 999, &v), 0);
	assert_int_equal(advance(&r, 1, &v), 1);
	assert_int_equal(myrio_tcp_keepalive(c, 0, 0, 0), 0);
	assert_int_equal(advance(&r, 100000, &v), 0);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_ESTABLISHED);
	myrio_tcp_close(c);
	raw_close(&r);
}

/* Unacknowledged data: retransmission watches the peer, no probes meanwhile. */
static void outstanding_data_holds_probes(void **state)
{
	(void)state;
	struct raw r;
	uint32_t iss;
	struct myrio_tcp_conn *c = accepted(&r, "ka3", &iss);
	assert_int_equal(myrio_tcp_keepalive(c, 1000, 200, 3), 0);
	assert_int_equal(myrio_tcp_write(c, "x", 1), 1);
	raw_poll(&r);
	struct tcpv v;
	for (int i = 0; i < 5; i++) {
		advance(&r, 1000, &v);
		if (cap_count_tcp(&r))
			assert_int_equal(v.len, 1); /* retransmissions of the byte, no probes */
	}
	struct myrio_stack_stats st;
	myrio_stack_stats(r.s, &st);
	assert_int_equal(st.tcp_keepalive_probes, 0);
	assert_true(st.tcp_retransmits > 0);
	myrio_tcp_close(c);
	raw_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probes_answers_and_timeout),
		cmocka_unit_test(traffic_postpones_and_off_is_off),
		cmocka_unit_test(outstanding_data_holds_probes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
