/* SPDX-License-Identifier: BSD-3-Clause */
/* A fake Myri-10G for unit tests: BAR0 is plain memory, DMA addresses are host pointers,
 * and a responder runs from the bus's delay_us (where the driver waits) and answers the
 * command, handoff and dummy-RDMA blocks like the firmware would (§2.4, §2.6, §3). Not the
 * device model: just enough to check what the driver writes and in which order. */
#ifndef FAKE_NIC_H
#define FAKE_NIC_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "mcp/mcp_abi.h"
#include "mem/dma.h"
#include "util/byteorder.h"

#define FAKE_SENTINEL 0xdeadbeefu
#define FAKE_SEND_OFF 0x20000u
#define FAKE_SMALL_OFF 0x10000u
#define FAKE_BIG_OFF 0x18000u
#define FAKE_ACK_OFF 0x30000u
#define FAKE_DEASSERT_OFF 0x30010u
#define FAKE_COAL_OFF 0x30020u
#define FAKE_HDR_OFF 0x200u
#define FAKE_MAX_OPS 128

struct fake_nic {
	struct myrio_bus bus;
	uint32_t rx_entries, tx_entries;
	/* what the driver did */
	uint32_t ops[FAKE_MAX_OPS];
	uint32_t d0[FAKE_MAX_OPS], d1[FAKE_MAX_OPS], d2[FAKE_MAX_OPS];
	unsigned nops;
	uint32_t last_block[16]; /* BE words of the last command block */
	bool block_incomplete;   /* a command block with a word left unwritten */
	bool result_not_preset;
	bool rings_full_at_up;
	unsigned handoffs, dummy_rdmas;
	uint32_t handoff_words[16];
	uint64_t delay_total_us;
	unsigned delay_calls;
	/* the bus's clock: each sleep advances it by what was asked times stretch (0: 1), as a
	 * loaded host's sleeps last longer than asked */
	uint64_t clock_ns;
	unsigned stretch;
	/* how to answer */
	bool mute;                 /* never answer (timeout) */
	bool down_silent;          /* ETHERNET_DOWN answered, its status update never sent */
	uint32_t fail_op, fail_result;
	uint32_t send_off; /* GET_SEND_OFFSET's answer; 0: FAKE_SEND_OFF */
	uint64_t stats_addr;
};

static inline uint32_t fake_rd(struct fake_nic *f, uint32_t off)
{
	return be32(*(volatile uint32_t *)(f->bus.bar0 + off));
}

static inline void fake_arm_block(struct fake_nic *f, uint32_t off)
{
	for (unsigned i = 0; i < 16; i++)
		*(volatile uint32_t *)(f->bus.bar0 + off + 4 * i) = FAKE_SENTINEL;
}

static inline bool fake_ring_full(struct fake_nic *f, uint32_t off)
{
	for (uint32_t i = 0; i < f->rx_entries; i++)
		if (fake_rd(f, off + 8 * i + 4) == MCP_RX_DESC_INVALID)
			return false;
	return true;
}

static inline uint32_t fake_answer(struct fake_nic *f, uint32_t op, uint32_t d0, uint32_t d1,
				   uint32_t *data)
{
	*data = 0;
	if (op == f->fail_op && f->fail_result)
		return f->fail_result;
	switch (op) {
	case MCP_CMD_RESET:
		*data = f->rx_entries * 8;
		return 0;
	case MCP_CMD_GET_RX_RING_SIZE:
		*data = f->rx_entries * 8;
		return 0;
	case MCP_CMD_GET_SEND_RING_SIZE:
		*data = f->tx_entries * 16;
		return 0;
	case MCP_CMD_GET_SEND_OFFSET:
		*data = f->send_off ? f->send_off : FAKE_SEND_OFF;
		return 0;
	case MCP_CMD_GET_SMALL_RX_OFFSET:
		*data = FAKE_SMALL_OFF;
		return 0;
	case MCP_CMD_GET_BIG_RX_OFFSET:
		*data = FAKE_BIG_OFF;
		return 0;
	case MCP_CMD_GET_IRQ_ACK_OFFSET:
		*data = FAKE_ACK_OFF;
		return 0;
	case MCP_CMD_GET_IRQ_DEASSERT_OFFSET:
		*data = FAKE_DEASSERT_OFF;
		return 0;
	case MCP_CMD_GET_INTR_COAL_DELAY_OFFSET:
		*data = FAKE_COAL_OFF;
		return 0;
	case MCP_CMD_DMA_TEST:
	case MCP_CMD_UNALIGNED_TEST:
		*data = 3u << 16 | 40;
		return 0;
	case MCP_CMD_GET_MAX_TSO6_HDR_SIZE:
		*data = 256;
		return 0;
	case MCP_CMD_SET_STATS_DMA_V2:
		f->stats_addr = (uint64_t)d1 << 32 | d0;
		return 0;
	case MCP_CMD_ETHERNET_UP:
		f->rings_full_at_up = fake_ring_full(f, FAKE_SMALL_OFF) &&
				      fake_ring_full(f, FAKE_BIG_OFF);
		return 0;
	case MCP_CMD_ETHERNET_DOWN:
		if (f->stats_addr && !f->down_silent) {
			struct mcp_irq_data *s = (void *)(uintptr_t)f->stats_addr;
			s->link_down = 1;
			s->stats_updated = 1;
			__atomic_thread_fence(__ATOMIC_RELEASE);
			s->valid = 1;
		}
		return 0;
	case MCP_CMD_SET_INTRQ_SIZE:
	case MCP_CMD_SET_INTRQ_DMA:
	case MCP_CMD_SET_MAC_ADDRESS:
	case MCP_CMD_ENABLE_FLOW_CONTROL:
	case MCP_CMD_DISABLE_PROMISC:
	case MCP_CMD_ENABLE_PROMISC:
	case MCP_CMD_ENABLE_ALLMULTI:
	case MCP_CMD_DISABLE_ALLMULTI:
	case MCP_CMD_LEAVE_ALL_MULTICAST_GROUPS:
	case MCP_CMD_SET_MTU:
	case MCP_CMD_SET_SMALL_BUFFER_SIZE:
	case MCP_CMD_SET_BIG_BUFFER_SIZE:
	case MCP_CMD_SET_TSO_MODE:
	case MCP_CMD_SET_RSS_MCP_SLOT_TYPE:
		return 0;
	default:
		return MCP_ERR_UNKNOWN;
	}
}

static inline void fake_confirm(uint32_t hi, uint32_t lo)
{
	uint32_t *c = (uint32_t *)(uintptr_t)((uint64_t)hi << 32 | lo);
	*c = 0xffffffffu;
}

/* One pass of the "firmware": acts on complete blocks. */
static inline void fake_run(struct fake_nic *f)
{
	volatile uint8_t *bar = f->bus.bar0;
	if (*(volatile uint32_t *)(bar + MCP_CMD_OFFSET + 60) != FAKE_SENTINEL) {
		uint32_t w[16];
		for (unsigned i = 0; i < 16; i++) {
			f->last_block[i] = *(volatile uint32_t *)(bar + MCP_CMD_OFFSET + 4 * i);
			w[i] = be32(f->last_block[i]);
			if (f->last_block[i] == FAKE_SENTINEL)
				f->block_incomplete = true;
		}
		fake_arm_block(f, MCP_CMD_OFFSET);
		if (f->nops < FAKE_MAX_OPS) {
			f->ops[f->nops] = w[0];
			f->d0[f->nops] = w[1];
			f->d1[f->nops] = w[2];
			f->d2[f->nops++] = w[3];
		}
		struct mcp_cmd_response *r =
			(void *)(uintptr_t)((uint64_t)w[4] << 32 | w[5]);
		if (be32(r->result) != MCP_RESULT_PENDING)
			f->result_not_preset = true;
		if (!f->mute) {
			uint32_t data, result = fake_answer(f, w[0], w[1], w[2], &data);
			r->data = be32(data);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			r->result = be32(result);
		}
	}
	if (*(volatile uint32_t *)(bar + MCP_BOOT_HANDOFF_OFFSET + 60) != FAKE_SENTINEL) {
		uint32_t w[16];
		for (unsigned i = 0; i < 16; i++)
			w[i] = f->handoff_words[i] = fake_rd(f, MCP_BOOT_HANDOFF_OFFSET + 4 * i);
		fake_arm_block(f, MCP_BOOT_HANDOFF_OFFSET);
		f->handoffs++;
		if (w[3] < 0x1000000 && w[4] < 0x200000 && w[5] + w[4] < 0x100000) {
			memmove((uint8_t *)bar + w[5], (uint8_t *)bar + w[3], w[4]);
			fake_confirm(w[0], w[1]);
		}
	}
	if (*(volatile uint32_t *)(bar + MCP_DUMMY_RDMA_OFFSET + 60) != FAKE_SENTINEL) {
		uint32_t hi = fake_rd(f, MCP_DUMMY_RDMA_OFFSET), lo = fake_rd(f, MCP_DUMMY_RDMA_OFFSET + 4);
		fake_arm_block(f, MCP_DUMMY_RDMA_OFFSET);
		f->dummy_rdmas++;
		fake_confirm(hi, lo);
	}
}

static inline struct fake_nic *fake_of(struct myrio_bus *bus)
{
	return (struct fake_nic *)bus;
}

static inline int fake_dma_map(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	r->iova = (uint64_t)(uintptr_t)r->va;
	r->bus = bus;
	return 0;
}
static inline void fake_dma_unmap(struct myrio_bus *bus, struct myrio_dma_region *r)
{
	r->bus = NULL;
}
static inline void fake_delay(struct myrio_bus *bus, unsigned us)
{
	struct fake_nic *f = fake_of(bus);
	f->delay_total_us += us;
	f->delay_calls++;
	f->clock_ns += (uint64_t)us * 1000u * (f->stretch ? f->stretch : 1);
	fake_run(f);
}
static inline uint64_t fake_now_ns(struct myrio_bus *bus)
{
	return fake_of(bus)->clock_ns;
}
static inline int fake_cfg_read(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t *v)
{
	return -ENOTSUP;
}
static inline int fake_cfg_write(struct myrio_bus *bus, unsigned off, unsigned size, uint32_t v)
{
	return -ENOTSUP;
}
static inline int fake_irq_fd(struct myrio_bus *bus)
{
	return -ENOTSUP;
}
static inline int fake_reset(struct myrio_bus *bus)
{
	return -ENOTSUP;
}
static inline void fake_close(struct myrio_bus *bus)
{
}

static const struct myrio_bus_ops fake_bus_ops = {
	.dma_map = fake_dma_map,
	.dma_unmap = fake_dma_unmap,
	.delay_us = fake_delay,
	.now_ns = fake_now_ns,
	.cfg_read = fake_cfg_read,
	.cfg_write = fake_cfg_write,
	.irq_fd = fake_irq_fd,
	.reset = fake_reset,
	.close = fake_close,
};

/* Writes an "ETH " header (version) and EEPROM strings into SRAM. */
static inline void fake_put_firmware(struct fake_nic *f, const char *version)
{
	uint8_t *bar = (uint8_t *)f->bus.bar0;
	put_be32(bar + MCP_HEADER_PTR_OFFSET, FAKE_HDR_OFF);
	uint8_t *h = bar + FAKE_HDR_OFF;
	memset(h, 0, MCP_HDR_FULL_LEN);
	put_be32(h + MCP_HDR_OFF_LENGTH, MCP_HDR_FULL_LEN);
	put_be32(h + MCP_HDR_OFF_TYPE, MCP_TYPE_ETH);
	strcpy((char *)h + MCP_HDR_OFF_VERSION, version);
	put_be32(h + MCP_HDR_OFF_SRAM_SIZE, MCP_SRAM_SIZE_DEFAULT);
	put_be32(h + MCP_HDR_OFF_STRING_SPECS, MCP_STRING_SPECS_DEFAULT);
	put_be32(h + MCP_HDR_OFF_STRING_SPECS_LEN, 256);
	char *s = (char *)bar + MCP_STRING_SPECS_DEFAULT;
	memset(s, 0, 256);
	const char strings[] = "MAC=00:60:dd:43:21:07\0SN=424242\0PC=10G-PCIE-8B-S\0";
	memcpy(s, strings, sizeof(strings));
}

static inline struct fake_nic *fake_nic_new(void)
{
	struct fake_nic *f = calloc(1, sizeof(*f));
	f->bus.ops = &fake_bus_ops;
	f->bus.bar0_len = MCP_BAR0_MIN_LEN;
	f->bus.bar0 = aligned_alloc(4096, f->bus.bar0_len);
	memset((void *)f->bus.bar0, 0, f->bus.bar0_len);
	strcpy(f->bus.kind, "fake");
	strcpy(f->bus.name, "fake0");
	f->rx_entries = 512;
	f->tx_entries = 1024;
	fake_arm_block(f, MCP_CMD_OFFSET);
	fake_arm_block(f, MCP_BOOT_HANDOFF_OFFSET);
	fake_arm_block(f, MCP_DUMMY_RDMA_OFFSET);
	fake_put_firmware(f, "1.4.57 -- fake");
	return f;
}

static inline void fake_nic_free(struct fake_nic *f)
{
	free((void *)f->bus.bar0);
	free(f);
}

#endif
