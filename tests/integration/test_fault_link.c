/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection on the cable, through the device model, during TCP transfers between two
 * stacks: a link flap in the middle of a transfer, periodic flaps, and loss, reordering,
 * duplication and corruption of frames. Expected behaviour: the driver reports the link
 * going down and up (§6.1 link_up), the connection survives, and the receiver gets every
 * byte exactly once and in order (checked pattern); nothing is lost, nothing leaks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_pair.h"

#define PORT 5001

/* Intact, then the orderly close: FIN from the sender reaches the receiver after the last
 * byte. */
static void check_complete(struct stack_pair *m, struct sp_stream *tx)
{
	sp_check_intact(m, tx);
	struct sp_stream *rx = sp_receiver(m);
	myrio_tcp_shutdown(tx->c);
	for (int i = 0; i < 20000 && !rx->eof; i++)
		sp_round(m);
	assert_true(rx->eof);
	assert_int_equal(rx->rcvd, m->want);
}

static void link_flap_mid_transfer(void **state)
{
	(void)state;
	struct stack_pair m;
	assert_int_equal(sp_open(&m, "sim:link=10g", &(struct sp_opts){.streams = 4}), 0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 4u << 20);
	assert_true(sp_run_until(&m, sp_quarter_received, 200000));
	assert_int_equal(myrio_port_link(m.pa), MYRIO_LINK_UP);
	/* Pull the cable for 300 ms of model time (longer than the RTO). */
	assert_int_equal(myrio_sim_set_link(m.sim, "sim0", false), 0);
	uint64_t at = sp_receiver(&m)->rcvd;
	for (int i = 0; i < 15000; i++) /* 15000 rounds x 20 us */
		sp_round(&m);
	assert_int_equal(myrio_port_link(m.pa), MYRIO_LINK_DOWN);
	assert_int_equal(myrio_port_link(m.pb), MYRIO_LINK_DOWN);
	/* nothing crosses a pulled cable (a few frames may have been on the wire) */
	assert_true(sp_receiver(&m)->rcvd - at < 64 * 1024);
	assert_int_equal(myrio_sim_set_link(m.sim, "sim0", true), 0);
	assert_true(sp_run_until(&m, sp_all_received, 2000000));
	assert_int_equal(myrio_port_link(m.pa), MYRIO_LINK_UP);
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(m.pa, &ps), 0);
	assert_true(ps.link_changes >= 2);
	check_complete(&m, tx);
	sp_close(&m);
}

static void periodic_flaps(void **state)
{
	(void)state;
	struct stack_pair m;
	/* down 1 ms every 3 ms: many flaps during the transfer */
	assert_int_equal(sp_open(&m, "sim:link=10g,flap=3/1", &(struct sp_opts){.streams = 4}), 0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 8u << 20);
	assert_true(sp_run_until(&m, sp_all_received, 3000000));
	check_complete(&m, tx);
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(m.pb, &ps), 0);
	assert_true(ps.link_changes >= 4);
	sp_close(&m);
}

static void loss_reorder_dup_corrupt(void **state)
{
	(void)state;
	struct stack_pair m;
	assert_int_equal(sp_open(&m, "sim:link=10g,seed=11", &(struct sp_opts){.streams = 4}), 0);
	struct myrio_sim_faults f = {.loss = 0.02, .reorder = 0.02, .duplicate = 0.02,
				     .corrupt = 0.02};
	assert_int_equal(myrio_sim_set_faults(m.sim, "sim0", &f), 0);
	assert_int_equal(myrio_sim_set_faults(m.sim, "sim1", &f), 0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 2u << 20);
	assert_true(sp_run_until(&m, sp_all_received, 3000000));
	struct myrio_stack_stats st;
	myrio_stack_stats(m.a, &st);
	assert_true(st.tcp_retransmits > 0);
	check_complete(&m, tx);
	sp_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(link_flap_mid_transfer),
		cmocka_unit_test(periodic_flaps),
		cmocka_unit_test(loss_reorder_dup_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
