/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path (§4): a frame arriving from the cable is filtered (§4.7), placed into the
 * next small buffer or enough big buffers (§4.4) at +2, the consumed descriptors are
 * re-invalidated, and one 4-byte completion entry {sum from byte 14, BE16 length} (§4.6)
 * is stored after the data. A frame is never partially consumed: without enough valid
 * buffers it is dropped and counted. */
#include <inttypes.h>
#include <string.h>

#include "sim/nic.h"
#include "sim/tx.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define RX_INVALID 0xFFFFFFFFu
#define RSS_HDR_MAX 78u /* Ethernet, IPv4 with options, the two ports */

/* Copies frame bytes [off, off + n) into dst, applying the sender's checksum patch. */
static void frame_copy(uint8_t *dst, const struct sim_frame *f, uint32_t off, uint32_t n)
{
	const struct sim_frag *fr = f->frags;
	if (__builtin_expect(f->nfrags == 1, 1)) {
		memcpy(dst, fr->p + off, n);
	} else {
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
}

static void apply_patch(uint8_t *dst, const struct sim_frame *f, uint32_t off, uint32_t n)
{
	if (f->patch_off < 0)
		return;
	uint32_t p = (uint32_t)f->patch_off;
	uint8_t b[2] = {(uint8_t)(f->patch_val >> 8), (uint8_t)f->patch_val};
	for (unsigned i = 0; i < 2; i++)
		if (p + i >= off && p + i < off + n)
			dst[p + i - off] = b[i];
}

static inline void frame_get(uint8_t *dst, const struct sim_frame *f, uint32_t off, uint32_t n)
{
	if (__builtin_expect(f->nfrags == 1 && f->patch_off < 0, 1)) { /* the common frame */
		memcpy(dst, f->frags[0].p + off, n);
		return;
	}
	frame_copy(dst, f, off, n);
	apply_patch(dst, f, off, n);
}

/* The completion's sum over frame bytes [14, len), taken from the sender's buffers (just
 * read by the copy, in cache, and not the stores in flight to our copy, which a load would
 * have to wait for), or from the part the sending NIC summed already, adjusted for the
 * checksum the sender's NIC inserted. */
static uint16_t source_sum(const struct sim_frame *f)
{
	uint32_t to = f->sum_from >= 14 && f->sum_from <= f->len ? f->sum_from : f->len;
	uint16_t sum;
	if (__builtin_expect(f->nfrags == 1, 1))
		sum = csum_partial16(f->frags[0].p + 14, to - 14);
	else
		sum = sim_csum_frags(f->frags, f->nfrags, 14, to);
	if (to < f->len) { /* the rest as the sending NIC summed it */
		uint16_t tail = f->sum_tail;
		if ((to - 14) & 1)
			tail = (uint16_t)(tail << 8 | tail >> 8);
		sum = csum16_add(sum, tail);
	}
	if (f->patch_off >= 14 && (uint32_t)f->patch_off + 2 <= f->len) {
		const uint8_t *o = NULL;
		uint8_t ob[2];
		uint32_t p = (uint32_t)f->patch_off, at = 0;
		for (unsigned i = 0; i < f->nfrags; at += f->frags[i].len, i++)
			if (p >= at && p + 2 <= at + f->frags[i].len) {
				o = f->frags[i].p + (p - at);
				break;
			}
		if (!o) { /* the field straddles two fragments */
			frame_copy(ob, f, p, 2);
			o = ob;
		}
		uint16_t old = (uint16_t)(o[0] << 8 | o[1]), nw = f->patch_val;
		if ((p - 14) & 1) { /* the field sits across two 16-bit words of the sum */
			old = (uint16_t)(old << 8 | old >> 8);
			nw = (uint16_t)(nw << 8 | nw >> 8);
		}
		sum = csum16_add(csum16_sub(sum, old), nw);
	}
	return sum;
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
		uint32_t big = nic->big_size;
		need = nic->always_n ? nic->always_n : (len + 2 + big - 1) / big;
	}
	need *= frames;
	if (need > r->mask + 1)
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
		frame_get(hdr, f, 0, n);
		q = &nic->sl[sim_rss_slice(nic, hdr, n)];
	}

	uint32_t *slot;
	uint16_t sum;
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
		frame_get(dst, f, 0, len);
		sum = source_sum(f);
		sim_wr32_raw(nic, off + 4, RX_INVALID);
		r->cons++;
	} else {
		struct sim_rxring *r = &q->big;
		uint32_t big = nic->big_size;
		uint32_t need = nic->always_n ? nic->always_n : (len + 2 + big - 1) / big;
		if ((uint64_t)need * big < (uint64_t)len + 2 || need > r->mask + 1) {
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
			frame_get(dst, f, done, n);
			done += n;
		}
		sum = source_sum(f);
		for (uint32_t i = 0; i < need; i++)
			sim_wr32_raw(nic, r->off + ((r->cons + i) & r->mask) * 8 + 4, RX_INVALID);
		r->cons += need;
	}
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
