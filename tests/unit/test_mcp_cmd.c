/* SPDX-License-Identifier: BSD-3-Clause */
/* Command channel (§3.1): block layout, result pre-set, answers, error codes, timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_nic.h"
#include "mcp/cmd.h"

struct ctx {
	struct fake_nic *f;
	struct mcp_cmd_response *resp;
	struct mcp_cmd_chan c;
};

static int setup(void **state)
{
	struct ctx *x = calloc(1, sizeof(*x));
	x->f = fake_nic_new();
	x->resp = aligned_alloc(64, 64);
	memset(x->resp, 0, 64);
	mcp_cmd_init(&x->c, &x->f->bus, x->resp, (uint64_t)(uintptr_t)x->resp);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *x = *state;
	fake_nic_free(x->f);
	free(x->resp);
	free(x);
	return 0;
}

static void block_layout_is_big_endian(void **state)
{
	struct ctx *x = *state;
	struct mcp_cmd_block b;
	mcp_cmd_block_build(&b, 22, 0x0060dd43, 0x2107, 0xabcdef01, 0x123456789abcdef0ull);
	const uint8_t *p = (const uint8_t *)&b;
	const uint8_t want[24] = {0, 0, 0, 22, 0x00, 0x60, 0xdd, 0x43, 0, 0, 0x21, 0x07,
				  0xab, 0xcd, 0xef, 0x01, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0};
	assert_memory_equal(p, want, 24);
	for (int i = 24; i < 64; i++)
		assert_int_equal(p[i], 0);
	/* The channel writes exactly that block, every word of it. */
	uint32_t out = 0;
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_SET_MAC_ADDRESS, 0x0060dd43, 0x2107, 7, &out), 0);
	assert_false(x->f->block_incomplete);
	assert_false(x->f->result_not_preset);
	mcp_cmd_block_build(&b, MCP_CMD_SET_MAC_ADDRESS, 0x0060dd43, 0x2107, 7,
			    (uint64_t)(uintptr_t)x->resp);
	assert_memory_equal(x->f->last_block, &b, 64);
}

static void answer_data_returned(void **state)
{
	struct ctx *x = *state;
	uint32_t out = 0;
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, &out), 0);
	assert_int_equal(out, 512 * 8);
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_GET_SEND_OFFSET, 0, 0, 0, &out), 0);
	assert_int_equal(out, FAKE_SEND_OFF);
	assert_int_equal(x->f->nops, 2);
	assert_int_equal(x->f->ops[0], MCP_CMD_GET_RX_RING_SIZE);
	/* NULL out is allowed */
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_SET_MTU, 1518, 0, 0, NULL), 0);
	assert_int_equal(x->f->d0[2], 1518);
}

static void result_codes_map_to_errno(void **state)
{
	struct ctx *x = *state;
	const struct {
		uint32_t result;
		int err;
	} map[] = {{MCP_ERR_UNKNOWN, -ENOSYS}, {MCP_ERR_RANGE, -ERANGE}, {MCP_ERR_BUSY, -EBUSY},
		   {MCP_ERR_UNALIGNED, -E2BIG},  {MCP_ERR_MULTICAST, -ENOSPC}, {8, -ENXIO},
		   {14, -ENXIO}};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		x->f->fail_op = MCP_CMD_SET_MTU;
		x->f->fail_result = map[i].result;
		assert_int_equal(mcp_cmd(&x->c, MCP_CMD_SET_MTU, 99999, 0, 0, NULL), map[i].err);
	}
	/* an opcode the firmware does not know */
	assert_int_equal(mcp_cmd(&x->c, 63, 0, 0, 0, NULL), -ENOSYS);
}

static void silent_nic_times_out(void **state)
{
	struct ctx *x = *state;
	x->f->mute = true;
	x->c.timeout_us = 20000;
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_RESET, 0, 0, 0, NULL), -ETIMEDOUT);
	/* It waited the timeout, no more (bounded, never a hang). */
	assert_true(x->f->delay_total_us >= 20000);
	assert_true(x->f->delay_total_us <= 21000);
	/* and the channel works again once the NIC answers */
	x->f->mute = false;
	uint32_t out;
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_GET_RX_RING_SIZE, 0, 0, 0, &out), 0);
	assert_int_equal(out, 4096);
}

/* On a loaded host each sleep lasts longer than asked (here ten times): the timeout is
 * measured on the bus's clock, not as the sum of the sleeps asked for. */
static void timeout_measured_on_the_clock(void **state)
{
	struct ctx *x = *state;
	x->f->mute = true;
	x->f->stretch = 10;
	x->c.timeout_us = 20000;
	uint64_t t0 = x->f->clock_ns;
	assert_int_equal(mcp_cmd(&x->c, MCP_CMD_RESET, 0, 0, 0, NULL), -ETIMEDOUT);
	uint64_t took = x->f->clock_ns - t0;
	/* the timeout, and at most one stretched 1 ms sleep past it */
	assert_true(took >= 20000000u);
	assert_true(took <= 20000000u + 10 * 1000000u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(block_layout_is_big_endian, setup, teardown),
		cmocka_unit_test_setup_teardown(answer_data_returned, setup, teardown),
		cmocka_unit_test_setup_teardown(result_codes_map_to_errno, setup, teardown),
		cmocka_unit_test_setup_teardown(silent_nic_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(timeout_measured_on_the_clock, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
