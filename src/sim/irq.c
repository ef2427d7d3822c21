/* SPDX-License-Identifier: BSD-3-Clause */
/* Status block and interrupts (§6): the claim0/claim1/deassert words, the rx-token and
 * armed state machine of §6.5, the coalescing delay (§6.6), the status block DMA with
 * `valid` written last (§6.1-§6.3), and the MSI eventfd. The eventfd is written only while
 * MSI/MSI-X is enabled in config space: polled drivers cost no system call. With MSI off
 * the firmware interrupts through INTx: it asserts the line (unless INTX_DISABLE is set)
 * and sends no further update until the host writes the deassert word, as the firmware
 * does (Linux's and iPXE's INTx handlers). */
#include <string.h>

#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

void sim_irq_reset(struct sim_nic *nic)
{
	for (unsigned s = 0; s < SIM_MAX_SLICES; s++) {
		struct sim_slice *q = &nic->sl[s];
		q->armed = q->token_at_nic = true;
		q->rx_new = 0;
		q->send_pending = q->pending = false;
	}
	nic->stats_pending = false;
	nic->link_down_events = 0;
	nic->intx_wait = nic->intx_line = nic->intx_held = false;
	nic->link_state = nic->cable ? nic->cable->up : 0;
	nic->stats_interval_us = 1000; /* [I] */
	nic->next_stats_check = 0;
	memset(&nic->ctr_reported, 0, sizeof(nic->ctr_reported));
}

void sim_irq_event(struct sim_nic *nic, uint64_t now)
{
	struct sim_slice *q = &nic->sl[0];
	if (!q->pending) {
		q->pending = true;
		q->pending_since = now;
	}
}

/* MSI-X vector s when the host asked for a vector per slice and enabled MSI-X, else the
 * one MSI (slice 0's). */
static void signal(struct sim_nic *nic, unsigned s)
{
	int fd = nic->irq_fd;
	if (s && nic->vec_per_slice && sim_cfg_msix_enabled(nic))
		fd = nic->sl[s].irq_fd;
	if (fd >= 0)
		sim_irq_kick(nic->world, fd);
}

/* Where the status block's byte 63 (`valid`) lands in host memory, and the block. */
static uint8_t *status_dst(struct sim_nic *nic, struct sim_slice *q, uint32_t *skip, uint32_t *n)
{
	uint32_t size = q->stats_host_size;
	uint64_t a = q->stats_iova;
	if (size >= 64) {
		a += size - 64;
		*skip = 0;
		*n = 64;
	} else { /* the host knows only the tail: fields are added at the front (§6.2) */
		*skip = 64 - size;
		*n = size;
	}
	return sim_dma(nic, a, *n, "status block");
}

/* Slice s's update: its status block (counters and link only in slice 0's, §6.2), then
 * its vector. */
static __attribute__((noinline)) void raise_irq(struct sim_nic *nic, unsigned s, bool rx)
{
	struct sim_slice *q = &nic->sl[s];
	bool stats = s == 0 && nic->stats_pending;
	uint32_t skip, n;
	uint8_t *dst = status_dst(nic, q, &skip, &n);
	if (!dst)
		return;
	uint8_t b[64];
	static const struct sim_counters none;
	const struct sim_counters *c = s == 0 ? &nic->ctr : &none;
	put_be32(b + 0, 0);
	put_be32(b + 4, c->dropped_pause);
	put_be32(b + 8, c->dropped_unicast_filtered);
	put_be32(b + 12, c->dropped_bad_crc32);
	put_be32(b + 16, c->dropped_bad_phy);
	put_be32(b + 20, c->dropped_multicast_filtered);
	put_be32(b + 24, q->send_done);
	put_be32(b + 28, s == 0 ? nic->link_state : 0);
	put_be32(b + 32, c->dropped_link_overflow);
	put_be32(b + 36, c->dropped_link_error_or_filtered);
	put_be32(b + 40, c->dropped_runt);
	put_be32(b + 44, c->dropped_overrun);
	put_be32(b + 48, c->dropped_no_small_buffer);
	put_be32(b + 52, c->dropped_no_big_buffer);
	put_be32(b + 56, nic->rdma_tags);
	b[60] = 0;
	b[61] = s == 0 ? nic->link_down_events : 0;
	b[62] = stats ? 1 : 0;
	b[63] = (uint8_t)((rx ? 1 : 0) | (q->send_pending ? 2 : 0));
	if (b[63] == 0 && !stats)
		return;
	memcpy(dst, b + skip, n - 1);
	/* [I] a stats-only update (link change, ETHERNET_DOWN) carries valid = 2: non-zero so
	 * the host looks, and "send completions" is harmless when send_done did not move. */
	__atomic_store_n(dst + n - 1, b[63] ? b[63] : 0x2, __ATOMIC_RELEASE);
	if (stats) {
		nic->ctr_reported = nic->ctr;
		nic->stats_pending = false;
		nic->link_down_events = 0;
	}
	q->armed = false;
	if (rx) {
		q->token_at_nic = false;
		q->rx_new = 0;
	}
	q->send_pending = false;
	q->pending = false;
	nic->st.irqs++;
	if (sim_cfg_msi_enabled(nic))
		signal(nic, s);
	else if (s == 0) { /* INTx is slice 0's: the others run polled without MSI-X */
		nic->intx_wait = true;
		nic->intx_line = !sim_cfg_intx_disabled(nic);
		nic->st.intx_asserts += nic->intx_line;
	}
}

/* A receive-only slice (s > 0 without multi-TX) has no status block: its vector alone says
 * "receive", and the token's return through claim0 re-arms it (§6.5). */
static __attribute__((noinline)) void raise_rx_only(struct sim_nic *nic, unsigned s)
{
	struct sim_slice *q = &nic->sl[s];
	q->token_at_nic = false;
	q->rx_new = 0;
	q->pending = false;
	nic->st.irqs++;
	signal(nic, s);
}

static void deassert(struct sim_nic *nic)
{
	uint32_t skip, n;
	uint8_t *dst = status_dst(nic, &nic->sl[0], &skip, &n);
	if (dst)
		__atomic_store_n(dst + n - 1, (uint8_t)0, __ATOMIC_RELEASE);
}

static inline bool take(struct sim_nic *nic, uint32_t off)
{
	if (__builtin_expect(sim_rd32_raw(nic, off) == SIM_POISON, 1))
		return false;
	sim_wr32_raw(nic, off, SIM_POISON);
	return true;
}

/* Slice s's interrupt, once the coalescing delay has passed, when it is armed (or, for a
 * receive-only slice, holds the rx token) and has something to say. */
static unsigned slice_poll(struct sim_nic *nic, unsigned s, uint64_t now)
{
	struct sim_slice *q = &nic->sl[s];
	bool rx_only = s > 0 && !q->stats_set;
	if (s == 0 && !q->stats_set)
		return 0;
	if (!q->armed && !rx_only)
		return 0;
	bool rx = q->token_at_nic && q->rx_new > 0;
	bool stats = s == 0 && nic->stats_pending;
	if (!(rx || (!rx_only && q->send_pending) || stats))
		return 0;
	if (__builtin_expect(nic->intx_wait, 0) && s == 0) {
		nic->st.intx_held += !nic->intx_held;
		nic->intx_held = true;
		return 0;
	}
	if (!q->pending) {
		q->pending = true;
		q->pending_since = now;
	}
	/* coalescing (§6.6), then the MSI write's way to the host */
	uint64_t delay =
	    (uint64_t)sim_rd32(nic, nic->rings_at + SIM_COAL_OFF) * 1000 + nic->timing->irq_ns;
	if (delay && now - q->pending_since < delay) {
		sim_world_due(nic->world, q->pending_since + delay);
		return 0;
	}
	if (rx_only)
		raise_rx_only(nic, s);
	else
		raise_irq(nic, s, rx);
	return 1;
}

/* The claim words the host wrote, and the deassert word after them. claim1 is read before
 * the deassert word: the host writes deassert first, so a claim1 seen here comes with its
 * deassert, which is applied before re-arming. */
static __attribute__((noinline)) unsigned take_claims(struct sim_nic *nic)
{
	unsigned work = 0;
	bool c0[SIM_MAX_SLICES], c1[SIM_MAX_SLICES];
	for (unsigned s = 0; s < nic->slices; s++) {
		c0[s] = take(nic, nic->rings_at + SIM_CLAIM_OFF + 8 * s);
		c1[s] = take(nic, nic->rings_at + SIM_CLAIM_OFF + 8 * s + 4);
		work += (unsigned)c0[s] + c1[s];
	}
	bool da = take(nic, nic->rings_at + SIM_DEASSERT_OFF);
	work += da;
	if (da) {
		deassert(nic);
		nic->intx_wait = nic->intx_line = nic->intx_held = false;
	}
	for (unsigned s = 0; s < nic->slices; s++) {
		if (c0[s]) /* the rx token comes back */
			nic->sl[s].token_at_nic = true;
		if (c1[s]) /* may interrupt again */
			nic->sl[s].armed = true;
	}
	return work;
}

/* True if the host wrote a claim or the deassert word (one load each, no store): the
 * firmware loop's common case is that it did not. */
static inline bool claims_written(const struct sim_nic *nic)
{
	for (unsigned s = 0; s < nic->slices; s++)
		if (sim_rd32_raw(nic, nic->rings_at + SIM_CLAIM_OFF + 8 * s) != SIM_POISON ||
		    sim_rd32_raw(nic, nic->rings_at + SIM_CLAIM_OFF + 8 * s + 4) != SIM_POISON)
			return true;
	return sim_rd32_raw(nic, nic->rings_at + SIM_DEASSERT_OFF) != SIM_POISON;
}

unsigned sim_irq_poll(struct sim_nic *nic, uint64_t now)
{
	unsigned work = 0;
	if (__builtin_expect(claims_written(nic), 0))
		work = take_claims(nic);
	/* Counters that moved are refreshed every stats interval, even when no frame
	 * completes (everything dropped): stats_updated tells the host to read them. */
	if (nic->stats_interval_us && now >= nic->next_stats_check) {
		nic->next_stats_check = now + (uint64_t)nic->stats_interval_us * 1000;
		if (nic->running && memcmp(&nic->ctr, &nic->ctr_reported, sizeof(nic->ctr)))
			nic->stats_pending = true;
	}
	if (__builtin_expect(nic->slices == 1, 1)) /* no loop to set up: the common NIC */
		return work + slice_poll(nic, 0, now);
	for (unsigned s = 0; s < nic->slices; s++)
		work += slice_poll(nic, s, now);
	return work;
}

bool sim_nic_intx_line(const struct sim_nic *nic)
{
	return nic->intx_line;
}
