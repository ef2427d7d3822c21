/* SPDX-License-Identifier: BSD-3-Clause */
/* Congestion control arithmetic on a bare connection: slow start, NewReno's halving and
 * linear growth, CUBIC's multiplicative decrease, its K, the return to the old maximum
 * at t = K, fast convergence and the Reno-friendly floor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "tcp_lite/stack.h"

static struct myrio_stack stack;
static struct myrio_tcp_conn conn;

static struct myrio_tcp_conn *fresh(enum myrio_tcp_cc cc)
{
	memset(&stack, 0, sizeof(stack));
	memset(&conn, 0, sizeof(conn));
	stack.conf.cc = cc;
	stack.now_ms = 1000;
	conn.s = &stack;
	conn.mss = 1000;
	cc_init(&conn);
	conn.cwnd_limited = true; /* a sender that fills its window */
	return &conn;
}

/* ACKs a whole window in mss-sized ACKs. */
static void ack_window(struct myrio_tcp_conn *c)
{
	uint32_t w = c->cwnd;
	for (uint32_t done = 0; done < w; done += c->mss)
		cc_on_ack(c, c->mss);
}

static void slow_start_doubles_per_window(void **state)
{
	struct myrio_tcp_conn *c = fresh(MYRIO_TCP_CC_NEWRENO);
	assert_int_equal(c->cwnd, 10000); /* IW10 */
	ack_window(c);
	assert_int_equal(c->cwnd, 20000);
	ack_window(c);
	assert_int_equal(c->cwnd, 40000);
}

static void newreno_halves_then_grows_one_segment_per_window(void **state)
{
	struct myrio_tcp_conn *c = fresh(MYRIO_TCP_CC_NEWRENO);
	c->cwnd = 100000;
	c->snd_una = 0;
	c->snd_max = 100000; /* a full window in flight */
	cc_enter_recovery(c);
	assert_int_equal(c->ssthresh, 50000);
	assert_int_equal(c->cwnd, 50000);
	assert_true(c->in_recovery);
	cc_on_ack(c, 1000); /* no growth during recovery */
	assert_int_equal(c->cwnd, 50000);
	cc_exit_recovery(c);
	ack_window(c);
	assert_int_equal(c->cwnd, 51000);
	ack_window(c);
	assert_int_equal(c->cwnd, 52000);
	/* A timeout: one segment, ssthresh from the flight. */
	c->snd_max = 52000;
	cc_on_rto(c);
	assert_int_equal(c->cwnd, 1000);
	assert_int_equal(c->ssthresh, 26000);
}

static void cubic_decrease_and_return_to_wmax_at_k(void **state)
{
	struct myrio_tcp_conn *c = fresh(MYRIO_TCP_CC_CUBIC);
	c->cwnd = 100000; /* 100 segments */
	c->snd_max = 100000;
	cc_enter_recovery(c);
	assert_int_equal(c->ssthresh, 70000); /* beta 0.7 */
	assert_int_equal(c->cwnd, 70000);
	cc_exit_recovery(c);
	/* K = cbrt((100 - 70) / 0.4) = 4.217 s: the window is back at 100 segments then,
	 * concave before, convex after. */
	uint32_t at_1s = 0, at_k = 0, at_6s = 0;
	for (int ms = 0; ms <= 6000; ms += 10) {
		stack.now_ms = 1000 + (uint64_t)ms;
		cc_on_ack(c, c->mss);
		cc_on_ack(c, c->mss);
		if (ms == 1000)
			at_1s = c->cwnd;
		if (ms == 4220)
			at_k = c->cwnd;
		if (ms == 6000)
			at_6s = c->cwnd;
	}
	assert_true(at_1s > 70000 && at_1s < 100000);
	assert_true(at_k >= 97000 && at_k <= 101000);
	assert_true(at_6s > 101000);
	assert_true(c->cub_k > 4.2 && c->cub_k < 4.23);
}

static void cubic_fast_convergence(void **state)
{
	struct myrio_tcp_conn *c = fresh(MYRIO_TCP_CC_CUBIC);
	c->cwnd = 100000;
	c->snd_max = 100000;
	cc_enter_recovery(c);
	cc_exit_recovery(c);
	assert_true(c->cub_wmax > 99.9 && c->cub_wmax < 100.1);
	/* A second loss below the previous maximum remembers less than the window. */
	c->cwnd = 80000;
	c->snd_max = 80000;
	cc_enter_recovery(c);
	assert_true(c->cub_wmax > 67.9 && c->cub_wmax < 68.1); /* 80 * 1.7 / 2 */
	assert_int_equal(c->ssthresh, 56000);
}

static void cubic_is_reno_friendly_in_short_round_trips(void **state)
{
	/* With the clock standing still the cubic term gives nothing; the Reno estimate
	 * still grows the window by about 0.53 segments per window. */
	struct myrio_tcp_conn *c = fresh(MYRIO_TCP_CC_CUBIC);
	c->cwnd = 100000;
	c->snd_max = 100000;
	cc_enter_recovery(c);
	cc_exit_recovery(c);
	uint32_t w0 = c->cwnd;
	for (int i = 0; i < 10; i++)
		ack_window(c);
	assert_true(c->cwnd > w0 + 4000 && c->cwnd < w0 + 7000);
}

/* Defect: cwnd grew with every ACK whether or not the sender used it (iperf3 read hundreds
 * of MB in TCP_INFO). RFC 7661: a sender that does not fill cwnd does not grow it; in slow
 * start it may reach twice the largest flight (Linux's rule). */
static void cwnd_grows_only_while_used(void **state)
{
	struct myrio_tcp_conn *c = fresh(MYRIO_TCP_CC_NEWRENO);
	c->snd_una = c->snd_nxt = 5000;
	cc_init(c);
	cc_note_usage(c, 8000, false); /* a peer's window of 8 segments holds the flight */
	for (int i = 0; i < 100; i++)
		ack_window(c);
	assert_int_equal(c->cwnd, 16000);
	/* Congestion avoidance: no growth unless cwnd held data back in the window. */
	c->ssthresh = 12000;
	c->cwnd = 12000;
	for (int i = 0; i < 100; i++)
		ack_window(c);
	assert_int_equal(c->cwnd, 12000);
	c->snd_nxt = 17000;
	cc_note_usage(c, 12000, true);
	ack_window(c);
	assert_int_equal(c->cwnd, 13000);
	/* CUBIC follows the same rule. */
	c = fresh(MYRIO_TCP_CC_CUBIC);
	c->cwnd_limited = false;
	c->ssthresh = c->cwnd = 50000;
	for (int ms = 0; ms <= 6000; ms += 10) {
		stack.now_ms = 1000 + (uint64_t)ms;
		cc_on_ack(c, c->mss);
	}
	assert_int_equal(c->cwnd, 50000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(slow_start_doubles_per_window),
	    cmocka_unit_test(newreno_halves_then_grows_one_segment_per_window),
	    cmocka_unit_test(cubic_decrease_and_return_to_wmax_at_k),
	    cmocka_unit_test(cubic_fast_convergence),
	    cmocka_unit_test(cubic_is_reno_friendly_in_short_round_trips),
	    cmocka_unit_test(cwnd_grows_only_while_used),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
