/* SPDX-License-Identifier: BSD-3-Clause */
/* The Myri-10G "MCP" host interface, ABI 1.4: BAR0 offsets, commands, result codes, flags
 * and the layouts of everything shared with the NIC. Every multi-byte field is big-endian
 * (spec §0). Section numbers refer to docs/myri10ge-interface.md.
 */
#ifndef MYRIO_MCP_ABI_H
#define MYRIO_MCP_ABI_H

#include <stdint.h>

/* BAR0 map (§1.3) */
#define MCP_HEADER_PTR_OFFSET 0x3cu
#define MCP_FW_STAGING_OFFSET 0x100000u /* firmware staging area (§2.2) */
#define MCP_STRING_SPECS_DEFAULT 0x1dfe00u
#define MCP_STRING_SPECS_LEN 256u
#define MCP_SRAM_SIZE_DEFAULT 0x1dff00u
#define MCP_CMD_OFFSET 0xf80000u	  /* command block (§3.1) */
#define MCP_BOOT_HANDOFF_OFFSET 0xfc0000u /* §2.4 */
#define MCP_DUMMY_RDMA_OFFSET 0xfc01c0u	  /* §2.6 */
#define MCP_BAR0_MIN_LEN 0x1000000u	  /* 16 MiB (§1.2) */

/* Firmware header (§1.5) */
#define MCP_TYPE_ETH 0x45544820u /* "ETH " */
#define MCP_HDR_MIN_LEN 152u	 /* fields up to offset 151 are always present */
#define MCP_HDR_FULL_LEN 192u
#define MCP_HDR_OFF_LENGTH 0
#define MCP_HDR_OFF_TYPE 4
#define MCP_HDR_OFF_VERSION 8
#define MCP_HDR_VERSION_LEN 128
#define MCP_HDR_OFF_SRAM_SIZE 140
#define MCP_HDR_OFF_STRING_SPECS 144
#define MCP_HDR_OFF_STRING_SPECS_LEN 148
#define MCP_HDR_OFF_MCP_INDEX 152
#define MCP_HDR_OFF_HANDOFF_ID_MAJOR 164
#define MCP_HDR_OFF_HANDOFF_ID_CAPS 166

/* Commands (§3.3) */
enum mcp_cmd_op {
	MCP_CMD_NONE = 0,
	MCP_CMD_RESET = 1,
	MCP_CMD_GET_MCP_VERSION = 2,
	MCP_CMD_SET_INTRQ_DMA = 3,
	MCP_CMD_SET_BIG_BUFFER_SIZE = 4,
	MCP_CMD_SET_SMALL_BUFFER_SIZE = 5,
	MCP_CMD_GET_SEND_OFFSET = 6,
	MCP_CMD_GET_SMALL_RX_OFFSET = 7,
	MCP_CMD_GET_BIG_RX_OFFSET = 8,
	MCP_CMD_GET_IRQ_ACK_OFFSET = 9,
	MCP_CMD_GET_IRQ_DEASSERT_OFFSET = 10,
	MCP_CMD_GET_SEND_RING_SIZE = 11,
	MCP_CMD_GET_RX_RING_SIZE = 12,
	MCP_CMD_SET_INTRQ_SIZE = 13,
	MCP_CMD_ETHERNET_UP = 14,
	MCP_CMD_ETHERNET_DOWN = 15,
	MCP_CMD_SET_MTU = 16,
	MCP_CMD_GET_INTR_COAL_DELAY_OFFSET = 17,
	MCP_CMD_SET_STATS_INTERVAL = 18,
	MCP_CMD_SET_STATS_DMA_OBSOLETE = 19,
	MCP_CMD_ENABLE_PROMISC = 20,
	MCP_CMD_DISABLE_PROMISC = 21,
	MCP_CMD_SET_MAC_ADDRESS = 22,
	MCP_CMD_ENABLE_FLOW_CONTROL = 23,
	MCP_CMD_DISABLE_FLOW_CONTROL = 24,
	MCP_CMD_DMA_TEST = 25,
	MCP_CMD_ENABLE_ALLMULTI = 26,
	MCP_CMD_DISABLE_ALLMULTI = 27,
	MCP_CMD_JOIN_MULTICAST_GROUP = 28,
	MCP_CMD_LEAVE_MULTICAST_GROUP = 29,
	MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS = 30,
	MCP_CMD_SET_STATS_DMA_V2 = 31,
	MCP_CMD_UNALIGNED_TEST = 32,
	MCP_CMD_UNALIGNED_STATUS = 33,
	MCP_CMD_ALWAYS_USE_N_BIG_BUFFERS = 34,
	MCP_CMD_GET_MAX_RSS_QUEUES = 35,
	MCP_CMD_ENABLE_RSS_QUEUES = 36,
	MCP_CMD_GET_RSS_TABLE_OFFSET = 39,
	MCP_CMD_SET_RSS_TABLE_SIZE = 40,
	MCP_CMD_GET_RSS_KEY_OFFSET = 41,
	MCP_CMD_RSS_KEY_UPDATED = 42,
	MCP_CMD_SET_RSS_ENABLE = 43,
	MCP_CMD_GET_MAX_TSO6_HDR_SIZE = 44,
	MCP_CMD_SET_TSO_MODE = 45,
	MCP_CMD_I2C_READ = 48,
	MCP_CMD_I2C_BYTE = 49,
	MCP_CMD_SET_RSS_MCP_SLOT_TYPE = 52,
	MCP_CMD_SET_THROTTLE_FACTOR = 53,
	MCP_CMD_DCA_ENABLE = 56,
	MCP_CMD_RELAX_RXBUFFER_ALIGNMENT = 64,
};

/* Result codes (§3.2) */
enum mcp_result {
	MCP_OK = 0,
	MCP_ERR_UNKNOWN = 1,
	MCP_ERR_RANGE = 2,
	MCP_ERR_BUSY = 3,
	MCP_ERR_MULTICAST = 9, /* JOIN: filter full; LEAVE: not joined */
	MCP_ERR_UNALIGNED = 10,
	MCP_RESULT_PENDING = 0xffffffffu, /* pre-set by the host before a command */
};

#define MCP_INTRQ_NO_STRICT_SIZE_CHECK 0x80000000u
#define MCP_MAX_MTU 9400u	    /* largest SET_MTU frame length */
#define MCP_RX_PAD 2u		    /* frame written 2 bytes after the rx buffer address (§4.4) */
#define MCP_RX_SMALL_NO_CROSS 4096u /* small rx buffers never cross a 4 KiB boundary (§4.4) */

#define MCP_RDMA_TAGS 15u /* the send engine's DMA-read tags (§6.1) */

/* Send descriptors never cross a multiple of tx_boundary (§2.1, §5.4): 4 KiB when the
 * chipset completes reads aligned (MRRS 4096 and UNALIGNED_TEST passes), else 2 KiB (the
 * "p" images). */
#define MCP_TX_BOUNDARY_ALIGNED 4096u
#define MCP_TX_BOUNDARY_UNALIGNED 2048u

/* DMA_TEST's data2 (§3.3, §8.2): lengths of a read test, a write test, both at once. */
#define MCP_DMA_TEST_READ(len) ((uint32_t)(len) << 16)
#define MCP_DMA_TEST_WRITE(len) ((uint32_t)(len))
#define MCP_DMA_TEST_READ_WRITE(len) (MCP_DMA_TEST_READ(len) | MCP_DMA_TEST_WRITE(len))

/* The boot handoff (§2.4) and dummy-RDMA (§2.6) blocks: 16 BE32 words written at
 * MCP_BOOT_HANDOFF_OFFSET / MCP_DUMMY_RDMA_OFFSET, word 15 last. The NIC confirms by
 * DMA-writing the confirm-data word to the confirm address. */
enum mcp_block_word {
	MCP_BLOCK_CONFIRM_HIGH = 0,
	MCP_BLOCK_CONFIRM_LOW = 1,
	MCP_BLOCK_CONFIRM_DATA = 2,
	MCP_HANDOFF_SRC = 3,  /* SRAM address of the staged image, past its first 8 bytes */
	MCP_HANDOFF_LEN = 4,  /* bytes to copy */
	MCP_HANDOFF_DST = 5,  /* SRAM address to copy to */
	MCP_HANDOFF_JUMP = 6, /* entry point: 0 */
	MCP_DUMMY_RDMA_ADDR_HIGH = 3,
	MCP_DUMMY_RDMA_ADDR_LOW = 4,
	MCP_DUMMY_RDMA_ENABLE = 5,
};
#define MCP_BLOCK_CONFIRM_VALUE 0xffffffffu
#define MCP_HANDOFF_SKIP 8u /* early bootloaders do not unprotect SRAM 0..7 (§2.4) */

/* Command block (§3.1): 16 BE32 words written at MCP_CMD_OFFSET, word 15 last. */
struct mcp_cmd_block {
	uint32_t cmd, data0, data1, data2;
	uint32_t resp_addr_high, resp_addr_low;
	uint32_t pad[10];
};
_Static_assert(sizeof(struct mcp_cmd_block) == 64, "command block is 64 bytes");

/* Response (§3.1), DMA-written by the NIC. */
struct mcp_cmd_response {
	uint32_t data;
	uint32_t result;
};

/* Receive descriptor (§4.2). A low word of all ones means "not valid yet". */
struct mcp_rx_desc {
	uint32_t addr_high;
	uint32_t addr_low;
};
#define MCP_RX_DESC_INVALID 0xffffffffu

/* Completion entry (§4.6). */
struct mcp_slot {
	uint16_t checksum; /* BE ones'-complement sum of frame bytes [14, L) */
	uint16_t length;   /* BE; 0 = empty */
};

/* Send descriptor (§5.2). Bytes 12..15 are the commit word (§5.7). */
struct mcp_tx_desc {
	uint32_t addr_high;
	uint32_t addr_low;
	uint16_t pseudo_hdr_offset; /* BE */
	uint16_t length;	    /* BE */
	uint8_t pad;
	uint8_t rdma_count;
	uint8_t cksum_offset;
	uint8_t flags;
};
_Static_assert(sizeof(struct mcp_tx_desc) == 16, "send descriptor is 16 bytes");

/* Send flags (§5.3), non-TSO meanings. */
#define MCP_TX_FLAG_SMALL 0x01u
#define MCP_TX_FLAG_FIRST 0x02u
#define MCP_TX_FLAG_ALIGN_ODD 0x04u
#define MCP_TX_FLAG_CKSUM 0x08u
#define MCP_TX_FLAG_NO_TSO 0x10u
/* TSO meanings of the same bits (§5.3, §5.6); FIRST and ALIGN_ODD keep theirs. */
#define MCP_TX_FLAG_TSO_HDR 0x01u
#define MCP_TX_FLAG_TSO_LAST 0x08u
#define MCP_TX_FLAG_TSO_CHOP 0x10u
#define MCP_TX_FLAG_TSO_PLD 0x20u
#define MCP_TX_SMALL_SIZE 1520u
#define MCP_TX_MAX_DESC 12u	      /* per non-TSO frame (§5.4) */
#define MCP_TX_MAX_DESC_TSO 64u	      /* per TSO chain (§5.6) */
#define MCP_TX_TSO_MAX_PAYLOAD 65536u /* bytes behind the headers of one TSO request */
#define MCP_TX_TSO_MAX_HDR 255u	      /* headers: the TCP offset must fit cksum_offset (§5.2) */
#define MCP_TX_TSO_MAX_MSS 9000u
#define MCP_TX_MIN_FRAME 60u /* the NIC does not pad (§5.3) */
#define MCP_TX_MAX_CSUM_START 255u
#define MCP_TX_MAX_CSUM_FIELD 127u

/* Status block (§6.1), 64 bytes, DMA-written by the NIC, valid last. */
struct mcp_irq_data {
	uint32_t future_use0;
	uint32_t dropped_pause;
	uint32_t dropped_unicast_filtered;
	uint32_t dropped_bad_crc32;
	uint32_t dropped_bad_phy;
	uint32_t dropped_multicast_filtered;
	uint32_t send_done_count;
	uint32_t link_up;
	uint32_t dropped_link_overflow;
	uint32_t dropped_link_error_or_filtered;
	uint32_t dropped_runt;
	uint32_t dropped_overrun;
	uint32_t dropped_no_small_buffer;
	uint32_t dropped_no_big_buffer;
	uint32_t rdma_tags_available; /* MCP_RDMA_TAGS after a reset; a lost one never returns */
	uint8_t tx_stopped;
	uint8_t link_down;
	uint8_t stats_updated;
	uint8_t valid;
};
_Static_assert(sizeof(struct mcp_irq_data) == 64, "status block is 64 bytes");

#define MCP_VALID_RX 0x1u  /* receive event, rx token handed to the host (§6.3) */
#define MCP_VALID_TX 0x2u  /* send completions */
#define MCP_CLAIM_VALUE 3u /* written to claim0/claim1 (§6.5) */
/* Multiple TX queues (§5.9): slice s's send ring is started and stopped by a store here. */
#define MCP_SEND_GO_OFF 0x380000u
#define MCP_SEND_STOP_OFF 0x3C0000u
#define MCP_DOORBELL_STRIDE 64u
/* ENABLE_RSS_QUEUES d1 (§3.3 #36), SET_RSS_ENABLE d1 (§7.3) */
#define MCP_RSS_VECTOR_PER_SLICE 1u
#define MCP_RSS_MULTI_TX 2u
#define MCP_RSS_HASH_IPV4 1u
#define MCP_RSS_HASH_TCP_IPV4 2u
#define MCP_RSS_HASH_BOTH 3u
#define MCP_RSS_HASH_SRC_PORT 4u
#define MCP_RSS_HASH_SRC_DST_PORT 5u

#endif
