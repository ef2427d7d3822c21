/* SPDX-License-Identifier: BSD-3-Clause */
/* The status-block handshake (§6.5), also in polled use: without it the NIC stops reporting
 * send completions (§10.1 rule 6). In INTx mode the firmware also waits for the deassert
 * word before it sends another update. */
#include "bus/bus.h"
#include "bus/mmio.h"
#include "rings/rings.h"
#include "util/byteorder.h"

static void snapshot_counters(struct myri_rings *r, const volatile struct mcp_irq_data *s)
{
	struct myri_fw_counters *d = &r->snap;
#define COPY(f) counter32_set(&d->f, be32(s->f));
	MYRI_FW_COUNTERS(COPY)
#undef COPY
}

uint8_t status_handle(struct myri_rings *r)
{
	volatile struct mcp_irq_data *s = r->status;
	uint8_t valid = s->valid;
	if (!valid)
		return 0;
	dma_rmb(); /* the block was written before valid */
	counter_add(&r->irq_updates, 1);
	uint32_t send_done = be32(s->send_done_count);
	uint8_t stats_updated = s->stats_updated, link_down = s->link_down;
	if (stats_updated) {
		snapshot_counters(r, s);
		uint32_t link = be32(s->link_up);
		if (link != counter32_read(&r->link_up)) {
			counter32_set(&r->link_up, link);
			counter_add(&r->link_changes, 1);
		}
		r->link_down_events += link_down;
	}
	/* MSI style: the host clears valid itself (step 3) before re-arming, so the next
	 * update cannot be overwritten. */
	s->valid = 0;
	if (valid & MCP_VALID_RX)
		r->rx_token = true;
	tx_ring_reap(r, send_done);
	mmio_wmb();
	/* INTx: deassert, then claim. The host cleared valid itself before either store
	 * reaches the NIC, so the NIC's own clearing of valid after the deassert (the wait
	 * of Linux's myri10ge_deassert_wait and iPXE) always lands before the next update
	 * and needs no wait here: Linux's myri10ge_deassert_wait=0 order. With MSI the store
	 * goes to host memory: cheaper than a branch. */
	mmio_write32(r->deassert, 0, 0);
	mmio_write32(r->claim1, 0, MCP_CLAIM_VALUE); /* step 5: the NIC may interrupt again */
	/* Sends still unreported: the next update is one the host will wait for (a sender
	 * whose pool is empty sleeps until it comes), so a model asleep must see the claim
	 * now, not at its next timer (docs/model-daemon.md, "Idle"). */
	if (r->tx.pkt_req != r->tx.pkt_done)
		myrio_bus_posted(r->bus);
	return valid;
}

void status_return_rx_token(struct myri_rings *r)
{
	r->rx_token = false;
	mmio_wmb();
	mmio_write32(r->claim0, 0, MCP_CLAIM_VALUE); /* step 6 */
}
