/* SPDX-License-Identifier: BSD-3-Clause */
/* The same checked transfers as over the pair port, now through the real driver and the
 * device model: two Myri-10G NICs of a stepped model world cabled together, the stack
 * clock running on the world's virtual time (10 Gb/s link). MYRIO_TEST_BYTES sets the
 * size of the clean transfer (e.g. 1G). */
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
#include "test_pattern.h"

static void transfer_clean(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "sim:", &(struct sp_opts){.steps = 4}), 0);
	struct xfer x = {.total = env_bytes("MYRIO_TEST_BYTES", 8u << 20), .zero_copy = true};
	xfer_run(&h, &x, 500000000);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_int_equal(sa.tcp_retransmits, 0);
	assert_true(sa.tcp_csum_offload > 0);
	xfer_report("model, clean", &h, &x);
	printf("# model virtual time %.3f ms: %.2f Gb/s of payload\n",
	       (double)(h.now_ns - 1e9) / 1e6, (double)x.total * 8 / ((double)(h.now_ns - 1e9)));
	sp_close(&h);
}

static void lossy_conf(struct myrio_stack_conf *c)
{
	c->delayed_ack_ms = 0;
}

static void transfer_with_loss_reorder_dup(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "sim:loss=0.01,reorder=0.01,dup=0.01,seed=5",
				 &(struct sp_opts){.tweak = lossy_conf, .steps = 4}),
			 0);
	struct xfer x = {.total = 4u << 20, .zero_copy = true};
	xfer_run(&h, &x, 500000000);
	struct myrio_stack_stats sa, sb;
	myrio_stack_stats(h.a, &sa);
	myrio_stack_stats(h.b, &sb);
	assert_true(sa.tcp_retransmits > 0);
	assert_true(sb.tcp_ooo_segs > 0);
	xfer_report("model, 1% loss+reorder+dup", &h, &x);
	sp_close(&h);
}

static void udp_and_refused_over_the_model(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "sim:", &(struct sp_opts){.steps = 4}), 0);
	struct myrio_udp_sock *ua, *ub;
	assert_int_equal(myrio_udp_open(h.a, 4000, NULL, &ua), 0);
	assert_int_equal(myrio_udp_open(h.b, 4001, NULL, &ub), 0);
	for (unsigned size = 1; size <= 1472; size += 97) {
		struct myrio_pkt *p = myrio_stack_pkt_alloc(h.a);
		for (unsigned i = 0; i < size; i++)
			myrio_pkt_data(p)[i] = test_pattern(size + i);
		p->len = size;
		assert_int_equal(myrio_udp_sendto(ua, p, SP_IP_B, 4001), 0);
		sp_rounds(&h, 200);
		struct myrio_pkt *q = myrio_udp_recv(ub, NULL, NULL);
		assert_non_null(q);
		assert_int_equal(q->len, size);
		for (unsigned i = 0; i < size; i++)
			assert_int_equal(myrio_pkt_data(q)[i], test_pattern(size + i));
		myrio_pkt_free(q);
	}
	struct myrio_tcp_conn *c;
	assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, 9, NULL, &c), 0);
	sp_rounds(&h, 400);
	assert_int_equal(myrio_tcp_error(c), -ECONNREFUSED);
	myrio_tcp_close(c);
	myrio_udp_close(ua);
	myrio_udp_close(ub);
	sp_close(&h);
}

static void latency_conf(struct myrio_stack_conf *c)
{
	myrio_stack_conf_latency(c);
}

/* 64-byte request/response over TCP in the latency profile, measured in model time. */
static void ping_pong_latency(void **state)
{
	struct stack_pair h;
	assert_int_equal(sp_open(&h, "sim:", &(struct sp_opts){.tweak = latency_conf, .steps = 1}),
			 0);
	/* .steps = 1: both stacks polled every microsecond of model time */
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h.b, 7, 4, NULL, &l), 0);
	struct myrio_tcp_conn *c, *srv = NULL;
	assert_int_equal(myrio_tcp_connect(h.a, SP_IP_B, 7, NULL, &c), 0);
	for (int r = 0; r < 10000 && !srv; r++) {
		sp_round(&h);
		for (unsigned i = 0; i < h.nev; i++)
			if (h.ev[i].accepted)
				srv = h.ev[i].c;
	}
	assert_non_null(srv);
	char msg[64], buf[64];
	uint64_t total = 0, worst = 0;
	const int n = 1000;
	for (int i = 0; i < n; i++) {
		memset(msg, i & 0xff, sizeof(msg));
		uint64_t t0 = h.now_ns;
		assert_int_equal(myrio_tcp_write(c, msg, sizeof(msg)), 64);
		ssize_t got = 0;
		while (got < 64) { /* server echoes */
			sp_round(&h);
			ssize_t k = myrio_tcp_read(srv, buf + got, (size_t)(64 - got));
			if (k > 0)
				got += k;
		}
		assert_int_equal(myrio_tcp_write(srv, buf, 64), 64);
		got = 0;
		while (got < 64) {
			sp_round(&h);
			ssize_t k = myrio_tcp_read(c, buf + got, (size_t)(64 - got));
			if (k > 0)
				got += k;
		}
		assert_memory_equal(buf, msg, 64);
		uint64_t rtt = h.now_ns - t0;
		total += rtt;
		if (rtt > worst)
			worst = rtt;
	}
	printf("# model, 64-byte TCP ping-pong, latency profile: mean RTT %.1f us, worst %.1f us "
	       "(model time, 1 us polling)\n",
	       (double)total / n / 1000.0, (double)worst / 1000.0);
	assert_true(total / n < 100000); /* well under 100 us */
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_int_equal(sa.tcp_retransmits, 0);
	myrio_tcp_abort(c);
	sp_rounds(&h, 100);
	myrio_tcp_close(srv);
	myrio_tcp_listener_close(l);
	sp_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(transfer_clean),
	    cmocka_unit_test(transfer_with_loss_reorder_dup),
	    cmocka_unit_test(udp_and_refused_over_the_model),
	    cmocka_unit_test(ping_pong_latency),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
