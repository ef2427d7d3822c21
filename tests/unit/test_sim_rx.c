/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path (§4): ring selection, pad, completion checksum, big frames over several
 * buffers, ALWAYS_USE_N, drops without buffers (never partial), filters, MTU, runts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim_harness.h"
#include "util/csum.h"

static int setup(void **state)
{
	struct hpair *c = h_pair_new("link=unlimited");
	if (!c || h_bringup(&c->a, 126, 2048, 0) || h_bringup(&c->b, 126, 2048, 0))
		return -1;
	*state = c;
	return 0;
}

static void send_to_b(struct hpair *c, uint32_t len, uint8_t seed, uint8_t *copy)
{
	uint8_t f[9400];
	h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x0800, len, seed);
	if (copy)
		memcpy(copy, f, len);
	h_send(&c->a, f, (uint16_t)len);
	myrio_sim_step(c->w, 2);
}

static uint16_t sum14(const uint8_t *f, uint32_t len)
{
	return csum_fold(csum_add(0, f + 14, len - 14));
}

static void small_ring_pad_and_checksum(void **state)
{
	struct hpair *c = *state;
	h_post_small(&c->b, 8);
	h_post_big(&c->b, 8);
	uint8_t f[200];
	for (uint32_t len = 60; len <= 126; len += 33) {
		uint32_t slot = c->b.small_prod - 8 + (uint32_t)(c->b.intrq_idx);
		send_to_b(c, len, (uint8_t)len, f);
		uint16_t cs = 0;
		assert_int_equal(h_completion(&c->b, &cs), len);
		assert_int_equal(cs, sum14(f, len));
		uint8_t *buf = h_small_buf(&c->b, slot);
		assert_memory_equal(buf + 2, f, len); /* at +2 (§4.4) */
		/* consumed slot re-invalidated */
		assert_int_equal(h_r32(&c->b, c->b.small_off + (slot & 511) * 8 + 4), 0xFFFFFFFFu);
	}
	/* 127 > small size: the big ring */
	send_to_b(c, 127, 9, f);
	assert_int_equal(h_completion(&c->b, NULL), 127);
	assert_memory_equal(h_big_buf(&c->b, 0) + 2, f, 127);
}

static void big_frame_over_several_buffers(void **state)
{
	struct hpair *c = *state;
	h_post_big(&c->b, 8);
	static uint8_t f[9400];
	send_to_b(c, 5000, 3, f); /* ceil(5002 / 2048) = 3 buffers */
	uint16_t cs = 0;
	assert_int_equal(h_completion(&c->b, &cs), 5000);
	assert_int_equal(cs, sum14(f, 5000));
	assert_memory_equal(h_big_buf(&c->b, 0) + 2, f, 2046);
	assert_memory_equal(h_big_buf(&c->b, 1), f + 2046, 2048);
	assert_memory_equal(h_big_buf(&c->b, 2), f + 4094, 5000 - 4094);
	/* the next frame starts in buffer 3 */
	send_to_b(c, 1000, 4, f);
	assert_int_equal(h_completion(&c->b, &cs), 1000);
	assert_int_equal(cs, sum14(f, 1000));
	assert_memory_equal(h_big_buf(&c->b, 3) + 2, f, 1000);
	/* an odd-sized buffer split: checksum pieces at odd offsets */
	assert_int_equal(h_cmd(&c->b, MCP_CMD_SET_BIG_BUFFER_SIZE, 1517, 0, 0, NULL), 0);
	send_to_b(c, 3001, 5, f);
	assert_int_equal(h_completion(&c->b, &cs), 3001);
	assert_int_equal(cs, sum14(f, 3001));
	assert_memory_equal(h_big_buf(&c->b, 4) + 2, f, 1515);
	assert_memory_equal(h_big_buf(&c->b, 5), f + 1515, 1486);
}

static void always_use_n(void **state)
{
	struct hpair *c = *state;
	assert_int_equal(h_cmd(&c->b, MCP_CMD_ALWAYS_USE_N_BIG_BUFFERS, 4, 0, 0, NULL), 0);
	h_post_big(&c->b, 16);
	uint8_t f[3000];
	send_to_b(c, 1000, 1, f);
	assert_int_equal(h_completion(&c->b, NULL), 1000);
	send_to_b(c, 1000, 2, f);
	assert_int_equal(h_completion(&c->b, NULL), 1000);
	assert_memory_equal(h_big_buf(&c->b, 4) + 2, f, 1000); /* buffers 1..3 skipped */
	assert_int_equal(h_r32(&c->b, c->b.big_off + 7 * 8 + 4), 0xFFFFFFFFu);
	assert_int_not_equal(h_r32(&c->b, c->b.big_off + 8 * 8 + 4), 0xFFFFFFFFu);
	/* more than n x size: overrun */
	static uint8_t g[9400];
	send_to_b(c, 9000, 1, g);
	struct sim_counters k = h_nic_counters(c->b.nic);
	assert_int_equal(k.dropped_overrun, 1);
}

static void no_buffer_drops_never_partial(void **state)
{
	struct hpair *c = *state;
	/* the receiver has no flow control, so frames are dropped, not held */
	assert_int_equal(h_cmd(&c->b, MCP_CMD_DISABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0);
	h_post_small(&c->b, 2);
	h_post_big(&c->b, 2);
	uint8_t f[5000];
	for (int i = 0; i < 3; i++)
		send_to_b(c, 64, (uint8_t)i, f);
	assert_int_equal(h_completion(&c->b, NULL), 64);
	assert_int_equal(h_completion(&c->b, NULL), 64);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_counters k = h_nic_counters(c->b.nic);
	assert_int_equal(k.dropped_no_small_buffer, 1);
	send_to_b(c, 5000, 1, f); /* needs 3 big buffers, 2 posted */
	assert_int_equal(h_completion(&c->b, NULL), 0);
	k = h_nic_counters(c->b.nic);
	assert_int_equal(k.dropped_no_big_buffer, 1);
	/* nothing was consumed: the slots are still valid */
	assert_int_not_equal(h_r32(&c->b, c->b.big_off + 4), 0xFFFFFFFFu);
	h_post_big(&c->b, 1);
	send_to_b(c, 5000, 2, f);
	assert_int_equal(h_completion(&c->b, NULL), 5000);
	assert_memory_equal(h_big_buf(&c->b, 0) + 2, f, 100);
	/* the counters reach the host in the status block, marked stats_updated, within a
	 * stats interval (1 ms), even though nothing else happens */
	volatile uint8_t *st = c->b.mem + H_STATS;
	bool seen = false;
	for (unsigned i = 0; i < 3000 && !seen; i++) {
		myrio_sim_step(c->w, 1);
		if (st[63] && st[62] && get_be32((const void *)(st + 48)) == 1 &&
		    get_be32((const void *)(st + 52)) == 1)
			seen = true;
		(void)h_status(&c->b, NULL, NULL);
	}
	assert_true(seen);
}

static void flow_control_holds_sender(void **state)
{
	struct hpair *c = *state;
	h_cmd(&c->a, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL);
	h_cmd(&c->b, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL);
	h_post_small(&c->b, 2);
	uint8_t f[100];
	for (int i = 0; i < 4; i++)
		send_to_b(c, 64, (uint8_t)i, f);
	assert_int_equal(h_completion(&c->b, NULL), 64);
	assert_int_equal(h_completion(&c->b, NULL), 64);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_counters k = h_nic_counters(c->b.nic);
	assert_int_equal(k.dropped_no_small_buffer, 0);
	k = h_nic_counters(c->a.nic);
	assert_int_equal(k.dropped_pause, 1);
	h_post_small(&c->b, 2);
	myrio_sim_step(c->w, 3);
	assert_int_equal(h_completion(&c->b, NULL), 64);
	assert_int_equal(h_completion(&c->b, NULL), 64);
}

static void filters(void **state)
{
	struct hpair *c = *state;
	struct hnic *b = &c->b;
	h_post_small(b, 64);
	uint8_t f[100];
	static const uint8_t other[6] = {0x00, 0x60, 0xdd, 0x99, 0x99, 0x99};
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t mc[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
	static const uint8_t lldp[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
	static const uint8_t pause[6] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01};
	struct {
		const uint8_t *dst;
		uint16_t type;
	} cases[] = {
	    {other, 0x0800}, {bcast, 0x0806}, {mc, 0x0800}, {lldp, 0x88cc}, {pause, 0x8808}};
	assert_int_equal(h_cmd(b, MCP_CMD_DISABLE_ALLMULTI, 0, 0, 0, NULL), 0); /* multicast filter on */
	for (unsigned i = 0; i < 5; i++) {
		h_frame(f, cases[i].dst, h_src_mac, cases[i].type, 64, 1);
		h_send(&c->a, f, 64);
	}
	myrio_sim_step(c->w, 3);
	assert_int_equal(h_completion(b, NULL), 64); /* only the broadcast */
	assert_int_equal(h_completion(b, NULL), 0);
	struct sim_counters k = h_nic_counters(b->nic);
	assert_int_equal(k.dropped_unicast_filtered, 1);
	assert_int_equal(k.dropped_multicast_filtered, 1);
	assert_int_equal(k.dropped_link_error_or_filtered, 1);
	assert_int_equal(k.dropped_pause, 1);
	/* join the group, then promiscuous: all but PAUSE */
	assert_int_equal(h_cmd(b, MCP_CMD_JOIN_MULTICAST_GROUP, 0x01005e01, 0x02030000, 0, NULL), 0);
	assert_int_equal(h_cmd(b, MCP_CMD_ENABLE_PROMISC, 0, 0, 0, NULL), 0);
	for (unsigned i = 0; i < 5; i++) {
		h_frame(f, cases[i].dst, h_src_mac, cases[i].type, 64, 1);
		h_send(&c->a, f, 64);
	}
	myrio_sim_step(c->w, 3);
	unsigned got = 0;
	while (h_completion(b, NULL))
		got++;
	assert_int_equal(got, 4);
	/* SET_MAC_ADDRESS moves the unicast filter */
	assert_int_equal(h_cmd(b, MCP_CMD_DISABLE_PROMISC, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(b, MCP_CMD_SET_MAC_ADDRESS, 0x0060dd99, 0x9999, 0, NULL), 0);
	h_frame(f, other, h_src_mac, 0x0800, 64, 1);
	h_send(&c->a, f, 64);
	myrio_sim_step(c->w, 3);
	assert_int_equal(h_completion(b, NULL), 64);
}

static void mtu_and_runts(void **state)
{
	struct hpair *c = *state;
	h_post_small(&c->b, 8);
	h_post_big(&c->b, 8);
	assert_int_equal(h_cmd(&c->b, MCP_CMD_SET_MTU, 1518, 0, 0, NULL), 0);
	uint8_t f[2000];
	send_to_b(c, 1518, 1, f);
	assert_int_equal(h_completion(&c->b, NULL), 1518);
	send_to_b(c, 1519, 1, f);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	send_to_b(c, 42, 1, f); /* not padded by the sender's NIC */
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_counters k = h_nic_counters(c->b.nic);
	assert_int_equal(k.dropped_overrun, 1);
	assert_int_equal(k.dropped_runt, 1);
	struct sim_nic_stats st = h_nic_stats(c->a.nic);
	assert_int_equal(st.tx_runts, 1);
}

static void bad_completion_injected(void **state)
{
	struct hpair *c = *state;
	h_post_small(&c->b, 8);
	assert_int_equal(sim_nic_inject(c->b.nic, SIM_FAULT_BAD_COMPLETION, 0xFFFF), 0);
	uint8_t f[100];
	send_to_b(c, 64, 1, f);
	assert_int_equal(h_completion(&c->b, NULL), 0xFFFF);
	send_to_b(c, 64, 1, f);
	assert_int_equal(h_completion(&c->b, NULL), 64);
}

/* A peer whose firmware hung, with flow control on and no buffer posted, sends no PAUSE:
 * it does not run, so the frames go on the wire and are lost at the far end (as on a
 * Myri-10G and any 10 GbE partner), and the sender's ring keeps moving; so it is after the
 * peer's function-level reset. Only a peer that runs and lacks buffers holds it
 * (flow_control_holds_sender). */
static void hung_or_resetting_peer_holds_nobody(void **state)
{
	struct hpair *c = *state;
	h_cmd(&c->a, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL);
	h_cmd(&c->b, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL);
	assert_int_equal(sim_nic_inject(c->b.nic, SIM_FAULT_FW_HANG, 0), 0);
	uint8_t f[100];
	for (int i = 0; i < 4; i++)
		send_to_b(c, 64, (uint8_t)i, f);
	sim_nic_flr(c->b.nic);
	for (int i = 0; i < 4; i++)
		send_to_b(c, 64, (uint8_t)i, f);
	assert_int_equal(h_nic_stats(c->a.nic).tx_frames, 8);
	assert_int_equal(h_nic_counters(c->a.nic).dropped_pause, 0);
	assert_int_equal(h_nic_stats(c->b.nic).rx_down, 8);
}

/* A running peer whose big buffer size is gone (a reset between the check of its running
 * state and its rings: the daemon dropped its client) holds nobody and divides by nothing;
 * the frame is dropped at the peer as an overrun. */
static void peer_without_big_size_holds_nobody(void **state)
{
	struct hpair *c = *state;
	h_cmd(&c->a, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL);
	h_cmd(&c->b, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL);
	c->b.nic->big_size = 0;
	uint8_t f[1200];
	send_to_b(c, 1000, 1, f);
	assert_int_equal(h_nic_stats(c->a.nic).tx_frames, 1);
	assert_int_equal(h_nic_counters(c->a.nic).dropped_pause, 0);
	assert_int_equal(h_nic_counters(c->b.nic).dropped_overrun, 1);
}

static void down_nic_receives_nothing(void **state)
{
	struct hpair *c = *state;
	h_post_small(&c->b, 8);
	assert_int_equal(h_cmd(&c->b, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL), 0);
	uint8_t f[100];
	send_to_b(c, 64, 1, f);
	assert_int_equal(h_completion(&c->b, NULL), 0);
	struct sim_nic_stats st = h_nic_stats(c->b.nic);
	assert_int_equal(st.rx_down, 1);
}

/* iPXE-style posting (§4.3): one descriptor at a time, high word then low word, round and
 * round a small ring; works only because the NIC re-invalidates consumed slots. */
static void single_posting_across_wraps(void **state)
{
	(void)state;
	struct hpair p;
	assert_int_equal(h_pair_open(&p, "link=unlimited,rx_ring=8"), 0);
	struct hnic *a = &p.a, *b = &p.b;
	assert_int_equal(h_bringup(a, 126, 2048, 0), 0);
	assert_int_equal(h_bringup(b, 1516, 1516, 0), 0);
	assert_int_equal(b->rx_entries, 8);
	h_post_small(b, 3); /* fewer than the ring holds */
	uint8_t f[100];
	for (uint32_t i = 0; i < 50; i++) {
		h_frame(f, b->nic->eeprom_mac, h_src_mac, 0x0800, 64, (uint8_t)i);
		h_send(a, f, 64);
		myrio_sim_step(p.w, 2);
		assert_int_equal(h_completion(b, NULL), 64);
		assert_memory_equal(h_small_buf(b, i) + 2, f, 64);
		h_post_small(b, 1);
	}
	struct sim_counters k = h_nic_counters(b->nic);
	assert_int_equal(k.dropped_no_small_buffer, 0);
	h_pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(small_ring_pad_and_checksum, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(big_frame_over_several_buffers, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(always_use_n, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(no_buffer_drops_never_partial, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(flow_control_holds_sender, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(filters, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(mtu_and_runts, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(bad_completion_injected, setup, h_pair_teardown),
	    cmocka_unit_test_setup_teardown(hung_or_resetting_peer_holds_nobody, setup,
					    h_pair_teardown),
	    cmocka_unit_test_setup_teardown(peer_without_big_size_holds_nobody, setup,
					    h_pair_teardown),
	    cmocka_unit_test_setup_teardown(down_nic_receives_nothing, setup, h_pair_teardown),
	    cmocka_unit_test(single_posting_across_wraps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
