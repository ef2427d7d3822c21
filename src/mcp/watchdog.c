/* Watchdog (§8.5): notices a firmware self-reboot (§2.5) and brings the NIC back.
 *
 * The driver is polled, so the watchdog runs from the data path: rx_burst and tx_burst
 * decrement a countdown and call myri_watchdog_tick when it reaches 0, which looks at the
 * clock and, once per period, at the rings. When the send ring made no progress with work
 * outstanding (and dropped_pause did not move: pause frames explain a stall), or when the
 * port is idle, it reads the bus-master bit; 0 means the NIC rebooted and lost everything
 * the driver configured. Recovery keeps the DMA memory and the pools (the application may
 * hold receive buffers), drops the buffers posted to the dead NIC and the pending sends
 * (frames in flight are lost; TCP retransmits), then redoes firmware, reset and open. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "bus/bus.h"
#include "mcp/nic.h"
#include "sim/nic.h" /* sim_world_now: the stepped model's clock for "sim:" ports */
#include "util/log.h"

#define PCI_COMMAND 0x04
#define PCI_COMMAND_MASTER 0x4
#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_CAP_PTR 0x34
#define PCI_CAP_ID_VNDR 0x09
#define VS_MODE 0x10 /* vendor capability registers (§1.7) */
#define VS_DATA 0x14
#define VS_ADDR 0x18
#define VS_MODE_READ32 0x03
#define REBOOT_STATUS_ADDR 0xfffffff0u
#define WD_CALLS 256u /* data-path calls between looks at the clock */
#define WD_PERIOD_MS_DEFAULT 1000u

static uint64_t wd_now(const struct myri_watchdog *wd)
{
	if (wd->sim)
		return sim_world_now(wd->sim);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wd_snapshot(struct myri_nic *nic)
{
	struct myri_watchdog *wd = &nic->wd;
	struct myri_rings *r = &nic->rings;
	wd->last_tx_done = r->tx.pkt_done;
	wd->last_pause = r->snap.dropped_pause;
	wd->last_rx_packets = r->rx_packets;
}

void myri_watchdog_init(struct myri_nic *nic, uint32_t period_ms, struct myrio_sim *sim)
{
	struct myri_watchdog *wd = &nic->wd;
	memset(wd, 0, sizeof(*wd));
	wd->sim = sim;
	wd->calls = WD_CALLS;
	wd->countdown = WD_CALLS;
	if (period_ms == UINT32_MAX) { /* off: the countdown wraps after 2^32 calls */
		wd->countdown = UINT32_MAX;
		wd->calls = UINT32_MAX;
		return;
	}
	wd->period_ns = (uint64_t)(period_ms ? period_ms : WD_PERIOD_MS_DEFAULT) * 1000000ull;
	wd->next_ns = wd_now(wd) + wd->period_ns;
	wd_snapshot(nic);
}

/* READ32 of 0xFFFFFFF0 through the vendor-specific capability (§1.7): the reboot status,
 * for the log. Returns -ENOENT when the capability is missing. */
static int reboot_status(struct myrio_bus *bus, uint32_t *status)
{
	uint32_t v, cap = 0;
	if (bus->ops->cfg_read(bus, PCI_STATUS, 2, &v) < 0 || !(v & PCI_STATUS_CAP_LIST) ||
	    bus->ops->cfg_read(bus, PCI_CAP_PTR, 1, &cap) < 0)
		return -ENOENT;
	for (int hops = 0; cap >= 0x40 && cap < 0x100 && hops < 48; hops++) {
		uint32_t hdr;
		cap &= ~3u;
		if (bus->ops->cfg_read(bus, cap, 2, &hdr) < 0)
			return -EIO;
		if ((hdr & 0xff) == PCI_CAP_ID_VNDR) {
			int rc = bus->ops->cfg_write(bus, cap + VS_MODE, 1, VS_MODE_READ32);
			if (rc == 0)
				rc = bus->ops->cfg_write(bus, cap + VS_ADDR, 4, REBOOT_STATUS_ADDR);
			if (rc == 0)
				rc = bus->ops->cfg_read(bus, cap + VS_DATA, 4, status);
			bus->ops->cfg_write(bus, cap + VS_MODE, 1, 0);
			return rc;
		}
		cap = (hdr >> 8) & 0xff;
	}
	return -ENOENT;
}

/* The driver's own counters survive a recovery; the NIC's restart from 0 (§2.5). */
struct kept_counters {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t rx_bad_completion, tx_ring_full, tx_dropped_bad, link_changes, tx_bad_done;
	uint64_t small_refill_failed, big_refill_failed;
};

static void keep_counters(const struct myri_rings *r, struct kept_counters *k)
{
	*k = (struct kept_counters){r->rx_packets,	  r->rx_bytes,
				    r->tx_packets,	  r->tx_bytes,
				    r->rx_bad_completion, r->tx_ring_full,
				    r->tx_dropped_bad,	  r->link_changes,
				    r->tx_bad_done,	  r->small.refill_failed,
				    r->big.refill_failed};
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
}

int myri_watchdog_recover(struct myri_nic *nic)
{
	struct myrio_bus *bus = nic->bus;
	struct myri_rings *r = &nic->rings;
	struct kept_counters k;
	keep_counters(r, &k);
	if (nic->up) {
		uint32_t st = 0;
		if (reboot_status(bus, &st) == 0)
			log_warn(
			    "%s: the NIC rebooted itself (reboot status 0x%08x): reloading and "
			    "reopening it; frames in flight are lost",
			    bus->name, st);
		else
			log_warn("%s: the NIC rebooted itself: reloading and reopening it",
				 bus->name);
	}
	/* No ETHERNET_DOWN: the NIC forgot everything (§8.4). */
	nic->up = false;
	nic->dummy_rdma_on = false;
	myri_nic_drop_buffers(nic);
	uint32_t boundary = nic->tx_boundary;
	unsigned mrrs = myri_nic_pci_setup(bus);
	int rc = myri_nic_firmware(nic);
	if (rc == 0) {
		mcp_dummy_rdma(nic, true); /* after every load (§2.6) */
		/* Never wider than at probe: the rings keep the boundary the first open chose. */
		if (boundary && boundary < nic->tx_boundary)
			nic->tx_boundary = boundary;
		if (mrrs && mrrs != 4096)
			nic->tx_boundary = 2048;
		nic->recovering = true;
		rc = myri_nic_open(nic);
		nic->recovering = false;
	}
	restore_counters(r, &k);
	/* The next period starts now: recovery itself can take seconds (command timeouts). */
	if (nic->wd.period_ns)
		nic->wd.next_ns = wd_now(&nic->wd) + nic->wd.period_ns;
	if (rc < 0) {
		/* Possibly a new reboot while recovering: leave the port down, retry later. */
		nic->up = false;
		myri_nic_drop_buffers(nic);
		r->link_up = 0;
		nic->wd.failures++;
		nic->wd.countdown = 1;
		log_err("%s: recovery after a NIC reboot failed (%s); the port stays down and the "
			"watchdog retries in %llu ms",
			bus->name, strerror(-rc),
			(unsigned long long)(nic->wd.period_ns / 1000000));
		return -ENETDOWN;
	}
	nic->wd.resets++;
	nic->wd.countdown = nic->wd.calls;
	nic->wd.stall_warned = false;
	wd_snapshot(nic);
	log_info("%s: recovered after a NIC reboot (%llu so far)", bus->name,
		 (unsigned long long)nic->wd.resets);
	return 0;
}

int myri_watchdog_tick(struct myri_nic *nic)
{
	struct myri_watchdog *wd = &nic->wd;
	wd->countdown = nic->up ? wd->calls : 1;
	if (!wd->period_ns)
		return nic->up ? 0 : -ENETDOWN;
	uint64_t now = wd_now(wd);
	if (now < wd->next_ns)
		return nic->up ? 0 : -ENETDOWN;
	wd->next_ns = now + wd->period_ns;
	if (!nic->up)
		return myri_watchdog_recover(nic);

	struct myri_rings *r = &nic->rings;
	status_poll(r);
	bool pending = r->tx.pkt_req != r->tx.pkt_done;
	bool tx_moved = r->tx.pkt_done != wd->last_tx_done;
	bool stuck = pending && !tx_moved && r->snap.dropped_pause == wd->last_pause;
	bool idle = !pending && !tx_moved && r->rx_packets == wd->last_rx_packets;
	wd_snapshot(nic);
	if (!stuck && !idle) {
		wd->stall_warned = false;
		return 0;
	}
	struct myrio_bus *bus = nic->bus;
	uint32_t cmdreg;
	if (bus->ops->cfg_read(bus, PCI_COMMAND, 2, &cmdreg) < 0 || cmdreg == 0xffff) {
		if (!wd->stall_warned)
			log_err("%s: the NIC does not answer config reads: gone from the bus?",
				bus->name);
		wd->stall_warned = true;
		return 0;
	}
	if (!(cmdreg & PCI_COMMAND_MASTER))
		return myri_watchdog_recover(nic);
	if (stuck && !wd->stall_warned) {
		log_warn("%s: the send ring made no progress for %llu ms with frames pending",
			 bus->name, (unsigned long long)(wd->period_ns / 1000000));
		wd->stall_warned = true;
	}
	return 0;
}
