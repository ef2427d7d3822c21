/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive: posting buffers (§4.3) and consuming the completion ring (§4.6). */
#include <stddef.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "rings/rings.h"
#include "util/byteorder.h"

/* One buffer: its descriptor (address in network order) and data_off; p is read once (the
 * info store could alias pkts). */
static inline void post_one(volatile uint64_t *d, struct myrio_pkt **info, struct myrio_pkt *p)
{
	*d = desc_be64(p->iova + MYRIO_PKT_HEADROOM);
	p->data_off = MYRIO_PKT_HEADROOM + MCP_RX_PAD;
	*info = p;
}

/* Writes descriptors for slots slot..slot+7 (an aligned group) straight into SRAM, as
 * 64-bit words (high, low in network order): the first low word is invalid while the group
 * goes in as two 32-byte bursts, and is written last, alone, so the group becomes visible
 * at once (§4.3, §10.1 rule 5). Each buffer's data_off is set here (where the NIC will put
 * the frame), the other fields when it is handed up. */
static inline void post_group(volatile uint8_t *sram, uint32_t slot, struct myrio_pkt **info,
			      struct myrio_pkt *const *pkts)
{
	volatile uint64_t *d = (volatile uint64_t *)(sram + slot * 8u);
	info += slot;
	struct myrio_pkt *p0 = pkts[0];
	uint64_t a0 = p0->iova + MYRIO_PKT_HEADROOM;
	d[0] = desc_be64(a0 | MCP_RX_DESC_INVALID);
	p0->data_off = MYRIO_PKT_HEADROOM + MCP_RX_PAD;
	info[0] = p0;
#pragma GCC unroll 4
	for (unsigned i = 1; i < RX_GROUP / 2; i++)
		post_one(&d[i], &info[i], pkts[i]);
	mmio_wmb();
#pragma GCC unroll 4
	for (unsigned i = RX_GROUP / 2; i < RX_GROUP; i++)
		post_one(&d[i], &info[i], pkts[i]);
	mmio_wmb();
	mmio_write32_raw(sram, slot * 8u + 4u, be32((uint32_t)a0));
}

void rx_ring_post_group(struct myri_rx_ring *ring, struct myrio_pkt *const *pkts)
{
	post_group(ring->sram, ring->posted & ring->mask, ring->info, pkts);
	ring->posted += RX_GROUP;
}

/* A posted buffer was never handed up (its refcnt is not set): straight back to its pool. */
static inline void rx_buf_put(struct myrio_pkt *p)
{
	struct myrio_pool *pool = p->pool;
	pool->free_stack[pool->free_top++] = p;
}

void rx_ring_release_leftover(struct myri_rx_ring *ring)
{
	for (uint32_t i = 0; i < ring->leftover; i++) {
		uint32_t slot = (ring->posted + i) & ring->mask;
		rx_buf_put(ring->info[slot]);
		ring->info[slot] = NULL;
	}
	ring->leftover = 0;
}

/* Buffers come straight off the pool's free stack, 8 at a time: as many groups as the ring
 * has room for and the pool can give. */
uint32_t rx_ring_refill(struct myri_rx_ring *ring)
{
	struct myrio_pool *pool = ring->pool;
	uint32_t groups = (ring->mask + 1 - (ring->posted - ring->done)) / RX_GROUP;
	uint32_t top = pool->free_top;
	if (top / RX_GROUP < groups) {
		pool->alloc_failures++;
		counter_add(&ring->refill_failed, 1);
		groups = top / RX_GROUP;
	}
	if (groups == 0)
		return 0;
	volatile uint8_t *const sram = ring->sram;
	struct myrio_pkt **const info = ring->info, **const stack = pool->free_stack;
	const uint32_t mask = ring->mask;
	uint32_t posted = ring->posted;
	for (uint32_t g = 0; g < groups; g++) {
		top -= RX_GROUP;
		post_group(sram, posted & mask, info, stack + top);
		posted += RX_GROUP;
	}
	pool->free_top = top;
	ring->posted = posted;
	mmio_wmb();
	return groups * RX_GROUP;
}

void rx_ring_release(struct myri_rx_ring *ring)
{
	if (!ring->info)
		return;
	rx_ring_release_leftover(ring);
	while (ring->done != ring->posted) {
		uint32_t slot = ring->done++ & ring->mask;
		if (ring->info[slot])
			rx_buf_put(ring->info[slot]);
		ring->info[slot] = NULL;
	}
}

/* An entry whose length cannot be right (§4.6 says nothing from the device is trusted):
 * longer than the MTU allows, or no buffer of its kind is posted. Drop it; the buffer the
 * NIC would have used for such a length goes back to the pool and is posted again. */
static void rx_bad_completion(struct myri_rings *r, struct myri_rx_ring *ring)
{
	counter_add(&r->rx_bad_completion, 1);
	r->poll_countdown = 1; /* the rings may be out of step: a reset resynchronizes */
	if (ring->posted != ring->done) {
		uint32_t slot = ring->done++ & ring->mask;
		rx_buf_put(ring->info[slot]);
		ring->info[slot] = NULL;
	}
}

/* Pairs of adjacent packet fields written with one store each (little-endian host, as
 * util/byteorder.h): ol_flags | rx_csum, refcnt | port. */
_Static_assert(offsetof(struct myrio_pkt, rx_csum) == offsetof(struct myrio_pkt, ol_flags) + 2,
	       "ol_flags, rx_csum adjacent");
_Static_assert(offsetof(struct myrio_pkt, port) == offsetof(struct myrio_pkt, refcnt) + 2,
	       "refcnt, port adjacent");

/* Why rx_take stopped before out reached end. */
enum rx_stop { RX_GOING, RX_EMPTY, RX_BAD };

/* Takes completion entries into out[] until out reaches end or *stop says why not: the ring
 * is empty (RX_EMPTY), or an entry was dropped (RX_BAD: what follows may be out of step).
 * With check false the caller guarantees both rings hold at least end - out posted buffers
 * (each entry takes at most one), so only the length is checked per entry. */
static inline __attribute__((always_inline)) struct myrio_pkt **
rx_take(struct myri_rings *r, struct myrio_pkt **out, struct myrio_pkt **const end, uint8_t *stop,
	const bool check)
{
	/* Everything the loop needs in locals: pkts may alias any memory, so fields read
	 * through r would be reloaded after every store into a packet. */
	volatile uint32_t *const ring = (volatile uint32_t *)r->rx_done;
	volatile uint32_t *const ring_end = ring + r->rx_done_mask + 1;
	volatile uint32_t *e = ring + (r->rx_done_idx & r->rx_done_mask);
	const uint32_t small_size = r->small_size, max_frame = r->max_frame;
	const uint32_t refcnt_port = 1u | (uint32_t)r->port_index << 16;
	struct myrio_pkt **const s_info = r->small.info, **const b_info = r->big.info;
	const uint32_t s_mask = r->small.mask, b_mask = r->big.mask;
	uint32_t s_done = r->small.done, b_done = r->big.done;
	const uint32_t s_posted = r->small.posted, b_posted = r->big.posted;
	struct myrio_pkt **const start = out;
	uint32_t bytes = 0; /* at most 65535 frames of at most 65535 bytes: no overflow */
	while (out != end) {
		/* checksum and length arrive in one 4-byte write (§4.6): v = sum << 16 | len */
		uint32_t v = be32(*e);
		uint32_t len = v & 0xffffu;
		if (len == 0) {
			*stop = RX_EMPTY;
			break;
		}
		dma_rmb(); /* frame data was written before the entry */
		*e = 0;
		if (++e == ring_end)
			e = ring;
		struct myrio_pkt *p;
		if (len <= small_size) {
			if (check && __builtin_expect(s_posted == s_done, 0))
				goto bad;
			p = s_info[s_done++ & s_mask];
		} else {
			if (__builtin_expect(len > max_frame, 0) ||
			    (check && __builtin_expect(b_posted == b_done, 0)))
				goto bad;
			p = b_info[b_done++ & b_mask];
		}
		/* data_off was set when the buffer was posted */
		p->len = len;
		uint32_t flags_csum = (v & 0xffff0000u) | MYRIO_PKT_RX_CSUM_PARTIAL;
		memcpy(&p->ol_flags, &flags_csum, 4);
		memcpy(&p->refcnt, &refcnt_port, 4);
		p->next = NULL;
		bytes += len;
		*out++ = p;
		continue;
	bad:
		r->small.done = s_done;
		r->big.done = b_done;
		rx_bad_completion(r, len <= small_size ? &r->small : &r->big);
		s_done = r->small.done;
		b_done = r->big.done;
		/* The rings may be out of step with the NIC from here on: hand nothing more
		 * up before the reset the watchdog was asked for. */
		*stop = RX_BAD;
		break;
	}
	r->small.done = s_done;
	r->big.done = b_done;
	r->rx_done_idx = (uint32_t)(e - ring);
	counter_add(&r->rx_packets, (uint64_t)(out - start));
	counter_add(&r->rx_bytes, bytes);
	return out;
}

/* Functions of their own so that their loops get the registers. */
static __attribute__((noinline)) struct myrio_pkt **rx_take_unchecked(struct myri_rings *r,
								      struct myrio_pkt **out,
								      struct myrio_pkt **end,
								      uint8_t *stop)
{
	return rx_take(r, out, end, stop, false);
}

static __attribute__((noinline)) struct myrio_pkt **
rx_take_checked(struct myri_rings *r, struct myrio_pkt **out, struct myrio_pkt **end, uint8_t *stop)
{
	return rx_take(r, out, end, stop, true);
}

uint16_t rings_rx_burst(struct myri_rings *r, struct myrio_pkt **pkts, uint16_t n)
{
	status_poll(r);
	uint8_t stop = RX_GOING;
	uint16_t got = 0;
	if (n) {
		/* Entries up to the fewer posted buffers of the two rings cannot find a ring
		 * empty. */
		uint32_t s_avail = r->small.posted - r->small.done;
		uint32_t b_avail = r->big.posted - r->big.done;
		uint32_t safe = s_avail < b_avail ? s_avail : b_avail;
		struct myrio_pkt **out = pkts, **const end = pkts + n;
		if (safe)
			out = rx_take_unchecked(r, out, safe < n ? out + safe : end, &stop);
		if (out != end && stop == RX_GOING)
			out = rx_take_checked(r, out, end, &stop);
		got = (uint16_t)(out - pkts);
	}
	/* Refill in groups of 8 from the pools (§4.3). */
	uint32_t refilled = 0;
	if (r->small.posted - r->small.done + RX_GROUP <= r->small.mask + 1)
		refilled = rx_ring_refill(&r->small);
	if (r->big.posted - r->big.done + RX_GROUP <= r->big.mask + 1)
		refilled |= rx_ring_refill(&r->big);
	if (refilled)
		myrio_bus_posted(r->bus);
	if (stop == RX_EMPTY && r->rx_token)
		status_return_rx_token(r);
	return got;
}
