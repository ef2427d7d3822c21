/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP segmentation offload: encoding a request (a chain of packets, headers in front of the
 * first payload) into one send chain (§5.6), the layout Linux myri10ge and FreeBSD mxge
 * produce.
 *
 * Walking the chain, every buffer is cut at tx_boundary (§5.4) and the header descriptors
 * end exactly at the end of the TCP header. A signed offset follows the bytes: negative
 * inside the headers, the offset inside the current segment (0..MSS-1) in the payload.
 * From it come the flags (FIRST on a descriptor that starts a segment, CHOP on one inside
 * which a segment ends, ALIGN_ODD from its parity) and the "runs" whose first descriptor
 * carries the run's descriptor count in rdma_count. */
#include "rings/rings.h"
#include "util/byteorder.h"

/* Closes the run that starts at *run and ends with descriptor last (inclusive). */
static inline void run_close(struct mcp_tx_desc *d, unsigned *run, unsigned last)
{
	d[*run].rdma_count = (uint8_t)(last - *run + 1);
}

unsigned tx_encode_tso(const struct myri_tx_ring *ring, const struct myrio_pkt *p,
		       struct mcp_tx_desc *d, struct myrio_pkt **owner, uint32_t *total_out)
{
	const uint32_t mss = p->tso_mss, hlen = p->tso_hlen, npkts = p->tso_npkts;
	const uint32_t bmask = ring->boundary - 1;
	/* The TCP header offset goes into cksum_offset (IPv4, §5.6): a byte. Every segment
	 * the NIC cuts must be a frame the port may send. */
	if (mss == 0 || mss > MCP_TX_TSO_MAX_MSS || hlen > MCP_TX_TSO_MAX_HDR ||
	    hlen + mss > ring->max_frame ||
	    p->csum_start < 14 + 20 || (uint32_t)p->csum_start + 20 > hlen || p->len < hlen ||
	    npkts == 0 || npkts > MCP_TX_MAX_DESC_TSO)
		return 0;
	const uint16_t pho = be16((uint16_t)mss);
	const uint8_t small = mss <= MCP_TX_SMALL_SIZE ? MCP_TX_FLAG_SMALL : 0;
	uint32_t cko = p->csum_start;
	int32_t off = -(int32_t)hlen; /* < 0: in the headers; else offset in the segment */
	uint8_t flags = MCP_TX_FLAG_TSO_HDR | MCP_TX_FLAG_FIRST;
	unsigned n = 0, run = 0;
	uint32_t total = 0;
	const struct myrio_pkt *q = p;
	for (uint32_t k = 0; k < npkts; k++, q = q->next) {
		if (!q || q->len == 0)
			return 0;
		uint64_t addr = myrio_pkt_data_iova(q);
		uint32_t len = q->len;
		total += len;
		while (len) {
			if (n == MCP_TX_MAX_DESC_TSO)
				return 0;
			uint32_t room = ring->boundary - (uint32_t)(addr & bmask);
			uint32_t seg = len < room ? len : room;
			uint8_t next = flags & (uint8_t)~MCP_TX_FLAG_FIRST;
			int32_t after = off + (int32_t)seg;
			bool run_ends = false; /* the next descriptor starts a run */
			if (off < 0) {
				if (after >= 0) { /* the headers end here: cut there */
					seg = (uint32_t)-off;
					after = 0;
					next = MCP_TX_FLAG_TSO_PLD | MCP_TX_FLAG_FIRST | small;
					run_ends = true;
				}
			} else {
				bool chop = (uint32_t)after > mss;
				after = (int32_t)((uint32_t)after % mss);
				if (after == 0) { /* the next descriptor starts a segment */
					next |= MCP_TX_FLAG_FIRST;
					run_ends = true;
				}
				if (chop) {
					flags |= MCP_TX_FLAG_TSO_CHOP;
					if (!run_ends) {
						/* a segment begins inside: it starts a run */
						run_close(d, &run, n);
						run = n;
					}
				}
			}
			struct mcp_tx_desc *x = &d[n];
			x->addr_high = be32((uint32_t)(addr >> 32));
			x->addr_low = be32((uint32_t)addr);
			x->pseudo_hdr_offset = pho; /* the MSS (§5.6) */
			x->length = be16((uint16_t)seg);
			x->pad = 0;
			x->rdma_count = 1;
			x->cksum_offset = (uint8_t)cko;
			x->flags = flags | ((uint32_t)off & 1 ? MCP_TX_FLAG_ALIGN_ODD : 0);
			if (owner)
				owner[n] = NULL;
			if (run_ends) {
				run_close(d, &run, n);
				run = n + 1;
			}
			cko = cko > seg ? cko - seg : 0;
			addr += seg;
			len -= seg;
			off = after;
			flags = next;
			n++;
		}
		if (owner)
			owner[n - 1] = (struct myrio_pkt *)q;
	}
	if (total <= hlen || total - hlen > MCP_TX_TSO_MAX_PAYLOAD)
		return 0; /* no payload after the headers, or more than 64 KiB */
	if (run < n)
		run_close(d, &run, n - 1);
	/* The descriptors of the final segment: back to the last one with CHOP or FIRST. */
	for (unsigned i = n; i-- > 0;) {
		d[i].flags |= MCP_TX_FLAG_TSO_LAST;
		if (d[i].flags & (MCP_TX_FLAG_TSO_CHOP | MCP_TX_FLAG_FIRST))
			break;
	}
	*total_out = total;
	return n;
}
