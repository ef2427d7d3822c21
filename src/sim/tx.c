/* SPDX-License-Identifier: BSD-3-Clause */
/* Transmit path (§5): wait for non-zero flags at the consumer index (§5.7), take the chain
 * up to the next descriptor with flags 0 or FIRST without TSO_PLD, validate it (§5.3-§5.4,
 * a broken chain is dropped with a diagnostic), insert the checksum (§5.5) or segment (§5.6),
 * hand the frame to the cable (paced at the link rate), clear the flags of the consumed
 * slots and count one send_done per chain (§5.8). Nothing is copied or summed here: the
 * receiver copies straight from the sender's buffers and takes the checksum's sum as it
 * copies (struct sim_frame). */
#include <inttypes.h>
#include <string.h>

#include "sim/fw_abi.h"
#include "sim/nic.h"
#include "sim/tx.h"
#include "util/byteorder.h"
#include "util/log.h"

#define TX_BUDGET 256u /* chains per loop iteration */
#define TX_PARSE_MAX 128u
#define PAUSE_MAX_NS 2000000000ull  /* [I] 2 s: only a host that stopped refilling */
#define PAUSE_REFRESH_NS 1000000ull /* [I] a held peer sends a new PAUSE frame every 1 ms */

static inline uint32_t desc_off(const struct sim_nic *nic, const struct sim_slice *q, uint32_t idx)
{
	return q->tx_off + (idx & (nic->tx_entries - 1)) * 16;
}

static inline uint8_t flags_at(const struct sim_nic *nic, const struct sim_slice *q, uint32_t idx)
{
	return __atomic_load_n(nic->bar + desc_off(nic, q, idx) + 15, __ATOMIC_ACQUIRE);
}

static inline void read_desc(const struct sim_nic *nic, const struct sim_slice *q, uint32_t idx,
			     struct sim_txd *d)
{
	/* one 16-byte copy; ordered after the acquire load of the chain's commit flags */
	uint8_t p[16];
	memcpy(p, nic->bar + desc_off(nic, q, idx), 16);
	d->addr = (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
	d->pho = get_be16(p + 8);
	d->len = get_be16(p + 10);
	d->rdma = p[13];
	d->cko = p[14];
	d->flags = p[15];
}

static bool bad(struct sim_nic *nic, uint32_t idx, const char *why)
{
	nic->st.tx_invalid++;
	if (sim_nic_ratelimit(nic, SIM_DIAG_TX))
		log_err("%s: send chain at slot %u dropped: %s", nic->name,
			idx & (nic->tx_entries - 1), why);
	return false;
}

/* §5.4: the rules a non-TSO chain must follow. */
static bool validate(struct sim_nic *nic, uint32_t idx, const struct sim_txd *d, unsigned n,
		     uint32_t total)
{
	if (n > 12)
		return bad(nic, idx, "more than 12 descriptors in a non-TSO frame (§5.4)");
	if (d[0].rdma != n)
		return bad(nic, idx, "first descriptor's rdma_count is not the descriptor count");
	if ((d[0].flags & TXF_SMALL) && total > 1520)
		return bad(nic, idx, "SMALL set on a frame longer than 1520 bytes (§5.3)");
	if (total > 9400)
		return bad(nic, idx, "frame longer than 9400 bytes");
	bool ck = d[0].flags & TXF_CKSUM;
	uint32_t before = 0;
	uint32_t txb = nic->tx_boundary;
	for (unsigned i = 0; i < n; i++) {
		if (!(d[i].flags & TXF_NO_TSO))
			return bad(nic, idx, "NO_TSO missing from a descriptor of a plain frame");
		if (((d[i].flags & TXF_CKSUM) != 0) != ck)
			return bad(nic, idx, "CKSUM not set in every descriptor of the frame");
		if (d[i].len == 0)
			return bad(nic, idx, "zero-length descriptor");
		if ((d[i].addr & (txb - 1)) + d[i].len > txb)
			return bad(nic, idx,
				   nic->tx_boundary == SIM_TX_BOUNDARY_UNALIGNED
				       ? "descriptor crosses a 2 KiB tx_boundary (§2.1)"
				       : "descriptor crosses a 4 KiB tx_boundary (§2.1)");
		if (i > 0 && d[i].rdma != 1)
			return bad(nic, idx, "rdma_count of a non-first descriptor is not 1");
		if (ck) {
			uint32_t start = d[0].cko;
			uint32_t want = start > before ? start - before : 0;
			if (i > 0 && d[i].cko != want)
				return bad(nic, idx, "cksum_offset not decremented per descriptor");
			if (((d[i].flags & TXF_ALIGN_ODD) != 0) != (i > 0 && (before & 1)))
				return bad(nic, idx, "ALIGN_ODD does not match the bytes before");
			if (d[i].pho != d[0].pho)
				return bad(nic, idx,
					   "pseudo_hdr_offset differs between descriptors");
		}
		before += d[i].len;
	}
	if (ck) {
		uint32_t start = d[0].cko, field = d[0].pho;
		if (field > 127 || field < start || field + 2 > total || start >= total ||
		    start < 14)
			return bad(nic, idx,
				   "checksum start inside the Ethernet header, offsets outside the "
				   "frame or field > 127 (§5.5)");
	}
	return true;
}

static bool pause_ok(struct sim_nic *nic, struct sim_nic *dst, uint32_t len, uint32_t frames,
		     uint64_t now)
{
	if (!dst->flow_control || !dst->running || sim_rx_has_room(dst, len, frames)) {
		nic->paused = false;
		return true;
	}
	if (!nic->paused) {
		nic->paused = true;
		nic->paused_since = nic->pause_frame_at = now;
		nic->ctr.dropped_pause++; /* the peer's PAUSE frame, consumed by our MAC */
		return false;
	}
	if (now - nic->pause_frame_at >= PAUSE_REFRESH_NS) { /* the peer renews the pause */
		nic->pause_frame_at = now;
		nic->ctr.dropped_pause++;
	}
	if (now - nic->paused_since < PAUSE_MAX_NS)
		return false;
	if (nic->paused_since + PAUSE_MAX_NS > nic->pause_gave_up_at) {
		nic->pause_gave_up_at = now;
		nic->st.pause_timeouts++;
	}
	return true;
}

/* Whether frames wait for the wire at all: a link rate, SET_THROTTLE_FACTOR or a timing
 * profile at either end. Looked at once per burst (the cable and the NIC change only
 * between bursts, on this thread). */
static bool wire_paced(const struct sim_nic *nic, const struct sim_cable *c)
{
	if (!c || !c->up)
		return false;
	const struct sim_timing *none = sim_timing_default();
	const struct sim_timing *rx_tm = nic->out->dst_nic ? nic->out->dst_nic->timing : none;
	return c->link_bps || nic->throttle || nic->timing != none || rx_tm != none;
}

/* Link-rate pacing on a paced wire: a frame of len bytes starts when the wire is free, but not
 * before its slice's ring was last seen empty (plus, with a timing profile, the doorbell's way to
 * the wire); it is handed over when its last bit is out (plus the profile's flight to the
 * receiver's host memory): false while that is still ahead of now. SET_THROTTLE_FACTOR caps the
 * rate at 256 x 16 Gb/s / factor (§3.3 #53), the profile's PCIe link at its bandwidth. */
static bool wire_slot(struct sim_nic *nic, const struct sim_slice *q, struct sim_cable *c,
		      uint32_t len, uint64_t now_ps)
{
	const struct sim_timing *tm = nic->timing;
	const struct sim_timing *rx_tm =
	    nic->out->dst_nic ? nic->out->dst_nic->timing : sim_timing_default();
	uint64_t start = q->tx_idle_at * 1000 + sim_timing_tx_start_ps(tm);
	if (nic->out->t_free > start)
		start = nic->out->t_free;
	uint32_t wire_len = len < 60 ? 60 : len;
	uint64_t t = sim_wire_ps(c, wire_len);
	if (nic->throttle) { /* bits / (4.096e12 / factor bit/s), in ps */
		uint64_t th = (uint64_t)wire_len * nic->throttle * 15625 / 8000;
		t = th > t ? th : t;
	}
	uint64_t pcie = sim_timing_pcie_ps(tm, len);
	t = pcie > t ? pcie : t;
	uint64_t end = start + t;
	uint64_t due = end + sim_timing_flight_ps(tm, rx_tm, len);
	if (due > now_ps) {
		nic->out->t_queued = due; /* the world stays awake for it (sim_cable_busy) */
		sim_world_due(nic->world, (due + 999) / 1000);
		return false;
	}
	nic->out->t_free = end;
	return true;
}

/* A DMA read of a send buffer failed (an IOMMU fault): the frame is dropped and its RDMA
 * tag never comes back until CMD_RESET; the status block reports the tags left. */
void sim_tx_read_failed(struct sim_nic *nic)
{
	if (nic->fault_tx_read_fail)
		nic->fault_tx_read_fail--;
	nic->st.tx_read_faults++;
	if (nic->rdma_tags)
		nic->rdma_tags--;
	nic->stats_pending = true;
}

/* One slice's send ring. */
static __attribute__((noinline)) unsigned tx_poll_slice(struct sim_nic *nic, struct sim_slice *q,
							unsigned s, uint64_t now)
{
	struct sim_txd d[TX_PARSE_MAX];
	struct sim_frag fr[TX_PARSE_MAX];
	struct sim_cable *c = nic->cable;
	uint64_t now_ps = now * 1000;
	bool paced = wire_paced(nic, c);
	unsigned done = 0;
	for (unsigned budget = TX_BUDGET; budget; budget--) {
		uint32_t idx = q->tx_cons;
		uint8_t f0 = flags_at(nic, q, idx);
		if (!f0) {
			q->tx_idle_at = now;
			break;
		}
		unsigned n = 1;
		unsigned lim = nic->tx_entries < TX_PARSE_MAX ? nic->tx_entries : TX_PARSE_MAX;
		while (n < lim) {
			uint8_t f = flags_at(nic, q, idx + n);
			if (!f || ((f & TXF_FIRST) && !(f & TXF_TSO_PLD)))
				break;
			n++;
		}
		uint32_t total = 0;
		for (unsigned i = 0; i < n; i++) {
			read_desc(nic, q, idx + i, &d[i]);
			total += d[i].len;
		}
		/* 802.3x pause (§7.4): a peer NIC out of buffers, with flow control on at
		 * both ends, holds our transmitter instead of dropping, for at most
		 * PAUSE_MAX_NS (fw >= 1.4.25 gives up on a host that stopped refilling). */
		if (c && c->up && nic->flow_control && nic->out->dst_nic) {
			uint32_t flen = total, frames = 1;
			if (!(f0 & TXF_NO_TSO)) /* room for every segment of the request */
				frames = sim_tso_segments(d, n, total, &flen);
			if (!pause_ok(nic, nic->out->dst_nic, flen, frames, now))
				break;
		}
		bool ok, tso = (f0 & TXF_FIRST) && !(f0 & TXF_NO_TSO);
		if (!tso && paced && !wire_slot(nic, q, c, total, now_ps))
			break;
		if (!(f0 & TXF_FIRST)) {
			ok = bad(nic, idx, "chain does not start with a FIRST descriptor (§5.7)");
		} else if (tso) {
			/* A request in progress carries on; a new one is checked first. */
			ok = (nic->tso.active && nic->tso.idx == idx) ||
			     sim_tso_begin(nic, idx, d, n, total) == 0;
			nic->tso.slice = s;
			while (ok && nic->tso.active &&
			       (!paced || wire_slot(nic, q, c, sim_tso_next_len(nic), now_ps)))
				sim_tso_send_next(nic, now);
			if (ok && nic->tso.active)
				break; /* the rest when the wire has room: the chain stays posted */
		} else if ((ok = validate(nic, idx, d, n, total))) {
			for (unsigned i = 0; i < n; i++) {
				fr[i].p = sim_dma(nic, d[i].addr, d[i].len, "tx buffer");
				fr[i].len = d[i].len;
				if (__builtin_expect(!fr[i].p || nic->fault_tx_read_fail, 0)) {
					sim_tx_read_failed(nic);
					ok = false;
					break;
				}
			}
			if (ok) {
				struct sim_frame fm = {.frags = fr,
						       .nfrags = n,
						       .len = total,
						       .patch_off = -1,
						       .bad_crc = nic->fw.misreads};
				if (d[0].flags & TXF_CKSUM) { /* summed where it is read */
					fm.sum_from = d[0].cko;
					fm.patch_off = d[0].pho;
				}
				if (total < 60)
					nic->st.tx_runts++; /* the NIC never pads (§5.3) */
				nic->st.tx_frames++;
				nic->st.tx_bytes += total;
				sim_wire_send(nic, &fm, now);
			}
		}
		for (unsigned i = 0; i < n; i++)
			sim_wr32_raw(nic, desc_off(nic, q, idx + i) + 12, 0);
		q->tx_cons = idx + n;
		q->send_done++;
		done++;
	}
	if (done) {
		/* without multi-TX only slice 0 sends and reports (§5.9) */
		q->send_pending = true;
		if (!q->pending) {
			q->pending = true;
			q->pending_since = now;
		}
	}
	return done;
}

/* With multi-TX every started slice's ring in turn (§5.9); a TSO request in progress is
 * finished before another slice is served: one send engine. */
static __attribute__((noinline)) unsigned tx_poll_slices(struct sim_nic *nic, uint64_t now)
{
	unsigned done = 0;
	for (unsigned s = 0; s < nic->slices; s++) {
		struct sim_slice *q = &nic->sl[s];
		if (!q->tx_active || (nic->tso.active && nic->tso.slice != s))
			continue;
		done += tx_poll_slice(nic, q, s, now);
	}
	return done;
}

/* Slice 0's ring, or every started slice's with multi-TX. */
unsigned sim_tx_poll(struct sim_nic *nic, uint64_t now)
{
	if (__builtin_expect(nic->multi_tx, 0))
		return tx_poll_slices(nic, now);
	struct sim_slice *q = &nic->sl[0];
	if (!flags_at(nic, q, q->tx_cons)) { /* the firmware loop's common case */
		q->tx_idle_at = now;
		return 0;
	}
	return tx_poll_slice(nic, q, 0, now);
}

bool sim_tx_in_hand(const struct sim_nic *nic)
{
	if (nic->tso.active)
		return true;
	unsigned rings = nic->multi_tx ? nic->slices : 1;
	for (unsigned s = 0; s < rings; s++) {
		const struct sim_slice *q = &nic->sl[s];
		if ((!nic->multi_tx || q->tx_active) && flags_at(nic, q, q->tx_cons))
			return true;
	}
	return false;
}
