/* SPDX-License-Identifier: BSD-3-Clause */
/* Transmit: encoding frames into send descriptors (§5.2-§5.5; TSO chains in tx_tso.c) and
 * the commit protocol (§5.7): every chain is written with its first flags byte 0, and after
 * a fence the first descriptor's word 3 publishes it. */
#include <string.h>

#include "bus/bus.h"
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

/* Frees the packets of cnt one-descriptor chains from slot index done on, ring order. They
 * are pushed onto their pool's stack kept in locals and written back when the pool changes;
 * the refcount drops as in myrio_pkt_free (the stack may still hold a sent segment). */
static void tx_free_run(struct myri_tx_ring *t, uint32_t done, uint32_t cnt)
{
	struct myrio_pool *pool = NULL;
	struct myrio_pkt **sp = NULL;
	uint32_t slot = done & t->mask;
	while (cnt) {
		/* a contiguous stretch of slots, up to the end of the ring */
		uint32_t run = t->mask + 1 - slot < cnt ? t->mask + 1 - slot : cnt;
		struct myrio_pkt *const *pp = t->info + slot, *const *end = pp + run;
		cnt -= run;
		slot = 0;
		while (pp != end) {
			struct myrio_pkt *p = *pp++;
			if (__builtin_expect(p->pool != pool, 0)) {
				if (pool)
					pool->free_top = (uint32_t)(sp - pool->free_stack);
				pool = p->pool;
				sp = pool->free_stack + pool->free_top;
			}
			if (__builtin_expect(--p->refcnt == 0, 1))
				*sp++ = p;
			/* then two at a time while both are from this pool */
			while (end - pp >= 2) {
				struct myrio_pkt *a = pp[0], *b = pp[1];
				if (__builtin_expect(a->pool != pool, 0) ||
				    __builtin_expect(b->pool != pool, 0))
					break;
				pp += 2;
				if (__builtin_expect(--a->refcnt == 0, 1))
					*sp++ = a;
				if (__builtin_expect(--b->refcnt == 0, 1))
					*sp++ = b;
			}
		}
	}
	if (pool)
		pool->free_top = (uint32_t)(sp - pool->free_stack);
}

/* Frees the packets of `finished` chains from slot index done on, walking the slots: a
 * chain ends at the slot that holds its (last) packet untagged (as L marks the last
 * descriptor), so the finished chains end before req. Returns the new done. Out of line:
 * the one-descriptor case above is the hot one. */
static uint32_t __attribute__((noinline))
tx_walk(struct myri_tx_ring *t, uint32_t done, uint32_t finished)
{
	const uint32_t mask = t->mask;
	struct myrio_pkt *const *info = t->info;
	do {
		uintptr_t v = (uintptr_t)info[done++ & mask];
		if (v) {
			myrio_pkt_free((struct myrio_pkt *)(v & ~TX_INFO_MORE));
			finished -= !(v & TX_INFO_MORE);
		}
	} while (finished);
	return done;
}

void tx_ring_reap(struct myri_rings *r, uint32_t send_done_count)
{
	struct myri_tx_ring *t = &r->tx;
	uint32_t finished = send_done_count - t->pkt_done;
	if (__builtin_expect(finished > t->pkt_req - t->pkt_done, 0)) {
		/* the NIC claims more than was sent: trust only what was */
		counter_add(&r->tx_bad_done, 1);
		finished = t->pkt_req - t->pkt_done;
	}
	if (finished == 0)
		return;
	t->pkt_done += finished;
	uint32_t done = t->done;
	if ((int32_t)(t->multi_end - done) <= 0) {
		/* Only one-descriptor chains from here on: every slot holds a packet. */
		t->multi_end = done; /* keeps the comparison in range */
		t->done = done + finished;
		tx_free_run(t, done, finished);
		return;
	}
	t->done = tx_walk(t, done, finished);
}

void tx_ring_release(struct myri_tx_ring *t)
{
	if (!t->info)
		return;
	while (t->done != t->req) {
		struct myrio_pkt **s = &t->info[t->done++ & t->mask];
		uintptr_t v = (uintptr_t)*s;
		if (v) {
			myrio_pkt_free((struct myrio_pkt *)(v & ~TX_INFO_MORE));
			t->pkt_done += !(v & TX_INFO_MORE);
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
		if (!csum_tx_offsets_ok(p->len, p->csum_start, p->csum_field))
			return false;
		if (p->csum_start > MCP_TX_MAX_CSUM_START ||
		    p->csum_field > MCP_TX_MAX_CSUM_FIELD) {
			csum_tx_fill(myrio_pkt_data(p), p->len, p->csum_start, p->csum_field);
			p->ol_flags &= (uint16_t)~MYRIO_PKT_TX_CSUM;
		}
	}
	return true;
}

/* Copies a chain into the ring with the first descriptor's flags 0 (§5.7 steps 1-2):
 * forward when it does not wrap, else backwards ending with the first. A fence after every
 * 32 bytes, as Linux's myri10ge_submit_req: with BAR0 mapped write-combining the NIC then
 * gets the chain in bursts of at most two descriptors, in order (uncached, each store is
 * its own write anyway and the fence costs little). */
static void tx_write_chain(struct myri_tx_ring *t, uint32_t slot, struct mcp_tx_desc *d,
			   unsigned cnt)
{
	uint8_t flags0 = d[0].flags;
	d[0].flags = 0;
	if (slot + cnt <= t->mask + 1) {
		for (unsigned i = 0; i < cnt; i += 2) {
			sram_copy64(t->sram, (slot + i) * 16u, &d[i], cnt - i > 1 ? 32u : 16u);
			mmio_wmb();
		}
	} else {
		for (unsigned i = cnt - 1; i > 0; i--) {
			sram_copy64(t->sram, ((slot + i) & t->mask) * 16u, &d[i], 16);
			mmio_wmb();
		}
		sram_copy64(t->sram, slot * 16u, &d[0], 16);
	}
	d[0].flags = flags0;
}

/* Records who is freed when the chain that starts at slot completes: the packet at the
 * chain's last slot; for TSO every packet of the chain at the slot of its last descriptor,
 * all but the last tagged TX_INFO_MORE. */
static void tx_record(struct myri_tx_ring *t, uint32_t slot, struct myrio_pkt *p,
		      struct myrio_pkt *const *owner, unsigned cnt)
{
	for (unsigned k = 0; k + 1 < cnt; k++) {
		uintptr_t v = owner ? (uintptr_t)owner[k] : 0;
		t->info[(slot + k) & t->mask] = (struct myrio_pkt *)(v ? v | TX_INFO_MORE : 0);
	}
	t->info[(slot + cnt - 1) & t->mask] = owner ? owner[cnt - 1] : p;
}

/* Encodes, writes, publishes and records one chain (any frame the fast path does not take).
 * Returns 1 when queued (its bytes added to *bytes), 0 when the ring is full, -1 when the
 * frame was dropped. */
static int __attribute__((noinline))
tx_slow(struct myri_rings *r, struct myrio_pkt *p, uint32_t free_slots, uint64_t *bytes)
{
	struct myri_tx_ring *t = &r->tx;
	struct mcp_tx_desc d[MCP_TX_MAX_DESC_TSO] __attribute__((aligned(8)));
	struct myrio_pkt *owner_buf[MCP_TX_MAX_DESC_TSO], **owner = NULL;
	uint32_t total = p->len;
	unsigned cnt;
	if (p->ol_flags & MYRIO_PKT_TX_TSO) {
		owner = owner_buf;
		cnt = tx_encode_tso(t, p, d, owner, &total);
	} else {
		cnt = tx_prepare(t, p) ? tx_encode(t, p, d) : 0;
		total = p->len;
	}
	if (cnt == 0) {
		counter_add(&r->tx_dropped_bad, 1);
		myrio_pkt_free_req(p);
		return -1;
	}
	if (cnt > free_slots)
		return 0;
	uint32_t slot = t->req & t->mask, word;
	tx_write_chain(t, slot, d, cnt);
	memcpy(&word, &d[0].pad, 4);
	mmio_wmb();
	mmio_write32_raw(t->sram, slot * 16u + 12u, word); /* §5.7 step 3 */
	tx_record(t, slot, p, owner, cnt);
	t->req += cnt;
	if (cnt > 1)
		t->multi_end = t->req; /* tx_ring_reap walks slots until here */
	t->pkt_req++;
	counter_add(&r->tx_tso_chains, owner != NULL);
	*bytes += total;
	return 1;
}

/* The fast path: frames that take one descriptor, no offload, no padding (§5.4), up to
 * 1520 bytes (SMALL, §5.3, so the commit word is one constant), from pp up to end (no more
 * than the free slots). Returns where it stopped; adds the bytes sent to *bytes. A function
 * of its own so that its loop gets the registers. */
static __attribute__((noinline)) struct myrio_pkt **tx_fast(struct myri_tx_ring *t,
							    struct myrio_pkt **pp,
							    struct myrio_pkt **const end,
							    uint64_t *bytes_out)
{
	const uint64_t above = ~(uint64_t)(t->boundary - 1); /* address bits above tx_boundary */
	const uint32_t mask = t->mask;
	const uint32_t fast_max =
	    t->max_frame < MCP_TX_SMALL_SIZE ? t->max_frame : MCP_TX_SMALL_SIZE;
	const uint32_t span = fast_max - MCP_TX_MIN_FRAME;
	const uint32_t commit =
	    be32(1u << 16 | MCP_TX_FLAG_FIRST | MCP_TX_FLAG_NO_TSO | MCP_TX_FLAG_SMALL);
	volatile uint8_t *const sram = t->sram;
	struct myrio_pkt **const info = t->info;
	struct myrio_pkt **const start = pp;
	uint32_t slot = t->req & mask;
	uint64_t bytes = 0;
	for (; pp != end; pp++) {
		struct myrio_pkt *p = *pp;
		uint32_t len = p->len;
		uint64_t addr = p->iova + p->data_off;
		if (__builtin_expect(len - MCP_TX_MIN_FRAME > span, 0) ||
		    __builtin_expect(p->ol_flags & (MYRIO_PKT_TX_CSUM | MYRIO_PKT_TX_TSO), 0) ||
		    __builtin_expect(((addr + len - 1) ^ addr) & above, 0))
			break;
		/* Words 0-1: address high, low; word 2: pseudo_hdr_offset 0 | length (§5.2);
		 * after a fence, word 3 (pad 0 | rdma_count 1 | cksum_offset 0 | flags) as one
		 * 32-bit store publishes it (§5.7). Word 3 is written only then: the slot's
		 * flags are 0 until the commit (the NIC clears consumed slots), so the commit
		 * word needs no flags-0 pre-write. */
		volatile uint8_t *d = sram + slot * 16u;
		*(volatile uint64_t *)d = desc_be64(addr);
		*(volatile uint32_t *)(d + 8) = be32(len);
		mmio_wmb();
		*(volatile uint32_t *)(d + 12) = commit;
		info[slot] = p;
		slot = (slot + 1) & mask;
		bytes += len;
	}
	/* one descriptor per chain: req counts them */
	uint32_t took = (uint32_t)(pp - start);
	t->req += took;
	t->pkt_req += took;
	*bytes_out += bytes;
	return pp;
}

uint16_t rings_tx_burst(struct myri_rings *r, struct myrio_pkt **pkts, uint16_t n)
{
	status_poll(r);
	if (n == 0)
		return 0; /* a call only to reap completions; pkts may be NULL */
	struct myri_tx_ring *t = &r->tx;
	const uint32_t req_end = t->done + t->mask;
	uint64_t bytes = 0;
	uint32_t dropped = 0; /* taken but not sent */
	struct myrio_pkt **pp = pkts, **const end = pkts + n;
	while (pp != end) {
		/* As many frames as there are free slots, without a per-frame ring check. */
		uint32_t room = req_end - t->req;
		pp = tx_fast(t, pp, room < (uint32_t)(end - pp) ? pp + room : end, &bytes);
		if (pp == end)
			break;
		struct myrio_pkt *p = *pp;
		int rc = tx_slow(r, p, req_end - t->req, &bytes);
		if (rc == 0) {
			counter_add(&r->tx_ring_full, (uint64_t)(end - pp));
			break;
		}
		dropped += rc < 0; /* dropped and counted, but taken */
		pp++;
	}
	/* The last commit word leaves a write-combining buffer now, not whenever the buffer is
	 * evicted (Linux fences after every commit word; once per burst is enough here, the
	 * fence before each commit orders the chains). */
	mmio_wmb();
	uint16_t took = (uint16_t)(pp - pkts);
	counter_add(&r->tx_packets, took - dropped);
	counter_add(&r->tx_bytes, bytes);
	if (took)
		myrio_bus_posted(r->bus);
	return took;
}
