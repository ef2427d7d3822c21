/* SPDX-License-Identifier: BSD-3-Clause */
/* The command channel (§3): one command at a time through the 64-byte block at BAR0 +
 * 0xF80000, answered by an 8-byte DMA response. */
#ifndef MYRIO_MCP_CMD_H
#define MYRIO_MCP_CMD_H

#include <pthread.h>
#include <stdint.h>

#include "mcp/mcp_abi.h"

struct myrio_bus;

struct mcp_cmd_chan {
	struct myrio_bus *bus;
	volatile struct mcp_cmd_response *resp; /* 8 bytes of DMA memory, 8-aligned */
	uint64_t resp_iova;
	unsigned timeout_us; /* give up after this long (default MCP_CMD_TIMEOUT_US) */
	/* One mailbox and one response buffer for every thread of the process: a command, or
	 * a sequence of them held with mcp_cmd_lock, runs alone. Recursive, so a sequence's
	 * holder issues its commands through mcp_cmd. The data path never takes it. */
	pthread_mutex_t lock;
};

#define MCP_CMD_TIMEOUT_US 1000000u /* spec: ≤ 15 ms; slack for a loaded host running a model */

void mcp_cmd_init(struct mcp_cmd_chan *c, struct myrio_bus *bus, void *resp_va, uint64_t resp_iova);

/* Sends one command and waits for its answer. Returns 0 and the response data in *out
 * (may be NULL), -ETIMEDOUT when the NIC does not answer, or the result code mapped to an
 * errno: UNKNOWN -ENOSYS, ERROR_RANGE -ERANGE, ERROR_BUSY -EBUSY, ERROR_UNALIGNED -E2BIG,
 * ERROR_MULTICAST -ENOSPC, others -ENXIO. Logs nothing for -ENOSYS (callers probe optional
 * commands). */
int mcp_cmd(struct mcp_cmd_chan *c, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2,
	    uint32_t *out);

/* A sequence of commands that no other thread's may interleave (the multicast filter). */
void mcp_cmd_lock(struct mcp_cmd_chan *c);
void mcp_cmd_unlock(struct mcp_cmd_chan *c);

const char *mcp_cmd_name(uint32_t op);

/* Fills a command block as it goes on the wire (BE), for the channel and for tests. */
void mcp_cmd_block_build(struct mcp_cmd_block *b, uint32_t op, uint32_t d0, uint32_t d1,
			 uint32_t d2, uint64_t resp_iova);

#endif
