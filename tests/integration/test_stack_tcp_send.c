/* SPDX-License-Identifier: BSD-3-Clause */
/* The send side between two stacks over the in-memory pair port: byte-exact transfers with
 * options that change what the sender sees (no window scaling), checked for what a clean
 * link must not show (fast retransmits). */
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
#include "wall_clock.h"

static void no_wscale_conf(struct myrio_stack_conf *c)
{
	c->window_scale = false; /* rcv_buf (256 KiB) is more than a 16-bit window says */
}

/* A relay's receiver: it takes what arrived every 64 rounds and lets go of the buffers one
 * per round (as it forwards them), checking the pattern. */
static void relay_transfer(struct stack_pair *h, struct xfer *x)
{
	struct myrio_tcp_listener *l;
	assert_int_equal(myrio_tcp_listen(h->b, 5001, 8, NULL, &l), 0);
	assert_int_equal(myrio_tcp_connect(h->a, SP_IP_B, 5001, NULL, &x->cli), 0);
	struct myrio_pkt *held[4096];
	unsigned head = 0, tail = 0;
	double t0 = wall_s();
	for (uint64_t r = 0; r < 50000000 && x->rcvd < x->total; r++) {
		sp_round(h);
		if (!x->srv)
			x->srv = sp_accepted_conn(h);
		if (myrio_tcp_state(x->cli) == MYRIO_TCP_ESTABLISHED)
			xfer_send(h, x);
		if (!x->srv)
			continue;
		struct myrio_pkt *p;
		while (r % 64 == 0 && tail - head < 4096 && (p = myrio_tcp_recv(x->srv)) != NULL)
			held[tail++ % 4096] = p;
		if (head == tail)
			continue;
		xfer_take(x, held[head++ % 4096]);
	}
	while (head != tail)
		myrio_tcp_release(x->srv, held[head++ % 4096]);
	x->secs = wall_s() - t0;
	assert_int_equal(x->bad, 0);
	assert_int_equal(x->rcvd, x->total);
	myrio_tcp_abort(x->cli);
	myrio_tcp_abort(x->srv);
	myrio_tcp_listener_close(l);
}

/* Defect: without window scaling every buffer release sent an ACK that changed nothing
 * (free space compared with a window already capped at 65535); the sender took them for
 * duplicate ACKs: ~945 fast retransmits in a 10 MB relay on a clean link (RFC 5681 §4.2). */
static void no_window_scaling_relay_has_no_fast_retransmits(void **state)
{
	struct stack_pair h;
	/* A 1 Gb/s model link: frames take several rounds, so releases fall between them. */
	assert_int_equal(
	    sp_open(&h, "sim:link=1g", &(struct sp_opts){.tweak = no_wscale_conf, .steps = 4}), 0);
	struct xfer x = {.total = 10u << 20};
	relay_transfer(&h, &x);
	struct myrio_stack_stats sa;
	myrio_stack_stats(h.a, &sa);
	assert_int_equal(sa.tcp_fast_retransmits, 0);
	assert_int_equal(sa.tcp_rto_expired, 0);
	xfer_report("relay, no window scaling", &h, &x);
	sp_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(no_window_scaling_relay_has_no_fast_retransmits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
