/* SPDX-License-Identifier: BSD-3-Clause */
/* One firmware ABI: the model keeps its own statement of the firmware's side on purpose
 * (it plays the firmware's author and never includes the driver); this test holds it to
 * the driver's src/mcp/mcp_abi.h constant by constant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>

#include "mcp/mcp_abi.h"
#include "sim/fw_abi.h"
#include "sim/fw_image.h"
#include "sim/nic.h"
#include "sim/tx.h"

struct abi_pair {
	const char *model, *driver;
	uint64_t model_val, driver_val;
};
#define PAIR(m, d)                                                                                 \
	{                                                                                          \
#m, #d, (uint64_t)(m), (uint64_t)(d)                                               \
	}

static const struct abi_pair pairs[] = {
    PAIR(SIM_CMD_RESET, MCP_CMD_RESET),
    PAIR(SIM_CMD_GET_MCP_VERSION, MCP_CMD_GET_MCP_VERSION),
    PAIR(SIM_CMD_SET_INTRQ_DMA, MCP_CMD_SET_INTRQ_DMA),
    PAIR(SIM_CMD_SET_BIG_BUFFER_SIZE, MCP_CMD_SET_BIG_BUFFER_SIZE),
    PAIR(SIM_CMD_SET_SMALL_BUFFER_SIZE, MCP_CMD_SET_SMALL_BUFFER_SIZE),
    PAIR(SIM_CMD_GET_SEND_OFFSET, MCP_CMD_GET_SEND_OFFSET),
    PAIR(SIM_CMD_GET_SMALL_RX_OFFSET, MCP_CMD_GET_SMALL_RX_OFFSET),
    PAIR(SIM_CMD_GET_BIG_RX_OFFSET, MCP_CMD_GET_BIG_RX_OFFSET),
    PAIR(SIM_CMD_GET_IRQ_ACK_OFFSET, MCP_CMD_GET_IRQ_ACK_OFFSET),
    PAIR(SIM_CMD_GET_IRQ_DEASSERT_OFFSET, MCP_CMD_GET_IRQ_DEASSERT_OFFSET),
    PAIR(SIM_CMD_GET_SEND_RING_SIZE, MCP_CMD_GET_SEND_RING_SIZE),
    PAIR(SIM_CMD_GET_RX_RING_SIZE, MCP_CMD_GET_RX_RING_SIZE),
    PAIR(SIM_CMD_SET_INTRQ_SIZE, MCP_CMD_SET_INTRQ_SIZE),
    PAIR(SIM_CMD_ETHERNET_UP, MCP_CMD_ETHERNET_UP),
    PAIR(SIM_CMD_ETHERNET_DOWN, MCP_CMD_ETHERNET_DOWN),
    PAIR(SIM_CMD_SET_MTU, MCP_CMD_SET_MTU),
    PAIR(SIM_CMD_GET_INTR_COAL_DELAY_OFFSET, MCP_CMD_GET_INTR_COAL_DELAY_OFFSET),
    PAIR(SIM_CMD_SET_STATS_INTERVAL, MCP_CMD_SET_STATS_INTERVAL),
    PAIR(SIM_CMD_SET_STATS_DMA_OBSOLETE, MCP_CMD_SET_STATS_DMA_OBSOLETE),
    PAIR(SIM_CMD_ENABLE_PROMISC, MCP_CMD_ENABLE_PROMISC),
    PAIR(SIM_CMD_DISABLE_PROMISC, MCP_CMD_DISABLE_PROMISC),
    PAIR(SIM_CMD_SET_MAC_ADDRESS, MCP_CMD_SET_MAC_ADDRESS),
    PAIR(SIM_CMD_ENABLE_FLOW_CONTROL, MCP_CMD_ENABLE_FLOW_CONTROL),
    PAIR(SIM_CMD_DISABLE_FLOW_CONTROL, MCP_CMD_DISABLE_FLOW_CONTROL),
    PAIR(SIM_CMD_DMA_TEST, MCP_CMD_DMA_TEST),
    PAIR(SIM_CMD_ENABLE_ALLMULTI, MCP_CMD_ENABLE_ALLMULTI),
    PAIR(SIM_CMD_DISABLE_ALLMULTI, MCP_CMD_DISABLE_ALLMULTI),
    PAIR(SIM_CMD_JOIN_MULTICAST_GROUP, MCP_CMD_JOIN_MULTICAST_GROUP),
    PAIR(SIM_CMD_LEAVE_MULTICAST_GROUP, MCP_CMD_LEAVE_MULTICAST_GROUP),
    PAIR(SIM_CMD_LEAVE_ALL_MULTICAST_GROUPS, MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS),
    PAIR(SIM_CMD_SET_STATS_DMA_V2, MCP_CMD_SET_STATS_DMA_V2),
    PAIR(SIM_CMD_UNALIGNED_TEST, MCP_CMD_UNALIGNED_TEST),
    PAIR(SIM_CMD_ALWAYS_USE_N_BIG_BUFFERS, MCP_CMD_ALWAYS_USE_N_BIG_BUFFERS),
    PAIR(SIM_CMD_GET_MAX_RSS_QUEUES, MCP_CMD_GET_MAX_RSS_QUEUES),
    PAIR(SIM_CMD_ENABLE_RSS_QUEUES, MCP_CMD_ENABLE_RSS_QUEUES),
    PAIR(SIM_CMD_GET_RSS_TABLE_OFFSET, MCP_CMD_GET_RSS_TABLE_OFFSET),
    PAIR(SIM_CMD_SET_RSS_TABLE_SIZE, MCP_CMD_SET_RSS_TABLE_SIZE),
    PAIR(SIM_CMD_GET_RSS_KEY_OFFSET, MCP_CMD_GET_RSS_KEY_OFFSET),
    PAIR(SIM_CMD_RSS_KEY_UPDATED, MCP_CMD_RSS_KEY_UPDATED),
    PAIR(SIM_CMD_SET_RSS_ENABLE, MCP_CMD_SET_RSS_ENABLE),
    PAIR(SIM_CMD_GET_MAX_TSO6_HDR_SIZE, MCP_CMD_GET_MAX_TSO6_HDR_SIZE),
    PAIR(SIM_CMD_SET_TSO_MODE, MCP_CMD_SET_TSO_MODE),
    PAIR(SIM_CMD_I2C_READ, MCP_CMD_I2C_READ),
    PAIR(SIM_CMD_I2C_BYTE, MCP_CMD_I2C_BYTE),
    PAIR(SIM_CMD_SET_RSS_MCP_SLOT_TYPE, MCP_CMD_SET_RSS_MCP_SLOT_TYPE),
    PAIR(SIM_CMD_SET_THROTTLE_FACTOR, MCP_CMD_SET_THROTTLE_FACTOR),
    PAIR(SIM_CMD_RELAX_RXBUFFER_ALIGNMENT, MCP_CMD_RELAX_RXBUFFER_ALIGNMENT),
    PAIR(SIM_HDR_PTR_OFF, MCP_HEADER_PTR_OFFSET),
    PAIR(SIM_STAGING_OFF, MCP_FW_STAGING_OFFSET),
    PAIR(SIM_SRAM_SIZE, MCP_SRAM_SIZE_DEFAULT),
    PAIR(SIM_STRINGS_OFF, MCP_STRING_SPECS_DEFAULT),
    PAIR(SIM_STRINGS_LEN, MCP_STRING_SPECS_LEN),
    PAIR(SIM_CMD_OFF, MCP_CMD_OFFSET),
    PAIR(SIM_HANDOFF_OFF, MCP_BOOT_HANDOFF_OFFSET),
    PAIR(SIM_DUMMY_RDMA_OFF, MCP_DUMMY_RDMA_OFFSET),
    PAIR(SIM_BAR0_LEN, MCP_BAR0_MIN_LEN),
    PAIR(SIM_OK, MCP_OK),
    PAIR(SIM_ERR_UNKNOWN, MCP_ERR_UNKNOWN),
    PAIR(SIM_ERR_RANGE, MCP_ERR_RANGE),
    PAIR(SIM_ERR_BUSY, MCP_ERR_BUSY),
    PAIR(SIM_ERR_MULTICAST, MCP_ERR_MULTICAST),
    PAIR(SIM_ERR_UNALIGNED, MCP_ERR_UNALIGNED),
    PAIR(FW_HDR_LENGTH, MCP_HDR_OFF_LENGTH),
    PAIR(FW_HDR_TYPE, MCP_HDR_OFF_TYPE),
    PAIR(FW_HDR_VERSION, MCP_HDR_OFF_VERSION),
    PAIR(FW_HDR_SRAM_SIZE, MCP_HDR_OFF_SRAM_SIZE),
    PAIR(FW_HDR_STRING_SPECS, MCP_HDR_OFF_STRING_SPECS),
    PAIR(FW_HDR_STRING_SPECS_LEN, MCP_HDR_OFF_STRING_SPECS_LEN),
    PAIR(FW_HDR_MCP_INDEX, MCP_HDR_OFF_MCP_INDEX),
    PAIR(FW_HDR_HANDOFF_MAJOR, MCP_HDR_OFF_HANDOFF_ID_MAJOR),
    PAIR(FW_HDR_HANDOFF_CAPS, MCP_HDR_OFF_HANDOFF_ID_CAPS),
    PAIR(FW_HDR_SIZE, MCP_HDR_FULL_LEN),
    PAIR(FW_TYPE_ETH, MCP_TYPE_ETH),
    PAIR(TXF_SMALL, MCP_TX_FLAG_SMALL),
    PAIR(TXF_FIRST, MCP_TX_FLAG_FIRST),
    PAIR(TXF_ALIGN_ODD, MCP_TX_FLAG_ALIGN_ODD),
    PAIR(TXF_CKSUM, MCP_TX_FLAG_CKSUM),
    PAIR(TXF_NO_TSO, MCP_TX_FLAG_NO_TSO),
    PAIR(TXF_TSO_HDR, MCP_TX_FLAG_TSO_HDR),
    PAIR(TXF_TSO_LAST, MCP_TX_FLAG_TSO_LAST),
    PAIR(TXF_TSO_CHOP, MCP_TX_FLAG_TSO_CHOP),
    PAIR(TXF_TSO_PLD, MCP_TX_FLAG_TSO_PLD),
    PAIR(SIM_TX_BOUNDARY_ALIGNED, MCP_TX_BOUNDARY_ALIGNED),
    PAIR(SIM_TX_BOUNDARY_UNALIGNED, MCP_TX_BOUNDARY_UNALIGNED),
    PAIR(SIM_BLOCK_CONFIRM_HIGH, MCP_BLOCK_CONFIRM_HIGH),
    PAIR(SIM_BLOCK_CONFIRM_LOW, MCP_BLOCK_CONFIRM_LOW),
    PAIR(SIM_BLOCK_CONFIRM_DATA, MCP_BLOCK_CONFIRM_DATA),
    PAIR(SIM_HANDOFF_SRC, MCP_HANDOFF_SRC),
    PAIR(SIM_HANDOFF_LEN, MCP_HANDOFF_LEN),
    PAIR(SIM_HANDOFF_DST, MCP_HANDOFF_DST),
    PAIR(SIM_DUMMY_RDMA_ADDR_HIGH, MCP_DUMMY_RDMA_ADDR_HIGH),
    PAIR(SIM_DUMMY_RDMA_ADDR_LOW, MCP_DUMMY_RDMA_ADDR_LOW),
    PAIR(SIM_DUMMY_RDMA_ENABLE, MCP_DUMMY_RDMA_ENABLE),
    PAIR(1u << SIM_DMA_TEST_READ_SHIFT, MCP_DMA_TEST_READ(1)),
    PAIR(SIM_DMA_TEST_WRITE_MASK, MCP_DMA_TEST_WRITE(0xFFFFu)),
};

static void model_and_driver_state_the_same_abi(void **state)
{
	(void)state;
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct abi_pair *p = &pairs[i];
		if (p->model_val != p->driver_val) {
			printf("%s = 0x%llx but %s = 0x%llx\n", p->model,
			       (unsigned long long)p->model_val, p->driver,
			       (unsigned long long)p->driver_val);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* The layouts both sides read: the driver's structs against the offsets the model uses. */
static void shared_layouts_agree(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct mcp_cmd_block), 64);
	assert_int_equal(offsetof(struct mcp_cmd_block, resp_addr_high), 16);
	assert_int_equal(offsetof(struct mcp_cmd_block, resp_addr_low), 20);
	assert_int_equal(sizeof(struct mcp_irq_data), 64);
	assert_int_equal(offsetof(struct mcp_irq_data, send_done_count), 24);
	assert_int_equal(offsetof(struct mcp_irq_data, link_up), 28);
	assert_int_equal(offsetof(struct mcp_irq_data, rdma_tags_available), 56);
	assert_int_equal(offsetof(struct mcp_irq_data, valid), 63);
	assert_int_equal(sizeof(struct mcp_tx_desc), 16);
	assert_int_equal(offsetof(struct mcp_tx_desc, flags), 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(model_and_driver_state_the_same_abi),
	    cmocka_unit_test(shared_layouts_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
