/* Transmit: encoding frames into send descriptors (§5.2-§5.5) and the commit protocol
 * (§5.7): every chain is written with its first flags byte 0, and after a fence the first
 * descriptor's word 3 publishes it. */
#include <string.h>

#include "bus/mmio.h"
#include "rings/rings.h"
#include "util/byteorder.h"
#include "util/csum.h"

unsigned tx_encode(const struct myri_tx_ring *ring, const struct myrio_pkt *p,
		   struct mcp_tx_desc *descs)
{
	uint32_t len = p->len, done = 0, bmask = ring->boundary - 1;
	uint64_t addr = myrio_pkt_data_iova(p);
	uint8_t flags = MCP_TX_FLAG_NO_TSO | (len <= MCP_TX_SMALL_SIZE ? MCP_TX_FLAG_SMALL : 0);
	uint32_t start = 0;
	uint16_t pseudo = 0;
	bool csum = p->ol_flags & MYRIO_PKT_TX_CSUM;
	if (csum) {
		flags |= MCP_TX_FLAG_CKSUM;
		start = p->csum_start;
		pseudo = be16(p->csum_field);
	}
	unsigned n = 0;
	while (done < len) {
		if (n == MCP_TX_MAX_DESC)
			return 0;
		/* No descriptor may cross a tx_boundary-aligned address (§5.4). */
		uint32_t room = ring->boundary - (uint32_t)(addr & bmask);
		uint32_t seg = len - done < room ? len - done : room;
		struct mcp_tx_desc *d = &descs[n++];
		d->addr_high = be32((uint32_t)(addr >> 32));
		d->addr_low = be32((uint32_t)addr);
		d->pseudo_hdr_offset = pseudo;
		d->length = be16((uint16_t)seg);
		d->pad = 0;
		d->rdma_count = 1;
		/* Checksum start relative to this descriptor, clamped at 0 (§5.4). */
		d->cksum_offset = (uint8_t)(start > done ? start - done : 0);
		d->flags = flags | (csum && (done & 1) ? MCP_TX_FLAG_ALIGN_ODD : 0);
		addr += seg;
		done += seg;
	}
	descs[0].flags |= MCP_TX_FLAG_FIRST;
	descs[0].rdma_count = (uint8_t)n;
	return n;
}

void tx_ring_reap(struct myri_rings *r, uint32_t send_done_count)
{
	struct myri_tx_ring *t = &r->tx;
	uint32_t todo = send_done_count - t->pkt_done;
	if (__builtin_expect(todo > t->pkt_req - t->pkt_done, 0)) {
		r->tx_bad_done++; /* the NIC claims more than was sent: trust only what was */
		todo = t->pkt_req - t->pkt_done;
	}
	/* Walk the slots: a chain ends at the slot that holds its packet (as L marks the last
	 * descriptor); single-descriptor chains cost one load each. */
	uint32_t done = t->done, mask = t->mask;
	struct myrio_pkt **info = t->info;
	t->pkt_done += todo;
	while (todo && done != t->req) {
		struct myrio_pkt *p = info[done++ & mask];
		if (p) {
			myrio_pkt_free(p);
			todo--;
		}
	}
	t->done = done;
}

void tx_ring_release(struct myri_tx_ring *t)
{
	if (!t->info)
		return;
	while (t->done != t->req) {
		struct myrio_pkt **s = &t->info[t->done++ & t->mask];
		if (*s) {
			myrio_pkt_free(*s);
			t->pkt_done++;
		}
		*s = NULL;
	}
}

/* Frames the NIC cannot take as they are: runts are padded with zeros to 60 bytes (the NIC
 * does not pad, §5.3); checksum requests outside the NIC's offset limits (§5.5) are done
 * here. Returns false for a frame that must be dropped. */
static bool tx_prepare(const struct myri_tx_ring *t, struct myrio_pkt *p)
{
	if (p->len < MCP_TX_MIN_FRAME) {
		if (p->len == 0 || myrio_pkt_tailroom(p) < MCP_TX_MIN_FRAME - p->len)
			return false;
		memset(myrio_pkt_data(p) + p->len, 0, MCP_TX_MIN_FRAME - p->len);
		p->len = MCP_TX_MIN_FRAME;
	}
	if (p->len > t->max_frame)
		return false;
	if (p->ol_flags & MYRIO_PKT_TX_CSUM) {
		if (p->csum_start >= p->len || (uint32_t)p->csum_field + 2 > p->len ||
		    p->csum_field < p->csum_start)
			return false;
		if (p->csum_start > MCP_TX_MAX_CSUM_START ||
		    p->csum_field > MCP_TX_MAX_CSUM_FIELD) {
			uint8_t *f = myrio_pkt_data(p);
			uint64_t sum = csum_add(0, f + p->csum_start, p->len - p->csum_start);
			put_be16(f + p->csum_field, csum_finish(sum));
			p->ol_flags &= (uint16_t)~MYRIO_PKT_TX_CSUM;
		}
	}
	return true;
}

/* Copies a chain into the ring with the first descriptor's flags 0 (§5.7 steps 1-2):
 * forward when it does not wrap, else backwards ending with the first. */
static void tx_write_chain(struct myri_tx_ring *t, uint32_t slot, struct mcp_tx_desc *d,
			   unsigned cnt)
{
	uint8_t flags0 = d[0].flags;
	d[0].flags = 0;
	if (slot + cnt <= t->mask + 1) {
		sram_copy64(t->sram, slot * 16u, d, 16u * cnt);
	} else {
		for (unsigned i = cnt - 1; i > 0; i--)
			sram_copy64(t->sram, ((slot + i) & t->mask) * 16u, &d[i], 16);
		sram_copy64(t->sram, slot * 16u, &d[0], 16);
	}
	d[0].flags = flags0;
}

/* Encodes, writes, publishes and records one chain (any frame the fast path does not take).
 * Returns 1 when queued, 0 when the ring is full, -1 when the frame was dropped. */
static int __attribute__((noinline))
tx_slow(struct myri_rings *r, struct myrio_pkt *p, uint32_t free_slots)
{
	struct myri_tx_ring *t = &r->tx;
	struct mcp_tx_desc d[MCP_TX_MAX_DESC] __attribute__((aligned(8)));
	unsigned cnt = tx_prepare(t, p) ? tx_encode(t, p, d) : 0;
	if (cnt == 0) {
		r->tx_dropped_bad++;
		myrio_pkt_free(p);
		return -1;
	}
	if (cnt > free_slots)
		return 0;
	uint32_t slot = t->req & t->mask, word;
	tx_write_chain(t, slot, d, cnt);
	memcpy(&word, &d[0].pad, 4);
	mmio_wmb();
	mmio_write32_raw(t->sram, slot * 16u + 12u, word); /* §5.7 step 3 */
	for (unsigned k = 0; k + 1 < cnt; k++)
		t->info[(slot + k) & t->mask] = NULL;
	t->info[(slot + cnt - 1) & t->mask] = p;
	t->req += cnt;
	t->pkt_req++;
	return 1;
}

uint16_t rings_tx_burst(struct myri_rings *r, struct myrio_pkt **pkts, uint16_t n)
{
	status_poll(r);
	struct myri_tx_ring *t = &r->tx;
	/* Locals, as in rings_rx_burst: stores into packets and SRAM would force reloads.
	 * Fast-path chains have one descriptor each, so req alone counts them until the
	 * next slow-path frame (req0 marks where the count restarts). */
	const uint32_t bmask = t->boundary - 1, mask = t->mask;
	const uint32_t span = t->max_frame - MCP_TX_MIN_FRAME;
	volatile uint8_t *sram = t->sram;
	struct myrio_pkt **info = t->info;
	const uint32_t pkt_req0 = t->pkt_req;
	uint32_t req = t->req, req0 = req, req_end = t->done + mask;
	uint64_t bytes = 0;
	uint16_t i;
	for (i = 0; i < n; i++) {
		struct myrio_pkt *p = pkts[i];
		uint32_t len = p->len;
		uint64_t addr = p->iova + p->data_off;
		/* Fast path: one descriptor, no offload, no padding (§5.4). Words of the
		 * descriptor (§5.2): address high, low; pseudo_hdr_offset 0 | length; the
		 * commit word pad 0 | rdma_count 1 | cksum_offset 0 | flags, written with
		 * flags 0 first and published after a fence (§5.7). */
		if (__builtin_expect((len - MCP_TX_MIN_FRAME <= span) &
					 !(p->ol_flags & MYRIO_PKT_TX_CSUM) &
					 ((addr & bmask) + len <= bmask + 1) & (req != req_end),
				     1)) {
			uint32_t slot = req & mask;
			uint32_t w[4] __attribute__((aligned(8))) = {be32((uint32_t)(addr >> 32)),
								     be32((uint32_t)addr),
								     be32(len), be32(1u << 16)};
			sram_copy64(sram, slot * 16u, w, 16);
			uint32_t flags = MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO |
					 (len <= MCP_TX_SMALL_SIZE ? MCP_TX_FLAG_SMALL : 0);
			mmio_wmb();
			mmio_write32_raw(sram, slot * 16u + 12u, be32(1u << 16 | flags));
			info[slot] = p;
			req++;
			bytes += len;
			continue;
		}
		t->pkt_req += req - req0;
		t->req = req;
		int rc = tx_slow(r, p, req_end - req);
		req0 = req = t->req;
		if (rc > 0) {
			bytes += p->len;
		} else if (rc == 0) {
			r->tx_ring_full += n - i;
			break;
		} /* rc < 0: dropped and counted, but taken */
	}
	t->pkt_req += req - req0;
	t->req = req;
	r->tx_packets += t->pkt_req - pkt_req0;
	r->tx_bytes += bytes;
	return i;
}
