/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path (§4): a frame arriving from the cable is filtered (§4.7), placed into the
 * next small buffer or enough big buffers (§4.4) at +2, the consumed descriptors are
 * re-invalidated, and one 4-byte completion entry {sum from byte 14, BE16 length} (§4.6)
 * is stored after the data. A frame is never partially consumed: without enough valid
 * buffers it is dropped and counted. */
#include <inttypes.h>
#include <string.h>

#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define RX_INVALID 0xFFFFFFFFu
#define RSS_HDR_MAX 78u /* Ethernet, IPv4 with options, the two ports */
#define RX_SHORT 256u	/* bytes: a one-fragment frame shorter is copied, then summed */

/* Frame bytes [off, off + n) into dst as the sender's buffers hold them (RSS reads the
 * addresses and ports, which the inserted checksum never touches). */
static void frame_copy(uint8_t *dst, const struct sim_frame *f, uint32_t off, uint32_t n)
{
	const struct sim_frag *fr = f->frags;
	uint32_t done = 0;
	for (unsigned i = 0; i < f->nfrags && done < n; i++) {
		if (off >= fr[i].len) {
			off -= fr[i].len;
			continue;
		}
		uint32_t k = fr[i].len - off;
		if (k > n - done)
			k = n - done;
		memcpy(dst + done, fr[i].p + off, k);
		done += k;
		off = 0;
	}
}

static inline uint16_t swap16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/* The receive DMA (§4.4): the frame's bytes, in order, into the host's buffers, in one
 * pass that also sums them: from byte 14 to `cut` for the completion (§4.6), from `cut` to
 * the end for the checksum the sender's NIC inserts (cut = sum_from; the frame's length
 * when it inserts none). Sums are of folded parts, each aligned on its range's start. */
struct rx_copy {
	const struct sim_frame *f;
	unsigned frag; /* where the next byte comes from */
	uint32_t in;   /* its offset in that fragment */
	uint32_t pos;  /* its offset in the frame */
	uint32_t cut;
	uint64_t head, tail;
	/* the first buffers written, where the inserted checksum goes (within 129 bytes
	 * of the start, §5.5, §5.6; a big buffer holds 62 bytes or more) */
	uint8_t *buf[4];
	uint32_t buf_at[4], buf_len[4];
	unsigned nbuf;
};

static void rx_copy_init(struct rx_copy *c, const struct sim_frame *f)
{
	c->f = f;
	c->frag = c->in = c->pos = 0;
	c->cut =
	    f->patch_off >= 0 && f->sum_from >= 14 && f->sum_from <= f->len ? f->sum_from : f->len;
	c->head = c->tail = 0;
	c->nbuf = 0;
}

/* k bytes from src at frame offset pos into dst, each range's part summed into its sum
 * as it is copied (csum_copy16). */
static void rx_piece(struct rx_copy *c, uint8_t *dst, const uint8_t *src, uint32_t pos, uint32_t k)
{
	uint32_t end = pos + k, at = pos < 14 ? 14 : pos;
	if (pos == 0 && end >= 14) /* the Ethernet header: copied, never summed */
		memcpy(dst, src, 14); /* a fixed size: no call */
	else if (at > pos)
		memcpy(dst, src, (at < end ? at : end) - pos);
	while (at < end) {
		bool head = at < c->cut;
		uint32_t stop = head && c->cut < end ? c->cut : end;
		uint16_t part = csum_copy16(dst + (at - pos), src + (at - pos), stop - at);
		uint32_t rel = at - (head ? 14 : c->cut); /* parts align on their range's start */
		*(head ? &c->head : &c->tail) += rel & 1 ? swap16(part) : part;
		at = stop;
	}
}

/* The next n bytes of the frame into the host buffer dst. */
static void rx_copy_to(struct rx_copy *c, uint8_t *dst, uint32_t n)
{
	if (c->nbuf < 4) {
		c->buf[c->nbuf] = dst;
		c->buf_at[c->nbuf] = c->pos;
		c->buf_len[c->nbuf++] = n;
	}
	const struct sim_frame *f = c->f;
	while (n && c->frag < f->nfrags) {
		const struct sim_frag *fr = &f->frags[c->frag];
		uint32_t k = fr->len - c->in < n ? fr->len - c->in : n;
		rx_piece(c, dst, fr->p + c->in, c->pos, k);
		dst += k, n -= k, c->pos += k, c->in += k;
		if (c->in == fr->len) {
			c->frag++;
			c->in = 0;
		}
	}
}

/* The common short frame (a minimum frame, an ACK): one fragment into one buffer, copied
 * at once and summed from the source, without rx_copy_to's walk. */
static void rx_copy_short(struct rx_copy *c, uint8_t *dst)
{
	const struct sim_frame *f = c->f;
	const uint8_t *p = f->frags[0].p;
	uint32_t len = f->len;
	memcpy(dst, p, len);
	c->head = csum_partial16(p + 14, c->cut - 14);
	if (c->cut < len)
		c->tail = csum_partial16(p + c->cut, len - c->cut);
	c->buf[0] = dst;
	c->buf_at[0] = 0;
	c->buf_len[0] = len;
	c->nbuf = 1;
	c->pos = len;
}

/* Once every byte is in: the sender's checksum goes into the host's copy, and the
 * completion's sum over bytes [14, len) is returned as the host will find them. */
static uint16_t rx_copy_finish(struct rx_copy *c)
{
	const struct sim_frame *f = c->f;
	uint16_t tail = csum_fold(c->tail);
	uint16_t sum = csum16_add(csum_fold(c->head), (c->cut - 14) & 1 ? swap16(tail) : tail);
	if (c->cut == f->len || (uint32_t)f->patch_off < c->cut ||
	    (uint64_t)(uint32_t)f->patch_off + 2 > f->len)
		return sum;
	uint32_t p = (uint32_t)f->patch_off;
	uint8_t *at[2] = {NULL, NULL};
	if (c->nbuf && p + 2 <= c->buf_len[0]) { /* the common case: the first buffer holds it */
		at[0] = c->buf[0] + p;
		at[1] = at[0] + 1;
	}
	for (unsigned i = 0; i < c->nbuf && !at[1]; i++)
		for (unsigned j = 0; j < 2; j++)
			if (p + j >= c->buf_at[i] && p + j - c->buf_at[i] < c->buf_len[i])
				at[j] = c->buf[i] + (p + j - c->buf_at[i]);
	if (!at[0] || !at[1]) /* cannot be: the field lies within the first buffers */
		return sum;
	uint16_t nw = sim_frame_csum_field(f, tail);
	uint16_t ov = (uint16_t)(*at[0] << 8 | *at[1]);
	*at[0] = (uint8_t)(nw >> 8);
	*at[1] = (uint8_t)nw;
	if ((p - 14) & 1) { /* the field sits across two 16-bit words of the sum */
		ov = swap16(ov);
		nw = swap16(nw);
	}
	return csum16_add(csum16_sub(sum, ov), nw);
}

static bool mcast_joined(const struct sim_nic *nic, const uint8_t *d)
{
	for (unsigned i = 0; i < nic->n_mcast; i++)
		if (!memcmp(nic->mcast[i], d, 6))
			return true;
	return false;
}

/* §4.7: true to accept. */
static bool filter(struct sim_nic *nic, const uint8_t *h)
{
	const uint8_t *d = h;
	if (__builtin_expect(!(d[0] & 1), 1)) {
		if (__builtin_expect(!memcmp(d, nic->mac, 6), 1) || nic->promisc)
			return true;
		nic->ctr.dropped_unicast_filtered++;
		return false;
	}
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t reserved[5] = {0x01, 0x80, 0xc2, 0x00, 0x00};
	if (!memcmp(d, bcast, 6)) {
		if (!nic->fw.rx_filter_bug || nic->allmulti || nic->promisc)
			return true;
		nic->ctr.dropped_multicast_filtered++;
		return false;
	}
	if (!memcmp(d, reserved, 5) && d[5] < 0x10) {
		if (d[5] == 0x01 && get_be16(h + 12) == 0x8808) {
			nic->ctr.dropped_pause++; /* consumed by the MAC */
			return false;
		}
		if (nic->promisc || mcast_joined(nic, d))
			return true;
		nic->ctr.dropped_link_error_or_filtered++;
		return false;
	}
	if (nic->promisc || nic->allmulti || mcast_joined(nic, d))
		return true;
	nic->ctr.dropped_multicast_filtered++;
	return false;
}

/* The slice's completion ring, translated once per DMA-table generation. */
static uint32_t *intrq_slot(struct sim_nic *nic, struct sim_slice *q)
{
	const struct sim_dma_table *t = atomic_load_explicit(&nic->dma.table, memory_order_acquire);
	if (__builtin_expect(t->gen != q->intrq_gen || !q->intrq_va, 0)) {
		q->intrq_va = (uint32_t *)sim_dma_slow(nic, q->intrq_iova, nic->intrq_bytes,
						       "completion ring");
		q->intrq_gen = t->gen;
		if (!q->intrq_va)
			return NULL;
	}
	return q->intrq_va + (q->intrq_idx & nic->intrq_mask);
}

static inline void check_align(struct sim_nic *nic, uint64_t a, uint32_t len, bool small)
{
	if (nic->relax_align)
		return;
	bool bad = (a & 7) || (small && (a & 4095) + len + 2 > 4096);
	if (__builtin_expect(!bad, 1))
		return;
	nic->st.rx_misaligned++;
	if (sim_nic_ratelimit(nic, SIM_DIAG_RX))
		log_warn("%s: rx %s buffer at IOVA 0x%" PRIx64 " is not 8-byte aligned or crosses "
			 "a 4 KiB page; real hardware needs RELAX_RXBUFFER_ALIGNMENT for that "
			 "(§4.4)",
			 nic->name, small ? "small" : "big", a);
}

static inline uint64_t desc_addr(struct sim_nic *nic, uint32_t off, uint32_t lo_raw)
{
	return (uint64_t)sim_rd32(nic, off) << 32 | __builtin_bswap32(lo_raw);
}

/* Big buffers a frame of len bytes takes (2 bytes of padding first), or 0 while the host has
 * set no big buffer size: a reset (a client the daemon dropped) clears it while a peer's
 * send may still ask. */
static uint32_t big_buffers_needed(const struct sim_nic *nic, uint32_t len)
{
	uint32_t big = nic->big_size;
	if (nic->always_n)
		return nic->always_n;
	return big ? (uint32_t)(((uint64_t)len + 2 + big - 1) / big) : 0;
}

/* True if `frames` frames of len bytes would find their buffers posted in one slice's
 * rings. */
static bool slice_has_room(const struct sim_nic *nic, const struct sim_slice *q, uint32_t len,
			   uint32_t frames)
{
	const struct sim_rxring *r;
	uint32_t need = 1;
	if (len <= nic->small_size) {
		r = &q->small;
	} else {
		r = &q->big;
		need = big_buffers_needed(nic, len);
	}
	need *= frames;
	if (!need || need > r->mask + 1)
		return true; /* can never fit: dropped as overrun, or by the driver's ring size */
	/* valid slots are a contiguous run from cons: the host posts in order and every
	 * consumed slot is re-invalidated */
	uint32_t off = r->off + ((r->cons + need - 1) & r->mask) * 8 + 4;
	return sim_rd32_raw(nic, off) != RX_INVALID;
}

/* With several slices, a frame for a slice without buffers waits inside the NIC and holds
 * the others behind it: the pause goes out when any slice is short. */
bool sim_rx_has_room(struct sim_nic *nic, uint32_t len, uint32_t frames)
{
	for (unsigned s = 0; s < nic->slices; s++)
		if (!slice_has_room(nic, &nic->sl[s], len, frames))
			return false;
	return true;
}

void sim_rx_frame(struct sim_nic *nic, const struct sim_frame *f)
{
	if (__builtin_expect(
		!nic->running || atomic_load_explicit(&nic->halted, memory_order_relaxed), 0)) {
		nic->st.rx_down++;
		return;
	}
	uint32_t len = f->len;
	if (f->bad_crc) {
		nic->ctr.dropped_bad_crc32++;
		return;
	}
	if (len < 60) {
		nic->ctr.dropped_runt++;
		return;
	}
	if (len > nic->mtu) {
		nic->ctr.dropped_overrun++;
		return;
	}
	uint8_t hb[14];
	const uint8_t *h = f->frags[0].p;
	if (f->frags[0].len < 14) {
		frame_copy(hb, f, 0, 14);
		h = hb;
	}
	if (!filter(nic, h))
		return;
	struct sim_slice *q = &nic->sl[0];
	if (__builtin_expect(nic->rss_enabled, 0)) {
		uint8_t hdr[RSS_HDR_MAX];
		uint32_t n = len < RSS_HDR_MAX ? len : RSS_HDR_MAX;
		frame_copy(hdr, f, 0, n);
		q = &nic->sl[sim_rss_slice(nic, hdr, n)];
	}

	uint32_t *slot;
	struct rx_copy c;
	rx_copy_init(&c, f);
	if (len <= nic->small_size) {
		struct sim_rxring *r = &q->small;
		uint32_t off = r->off + (r->cons & r->mask) * 8;
		uint32_t lo = sim_rd32_raw(nic, off + 4);
		if (lo == RX_INVALID) {
			nic->ctr.dropped_no_small_buffer++;
			return;
		}
		uint64_t a = desc_addr(nic, off, lo);
		check_align(nic, a, len, true);
		uint8_t *dst = sim_dma(nic, a + 2, len, "rx small buffer");
		if (!dst)
			return; /* not consumed: the driver sees a stuck ring, and the log */
		slot = intrq_slot(nic, q);
		if (!slot)
			return;
		if (f->nfrags == 1 && len < RX_SHORT)
			rx_copy_short(&c, dst);
		else
			rx_copy_to(&c, dst, len);
		sim_wr32_raw(nic, off + 4, RX_INVALID);
		r->cons++;
	} else {
		struct sim_rxring *r = &q->big;
		uint32_t big = nic->big_size;
		uint32_t need = big_buffers_needed(nic, len);
		if (!need || (uint64_t)need * big < (uint64_t)len + 2 || need > r->mask + 1) {
			nic->ctr.dropped_overrun++;
			return;
		}
		uint32_t los[16];
		uint32_t *lop = need <= 16 ? los : NULL;
		for (uint32_t i = 0; i < need; i++) {
			uint32_t lo = sim_rd32_raw(nic, r->off + ((r->cons + i) & r->mask) * 8 + 4);
			if (lo == RX_INVALID) {
				nic->ctr.dropped_no_big_buffer++;
				return;
			}
			if (lop)
				lop[i] = lo;
		}
		slot = intrq_slot(nic, q);
		if (!slot)
			return;
		uint32_t done = 0;
		for (uint32_t i = 0; i < need && done < len; i++) {
			uint32_t off = r->off + ((r->cons + i) & r->mask) * 8;
			uint32_t lo = lop ? lop[i] : sim_rd32_raw(nic, off + 4);
			uint64_t a = desc_addr(nic, off, lo);
			uint32_t pad = i == 0 ? 2 : 0;
			uint32_t n = big - pad;
			if (n > len - done)
				n = len - done;
			check_align(nic, a, n, false);
			uint8_t *dst = sim_dma(nic, a + pad, n, "rx big buffer");
			if (!dst)
				return; /* not consumed, see above */
			rx_copy_to(&c, dst, n);
			done += n;
		}
		for (uint32_t i = 0; i < need; i++)
			sim_wr32_raw(nic, r->off + ((r->cons + i) & r->mask) * 8 + 4, RX_INVALID);
		r->cons += need;
	}
	uint16_t sum = rx_copy_finish(&c);
	uint32_t l16 = len;
	if (__builtin_expect(nic->fault_bad_completion, 0)) {
		nic->fault_bad_completion = false;
		l16 = nic->fault_bad_completion_len;
		nic->st.completions_bad++;
	}
	uint32_t entry = (uint32_t)be16(sum) | (uint32_t)be16((uint16_t)l16) << 16;
	__atomic_store_n(slot, entry, __ATOMIC_RELEASE); /* after the data (§4.6) */
	q->intrq_idx++;
	q->rx_new++;
	nic->st.rx_frames++;
	nic->st.rx_bytes += len;
	if (!q->pending) {
		q->pending = true;
		q->pending_since = nic->world->now_ns;
	}
}
