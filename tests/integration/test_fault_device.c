/* SPDX-License-Identifier: BSD-3-Clause */
/* Faults of the device itself, through the model, during TCP transfers: completion entries
 * with impossible or wrong lengths (§4.6), a NIC that runs out of receive buffers because
 * the application holds them (pools exhausted, receive ring starved: §4.7 no_big_buffer),
 * a small transmit pool. Expected behaviour, written per test below: the driver drops
 * what it cannot trust and counts it, buffers are never lost (pools full again at the end),
 * and TCP delivers every byte exactly once and in order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/model.h"
#include "stack_pair.h"
#include "test_pattern.h"

#define PORT 5002

/* How the driver notices a bad completion entry; either way the NIC is reset once. */
enum noticed {
	IMPOSSIBLE, /* length no frame can have: counted in rx_bad_completion */
	MISMATCH,   /* the frame fails the stack's checks and myrio_rx_verify finds the buffer
		     * not as described (rx_csum_mismatch) */
};

/* One bad completion entry on the receiver while data flows. */
static void bad_completion(uint32_t len, enum noticed noticed)
{
	struct stack_pair m;
	assert_int_equal(sp_open(&m, "sim:link=10g", &(struct sp_opts){.streams = 4}), 0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 2u << 20);
	assert_true(sp_run_until(&m, sp_quarter_received, 500000));
	struct sim_nic *nic = sim_nic_find(m.sim, "sim1");
	assert_int_equal(sim_nic_inject(nic, SIM_FAULT_BAD_COMPLETION, len), 0);
	assert_true(sp_run_until(&m, sp_all_received, 2000000));
	sp_check_intact(&m, tx);
	struct myrio_port_stats ps;
	assert_int_equal(myrio_port_stats(m.pb, &ps), 0);
	assert_int_equal(ps.rx_bad_completion, noticed == IMPOSSIBLE);
	assert_int_equal(ps.watchdog_resets, 1);
	if (noticed == MISMATCH)
		assert_true(ps.rx_csum_mismatch >= 1);
	else
		assert_int_equal(ps.rx_csum_mismatch, 0);
	sp_close(&m);
}

/* Longer than any frame the MTU allows: detected, dropped, counted; the driver cannot know
 * which ring the NIC took a buffer from, so the NIC is reset; TCP retransmits. */
static void completion_length_ffff(void **state)
{
	(void)state;
	bad_completion(0xffff, IMPOSSIBLE);
}

static void completion_length_above_mtu(void **state)
{
	(void)state;
	bad_completion(1519, IMPOSSIBLE);
}

/* Plausible but wrong (shorter than the frame, same ring): the frame is cut, IPv4 sees a
 * total length beyond the frame; the NIC's checksum covers the whole frame, so the cut
 * buffer is not what the completion described either. */
static void completion_length_truncated(void **state)
{
	(void)state;
	bad_completion(1000, MISMATCH);
}

/* Plausible length of the other ring: a big frame reported as 60 bytes. The driver infers
 * the ring from the length (§4.6), so it takes a small buffer the NIC did not use; from
 * then on each ring hands out the wrong buffers: the big ring a frame's predecessor with
 * the frame's checksum. The stack's transport checksum fails, myrio_rx_verify finds the
 * buffer's sum different from the NIC's, and the port resets the NIC. */
static void completion_length_other_ring(void **state)
{
	(void)state;
	bad_completion(60, MISMATCH);
}

/* Application holds every received buffer: the receive pool runs low, and the stack
 * drops what it cannot hold so as to keep the pool's last eighth for hole-filling segments
 * and SYNs (tcp_rxmem.c); once the application gives the buffers back, TCP recovers
 * everything. */
static struct sp_stream *hold_rx;
static struct myrio_pkt *held[4096];
static unsigned nheld;

static void hold_tweak(struct myrio_stack_conf *c)
{
	c->rcv_buf = 4u << 20; /* window far beyond the receive pool */
}

static void rx_pool_exhausted_then_recovers(void **state)
{
	(void)state;
	struct stack_pair m;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.rx_pool_size = 64; /* buffers beyond the ring */
	assert_int_equal(
	    sp_open(&m, "sim:link=10g,rx_ring=128",
		    &(struct sp_opts){.streams = 4, .tweak = hold_tweak, .port_conf = &pc}),
	    0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 4u << 20);
	/* Run until the receiving connection exists, then stop reading (hold buffers). */
	for (int i = 0; i < 10000 && !sp_receiver(&m); i++)
		sp_round(&m);
	assert_non_null(sp_receiver(&m));
	hold_rx = sp_receiver(&m);
	struct myrio_tcp_conn *rc = hold_rx->c;
	/* detach the reader: the event handler only reads streams it knows */
	myrio_tcp_set_user(rc, NULL);
	nheld = 0;
	for (int i = 0; i < 20000; i++) {
		sp_round(&m);
		struct myrio_pkt *p;
		while (nheld < 4096 && (p = myrio_tcp_recv(rc)) != NULL)
			held[nheld++] = p;
	}
	struct myrio_stack_stats st;
	myrio_stack_stats(m.b, &st);
	assert_true(st.drop_tcp_rx_pressure > 0);
	myrio_stack_stats(m.a, &st);
	assert_true(st.tcp_retransmits > 0);
	/* verify and give everything back, then read normally again */
	for (unsigned i = 0; i < nheld; i++) {
		const uint8_t *d = myrio_pkt_data(held[i]);
		for (uint32_t k = 0; k < held[i]->len; k++)
			if (d[k] != test_pattern(hold_rx->rcvd + k))
				hold_rx->bad++;
		hold_rx->rcvd += held[i]->len;
		myrio_tcp_release(rc, held[i]);
	}
	myrio_tcp_set_user(rc, (void *)(uintptr_t)2);
	sp_stream_read(hold_rx);
	assert_true(sp_run_until(&m, sp_all_received, 3000000));
	sp_check_intact(&m, tx);
	sp_close(&m);
}

/* A transmit pool of 64 buffers for a 4 MiB transfer: writes are refused while it is
 * empty and resume on WRITABLE. */
static void small_tx_tweak(struct myrio_stack_conf *c)
{
	c->tx_pool_size = 64;
	c->snd_queue_segs = 48;
}

static void tx_pool_exhausted(void **state)
{
	(void)state;
	struct stack_pair m;
	assert_int_equal(
	    sp_open(&m, "sim:link=10g", &(struct sp_opts){.streams = 4, .tweak = small_tx_tweak}),
	    0);
	struct sp_stream *tx = sp_transfer(&m, PORT, 4u << 20);
	assert_true(sp_run_until(&m, sp_all_received, 3000000));
	sp_check_intact(&m, tx);
	sp_close(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(completion_length_ffff),
		cmocka_unit_test(completion_length_above_mtu),
		cmocka_unit_test(completion_length_truncated),
		cmocka_unit_test(completion_length_other_ring),
		cmocka_unit_test(rx_pool_exhausted_then_recovers),
		cmocka_unit_test(tx_pool_exhausted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
