/* SPDX-License-Identifier: BSD-3-Clause */
/* Command channel (§3.1): pre-set result, write words 0..14, fence, word 15, poll. */
#include "mcp/cmd.h"

#include <errno.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mcp/wait.h"
#include "util/byteorder.h"
#include "util/log.h"

void mcp_cmd_init(struct mcp_cmd_chan *c, struct myrio_bus *bus, void *resp_va, uint64_t resp_iova)
{
	c->bus = bus;
	c->resp = resp_va;
	c->resp_iova = resp_iova;
	c->timeout_us = MCP_CMD_TIMEOUT_US;
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&c->lock, &a);
	pthread_mutexattr_destroy(&a);
}

void mcp_cmd_lock(struct mcp_cmd_chan *c)
{
	pthread_mutex_lock(&c->lock);
}

void mcp_cmd_unlock(struct mcp_cmd_chan *c)
{
	pthread_mutex_unlock(&c->lock);
}

const char *mcp_cmd_name(uint32_t op)
{
	static const char *const names[] = {
	    [MCP_CMD_RESET] = "RESET",
	    [MCP_CMD_SET_INTRQ_DMA] = "SET_INTRQ_DMA",
	    [MCP_CMD_SET_BIG_BUFFER_SIZE] = "SET_BIG_BUFFER_SIZE",
	    [MCP_CMD_SET_SMALL_BUFFER_SIZE] = "SET_SMALL_BUFFER_SIZE",
	    [MCP_CMD_GET_SEND_OFFSET] = "GET_SEND_OFFSET",
	    [MCP_CMD_GET_SMALL_RX_OFFSET] = "GET_SMALL_RX_OFFSET",
	    [MCP_CMD_GET_BIG_RX_OFFSET] = "GET_BIG_RX_OFFSET",
	    [MCP_CMD_GET_IRQ_ACK_OFFSET] = "GET_IRQ_ACK_OFFSET",
	    [MCP_CMD_GET_IRQ_DEASSERT_OFFSET] = "GET_IRQ_DEASSERT_OFFSET",
	    [MCP_CMD_GET_SEND_RING_SIZE] = "GET_SEND_RING_SIZE",
	    [MCP_CMD_GET_RX_RING_SIZE] = "GET_RX_RING_SIZE",
	    [MCP_CMD_SET_INTRQ_SIZE] = "SET_INTRQ_SIZE",
	    [MCP_CMD_ETHERNET_UP] = "ETHERNET_UP",
	    [MCP_CMD_ETHERNET_DOWN] = "ETHERNET_DOWN",
	    [MCP_CMD_SET_MTU] = "SET_MTU",
	    [MCP_CMD_GET_INTR_COAL_DELAY_OFFSET] = "GET_INTR_COAL_DELAY_OFFSET",
	    [MCP_CMD_ENABLE_PROMISC] = "ENABLE_PROMISC",
	    [MCP_CMD_DISABLE_PROMISC] = "DISABLE_PROMISC",
	    [MCP_CMD_SET_MAC_ADDRESS] = "SET_MAC_ADDRESS",
	    [MCP_CMD_ENABLE_FLOW_CONTROL] = "ENABLE_FLOW_CONTROL",
	    [MCP_CMD_DISABLE_FLOW_CONTROL] = "DISABLE_FLOW_CONTROL",
	    [MCP_CMD_DMA_TEST] = "DMA_TEST",
	    [MCP_CMD_ENABLE_ALLMULTI] = "ENABLE_ALLMULTI",
	    [MCP_CMD_DISABLE_ALLMULTI] = "DISABLE_ALLMULTI",
	    [MCP_CMD_JOIN_MULTICAST_GROUP] = "JOIN_MULTICAST_GROUP",
	    [MCP_CMD_LEAVE_MULTICAST_GROUP] = "LEAVE_MULTICAST_GROUP",
	    [MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS] = "LEAVE_ALL_MULTICAST_GROUPS",
	    [MCP_CMD_SET_STATS_DMA_V2] = "SET_STATS_DMA_V2",
	    [MCP_CMD_UNALIGNED_TEST] = "UNALIGNED_TEST",
	    [MCP_CMD_GET_MAX_TSO6_HDR_SIZE] = "GET_MAX_TSO6_HDR_SIZE",
	    [MCP_CMD_SET_TSO_MODE] = "SET_TSO_MODE",
	    [MCP_CMD_SET_RSS_MCP_SLOT_TYPE] = "SET_RSS_MCP_SLOT_TYPE",
	};
	if (op < sizeof(names) / sizeof(names[0]) && names[op])
		return names[op];
	return "command";
}

void mcp_cmd_block_build(struct mcp_cmd_block *b, uint32_t op, uint32_t d0, uint32_t d1,
			 uint32_t d2, uint64_t resp_iova)
{
	memset(b, 0, sizeof(*b));
	b->cmd = be32(op);
	b->data0 = be32(d0);
	b->data1 = be32(d1);
	b->data2 = be32(d2);
	b->resp_addr_high = be32((uint32_t)(resp_iova >> 32));
	b->resp_addr_low = be32((uint32_t)resp_iova);
}

static int result_to_errno(uint32_t op, uint32_t result)
{
	switch (result) {
	case MCP_OK:
		return 0;
	case MCP_ERR_UNKNOWN:
		return -ENOSYS;
	case MCP_ERR_RANGE:
		log_err("the NIC refused command %u (%s): argument out of range", op,
			mcp_cmd_name(op));
		return -ERANGE;
	case MCP_ERR_BUSY:
		return -EBUSY;
	case MCP_ERR_UNALIGNED:
		return -E2BIG;
	case MCP_ERR_MULTICAST: /* the filter is full: the caller falls back to ALLMULTI */
		return -ENOSPC;
	default:
		log_err("the NIC failed command %u (%s) with error %u", op, mcp_cmd_name(op),
			result);
		return -ENXIO;
	}
}

static int cmd_locked(struct mcp_cmd_chan *c, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2,
		      uint32_t *out)
{
	struct mcp_cmd_block b;
	mcp_cmd_block_build(&b, op, d0, d1, d2, c->resp_iova);
	c->resp->data = 0;
	c->resp->result = be32(MCP_RESULT_PENDING);
	mmio_wmb();
	/* 32-bit stores, words 0..14, fence, then word 15: the NIC acts when the block is
	 * complete and the last word is the trigger (§3.1 step 3, §10.1 rule 2). */
	const uint32_t *w = (const uint32_t *)&b;
	volatile uint8_t *bar = c->bus->bar0;
	for (unsigned i = 0; i < 15; i++)
		mmio_write32_raw(bar, MCP_CMD_OFFSET + 4 * i, w[i]);
	mmio_wmb();
	mmio_write32_raw(bar, MCP_CMD_OFFSET + 60, w[15]);
	mmio_wmb();

	/* Poll: a short spin in 10 µs steps (most commands answer in microseconds), then
	 * 1 ms steps up to the timeout. */
	struct mcp_wait wait;
	mcp_wait_start(&wait, c->bus, c->timeout_us);
	for (;;) {
		uint32_t result = be32(c->resp->result);
		if (result != MCP_RESULT_PENDING) {
			dma_rmb();
			if (out)
				*out = be32(c->resp->data);
			return result_to_errno(op, result);
		}
		if (mcp_wait_over(&wait))
			break;
		c->bus->ops->delay_us(c->bus, mcp_wait_elapsed_us(&wait) < 1000 ? 10 : 1000);
	}
	log_err("the NIC did not answer command %u (%s) within %u ms: the firmware is hung or "
		"the device was reset; reload the firmware or reset the device",
		op, mcp_cmd_name(op), c->timeout_us / 1000);
	return -ETIMEDOUT;
}

int mcp_cmd(struct mcp_cmd_chan *c, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2,
	    uint32_t *out)
{
	mcp_cmd_lock(c);
	int rc = cmd_locked(c, op, d0, d1, d2, out);
	mcp_cmd_unlock(c);
	return rc;
}
