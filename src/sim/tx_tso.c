/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP segmentation offload (§5.6). The chain is checked against the encoding rules of
 * L/F (header descriptors first, payload descriptors after, MSS in pseudo_hdr_offset,
 * cksum_offset = TCP header offset for IPv4), the headers are parsed (Ethernet [+VLAN],
 * IPv4 or IPv6, TCP), the mode-0 seed is checked (pseudo-header sum over the whole
 * request's TCP length), and segments of at most MSS payload bytes are sent with IP length,
 * IPv4 ID and header checksum, TCP sequence number, flags and checksum rewritten (the TCP
 * checksum taken where the segment is read, struct sim_frame): one at a
 * time, each when the wire has room for it, as a NIC puts them on the wire (so the far
 * side receives them spaced at the link rate, not all at once). */
#include <errno.h>
#include <string.h>

#include "sim/tx.h"
#include "util/byteorder.h"
#include "util/csum.h"
#include "util/log.h"

#define TSO_MAX_DESC 64u
#define TSO_MAX_LEN (64u * 1024 + 1024)

static int bad(struct sim_nic *nic, uint32_t idx, const char *why)
{
	nic->st.tx_invalid++;
	if (sim_nic_ratelimit(nic, SIM_DIAG_TX))
		log_err("%s: TSO chain at slot %u dropped: %s (§5.6)", nic->name,
			idx & (nic->tx_entries - 1), why);
	return -EINVAL;
}

struct tso_hdrs {
	uint32_t l3, l4, hlen; /* offsets of IP and TCP headers, total header length */
	bool v6;
};

static int parse(const uint8_t *f, uint32_t len, struct tso_hdrs *h)
{
	uint32_t off = 12;
	uint16_t type = get_be16(f + off);
	if (type == 0x8100 || type == 0x88a8) {
		off += 4;
		type = get_be16(f + off);
	}
	h->l3 = off + 2;
	if (type == 0x0800) {
		if (len < h->l3 + 20 || (f[h->l3] >> 4) != 4 || f[h->l3 + 9] != 6)
			return -1;
		h->l4 = h->l3 + (uint32_t)(f[h->l3] & 0xF) * 4;
		h->v6 = false;
	} else if (type == 0x86DD) {
		if (len < h->l3 + 40 || f[h->l3 + 6] != 6)
			return -1;
		h->l4 = h->l3 + 40;
		h->v6 = true;
	} else {
		return -1;
	}
	if (len < h->l4 + 20)
		return -1;
	h->hlen = h->l4 + (uint32_t)(f[h->l4 + 12] >> 4) * 4;
	return h->hlen <= len && h->hlen >= h->l4 + 20 ? 0 : -1;
}

uint32_t sim_tso_segments(const struct sim_txd *d, unsigned n, uint32_t total, uint32_t *seg_len)
{
	uint32_t hdr = 0, mss = d[0].pho;
	for (unsigned i = 0; i < n && !(d[i].flags & TXF_TSO_PLD); i++)
		hdr += d[i].len;
	if (!mss || total <= hdr) {
		*seg_len = total;
		return 1;
	}
	*seg_len = hdr + mss;
	return (total - hdr + mss - 1) / mss;
}

int sim_tso_begin(struct sim_nic *nic, uint32_t idx, const struct sim_txd *d, unsigned n,
		  uint32_t total)
{
	nic->tso.active = false;
	if (n > TSO_MAX_DESC)
		return bad(nic, idx, "more than 64 descriptors");
	if (total > TSO_MAX_LEN)
		return bad(nic, idx, "request longer than 64 KiB plus headers");
	uint32_t mss = d[0].pho;
	if (mss == 0 || mss > 9000)
		return bad(nic, idx, "MSS (pseudo_hdr_offset) is 0 or above 9000");
	if (!(d[0].flags & TXF_TSO_HDR) || (d[0].flags & TXF_TSO_PLD))
		return bad(nic, idx, "first descriptor is not a TSO_HDR|FIRST header descriptor");
	uint32_t hdr = 0;
	bool in_payload = false;
	uint32_t txb = nic->tx_boundary;
	for (unsigned i = 0; i < n; i++) {
		if (d[i].pho != mss)
			return bad(nic, idx, "MSS differs between descriptors");
		if (d[i].len == 0)
			return bad(nic, idx, "zero-length descriptor");
		if ((d[i].addr & (txb - 1)) + d[i].len > txb)
			return bad(nic, idx, "descriptor crosses the tx_boundary");
		if (d[i].flags & TXF_TSO_PLD)
			in_payload = true;
		else if (in_payload)
			return bad(nic, idx, "header descriptor after payload descriptors");
		else
			hdr += d[i].len;
	}
	/* The NIC reads the whole request: headers into scratch, payload where it is. */
	uint8_t *f = nic->scratch;
	uint32_t at = 0;
	struct sim_tso *t = &nic->tso;
	t->npl = 0;
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *p = sim_dma(nic, d[i].addr, d[i].len, "tx buffer (TSO)");
		if (!p) {
			sim_tx_read_failed(nic);
			return -EFAULT;
		}
		if (d[i].flags & TXF_TSO_PLD) {
			t->pl[t->npl++] = (struct sim_tso_piece){d[i].addr, d[i].len};
		} else {
			memcpy(f + at, p, d[i].len);
			at += d[i].len;
		}
	}
	struct tso_hdrs h;
	if (parse(f, hdr, &h) < 0)
		return bad(nic, idx, "headers are not Ethernet + IPv4/IPv6 + TCP");
	if (h.hlen != hdr)
		return bad(nic, idx, "header descriptors do not end exactly after the TCP header");
	if (!h.v6 && d[0].cko != h.l4)
		return bad(nic, idx,
			   "cksum_offset of an IPv4 request is not the TCP header offset");
	struct tso_layout *l = &t->l;
	*l = (struct tso_layout){.l3 = h.l3, .l4 = h.l4, .hlen = hdr, .mss = mss, .v6 = h.v6};
	tso_layout_sums(f, l);
	if (nic->tso_mode == 0) {
		uint16_t want = csum_fold(tso_pseudo_sum(l, total - h.l4));
		if (get_be16(f + h.l4 + 16) != want)
			return bad(nic, idx,
				   "TCP checksum seed is not the pseudo-header sum over "
				   "the whole request's TCP length (mode 0)");
	}
	uint32_t payload = total - hdr;
	t->idx = idx;
	t->payload = payload;
	l->segs = payload ? (payload + mss - 1) / mss : 1;
	t->next = 0;
	l->seq0 = get_be32(f + h.l4 + 4);
	l->id0 = h.v6 ? 0 : get_be16(f + h.l3 + 4);
	l->flags0 = f[h.l4 + 13];
	t->pl_i = 0;
	t->pl_off = 0;
	t->active = true;
	return 0;
}

static uint32_t seg_payload(const struct sim_tso *t, uint32_t k)
{
	return t->payload - k * t->l.mss < t->l.mss ? t->payload - k * t->l.mss : t->l.mss;
}

uint32_t sim_tso_next_len(const struct sim_nic *nic)
{
	return nic->tso.l.hlen + seg_payload(&nic->tso, nic->tso.next);
}

void sim_tso_send_next(struct sim_nic *nic, uint64_t now)
{
	struct sim_tso *t = &nic->tso;
	const struct tso_layout *l = &t->l;
	uint8_t *seg = nic->scratch + TSO_MAX_LEN; /* scratch is 128 KiB: request, then headers */
	uint32_t k = t->next++, hdr = l->hlen, plen = seg_payload(t, k);
	if (k == 0) /* later segments rewrite every field that differs (tso_segment_headers) */
		memcpy(seg, nic->scratch, hdr);
	uint32_t seglen = hdr + plen;
	/* The segment's payload: the next plen bytes of the payload descriptors. */
	struct sim_frag fr[1 + 64];
	unsigned nf = 1;
	fr[0] = (struct sim_frag){seg, hdr};
	for (uint32_t got = 0; got < plen; nf++) {
		const struct sim_tso_piece *d = &t->pl[t->pl_i];
		uint32_t take = d->len - t->pl_off < plen - got ? d->len - t->pl_off : plen - got;
		const uint8_t *p = sim_dma(nic, d->iova + t->pl_off, take, "tx buffer (TSO)");
		if (!p) { /* unmapped since the request began: the rest is not sent */
			sim_tx_read_failed(nic);
			t->active = false;
			return;
		}
		fr[nf] = (struct sim_frag){p, take};
		got += take;
		t->pl_off += take;
		if (t->pl_off == d->len) {
			t->pl_i++;
			t->pl_off = 0;
		}
	}
	tso_segment_headers(seg, l, k, plen);
	/* The TCP checksum (field zeroed) over the header and payload, plus the pseudo-header:
	 * summed where the segment is read (struct sim_frame). */
	struct sim_frame fm = {.frags = fr,
			       .nfrags = nf,
			       .len = seglen,
			       .patch_off = (int32_t)(l->l4 + 16),
			       .sum_from = l->l4,
			       .sum_seed = csum_fold(tso_pseudo_sum(l, hdr - l->l4 + plen)),
			       .sum_tso = true};
	nic->st.tx_frames++;
	nic->st.tx_bytes += seglen;
	nic->st.tx_tso_segments++;
	sim_wire_send(nic, &fm, now);
	if (t->next == l->segs)
		t->active = false;
}
