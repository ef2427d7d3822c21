/* SPDX-License-Identifier: BSD-3-Clause */
/* Watchdog (§8.5): notices a NIC that needs a reset and brings it back.
 *
 * The driver is polled, so the watchdog runs from the data path: rx_burst and tx_burst
 * decrement a countdown and call myri_watchdog_tick when it reaches 0, which looks at the
 * clock and, once per period, at the rings. Reasons for a reset, as the Linux driver's:
 * the send ring made no progress with work outstanding (and dropped_pause did not move:
 * pause frames explain a stall), or, when stuck or idle, the bus-master bit reads 0 (the
 * NIC rebooted and lost everything the driver configured). And two of the receive side,
 * since nothing from the device is trusted (§4.6): a completion with an impossible length
 * (the driver cannot know which ring the NIC took a buffer from), and a buffer found not
 * to hold what its completion described (myrio_rx_verify: the rings are out of step).
 * A NIC whose config space reads all ones left the bus: the port goes down until it
 * answers again.
 *
 * Recovery keeps the DMA memory and the pools (the application may hold receive buffers),
 * stops a NIC that still runs (ETHERNET_DOWN), drops the buffers posted to it and the
 * pending sends (frames in flight are lost; TCP retransmits), then redoes firmware, reset
 * and open. Resets asked for by the data path come at most every 100 ms. */
#include <errno.h>
#include <string.h>

#include "bus/bus.h"
#include "bus/mmio.h"
#include "mcp/nic.h"
#include "util/log.h"

#define PCI_COMMAND 0x04
#define PCI_COMMAND_MASTER 0x4
#define PCI_CAP_ID_VNDR 0x09
#define VS_MODE 0x10 /* vendor capability registers (§1.7) */
#define VS_DATA 0x14
#define VS_ADDR 0x18
#define VS_MODE_READ32 0x03
#define REBOOT_STATUS_ADDR 0xfffffff0u
#define WD_CONFIRM_NS 50000000ull /* a stuck send ring is given this long to move */

/* The bus's clock: a stepped model's virtual time, else the host's. */
uint64_t myri_wd_now(const struct myri_nic *nic)
{
	return myrio_bus_now_ns(nic->bus);
}

static void wd_snapshot(struct myri_nic *nic)
{
	struct myri_watchdog *wd = &nic->wd;
	struct myri_rings *r = &nic->rings;
	wd->last_tx_req = r->tx.pkt_req;
	wd->last_tx_done = r->tx.pkt_done;
	wd->last_pause = r->snap.dropped_pause;
	wd->last_rx_packets = r->rx_packets;
	wd->last_bad_completion = r->rx_bad_completion;
}

void myri_watchdog_init(struct myri_nic *nic, uint32_t period_ms)
{
	struct myri_watchdog *wd = &nic->wd;
	memset(wd, 0, sizeof(*wd));
	wd->calls = WD_CALLS;
	nic->rings.poll_countdown = WD_CALLS; /* off too: the port's periodic work rides on it */
	if (period_ms == UINT32_MAX)
		return; /* off: period_ns 0 */
	wd->period_ns = (uint64_t)(period_ms ? period_ms : WD_PERIOD_MS_DEFAULT) * 1000000ull;
	wd->next_ns = myri_wd_now(nic) + wd->period_ns;
	wd_snapshot(nic);
}

/* READ32 of 0xFFFFFFF0 through the vendor-specific capability (§1.7): the reboot status,
 * for the log. Returns -ENOENT when the capability is missing. */
static int reboot_status(struct myrio_bus *bus, uint32_t *status)
{
	unsigned cap = myrio_bus_find_cap(bus, PCI_CAP_ID_VNDR);
	if (!cap)
		return -ENOENT;
	int rc = bus->ops->cfg_write(bus, cap + VS_MODE, 1, VS_MODE_READ32);
	if (rc == 0)
		rc = bus->ops->cfg_write(bus, cap + VS_ADDR, 4, REBOOT_STATUS_ADDR);
	if (rc == 0)
		rc = bus->ops->cfg_read(bus, cap + VS_DATA, 4, status);
	bus->ops->cfg_write(bus, cap + VS_MODE, 1, 0);
	return rc;
}

/* The driver's own counters survive a recovery; the NIC's restart from 0 (§2.5). */
struct kept_counters {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_bad_completion, tx_ring_full, tx_dropped_bad, link_changes, tx_bad_done;
	uint64_t small_refill_failed, big_refill_failed, tx_lost_reset;
};

static void keep_counters(const struct myri_rings *r, struct kept_counters *k)
{
	*k = (struct kept_counters){r->rx_packets,	  r->rx_bytes,
				    r->tx_packets,	  r->tx_bytes,
				    r->rx_bad_completion, r->tx_ring_full,
				    r->tx_dropped_bad,	  r->link_changes,
				    r->tx_bad_done,	  r->small.refill_failed,
				    r->big.refill_failed, r->tx_lost_reset};
}

static void restore_counters(struct myri_rings *r, const struct kept_counters *k)
{
	r->rx_packets = k->rx_packets;
	r->rx_bytes = k->rx_bytes;
	r->tx_packets = k->tx_packets;
	r->tx_bytes = k->tx_bytes;
	r->rx_bad_completion = k->rx_bad_completion;
	r->tx_ring_full = k->tx_ring_full;
	r->tx_dropped_bad = k->tx_dropped_bad;
	r->link_changes = k->link_changes;
	r->tx_bad_done = k->tx_bad_done;
	r->small.refill_failed = k->small_refill_failed;
	r->big.refill_failed = k->big_refill_failed;
	r->tx_lost_reset = k->tx_lost_reset;
}

const char *myri_wd_reason_text(enum myri_wd_reason why)
{
	switch (why) {
	case WD_REBOOTED:
		return "the NIC rebooted itself";
	case WD_TX_STUCK:
		return "the send ring made no progress with frames pending";
	case WD_BAD_COMPLETION:
		return "a completion entry had an impossible length";
	case WD_RX_MISMATCH:
		return "a receive buffer does not hold what its completion described";
	case WD_GONE:
		return "the NIC answers on the bus again";
	case WD_RDMA_TAGS:
		return "RDMA tags were lost";
	default:
		return "reset";
	}
}

void myri_wd_log_reason(struct myri_nic *nic, enum myri_wd_reason why)
{
	struct myrio_bus *bus = nic->bus;
	uint32_t st = 0;
	if (why == WD_REBOOTED && nic->up && reboot_status(bus, &st) == 0)
		log_warn("%s: the NIC rebooted itself (reboot status 0x%08x): reloading and "
			 "reopening it; frames in flight are lost",
			 bus->name, st);
	else if (nic->up || why == WD_GONE)
		log_warn("%s: %s: reloading and reopening the NIC; frames in flight are lost",
			 bus->name, myri_wd_reason_text(why));
}

void myri_wd_reset_hung(struct myri_nic *nic, int down_rc)
{
	struct myrio_bus *bus = nic->bus;
	if (down_rc != -ETIMEDOUT || !bus->ops->reset)
		return;
	log_warn("%s: the firmware does not answer: function-level reset", bus->name);
	bus->ops->reset(bus);
}

int myri_watchdog_reload(struct myri_nic *nic)
{
	nic->dummy_rdma_on = false;
	uint32_t boundary = nic->tx_boundary;
	unsigned mrrs = myri_nic_pci_setup(nic->bus);
	int rc = myri_nic_firmware(nic);
	if (rc == 0) {
		mcp_dummy_rdma(nic, true); /* after every load (§2.6) */
		/* Never wider than at probe: the rings keep the boundary the first open chose. */
		if (boundary && boundary < nic->tx_boundary)
			nic->tx_boundary = boundary;
		if (mrrs && mrrs != 4096)
			nic->tx_boundary = MCP_TX_BOUNDARY_UNALIGNED;
		nic->recovering = true;
		rc = myri_nic_open(nic);
		nic->recovering = false;
	}
	return rc;
}

int myri_watchdog_recover(struct myri_nic *nic, enum myri_wd_reason why)
{
	struct myrio_bus *bus = nic->bus;
	struct myri_rings *r = &nic->rings;
	struct myri_watchdog *wd = &nic->wd;
	struct kept_counters k;
	keep_counters(r, &k);
	myri_wd_log_reason(nic, why);
	/* A NIC that still runs stops first (§8.4); a rebooted one forgot everything. */
	if (why != WD_REBOOTED && why != WD_GONE)
		myri_wd_reset_hung(nic, myri_nic_down(nic));
	nic->up = false;
	r->tx_lost_reset += r->tx.pkt_req - r->tx.pkt_done;
	k.tx_lost_reset = r->tx_lost_reset;
	myri_nic_drop_buffers(nic);
	int rc = myri_watchdog_reload(nic);
	restore_counters(r, &k);
	/* The next period starts now: recovery itself can take seconds (command timeouts). */
	wd->request = WD_NONE;
	if (wd->period_ns) {
		wd->next_ns = myri_wd_now(nic) + wd->period_ns;
		wd->last_reset_ns = myri_wd_now(nic);
	}
	if (rc < 0) {
		/* Possibly a new reboot while recovering: leave the port down, retry later. */
		nic->up = false;
		myri_nic_drop_buffers(nic);
		r->link_up = 0;
		wd->failures++;
		nic->rings.poll_countdown = 1;
		log_err("%s: recovery failed (%s); the port stays down and the watchdog retries "
			"in %llu ms",
			bus->name, strerror(-rc), (unsigned long long)(wd->period_ns / 1000000));
		return -ENETDOWN;
	}
	wd->resets++;
	nic->rings.poll_countdown = wd->calls;
	wd->stall_warned = false;
	wd_snapshot(nic);
	log_info("%s: recovered (%llu resets so far)", bus->name, (unsigned long long)wd->resets);
	return 0;
}

void myri_watchdog_request(struct myri_nic *nic, enum myri_wd_reason why)
{
	struct myri_watchdog *wd = &nic->wd;
	if (nic->gates) { /* several queues: any thread may ask, each queue's look sees it */
		int none = WD_NONE;
		if (wd->period_ns)
			atomic_compare_exchange_strong(&nic->wd_asked, &none, (int)why);
		return;
	}
	if (!wd->period_ns || !nic->up || wd->request)
		return;
	wd->request = why;
	nic->rings.poll_countdown = 1;
}

/* The NIC is not on the bus (surprise removal, a dead link): config space reads all ones
 * (or fails), or, since VFIO answers the command register and the IDs from its own copies,
 * BAR0 does: a read nobody completes returns all ones, and the header pointer never is. */
bool myri_wd_nic_gone(struct myrio_bus *bus, uint32_t *cmdreg)
{
	return bus->ops->cfg_read(bus, PCI_COMMAND, 2, cmdreg) < 0 || *cmdreg == 0xffff ||
	       mmio_read32(bus->bar0, MCP_HEADER_PTR_OFFSET) == 0xffffffffu;
}

/* The port stays down, buffers posted, until the NIC answers again. */
static int mark_gone(struct myri_nic *nic)
{
	log_err("%s: the NIC does not answer (reads complete with all ones: gone from the bus?): "
		"the port is down until it answers again",
		nic->bus->name);
	nic->wd.gone = true;
	nic->up = false;
	nic->rings.link_up = 0;
	nic->rings.poll_countdown = 1;
	return -ENETDOWN;
}

/* A reset the data path asked for (or a new impossible completion): now, unless the last
 * reset was less than WD_RESET_GAP_NS ago (a NIC that keeps misbehaving is not reset on
 * every burst); until then the port receives nothing. */
static int requested_reset(struct myri_nic *nic, uint64_t now)
{
	struct myri_watchdog *wd = &nic->wd;
	if (wd->last_reset_ns && now - wd->last_reset_ns < WD_RESET_GAP_NS) {
		/* Meanwhile rx_burst hands nothing up and refills nothing (the NIC may still
		 * own buffers the driver took for others), and looks at the clock each call. */
		nic->rings.poll_countdown = 1;
		return 0;
	}
	return myri_watchdog_recover(nic, wd->request);
}

/* DMA reads of send buffers failed (an IOMMU fault, a buffer unmapped too early): each
 * loses one of the send engine's RDMA tags until a reset, and with none left it stops. The
 * frames are dropped; the NIC is reset at once rather than run short of tags. */
static int tags_lost(struct myri_nic *nic)
{
	uint32_t left = nic->rings.snap.rdma_tags_available;
	uint32_t lost = MCP_RDMA_TAGS - left;
	nic->wd.rdma_tags_lost += lost;
	log_warn("%s: %u of %u RDMA tags lost: DMA reads of send buffers failed (an IOMMU "
		 "fault? check the kernel log); those frames are dropped",
		 nic->bus->name, lost, MCP_RDMA_TAGS);
	return myri_watchdog_recover(nic, WD_RDMA_TAGS);
}

/* A send ring seen stuck at two looks, confirmed before the reset: this thread sleeps a
 * moment, letting the NIC move it. On a loaded host the model's thread (or the daemon, or
 * this whole process) may not have run between the looks; a NIC really stuck stays so. */
bool myri_wd_tx_still_stuck(struct myri_nic *nic, struct myri_rings *r)
{
	uint32_t done = r->tx.pkt_done;
	uint64_t until = myri_wd_now(nic) + WD_CONFIRM_NS;
	while (r->tx.pkt_done == done && myri_wd_now(nic) < until) {
		nic->bus->ops->delay_us(nic->bus, 1000);
		status_poll(r);
	}
	return r->tx.pkt_done == done;
}

int myri_watchdog_tick(struct myri_nic *nic)
{
	struct myri_watchdog *wd = &nic->wd;
	struct myri_rings *r = &nic->rings;
	struct myrio_bus *bus = nic->bus;
	nic->rings.poll_countdown = nic->up ? wd->calls : 1;
	if (!wd->period_ns)
		return nic->up ? 0 : -ENETDOWN;
	uint64_t now = myri_wd_now(nic);
	if (nic->up && !wd->request && r->rx_bad_completion != wd->last_bad_completion)
		wd->request = WD_BAD_COMPLETION;
	if (nic->up && wd->request)
		return requested_reset(nic, now);
	if (now < wd->next_ns)
		return nic->up ? 0 : -ENETDOWN;
	wd->next_ns = now + wd->period_ns;
	uint32_t cmdreg;
	if (!nic->up) {
		if (!wd->gone && myri_wd_nic_gone(bus, &cmdreg))
			return mark_gone(nic); /* a failed recovery: gone meanwhile? */
		if (!wd->gone)
			return myri_watchdog_recover(nic, WD_REBOOTED); /* retry a failed one */
		if (myri_wd_nic_gone(bus, &cmdreg))
			return -ENETDOWN;
		wd->gone = false;
		return myri_watchdog_recover(nic, WD_GONE);
	}

	status_poll(r);
	bool pending = r->tx.pkt_req != r->tx.pkt_done;
	bool tx_moved = r->tx.pkt_done != wd->last_tx_done;
	bool paused = r->snap.dropped_pause != wd->last_pause;
	/* Stuck: frames were already pending at the last look and none was sent since, as
	 * Linux's check (a frame posted just before this look may not have been reached). */
	bool was_pending = wd->last_tx_req != wd->last_tx_done;
	bool stuck = pending && was_pending && !tx_moved && !paused;
	bool idle = !pending && !tx_moved && r->rx_packets == wd->last_rx_packets;
	wd_snapshot(nic);
	if (tx_moved)
		wd->stall_warned = false;
	if (pending && !tx_moved && paused && !wd->stall_warned) {
		log_warn("%s: the send ring is held by pause frames: check the link partner",
			 bus->name);
		wd->stall_warned = true;
	}
	if (r->snap.rdma_tags_available < MCP_RDMA_TAGS)
		return tags_lost(nic);
	if (!stuck && !idle)
		return 0;
	if (myri_wd_nic_gone(bus, &cmdreg))
		return mark_gone(nic);
	if (!(cmdreg & PCI_COMMAND_MASTER))
		return myri_watchdog_recover(nic, WD_REBOOTED);
	if (!stuck || !myri_wd_tx_still_stuck(nic, r)) {
		wd_snapshot(nic); /* it moved: the next look starts from here */
		return 0;
	}
	return myri_watchdog_recover(nic, WD_TX_STUCK);
}
