/* Receive: posting buffers (§4.3) and consuming the completion ring (§4.6). */
#include <string.h>

#include "bus/mmio.h"
#include "rings/rings.h"
#include "util/byteorder.h"

/* Writes descriptors for slots posted..posted+7 (an aligned group): the first low word is
 * invalid while the group is copied in two 32-byte bursts, and is written last, alone, so
 * the group becomes visible at once (§4.3, §10.1 rule 5). */
void rx_ring_post_group(struct myri_rx_ring *ring, struct myrio_pkt *const *pkts)
{
	uint32_t slot = ring->posted & ring->mask;
	struct mcp_rx_desc d[RX_GROUP] __attribute__((aligned(8)));
	for (unsigned i = 0; i < RX_GROUP; i++) {
		uint64_t a = pkts[i]->iova + ring->buf_off;
		d[i].addr_high = be32((uint32_t)(a >> 32));
		d[i].addr_low = be32((uint32_t)a);
		ring->info[slot + i] = pkts[i];
	}
	uint32_t low0 = d[0].addr_low;
	d[0].addr_low = be32(MCP_RX_DESC_INVALID);
	uint32_t off = slot * (uint32_t)sizeof(struct mcp_rx_desc);
	mmio_copy64(ring->sram, off, &d[0], 32);
	mmio_wmb();
	mmio_copy64(ring->sram, off + 32, &d[4], 32);
	mmio_wmb();
	mmio_write32_raw(ring->sram, off + 4, low0);
	ring->posted += RX_GROUP;
}

uint32_t rx_ring_refill(struct myri_rx_ring *ring)
{
	uint32_t n = 0;
	struct myrio_pkt *pkts[RX_GROUP];
	while (ring->posted - ring->done + RX_GROUP <= ring->mask + 1) {
		if (myrio_pkt_alloc_bulk(ring->pool, pkts, RX_GROUP) == 0) {
			ring->refill_failed++;
			break;
		}
		rx_ring_post_group(ring, pkts);
		n += RX_GROUP;
	}
	if (n)
		mmio_wmb();
	return n;
}

void rx_ring_release(struct myri_rx_ring *ring)
{
	if (!ring->info)
		return;
	while (ring->done != ring->posted) {
		uint32_t slot = ring->done++ & ring->mask;
		if (ring->info[slot])
			myrio_pkt_free(ring->info[slot]);
		ring->info[slot] = NULL;
	}
}

/* An entry whose length cannot be right (§4.6 says nothing from the device is trusted):
 * longer than the MTU allows, or no buffer of its kind is posted. Drop it; the buffer the
 * NIC would have used for such a length goes back to the pool and is posted again. */
static void rx_bad_completion(struct myri_rings *r, struct myri_rx_ring *ring)
{
	r->rx_bad_completion++;
	if (ring->posted != ring->done) {
		uint32_t slot = ring->done++ & ring->mask;
		myrio_pkt_free(ring->info[slot]);
		ring->info[slot] = NULL;
	}
}

uint16_t rings_rx_burst(struct myri_rings *r, struct myrio_pkt **pkts, uint16_t n)
{
	status_poll(r);
	volatile struct mcp_slot *ring = r->rx_done;
	uint32_t idx = r->rx_done_idx, mask = r->rx_done_mask;
	uint32_t small_size = r->small_size, max_frame = r->max_frame;
	uint64_t bytes = 0;
	uint16_t got = 0;
	bool empty = false;
	while (got < n) {
		volatile uint32_t *e = (volatile uint32_t *)&ring[idx & mask];
		uint32_t raw = *e; /* checksum and length arrive in one 4-byte write */
		struct mcp_slot s;
		memcpy(&s, &raw, sizeof(s));
		uint32_t len = be16(s.length);
		if (len == 0) {
			empty = true;
			break;
		}
		dma_rmb(); /* frame data was written before the entry */
		*e = 0;
		idx++;
		struct myri_rx_ring *rr = len <= small_size ? &r->small : &r->big;
		if (__builtin_expect(len > max_frame || rr->posted == rr->done, 0)) {
			rx_bad_completion(r, rr);
			continue;
		}
		uint32_t slot = rr->done++ & rr->mask;
		struct myrio_pkt *p = rr->info[slot];
		p->data_off = rr->buf_off + MCP_RX_PAD;
		p->len = len;
		p->rx_csum = be16(s.checksum);
		p->ol_flags = MYRIO_PKT_RX_CSUM_PARTIAL;
		p->port = r->port_index;
		bytes += len;
		pkts[got++] = p;
	}
	r->rx_done_idx = idx;
	r->rx_packets += got;
	r->rx_bytes += bytes;
	/* Refill in groups of 8 from the pools (§4.3). */
	if (r->small.posted - r->small.done + RX_GROUP <= r->small.mask + 1)
		rx_ring_refill(&r->small);
	if (r->big.posted - r->big.done + RX_GROUP <= r->big.mask + 1)
		rx_ring_refill(&r->big);
	if (empty && r->rx_token)
		status_return_rx_token(r);
	return got;
}
