/* SPDX-License-Identifier: BSD-3-Clause */
/* Firmware reboot in the middle of a TCP transfer (spec §10 fault: bus master off, SRAM back
 * to the EEPROM firmware, all DMA stopped), injected through the device model.
 *
 * The port's watchdog (§8.5) notices the cleared bus-master bit from the polling path,
 * reloads the firmware and reopens the NIC on the same pools; the frames in flight are lost
 * and TCP retransmits them. Asserted: the transfer completes byte-exact and in order, the
 * rebooted port counts exactly one recovery (the other none), the recovery happens within
 * about two watchdog periods of model time, and every transmit buffer comes back (no leak:
 * the stacks and ports close cleanly). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/model.h"
#include "stack_pair.h"
#include "tcp_lite/stack.h" /* the stack's transmit pool, for the leak check */
#include "wall_clock.h"

#define PORT 5003

/* Retransmission timers short enough for a quick test, retries enough to outlast the
 * watchdog's two periods (2 s of model time) with room to spare. */
static void quick_timeouts(struct myrio_stack_conf *c)
{
	c->rto_initial_ms = 50;
	c->rto_min_ms = 20;
	c->rto_max_ms = 200;
	c->max_retries = 30;
	c->syn_retries = 2;
}

static uint64_t resets(struct myrio_port *p)
{
	struct myrio_port_stats s;
	assert_int_equal(myrio_port_stats(p, &s), 0);
	return s.watchdog_resets;
}

static bool recovered(struct stack_pair *m)
{
	return resets(m->pa) >= 1;
}

static void reboot_mid_transfer_survives(void **state)
{
	(void)state;
	struct stack_pair m;
	assert_int_equal(
	    sp_open(&m, "sim:link=10g", &(struct sp_opts){.streams = 8, .tweak = quick_timeouts}),
	    0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 8u << 20);
	assert_true(sp_run_until(&m, sp_quarter_received, 500000));
	assert_int_equal(m.errors, 0);
	struct sp_stream *rx = sp_receiver(&m);
	assert_int_equal(resets(m.pa), 0);

	/* The sender's NIC reboots; only polling goes on. */
	assert_int_equal(sim_nic_inject(sim_nic_find(m.sim, "sim0"), SIM_FAULT_REBOOT, 0), 0);
	uint64_t rcvd_at_reboot = rx->rcvd;
	uint64_t model0 = myrio_sim_now_ns(m.sim);
	double t0 = wall_s();
	assert_true(sp_run_until(&m, recovered, 2000000));
	assert_true(myrio_sim_now_ns(m.sim) - model0 <= 2100000000ull);
	assert_int_equal(resets(m.pa), 1);

	/* The connection survives: the transfer completes intact. */
	assert_true(sp_run_until(&m, sp_all_received, 2000000));
	assert_true(wall_s() - t0 < 120);
	assert_false(tx->error);
	sp_check_intact(&m, tx);
	assert_true(rx->rcvd > rcvd_at_reboot);
	assert_int_equal(resets(m.pa), 1);
	assert_int_equal(resets(m.pb), 0);

	/* Nothing is held by the port any more: both stacks free their pools on destroy. */
	/* (the last segment's ACK may be a delayed one: 40 ms, 2000 rounds) */
	for (int i = 0; i < 20000 && myrio_tcp_unacked(tx->c) != 0; i++)
		sp_round(&m);
	assert_int_equal(myrio_tcp_unacked(tx->c), 0);
	for (int i = 0; i < 200; i++)
		sp_round(&m);
	assert_int_equal(myrio_pool_free_count(m.a->pool), m.a->pool->count);
	sp_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reboot_mid_transfer_survives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
