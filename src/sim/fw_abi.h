/* SPDX-License-Identifier: BSD-3-Clause */
/* The firmware's side of the host interface, as the model (playing the firmware's author)
 * states it for itself: command opcodes, the boot handoff and dummy-RDMA blocks, DMA-test
 * arguments and tx_boundary choices. BAR0 offsets, results and status are in sim/nic.h,
 * send flags in sim/tx.h, header offsets in sim/fw_image.h. A copy on purpose: the model
 * never includes the driver, and test_fw_abi checks constant by constant that the two
 * agree with src/mcp/mcp_abi.h. Sections: docs/myri10ge-interface.md. */
#ifndef MYRIO_SIM_FW_ABI_H
#define MYRIO_SIM_FW_ABI_H

/* Commands the model answers (§3.3); any other opcode gets UNKNOWN. */
enum {
	SIM_CMD_RESET = 1,
	SIM_CMD_GET_MCP_VERSION = 2,
	SIM_CMD_SET_INTRQ_DMA = 3,
	SIM_CMD_SET_BIG_BUFFER_SIZE = 4,
	SIM_CMD_SET_SMALL_BUFFER_SIZE = 5,
	SIM_CMD_GET_SEND_OFFSET = 6,
	SIM_CMD_GET_SMALL_RX_OFFSET = 7,
	SIM_CMD_GET_BIG_RX_OFFSET = 8,
	SIM_CMD_GET_IRQ_ACK_OFFSET = 9,
	SIM_CMD_GET_IRQ_DEASSERT_OFFSET = 10,
	SIM_CMD_GET_SEND_RING_SIZE = 11,
	SIM_CMD_GET_RX_RING_SIZE = 12,
	SIM_CMD_SET_INTRQ_SIZE = 13,
	SIM_CMD_ETHERNET_UP = 14,
	SIM_CMD_ETHERNET_DOWN = 15,
	SIM_CMD_SET_MTU = 16,
	SIM_CMD_GET_INTR_COAL_DELAY_OFFSET = 17,
	SIM_CMD_SET_STATS_INTERVAL = 18,
	SIM_CMD_SET_STATS_DMA_OBSOLETE = 19,
	SIM_CMD_ENABLE_PROMISC = 20,
	SIM_CMD_DISABLE_PROMISC = 21,
	SIM_CMD_SET_MAC_ADDRESS = 22,
	SIM_CMD_ENABLE_FLOW_CONTROL = 23,
	SIM_CMD_DISABLE_FLOW_CONTROL = 24,
	SIM_CMD_DMA_TEST = 25,
	SIM_CMD_ENABLE_ALLMULTI = 26,
	SIM_CMD_DISABLE_ALLMULTI = 27,
	SIM_CMD_JOIN_MULTICAST_GROUP = 28,
	SIM_CMD_LEAVE_MULTICAST_GROUP = 29,
	SIM_CMD_LEAVE_ALL_MULTICAST_GROUPS = 30,
	SIM_CMD_SET_STATS_DMA_V2 = 31,
	SIM_CMD_UNALIGNED_TEST = 32,
	SIM_CMD_ALWAYS_USE_N_BIG_BUFFERS = 34,
	SIM_CMD_GET_MAX_RSS_QUEUES = 35,
	SIM_CMD_ENABLE_RSS_QUEUES = 36,
	SIM_CMD_GET_RSS_TABLE_OFFSET = 39,
	SIM_CMD_SET_RSS_TABLE_SIZE = 40,
	SIM_CMD_GET_RSS_KEY_OFFSET = 41,
	SIM_CMD_RSS_KEY_UPDATED = 42,
	SIM_CMD_SET_RSS_ENABLE = 43,
	SIM_CMD_GET_MAX_TSO6_HDR_SIZE = 44,
	SIM_CMD_SET_TSO_MODE = 45,
	SIM_CMD_I2C_READ = 48,
	SIM_CMD_I2C_BYTE = 49,
	SIM_CMD_SET_RSS_MCP_SLOT_TYPE = 52,
	SIM_CMD_SET_THROTTLE_FACTOR = 53,
	SIM_CMD_RELAX_RXBUFFER_ALIGNMENT = 64,
};

/* DMA_TEST / UNALIGNED_TEST data2 (§3.3): read length in the high half, write in the low. */
#define SIM_DMA_TEST_READ_SHIFT 16u
#define SIM_DMA_TEST_WRITE_MASK 0xFFFFu

/* tx_boundary of an aligned image and of a "p" (unaligned-completion) image (§2.1). */
#define SIM_TX_BOUNDARY_ALIGNED 4096u
#define SIM_TX_BOUNDARY_UNALIGNED 2048u

/* Words of the handoff (§2.4) and dummy-RDMA (§2.6) blocks; word 15 triggers. */
enum {
	SIM_BLOCK_CONFIRM_HIGH = 0,
	SIM_BLOCK_CONFIRM_LOW = 1,
	SIM_BLOCK_CONFIRM_DATA = 2, /* DMA-written back to the confirm address */
	SIM_HANDOFF_SRC = 3,
	SIM_HANDOFF_LEN = 4,
	SIM_HANDOFF_DST = 5,
	SIM_DUMMY_RDMA_ADDR_HIGH = 3,
	SIM_DUMMY_RDMA_ADDR_LOW = 4,
	SIM_DUMMY_RDMA_ENABLE = 5,
};

#endif
