/* SPDX-License-Identifier: BSD-3-Clause */
/* The Myri-10G port back-end: struct myrio_port_ops on top of the bring-up (src/mcp/) and
 * the rings (src/rings/). Works on any bus: VFIO, the in-process model, the model daemon. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "port/myri10ge_port.h"
#include "util/log.h"

/* Every few hundred bursts: the generic layer's periodic work (publishing, by the polling
 * thread), then the watchdog's; < 0 while the NIC is down. */
static int periodic(struct myrio_port *port, struct myri_nic *nic)
{
	myrio_port_periodic(port);
	return myri_watchdog_tick(nic);
}

/* The periodic work costs a decrement per call: the watchdog's countdown; its slow path
 * returns < 0 while the NIC is down (then the countdown stays at 1 and the rings are not
 * touched). */
uint16_t myri10ge_rx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (__builtin_expect(--nic->rings.poll_countdown == 0, 0) &&
	    (periodic(port, nic) < 0 || nic->wd.request))
		return 0; /* down, or the rings are suspect until the reset (watchdog.c) */
	return rings_rx_burst(&nic->rings, pkts, n);
}

static uint16_t m_tx_burst(struct myrio_port *port, struct myrio_pkt **pkts, uint16_t n)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (__builtin_expect(--nic->rings.poll_countdown == 0, 0) && periodic(port, nic) < 0)
		return 0;
	if (__builtin_expect(mp(port)->fault_tx_in != 0, 0))
		return myri10ge_fault_tx(mp(port), pkts, n);
	return rings_tx_burst(&nic->rings, pkts, n);
}

static int m_pool_create(struct myrio_port *port, uint32_t count, uint32_t buf_len,
			 struct myrio_pool **out)
{
	/* Inside one page, a send buffer of up to 4 KiB is cut at most once by tx_boundary. */
	return myrio_pool_create_bounded(mp(port)->nic.bus, count, buf_len, MCP_RX_SMALL_NO_CROSS,
					 out);
}

static int m_link(struct myrio_port *port)
{
	struct myri_nic *nic = &mp(port)->nic;
	struct myri_rings *r = &nic->rings;
	if (!atomic_load_explicit(&nic->up, memory_order_relaxed))
		return MYRIO_LINK_DOWN; /* rebooted, recovery pending */
	if (nic->nq == 1)		/* else queue 0's thread handles slice 0's updates */
		status_poll(r);
	switch (counter32_read(&r->link_up)) {
	case 0:
		return MYRIO_LINK_DOWN;
	case 1:
	case 2: /* a Myrinet peer: the link itself is up */
		return MYRIO_LINK_UP;
	default:
		return MYRIO_LINK_UNKNOWN;
	}
}

static int m_info(struct myrio_port *port, struct myrio_port_info *info)
{
	struct myri_nic *nic = &mp(port)->nic;
	snprintf(info->bus, sizeof(info->bus), "%s", nic->bus->kind);
	memcpy(info->mac, nic->ee.mac, 6);
	info->mtu = nic->mtu;
	info->max_frame = nic->max_frame;
	info->tx_ring_entries = nic->tx_entries;
	info->rx_ring_entries = nic->rx_entries;
	info->tx_boundary = nic->tx_boundary;
	info->caps = MYRIO_CAP_TX_CSUM | MYRIO_CAP_RX_CSUM_PARTIAL;
	if (nic->tso_mode0)
		info->caps |= MYRIO_CAP_TSO;
	if (nic->msi) /* asking must not switch it on: the mode is chosen at open */
		info->caps |= MYRIO_CAP_IRQ;
	return 0;
}

/* What the firmware and the EEPROM say (§1.5, §1.6), and the receive buffer sizes. */
static int m_attrs(struct myrio_port *port, struct myrio_port_attr *a, unsigned n)
{
	struct myri_nic *nic = &mp(port)->nic;
	struct myrio_port_attr all[] = {
	    {"fw_version", ""},	    {"serial", ""},	  {"product", ""},
	    {"small_buf_size", ""}, {"big_buf_size", ""}, {"rx_completion_entries", ""},
	};
	snprintf(all[0].value, sizeof(all[0].value), "%s", nic->fw.version);
	snprintf(all[1].value, sizeof(all[1].value), "%s", nic->ee.serial);
	snprintf(all[2].value, sizeof(all[2].value), "%s", nic->ee.product);
	snprintf(all[3].value, sizeof(all[3].value), "%u", nic->small_size);
	snprintf(all[4].value, sizeof(all[4].value), "%u", nic->big_size);
	snprintf(all[5].value, sizeof(all[5].value), "%u", 2 * nic->rx_entries);
	unsigned total = sizeof(all) / sizeof(all[0]);
	memcpy(a, all, (n < total ? n : total) * sizeof(all[0]));
	return (int)total;
}

/* The firmware's counters of the status block (§6.1), 32 bits, cumulative since the NIC's
 * last reset; they wrap. */
#define SNAP(f) {#f, offsetof(struct myri_fw_counters, f)},
static const struct {
	const char *name;
	size_t off;
} snap_counters[] = {MYRI_FW_COUNTERS(SNAP)};
#undef SNAP
#define N_SNAP (sizeof(snap_counters) / sizeof(snap_counters[0]))
/* and the driver's own */
static const char *const own_counters[] = {"rdma_tags_lost", "mc_groups", "mc_filter_overflow",
					   "tx_lost_reset"};
#define N_XSTATS (N_SNAP + sizeof(own_counters) / sizeof(own_counters[0]))

static int m_xstats_names(struct myrio_port *port, struct myrio_xstat_name *names, unsigned n)
{
	for (unsigned i = 0; i < N_XSTATS && i < n; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s",
			 i < N_SNAP ? snap_counters[i].name : own_counters[i - N_SNAP]);
	unsigned rest = n > N_XSTATS ? n - (unsigned)N_XSTATS : 0;
	return (int)(N_XSTATS + myri10ge_queue_xstats_names(&mp(port)->nic,
							    names ? names + N_XSTATS : NULL, rest));
}

static uint64_t own_value(struct myri_nic *nic, unsigned i)
{
	uint64_t lost = 0; /* frames in the send rings when the NIC was reset, every queue's */
	for (unsigned q = 0; q < nic->nq; q++)
		lost += counter_read(&myri_queue_rings(nic, q)->tx_lost_reset);
	const uint64_t v[] = {counter_read(&nic->wd.rdma_tags_lost),
			      atomic_load_explicit(&nic->mc.n, memory_order_relaxed),
			      atomic_load_explicit(&nic->mc.overflow, memory_order_relaxed), lost};
	return v[i];
}

static uint32_t snap_value(const struct myri_fw_counters *d, unsigned i)
{
	return counter32_read((const counter32 *)((const uint8_t *)d + snap_counters[i].off));
}

/* With one queue the port's thread is the only one (its stats handle a pending status
 * update first); with several, any thread reads what the queues' threads wrote. */
static bool stats_poll(struct myri_nic *nic)
{
	return nic->nq == 1 && atomic_load_explicit(&nic->up, memory_order_relaxed);
}

static int m_xstats(struct myrio_port *port, uint64_t *values, unsigned n)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (stats_poll(nic))
		status_poll(&nic->rings);
	for (unsigned i = 0; i < N_XSTATS && i < n; i++)
		values[i] =
		    i < N_SNAP ? snap_value(&nic->rings.snap, i) : own_value(nic, i - N_SNAP);
	unsigned rest = n > N_XSTATS ? n - (unsigned)N_XSTATS : 0;
	return (int)(N_XSTATS +
		     myri10ge_queue_xstats(nic, values ? values + N_XSTATS : NULL, rest));
}

static int m_stats(struct myrio_port *port, struct myrio_port_stats *s)
{
	struct myri_nic *nic = &mp(port)->nic;
	struct myri_rings *r = &nic->rings;
	if (stats_poll(nic))
		status_poll(r);
	for (unsigned q = 0; q < (nic->nq > 1 ? nic->nq : 1u); q++) { /* every queue's */
		struct myrio_queue_stats k;
		myri10ge_queue_stats(nic, (uint16_t)q, &k);
		s->rx_packets += k.rx_packets;
		s->rx_bytes += k.rx_bytes;
		s->tx_packets += k.tx_packets;
		s->tx_bytes += k.tx_bytes;
		s->rx_bad_completion += k.rx_bad_completion;
		s->rx_refill_failed += k.rx_refill_failed;
		s->tx_ring_full += k.tx_ring_full;
		s->tx_dropped_bad += k.tx_dropped_bad;
		s->tx_tso_chains += counter_read(&myri_queue_rings(nic, q)->tx_tso_chains);
	}
	s->link_changes = counter_read(&r->link_changes);
	const struct myri_fw_counters *d = &r->snap;
	s->rx_missed = (uint64_t)counter32_read(&d->dropped_no_small_buffer) +
		       counter32_read(&d->dropped_no_big_buffer) +
		       counter32_read(&d->dropped_overrun) +
		       counter32_read(&d->dropped_link_overflow);
	s->rx_errors = (uint64_t)counter32_read(&d->dropped_bad_crc32) +
		       counter32_read(&d->dropped_bad_phy) + counter32_read(&d->dropped_runt) +
		       counter32_read(&d->dropped_link_error_or_filtered);
	s->link_up =
	    atomic_load_explicit(&nic->up, memory_order_relaxed) ? counter32_read(&r->link_up) : 0;
	s->watchdog_resets = counter_read(&nic->wd.resets);
	s->rx_csum_mismatch = atomic_load_explicit(&nic->wd.rx_mismatches, memory_order_relaxed);
	return 0;
}

/* MSI is wired before the reset sequence (conf.irq), never later: a NIC that was brought up
 * in INTx mode keeps to it until its next reset. */
static int m_irq_fd(struct myrio_port *port)
{
	struct myri_nic *nic = &mp(port)->nic;
	if (nic->nq > 1)
		return myri10ge_irq_fd_queue(port, 0);
	if (!nic->msi) {
		log_err("%s: no interrupts on this port: open it with myrio_port_conf.irq set%s",
			nic->bus->name, nic->irq_wanted ? " (MSI could not be enabled)" : "");
		return -ENOTSUP;
	}
	return nic->bus->ops->irq_fd(nic->bus);
}

/* Before sleeping on the fd: handle any pending update (which re-arms with claim1) and give
 * the receive token back if the completion ring is empty, so the NIC interrupts on the next
 * frame (§6.5). A rebooted NIC raises no interrupt: the periodic work runs here too (it
 * resets the countdown the bursts count down), so a program that sleeps with a timeout of
 * at most the watchdog's period notices, and one that sleeps often still publishes. */
static int m_irq_arm(struct myrio_port *port)
{
	struct myri_nic *nic = &mp(port)->nic;
	struct myri_rings *r = &nic->rings;
	if (nic->nq > 1)
		return myri10ge_irq_arm_queue(port, 0);
	if (periodic(port, nic) < 0)
		return 0;
	status_poll(r);
	uint32_t e = *(volatile uint32_t *)&r->rx_done[r->rx_done_idx & r->rx_done_mask];
	if (r->rx_token && e == 0)
		status_return_rx_token(r);
	return 0;
}

static void m_close(struct myrio_port *port)
{
	struct myri10ge_port *p = mp(port);
	struct myrio_bus *bus = p->nic.bus;
	myri_nic_close(&p->nic);
	myri_nic_release(&p->nic);
	myri10ge_queues_fini(p);
	myrio_bus_close(bus);
	free(p);
}

static void m_rx_mismatch(struct myrio_port *port)
{
	struct myri_nic *nic = &mp(port)->nic;
	atomic_fetch_add_explicit(&nic->wd.rx_mismatches, 1, memory_order_relaxed);
	myri_watchdog_request(nic, WD_RX_MISMATCH);
}

static int m_mc_addr_list(struct myrio_port *port, const uint8_t (*addrs)[6], unsigned n)
{
	return myri_mc_set_list(&mp(port)->nic, addrs, n);
}

static int m_allmulti(struct myrio_port *port, bool on)
{
	return myri_mc_set_allmulti(&mp(port)->nic, on);
}

/* A port of several queues differs in queue 0's bursts: through its gate, and its packets
 * carry the hash. */
#define MYRI10GE_OPS(rx, tx)                                                                       \
	{                                                                                          \
		.rx_burst = rx, .tx_burst = tx, .pool_create = m_pool_create, .link = m_link,      \
		.info = m_info, .stats = m_stats, .xstats_names = m_xstats_names,                  \
		.xstats = m_xstats, .attrs = m_attrs, .irq_fd = m_irq_fd, .irq_arm = m_irq_arm,    \
		.rx_mismatch = m_rx_mismatch, .mc_addr_list = m_mc_addr_list,                      \
		.allmulti = m_allmulti, .close = m_close, .queues = myri10ge_queues,               \
		.rx_burst_queue = myri10ge_rx_burst_queue,                                         \
		.tx_burst_queue = myri10ge_tx_burst_queue, .irq_fd_queue = myri10ge_irq_fd_queue,  \
		.irq_arm_queue = myri10ge_irq_arm_queue, .queue_stats = myri10ge_queue_stats_op,   \
		.rss_get = myri10ge_rss_get, .rss_set = myri10ge_rss_set,                          \
		.rss_flow_queue = myri10ge_rss_flow_queue,                                         \
	}
static const struct myrio_port_ops myri10ge_ops = MYRI10GE_OPS(myri10ge_rx_burst, m_tx_burst);
static const struct myrio_port_ops myri10ge_queues_ops =
    MYRI10GE_OPS(myri10ge_rx_burst_q0, myri10ge_tx_burst_q0);

/* The driver arguments (docs/driver.md) override the conf fields of the same names. */
static int apply_args(struct myrio_bus *bus, const struct myrio_port_conf *in,
		      struct myrio_port_conf *c, char *fw, size_t fw_len, uint32_t *queues,
		      bool *pause)
{
	*c = *in;
	fw[0] = '\0';
	*queues = 1;
	*pause = true; /* as Linux and FreeBSD */
	const struct myrio_driver_arg keys[] = {
	    {.key = "firmware", .str = fw, .str_len = fw_len},
	    {.key = "adopt_firmware", .flag = &c->adopt_firmware},
	    {.key = "watchdog_ms", .u32 = &c->watchdog_ms},
	    {.key = "intr_coal_us", .u32 = &c->intr_coal_us},
	    {.key = "queues", .u32 = queues},
	    {.key = "pause", .flag = pause},
	    {0},
	};
	int rc = myrio_driver_args_parse(bus->name, in->driver_args, keys);
	if (rc == 0 && fw[0])
		c->firmware = fw;
	if (rc == 0 && (*queues < 1 || *queues > MYRI_MAX_SLICES)) {
		log_err("%s: queues=%u: a Myri-10G runs 1 to %u slices", bus->name, *queues,
			MYRI_MAX_SLICES);
		rc = -EINVAL;
	}
	return rc;
}

const struct myrio_pci_id myrio_myri10ge_pci_ids[] = {
    {0x14c1, 0x0008}, /* Myricom Z8E: Myri-10G, PCIe x8 (the model is one too) */
    {0x14c1, 0x0009}, /* its later revision */
    {0, 0},
};

int myrio_myri10ge_open(struct myrio_bus *bus, const struct myrio_port_conf *conf_in,
			struct myrio_port **out)
{
	*out = NULL;
	struct myrio_port_conf args_conf, *conf = &args_conf;
	char fw[PATH_MAX];
	uint32_t queues;
	bool pause;
	if (apply_args(bus, conf_in, &args_conf, fw, sizeof(fw), &queues, &pause) < 0) {
		myrio_bus_close(bus);
		return -EINVAL;
	}
	struct myri10ge_port *p = calloc(1, sizeof(*p));
	if (!p) {
		myrio_bus_close(bus);
		return -ENOMEM;
	}
	p->port.ops = queues > 1 ? &myri10ge_queues_ops : &myri10ge_ops;
	p->nic.nq_wanted = queues;
	p->nic.pause = pause;
	p->nic.nq = 1;
	int rc = queues > 1 ? myri10ge_queues_init(p) : 0;
	if (rc == 0)
		rc = myri_nic_probe(&p->nic, bus, conf);
	if (rc == 0)
		rc = myri_nic_open(&p->nic);
	if (rc == 0) {
		myri_watchdog_init(&p->nic, conf->watchdog_ms); /* on the bus's clock */
		myri10ge_fault_init(p);
		if (queues > 1)
			rc = myri_gates_init(&p->nic);
	}
	if (rc < 0) {
		log_err("%s: bring-up failed (%s)", bus->name, strerror(-rc));
		if (p->nic.up)
			myri_nic_close(&p->nic);
		myri_nic_release(&p->nic);
		myri10ge_queues_fini(p);
		myrio_bus_close(bus);
		free(p);
		return rc;
	}
	*out = &p->port;
	return 0;
}
