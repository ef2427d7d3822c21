/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP between two stacks over the in-memory pair port: byte-exact transfers with a checked
 * pattern, on a clean link and with loss, reordering and duplication; closes, refused
 * connections, slow readers. MYRIO_TEST_BYTES sets the transfer size (e.g. 1G). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_xfer.h"
#include "test_env.h"

static void transfer_clean_zero_copy(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:clean", NULL), 0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 16u << 20), .zero_copy = true};
	xfer_run(&h, &x, 50000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_int_equal(sa.tcp_retransmits, 0);
	assert_true(sa.tcp_csum_offload > 0);
	xfer_report("clean", &h, &x);
	sp_close(&h);
}

static void transfer_copying_api_no_offload(void **state)
{
	struct stack_pair h;
	assert_int_equal(
	    sp_open(&h, "pair:copy", &(struct sp_opts){.opts_a = "?nocsum", .opts_b = "?nocsum"}),
	    0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 16u << 20) / 4 + 12345,
			 .zero_copy = false};
	xfer_run(&h, &x, 50000000);
	struct myrio_stack_stats sb;
	myrio_stack_stats(h.b, &sb);
	assert_int_equal(sb.tcp_csum_offload, 0);
	assert_true(sb.tcp_csum_sw > 0);
	sp_close(&h);
}

static void faulty_conf(struct myrio_stack_conf *c)
{
	c->delayed_ack_ms = 0;
}

static void transfer_with_loss_reorder_dup(void **state)
{
	struct stack_pair h;
	assert_int_equal(
	    sp_open(&h, "pair:lossy",
		    &(struct sp_opts){.opts_a = "?loss=0.01,reorder=0.01,dup=0.01,seed=3",
				      .opts_b = "?loss=0.01,reorder=0.01,dup=0.01,seed=4",
				      .tweak = faulty_conf}),
	    0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 16u << 20) / 2, .zero_copy = true};
	xfer_run(&h, &x, 100000000);
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(h.a, &sa);
	myrio_stack_stats(h.b, &sb);
	assert_true(sa.tcp_retransmits > 0);
	assert_true(sa.tcp_fast_retransmits > 0);
	assert_true(sb.tcp_ooo_segs > 0);
	assert_true(sb.tcp_dup_segs > 0);
	xfer_report("1% loss+reorder+dup", &h, &x);
	sp_close(&h);
}

static void transfer_with_heavy_loss_delayed_ack(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:heavy",
				 &(struct sp_opts){.opts_a = "?loss=0.05,seed=7",
						   .opts_b = "?loss=0.05,seed=8"}),
			 0);
	struct xfer x = {.total = 2u << 20, .zero_copy = true};
	xfer_run(&h, &x, 100000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_true(sa.tcp_retransmits > 0);
	xfer_report("5% loss", &h, &x);
	sp_close(&h);
}

static void no_sack_no_ts_conf(struct myrio_stack_conf *c)
{
	c->sack = false;
	c->timestamps = false;
	c->window_scale = false;
	c->rcv_buf = 64 * 1024;
}

static void transfer_newreno_without_options(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:plain",
				 &(struct sp_opts){.opts_a = "?loss=0.01,seed=11",
						   .opts_b = "?loss=0.01,seed=12",
						   .tweak = no_sack_no_ts_conf}),
			 0);
	struct xfer x = {.total = 4u << 20, .zero_copy = true};
	xfer_run(&h, &x, 100000000);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(x.cli, &cs);
	assert_int_equal(cs.sack_blocks_rcvd, 0);
	xfer_report("NewReno, no options", &h, &x);
	sp_close(&h);
}

static void cubic_conf(struct myrio_stack_conf *c)
{
	c->cc = MYRIO_TCP_CC_CUBIC;
	c->delayed_ack_ms = 0;
}

static void transfer_cubic_with_loss_reorder_dup(void **state)
{
	struct stack_pair h;
	assert_int_equal(
	    sp_open(&h, "pair:cubic",
		    &(struct sp_opts){.opts_a = "?loss=0.01,reorder=0.01,dup=0.01,seed=21",
				      .opts_b = "?loss=0.01,reorder=0.01,dup=0.01,seed=22",
				      .tweak = cubic_conf}),
	    0);
	struct xfer x = {.total = 8u << 20, .zero_copy = true};
	xfer_run(&h, &x, 100000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_true(sa.tcp_fast_retransmits > 0);
	xfer_report("CUBIC, 1% loss+reorder+dup", &h, &x);
	sp_close(&h);
}

static void transfer_through_a_small_ring(void **state)
{
	struct stack_pair h;
	assert_int_equal(
	    sp_open(&h, "pair:ring", &(struct sp_opts){.opts_a = "?ring=16", .opts_b = "?ring=16"}),
	    0);
	struct xfer x = {.total = 4u << 20, .zero_copy = true};
	xfer_run(&h, &x, 50000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_true(sa.tx_ring_full > 0); /* the ring filled up and frames waited */
	assert_int_equal(sa.tx_dropped_full, 0);
	xfer_report("16-entry ring", &h, &x);
	sp_close(&h);
}

static void slow_reader_closes_window_then_resumes(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:slow", NULL), 0);
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, 5002, 4, NULL, &l), 0);
	struct xfer x = {.total = 2u << 20, .zero_copy = true, .hold = true};
	assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, 5002, NULL, &x.cli), 0);
	for (int r = 0; r < 200000; r++) {
		sp_round(&h);
		if (!x.srv)
			x.srv = sp_accepted_conn(&h);
		if (myrio_tcp_state(x.cli) == MYRIO_TCP_ESTABLISHED)
			xfer_send(&h, &x);
	}
	/* Receiver held everything: the sender stopped at the window and probes it. */
	struct myrio_tcp_conn_stats cs, ss;
	myrio_tcp_conn_stats(x.cli, &cs);
	myrio_tcp_conn_stats(x.srv, &ss);
	assert_true(ss.rcv_wnd < ss.mss); /* not even one more segment fits */
	assert_true(cs.zero_window_probes > 0);
	assert_true(ss.bytes_in <= 256 * 1024);
	assert_true(ss.bytes_in >= 200 * 1024);
	x.hold = false;
	for (int r = 0; r < 2000000 && x.rcvd < x.total; r++) {
		sp_round(&h);
		xfer_send(&h, &x);
		xfer_recv(&x);
	}
	assert_int_equal(x.rcvd, x.total);
	assert_int_equal(x.bad, 0);
	myrio_tcp_abort(x.cli);
	for (int r = 0; r < 100; r++)
		sp_round(&h);
	assert_int_equal(myrio_tcp_state(x.srv), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(x.srv), -ECONNRESET);
	assert_int_equal(sp_ev(&h, x.srv)->error, 1);
	myrio_tcp_close(x.srv);
	myrio_tcp_listener_close(l);
	sp_close(&h);
}

static void connect_to_closed_port_is_refused(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:refused", NULL), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, 9, NULL, &c), 0);
	sp_rounds(&h, 100);
	assert_int_equal(myrio_tcp_state(c), MYRIO_TCP_CLOSED);
	assert_int_equal(myrio_tcp_error(c), -ECONNREFUSED);
	assert_int_equal(sp_ev(&h, c)->error, 1);
	struct myrio_stack_stats sb;
	myrio_stack_stats(h.b, &sb);
	assert_int_equal(sb.tcp_resets_sent, 1);
	myrio_tcp_close(c);
	sp_close(&h);
}

static void connect_times_out_without_peer(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "pair:timeout", &(struct sp_opts){.opts_a = "?loss=1"}), 0);
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, 80, NULL, &c), 0);
	/* 1+2+4+...+64 s of SYN retries at 20 us per round */
	for (uint64_t r = 0; r < 10000000 && myrio_tcp_state(c) != MYRIO_TCP_CLOSED; r++) {
		myrio_stack_poll(h.a);
		myrio_stack_poll(h.b);
		h.now_ns += 1000000; /* 1 ms */
	}
	assert_int_equal(myrio_tcp_error(c), -ETIMEDOUT);
	struct myrio_tcp_conn_stats cs;
	myrio_tcp_conn_stats(c, &cs);
	assert_int_equal(cs.retransmits, 6);
	myrio_tcp_close(c);
	sp_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(transfer_clean_zero_copy),
	    cmocka_unit_test(transfer_copying_api_no_offload),
	    cmocka_unit_test(transfer_with_loss_reorder_dup),
	    cmocka_unit_test(transfer_with_heavy_loss_delayed_ack),
	    cmocka_unit_test(transfer_newreno_without_options),
	    cmocka_unit_test(transfer_cubic_with_loss_reorder_dup),
	    cmocka_unit_test(transfer_through_a_small_ring),
	    cmocka_unit_test(slow_reader_closes_window_then_resumes),
	    cmocka_unit_test(connect_to_closed_port_is_refused),
	    cmocka_unit_test(connect_times_out_without_peer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
