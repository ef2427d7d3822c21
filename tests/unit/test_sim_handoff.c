/* SPDX-License-Identifier: BSD-3-Clause */
/* Boot handoff (§2.4), dummy RDMA (§2.6), firmware flavours, reboot and detach. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* after the headers it needs */
#include <cmocka.h>

#include "sim/fw_image.h"
#include "sim_harness.h"

struct ctx {
	struct hnic h; /* h.w: its world */
	uint8_t img[256 * 1024];
	size_t len;
};

static int setup(void **state)
{
	struct ctx *c = calloc(1, sizeof(*c));
	if (!c || h_open(&c->h, NULL) < 0)
		return -1;
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;
	h_close(&c->h);
	free(c);
	return 0;
}

/* Stages the image and hands off; true if the confirm word arrived within 10 ms. */
static bool handoff(struct ctx *c, const uint8_t *img, size_t len)
{
	return h_handoff(&c->h, img, len);
}

static const char *running_version(struct ctx *c)
{
	uint32_t hp = h_r32(&c->h, 0x3C);
	return (const char *)c->h.bar + hp + 8;
}

static void accepted_and_adopted(void **state)
{
	struct ctx *c = *state;
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth@1.4.48", &c->len), 0);
	assert_true(handoff(c, c->img, c->len));
	assert_string_equal(running_version(c), "1.4.48 -- libmyrio model eth");
	uint32_t hp = h_r32(&c->h, 0x3C);
	assert_int_equal(h_r32(&c->h, hp + 140), 0x1DFF00); /* run-time field filled */
	/* the EEPROM strings are still there */
	assert_memory_equal((const char *)c->h.bar + 0x1DFE00, "MAC=00:60:dd:", 13);
	/* the body was copied */
	assert_memory_equal((const uint8_t *)c->h.bar + 0x1000, c->img + 0x1000, 4096);
	uint32_t d;
	assert_int_equal(h_cmd(&c->h, MCP_CMD_RESET, 0, 0, 0, &d), 0);
	/* aligned firmware: tx_boundary 4096, so a throttle of 8191 is out of range */
	assert_int_equal(h_cmd(&c->h, MCP_CMD_SET_THROTTLE_FACTOR, 8191, 0, 0, NULL), 2);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_SET_THROTTLE_FACTOR, 4095, 0, 0, NULL), 0);
	struct sim_nic_stats st = h_nic_stats(c->h.nic);
	assert_int_equal(st.handoffs, 1);
}

static void rss_image_answers_rss_commands(void **state)
{
	struct ctx *c = *state;
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "rss_ethp", &c->len), 0);
	assert_true(handoff(c, c->img, c->len));
	h_cmd(&c->h, MCP_CMD_RESET, 0, 0, 0, NULL);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 1, 0, NULL), 2); /* before GET_MAX_RSS_QUEUES */
	uint32_t n = 0;
	/* it sizes the slices' queues: only after SET_INTRQ_SIZE (§7.2) */
	assert_int_equal(h_cmd(&c->h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, &n), 2);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_SET_INTRQ_SIZE, 4096, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, &n), 0);
	assert_int_equal(n, 16);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 3, 0, NULL), 0);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_SET_RSS_TABLE_SIZE, 1, 0, 0, NULL), 0);
	uint32_t t = 0;
	assert_int_equal(h_cmd(&c->h, MCP_CMD_GET_RSS_TABLE_OFFSET, 0, 0, 0, &t), 0);
	c->h.bar[t] = 0; /* byte stores into the table */
	assert_int_equal(h_cmd(&c->h, MCP_CMD_SET_RSS_ENABLE, 1, 5, 0, NULL), 0);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_SET_RSS_ENABLE, 1, 9, 0, NULL), 2);
}

/* Multi-TX (§5.9): the send ring is served only between SEND_GO and SEND_STOP. */
static void send_go_stop(void **state)
{
	struct ctx *c = *state;
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "rss_eth", &c->len), 0);
	assert_true(handoff(c, c->img, c->len));
	struct hnic *h = &c->h;
	assert_int_equal(h_bringup(h, 126, 2048, 8), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 1 | 2, 0, NULL), 0);
	uint8_t f[64];
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 9};
	h_frame(f, dst, dst, 0x0800, 64, 1);
	h_send(h, f, 64);
	myrio_sim_step(c->h.w, 5);
	struct sim_nic_stats st = h_nic_stats(h->nic);
	assert_int_equal(st.tx_frames, 0); /* not started */
	h_w32(h, 0x380000, 1);		   /* SEND_GO slice 0 */
	myrio_sim_step(c->h.w, 2);
	st = h_nic_stats(h->nic);
	assert_int_equal(st.tx_frames, 1);
	h_w32(h, 0x3C0000, 1); /* SEND_STOP */
	myrio_sim_step(c->h.w, 2);
	h_send(h, f, 64);
	myrio_sim_step(c->h.w, 5);
	st = h_nic_stats(h->nic);
	assert_int_equal(st.tx_frames, 1);
	/* rss firmware older than 1.4.32 lacks multi-TX: bit 1 refused with ERROR_RANGE */
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "rss_eth@1.4.30", &c->len), 0);
	assert_true(handoff(c, c->img, c->len));
	assert_int_equal(h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_SET_INTRQ_SIZE, 4096, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 1 | 2, 0, NULL), 2);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 1, 0, NULL), 0);
	/* the EEPROM ("ethp") firmware is not an rss image at all */
	sim_nic_inject(h->nic, SIM_FAULT_REBOOT, 0);
	sim_nic_cfg_write(h->nic, 4, 2, 0x0006);
	assert_int_equal(h_cmd(h, MCP_CMD_RESET, 0, 0, 0, NULL), 0);
	assert_int_equal(h_cmd(h, MCP_CMD_ENABLE_RSS_QUEUES, 1, 2, 0, NULL), 1);
}

static void refused_images(void **state)
{
	struct ctx *c = *state;
	const char *before = "1.4.57 -- libmyrio model";
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth", &c->len), 0);
	/* wrong type */
	c->img[FW_HEADER_OFF + 4] = 'M';
	assert_false(handoff(c, c->img, c->len));
	assert_string_equal(running_version(c), before);
	/* version 1.5 */
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth@1.5.2", &c->len), 0);
	assert_false(handoff(c, c->img, c->len));
	/* handoff_id_major differs */
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth", &c->len), 0);
	put_be16(c->img + FW_HEADER_OFF + 164, 2);
	assert_false(handoff(c, c->img, c->len));
	/* capabilities not a superset */
	put_be16(c->img + FW_HEADER_OFF + 164, 1);
	put_be16(c->img + FW_HEADER_OFF + 166, 0x0002);
	assert_false(handoff(c, c->img, c->len));
	/* header pointer outside the image */
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth", &c->len), 0);
	put_be32(c->img + 0x3C, 0x7FFF0);
	assert_false(handoff(c, c->img, c->len));
	assert_string_equal(running_version(c), before);
	struct sim_nic_stats st = h_nic_stats(c->h.nic);
	assert_int_equal(st.handoffs_refused, 5);
	/* a good one still works after all that */
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "ethp", &c->len), 0);
	assert_true(handoff(c, c->img, c->len));
}

static void dummy_rdma_confirms(void **state)
{
	struct ctx *c = *state;
	struct hnic *h = &c->h;
	put_be32(h->mem + H_RESP, 0);
	uint64_t a = h_iova(h, H_RESP);
	uint32_t w[16] = {(uint32_t)(a >> 32), (uint32_t)a, 0xFFFFFFFFu,
			  (uint32_t)(a >> 32), (uint32_t)a, 1};
	for (unsigned i = 0; i < 16; i++)
		h_w32(h, 0xFC01C0 + 4 * i, w[i]);
	myrio_sim_step(c->h.w, 1);
	assert_int_equal(get_be32(h->mem + H_RESP), 0xFFFFFFFFu);
	myrio_sim_step(c->h.w, 3000); /* periodic reads of the target, about one per ms */
	assert_true(h->nic->dummy_rdma_reads >= 2 && h->nic->dummy_rdma_reads <= 4);
	/* disable: no more reads */
	w[5] = 0;
	for (unsigned i = 0; i < 16; i++)
		h_w32(h, 0xFC01C0 + 4 * i, w[i]);
	myrio_sim_step(c->h.w, 1);
	uint64_t n = h->nic->dummy_rdma_reads;
	myrio_sim_step(c->h.w, 3000);
	assert_true(h->nic->dummy_rdma_reads == n);
}

static void reboot_and_detach_restore_power_on(void **state)
{
	struct ctx *c = *state;
	assert_int_equal(sim_fw_image_build(c->img, sizeof(c->img), "eth", &c->len), 0);
	assert_true(handoff(c, c->img, c->len));
	assert_int_equal(h_bringup(&c->h, 126, 2048, 8), 0);
	assert_int_equal(sim_nic_inject(c->h.nic, SIM_FAULT_REBOOT, 0), 0);
	assert_string_equal(running_version(c), "1.4.57 -- libmyrio model");
	uint32_t cmdreg = 0xFFFF;
	sim_nic_cfg_read(c->h.nic, 4, 2, &cmdreg);
	assert_int_equal(cmdreg & 4, 0); /* what the driver's watchdog looks at (§8.5) */
	sim_nic_cfg_write(c->h.nic, 4, 2, 0x0006);
	/* the NIC answers again, from scratch */
	assert_int_equal(h_bringup(&c->h, 126, 2048, 8), 0);
	/* detach: power-on state, DMA registrations gone, a new driver may attach */
	assert_true(handoff(c, c->img, c->len));
	sim_nic_detach(c->h.nic);
	assert_string_equal(running_version(c), "1.4.57 -- libmyrio model");
	assert_int_equal(sim_nic_attach(c->h.nic), 0);
	c->h.bar = sim_nic_bar0(c->h.nic); /* every attach has a BAR0 of its own */
	assert_int_equal(sim_nic_attach(c->h.nic), -EBUSY);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_RESET, 0, 0, 0, NULL), -1); /* response memory unmapped */
	struct sim_nic_stats st = h_nic_stats(c->h.nic);
	assert_true(st.dma_faults >= 1);
	assert_int_equal(sim_nic_dma_map(c->h.nic, c->h.iova, c->h.mem, H_MEM_LEN), 0);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_RESET, 0, 0, 0, NULL), -1); /* bus master off again */
	sim_nic_cfg_write(c->h.nic, 4, 2, 0x0006);
	assert_int_equal(h_cmd(&c->h, MCP_CMD_RESET, 0, 0, 0, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(accepted_and_adopted, setup, teardown),
	    cmocka_unit_test_setup_teardown(rss_image_answers_rss_commands, setup, teardown),
	    cmocka_unit_test_setup_teardown(refused_images, setup, teardown),
	    cmocka_unit_test_setup_teardown(send_go_stop, setup, teardown),
	    cmocka_unit_test_setup_teardown(dummy_rdma_confirms, setup, teardown),
	    cmocka_unit_test_setup_teardown(reboot_and_detach_restore_power_on, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
