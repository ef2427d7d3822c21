/* SPDX-License-Identifier: BSD-3-Clause */
/* The command channel (§3): results, argument checks, RESET, UP/DOWN, filters, DMA test,
 * I2C, injected command faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim_harness.h"

static void reset_and_sizes(void **state)
{
	struct hnic *h = *state;
	uint32_t d = 0;
	assert_int_equal(h_cmd(h, MCP_CMD_RESET, 0, 0, 0, &d), 0);
	assert_int_equal(d, 512 * 8);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_RX_RING_SIZE, 0xdead, 0, 0, &d), 0); /* garbage data ignored */
	assert_int_equal(d, 512 * 8);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_SEND_RING_SIZE, 0xbeef, 0, 0, &d), 0);
	assert_int_equal(d, 1024 * 16);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MCP_VERSION, 0, 0, 0, &d), 0);
	assert_int_equal(d, 0x010439); /* the power-on firmware, 1.4.57 */
	assert_int_equal(h_cmd(h, 999, 0, 0, 0, &d), 1); /* unknown opcode */
	assert_int_equal(h_cmd(h, MCP_CMD_DCA_ENABLE, 0, 0, 0, &d), 1);	 /* DCA: UNKNOWN */
}

static void offsets_and_slice_checks(void **state)
{
	struct hnic *h = *state;
	uint32_t d = 0;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	for (uint32_t op = 6; op <= 8; op++) {
		assert_int_equal(h_cmd(h, op, 0, 0, 0, &d), 0);
		assert_true(d > 0 && d < 0x100000);
		assert_int_equal(h_cmd(h, op, 1, 0, 0, &d), 2); /* slice 1 not enabled */
	}
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_DMA, 0x1000, 0, 1, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_STATS_DMA_V2, 0x1000, 0, 64 | 1u << 16, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_IRQ_ACK_OFFSET, 0, 0, 0, &d), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_IRQ_DEASSERT_OFFSET, 0, 0, 0, &d), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_INTR_COAL_DELAY_OFFSET, 0, 0, 0, &d), 0);
}

static void intrq_size_rules(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, 2 * 512 * 4, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, 512 * 4, 0, 0, NULL), 2);		     /* not 2 x entries */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, 0x80000000u | 64 * 4, 0, 0, NULL), 0); /* NO_STRICT */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, 0x80000000u | 48 * 4, 0, 0, NULL), 2); /* not pow2 */
}

static void mtu_and_buffers(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_MTU, 9400, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_MTU, 9401, 0, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_BIG_BUFFER_SIZE, 9216, 0, 0, NULL), 0); /* F's 9 KiB cluster */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_BIG_BUFFER_SIZE, 1516, 0, 0, NULL), 0); /* iPXE */
	assert_int_equal(h_cmd(h, MCP_CMD_SET_BIG_BUFFER_SIZE, 0, 0, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_SMALL_BUFFER_SIZE, 126, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ALWAYS_USE_N_BIG_BUFFERS, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ALWAYS_USE_N_BIG_BUFFERS, 4, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ALWAYS_USE_N_BIG_BUFFERS, 3, 0, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_TSO_MODE, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_TSO_MODE, 2, 0, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_RSS_MCP_SLOT_TYPE, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_THROTTLE_FACTOR, 0, 0, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_THROTTLE_FACTOR, 1000, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_RELAX_RXBUFFER_ALIGNMENT, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_DISABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_STATS_DMA_OBSOLETE, 0x1000, 0, 0, NULL), 0);
}

static void up_needs_parameters(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	assert_int_not_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 0);
	h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, 2 * 512 * 4, 0, 0, NULL);
	uint64_t q = h_iova(h, H_INTRQ);
	h_cmd(h, MCP_CMD_SET_INTRQ_DMA, (uint32_t)q, (uint32_t)(q >> 32), 0, NULL);
	assert_int_not_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 0); /* no stats DMA, no sizes */
	uint64_t s = h_iova(h, H_STATS);
	h_cmd(h, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)s, (uint32_t)(s >> 32), 64, NULL);
	h_cmd(h, MCP_CMD_SET_SMALL_BUFFER_SIZE, 126, 0, 0, NULL);
	assert_int_not_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 0); /* no big size */
	h_cmd(h, MCP_CMD_SET_BIG_BUFFER_SIZE, 2048, 0, 0, NULL);
	assert_int_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 0);
	/* the stats update after UP reports the link */
	myrio_sim_step(h->w, 2);
	volatile uint8_t *st = h->mem + H_STATS;
	assert_int_not_equal(st[63], 0);
	assert_int_not_equal(st[62], 0);
	assert_int_equal(get_be32((const void *)(st + 28)), 1);
	assert_int_equal(get_be32((const void *)(st + 56)), 15);
	/* RESET forgets everything: UP refused again */
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	assert_int_not_equal(h_cmd(h, MCP_CMD_ETHERNET_UP, 0, 0, 0, NULL), 0);
}

static void down_reports_link_down(void **state)
{
	struct hnic *h = *state;
	assert_int_equal(h_bringup(h, 126, 2048, 64), 0);
	myrio_sim_step(h->w, 2);
	uint32_t link = 99;
	assert_int_not_equal(h_status(h, NULL, &link), 0);
	assert_int_equal(link, 1);
	assert_int_equal(h_cmd(h, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL), 0);
	myrio_sim_step(h->w, 2);
	volatile uint8_t *st = h->mem + H_STATS;
	assert_int_not_equal(st[63], 0);
	assert_int_equal(st[61], 1); /* link_down */
	assert_int_not_equal(st[62], 0);
}

/* A pair on a 10 Gb/s cable: a sends, b has buffers posted (none: it holds a with PAUSE). */
static struct hpair *down_pair(uint32_t b_buffers)
{
	struct hpair *c = h_pair_new("link=10g");
	assert_non_null(c);
	assert_int_equal(h_bringup(&c->a, 126, 2048, 0), 0);
	assert_int_equal(h_bringup(&c->b, 1518, 4096, b_buffers), 0);
	return c;
}

#define DOWN_FRAMES 64u
#define DOWN_FRAME_LEN 1000u

static void post_frames(struct hpair *c)
{
	uint8_t f[DOWN_FRAME_LEN];
	for (unsigned i = 0; i < DOWN_FRAMES; i++) {
		h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x88b5, DOWN_FRAME_LEN, (uint8_t)i);
		h_send(&c->a, f, DOWN_FRAME_LEN);
	}
}

/* ETHERNET_DOWN right behind a burst of sends, with no look at the status block between
 * (a driver that does not wait for them): the firmware finishes the work in hand (§10), so
 * every frame reaches the peer, byte for byte, before the answer; the "down" update follows. */
static void down_finishes_the_posted_sends(void **state)
{
	struct hpair *c = down_pair(256);
	post_frames(c);
	assert_int_equal(h_cmd(&c->a, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL), 0);
	assert_int_equal(h_nic_stats(c->a.nic).tx_frames, DOWN_FRAMES);
	for (unsigned i = 0; i < c->a.tx_entries; i++) /* every slot taken */
		assert_int_equal(h_r32(&c->a, c->a.send_off + i * 16 + 12) & 0xFF, 0);
	myrio_sim_step(c->w, 10);
	uint8_t f[DOWN_FRAME_LEN];
	for (unsigned i = 0; i < DOWN_FRAMES; i++) {
		assert_int_equal(h_completion(&c->b, NULL), DOWN_FRAME_LEN);
		h_frame(f, c->b.nic->eeprom_mac, h_src_mac, 0x88b5, DOWN_FRAME_LEN, (uint8_t)i);
		assert_memory_equal(h_small_buf(&c->b, i) + 2, f, DOWN_FRAME_LEN);
	}
	assert_int_equal(h_completion(&c->b, NULL), 0);
	/* the updates the sends raised, then the "down" one */
	volatile uint8_t *st = c->a.mem + H_STATS;
	bool down = false;
	for (unsigned i = 0; i < 100 && !down; i++) {
		down = st[63] && st[61] == 1;
		h_status(&c->a, NULL, NULL);
		myrio_sim_step(c->w, 1);
	}
	assert_true(down);
	h_pair_close(c);
	free(c);
}

/* What the send engine cannot finish does not hold the answer for ever: a peer's PAUSE
 * holds the frames for at most the model's bound (10 ms), a hung engine not at all. */
static void down_bounded_when_sends_cannot_leave(void **state)
{
	struct hpair *c = down_pair(0);
	assert_int_equal(h_cmd(&c->a, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(&c->b, MCP_CMD_ENABLE_FLOW_CONTROL, 0, 0, 0, NULL), 0);
	post_frames(c);
	uint64_t t0 = sim_world_now(c->w);
	assert_int_equal(h_cmd(&c->a, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL), 0);
	uint64_t took = sim_world_now(c->w) - t0;
	assert_true(took >= 10000000u && took <= 10100000u);
	assert_int_equal(h_nic_stats(c->a.nic).tx_frames, 0);
	h_pair_close(c);
	free(c);

	c = down_pair(256);
	assert_int_equal(sim_nic_inject(c->a.nic, SIM_FAULT_TX_HANG, 0), 0);
	post_frames(c);
	t0 = sim_world_now(c->w);
	assert_int_equal(h_cmd(&c->a, MCP_CMD_ETHERNET_DOWN, 0, 0, 0, NULL), 0);
	assert_true(sim_world_now(c->w) - t0 <= 10000u);
	assert_int_equal(h_nic_stats(c->a.nic).tx_frames, 0);
	h_pair_close(c);
	free(c);
}

static void multicast_filter_capacity(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	/* finite, and room for what Linux joins (it has no fallback when a JOIN is refused) */
	unsigned joined = 0;
	for (unsigned i = 0; i < 1000; i++) {
		int r = h_cmd(h, MCP_CMD_JOIN_MULTICAST_GROUP, 0x01005e00 | (i >> 8),
			      (i & 0xffu) << 24 | (7u << 16), 0, NULL);
		if (r == 9)
			break;
		assert_int_equal(r, 0);
		joined++;
	}
	assert_int_equal(joined, SIM_MCAST_MAX);
	/* a test's smaller filter refuses the group beyond it */
	assert_int_equal(h_cmd(h, MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS, 0, 0, 0, NULL), 0);
	sim_nic_set_mcast_capacity(h->nic, 16);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(h_cmd(h, MCP_CMD_JOIN_MULTICAST_GROUP, 0x01005e00,
				       (i << 24) | (7u << 16), 0, NULL),
				 0);
	assert_int_equal(
	    h_cmd(h, MCP_CMD_JOIN_MULTICAST_GROUP, 0x01005e00, 16u << 24 | 7u << 16, 0, NULL), 9);
	sim_nic_set_mcast_capacity(h->nic, 0);
	assert_int_equal(h_cmd(h, MCP_CMD_LEAVE_MULTICAST_GROUP, 0x01005e00, 0u << 24 | 7u << 16, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_LEAVE_MULTICAST_GROUP, 0x01005e00, 0u << 24 | 7u << 16, 0, NULL), 9); /* gone */
	assert_int_equal(h_cmd(h, MCP_CMD_LEAVE_MULTICAST_GROUP, 0xffffffff, 0xffff0000, 0, NULL), 9);	     /* bcast */
	assert_int_equal(h_cmd(h, MCP_CMD_JOIN_MULTICAST_GROUP, 0xffffffff, 0xffff0000, 0, NULL), 9);
	assert_int_equal(h_cmd(h, MCP_CMD_JOIN_MULTICAST_GROUP, 0x02000000, 0x00010000, 0, NULL), 9); /* unicast */
	assert_int_equal(h_cmd(h, MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_LEAVE_MULTICAST_GROUP, 0x01005e00, 1u << 24 | 7u << 16, 0, NULL), 9);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_PROMISC, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_DISABLE_PROMISC, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_ALLMULTI, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_DISABLE_ALLMULTI, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_MAC_ADDRESS, 0x0060dd01, 0x0203, 0, NULL), 0);
}

static void dma_test_touches_page(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	uint64_t a = h_iova(h, H_DMATEST);
	memset(h->mem + H_DMATEST, 0, 4096);
	uint32_t d = 0;
	assert_int_equal(h_cmd(h, MCP_CMD_DMA_TEST, (uint32_t)a, (uint32_t)(a >> 32), 4096 * 0x10000, &d), 0);
	assert_int_not_equal(d >> 16, 0);
	assert_int_not_equal(d & 0xFFFF, 0);
	assert_int_equal(h->mem[H_DMATEST + 5], 0); /* read only */
	assert_int_equal(h_cmd(h, MCP_CMD_DMA_TEST, (uint32_t)a, (uint32_t)(a >> 32), 4096 * 0x10001, &d), 0);
	unsigned nz = 0;
	for (unsigned i = 0; i < 4096; i++)
		nz += h->mem[H_DMATEST + i] != 0;
	assert_true(nz > 4000); /* written */
	assert_int_equal(h_cmd(h, MCP_CMD_UNALIGNED_TEST, (uint32_t)a, (uint32_t)(a >> 32), 4096 * 0x10001, &d), 0);
	assert_int_equal(sim_nic_inject(h->nic, SIM_FAULT_UNALIGNED, 1), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_UNALIGNED_TEST, (uint32_t)a, (uint32_t)(a >> 32), 4096 * 0x10001, &d), 10);
	/* an unmapped page: refused, counted */
	struct sim_nic_stats st = h_nic_stats(h->nic);
	uint64_t f0 = st.dma_faults;
	assert_int_not_equal(h_cmd(h, MCP_CMD_DMA_TEST, 0x1000, 0, 4096 * 0x10000, &d), 0);
	st = h_nic_stats(h->nic);
	assert_true(st.dma_faults > f0);
}

static void rss_and_tso6_depend_on_firmware(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	/* the EEPROM firmware is not an rss image */
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, NULL), 1);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 1, 0, NULL), 1);
	uint32_t d = 0;
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MAX_TSO6_HDR_SIZE, 0, 0, 0, &d), 0); /* 1.4.57 >= 1.4.25 */
	assert_true(d >= 128);
}

static void i2c_busy_then_byte(void **state)
{
	struct hnic *h = *state;
	h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL);
	uint32_t d = 0;
	assert_int_equal(h_cmd(h, MCP_CMD_I2C_READ, 0, 3 | 0xA0 << 8, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_I2C_BYTE, 3, 0, 0, &d), 3); /* BUSY */
	int r = 3;
	for (unsigned i = 0; i < 50 && r == 3; i++) {
		myrio_sim_step(h->w, 1000);
		r = h_cmd(h, MCP_CMD_I2C_BYTE, 3, 0, 0, &d);
	}
	assert_int_equal(r, 0);
	assert_int_equal(d, 0x10); /* 10GBASE-SR */
	assert_int_equal(h_cmd(h, MCP_CMD_I2C_BYTE, 256, 0, 0, &d), 2);
}

static void injected_command_faults(void **state)
{
	struct hnic *h = *state;
	assert_int_equal(sim_nic_inject(h->nic, SIM_FAULT_CMD_TIMEOUT, 0), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, NULL), -1);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, NULL), 0); /* only the next one */
	assert_int_equal(sim_nic_inject(h->nic, SIM_FAULT_CMD_ERROR, 8), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, NULL), 8);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, NULL), 0);
}

static void sixty_four_bit_stores(void **state)
{
	/* L copies the block with 64-bit stores (§3.1): the trigger still works. */
	struct hnic *h = *state;
	uint8_t blk[64];
	memset(blk, 0, sizeof(blk));
	uint64_t a = h_iova(h, H_RESP);
	put_be32(blk, 12);
	put_be32(blk + 16, (uint32_t)(a >> 32));
	put_be32(blk + 20, (uint32_t)a);
	put_be32(h->mem + H_RESP + 4, 0xFFFFFFFFu);
	for (unsigned i = 0; i < 64; i += 8)
		*(volatile uint64_t *)(h->bar + 0xF80000 + i) = *(uint64_t *)(blk + i);
	myrio_sim_step(h->w, 1);
	assert_int_equal(get_be32(h->mem + H_RESP + 4), 0);
	assert_int_equal(get_be32(h->mem + H_RESP), 512 * 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(reset_and_sizes, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(offsets_and_slice_checks, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(intrq_size_rules, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(mtu_and_buffers, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(up_needs_parameters, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(down_reports_link_down, h_setup, h_teardown),
	    cmocka_unit_test(down_finishes_the_posted_sends),
	    cmocka_unit_test(down_bounded_when_sends_cannot_leave),
	    cmocka_unit_test_setup_teardown(multicast_filter_capacity, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(dma_test_touches_page, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(rss_and_tso6_depend_on_firmware, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(i2c_busy_then_byte, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(injected_command_faults, h_setup, h_teardown),
	    cmocka_unit_test_setup_teardown(sixty_four_bit_stores, h_setup, h_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
