/* SPDX-License-Identifier: BSD-3-Clause */
/* A slice's rings on plain memory for unit tests: "SRAM" for the rx/tx rings and claim
 * words, host memory for the completion ring and status block, pools without a bus. */
#ifndef RINGS_FIXTURE_H
#define RINGS_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "mem/dma.h"
#include "rings/rings.h"
#include "util/byteorder.h"

struct fix {
	struct myri_rings r;
	uint8_t *sram;
	struct mcp_irq_data *status;
	uint32_t *claims; /* claim0, claim1 */
	struct mcp_slot *done;
	struct myrio_pool *small_pool, *big_pool, *tx_pool;
	/* the "NIC" side */
	uint32_t nic_small, nic_big, nic_done_idx, nic_tx;
};

#define FIX_SMALL_OFF 0x0000u
#define FIX_BIG_OFF 0x1000u
#define FIX_TX_OFF 0x2000u
#define FIX_CLAIM_OFF 0x8000u

static inline struct fix *fix_new(uint32_t rx_entries, uint32_t tx_entries, uint32_t pool_extra,
				  uint32_t max_frame)
{
	struct fix *x = calloc(1, sizeof(*x));
	x->sram = aligned_alloc(4096, 0x10000);
	memset(x->sram, 0, 0x10000);
	x->status = aligned_alloc(64, 64);
	memset(x->status, 0, 64);
	x->done = calloc(2 * rx_entries, sizeof(struct mcp_slot));
	x->claims = (uint32_t *)(x->sram + FIX_CLAIM_OFF);
	/* laid out as the driver lays out its pools (src/mcp/nic.c, src/port/myri10ge_port.c) */
	if (myrio_pool_create_bounded(NULL, rx_entries + pool_extra, 448, MCP_RX_SMALL_NO_CROSS,
				      &x->small_pool) ||
	    myrio_pool_create_in(NULL, rx_entries + pool_extra, 128 + 2 + max_frame,
				 &x->big_pool) ||
	    myrio_pool_create_bounded(NULL, 4 * tx_entries, 2048, MCP_RX_SMALL_NO_CROSS,
				      &x->tx_pool))
		abort();
	struct myri_rings *r = &x->r;
	static struct myrio_bus no_bus; /* nothing sleeps: posting tells nobody */
	r->bus = &no_bus;
	r->rx_done = x->done;
	r->rx_done_mask = 2 * rx_entries - 1;
	r->small_size = 256;
	r->max_frame = max_frame;
	struct myri_rx_ring *rings[2] = {&r->small, &r->big};
	struct myrio_pool *pools[2] = {x->small_pool, x->big_pool};
	uint32_t offs[2] = {FIX_SMALL_OFF, FIX_BIG_OFF};
	for (int i = 0; i < 2; i++) {
		rings[i]->sram = x->sram + offs[i];
		rings[i]->mask = rx_entries - 1;
		rings[i]->pool = pools[i];
		rings[i]->info = calloc(rx_entries, sizeof(struct myrio_pkt *));
		for (uint32_t s = 0; s < rx_entries; s++)
			put_be32(x->sram + offs[i] + 8 * s + 4, MCP_RX_DESC_INVALID);
	}
	r->tx.sram = x->sram + FIX_TX_OFF;
	r->tx.mask = tx_entries - 1;
	r->tx.info = calloc(tx_entries, sizeof(struct myrio_pkt *));
	r->tx.boundary = 2048;
	r->tx.max_frame = max_frame;
	r->status = x->status;
	r->claim0 = x->sram + FIX_CLAIM_OFF;
	r->claim1 = x->sram + FIX_CLAIM_OFF + 4;
	r->deassert = (volatile uint8_t *)&r->deassert_sink; /* MSI style */
	r->link_up = 3;
	return x;
}

static inline void fix_free(struct fix *x)
{
	rx_ring_release(&x->r.small);
	rx_ring_release(&x->r.big);
	tx_ring_release(&x->r.tx);
	free(x->r.small.info);
	free(x->r.big.info);
	free(x->r.tx.info);
	myrio_pool_destroy(x->small_pool);
	myrio_pool_destroy(x->big_pool);
	myrio_pool_destroy(x->tx_pool);
	free(x->sram);
	free(x->status);
	free(x->done);
	free(x);
}

/* The NIC takes the next valid descriptor of a ring: returns its address, or 0 when the
 * slot is not valid; invalidates the slot afterwards (§4.3). */
static inline uint64_t fix_nic_take(struct fix *x, bool big)
{
	uint32_t *idx = big ? &x->nic_big : &x->nic_small;
	struct myri_rx_ring *ring = big ? &x->r.big : &x->r.small;
	uint8_t *d = x->sram + (big ? FIX_BIG_OFF : FIX_SMALL_OFF) + 8 * (*idx & ring->mask);
	uint32_t lo = get_be32(d + 4);
	if (lo == MCP_RX_DESC_INVALID)
		return 0;
	uint64_t a = (uint64_t)get_be32(d) << 32 | lo;
	put_be32(d + 4, MCP_RX_DESC_INVALID);
	(*idx)++;
	return a;
}

/* The NIC writes a completion entry. */
static inline void fix_nic_complete(struct fix *x, uint16_t len, uint16_t csum)
{
	struct mcp_slot *s = &x->done[x->nic_done_idx++ & x->r.rx_done_mask];
	s->checksum = be16(csum);
	s->length = be16(len);
}

/* The NIC receives a frame of len bytes into the next buffer of a ring and completes it;
 * returns the buffer's address, 0 if none was posted (the entry is written anyway). */
static inline uint64_t fix_nic_receive(struct fix *x, bool big, uint16_t len, uint16_t csum)
{
	uint64_t a = fix_nic_take(x, big);
	fix_nic_complete(x, len, csum);
	return a;
}

static inline uint32_t fix_claim(struct fix *x, int n)
{
	return be32(x->claims[n]);
}

#endif
