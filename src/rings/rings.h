/* SPDX-License-Identifier: BSD-3-Clause */
/* The data path of one slice: small and big receive rings (§4.3), the completion ring
 * (§4.6), the send ring (§5.7) and the status-block handshake (§6.5).
 *
 * Everything here works on memory: the rings in BAR0 (SRAM) at offsets the NIC gave, the
 * completion ring and status block in DMA memory; a burst that posted work tells the bus
 * (a sleeping model wakes). Bring-up (src/mcp/) fills in the pointers; the port calls
 * rings_rx_burst / rings_tx_burst.
 */
#ifndef MYRIO_RINGS_H
#define MYRIO_RINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "mcp/mcp_abi.h"
#include "myrio/pkt.h"
#include "util/byteorder.h"
#include "util/counter.h"

#define RX_GROUP 8u

struct myrio_bus;

/* A 64-bit value as its 8 bytes in network order: descriptor words 0-1 or 2-3 in one store. */
static inline uint64_t desc_be64(uint64_t v)
{
	return be64(v);
}

struct myri_rx_ring {
	volatile uint8_t *sram;	 /* BAR0 + GET_SMALL/BIG_RX_OFFSET */
	struct myrio_pkt **info; /* slot -> posted buffer */
	struct myrio_pool *pool;
	uint32_t mask;	 /* entries - 1 */
	uint32_t posted; /* descriptors written, free-running */
	uint32_t done;	 /* buffers consumed, free-running */
	counter64 refill_failed;
	/* buffers a recovery could not post again (not a group of 8): kept in info[] after
	 * posted until the owner gives them back to the pool (watchdog_queues.c) */
	uint32_t leftover;
	/* posted address = pkt->iova + MYRIO_PKT_HEADROOM; the NIC writes at +2 (§4.4) */
};

struct myri_tx_ring {
	volatile uint8_t *sram;	 /* BAR0 + GET_SEND_OFFSET */
	struct myrio_pkt **info; /* a chain's packet at its last slot, NULL elsewhere; a TSO
				  * chain's other packets at their last slots | TX_INFO_MORE */
	uint32_t mask;
	uint32_t req;	    /* descriptors written, free-running */
	uint32_t done;	    /* descriptors released, free-running */
	uint32_t pkt_req;   /* chains written */
	uint32_t pkt_done;  /* chains the NIC reported read (send_done_count) */
	uint32_t multi_end; /* req after the last chain of more than one descriptor */
	uint32_t boundary;  /* tx_boundary (§2.1, §5.4) */
	uint32_t max_frame; /* longest frame accepted */
};

/* The firmware's counters of the status block (§6.1) as of its last stats update, host
 * order: copied by the slice's thread, read by any (the port's stats, which name them
 * in this order). */
#define MYRI_FW_COUNTERS(X)                                                                        \
	X(dropped_pause)                                                                           \
	X(dropped_unicast_filtered)                                                                \
	X(dropped_bad_crc32)                                                                       \
	X(dropped_bad_phy)                                                                         \
	X(dropped_multicast_filtered)                                                              \
	X(dropped_link_overflow)                                                                   \
	X(dropped_link_error_or_filtered)                                                          \
	X(dropped_runt)                                                                            \
	X(dropped_overrun)                                                                         \
	X(dropped_no_small_buffer)                                                                 \
	X(dropped_no_big_buffer)                                                                   \
	X(rdma_tags_available)
struct myri_fw_counters {
#define MYRI_FW_COUNTER_FIELD(f) counter32 f;
	MYRI_FW_COUNTERS(MYRI_FW_COUNTER_FIELD)
#undef MYRI_FW_COUNTER_FIELD
};

struct myri_rings {
	/* receive */
	volatile struct mcp_slot *rx_done; /* completion ring */
	uint32_t rx_done_idx, rx_done_mask;
	uint32_t small_size; /* SET_SMALL_BUFFER_SIZE: frames up to this use the small ring */
	uint32_t max_frame;  /* SET_MTU value; longer completions are impossible */
	uint16_t port_index;
	struct myri_rx_ring small, big;
	/* transmit */
	struct myri_tx_ring tx;
	/* status block handshake */
	volatile struct mcp_irq_data *status;
	volatile uint8_t *claim0, *claim1; /* BAR0 + GET_IRQ_ACK_OFFSET (+4) */
	volatile uint8_t *deassert; /* INTx: BAR0 + GET_IRQ_DEASSERT_OFFSET; MSI: deassert_sink */
	uint32_t deassert_sink;	    /* MSI: the deassert store lands here, not on the NIC */
	bool rx_token;		    /* the NIC handed us the receive token (valid bit 0) */
	counter32 link_up;	    /* last reported link_up (§6.1), 3 = unknown */
	uint32_t link_down_events;
	struct myri_fw_counters snap;
	/* data-path calls until the owner's next slow-path look (the driver's watchdog counts
	 * it down per burst); a bad completion sets it to 1: the rings may be out of step */
	uint32_t poll_countdown;
	/* told after a burst posted work (myrio_bus_posted): receive buffers or sends */
	struct myrio_bus *bus;
	/* driver counters: written by the queue's thread (tx_lost_reset and the counters
	 * restored after a reset: by the recovery, the queue's thread held out), read by any */
	counter64 rx_packets, rx_bytes, tx_packets, tx_bytes;
	counter64 rx_bad_completion, tx_ring_full, tx_dropped_bad, link_changes;
	counter64 tx_bad_done;	 /* send_done_count values beyond what was posted */
	counter64 tx_tso_chains; /* TSO requests queued (§5.6) */
	counter64 irq_updates;	 /* status-block updates: the interrupts raised, or polled */
	counter64 tx_lost_reset; /* frames still in the send ring when the NIC was reset */
	/* a recovery of a port of several queues reset the NIC under these rings: the owner
	 * frees what needs its pools at its next burst (watchdog_queues.c) */
	bool restart;
};

uint16_t rings_rx_burst(struct myri_rings *r, struct myrio_pkt **pkts, uint16_t n);
uint16_t rings_tx_burst(struct myri_rings *r, struct myrio_pkt **pkts, uint16_t n);

/* Receive rings */
void rx_ring_post_group(struct myri_rx_ring *ring, struct myrio_pkt *const *pkts);
/* Posts groups of 8 until the ring is full or the pool runs dry; returns buffers posted. */
uint32_t rx_ring_refill(struct myri_rx_ring *ring);
/* Hands every posted buffer back to its pool (after ETHERNET_DOWN). */
void rx_ring_release(struct myri_rx_ring *ring);
/* Hands the buffers a recovery left over (leftover) back to the pool. */
void rx_ring_release_leftover(struct myri_rx_ring *ring);

/* Send ring */
/* Encodes one frame into descs (at most MCP_TX_MAX_DESC); returns the count, or 0 when the
 * frame needs more descriptors than allowed. The first descriptor's flags are final; the
 * caller publishes them last. */
unsigned tx_encode(const struct myri_tx_ring *ring, const struct myrio_pkt *p,
		   struct mcp_tx_desc *descs);
/* Encodes a TSO request (MYRIO_PKT_TX_TSO: p and tso_npkts - 1 packets along next) into
 * descs (at most MCP_TX_MAX_DESC_TSO, §5.6); returns the count, or 0 when the request is
 * malformed or needs more descriptors. owner (may be NULL) gets, per descriptor, the packet
 * whose last byte it holds, else NULL; *total the request's bytes. */
unsigned tx_encode_tso(const struct myri_tx_ring *ring, const struct myrio_pkt *p,
		       struct mcp_tx_desc *descs, struct myrio_pkt **owner, uint32_t *total);
/* In info[], a packet of a TSO chain that is not the chain's last carries this bit: it is
 * freed with the chain but does not end it. */
#define TX_INFO_MORE ((uintptr_t)1)
/* Frees chains up to the NIC's send_done_count. */
void tx_ring_reap(struct myri_rings *r, uint32_t send_done_count);
/* Frees every chain still in the ring (after ETHERNET_DOWN). */
void tx_ring_release(struct myri_tx_ring *ring);

/* Status block (§6.5): handles a pending update, if any. Returns its valid byte (0 = none). */
uint8_t status_handle(struct myri_rings *r);
static inline uint8_t status_poll(struct myri_rings *r)
{
	if (__builtin_expect(r->status->valid == 0, 1))
		return 0;
	return status_handle(r);
}
/* Gives the receive token back once the completion ring is empty (claim0). */
void status_return_rx_token(struct myri_rings *r);

#endif
