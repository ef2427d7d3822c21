/* SPDX-License-Identifier: BSD-3-Clause */
/* Status block and interrupts (§6): the claim0/claim1/deassert words, the rx-token and
 * armed state machine of §6.5, the coalescing delay (§6.6), the status block DMA with
 * `valid` written last (§6.1-§6.3), and the MSI eventfd. The eventfd is written only while
 * MSI/MSI-X is enabled in config space: polled drivers cost no system call. With MSI off
 * the firmware interrupts through INTx: it asserts the line (unless INTX_DISABLE is set)
 * and sends no further update until the host writes the deassert word, as the firmware
 * does (Linux's and iPXE's INTx handlers). */
#include <string.h>
#include <unistd.h>

#include "sim/nic.h"
#include "util/byteorder.h"
#include "util/log.h"

void sim_irq_reset(struct sim_nic *nic)
{
	nic->armed = true;
	nic->token_at_nic = true;
	nic->rx_new = 0;
	nic->send_pending = nic->stats_pending = false;
	nic->link_down_events = 0;
	nic->pending = false;
	nic->intx_wait = nic->intx_line = nic->intx_held = false;
	nic->link_state = nic->cable ? nic->cable->up : 0;
	nic->stats_interval_us = 1000; /* [I] */
	nic->next_stats_check = 0;
	memset(&nic->ctr_reported, 0, sizeof(nic->ctr_reported));
}

void sim_irq_event(struct sim_nic *nic, uint64_t now)
{
	if (!nic->pending) {
		nic->pending = true;
		nic->pending_since = now;
	}
}

/* Where the status block's byte 63 (`valid`) lands in host memory, and the block. */
static uint8_t *status_dst(struct sim_nic *nic, uint32_t *skip, uint32_t *n)
{
	uint32_t size = nic->stats_host_size;
	uint64_t a = nic->stats_iova;
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

static void raise_irq(struct sim_nic *nic, bool rx)
{
	uint32_t skip, n;
	uint8_t *dst = status_dst(nic, &skip, &n);
	if (!dst)
		return;
	uint8_t b[64];
	const struct sim_counters *c = &nic->ctr;
	put_be32(b + 0, 0);
	put_be32(b + 4, c->dropped_pause);
	put_be32(b + 8, c->dropped_unicast_filtered);
	put_be32(b + 12, c->dropped_bad_crc32);
	put_be32(b + 16, c->dropped_bad_phy);
	put_be32(b + 20, c->dropped_multicast_filtered);
	put_be32(b + 24, nic->send_done);
	put_be32(b + 28, nic->link_state);
	put_be32(b + 32, c->dropped_link_overflow);
	put_be32(b + 36, c->dropped_link_error_or_filtered);
	put_be32(b + 40, c->dropped_runt);
	put_be32(b + 44, c->dropped_overrun);
	put_be32(b + 48, c->dropped_no_small_buffer);
	put_be32(b + 52, c->dropped_no_big_buffer);
	put_be32(b + 56, nic->rdma_tags);
	b[60] = 0;
	b[61] = nic->link_down_events;
	b[62] = nic->stats_pending ? 1 : 0;
	b[63] = (uint8_t)((rx ? 1 : 0) | (nic->send_pending ? 2 : 0));
	if (b[63] == 0 && !nic->stats_pending)
		return;
	memcpy(dst, b + skip, n - 1);
	/* [I] a stats-only update (link change, ETHERNET_DOWN) carries valid = 2: non-zero so
	 * the host looks, and "send completions" is harmless when send_done did not move. */
	__atomic_store_n(dst + n - 1, b[63] ? b[63] : 0x2, __ATOMIC_RELEASE);
	if (nic->stats_pending)
		nic->ctr_reported = nic->ctr;
	nic->armed = false;
	if (rx) {
		nic->token_at_nic = false;
		nic->rx_new = 0;
	}
	nic->send_pending = nic->stats_pending = false;
	nic->link_down_events = 0;
	nic->pending = false;
	nic->st.irqs++;
	if (!sim_cfg_msi_enabled(nic)) {
		nic->intx_wait = true;
		nic->intx_line = !sim_cfg_intx_disabled(nic);
		nic->st.intx_asserts += nic->intx_line;
	} else {
		uint64_t one = 1;
		/* EAGAIN only when the counter saturates: the host is behind anyway */
		ssize_t r = write(nic->irq_fd, &one, sizeof(one));
		(void)r;
	}
}

static void deassert(struct sim_nic *nic)
{
	uint32_t skip, n;
	uint8_t *dst = status_dst(nic, &skip, &n);
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

unsigned sim_irq_poll(struct sim_nic *nic, uint64_t now)
{
	/* claim1 is read before the deassert word: the host writes deassert first, so a
	 * claim1 seen here comes with its deassert, which is applied before re-arming. */
	bool c0 = take(nic, nic->rings_at + SIM_CLAIM_OFF);
	bool c1 = take(nic, nic->rings_at + SIM_CLAIM_OFF + 4);
	bool da = take(nic, nic->rings_at + SIM_DEASSERT_OFF);
	unsigned work = (unsigned)c0 + c1 + da;
	if (da) {
		deassert(nic);
		nic->intx_wait = nic->intx_line = nic->intx_held = false;
	}
	if (c0) /* the rx token comes back */
		nic->token_at_nic = true;
	if (c1) /* may interrupt again */
		nic->armed = true;
	/* Counters that moved are refreshed every stats interval, even when no frame
	 * completes (everything dropped): stats_updated tells the host to read them. */
	if (nic->stats_interval_us && now >= nic->next_stats_check) {
		nic->next_stats_check = now + (uint64_t)nic->stats_interval_us * 1000;
		if (nic->running && memcmp(&nic->ctr, &nic->ctr_reported, sizeof(nic->ctr)))
			nic->stats_pending = true;
	}
	if (!nic->armed)
		return work;
	bool rx = nic->token_at_nic && nic->rx_new > 0;
	if (!(rx || nic->send_pending || nic->stats_pending))
		return work;
	if (__builtin_expect(nic->intx_wait, 0)) {
		nic->st.intx_held += !nic->intx_held;
		nic->intx_held = true;
		return work;
	}
	if (!nic->pending) {
		nic->pending = true;
		nic->pending_since = now;
	}
	/* coalescing (§6.6), then the MSI write's way to the host */
	uint64_t delay = (uint64_t)sim_rd32(nic, nic->rings_at + SIM_COAL_OFF) * 1000 +
			 nic->timing->irq_ns;
	if (delay && now - nic->pending_since < delay)
		return work;
	raise_irq(nic, rx);
	return work + 1;
}

bool sim_nic_intx_line(const struct sim_nic *nic)
{
	return nic->intx_line;
}
