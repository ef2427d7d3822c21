/* SPDX-License-Identifier: BSD-3-Clause */
/* Slices (§7): several queue sets on one NIC, one per core. The reset sequence asks for
 * them (GET_MAX_RSS_QUEUES, ENABLE_RSS_QUEUES with a vector and a send ring per slice,
 * SET_INTRQ_DMA for each, §7.2); the open fills every slice's rings, gives each its status
 * block and writes the RSS table, key and hash type (§7.3). Slice 0 is the NIC's own rings
 * (nic.c): a port of one queue runs none of this. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mcp/nic.h"
#include "util/log.h"

static int cmd(struct myri_nic *nic, uint32_t op, uint32_t d0, uint32_t d1, uint32_t d2,
	       uint32_t *out)
{
	return mcp_cmd(&nic->cmd, op, d0, d1, d2, out);
}

/* The slice's completion ring and status block, mapped once and kept across resets. */
static int slice_mem(struct myri_nic *nic, struct myri_slice *sl)
{
	if (sl->mem.va)
		return 0;
	int rc = myrio_dma_alloc(&sl->mem, SLICE_INTRQ_OFF + nic->intrq_entries * 4);
	if (rc == 0)
		rc = nic->bus->ops->dma_map(nic->bus, &sl->mem);
	if (rc < 0)
		log_err("%s: cannot map a slice's completion ring: %s", nic->bus->name,
			strerror(-rc));
	return rc;
}

int myri_slices_reset(struct myri_nic *nic)
{
	uint32_t want = nic->nq_wanted, max = 0;
	int rc = cmd(nic, MCP_CMD_GET_MAX_RSS_QUEUES, 0, 0, 0, &max);
	if (rc < 0) {
		log_err("%s: %u queues need the RSS firmware (an rss_ image such as "
			"myri10ge_rss_eth_z8e.dat): GET_MAX_RSS_QUEUES failed (%s)",
			nic->bus->name, want, strerror(-rc));
		return rc == -ETIMEDOUT ? rc : -ENOTSUP;
	}
	if (max < want) {
		log_err("%s: %u queues asked for, the firmware runs at most %u", nic->bus->name,
			want, max);
		return -ENOTSUP;
	}
	rc = cmd(nic, MCP_CMD_ENABLE_RSS_QUEUES, want, MCP_RSS_VECTOR_PER_SLICE | MCP_RSS_MULTI_TX,
		 0, NULL);
	if (rc < 0) {
		log_err("%s: ENABLE_RSS_QUEUES(%u) failed (%s): a send queue per slice needs "
			"firmware 1.4.32 or later",
			nic->bus->name, want, strerror(-rc));
		return rc == -ETIMEDOUT ? rc : -ENOTSUP;
	}
	if (!nic->extra) {
		nic->extra = calloc(want - 1, sizeof(*nic->extra));
		if (!nic->extra)
			return -ENOMEM;
	}
	nic->nq = want;
	nic->multi_tx = true;
	for (unsigned s = 1; s < want; s++) {
		struct myri_slice *sl = &nic->extra[s - 1];
		rc = slice_mem(nic, sl);
		if (rc < 0)
			return rc;
		memset(sl->mem.va, 0, sl->mem.len); /* the host starts from zero with the NIC */
		uint64_t q = sl->mem.iova + SLICE_INTRQ_OFF;
		rc = cmd(nic, MCP_CMD_SET_INTRQ_DMA, (uint32_t)q, (uint32_t)(q >> 32), s, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Slice s's rings filled, its handshake words, its status block. */
static int slice_open(struct myri_nic *nic, unsigned s)
{
	struct myri_slice *sl = &nic->extra[s - 1];
	struct myri_rings *r = &sl->rings;
	if (!nic->keep_rings)
		memset(r, 0, sizeof(*r));
	int rc = 0;
	if (!sl->small_pool) /* a recovery keeps them, as slice 0's */
		rc = myri_nic_rx_pools(nic, &sl->small_pool, &sl->big_pool);
	if (rc == 0)
		rc = myri_nic_rings_setup(nic, s, r, sl->small_pool, sl->big_pool);
	if (rc < 0)
		return rc;
	r->rx_done = (void *)((uint8_t *)sl->mem.va + SLICE_INTRQ_OFF);
	r->rx_done_mask = nic->intrq_entries - 1;
	r->status = (void *)((uint8_t *)sl->mem.va + SLICE_STATUS_OFF);
	r->claim0 = nic->bus->bar0 + nic->irq_ack_off + 8 * s;
	r->claim1 = r->claim0 + 4;
	r->deassert = (volatile uint8_t *)&r->deassert_sink; /* INTx is slice 0's */
	r->rx_done_idx = 0;
	r->rx_token = false;
	if (!nic->keep_rings && (rx_ring_refill(&r->small) != nic->rx_entries ||
				 rx_ring_refill(&r->big) != nic->rx_entries)) {
		log_err("%s: cannot fill slice %u's receive rings", nic->bus->name, s);
		return -ENOMEM;
	}
	uint64_t st = sl->mem.iova + SLICE_STATUS_OFF;
	return cmd(nic, MCP_CMD_SET_STATS_DMA_V2, (uint32_t)st, (uint32_t)(st >> 32),
		   s << 16 | sizeof(struct mcp_irq_data), NULL);
}

int myri_slices_write_rss(struct myri_nic *nic)
{
	const struct myri_rss *rss = &nic->rss;
	uint32_t table_off, key_off;
	int rc = cmd(nic, MCP_CMD_SET_RSS_TABLE_SIZE, rss->table_size, 0, 0, NULL);
	if (rc == 0)
		rc = myri_nic_get_offset(nic, MCP_CMD_GET_RSS_TABLE_OFFSET, 0, rss->table_size,
					 &table_off);
	if (rc == 0)
		rc = myri_nic_get_offset(nic, MCP_CMD_GET_RSS_KEY_OFFSET, 0, sizeof(rss->key),
					 &key_off);
	if (rc < 0)
		return rc;
	/* byte stores: the table is a byte per entry (§7.3) */
	for (uint32_t i = 0; i < rss->table_size; i++)
		nic->bus->bar0[table_off + i] = rss->table[i];
	for (uint32_t i = 0; i < sizeof(rss->key); i += 4) {
		uint32_t w;
		memcpy(&w, rss->key + i, 4);
		mmio_write32_raw(nic->bus->bar0, key_off + i, w);
	}
	mmio_wmb();
	rc = cmd(nic, MCP_CMD_RSS_KEY_UPDATED, 0, 0, 0, NULL);
	if (rc == 0)
		rc = cmd(nic, MCP_CMD_SET_RSS_ENABLE, 1, rss->hash_type, 0, NULL);
	return rc;
}

int myri_slices_open(struct myri_nic *nic)
{
	for (unsigned s = 1; s < nic->nq; s++) {
		int rc = slice_open(nic, s);
		if (rc < 0)
			return rc;
	}
	return myri_slices_write_rss(nic);
}

void myri_slices_drop_buffers(struct myri_nic *nic)
{
	for (unsigned s = 1; s < nic->nq && nic->extra; s++)
		myri_rings_drop(&nic->extra[s - 1].rings);
}

void myri_slices_release(struct myri_nic *nic)
{
	if (!nic->extra)
		return;
	myri_slices_drop_buffers(nic);
	for (unsigned s = 1; s < nic->nq_wanted; s++) {
		struct myri_slice *sl = &nic->extra[s - 1];
		myrio_pool_destroy(sl->small_pool);
		myrio_pool_destroy(sl->big_pool);
		if (sl->mem.bus)
			nic->bus->ops->dma_unmap(nic->bus, &sl->mem);
		if (sl->mem.va)
			myrio_dma_free(&sl->mem);
	}
	free(nic->extra);
	nic->extra = NULL;
}
